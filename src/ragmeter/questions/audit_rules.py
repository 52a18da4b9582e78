"""The rule-based audit: the word tables and the rules that read them.

Words
    The text is case-folded and split into ``[a-z0-9]+`` runs (so ``false-positive``
    is two words and ``Bloom's`` is ``bloom`` + ``s``). A *content word* is one that
    is not in :data:`STOP_WORDS` and is not a single letter (single digits count).
    Content words are folded with :func:`fold`, a small plural folding.

Rule flags
    ``copies``: the copy ratio (share of the question's distinct content words that
    occur in its passage) is at least ``copy_threshold`` (0.6).
    ``yes-no-restatement``: the question opens with an auxiliary verb
    (:data:`AUXILIARIES`), has at least 3 content words, and at least
    ``restate_threshold`` (0.7) of them occur in one sentence of the passage.
    ``context-dependent``: a phrase from :data:`CONTEXT_RULES` (``the passage``,
    ``the author``, ``mentioned`` not followed by where, ``in the table``, ...),
    ``this``/``these``/``those`` + a word the question never named (after an earlier
    content word, only a generic noun of :data:`GENERIC_NOUNS`), or a pronoun
    (``it``, ``they``, ``its``, ...) before any content word (a dummy ``it``, as in
    "is it possible to", is skipped).
    ``swapped-word``: the question uses a word of a contrast pair (:data:`SWAPS`, e.g.
    ``upper``) that its passage never uses while the passage uses the other one
    (``lower``) and the question does not.
    ``near-duplicate``: the content-word sets of two questions have a Jaccard
    similarity of at least ``duplicate_threshold`` (0.8); the later one is flagged.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ragmeter.chunking.strategies import UNNAMED_SEGMENTER, sentence_spans
from ragmeter.inputs.testset import Question

# A short explicit English stop-word list: articles, pronouns, auxiliaries,
# prepositions, conjunctions, question words and a few fillers.
STOP_WORDS = frozenset(
    """
    a about above after again against all also am an and any are aren as at be because been
    before being below between both but by can cannot could couldn did didn do does doesn doing
    don down during each either else ever every few for from further get gets got had hadn has
    hasn have haven having he her here hers herself him himself his how however i if in into is
    isn it its itself just let ll may me might mine more most much must mustn my myself neither
    no nor not now of off on once one only or other others our ours ourselves out over own per
    quite rather re same shall shan she should shouldn so some such than that the their theirs
    them themselves then there these they this those though through thus to too under until up
    upon us ve very via was wasn we were weren what whatever when where whether which while who
    whom whose why will with within without won would wouldn yet you your yours yourself
    yourselves
    """.split()
)

# Words that open a yes/no question.
AUXILIARIES = frozenset(
    """
    is are was were am be does do did has have had can could will would should shall may might
    must isn aren wasn weren doesn don didn hasn haven hadn can't cannot couldn won wouldn
    shouldn
    """.split()
)

# Contrast pairs: a question using one side where its passage only uses the other
# has likely flipped a fact. Phrases are matched as whole words.
SWAPS: tuple[tuple[str, str], ...] = (
    ("upper", "lower"),
    ("higher", "lower"),
    ("larger", "smaller"),
    ("bigger", "smaller"),
    ("faster", "slower"),
    ("increase", "decrease"),
    ("increases", "decreases"),
    ("maximum", "minimum"),
    ("always", "never"),
    ("overestimate", "underestimate"),
    ("overestimates", "underestimates"),
    ("positive", "negative"),
    ("positives", "negatives"),
    ("more than once", "exactly once"),
    ("at least once", "exactly once"),
    ("at most once", "exactly once"),
    ("more than once", "only once"),
)

_SOURCE_NOUNS = (
    "passage|text|excerpt|paragraph|article|blog post|post|document|section|snippet|"
    "context|extract|chapter|table|figure|chart|graph|diagram|listing|statement|quote|quotation"
)

# (what the rule catches, pattern over the case-folded question)
CONTEXT_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "refers to the source it came from",
        re.compile(
            rf"\b(the|this|that|these|those|above|following|given)\s+({_SOURCE_NOUNS})s?\b"
            r"(?!\s+of\b)"
        ),
    ),
    ("refers to the author", re.compile(r"\b(the|this|that)\s+(author|authors|writer|narrator)\b")),
    (
        "points above or below",
        re.compile(
            r"\bthe\s+(above|following|preceding|aforementioned|foregoing)\b"
            r"|\b(above|below)[- ](mentioned|described|listed)\b"
            r"|\b(code|example|program|snippet|list|equation|formula|query|output|figure|table"
            r"|text|passage|graph|diagram)\s+(above|below)\b"
            r"|\bas\s+(mentioned|described|stated|shown|noted|discussed|explained)\b"
            r"(?!\s+(in|by|at|during|on)\b)"
            r"|\b(described|discussed|stated|shown|presented|listed|noted|explained|given)"
            r"\s+(here|above|below|earlier|previously)\b"
        ),
    ),
    (
        "says 'mentioned' without saying where",
        re.compile(r"\bmentioned\b(?!\s+(in|by|at|during|on)\b)"),
    ),
    (
        "refers to results or a study it does not name",
        re.compile(
            r"\b(these|those|the)\s+(results|findings)\b(?!\s+(of|from|for|on|in)\b)"
            r"|\bthe\s+(study|paper|experiment|survey)\b(?!\s+(of|by|on|about|from|in|that)\b)"
        ),
    ),
)

# Nouns that name a thing only the source document can pin down: "this algorithm" needs
# no earlier mention to be flagged. Any other "this X" is flagged only when the question
# has no content word before it (after one, "why is this useful" may refer back).
GENERIC_NOUNS = frozenset(
    """
    algorithm algorithms method methods approach technique paper study problem question course
    class lecture document code program snippet example examples result results experiment
    model system function equation formula case scenario step process version setting value
    values structure design implementation table figure section article passage text post
    author data dataset tool library protocol scheme strategy concept idea term word phrase
    book chapter quiz test exercise list graph chart diagram statement quote procedure
    technology framework solution issue finding findings analysis survey lesson tutorial unit
    module talk video presentation slide page story poem song game movie film report essay
    letter speech interview
    """.split()
)
_PRONOUNS = frozenset("it its they them their theirs he she his her this these those".split())
_DEMONSTRATIVES = frozenset(("this", "these", "those"))
# "it" is a dummy subject when it follows these ("is it possible to ...") ...
_DUMMY_BEFORE = frozenset("is was isn wasn".split())
# ... or is followed by these ("does it cost ... to", "how long did it take to ...")
_DUMMY_AFTER = frozenset(
    "take takes took cost costs make makes pay pays matter matters help helps seem seems "
    "mean means".split()
)
_WORD = re.compile(r"[a-z0-9]+")


# --------------------------------------------------------------------------- words


def tokens(text: str) -> list[str]:
    """Case-folded ``[a-z0-9]+`` words, in order."""
    return _WORD.findall(text.casefold())


def fold(word: str) -> str:
    """Simple plural folding, so that ``filters``/``filter`` and ``caches``/``cache`` match.

    Words of up to 3 characters and words with digits are kept. Otherwise
    ``-ies`` becomes ``-y``; ``-sses``, ``-shes``, ``-ches``, ``-xes``, ``-zes`` lose
    ``-es``; any other final ``-s`` (but not ``-ss``, ``-us``, ``-is``) is dropped; then
    a final ``-e`` is dropped.
    """
    if len(word) <= 3 or not word.isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "shes", "ches", "xes", "zes")):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    return word


def _is_content(word: str) -> bool:
    return word not in STOP_WORDS and (len(word) > 1 or word.isdigit())


def content_words(text: str) -> list[str]:
    """The folded content words of ``text``, in order (repeats kept)."""
    return [fold(w) for w in tokens(text) if _is_content(w)]


def copy_ratio(question: str, passage: str) -> float | None:
    """Share of the question's distinct content words that occur in the passage.

    ``None`` when the question has no content word.
    """
    q = set(content_words(question))
    if not q:
        return None
    return len(q & set(content_words(passage))) / len(q)


# --------------------------------------------------------------------------- rules


def restatement(question: str, passage: str, min_words: int = 3) -> tuple[float, str] | None:
    """For a yes/no question: the best share of its content words found in one sentence.

    Returns ``(share, sentence)``, or ``None`` when the question does not open
    with an auxiliary or has fewer than ``min_words`` content words. Sentences
    are syntok's, whatever the chunking's default, so a recorded audit stays the
    same; an empty split falls back to the whole passage.
    """
    words = tokens(question)
    if not words or words[0] not in AUXILIARIES:
        return None
    q = set(content_words(question))
    if len(q) < min_words:
        return None
    best, best_sentence = 0.0, ""
    for sentence in _sentences(passage):
        share = len(q & set(content_words(sentence))) / len(q)
        if share > best:
            best, best_sentence = share, sentence
    return best, best_sentence


def _sentences(passage: str) -> list[str]:

    spans = sentence_spans(passage, UNNAMED_SEGMENTER)
    return [passage[s:e] for s, e in spans] or [passage]


def context_reasons(question: str) -> list[str]:
    """Why the question leans on context it does not carry (empty: it does not, by rule)."""
    return [reason for reason, _ in context_matches(question)]


def context_matches(question: str) -> list[tuple[str, str]]:
    """:func:`context_reasons`, each with the words of the question it matched."""
    text = " ".join(question.casefold().split())
    reasons = []
    for label, pattern in CONTEXT_RULES:
        m = pattern.search(text)
        if m:
            reasons.append((f"{label}: '{m.group(0)}'", m.group(0)))
    words = tokens(question)
    seen_content: set[str] = set()
    for i, w in enumerate(words):
        nxt = words[i + 1] if i + 1 < len(words) else ""
        if w in _DEMONSTRATIVES and nxt and _is_content(nxt):
            if fold(nxt) not in seen_content and (not seen_content or nxt in GENERIC_NOUNS):
                reasons.append((f"'{w} {nxt}' names nothing earlier in the question", f"{w} {nxt}"))
                break
        elif w in _PRONOUNS and not seen_content:
            if w == "it" and _dummy_it(words, i):
                continue
            if w in _DEMONSTRATIVES or w == "it" or w in ("its", "they", "them", "their"):
                reasons.append((f"'{w}' before anything it could refer to", w))
                break
        if _is_content(w):
            seen_content.add(fold(w))
    return reasons


def _dummy_it(words: list[str], i: int) -> bool:
    """``it`` as a placeholder subject: "is it safe to ...", "does it take ... to"."""
    before = words[i - 1] if i > 0 else ""
    after = words[i + 1] if i + 1 < len(words) else ""
    if before not in _DUMMY_BEFORE and after not in _DUMMY_AFTER:
        return False
    return any(w in ("to", "that") for w in words[i + 1 : i + 6])


def copied_span(question: str, passage: str) -> str:
    """The longest run of the question's words that its passage holds in the same order
    (words compared folded, as the copy ratio compares them), as the question writes it;
    ``""`` when the passage holds no content word of the question. A run needs a
    content word; of two runs as long, the one with more content words, then the first."""
    found = [
        (m.start(), m.end(), m.group(0).casefold())
        for m in re.finditer(r"[a-z0-9]+", question, re.IGNORECASE)
    ]
    words = [fold(w) for _, _, w in found]
    content = [0, *(_is_content(w) for _, _, w in found)]
    for i in range(1, len(content)):  # content[i]: content words among the first i
        content[i] += content[i - 1]
    at: dict[str, list[int]] = {}
    for j, w in enumerate(fold(w) for w in tokens(passage)):
        at.setdefault(w, []).append(j)
    best, best_key = None, (0, 0)
    runs: dict[int, int] = {}  # passage position -> length of the run ending there
    for i, w in enumerate(words):
        now = {j: runs.get(j - 1, 0) + 1 for j in at.get(w, ())}
        for length in now.values():
            key = (length, content[i + 1] - content[i + 1 - length])
            if key[1] and key > best_key:
                best, best_key = (i + 1 - length, i), key
        runs = now
    if best is None:
        return ""
    return question[found[best[0]][0] : found[best[1]][1]]


def swapped_words(question: str, passage: str) -> list[tuple[str, str]]:
    """``(question word, passage word)`` for each contrast pair the question flips."""
    q = " " + " ".join(tokens(question)) + " "
    p = " " + " ".join(tokens(passage)) + " "
    found = []
    for a, b in SWAPS:
        for x, y in ((a, b), (b, a)):
            if f" {x} " in q and f" {y} " not in q and f" {x} " not in p and f" {y} " in p:
                found.append((x, y))
    return found


def near_duplicates(
    questions: Sequence[Question], threshold: float = 0.8
) -> dict[str, tuple[str, float]]:
    """For each question that nearly repeats an earlier one: ``id -> (earlier id, Jaccard)``.

    Jaccard similarity of the folded content-word sets; each question is paired
    with the earliest earlier question at or above ``threshold``. Only questions
    sharing a word are compared, and pairs whose sizes alone rule the threshold
    out are skipped.
    """
    sets = [frozenset(content_words(q.text)) for q in questions]
    postings: dict[str, list[int]] = {}
    out: dict[str, tuple[str, float]] = {}
    for j, s in enumerate(sets):
        candidates: set[int] = set()
        for w in s:
            candidates.update(postings.get(w, ()))
        best: tuple[int, float] | None = None
        for i in sorted(candidates):
            a = sets[i]
            # Jaccard <= min/max; compared as that ratio, not as min < threshold * max,
            # whose rounding (0.56 * 25 > 14) would skip a pair exactly at the threshold
            if min(len(a), len(s)) / max(len(a), len(s)) < threshold:
                continue
            jac = len(a & s) / len(a | s)
            if jac >= threshold:
                best = (i, jac)
                break
        if not s:
            empty = [i for i in range(j) if not sets[i]]
            best = (empty[0], 1.0) if empty else None
        if best is not None:
            out[questions[j].id] = (questions[best[0]].id, best[1])
        for w in s:
            postings.setdefault(w, []).append(j)
    return out

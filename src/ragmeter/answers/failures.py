"""How an answer fails, checked without a model: one function per check.

Each check reads an answer, its reference passage(s) (the answer key), the passages
the reader saw (its top k), the question and, where it needs them, the search hit
and a judge's grade:

- :func:`check_refused`: the answer declines ("not in the context", "die Passagen
  enthalten keine ...", ...) while the answering passage was in the reader's top k;
- :func:`check_number_changed`: the answer states a number that is none of the
  reference's (nor the question's, nor copied from another passage it saw): 4.8
  read as 48, or 4.8 x 9 = 43.2;
- :func:`check_number_left_out`: the question asks for a quantity and the answer
  states none of the reference's numbers (those the question does not already give);
- :func:`check_unsupported`: answer sentences with too few of their content words in
  any passage the reader saw (see :data:`SUPPORT_THRESHOLD`);
- :func:`check_without_passage`: graded correct although search missed the passage.

:func:`check_answer` runs them all on one answer. Numbers are read by
:mod:`ragmeter.answers.numbers` (95% equals 0.95, 1,000 equals 1000, twelve equals
12). Counting per system, with intervals, is :mod:`ragmeter.answers.failure_counts`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from ragmeter.answers.numbers import Number, numbers, same_as_written, same_number, stated_in
from ragmeter.errors import InputError
from ragmeter.scoring.names import metric_label

__all__ = [
    "FAILURES",
    "LABELS",
    "QUANTITY_PATTERNS",
    "REFUSAL_PATTERNS",
    "SUPPORT_THRESHOLD",
    "AnswerCheck",
    "Change",
    "CheckSettings",
    "Unsupported",
    "asks_quantity",
    "check_answer",
    "check_pattern",
    "check_number_changed",
    "check_number_left_out",
    "check_refused",
    "check_unsupported",
    "check_without_passage",
    "content_words",
    "refuses",
    "sentences",
]

FAILURES = ("refused", "number_changed", "number_left_out", "unsupported", "without_passage")
"""The failure types, in the order every view shows them."""

LABELS = {f: metric_label(f) for f in FAILURES}
"""Each failure type's title, as the metric table stood at import (its rate is a row of
:data:`ragmeter.scoring.names.FAMILIES`, whose ``title`` the views read through
:func:`~ragmeter.scoring.names.metric_label`)."""

REFUSAL_PATTERNS: tuple[str, ...] = (
    # English
    r"\bnot (?:found |given |stated |mentioned |provided |available |included )?in the "
    r"(?:provided |given |numbered )?(?:context|passages?|text|documents?|sources?)\b",
    r"\b(?:context|passages?|text|documents?|sources?) (?:does|do|did)(?: not|n't) "
    r"(?:contain|mention|say|state|provide|include|specify|give|answer)\b",
    r"\b(?:cannot|can't|can not|am unable to|unable to) (?:answer|find|determine|tell)\b",
    r"\b(?:there is|there's|contains?|provides?|gives?) no (?:information|mention)\b",
    r"\b(?:not|insufficient) enough information\b|\bnot sufficient information\b",
    r"\bi (?:do not|don't) know\b",
    # German
    r"\bnicht (?:im|in den|in der) (?:kontext|passagen|text|texten|quellen)\b",
    r"\b(?:keine|nicht genügend) (?:informationen|angaben|antwort)\b",
    r"\bkann (?:ich )?(?:die frage |das )?nicht (?:beantworten|sagen|finden)\b",
    r"\bweiß (?:ich )?(?:es )?nicht\b",
    # French
    r"\bpas (?:dans|mentionn[ée]e?s? dans|indiqu[ée]e?s? dans) (?:le|les) "
    r"(?:contexte|texte|passages)\b",
    r"\baucune information\b",
    r"\bje ne (?:sais|peux) pas\b",
    r"\bne (?:contient|contiennent|mentionne|mentionnent|précise|précisent|dit|disent) pas\b",
    # Spanish
    r"\bno (?:est[áa]|aparece|se encuentra|se menciona|figura) en (?:el|los) "
    r"(?:contexto|texto|pasajes)\b",
    r"\bno hay (?:información|informacion|datos)\b",
    r"\bno (?:lo )?s[ée]\b",
    r"\bno (?:puedo|es posible) (?:responder|contestar|determinar)\b",
    r"\bno (?:contiene|contienen|menciona|mencionan|dice|dicen)\b",
)
"""A refusal in English, German, French or Spanish (case-insensitive regular expressions),
looked for in the answer's first sentence."""

_QUANTITY_WORDS = (
    "percentage|percent|fraction|proportion|share|ratio|rate|number|amount|size|length|"
    "year|probability|chance|odds|count|cost|latency|speed|capacity|height|width|depth|"
    "factor|multiple|ceiling|limit|cap|bound|total|price|duration|distance|frequency|"
    "occupancy|level|threshold|load"
)
QUANTITY_PATTERNS: tuple[str, ...] = (
    r"\bhow (?:many|much|long|large|big|small|fast|slow|far|often|old|high|low|wide|deep|"
    r"heavy|tall|short|frequently)\b",
    rf"\b(?:what|which)\b[^?.!;]{{0,40}}?\b(?:{_QUANTITY_WORDS})s?\b",
    r"\bwie (?:viele?|lange|groß|gross|hoch|oft|schnell|weit|alt|klein)\b",
    r"\b(?:welche[rsnm]?|in welchem) (?:anteil|prozentsatz|jahr|zahl|anzahl|rate|größe)\b",
    r"\bcombien\b",
    r"\b(?:quel(?:le)?s?|en quelle) (?:pourcentage|proportion|nombre|taux|année|taille)\b",
    r"\bcu[aá]nt[oa]s?\b",
    r"\b(?:qu[ée]|en qu[ée]) (?:porcentaje|proporci[oó]n|n[uú]mero|tasa|tamaño|año)\b",
)
"""A question that asks for a quantity (case-insensitive regular expressions)."""

SUPPORT_THRESHOLD = 0.5
"""An answer sentence is unsupported when, in the passage that supports it best, fewer
than this share of its content words occur (the question's words count as support)."""

MIN_CONTENT_WORDS = 3
"""Sentences with fewer content words than this are too short to judge and never flagged."""

_STOP = frozenset(
    """a about above after again against all also am an and any are as at be because been
    before being below between both but by can could did do does doing down during each
    few for from further had has have having he her here hers herself him himself his how
    i if in into is it its itself just me more most my myself no nor not now of off on once
    only or other our ours out over own same she should so some such than that the their
    theirs them then there these they this those through to too under until up very was we
    were what when where which while who whom why will with would you your yours yes
    answer passage passages context question according based given provided states says
    der die das und ist nicht ein eine le la les et est une un el los las es en que y""".split()
)
_WORD = re.compile(r"[^\W_]+(?:[.,]\d+)*")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)|\s*\n+\s*")


@dataclass(frozen=True)
class CheckSettings:
    """What the checks read as a refusal, a quantity question and support.

    ``refusals`` and ``quantity`` are case-insensitive regular expressions;
    ``threshold`` and ``min_words`` are those of :func:`check_unsupported`.
    """

    refusals: tuple[str, ...] = REFUSAL_PATTERNS
    quantity: tuple[str, ...] = QUANTITY_PATTERNS
    threshold: float = SUPPORT_THRESHOLD
    min_words: int = MIN_CONTENT_WORDS

    def with_refusals(self, extra: Sequence[str]) -> CheckSettings:
        """These settings with more refusal patterns (each must pass :func:`check_pattern`)."""
        for pattern in extra:
            check_pattern(pattern)
        return CheckSettings(
            (*self.refusals, *extra), self.quantity, self.threshold, self.min_words
        )


DEFAULT = CheckSettings()


def _nested_repeat(items: object, inside_unbounded: bool) -> bool:
    """Whether a parsed pattern repeats, without a bound, something that itself
    repeats a varying number of times (``(a+)+``, ``(\\w*\\s?)*``): the star height
    above 1 that makes a backtracking matcher take exponential time on a near miss.
    Atomic groups and possessive repeats do not backtrack and are left alone."""
    from re import _constants as c

    if isinstance(items, tuple | list) or type(items).__name__ == "SubPattern":
        for item in items:
            op = item[0] if isinstance(item, tuple) and len(item) == 2 else None
            if isinstance(op, c._NamedIntConstant):
                av = item[1]
                if op in (c.ATOMIC_GROUP, c.POSSESSIVE_REPEAT):
                    continue
                if op in (c.MAX_REPEAT, c.MIN_REPEAT):
                    lo, hi, body = av
                    if inside_unbounded and lo != hi:
                        return True
                    if _nested_repeat(body, inside_unbounded or hi == c.MAXREPEAT):
                        return True
                    continue
                if _nested_repeat(av, inside_unbounded):
                    return True
            elif _nested_repeat(item, inside_unbounded):
                return True
    return False


def check_pattern(pattern: str, what: str = "refusal pattern") -> None:
    """A user's refusal pattern, checked before any answer is read: it must compile,
    and it may not nest a repeat inside an unbounded repeat (``(a+)+$``), which can
    run for minutes on one answer; an :class:`~ragmeter.errors.InputError` naming
    ``what`` otherwise."""
    try:
        re.compile(pattern, re.IGNORECASE)
    except re.error as exc:
        raise InputError(f"{what} {pattern!r}: not a regular expression ({exc})") from None
    try:
        from re import _parser

        nested = _nested_repeat(_parser.parse(pattern, re.IGNORECASE), False)
    except (ImportError, AttributeError):  # pragma: no cover - another Python's parser
        nested = False
    if nested:
        raise InputError(
            f"{what} {pattern!r} repeats a group that itself repeats (like (a+)+), which can "
            "take minutes on one answer: write it with one repeat (a+), or make the inner "
            "one atomic ((?>a+)+)"
        )


@dataclass(frozen=True)
class Change:
    """A number the answer states that neither the reference nor anything else the reader
    saw does: ``stated`` as written (at ``start:end`` of the answer), ``reference`` the
    reference number it most likely stands for."""

    stated: str
    reference: str | None
    start: int = 0
    end: int = 0


@dataclass(frozen=True)
class Unsupported:
    """An answer sentence and the best share of its content words found in one passage."""

    sentence: str
    support: float


@dataclass(frozen=True)
class AnswerCheck:
    """Every check's finding on one answer; ``failures`` names those that fired."""

    system: str
    question: str
    hit: bool
    grade: str | None
    refused: bool
    changed: tuple[Change, ...] = ()
    left_out: bool = False
    unsupported: tuple[Unsupported, ...] = ()
    failures: tuple[str, ...] = field(default=())

    @property
    def key(self) -> tuple[str, str]:
        return (self.system, self.question)

    @property
    def number_flag(self) -> bool:
        """The number changed or was left out: what a judge must not pass."""
        return bool(self.changed) or self.left_out


def _matches(text: str, patterns: Sequence[str]) -> bool:
    return any(re.search(p, text, re.IGNORECASE) for p in patterns)


def sentences(text: str) -> list[str]:
    """The sentences of ``text`` (decimals such as 4.8 are not sentence ends)."""
    return [s.strip() for s in _SENTENCE_END.split(text) if s and s.strip()]


def refuses(answer: str, patterns: Sequence[str] = REFUSAL_PATTERNS) -> bool:
    """Whether the answer declines: a refusal pattern in its first sentence."""
    first = sentences(answer)
    return bool(first) and _matches(first[0], patterns)


def asks_quantity(question: str, patterns: Sequence[str] = QUANTITY_PATTERNS) -> bool:
    """Whether the question asks for a quantity (how many, what percentage, what year ...)."""
    return _matches(question, patterns)


def check_refused(answer: str, hit: bool, patterns: Sequence[str] = REFUSAL_PATTERNS) -> bool:
    """Failure: the answer declines while the answering passage was in the reader's top k."""
    return hit and refuses(answer, patterns)


def _all_numbers(texts: Sequence[str]) -> list[Number]:
    return [n for t in texts for n in numbers(t)]


def _digits(n: Number) -> str:
    return "".join(ch for ch in n.text if ch.isdigit()).strip("0")


def _nearest(stated: Number, refs: Sequence[Number]) -> Number | None:
    """The reference number ``stated`` most likely stands for: the same digits with the
    point moved (4.8 for 48) first, else the nearest in ratio."""

    def distance(r: Number) -> tuple[bool, float]:
        a, b = abs(stated.values[0]) or 1e-12, abs(r.values[0]) or 1e-12
        return (_digits(stated) != _digits(r) or not _digits(r), abs(math.log(a / b)))

    return min(refs, key=distance) if refs else None


def check_number_changed(
    answer: str,
    references: Sequence[str],
    question: str = "",
    seen: Sequence[str] = (),
) -> list[Change]:
    """Failure: numbers the answer made: stated in none of the reference, the question
    or the other passages the reader saw (``seen``).

    Only when the reference states a number at all. A number copied as written from
    another passage is not a changed one (a wrong quantity taken from the wrong
    passage is a number left out instead); nor are a lone "one" and citations like
    ``[2]``.
    """
    refs = _all_numbers(references)
    if not refs:
        return []
    given = numbers(question)
    elsewhere = _all_numbers(seen)
    out = []
    for n in numbers(answer):
        if n.weak or stated_in(n, refs) or stated_in(n, given):
            continue
        if any(same_as_written(n, e) for e in elsewhere):
            continue
        near = _nearest(n, refs)
        out.append(Change(n.text, near.text if near else None, n.start, n.end))
    return out


def check_number_left_out(
    answer: str,
    references: Sequence[str],
    question: str,
    patterns: Sequence[str] = QUANTITY_PATTERNS,
) -> bool:
    """Failure: the question asks for a quantity and the answer states none of the
    reference's numbers (leaving out those the question itself gives).

    Not raised when the reference has no such number to state.
    """
    if not asks_quantity(question, patterns):
        return False
    given = numbers(question)
    wanted = [r for r in _all_numbers(references) if not stated_in(r, given)]
    if not wanted:
        return False
    stated = numbers(answer)
    return not any(same_number(n, r) for n in stated for r in wanted)


def _stem(word: str) -> str:
    if not word.isalpha() or len(word) <= 4:
        return word
    for suffix, repl in (("ies", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("ly", ""), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)] + repl
    return word


def content_words(text: str) -> set[str]:
    """Lower-cased, lightly stemmed words of ``text`` without stop words; numbers kept."""
    out = set()
    for w in _WORD.findall(text.lower()):
        if w in _STOP or (len(w) < 3 and not w[0].isdigit()):
            continue
        out.add(_stem(w))
    return out


def check_unsupported(
    answer: str,
    seen: Sequence[str],
    question: str = "",
    threshold: float = SUPPORT_THRESHOLD,
    min_words: int = MIN_CONTENT_WORDS,
) -> list[Unsupported]:
    """Failure: sentences of the answer with little lexical support in what the reader saw.

    A sentence's support is the largest share of its content words found in one passage
    of ``seen`` together with the question; below ``threshold`` (and with at least
    ``min_words`` content words) the sentence is unsupported.
    """
    asked = content_words(question)
    sources = [content_words(p) | asked for p in seen] or [asked]
    out = []
    for sentence in sentences(answer):
        words = content_words(sentence)
        if len(words) < min_words:
            continue
        support = max(len(words & s) for s in sources) / len(words)
        if support < threshold:
            out.append(Unsupported(sentence, round(support, 4)))
    return out


def check_without_passage(grade: str | None, hit: bool) -> bool:
    """Failure (of search or of the judge): graded correct while search missed the passage."""
    return grade == "correct" and not hit


def check_answer(
    system: str,
    question_id: str,
    answer: str,
    references: Sequence[str],
    seen: Sequence[str],
    question: str,
    hit: bool,
    grade: str | None = None,
    settings: CheckSettings = DEFAULT,
) -> AnswerCheck:
    """Every check on one answer. A refusal is only a refusal: the number and support
    checks are left out for it (it states nothing to check)."""
    refused = refuses(answer, settings.refusals)
    changed: list[Change] = []
    left_out = False
    unsupported: list[Unsupported] = []
    if not refused:
        changed = check_number_changed(answer, references, question, seen)
        left_out = not changed and check_number_left_out(
            answer, references, question, settings.quantity
        )
        unsupported = check_unsupported(
            answer, seen, question, settings.threshold, settings.min_words
        )
    fired = {
        "refused": refused and hit,
        "number_changed": bool(changed),
        "number_left_out": left_out,
        "unsupported": bool(unsupported),
        "without_passage": check_without_passage(grade, hit),
    }
    return AnswerCheck(
        system=system,
        question=question_id,
        hit=hit,
        grade=grade,
        refused=refused,
        changed=tuple(changed),
        left_out=left_out,
        unsupported=tuple(unsupported),
        failures=tuple(f for f in FAILURES if fired[f]),
    )

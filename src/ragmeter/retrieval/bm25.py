"""BM25 over chunk texts with the bm25s library: no model, no network.

The index is bm25s's own (its scoring code ranks the questions), but it is built here in a
few vectorised passes instead of bm25s's per-document Python loops: the same tokens, the
same vocabulary order and bit-for-bit the same score matrix (tested against
``bm25s.tokenize`` + ``BM25.index``), several times faster on large corpora. This module
finds the tokens (of texts, or of documents shared by their chunks);
:mod:`ragmeter.retrieval.bm25_index` builds the score matrix from them.
"""

from __future__ import annotations

import itertools
import re
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import bm25s
import numpy as np
from bm25s.tokenization import _infer_stopwords

from ragmeter.errors import InputError, MissingExtra
from ragmeter.retrieval.base import Ranking, Retriever, top_k
from ragmeter.retrieval.bm25_index import build_scores

# Questions ranked per block: at most this many, and at most SCORE_BLOCK scores a block
# (bounds the score matrix, and top_k's copies of it, however large the index).
QUESTION_BLOCK = 64
SCORE_BLOCK = 1 << 16
# Elements per block of the array work on token ids (bounds its temporaries).
_BLOCK = 1 << 16
# The token table keeps token ids in 16 bits below this many words,
_PACK16 = 1 << 16
# and the gaps between token starts in 8 bits: this value marks a gap this wide or wider,
# kept apart.
_GAP8 = 255
# Characters of a document tokenized at a time (bounds the temporaries of a large one).
_PIECE = 1 << 16

# bm25s.tokenize lower-cases, then finds r"(?u)\b\w\w+\b" (scikit-learn's pattern): the maximal
# runs of two or more word characters, which is what this faster equivalent finds (tested).
_TOKEN = re.compile(r"\w{2,}")


def tokenize(
    texts: Sequence[str], stopwords: str | Sequence[str] | None = "en", stemmer: Any = None
) -> tuple[np.ndarray, np.ndarray, dict[str, int]]:
    """Token ids of ``texts`` exactly as ``bm25s.tokenize(texts, stopwords=..., stemmer=...)``
    gives them.

    Returns ``(ids, lengths, vocab)``: every text's token ids one after the other, the number
    of tokens of each text, and the vocabulary in order of first appearance. The per-token
    work runs in C (``findall``, ``dict.fromkeys``, ``map``), not in a Python loop. With a
    ``stemmer`` (a PyStemmer ``Stemmer``) the vocabulary holds the stems of the words kept
    after stop words are removed, as bm25s does; bm25s numbers them in set order, this in
    order of first appearance, which changes no score.
    """
    stop = frozenset(_infer_stopwords(stopwords) if stopwords else ())
    findall = _TOKEN.findall
    per_text = [findall(t.lower()) for t in texts]
    raw_lens = np.fromiter(map(len, per_text), dtype=np.int64, count=len(per_text))
    flat = [w for toks in per_text for w in toks]
    del per_text
    vocab: dict[str, int] = {}
    lookup: dict[str, int] = {}
    distinct = dict.fromkeys(flat)  # distinct tokens in order of first appearance
    kept = [w for w in distinct if w not in stop]
    terms = stemmer.stemWords(kept) if stemmer is not None else kept
    for w, term in zip(kept, terms, strict=True):
        lookup[w] = vocab.setdefault(term, len(vocab))
    lookup.update((w, -1) for w in distinct if w in stop)
    del distinct, kept, terms
    ids = np.fromiter(map(lookup.__getitem__, flat), dtype=np.int64, count=len(flat))
    del flat
    if stop and len(ids):
        keep = ids >= 0
        owner = np.repeat(np.arange(len(raw_lens)), raw_lens)
        lengths = np.bincount(owner[keep], minlength=len(raw_lens)).astype(np.int64)
        ids = ids[keep]
    else:
        lengths = raw_lens
    return ids, lengths, vocab


class _TokenTable:
    """Every document's tokens found once per run and shared by every strategy's chunks.

    A chunk that starts and ends at whitespace (or the document's edges) holds exactly the
    document's tokens that start inside it: tokens never cross whitespace, and lower-casing
    never looks across it. So each document is lower-cased and tokenized once, and a
    strategy's chunks only pick their ranges of token ids (array operations). Documents whose
    lower-cased text changes length are not handled here (the caller falls back).

    The ids a document's tokens are given are those of their *terms*: the tokens themselves,
    or with a ``stemmer`` their stems (each distinct token is stemmed once).
    """

    def __init__(self, stopwords: str | Sequence[str] | None, stemmer: Any = None) -> None:
        self.stop = frozenset(_infer_stopwords(stopwords) if stopwords else ())
        # token -> global id; a new token gets the next id as it is first looked up
        self.ids: defaultdict[str, int] = defaultdict(itertools.count().__next__)
        self.tokens: list[str] = []  # global id -> token
        self.is_stop = np.zeros(0, dtype=bool)  # global id -> a stop word?
        self.stemmer = stemmer
        self.terms: list[str] = self.tokens if stemmer is None else []  # term id -> term
        self._term_ids: dict[str, int] = {}  # term -> term id (with a stemmer)
        self._term_of = np.zeros(0, dtype=np.int32)  # global id -> term id (with a stemmer)
        self._docs: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray] | None] = {}

    def doc(self, text: str) -> tuple[np.ndarray, np.ndarray] | None:
        """``(token starts, term ids)`` of ``text``, or ``None`` if not handled.

        Stop words are left out here already: a chunk's tokens are then exactly the kept
        tokens that start inside it. Kept between calls compactly: the gaps between starts
        in 8 bits (the rare wider gap kept apart) and the ids in 16 bits where they fit: 3
        bytes a token instead of 12.
        """
        if text not in self._docs:
            self._docs[text] = self._packed(text)
        packed = self._docs[text]
        if packed is None:
            return None
        small, wide, gids = packed
        gaps = small.astype(np.int64)
        if len(wide):
            gaps[small == _GAP8] = wide
        return np.cumsum(gaps, out=gaps), gids

    def flags(self, flags: np.ndarray, words: frozenset[str]) -> np.ndarray:
        """``flags`` (term id -> is the term in ``words``?) extended to every term the
        table knows now."""
        return _extend_flags(flags, words, self.terms)

    def _stem_new(self, known: int) -> None:
        """Give the tokens from global id ``known`` on their term ids (their stems')."""
        stems = self.stemmer.stemWords(self.tokens[known:])
        ids = self._term_ids
        for stem in stems:
            if stem not in ids:
                ids[stem] = len(self.terms)
                self.terms.append(stem)
        more = np.fromiter(map(ids.__getitem__, stems), np.int32, len(stems))
        self._term_of = np.concatenate((self._term_of, more))

    def _packed(self, text: str) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        # A piece of about _PIECE characters at a time, cut at whitespace (no token crosses
        # it and lower-casing never looks across it), so a document's temporaries stay
        # small: a whole large document's would take several times its size at once, and
        # its words' strings would scatter the new ones over Python's small-object arenas.
        all_starts, all_gids = [], []
        for a, b in _cuts(text):
            piece = text[a:b]
            low = piece.lower()
            if len(low) != len(piece):
                return None
            starts, words = _word_runs(low)
            known = len(self.tokens)
            # every new word gets the next id as it is first met: one pass, in C
            gids = np.fromiter(map(self.ids.__getitem__, words), np.int32, len(words))
            del words, low, piece
            if len(self.ids) > known:
                self.tokens.extend(itertools.islice(self.ids, known, None))
                self.is_stop = _extend_flags(self.is_stop, self.stop, self.tokens)
                if self.stemmer is not None:
                    self._stem_new(known)
            if self.stop and len(gids):
                keep = ~self.is_stop[gids]
                starts, gids = starts[keep], gids[keep]
            if self.stemmer is not None:
                gids = self._term_of[gids]
            all_starts.append(starts + a)
            all_gids.append(gids)
        starts = np.concatenate(all_starts) if all_starts else np.zeros(0, np.int64)
        gids = np.concatenate(all_gids) if all_gids else np.zeros(0, np.int32)
        del all_starts, all_gids
        gaps = np.diff(starts, prepend=0)
        wide = gaps[gaps >= _GAP8]  # each gap of _GAP8 or more, in order
        small = np.minimum(gaps, _GAP8).astype(np.uint8)
        if len(self.terms) <= _PACK16:  # every id below 2**16
            gids = gids.astype(np.uint16)
        return small, wide, gids


def _extend_flags(flags: np.ndarray, words: frozenset[str], names: list[str]) -> np.ndarray:
    """``flags`` (id -> is ``names[id]`` in ``words``?) extended to every id of ``names``."""
    new = names[len(flags) :]
    if not new:
        return flags
    more = np.fromiter((w in words for w in new), dtype=bool, count=len(new))
    return np.concatenate((flags, more))


_SPACE = re.compile(r"\s")


def _cuts(text: str) -> Iterator[tuple[int, int]]:
    """``(start, end)`` of consecutive pieces of ``text``, each about :data:`_PIECE`
    characters long and ending just before a whitespace character (or at the end)."""
    a, n = 0, len(text)
    while a < n:
        found = _SPACE.search(text, a + _PIECE) if a + _PIECE < n else None
        b = found.start() if found else n
        yield a, b
        a = b


def _word_table(limit: int) -> np.ndarray:
    """``table[c]``: whether ``re``'s ``\\w`` matches code point ``c`` (``str.isalnum()`` or
    ``"_"``), for every code point below ``limit``."""
    table = np.fromiter((chr(c).isalnum() for c in range(limit)), dtype=bool, count=limit)
    table[95] = True
    return table


_BMP = 0x10000
_BMP_WORD: list[np.ndarray] = []  # the table of the basic plane, made on first use


def _word_runs(text: str) -> tuple[np.ndarray, list[str]]:
    """Starts and texts of the runs of two or more ``\\w`` characters of ``text``: the
    matches of :data:`_TOKEN`, found with numpy over the code points and ``str.split``."""
    if not text:
        return np.zeros(0, np.int64), []
    if not _BMP_WORD:
        _BMP_WORD.append(_word_table(_BMP))
    cps = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    word = _BMP_WORD[0][np.minimum(cps, _BMP - 1)]
    astral = np.flatnonzero(cps >= _BMP)
    if len(astral):
        word[astral] = [chr(c).isalnum() for c in cps[astral].tolist()]
    edges = np.diff(word.view(np.int8), prepend=np.int8(0), append=np.int8(0))
    starts = np.flatnonzero(edges == 1)
    lengths = np.flatnonzero(edges == -1) - starts
    single = lengths == 1
    if single.any():
        word[starts[single]] = False
        starts = starts[~single]
    # Every other character made a space: str.split() then yields exactly the runs of two
    # or more (no \w character is whitespace).
    spaced = np.where(word, cps, np.uint32(32)).tobytes().decode("utf-32-le", "surrogatepass")
    return starts, spaced.split()


def _chunk_tokens(
    table: _TokenTable,
    chunks: Sequence,
    texts: Mapping[str, str],
    keep: frozenset[str] | None = None,
) -> tuple[np.ndarray, np.ndarray, dict[str, int], np.ndarray] | None:
    """:func:`tokenize` of the chunks' texts, from the documents' shared tokens, and the
    number of ids of each chunk; ``None`` when some chunk does not start and end at
    whitespace or its document is not handled. With ``keep``, only the tokens in it are
    returned (the lengths still count every token; the counts, only the kept ones).

    Memory: the result (4 bytes a token) and one document's temporaries at a time."""
    n = len(chunks)
    wanted = np.zeros(0, dtype=bool)  # with keep: global id -> kept? (grows with the table)
    runs: list[tuple[np.ndarray | str, np.ndarray, np.ndarray]] = []  # (ids or text, lo, hi)
    all_lengths: list[np.ndarray] = []
    i = 0
    while i < n:  # runs of consecutive chunks of one document
        doc_id = chunks[i].doc_id
        j = i
        while j < n and chunks[j].doc_id == doc_id:
            j += 1
        text = texts.get(doc_id)
        found = table.doc(text) if text is not None else None
        if found is None:
            return None
        starts, gids = found
        cs = [c.start for c in chunks[i:j]]
        ce = [c.end for c in chunks[i:j]]
        size = len(text)
        for c in chunks[i:j]:
            a, b = c.start, c.end
            if (a > 0 and not text[a - 1].isspace()) or (b < size and not text[b].isspace()):
                return None
            if not c.is_span_of(text) and (len(c.text) != b - a or not text.startswith(c.text, a)):
                return None  # a chunk whose text is not its span of the document
        lo = np.searchsorted(starts, cs, side="left")
        hi = np.searchsorted(starts, ce, side="left")
        all_lengths.append(hi - lo)
        if keep is not None:  # the kept tokens, and each chunk's range of them
            wanted = table.flags(wanted, keep)
            at = np.flatnonzero(wanted[gids])
            lo, hi = np.searchsorted(at, lo), np.searchsorted(at, hi)
            gids = text  # its kept ids are picked again below: not held for every document
        runs.append((gids, lo, hi))
        i = j
    lengths = np.concatenate(all_lengths) if runs else np.zeros(0, np.int64)
    lengths = lengths.astype(np.int64, copy=False)  # the chunks' tokens (stop words are out)
    del all_lengths
    per_chunk = lengths  # ids per chunk: fewer when only the kept tokens are returned
    if keep is not None and runs:
        per_chunk = np.concatenate([hi - lo for _, lo, hi in runs]).astype(np.int64, copy=False)
    ids = np.empty(int(per_chunk.sum()), dtype=np.int32)
    at = 0
    for gids, lo, hi in runs:
        counts = hi - lo
        m = int(counts.sum())
        if not m:
            continue
        if isinstance(gids, str):  # a document's kept tokens
            gids = table.doc(gids)[1]
            gids = gids[wanted[gids]]
        # Positions lo[c] .. hi[c]-1 of every chunk c, one after the other, as one running
        # sum: +1 within a chunk, a jump to lo[c] where chunk c begins.
        pos = np.ones(m, dtype=np.int64)
        nonempty = np.flatnonzero(counts)
        jumps = lo[nonempty]
        jumps[1:] -= hi[nonempty[:-1]] - 1
        pos[(np.cumsum(counts) - counts)[nonempty]] = jumps
        np.cumsum(pos, out=pos)
        ids[at : at + m] = gids[pos]
        at += m
    del runs
    # bm25s numbers the vocabulary in order of first appearance. Global ids were given in
    # order of first appearance in the documents, which is usually that order already:
    # check it a block at a time (each new id is one more than every earlier one), else sort.
    present = np.zeros(len(table.terms), dtype=bool)
    for a in range(0, len(ids), _BLOCK):  # (numpy widens an index array to 64 bits: blocks)
        present[ids[a : a + _BLOCK]] = True
    ordered = np.flatnonzero(present)
    local = np.empty(len(table.terms), dtype=np.int32)
    local[ordered] = np.arange(len(ordered), dtype=np.int32)
    in_order, top = True, -1
    for a in range(0, len(ids), _BLOCK):
        ranks = local[ids[a : a + _BLOCK]]
        seen = np.maximum.accumulate(ranks)
        np.maximum(seen, top, out=seen)
        if ranks[0] > top + 1 or np.any(ranks[1:] > seen[:-1] + 1):
            in_order = False
            break
        top = int(seen[-1])
    if not in_order:
        uniq, first = np.unique(ids, return_index=True)
        ordered = uniq[np.argsort(first, kind="stable")]
        local[ordered] = np.arange(len(ordered), dtype=np.int32)
    vocab = {table.terms[g]: i for i, g in enumerate(ordered.tolist())}
    for a in range(0, len(ids), _BLOCK):  # global ids -> this vocabulary's, in place
        np.take(local, ids[a : a + _BLOCK], out=ids[a : a + _BLOCK])
    return ids, lengths, vocab, per_chunk


class BM25Retriever(Retriever):
    """Lexical BM25 (Lucene variant) with English stop words removed.

    Scores every indexed text for each question and breaks score ties by
    index order, so rankings are reproducible. A text sharing no word with the
    question scores 0 (``unmatched_score``). ``stemmer`` (a PyStemmer language such as
    ``"english"``; none by default) matches words by their stems, as bm25s does.
    """

    unmatched_score = 0.0

    def __init__(
        self,
        name: str = "bm25",
        k1: float = 1.5,
        b: float = 0.75,
        stopwords: str | None = "en",
        stemmer: str | None = None,
    ) -> None:
        self.name = name
        self.k1 = k1
        self.b = b
        self.stopwords = _check_stopwords(stopwords)
        self.stemmer, self._stem = _make_stemmer(stemmer)
        self._model: bm25s.BM25 | None = None
        self._n = 0
        self._table: _TokenTable | None = None
        self._kept: frozenset[str] | None = None  # the only words an index for questions has

    def describe(self) -> dict:
        return {
            "name": self.name,
            "kind": "bm25",
            "k1": self.k1,
            "b": self.b,
            "stopwords": self.stopwords,
            **({"stemmer": self.stemmer} if self.stemmer else {}),
            "library": f"bm25s {bm25s.__version__}",
        }

    def index(self, texts: Sequence[str]) -> None:
        self._kept = None
        self._build(len(texts), tokenize(texts, self.stopwords, self._stem), lambda: list(texts))

    def prepare_documents(self, documents: Mapping[str, str]) -> None:
        """Tokenize each document of ``documents`` (id -> text) now, for the strategies of
        the run to come (:meth:`index_chunks` would otherwise do it on first use)."""
        if self._table is None:
            self._table = _TokenTable(self.stopwords, self._stem)
        for text in documents.values():
            self._table.doc(text)

    def index_chunks(
        self,
        chunks: Sequence,
        documents: Mapping[str, str],
        questions: Sequence[str] | None = None,
    ) -> None:
        """Index ``[c.text for c in chunks]``, exactly as :meth:`index` would, but tokenize
        each document of ``documents`` (id -> text) once for all the strategies of a run.

        With ``questions``, the index keeps only the columns of their words: their scores
        are the same bit for bit, the index is smaller (about half, on Chroma's corpora and
        questions) and :meth:`rank` then refuses a question with any other word.
        """
        if self._table is None:
            self._table = _TokenTable(self.stopwords, self._stem)
        keep = None
        if questions is not None:
            keep = frozenset(w for q in self._query_terms(questions) for w in q)
        found = _chunk_tokens(self._table, chunks, documents, keep)
        if found is not None and keep is not None and not found[2]:
            keep = None  # no question word occurs in these chunks: a plain index
            found = _chunk_tokens(self._table, chunks, documents)
        self._kept = keep if found is not None else None

        def texts() -> list[str]:  # made only when needed: chunks are views of documents
            return [c.text for c in chunks]

        self._build(
            len(chunks),
            found if found is not None else tokenize(texts(), self.stopwords, self._stem),
            texts,
        )

    def _build(self, n: int, tokens, texts: Callable[[], list[str]]) -> None:
        ids, lengths, vocab, *counts = tokens  # (counts: ids per text, if not every token)
        model = bm25s.BM25(k1=self.k1, b=self.b)
        if n == 0 or len(vocab) == 0:
            # Nothing to vectorise: let bm25s build (or refuse) its own empty index.
            model.index(
                bm25s.tokenize(
                    texts(), stopwords=self.stopwords, stemmer=self._stem, show_progress=False
                ),
                show_progress=False,
            )
        else:
            model.scores = build_scores(
                ids,
                lengths,
                len(vocab),
                self.k1,
                self.b,
                consume=True,
                counts=next(iter(counts), None),
            )
            model.nonoccurrence_array = None
            vocab[""] = len(vocab)  # bm25s's empty token, scored by no document
            model.vocab_dict = vocab
            model.unique_token_ids_set = set(vocab.values())
        self._model = model
        self._n = n

    def _query_terms(self, questions: Sequence[str]) -> list[list[str]]:
        """Each question's terms, as bm25s tokenizes (and stems) them."""
        return bm25s.tokenize(
            list(questions),
            stopwords=self.stopwords,
            stemmer=self._stem,
            return_ids=False,
            show_progress=False,
        )

    def release(self) -> None:
        """Drop the index (a run calls this once the system is ranked)."""
        self._model = None
        self._n = 0

    def rank(self, questions: Sequence[str], k: int) -> Ranking:
        if self._model is None:
            raise RuntimeError("index() must be called before rank()")
        queries = self._query_terms(questions)
        if self._kept is not None:
            for text, words in zip(questions, queries, strict=True):
                if not self._kept.issuperset(words):
                    raise ValueError(
                        f"this index keeps only the words of the questions it was built for, "
                        f"not those of {text!r}: index again without questions= to rank it"
                    )
        # Questions in blocks: the score matrix (and top_k's copies of it) stays at about
        # SCORE_BLOCK scores however many questions and chunks there are. Rows are independent.
        rows = max(1, min(QUESTION_BLOCK, SCORE_BLOCK // max(self._n, 1)))
        parts = []
        for start in range(0, max(len(queries), 1), rows):
            block = queries[start : start + rows]
            scores = np.empty((len(block), self._n), dtype=np.float64)
            for i, q in enumerate(block):
                scores[i] = self._model.get_scores(q) if q else 0.0
            parts.append(top_k(scores, k))
        if len(parts) == 1:
            return parts[0]
        return Ranking(
            ids=np.vstack([p.ids for p in parts]), scores=np.vstack([p.scores for p in parts])
        )


def _check_stopwords(stopwords: str | Sequence[str] | None) -> str | Sequence[str] | None:
    """``stopwords`` as bm25s takes them: a language bm25s knows, a list of words, or
    none (``None``, ``""`` or an empty list); anything else is a one-line error."""
    if stopwords is None or (isinstance(stopwords, str | list | tuple) and not stopwords):
        return None
    try:
        _infer_stopwords(stopwords)
    except (ValueError, TypeError):
        raise InputError(
            f"bm25 stopwords {stopwords!r} are not known: give a language code such as "
            '"en", "de" or "fr", a list of words, or "" for none'
        ) from None
    return stopwords


def _make_stemmer(stemmer: str | None) -> tuple[str | None, Any]:
    """``(language, PyStemmer stemmer)`` for a ``stemmer`` setting; none for ``None`` or
    ``""``. An unknown language is an :class:`InputError`; PyStemmer missing, a
    :class:`MissingExtra`."""
    if stemmer is None or stemmer == "":
        return None, None
    if not isinstance(stemmer, str):
        raise InputError(f'bm25 stemmer must be a language such as "english", got {stemmer!r}')
    try:
        import Stemmer  # PyStemmer: only a retriever that stems needs it
    except ImportError:
        raise MissingExtra(
            f"bm25 stemmer {stemmer!r} needs PyStemmer: pip install PyStemmer "
            "(or pip install 'ragmeter[stem]')"
        ) from None
    known = Stemmer.algorithms()
    if stemmer not in known:
        raise InputError(
            f'bm25 stemmer {stemmer!r} is not known: give one of {", ".join(known)}, or "" for none'
        )
    return stemmer, Stemmer.Stemmer(stemmer)

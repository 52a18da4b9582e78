"""BM25 over chunk texts with the bm25s library: no model, no network.

bm25s's own code scores the questions; its index (the Lucene BM25 score matrix, float32,
columns by term) is built here, bit for bit the one ``bm25s.BM25().index(bm25s.tokenize(...))``
builds (tested), in array operations rather than bm25s's per-text Python loops, from tokens
found once per document for every strategy of a run: a chunk that starts and ends at
whitespace holds exactly its document's tokens that start inside it. That is about 3x faster
than bm25s's own indexing on unique text (``bench/optimizations.py bm25``). It writes bm25s's
index attributes (``scores``, ``vocab_dict``), so bm25s is pinned to one version.

In a run the questions are known before the corpus is indexed, so only their terms are
indexed (``questions`` of :meth:`BM25Retriever.index_chunks`): every other token still
counts toward its chunk's length, which is all BM25 needs of it, but gets no term, no
column and no entry of the vocabulary. The scores are the same bit for bit (tested); the
index, its build and the vocabulary shrink to the questions' share of the corpus.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Mapping, Sequence
from itertools import repeat
from typing import Any, NamedTuple

import bm25s
import numpy as np
from bm25s.tokenization import _infer_stopwords

from ragmeter.errors import InputError, MissingExtra
from ragmeter.retrieval.base import Ranking, Retriever, top_k

# Questions ranked per block: at most this many, and at most SCORE_BLOCK scores a block
# (bounds the score matrix, and top_k's copies of it, however large the index).
QUESTION_BLOCK = 64
SCORE_BLOCK = 1 << 16
# Tokens counted together when an index is built: bounds its 64-bit keys and their sort
# (whole texts a block, so a text longer than this is a block of its own).
KEY_BLOCK = 1 << 18

# bm25s.tokenize lower-cases, then finds r"(?u)\b\w\w+\b" (scikit-learn's pattern): the maximal
# runs of two or more word characters, which is what this faster equivalent finds (tested).
_TOKEN = re.compile(r"\w{2,}")

_STOP = -1  # a stop word: left out, as bm25s leaves it out
_OTHER = -2  # a term the questions do not hold: counted in its text's length, not indexed


class Tokens(NamedTuple):
    """A document's tokens other than stop words: each one's start (``starts``), and the
    term ids of those indexed (``ids``), which are the tokens at ``at`` (``None``: all)."""

    starts: np.ndarray
    ids: np.ndarray
    at: np.ndarray | None = None


class _TokenTable:
    """Every document's tokens found once per run and shared by every strategy's chunks.

    Each distinct token gets a term id as it is first met (with a ``stemmer``, the id of its
    stem; stop words get -1 and are left out). With ``only`` (the questions' terms), those
    terms are the vocabulary, numbered at once, and every other token is counted, not kept
    by name. Documents whose lower-cased text changes length are not handled (``doc`` gives
    ``None``; the caller falls back).
    """

    def __init__(
        self,
        stopwords: str | Sequence[str] | None,
        stemmer: Any = None,
        only: Collection[str] | None = None,
    ) -> None:
        self.stop = frozenset(_infer_stopwords(stopwords) if stopwords else ())
        self.stemmer = stemmer
        self.only = None if only is None else frozenset(only)
        self.terms: dict[str, int] = {}  # term -> id
        # token -> its term's id, _STOP or _OTHER; without a stemmer and with ``only``, no
        # token but the questions' terms and the stop words is kept here
        self._ids: dict[str, int] = {}
        if self.only is not None:
            self.terms = {t: i for i, t in enumerate(sorted(self.only))}
            if stemmer is None:
                self._ids = {**dict.fromkeys(self.stop, _STOP), **self.terms}
        self._docs: dict[str, Tokens | None] = {}

    def doc(self, text: str) -> Tokens | None:
        """``text``'s :class:`Tokens`, or ``None`` if not handled."""
        if text not in self._docs:
            low = text.lower()
            self._docs[text] = self._tokens(low) if len(low) == len(text) else None
        return self._docs[text]

    def _tokens(self, low: str) -> Tokens:
        starts, words = _word_runs(low)
        if self.only is not None and self.stemmer is None:
            lookup = map(self._ids.get, words, repeat(_OTHER))
        else:
            self._learn(words)
            lookup = map(self._ids.__getitem__, words)
        ids = np.fromiter(lookup, np.int32, len(words))
        keep = ids != _STOP
        starts = starts[keep]  # 32-bit where the text allows: a third of the table
        starts = starts.astype(np.int32) if len(low) < 2**31 else starts
        ids = ids[keep]
        if self.only is None:
            return Tokens(starts, ids)
        at = np.flatnonzero(ids >= 0).astype(np.int32)
        return Tokens(starts, ids[at], at)

    def _learn(self, words: list[str]) -> None:
        """Give each token of ``words`` not met before its term's id (or mark it)."""
        new = [w for w in dict.fromkeys(words) if w not in self._ids]
        kept = [w for w in new if w not in self.stop]
        stems = self.stemmer.stemWords(kept) if self.stemmer is not None else kept
        for w, term in zip(kept, stems, strict=True):
            if self.only is None:
                self._ids[w] = self.terms.setdefault(term, len(self.terms))
            else:
                self._ids[w] = self.terms.get(term, _OTHER)
        self._ids.update((w, _STOP) for w in new if w in self.stop)


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
    matches of :data:`_TOKEN`, found with numpy over the code points and ``str.split``
    (3x faster than ``finditer`` for the starts and ``findall`` for the texts)."""
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


def _chunk_ids(
    table: _TokenTable, chunks: Sequence, texts: Mapping[str, str]
) -> tuple[list[np.ndarray], np.ndarray] | None:
    """Each chunk's indexed term ids and its length (its tokens other than stop words),
    from its document's tokens; ``None`` when some chunk does not start and end at
    whitespace, is not its span of the document, or its document is not handled."""
    out: list[np.ndarray] = []
    lengths: list[np.ndarray] = []
    i, n = 0, len(chunks)
    while i < n:  # runs of consecutive chunks of one document
        doc_id = chunks[i].doc_id
        j = i
        while j < n and chunks[j].doc_id == doc_id:
            j += 1
        text = texts.get(doc_id)
        found = table.doc(text) if text is not None else None
        if found is None:
            return None
        starts, ids, at = found
        size = len(text)
        for c in chunks[i:j]:
            a, b = c.start, c.end
            if (a > 0 and not text[a - 1].isspace()) or (b < size and not text[b].isspace()):
                return None
            if not c.is_span_of(text) and (len(c.text) != b - a or not text.startswith(c.text, a)):
                return None  # a chunk whose text is not its span of the document
        lo = np.searchsorted(starts, [c.start for c in chunks[i:j]])
        hi = np.searchsorted(starts, [c.end for c in chunks[i:j]])
        lengths.append(hi - lo)
        if at is not None:  # only some tokens indexed: theirs among the chunk's
            lo, hi = np.searchsorted(at, lo), np.searchsorted(at, hi)
        out += [ids[a:b] for a, b in zip(lo.tolist(), hi.tolist(), strict=True)]
        i = j
    return out, np.concatenate(lengths) if lengths else np.zeros(0, np.int64)


def build_scores(
    ids: np.ndarray,
    lengths: np.ndarray,
    n_vocab: int,
    k1: float,
    b: float,
    counts: np.ndarray | None = None,
) -> dict:
    """bm25s's score matrix (Lucene BM25, float32, CSC over terms) of texts whose term ids
    are ``ids``, one text after the other, ``lengths[i]`` of them text ``i``'s; with
    ``counts``, text ``i`` has ``lengths[i]`` tokens of which only its ``counts[i]`` in
    ``ids`` are indexed (the others count toward its length only).

    The arithmetic is bm25s's, operation for operation and in the same precision:
    ``idf * (tf / (k1 * ((1 - b) + b * l_d / l_avg) + tf))`` with idf from ``math.log``
    stored as float32, tf float32, the rest float64, the result rounded to float32.

    Built in blocks of whole texts of about :data:`KEY_BLOCK` tokens: each block's (term,
    text) pairs are counted on their own (a text's pairs are all in its block), then each
    pair's score is written at its place in the matrix. A term's pairs come block after
    block, so in text order, as one sort of every pair would put them. The 64-bit keys and
    the sort are a block's, not the whole index's.
    """
    n_docs = len(lengths)
    counts = lengths if counts is None else counts
    firsts = np.concatenate(([0], np.cumsum(counts, dtype=np.int64)))
    edges = np.searchsorted(firsts[:-1], np.arange(0, firsts[-1], KEY_BLOCK), side="left")
    edges = np.unique(np.concatenate((edges, [0, n_docs]))).tolist()
    blocks = []  # each block's (terms, texts, counts) of its pairs, by term then text
    df = np.zeros(n_vocab, np.int64)  # each term's number of texts
    for lo, hi in zip(edges[:-1], edges[1:], strict=True):
        term, doc, tf = _pairs(ids, counts, firsts, lo, hi)
        blocks.append((term.astype(np.int32), doc.astype(np.int32), tf.astype(np.int32)))
        _add_runs(df, blocks[-1][0])
    indptr = np.concatenate(([0], np.cumsum(df)))
    uniq, where = np.unique(df, return_inverse=True)  # math.log once a value
    del df
    idf = np.array([math.log(1 + (n_docs - c + 0.5) / (c + 0.5)) for c in uniq.tolist()])
    idf = idf.astype(np.float32)[where]
    norm = k1 * ((1 - b) + b * lengths / lengths.mean())
    data = np.empty(int(indptr[-1]), np.float32)
    indices = np.empty(int(indptr[-1]), np.int32)
    cursor = indptr[:-1].copy()  # where each term's next pair goes
    while blocks:
        term, doc, tf = blocks.pop(0)
        pos = np.arange(len(term), dtype=np.int64)
        pos -= np.searchsorted(term, term)  # the pair's rank among its block's pairs of its term
        pos += cursor[term]
        _add_runs(cursor, term)
        tf64 = tf.astype(np.float32).astype(np.float64)
        x = norm[doc] + tf64
        x = tf64 / x
        x *= idf[term]
        data[pos] = x
        indices[pos] = doc
    return {"data": data, "indices": indices, "indptr": indptr, "num_docs": n_docs}


def _pairs(ids, lengths, firsts, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The (term, text) pairs of texts ``lo`` to ``hi`` (not included) and how often each
    occurs: ``(terms, texts, counts)``, by term then text."""
    text = np.repeat(np.arange(lo, hi, dtype=np.int64), lengths[lo:hi])
    keys = ids[firsts[lo] : firsts[hi]].astype(np.int64)
    n_docs = len(lengths)
    keys *= n_docs
    keys += text
    del text
    pairs, tf = np.unique(keys, return_counts=True)
    del keys
    term, doc = np.divmod(pairs, n_docs)
    return term, doc, tf


def _add_runs(counts: np.ndarray, sorted_ids: np.ndarray) -> None:
    """Add to ``counts[i]`` the number of times ``i`` occurs in ``sorted_ids`` (sorted)."""
    if len(sorted_ids):
        starts = np.flatnonzero(np.diff(sorted_ids, prepend=sorted_ids[0] - 1))
        counts[sorted_ids[starts]] += np.diff(starts, append=len(sorted_ids))


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
        self._only: frozenset[str] | None = None  # the terms indexed, when not all

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
        table = _TokenTable(self.stopwords, self._stem)
        found = [table.doc(t) for t in texts]
        if None in found:
            self._build(table, None, texts)
        else:
            ids = [f.ids for f in found]
            self._build(table, (ids, np.fromiter(map(len, ids), np.int64, len(ids))), texts)

    def prepare_documents(
        self, documents: Mapping[str, str], questions: Sequence[str] | None = None
    ) -> None:
        """Tokenize each document of ``documents`` (id -> text) now, for the strategies of
        the run to come (:meth:`index_chunks` would otherwise do it on first use), keeping
        the terms of ``questions`` only when they are given."""
        table = self._table_for(questions)
        for text in documents.values():
            table.doc(text)

    def index_chunks(
        self,
        chunks: Sequence,
        documents: Mapping[str, str],
        questions: Sequence[str] | None = None,
    ) -> None:
        """Index ``[c.text for c in chunks]``, exactly as :meth:`index` would, but tokenize
        each document of ``documents`` (id -> text) once for all the strategies of a run;
        with ``questions``, index their terms only (the scores of those questions are the
        same; :meth:`rank` then refuses a question with another term)."""
        table = self._table_for(questions)
        found = _chunk_ids(table, chunks, documents)
        if found is None:
            self.index([c.text for c in chunks])
        else:
            self._build(table, found, None, chunks)

    def _table_for(self, questions: Sequence[str] | None) -> _TokenTable:
        """The run's token table: of ``questions``' terms only when they are given (a
        table of other terms is replaced)."""
        only = None
        if questions is not None:
            only = frozenset(t for q in self._query_terms(questions) for t in q)
        if self._table is None or self._table.only != only:
            self._table = _TokenTable(self.stopwords, self._stem, only)
        return self._table

    def _build(self, table, found, texts, chunks=()) -> None:
        """The index of texts whose indexed term ids (of ``table``) and lengths are
        ``found``; ``None``: built by bm25s itself, as are indexes with no token at all
        (which it builds or refuses)."""
        model = bm25s.BM25(k1=self.k1, b=self.b)
        self._only = None
        if found is None or not found[1].any():
            texts = list(texts) if texts is not None else [c.text for c in chunks]
            model.index(
                bm25s.tokenize(
                    texts, stopwords=self.stopwords, stemmer=self._stem, show_progress=False
                ),
                show_progress=False,
            )
            self._n = len(texts)
        else:
            ids, lengths = found
            counts = np.fromiter(map(len, ids), np.int64, len(ids))
            n_vocab = len(table.terms)
            model.scores = build_scores(
                np.concatenate(ids), lengths, n_vocab, self.k1, self.b, counts
            )
            model.nonoccurrence_array = None
            model.vocab_dict = {**table.terms, "": n_vocab}  # "": bm25s's empty token
            model.unique_token_ids_set = set(model.vocab_dict.values())
            self._n = len(ids)
            self._only = table.only
        self._model = model

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
        if self._only is not None:
            other = {t for q in queries for t in q} - self._only
            if other:
                raise RuntimeError(
                    f"this index holds only the terms of the questions it was built for, "
                    f"not {sorted(other)[:3]}: index again for these questions"
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

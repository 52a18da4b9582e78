"""Chunking strategies. Each chunk keeps exact character offsets into its document.

Offsets are Python string indices (code points), end exclusive, so
``doc.text[chunk.start:chunk.end] == chunk.text``. Words are the matches of ``\\S+``; a
chunk runs from its first word's start to its last word's end, so it never starts or ends
with whitespace, and every word of a document lies in some chunk.

Strategies (``STRATEGIES`` holds the named defaults, ``make_strategy`` builds others):

* ``whole``: one chunk per document;
* ``fixed``: consecutive windows of ``size`` words;
* ``overlap``: windows of ``size`` words starting every ``size - overlap`` words;
* ``sentence``: whole sentences packed greedily up to ``size`` words;
* ``recursive``: paragraphs, then lines, then sentences, then words, merged up to ``size``;
* ``parent-child``: ``recursive(parent_size)`` parents, ``sentence(child_size)`` children.

Sentences come from ``segmenter = "icu"`` (the default: Unicode's sentence rules, compiled),
``"syntok"`` (pure Python, the default before ICU) or ``"blingfire"`` (compiled).
Modules, each importing only those below it: :mod:`ragmeter.chunking.types` (``Chunk``,
``Chunking``), :mod:`ragmeter.chunking.doc_index` (words, sentence breaks, the run cache),
:mod:`ragmeter.chunking.frameworks` (your own chunker, other frameworks' splitters), then this one
(segmenting a corpus at once, the strategies). Every public name of the first two is
importable from here.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any, ClassVar

import numpy as np

from ragmeter.chunking import doc_index
from ragmeter.chunking import frameworks as chunkers
from ragmeter.chunking import segment_cache as _segment_cache
from ragmeter.chunking import segment_rounds as _segment_rounds
from ragmeter.chunking.doc_index import (
    _CACHE,
    _NO_INTS,
    DEFAULT_SEGMENTER,
    SEGMENTERS,
    UNNAMED_SEGMENTER,
    _DocIndex,
    _sentence_word_breaks,
    check_segmenter,
    sentence_spans,
    word_spans,
)
from ragmeter.chunking.segment_cache import SegmentCache
from ragmeter.chunking.types import Chunk, Chunking, HasText
from ragmeter.errors import InputError, did_you_mean

__all__ = [
    "BATCH_CHARS",
    "DEFAULT_SEGMENTER",
    "KINDS",
    "PARALLEL_MIN_CHARS",
    "ROUND_CHARS",
    "SEGMENTERS",
    "STRATEGIES",
    "UNNAMED_SEGMENTER",
    "Chunk",
    "Chunking",
    "FixedStrategy",
    "HasText",
    "OverlapStrategy",
    "ParentChildStrategy",
    "RecursiveStrategy",
    "SegmentCache",
    "SentenceStrategy",
    "Strategy",
    "WholeStrategy",
    "check_segmenter",
    "chunk_corpus",
    "make_strategy",
    "prepare_sentences",
    "run_scope",
    "sentence_spans",
    "word_spans",
]

# Below this many characters of paragraphs still to segment, worker processes cost more than
# they save (each one starts a Python interpreter and imports syntok).
PARALLEL_MIN_CHARS = 1_000_000
# Characters of paragraphs per worker task: small enough to balance two to a few dozen workers,
# large enough that sending the task costs nothing next to segmenting it.
BATCH_CHARS = 200_000
# With the segmentation cache on, documents are segmented in rounds of at least this many
# characters of new paragraphs, each round stored once done: a killed run keeps the rounds
# before it, and each costs the workers one wait for the slowest batch.
ROUND_CHARS = 32_000_000


@contextlib.contextmanager
def run_scope() -> Iterator[None]:
    """A run's scope: every document's sentence breaks stay in memory until it ends
    (:func:`ragmeter.chunking.doc_index.run_scope`), and sentences are read from and stored in the
    segmentation cache on disk (:mod:`ragmeter.chunking.segment_cache`)."""
    with doc_index.run_scope(), _segment_cache.run_cache():
        yield


def _batches(lengths: Sequence[int], batch_chars: int) -> list[tuple[int, int]]:
    """Consecutive ranges ``(first, end)`` of paragraphs of these lengths, each closed once
    it holds ``batch_chars`` characters or more (the last one with the rest)."""
    out: list[tuple[int, int]] = []
    first, size = 0, 0
    for i, n in enumerate(lengths):
        size += n
        if size >= batch_chars:
            out.append((first, i + 1))
            first, size = i + 1, 0
    if first < len(lengths):
        out.append((first, len(lengths)))
    return out


def prepare_sentences(
    texts: Iterable[str],
    engine: Any = None,
    progress: Callable[[int, int], None] | None = None,
    meanwhile: Callable[[], None] | None = None,
    segmenter: str = DEFAULT_SEGMENTER,
    cache: SegmentCache | None | bool = None,
) -> int:
    """Segment the sentences of every text not yet in the run cache, all in one pass.

    Each distinct paragraph is segmented once (syntok segments paragraphs independently, so
    this is exact), and when there are at least :data:`PARALLEL_MIN_CHARS` characters to
    segment the paragraphs are spread over worker processes (``engine``: a
    :mod:`ragmeter.engine` engine, the local one by default) in a fixed order, so the result
    never depends on the number of workers; ICU and blingfire (``segmenter``) always run in
    this process. ``meanwhile()``, if given, runs in this process while the workers segment (or
    first, when there are none). Returns the number of characters segmented.

    ``cache``: the segmentation cache on disk (:mod:`ragmeter.chunking.segment_cache`) to read
    texts' sentences from and store new ones in, round by round (:data:`ROUND_CHARS`);
    ``None``: the run's own (:func:`run_scope`; none outside a run); ``False``: none.
    """
    from ragmeter import engine as engines

    disk = _segment_cache.active() if cache is None else (cache or None)
    texts = [t for t in dict.fromkeys(texts) if not _CACHE.has(t, segmenter)]
    if disk is not None and texts:
        found = disk.get(texts, segmenter)
        for i, firsts in found.items():
            _CACHE.put(texts[i], _breaks(texts[i], firsts), segmenter)
        texts = [t for i, t in enumerate(texts) if i not in found]
    if not texts:
        if meanwhile is not None:
            meanwhile()
        return 0
    eng = engine if engine is not None else engines.default_engine()
    parts = _segment_rounds.new_parts()
    starts, counts = _NO_INTS, _NO_INTS  # every paragraph segmented so far: its sentences
    chars = steps = 0
    for group in _segment_rounds.rounds(texts, parts, ROUND_CHARS if disk is not None else None):
        lo, hi = len(counts), len(parts[1])
        chars += sum(parts[3][lo:hi])
        spans = [(lo + a, lo + b) for a, b in _batches(parts[3][lo:hi], BATCH_CHARS)]
        parallel = (
            segmenter == "syntok"
            and sum(parts[3][lo:hi]) >= PARALLEL_MIN_CHARS
            and len(spans) > 1
            and eng.workers > 1
        )
        step = None if progress is None else (lambda d, t, b=steps: progress(b + d, b + t))
        found = _segment_rounds.segment(parts, spans, parallel, eng, segmenter, step, meanwhile)
        meanwhile, steps = None, steps + len(spans)
        starts, counts = np.concatenate((starts, found[0])), np.concatenate((counts, found[1]))
        stored = list(_segment_rounds.sentence_starts(group, starts, counts))
        for text, firsts in stored:
            _CACHE.put(text, _breaks(text, firsts), segmenter)
        if disk is not None:
            disk.put(stored, segmenter)  # one transaction: a killed run keeps earlier rounds
    return chars


def _breaks(text: str, firsts: np.ndarray) -> np.ndarray:
    """The word breaks of the sentences of ``text`` that start at ``firsts``."""
    idx = _DocIndex(text)
    return _sentence_word_breaks(idx.starts, idx.ends, firsts)


Span = tuple[int, int]  # a half-open range of word indices


def _make_chunks(
    doc_id: str, idx: _DocIndex, spans: Iterable[Span], parent: int | None = None
) -> list[Chunk]:
    spans = list(spans)
    if not spans:
        return []
    bounds = np.asarray(spans, dtype=np.int64)
    s_list = idx.starts[bounds[:, 0]].tolist()
    e_list = idx.ends[bounds[:, 1] - 1].tolist()
    text = idx.text
    span = Chunk.span
    return [span(doc_id, text, s, e, parent) for s, e in zip(s_list, e_list, strict=True)]


def _windows(lo: int, hi: int, size: int) -> list[Span]:
    return [(a, min(a + size, hi)) for a in range(lo, hi, size)]


def _breaks_within(breaks: np.ndarray, lo: int, hi: int) -> list[int]:
    """The breaks strictly between word ``lo`` and word ``hi``."""
    i = int(np.searchsorted(breaks, lo, side="right"))
    j = int(np.searchsorted(breaks, hi, side="left"))
    return breaks[i:j].tolist()


def _pack(bounds: Sequence[int], size: int) -> list[Span]:
    """Pack the units ``bounds[i]:bounds[i+1]`` greedily into spans of at most ``size``
    words; a unit longer than ``size`` becomes ``size``-word windows of its own."""
    out: list[Span] = []
    cur_lo = cur_hi = -1
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):
        if b - a > size:
            if cur_lo >= 0:
                out.append((cur_lo, cur_hi))
                cur_lo = -1
            out.extend(_windows(a, b, size))
        elif cur_lo >= 0 and b - cur_lo <= size:
            cur_hi = b
        else:
            if cur_lo >= 0:
                out.append((cur_lo, cur_hi))
            cur_lo, cur_hi = a, b
    if cur_lo >= 0:
        out.append((cur_lo, cur_hi))
    return out


def _recursive_spans(idx: _DocIndex, lo: int, hi: int, size: int, level: int = 0) -> list[Span]:
    """Split words ``lo:hi`` at paragraphs, then lines, then sentences, then words."""
    if hi - lo <= size:
        return [(lo, hi)]
    inner: list[int] = []
    while level < 3:
        if level == 0:
            breaks = idx.paragraph_breaks
        elif level == 1:
            breaks = idx.line_breaks
        else:
            breaks = idx.sentence_breaks
        inner = _breaks_within(breaks, lo, hi)
        if inner:
            break
        level += 1
    if level == 3:
        return _windows(lo, hi, size)
    bounds = [lo, *inner, hi]
    out: list[Span] = []
    cur_lo = cur_hi = -1
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):
        if b - a > size:
            if cur_lo >= 0:
                out.append((cur_lo, cur_hi))
                cur_lo = -1
            out.extend(_recursive_spans(idx, a, b, size, level + 1))
        elif cur_lo >= 0 and b - cur_lo <= size:
            cur_hi = b
        else:
            if cur_lo >= 0:
                out.append((cur_lo, cur_hi))
            cur_lo, cur_hi = a, b
    if cur_lo >= 0:
        out.append((cur_lo, cur_hi))
    return out


# --------------------------------------------------------------------------- strategies


def _check_name(name: object) -> None:
    if not isinstance(name, str) or not name.strip():
        raise InputError(f"chunking strategy name must be a non-empty string, got {name!r}")


def _check_size(name: str, param: str, value: object, minimum: int = 1) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise InputError(
            f"chunking strategy {name!r}: {param} must be a whole number >= {minimum}, "
            f"got {value!r}"
        )


@dataclass(frozen=True)
class _Base:
    kind: ClassVar[str]
    name: str

    def describe(self) -> dict[str, Any]:
        """``{"name": ..., "kind": ..., **parameters}``; ``make_strategy(**d)`` rebuilds it.

        syntok (:data:`UNNAMED_SEGMENTER`) is left out, so results made before the segmenter
        was a choice keep their description; every other segmenter, the default ICU
        included, is named. A description without a segmenter is therefore syntok's: rebuild
        it with ``make_strategy(**{"segmenter": UNNAMED_SEGMENTER, **d})``."""
        d = asdict(self)
        if d.get("segmenter") == UNNAMED_SEGMENTER:
            del d["segmenter"]
        return {"name": d.pop("name"), "kind": self.kind, **d}


@dataclass(frozen=True)
class WholeStrategy(_Base):
    """One chunk per document: its full text, leading and trailing whitespace
    included, so that a span over the whole document lies inside it (none for an
    empty or whitespace-only document)."""

    kind: ClassVar[str] = "whole"
    name: str = "whole"

    def __post_init__(self) -> None:
        _check_name(self.name)

    def split(self, doc_id: str, text: str) -> list[Chunk]:
        if not text.strip():
            return []
        return [Chunk.span(doc_id, text, 0, len(text))]


@dataclass(frozen=True)
class FixedStrategy(_Base):
    """Consecutive windows of ``size`` words, no overlap."""

    kind: ClassVar[str] = "fixed"
    name: str = "fixed"
    size: int = 200

    def __post_init__(self) -> None:
        _check_name(self.name)
        _check_size(self.name, "size", self.size)

    def split(self, doc_id: str, text: str) -> list[Chunk]:
        idx = _CACHE.get(text)
        return _make_chunks(doc_id, idx, _windows(0, idx.n, self.size))


@dataclass(frozen=True)
class OverlapStrategy(_Base):
    """Windows of ``size`` words starting every ``size - overlap`` words.

    The last window may be shorter; it always ends at the last word, and no window lies
    wholly inside the one before it, so consecutive windows share exactly ``overlap`` words.
    """

    kind: ClassVar[str] = "overlap"
    name: str = "overlap"
    size: int = 200
    overlap: int = 100

    def __post_init__(self) -> None:
        _check_name(self.name)
        _check_size(self.name, "size", self.size)
        _check_size(self.name, "overlap", self.overlap, minimum=0)
        if self.overlap >= self.size:
            raise InputError(
                f"chunking strategy {self.name!r}: overlap ({self.overlap}) must be less "
                f"than size ({self.size})"
            )

    def split(self, doc_id: str, text: str) -> list[Chunk]:
        idx = _CACHE.get(text)
        n, step = idx.n, self.size - self.overlap
        spans: list[Span] = []
        a = 0
        while a < n:
            b = min(a + self.size, n)
            spans.append((a, b))
            if b == n:
                break
            a += step
        return _make_chunks(doc_id, idx, spans)


@dataclass(frozen=True)
class SentenceStrategy(_Base):
    """Whole sentences (of ``segmenter``: ICU, syntok or blingfire) packed greedily up to ``size``
    words.

    A sentence longer than ``size`` words is cut into ``size``-word windows of its own.
    """

    kind: ClassVar[str] = "sentence"
    name: str = "sentence"
    size: int = 200
    segmenter: str = DEFAULT_SEGMENTER

    def __post_init__(self) -> None:
        _check_name(self.name)
        _check_size(self.name, "size", self.size)
        check_segmenter(self.segmenter, f"chunking strategy {self.name!r}")

    def split(self, doc_id: str, text: str) -> list[Chunk]:
        idx = _CACHE.get(text, self.segmenter)
        if idx.n == 0:
            return []
        bounds = [0, *idx.sentence_breaks.tolist(), idx.n]
        return _make_chunks(doc_id, idx, _pack(bounds, self.size))


@dataclass(frozen=True)
class RecursiveStrategy(_Base):
    """Split at the coarsest boundary that gives pieces of at most ``size`` words.

    Boundaries, coarsest first: paragraphs (a blank or whitespace-only line between them),
    lines (ended by ``\\n``, ``\\r\\n`` or ``\\r``), sentences (of ``segmenter``), words.
    Oversize pieces are split again at the next finer boundary; adjacent pieces of one level
    are then merged greedily while the merged piece stays within ``size`` words.
    """

    kind: ClassVar[str] = "recursive"
    name: str = "recursive"
    size: int = 200
    segmenter: str = DEFAULT_SEGMENTER

    def __post_init__(self) -> None:
        _check_name(self.name)
        _check_size(self.name, "size", self.size)
        check_segmenter(self.segmenter, f"chunking strategy {self.name!r}")

    def split(self, doc_id: str, text: str) -> list[Chunk]:
        idx = _CACHE.get(text, self.segmenter)
        if idx.n == 0:
            return []
        return _make_chunks(doc_id, idx, _recursive_spans(idx, 0, idx.n, self.size))


@dataclass(frozen=True)
class ParentChildStrategy(_Base):
    """Children are matched, parents are returned.

    Parents are the ``recursive(parent_size)`` chunks. Children are the
    ``sentence(child_size)`` chunks of each parent: the document's sentences, cut at the
    parent's edges, packed greedily within the parent. Both use ``segmenter``'s sentences.
    """

    kind: ClassVar[str] = "parent-child"
    name: str = "parent-child"
    parent_size: int = 400
    child_size: int = 100
    segmenter: str = DEFAULT_SEGMENTER

    def __post_init__(self) -> None:
        _check_name(self.name)
        _check_size(self.name, "parent_size", self.parent_size)
        _check_size(self.name, "child_size", self.child_size)
        check_segmenter(self.segmenter, f"chunking strategy {self.name!r}")

    def split(self, doc_id: str, text: str) -> tuple[list[Chunk], list[Chunk]]:
        """``(children, parents)``; each child's ``parent`` indexes the returned parents."""
        return self._split(doc_id, text, 0)

    def _split(self, doc_id: str, text: str, first_parent: int) -> tuple[list[Chunk], list[Chunk]]:
        idx = _CACHE.get(text, self.segmenter)
        if idx.n == 0:
            return [], []
        parent_spans = _recursive_spans(idx, 0, idx.n, self.parent_size)
        children: list[Chunk] = []
        sentence_breaks = idx.sentence_breaks
        for i, (lo, hi) in enumerate(parent_spans):
            bounds = [lo, *_breaks_within(sentence_breaks, lo, hi), hi]
            children += _make_chunks(
                doc_id, idx, _pack(bounds, self.child_size), parent=first_parent + i
            )
        return children, _make_chunks(doc_id, idx, parent_spans)


Strategy = (
    WholeStrategy
    | FixedStrategy
    | OverlapStrategy
    | SentenceStrategy
    | RecursiveStrategy
    | ParentChildStrategy
)

KINDS: dict[str, type[Strategy]] = {
    cls.kind: cls
    for cls in (
        WholeStrategy,
        FixedStrategy,
        OverlapStrategy,
        SentenceStrategy,
        RecursiveStrategy,
        ParentChildStrategy,
    )
}

STRATEGIES: dict[str, Strategy] = {
    "whole": WholeStrategy(),
    "fixed": FixedStrategy(),
    "overlap": OverlapStrategy(),
    "sentence": SentenceStrategy(),
    "recursive": RecursiveStrategy(),
    "parent-400": ParentChildStrategy("parent-400", parent_size=400, child_size=100),
    "parent-200": ParentChildStrategy("parent-200", parent_size=200, child_size=50),
}


def make_strategy(name: str, *, defined: Sequence[str] = (), **params: Any) -> Strategy:
    """A chunking strategy by name, with optional parameters.

    ``name`` is a registered strategy (``STRATEGIES``; parameters, if any, override its own)
    or, with ``kind=...`` (or when ``name`` is itself a kind), a new strategy of that kind
    called ``name``: ``make_strategy("fixed-300", kind="fixed", size=300)``.
    ``defined``: the names a config defines, offered too when ``name`` is unknown.
    Raises :class:`InputError` for an unknown name or kind and for a bad parameter.
    """
    _check_name(name)
    kind = params.pop("kind", None)
    if kind is None and name in STRATEGIES:
        base = STRATEGIES[name]
        kind, params = base.kind, {**base.describe(), **params}
        params.pop("kind")
        params.pop("name")
    elif kind is None:
        kind = name
    if kind not in KINDS:
        if kind in chunkers.KINDS:  # your own function, other frameworks' splitters
            return chunkers.make_strategy(name, kind, **params)  # type: ignore[return-value]
        kinds = [*KINDS, *chunkers.KINDS]
        if kind != name:  # the kind is what is wrong, not the strategy's own name
            raise InputError(
                f"chunking strategy {name!r}: unknown kind {kind!r}{did_you_mean(kind, kinds)}"
                f"; valid kinds: {', '.join(kinds)}"
            )
        names = [*defined, *STRATEGIES]
        raise InputError(
            f"unknown chunking strategy {name!r}{did_you_mean(name, [*names, *kinds])}"
            f"; valid names: {', '.join(names)}; valid kinds: {', '.join(kinds)}"
        )
    cls = KINDS[kind]
    allowed = [f.name for f in fields(cls) if f.name != "name"]
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        raise InputError(
            f"chunking strategy {name!r} (kind {kind!r}): unknown parameter(s) "
            f"{', '.join(unknown)}; valid parameters: {', '.join(allowed) or 'none'}"
        )
    return cls(name=name, **params)


def chunk_corpus(docs: Iterable[HasText], strategy: Strategy | str) -> Chunking:
    """Chunk every document, in document order and then by position.

    For a parent-child strategy ``parents`` is set and each chunk's ``parent`` indexes it.
    """
    if isinstance(strategy, str):
        strategy = make_strategy(strategy)
    docs = list(docs)
    if isinstance(strategy, SentenceStrategy | ParentChildStrategy):
        prepare_sentences((doc.text for doc in docs), segmenter=strategy.segmenter)
    chunks: list[Chunk] = []
    if isinstance(strategy, ParentChildStrategy):
        parents: list[Chunk] = []
        for doc in docs:
            kids, ps = strategy._split(doc.id, doc.text, len(parents))
            chunks += kids
            parents += ps
        return Chunking(strategy.name, chunks, parents)
    for doc in docs:
        chunks += strategy.split(doc.id, doc.text)
    return Chunking(strategy.name, chunks)

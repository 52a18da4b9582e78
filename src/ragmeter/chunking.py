"""Chunking strategies. Each chunk keeps exact character offsets into its document.

Offsets are Python string indices (code points), end exclusive, so
``doc.text[chunk.start:chunk.end] == chunk.text``. Words are the matches of ``\\S+``; a
chunk runs from its first word's start to its last word's end, so it never starts or ends
with whitespace, and every word of a document lies in some chunk.

Strategies (``STRATEGIES`` holds the named defaults, ``make_strategy`` builds others):

* ``whole``: one chunk per document;
* ``fixed``: consecutive windows of ``size`` words;
* ``overlap``: windows of ``size`` words starting every ``size - overlap`` words;
* ``sentence``: whole sentences (syntok) packed greedily up to ``size`` words;
* ``recursive``: paragraphs, then lines, then sentences, then words, merged up to ``size``;
* ``parent-child``: ``recursive(parent_size)`` parents, ``sentence(child_size)`` children.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any, ClassVar, Protocol

import numpy as np
from syntok import segmenter
from syntok.tokenizer import Tokenizer

from ragmeter.errors import InputError


@dataclass(frozen=True, slots=True)
class Chunk:
    """A span of one document: ``doc.text[start:end] == text``."""

    doc_id: str
    start: int
    end: int
    text: str
    parent: int | None = None  # index into Chunking.parents (parent-child strategies)


@dataclass(frozen=True)
class Chunking:
    """What a strategy made of a corpus.

    ``chunks`` are what the retriever indexes and matches. ``parents`` is set for
    parent-child strategies: then the items returned to the reader are the parents,
    and ``chunk.parent`` says which parent each chunk belongs to.
    """

    strategy: str
    chunks: list[Chunk]
    parents: list[Chunk] | None = None

    @property
    def items(self) -> list[Chunk]:
        """What a search returns: parents when present, else the chunks."""
        return self.parents if self.parents is not None else self.chunks


# --------------------------------------------------------------------------- documents


class HasText(Protocol):
    """Anything with an ``id`` and a ``text`` (``ragmeter.corpus.Document`` is one)."""

    @property
    def id(self) -> str: ...

    @property
    def text(self) -> str: ...


# --------------------------------------------------------------------------- word index

# Every code point for which ``str.isspace()`` is true: exactly what ``\s`` matches in ``re``.
_WHITESPACE = (
    0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x1C, 0x1D, 0x1E, 0x1F, 0x20, 0x85, 0xA0, 0x1680,
    0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200A,
    0x2028, 0x2029, 0x202F, 0x205F, 0x3000,
)  # fmt: skip
_WS_LIMIT = 0x3001  # first code point above the last whitespace one
_WS_TABLE = np.zeros(_WS_LIMIT + 1, dtype=bool)
_WS_TABLE[list(_WHITESPACE)] = True

_NO_INTS = np.zeros(0, dtype=np.int64)


def word_spans(text: str) -> tuple[np.ndarray, np.ndarray]:
    """Start and end offsets of the words of ``text``: the matches of ``\\S+``.

    Computed with numpy over the code points, so it is one vectorised pass.
    """
    if not text:
        return _NO_INTS, _NO_INTS
    cps = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    solid = ~_WS_TABLE[np.minimum(cps, _WS_LIMIT)]
    edges = np.diff(solid.view(np.int8), prepend=np.int8(0), append=np.int8(0))
    return np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)


_TOKENIZER = Tokenizer(replace_not_contraction=False)


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Sentences found by syntok, as ``(start, end)`` offsets into ``text``.

    A sentence runs from its first token's offset to its last token's end. Paragraphs are
    tokenized one at a time (as ``syntok.segmenter.analyze`` does, but without padding each
    paragraph to its offset, which is quadratic in the number of paragraphs). syntok works on
    ``str`` directly, so its offsets are code-point indices into ``text``.
    """
    spans: list[tuple[int, int]] = []
    for offset, paragraph in segmenter.preprocess_with_offsets(text):
        for sentence in segmenter.segment(_TOKENIZER.tokenize(paragraph)):
            toks = [t for t in sentence if t.value]
            if toks:
                last = toks[-1]
                spans.append((offset + toks[0].offset, offset + last.offset + len(last.value)))
    return spans


class _DocIndex:
    """Words of one text and, computed on first use, its line, paragraph and sentence breaks.

    A *break* is the index of a word that begins a new unit (never 0).
    """

    __slots__ = ("text", "starts", "ends", "start_list", "end_list", "_lines", "_sentences")

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts, self.ends = word_spans(text)
        self.start_list: list[int] = self.starts.tolist()
        self.end_list: list[int] = self.ends.tolist()
        self._lines: tuple[np.ndarray, np.ndarray] | None = None
        self._sentences: np.ndarray | None = None

    @property
    def n(self) -> int:
        return len(self.start_list)

    def _line_and_paragraph_breaks(self) -> tuple[np.ndarray, np.ndarray]:
        if self._lines is None:
            if self.n < 2:
                self._lines = (_NO_INTS, _NO_INTS)
            else:
                # Line terminators: "\n", and "\r" not followed by "\n".
                cps = np.frombuffer(self.text.encode("utf-32-le", "surrogatepass"), np.uint32)
                cr = cps == 13
                cr[:-1] &= cps[1:] != 10
                term = (cps == 10) | cr
                cum = np.concatenate(([0], np.cumsum(term)))
                per_gap = cum[self.starts[1:]] - cum[self.ends[:-1]]  # terminators before word i+1
                self._lines = (
                    np.flatnonzero(per_gap >= 1) + 1,  # lines
                    np.flatnonzero(per_gap >= 2) + 1,  # paragraphs: a blank line between
                )
        return self._lines

    @property
    def line_breaks(self) -> np.ndarray:
        return self._line_and_paragraph_breaks()[0]

    @property
    def paragraph_breaks(self) -> np.ndarray:
        return self._line_and_paragraph_breaks()[1]

    @property
    def sentence_breaks(self) -> np.ndarray:
        """Words that begin a syntok sentence.

        A sentence start that falls inside a word (syntok splits at a few characters that are
        not whitespace, such as the zero-width space) is dropped, so sentences are always
        whole words and together cover every word.
        """
        if self._sentences is None:
            if self.n < 2:
                self._sentences = _NO_INTS
            else:
                first = np.array([s for s, _ in sentence_spans(self.text)], dtype=np.int64)
                k = np.searchsorted(self.starts, first, side="left")
                inside = (k > 0) & (first < self.ends[np.maximum(k - 1, 0)])
                k = k[~inside & (k > 0) & (k < self.n)]
                self._sentences = np.unique(k)
        return self._sentences


class _IndexCache:
    """The word indexes of recently chunked texts, so that several strategies share one pass
    (and one sentence segmentation) per document. Bounded by total characters held."""

    def __init__(self, max_chars: int = 64_000_000) -> None:
        self.max_chars = max_chars
        self._items: OrderedDict[str, _DocIndex] = OrderedDict()
        self._chars = 0

    def get(self, text: str) -> _DocIndex:
        idx = self._items.get(text)
        if idx is not None:
            self._items.move_to_end(text)
            return idx
        idx = _DocIndex(text)
        if len(text) <= self.max_chars:
            self._items[text] = idx
            self._chars += len(text)
            while self._chars > self.max_chars:
                old, _ = self._items.popitem(last=False)
                self._chars -= len(old)
        return idx

    def clear(self) -> None:
        self._items.clear()
        self._chars = 0


_CACHE = _IndexCache()

Span = tuple[int, int]  # a half-open range of word indices


def _make_chunks(
    doc_id: str, idx: _DocIndex, spans: Iterable[Span], parent: int | None = None
) -> list[Chunk]:
    starts, ends, text = idx.start_list, idx.end_list, idx.text
    out = []
    for a, b in spans:
        s, e = starts[a], ends[b - 1]
        out.append(Chunk(doc_id, s, e, text[s:e], parent))
    return out


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
        """``{"name": ..., "kind": ..., **parameters}``; ``make_strategy(**d)`` rebuilds it."""
        d = asdict(self)
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
        return [Chunk(doc_id, 0, len(text), text)]


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
    """Whole sentences (syntok) packed greedily up to ``size`` words.

    A sentence longer than ``size`` words is cut into ``size``-word windows of its own.
    """

    kind: ClassVar[str] = "sentence"
    name: str = "sentence"
    size: int = 200

    def __post_init__(self) -> None:
        _check_name(self.name)
        _check_size(self.name, "size", self.size)

    def split(self, doc_id: str, text: str) -> list[Chunk]:
        idx = _CACHE.get(text)
        if idx.n == 0:
            return []
        bounds = [0, *idx.sentence_breaks.tolist(), idx.n]
        return _make_chunks(doc_id, idx, _pack(bounds, self.size))


@dataclass(frozen=True)
class RecursiveStrategy(_Base):
    """Split at the coarsest boundary that gives pieces of at most ``size`` words.

    Boundaries, coarsest first: paragraphs (a blank or whitespace-only line between them),
    lines (ended by ``\\n``, ``\\r\\n`` or ``\\r``), sentences (syntok), words.
    Oversize pieces are split again at the next finer boundary; adjacent pieces of one level
    are then merged greedily while the merged piece stays within ``size`` words.
    """

    kind: ClassVar[str] = "recursive"
    name: str = "recursive"
    size: int = 200

    def __post_init__(self) -> None:
        _check_name(self.name)
        _check_size(self.name, "size", self.size)

    def split(self, doc_id: str, text: str) -> list[Chunk]:
        idx = _CACHE.get(text)
        if idx.n == 0:
            return []
        return _make_chunks(doc_id, idx, _recursive_spans(idx, 0, idx.n, self.size))


@dataclass(frozen=True)
class ParentChildStrategy(_Base):
    """Children are matched, parents are returned.

    Parents are the ``recursive(parent_size)`` chunks. Children are the
    ``sentence(child_size)`` chunks of each parent: the document's sentences, cut at the
    parent's edges, packed greedily within the parent.
    """

    kind: ClassVar[str] = "parent-child"
    name: str = "parent-child"
    parent_size: int = 400
    child_size: int = 100

    def __post_init__(self) -> None:
        _check_name(self.name)
        _check_size(self.name, "parent_size", self.parent_size)
        _check_size(self.name, "child_size", self.child_size)

    def split(self, doc_id: str, text: str) -> tuple[list[Chunk], list[Chunk]]:
        """``(children, parents)``; each child's ``parent`` indexes the returned parents."""
        return self._split(doc_id, text, 0)

    def _split(self, doc_id: str, text: str, first_parent: int) -> tuple[list[Chunk], list[Chunk]]:
        idx = _CACHE.get(text)
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


def make_strategy(name: str, **params: Any) -> Strategy:
    """A chunking strategy by name, with optional parameters.

    ``name`` is a registered strategy (``STRATEGIES``; parameters, if any, override its own)
    or, with ``kind=...`` (or when ``name`` is itself a kind), a new strategy of that kind
    called ``name``: ``make_strategy("fixed-300", kind="fixed", size=300)``.
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
        raise InputError(
            f"unknown chunking strategy {name!r}"
            + (f" (kind {kind!r})" if kind != name else "")
            + f"; valid names: {', '.join(STRATEGIES)}; valid kinds: {', '.join(KINDS)}"
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

"""The words of a text and its line, paragraph and sentence breaks, with the run cache.

Words are the matches of ``\\S+``, found with numpy in one pass; a *break* is the index of
a word that begins a new line, paragraph or sentence. Sentences come from a *segmenter*
(:data:`SEGMENTERS`): ICU (the default: Unicode's sentence rules, compiled), syntok (pure
Python; the default before ICU, kept to reproduce earlier chunks) or blingfire (compiled;
``pip install 'ragmeter[segment]'``). Their breaks are the costly part, kept
per segmenter and document for a run by :data:`_CACHE`. Every public name here is
importable from :mod:`ragmeter.chunking.strategies` too.
"""

from __future__ import annotations

import contextlib
from collections import OrderedDict
from collections.abc import Iterator

import numpy as np

from ragmeter.chunking import segment as _segment
from ragmeter.defaults import DEFAULTS, EARLIER
from ragmeter.errors import InputError, MissingExtra

SEGMENTERS = _segment.SEGMENTERS
DEFAULT_SEGMENTER = DEFAULTS.segmenter
# The segmenter of every result made before there was a choice: a strategy description
# without a segmenter means this one.
UNNAMED_SEGMENTER = EARLIER.segmenter

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


def check_segmenter(segmenter: object, where: str) -> str:
    """``segmenter`` if it is one of :data:`SEGMENTERS` and its package is installed: an
    unknown name is an :class:`InputError`, a missing package a :class:`MissingExtra`,
    each naming ``where`` (a strategy, say)."""
    if segmenter not in SEGMENTERS:
        raise InputError(
            f"{where}: unknown segmenter {segmenter!r}; valid: {', '.join(SEGMENTERS)}"
        )
    if segmenter == "icu":
        try:
            _segment.icu_sentence_breaker()
        except ImportError as exc:
            raise MissingExtra(
                f"{where}: segmenter 'icu' needs icu4py: pip install icu4py "
                f"(or segmenter = 'syntok', pure Python); {type(exc).__name__}: {exc}"
            ) from None
    if segmenter == "blingfire":
        try:
            _segment.blingfire_library()
        except (ImportError, OSError) as exc:  # not installed, or no binary for this machine
            raise MissingExtra(
                f"{where}: segmenter 'blingfire' needs blingfire: pip install blingfire "
                f"(or pip install 'ragmeter[segment]'); {type(exc).__name__}: {exc}"
            ) from None
    return segmenter  # type: ignore[return-value]


def sentence_spans(text: str, segmenter: str = DEFAULT_SEGMENTER) -> list[tuple[int, int]]:
    """Sentences found by ``segmenter`` (ICU by default), as ``(start, end)`` offsets
    into ``text`` (code-point indices).

    A syntok sentence runs from its first token's offset to its last token's end; an ICU
    or blingfire one is that library's span without the whitespace around it. Paragraphs
    (syntok's: blank lines between) are segmented one at a time (as
    ``syntok.segmenter.analyze`` does, but without padding each paragraph to its offset,
    which is quadratic in the number of paragraphs).
    """
    spans: list[tuple[int, int]] = []
    for offset, paragraph in _segment.paragraphs(text):
        flat = _segment.paragraph_sentences(paragraph, segmenter)
        spans.extend((offset + flat[i], offset + flat[i + 1]) for i in range(0, len(flat), 2))
    return spans


def _sentence_word_breaks(starts: np.ndarray, ends: np.ndarray, first: np.ndarray) -> np.ndarray:
    """Word indices (never 0) at which the sentences starting at offsets ``first`` begin.

    A sentence start that falls inside a word (syntok splits at a few characters that are
    not whitespace, such as the zero-width space) is dropped, so sentences are always whole
    words and together cover every word.
    """
    n = len(starts)
    if n < 2 or len(first) == 0:
        return _NO_INTS
    k = np.searchsorted(starts, first, side="left")
    inside = (k > 0) & (first < ends[np.maximum(k - 1, 0)])
    k = k[~inside & (k > 0) & (k < n)]
    return np.unique(k)


class _DocIndex:
    """Words of one text and, computed on first use, its line, paragraph and sentence breaks
    (those of ``segmenter``).

    A *break* is the index of a word that begins a new unit (never 0). Only the sentence
    breaks are costly (syntok runs in pure Python); :class:`_IndexCache` keeps those for
    the run, everything else is recomputed in one vectorised pass when needed.
    """

    __slots__ = ("text", "segmenter", "starts", "ends", "_lines", "_sentences")

    def __init__(
        self,
        text: str,
        sentences: np.ndarray | None = None,
        segmenter: str = DEFAULT_SEGMENTER,
    ) -> None:
        self.text = text
        self.segmenter = segmenter
        self.starts, self.ends = word_spans(text)
        self._lines: tuple[np.ndarray, np.ndarray] | None = None
        self._sentences = sentences

    @property
    def n(self) -> int:
        return len(self.starts)

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
        """Words that begin a sentence (see :func:`_sentence_word_breaks`)."""
        if self._sentences is None:
            self._sentences = _CACHE.sentence_breaks(self.text, self, self.segmenter)
        return self._sentences


class _IndexCache:
    """The sentence breaks of recently chunked texts, so that every strategy of a run shares
    one sentence segmentation per document and segmenter.

    Only the breaks are kept (a few bytes per sentence), not the word offsets, which are
    recomputed in one vectorised pass per strategy: holding them for a whole corpus would
    cost several times the corpus. Entries are keyed by the text itself and bounded by the
    total characters of the texts they refer to (the texts belong to the caller's documents,
    so a key costs no extra memory while those live; the bound keeps the cache from holding
    on to documents the caller has dropped). Within :meth:`run` nothing is evicted, however
    large the corpus: every strategy of the run needs every document's breaks.
    """

    def __init__(self, max_chars: int = 256_000_000) -> None:
        self.max_chars = max_chars
        self._items: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()  # (segmenter, text)
        self._chars = 0
        self._runs = 0  # runs in progress: the bound waits until the last one ends

    @contextlib.contextmanager
    def run(self) -> Iterator[None]:
        """A run's scope: entries stay until it ends, then the bound applies again."""
        self._runs += 1
        try:
            yield
        finally:
            self._runs -= 1
            self._evict()

    def _evict(self) -> None:
        while not self._runs and self._chars > self.max_chars:
            (_, old), _ = self._items.popitem(last=False)
            self._chars -= len(old)

    def get(self, text: str, segmenter: str = DEFAULT_SEGMENTER) -> _DocIndex:
        """The word index of ``text``, with its sentence breaks when they are known."""
        key = (segmenter, text)
        breaks = self._items.get(key)
        if breaks is not None:
            self._items.move_to_end(key)
        return _DocIndex(text, breaks, segmenter)

    def has(self, text: str, segmenter: str = DEFAULT_SEGMENTER) -> bool:
        return (segmenter, text) in self._items

    def put(self, text: str, breaks: np.ndarray, segmenter: str = DEFAULT_SEGMENTER) -> None:
        if len(text) > self.max_chars and not self._runs:
            return
        key = (segmenter, text)
        if key not in self._items:
            self._chars += len(text)
        self._items[key] = breaks
        self._items.move_to_end(key)
        self._evict()

    def sentence_breaks(
        self, text: str, idx: _DocIndex | None = None, segmenter: str = DEFAULT_SEGMENTER
    ) -> np.ndarray:
        breaks = self._items.get((segmenter, text))
        if breaks is None:
            idx = idx if idx is not None else _DocIndex(text)
            if idx.n < 2:
                breaks = _NO_INTS
            else:
                spans = sentence_spans(text, segmenter)
                first = np.fromiter((s for s, _ in spans), dtype=np.int64, count=len(spans))
                breaks = _sentence_word_breaks(idx.starts, idx.ends, first)
            self.put(text, breaks, segmenter)
        return breaks

    def clear(self) -> None:
        self._items.clear()
        self._chars = 0


_CACHE = _IndexCache()


def run_scope() -> contextlib.AbstractContextManager[None]:
    """Keep every document's sentence breaks for the whole of a run (see :class:`_IndexCache`)."""
    return _CACHE.run()

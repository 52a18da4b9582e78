"""Sentence segmentation of single paragraphs, light enough for worker processes.

syntok segments each paragraph on its own (``segmenter.analyze`` splits the text at blank
lines first, then tokenizes and segments every paragraph separately), so a paragraph's
sentences do not depend on the text around it. That makes two exact speed-ups possible: a
paragraph that occurs twice is segmented once, and paragraphs can be segmented in any process
in any order. ICU and blingfire (both compiled) segment the same paragraphs, in this
process: they are fast enough that workers would cost more than they save. This module
imports only syntok (and ICU, blingfire or numpy when asked for) so that a worker process
starts quickly.
"""

from __future__ import annotations

import ctypes
import itertools
import re
from array import array
from collections.abc import Iterable, Iterator, Sequence

from syntok import segmenter
from syntok.tokenizer import Tokenizer

from ragmeter.defaults import DEFAULTS

SEGMENTERS = ("icu", "syntok", "blingfire")
PARALLEL_SEGMENTER = "syntok"
"""The one segmenter worth worker processes (pure Python): the workers' tasks run it; ICU
and blingfire (compiled) segment in the run's process."""

_TOKENIZER = Tokenizer(replace_not_contraction=False)
_LONE_CR = re.compile(r"\r(?!\n)")
# What Unicode's sentence rules (UAX #29) read as the end of a paragraph: LF, CR and the
# Sep class (NEL, LINE SEPARATOR, PARAGRAPH SEPARATOR). Inside one of syntok's paragraphs
# ICU reads each as a space (one character for one, so offsets hold).
_LINE_ENDS_AS_SPACES = str.maketrans("\n\r\x85\u2028\u2029", "     ")
_SURROGATE = re.compile("[\ud800-\udfff]")
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


def paragraphs(text: str) -> list[tuple[int, str]]:
    """``(offset, paragraph)`` pairs as syntok splits ``text``; each paragraph is
    ``source(text)[offset : offset + len(paragraph)]``.

    syntok breaks paragraphs at blank lines of ``\n`` or ``\r\n`` but not of a lone
    ``\r`` (old Mac line endings); such a ``\r`` is read as ``\n`` first. The two have
    the same length, so every offset still points into ``text`` (callers take the text of
    a sentence from ``text``, never from the paragraph returned).
    """
    return source_paragraphs(source(text))


def source_paragraphs(source_text: str) -> list[tuple[int, str]]:
    """:func:`paragraphs` of a text already read by :func:`source`."""
    return segmenter.preprocess_with_offsets(source_text)


def source(text: str) -> str:
    """``text`` as syntok reads it: each lone ``\r`` as ``\n`` (the same length)."""
    if "\r" in text and _LONE_CR.search(text):
        return _LONE_CR.sub("\n", text)
    return text


def paragraph_sentences(
    paragraph: str, segmenter_name: str = DEFAULTS.segmenter
) -> tuple[int, ...]:
    """Sentences of one paragraph as a flat ``(start0, end0, start1, end1, ...)`` tuple.

    syntok's sentence runs from its first token's offset to its last token's end (offsets
    into ``paragraph``); sentences without a non-empty token are left out. blingfire's are
    those of :func:`blingfire_sentences`.
    """
    if segmenter_name == "icu":
        return icu_sentences(paragraph)
    if segmenter_name == "blingfire":
        return blingfire_sentences(paragraph)
    out: list[int] = []
    for sentence in segmenter.segment(_TOKENIZER.tokenize(paragraph)):
        toks = [t for t in sentence if t.value]
        if toks:
            last = toks[-1]
            out.append(toks[0].offset)
            out.append(last.offset + len(last.value))
    return tuple(out)


def icu_sentences(paragraph: str) -> tuple[int, ...]:
    """ICU's sentences of one paragraph (Unicode's sentence rules, UAX #29), as
    :func:`paragraph_sentences` gives them.

    UAX #29 ends a sentence at every line break; syntok and blingfire read the lines of a
    paragraph as running text (a wrapped line or a table row is not a sentence of its own),
    so here a line break inside a paragraph is read as a space. ICU's offsets count UTF-16
    units and are mapped to code points, Python's; whitespace around a sentence is left out.
    """
    if not paragraph or paragraph.isspace():
        return ()
    seen = paragraph.translate(_LINE_ENDS_AS_SPACES)
    if _SURROGATE.search(seen):  # not text to ICU: one replacement character for each
        seen = _SURROGATE.sub("\ufffd", seen)
    spans = icu_sentence_breaker()(seen, "en").segments()
    if _ASTRAL.search(seen):  # ICU counts UTF-16 units: two for a character beyond U+FFFF
        spans = _code_points(seen, list(spans))
    return _trimmed(paragraph, spans)


def _code_points(text: str, spans: list[tuple[int, int]]) -> Iterable[tuple[int, int]]:
    """``spans`` of ``text`` given in UTF-16 units, as code-point offsets."""
    import numpy as np  # here, not above: syntok's workers start without it

    cps = np.frombuffer(text.encode("utf-32-le"), np.uint32)
    unit_ends = np.cumsum(1 + (cps > 0xFFFF))  # UTF-16 units up to each character's end
    # each offset is at a character's edge: the number of characters that end at or before it
    flat = np.searchsorted(unit_ends, np.asarray(spans, np.int64).ravel(), side="right")
    return zip(flat[0::2].tolist(), flat[1::2].tolist(), strict=True)


def _trimmed(paragraph: str, spans: Iterable[tuple[int, int]]) -> tuple[int, ...]:
    """``spans`` of ``paragraph`` as a flat tuple, each without the whitespace around it;
    those that hold only whitespace are left out."""
    out: list[int] = []
    for a, b in spans:
        piece = paragraph[a:b]
        lead = len(piece) - len(piece.lstrip())
        trail = len(piece) - len(piece.rstrip())
        if a + lead < b - trail:
            out += (a + lead, b - trail)
    return tuple(out)


def icu_sentence_breaker():
    """icu4py's ``SentenceBreaker`` (``SentenceBreaker(text, locale).segments()``: each
    sentence's ``(start, end)``), imported on first use (``ImportError`` without icu4py)."""
    if not _ICU:
        from icu4py.breakers import SentenceBreaker

        _ICU.append(SentenceBreaker)
    return _ICU[0]


_ICU: list = []


def blingfire_sentences(paragraph: str) -> tuple[int, ...]:
    """blingfire's sentences of one paragraph, as :func:`paragraph_sentences` gives them.

    blingfire reads UTF-8 and gives byte offsets (its own Python wrapper maps them back to
    characters in a Python loop over every byte); here the library is called directly and
    the offsets are mapped with numpy: a sentence's start is its first byte's character,
    its end the character after its last byte. Whitespace around a sentence is left out.
    """
    import numpy as np  # here, not above: syntok's workers start without it

    if not paragraph or paragraph.isspace():
        return ()
    data = paragraph.encode("utf-8", "surrogatepass")
    n = len(data)
    cap = 2 * n + 16  # as blingfire's wrapper sizes its buffers
    out = np.empty(cap, np.uint8)
    first = np.empty(cap, np.int32)
    last = np.empty(cap, np.int32)
    ptr = ctypes.c_void_p
    got = blingfire_library().TextToSentencesWithOffsets(
        data, n, out.ctypes.data_as(ptr), first.ctypes.data_as(ptr), last.ctypes.data_as(ptr), cap
    )
    if got <= 0 or got > cap:
        return ()
    m = int(np.count_nonzero(out[:got] == 10)) + 1  # sentences, one a line
    starts, ends = first[:m].astype(np.int64), last[:m].astype(np.int64) + 1
    if n != len(paragraph):  # not ASCII: byte offsets -> character offsets
        chars = np.cumsum((np.frombuffer(data, np.uint8) & 0xC0) != 0x80)  # chars up to a byte
        starts, ends = chars[starts] - 1, chars[ends - 1]
    return _trimmed(paragraph, zip(starts.tolist(), ends.tolist(), strict=True))


_LIB: list = []


def blingfire_library():
    """blingfire's library (its C functions), loaded on first use (``ImportError`` without
    blingfire, ``OSError`` where its wheel has no binary for this machine)."""
    if not _LIB:
        import blingfire

        _LIB.append(blingfire.blingfire)
    return _LIB[0]


def segment_batch(
    batch: Iterable[str], segmenter_name: str = DEFAULTS.segmenter
) -> tuple[array, array]:
    """The sentence starts of every paragraph of ``batch`` (a worker task): all of them one
    after the other (offsets into their paragraph), and how many each paragraph has.

    Two flat arrays rather than a tuple per paragraph: a few bytes a sentence to send back
    and to hold, not a Python object each."""
    starts, counts = array("q"), array("q")
    for p in batch:
        flat = paragraph_sentences(p, segmenter_name)
        starts.extend(flat[0::2])
        counts.append(len(flat) // 2)
    return starts, counts


# The paragraphs forked workers segment, read from the memory they share with the process
# that forked them: per run, (texts as syntok reads them, and each paragraph's text number,
# start and length). A run adds its entry before its workers start and removes it after, so
# the paragraphs are neither copied into tasks nor held as strings; runs in other threads
# have entries of their own.
SHARED: dict[int, tuple[Sequence[str], Sequence[int], Sequence[int], Sequence[int]]] = {}
_KEYS = itertools.count()


def share(texts, text_of, start, length) -> int:
    """Add a run's paragraphs to :data:`SHARED`; returns the key its tasks name."""
    key = next(_KEYS)
    SHARED[key] = (texts, text_of, start, length)
    return key


def paragraph_texts(
    parts: tuple[Sequence[str], Sequence[int], Sequence[int], Sequence[int]], first: int, end: int
) -> Iterator[str]:
    """The texts of paragraphs ``first .. end - 1`` of ``parts`` (an entry of :data:`SHARED`),
    sliced one at a time."""
    texts, text_of, start, length = parts
    return (texts[text_of[i]][start[i] : start[i] + length[i]] for i in range(first, end))


def segment_shared(task: tuple[int, int, int]) -> tuple[array, array]:
    """:func:`segment_batch` by :data:`PARALLEL_SEGMENTER` of the paragraphs
    ``first .. end - 1`` of the run ``key`` (``task = (key, first, end)``)."""
    key, first, end = task
    return segment_batch(paragraph_texts(SHARED[key], first, end), PARALLEL_SEGMENTER)


def segment_sent(batch: list[str]) -> tuple[array, array]:
    """:func:`segment_batch` by :data:`PARALLEL_SEGMENTER` of paragraphs sent to a worker."""
    return segment_batch(batch, PARALLEL_SEGMENTER)

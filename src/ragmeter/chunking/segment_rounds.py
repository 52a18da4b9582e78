"""A corpus's distinct paragraphs, read and segmented round by round (under
:func:`ragmeter.chunking.strategies.prepare_sentences`, which sets the thresholds).

A distinct paragraph is known by a digest and kept as (text number, start, length) in
:data:`Parts`, never as a string: a corpus whose paragraphs do not repeat would otherwise be
copied in full. Paragraphs are numbered in the order they are first seen, so the paragraphs
of a round of texts are the numbers from the end of the previous round on, and every text of
a round needs only paragraphs segmented by the end of that round.
"""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from ragmeter.chunking import segment as _segment

# The texts as syntok reads them; each distinct paragraph's text number, start and length.
Parts = tuple[list[str], array, array, array]
Group = list[tuple[str, np.ndarray, np.ndarray]]

_NO_INTS = np.zeros(0, dtype=np.int64)


def new_parts() -> Parts:
    return [], array("q"), array("q"), array("q")


def rounds(texts: Iterable[str], parts: Parts, round_chars: int | None) -> Iterator[Group]:
    """``(text, paragraph offsets, paragraph numbers)`` of each text, in groups: a group
    closes once the paragraphs first seen in it hold ``round_chars`` characters (``None``:
    one group). Each distinct paragraph is added to ``parts`` when first seen."""
    sources, text_of, start_of, length_of = parts
    seen: dict[bytes, int] = {}
    group: Group = []
    size = 0
    for text in texts:
        source = _segment.source(text)
        paras = _segment.source_paragraphs(source)
        numbers = np.empty(len(paras), dtype=np.int64)
        for j, (offset, p) in enumerate(paras):
            key = hashlib.blake2b(p.encode("utf-8", "surrogatepass"), digest_size=16)
            number = seen.setdefault(key.digest(), len(seen))
            if number == len(text_of):  # a new paragraph
                text_of.append(len(sources))
                start_of.append(offset)
                length_of.append(len(p))
                size += len(p)
            numbers[j] = number
        offsets = np.fromiter((o for o, _ in paras), dtype=np.int64, count=len(paras))
        group.append((text, offsets, numbers))
        sources.append(source)
        del paras
        if round_chars is not None and size >= round_chars:
            yield group
            group, size = [], 0
    if group:
        yield group


def segment(
    parts: Parts,
    spans: Sequence[tuple[int, int]],
    parallel: bool,
    eng: Any,
    segmenter: str,
    progress: Callable[[int, int], None] | None,
    meanwhile: Callable[[], None] | None,
) -> tuple[np.ndarray, np.ndarray]:
    """Sentence starts (offsets into their paragraph) and counts of the paragraphs of
    ``spans`` (ranges of paragraph numbers, one batch each), on ``eng``'s workers when
    ``parallel``, else in this process; ``meanwhile()`` runs while the workers work."""
    if parallel and getattr(eng, "shares_memory", False):
        # forked workers read the paragraphs from the memory they share with this process
        key = _segment.share(*parts)
        try:
            tasks = [(key, first, end) for first, end in spans]
            results = eng.map(
                _segment.segment_shared, tasks, progress=progress, meanwhile=meanwhile
            )
        finally:
            del _segment.SHARED[key]
    elif parallel:
        tasks = [list(_segment.paragraph_texts(parts, *span)) for span in spans]  # sent
        results = eng.map(_segment.segment_sent, tasks, progress=progress, meanwhile=meanwhile)
        del tasks
    else:
        if meanwhile is not None:
            meanwhile()
        results = []
        for i, span in enumerate(spans):
            batch = _segment.paragraph_texts(parts, *span)
            results.append(_segment.segment_batch(batch, segmenter))
            if progress is not None:
                progress(i + 1, len(spans))
    starts = np.concatenate([np.frombuffer(s, np.int64) for s, _ in results] or [_NO_INTS])
    counts = np.concatenate([np.frombuffer(c, np.int64) for _, c in results] or [_NO_INTS])
    return starts, counts


def sentence_starts(
    group: Group, starts: np.ndarray, counts: np.ndarray
) -> Iterator[tuple[str, np.ndarray]]:
    """Each text of ``group`` with its sentence starts (offsets into the text), from every
    paragraph's ``starts`` (one after the other) and ``counts`` so far."""
    begins = np.cumsum(counts) - counts
    for text, offsets, numbers in group:
        n = counts[numbers]  # each of the text's paragraphs: its sentences, gathered in order
        at = np.repeat(begins[numbers] - (np.cumsum(n) - n), n) + np.arange(int(n.sum()))
        yield text, starts[at] + np.repeat(offsets, n)

"""Resampled sums of long rounds, a tile of rounds and draws at a time.

A round of ``m`` draws is added left to right, as the reference loop adds it, so each
column's sums can only be vectorised across rounds (and columns), never across the draws
of one round. With few questions a block of whole rounds holds hundreds of rounds, and
:func:`ragmeter.stats.bootstrap._block_sums` adds them draw by draw across the block. With
thousands of questions a block of whole rounds holds only a few dozen (the block bounds
memory), and adding a few dozen rounds per step costs several times more per draw. Here the
draws come in tiles of :data:`ROWS` rounds by a stretch of draws
(:func:`ragmeter.stats.draws.tile_indices`), and each round's running sum carries from one
stretch to the next: the same additions in the same order, every sum bit-identical, with
memory bounded by one tile whatever the number of questions.

A count-of-draws matrix times the scores (one matrix product for every column) would add
the same terms in another order and round differently; it is exact only for scores on a
binary grid, which are already summed as packed integers, order-free.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ragmeter.engine import thread_count, thread_map
from ragmeter.stats.draws import _rows_per_block, tile_indices
from ragmeter.stats.validate import Seed

SUMS = 1 << 15
"""Running sums (rounds x columns) one addition step covers, where the rounds allow:
enough to pay for the step's call, few enough to stay in the processor's cache."""
ROWS = (512, 16384)
"""Fewest and most rounds per tile."""
TILE = 1 << 18
"""Draws per tile (rounds x stretch), which bounds the tile's memory (2 MB of indices)."""
LONG = 256
"""Whole rounds per block below which the rounds count as long and go by tiles."""


def long_rounds(m: int, seed: Seed) -> bool:
    """Whether rounds of ``m`` draws go by tiles: a block of whole rounds holds fewer
    than :data:`LONG` of them, and the seed is an integer (a numpy Generator's draws
    come in the order it makes them, whole rounds at a time)."""
    return not isinstance(seed, np.random.Generator) and _rows_per_block(m) < LONG


def unpack(out: np.ndarray, word: Any, total: np.ndarray, terms: int) -> None:
    """Write each column packed in ``word`` (a ``_Word``) into ``out`` from the integer
    sums ``total`` of ``terms`` packed values: ``field * 2**-scale``, exact."""
    for col, shift, width, low, scale in zip(
        word.cols, word.shifts, word.widths, word.lows, word.scales, strict=True
    ):
        field = (total >> np.uint64(shift)) & np.uint64((1 << width) - 1)
        exact = field.astype(np.int64) + terms * low  # the sum in units of 2**-scale
        out[:, col] = exact.astype(np.float64) / 2.0**scale


def tiled_sums(
    values: np.ndarray, m: int, rounds: int, seed: int, words: Sequence[Any], other: list[int]
) -> np.ndarray:
    """Sums (rounds, k) of ``rounds`` resamples of ``m`` draws from the rows of
    ``values`` (n, k), each bit-identical to the reference's left-to-right sum.

    ``words`` (packed exact columns) and ``other`` (columns added draw by draw) are
    :func:`ragmeter.stats.bootstrap._plan`'s split of the columns. The tiles of rounds
    are shared among threads (:func:`ragmeter.engine.thread_map`; numpy lets go of the
    interpreter while it draws, gathers and adds): a round's sum is the same whichever
    thread adds it and however the rounds are cut into tiles.
    """
    out = np.empty((rounds, values.shape[1]))
    vals = np.ascontiguousarray(values[:, other])
    workers = max(1, min(thread_count(), rounds // ROWS[0]))
    step = min(ROWS[1], max(ROWS[0], SUMS // max(1, len(other))), -(-rounds // workers))
    stretch = max(1, TILE // step)

    def tile(row0: int) -> None:
        rows = min(step, rounds - row0)
        acc = np.zeros((rows, len(other)))  # each round's running sum, from 0 as the loop
        buf = np.empty_like(acc)
        totals = np.zeros((rows, len(words)), dtype=np.uint64)
        for i0 in range(0, m, stretch):
            idx = tile_indices(seed, values.shape[0], m, row0, rows, i0, min(stretch, m - i0))
            for c, word in enumerate(words):
                totals[:, c] += np.take(word.words, idx).sum(axis=1, dtype=np.uint64)
            if other:
                for draw in np.ascontiguousarray(idx.T):  # the draws in the loop's order
                    np.take(vals, draw, axis=0, out=buf)
                    acc += buf
        block = out[row0 : row0 + rows]
        for c, word in enumerate(words):
            unpack(block, word, totals[:, c], m)
        if other:
            block[:, other] = acc

    starts = range(0, rounds, step)
    for _ in thread_map(tile, starts, min(workers, len(starts))):
        pass  # each tile writes its own rows of ``out``
    return out


SEGMENTS = 64
"""Most segments of a round of the largest size that one pass keeps running sums for."""


def tiled_sums_sizes(
    values: np.ndarray,
    sizes: Sequence[int],
    rounds: int,
    seed: int,
    words: Sequence[Any],
    other: list[int],
) -> dict[int, np.ndarray] | None:
    """:func:`tiled_sums` for every size of ``sizes`` from one pass over the draws of the
    largest: ``{size: sums (rounds, k)}``, each sum bit-identical to that function's.

    Round ``r`` of size ``m`` reads outputs ``r*m .. r*m+m-1``, so when every size
    divides the largest, ``top``, round ``b`` of ``top`` holds rounds ``q*b .. q*b+q-1``
    of size ``m = top / q``, one after another. Each draw is made and gathered once and
    added to the running sum of the round of every size that reads it, in the loop's
    order (packed integer columns are order-free: they are summed per segment of the
    sizes' greatest common divisor). ``words`` and ``other`` are the plan of ``top``,
    exact for every smaller size too. None when a size does not divide ``top`` or a
    round of ``top`` has more than :data:`SEGMENTS` segments.
    """
    distinct = sorted(set(sizes))
    top = distinct[-1]
    unit = math.gcd(*distinct)
    if any(top % m for m in distinct) or top // unit > SEGMENTS:
        return None
    n, k = values.shape[0], len(other)
    out = {m: np.empty((rounds, values.shape[1])) for m in distinct}
    vals = np.ascontiguousarray(values[:, other])
    # rounds of ``top`` whose draws size ``m`` reads: ceil(rounds / (top / m))
    needed = {m: -(-rounds * m // top) for m in distinct}
    tops = needed[top]
    workers = max(1, min(thread_count(), tops // ROWS[0]))
    step = min(ROWS[1], max(ROWS[0], SUMS // max(1, k)), -(-tops // workers))
    stretch = max(1, TILE // step)

    def tile(row0: int) -> None:
        rows = min(step, tops - row0)
        live = {m: min(rows, needed[m] - row0) for m in distinct if needed[m] > row0}
        acc = {m: np.zeros((top // m, r, k)) for m, r in live.items()}  # [segment, round]
        buf = np.empty((rows, k))
        totals = np.zeros((top // unit, rows, len(words)), dtype=np.uint64)
        for i0 in range(0, top, stretch):
            count = min(stretch, top - i0)
            idx = tile_indices(seed, n, top, row0, rows, i0, count)
            for c, word in enumerate(words):
                drawn = np.take(word.words, idx)
                for j in range(i0 // unit, (i0 + count - 1) // unit + 1):
                    lo, hi = max(i0, j * unit) - i0, min(i0 + count, (j + 1) * unit) - i0
                    totals[j, :, c] += drawn[:, lo:hi].sum(axis=1, dtype=np.uint64)
            if not other:
                continue
            draws = np.ascontiguousarray(idx.T)
            for j in range(i0 // unit, (i0 + count - 1) // unit + 1):
                lo, hi = max(i0, j * unit) - i0, min(i0 + count, (j + 1) * unit) - i0
                # the running sums these draws go to: one round of each live size
                sums = [(acc[m][j * unit // m], buf[:r]) for m, r in live.items()]
                for draw in draws[lo:hi]:
                    np.take(vals, draw, axis=0, out=buf)
                    for total, drawn in sums:
                        total += drawn
        for m, r in live.items():
            q = top // m
            first, last = q * row0, min(rounds, q * (row0 + r))
            block = out[m][first:last]
            if words:
                seg = totals[:, :r].reshape(q, m // unit, r, len(words)).sum(axis=1)
                flat = seg.transpose(1, 0, 2).reshape(q * r, len(words))[: last - first]
                for c, word in enumerate(words):
                    unpack(block, word, np.ascontiguousarray(flat[:, c]), m)
            if other:
                block[:, other] = acc[m].transpose(1, 0, 2).reshape(q * r, k)[: last - first]

    starts = range(0, tops, step)
    for _ in thread_map(tile, starts, min(workers, len(starts))):
        pass  # each tile writes its own rows of every size's sums
    return out

"""The random draws of every resample: the mulberry32 generator, bit for bit.

With an integer seed the draws come from mulberry32 and equal the reference TypeScript
``rng(seed)`` stream: resampling indices are ``floor(next() * n)`` in the reference
loop's order, and the sign flips of the randomization test continue the same stream. A
:class:`numpy.random.Generator` may be passed instead. Draws are generated a block of
rows at a time (:data:`_BLOCK` draws) and the last few blocks are kept
(:class:`_DrawCache`), since a summary asks for the same draws many times.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from ragmeter.defaults import DEFAULTS
from ragmeter.stats.validate import Seed, _check_int, _check_seed

_GOLDEN = 0x6D2B79F5
_MASK = 0xFFFFFFFF
# Draws generated per block (rows x questions); bounds memory for large inputs.
_BLOCK = 1 << 18
# Generator outputs computed per step; small enough to stay in cache.
_CHUNK = 1 << 15


def _mix(a: np.ndarray, t: np.ndarray, u: np.ndarray) -> np.ndarray:
    """mulberry32's output for each state in ``a`` (uint32), written into ``t``.

    ``a``, ``t`` and ``u`` are same-shaped uint32 buffers; ``a`` and ``u`` are spoiled.
    """
    # t = Math.imul(t ^ (t >>> 15), t | 1)
    np.right_shift(a, np.uint32(15), out=t)
    t ^= a
    a |= np.uint32(1)
    t *= a
    # t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    np.right_shift(t, np.uint32(7), out=u)
    u ^= t
    np.bitwise_or(t, np.uint32(61), out=a)
    u *= a
    u += t
    t ^= u
    # (t ^ (t >>> 14)) >>> 0
    np.right_shift(t, np.uint32(14), out=u)
    t ^= u
    return t


def _mulberry32_chunks(seed: int, count: int, start: int) -> Iterator[tuple[int, np.ndarray]]:
    """Yield ``(offset, outputs)`` for raw 32-bit outputs ``start .. start+count-1``.

    ``outputs`` is a scratch uint32 buffer reused by the next step: use it at once.
    """
    size = min(_CHUNK, count)
    steps = np.arange(size, dtype=np.uint32)
    steps *= np.uint32(_GOLDEN)
    a_buf = np.empty(size, dtype=np.uint32)
    t_buf = np.empty(size, dtype=np.uint32)
    u_buf = np.empty(size, dtype=np.uint32)
    for offset in range(0, count, _CHUNK):
        m = min(_CHUNK, count - offset)
        # Output k (0-based) hashes the state after k+1 steps: seed + (k+1) * golden.
        first = (seed + (start + offset + 1) * _GOLDEN) & _MASK
        a = np.add(steps[:m], np.uint32(first), out=a_buf[:m])
        t = _mix(a, t_buf[:m], u_buf[:m])
        yield offset, t


def mulberry32(seed: int, count: int, start: int = 0) -> np.ndarray:
    """Outputs ``start .. start+count-1`` of the mulberry32 generator seeded with ``seed``.

    Floats in [0, 1), identical to calling the reference TypeScript ``rng(seed)``
    ``start + count`` times and keeping the last ``count`` values. The state after
    ``k`` steps is ``(seed + k * 0x6D2B79F5) mod 2**32``, so any stretch of the
    stream is computed directly, without running through the earlier outputs.
    """
    _check_int(seed, "seed")
    _check_int(count, "count", minimum=0)
    _check_int(start, "start", minimum=0)
    out = np.empty(count, dtype=np.float64)
    for offset, t in _mulberry32_chunks(seed, count, start):
        np.divide(t, 4294967296.0, out=out[offset : offset + t.size])
    return out


def tile_indices(
    seed: int, n: int, m: int, row0: int, rows: int, i0: int, count: int
) -> np.ndarray:
    """Draws ``i0 .. i0+count-1`` of rounds ``row0 .. row0+rows-1``: a (rows, count) array.

    Round ``r`` of a resample of ``m`` draws reads outputs ``r*m .. r*m+m-1``, so entry
    ``[b, i]`` is ``floor(next() * n)`` for output ``(row0+b)*m + i0 + i``: the same
    index :func:`mulberry32_indices` gives there, for a tile of rounds that need not
    hold whole rounds (the state is computed directly, as there).
    """
    starts = (np.arange(row0, row0 + rows, dtype=np.uint64) * np.uint64(m)) + np.uint64(i0 + 1)
    base = ((starts * np.uint64(_GOLDEN)) + np.uint64(seed & _MASK)) & np.uint64(_MASK)
    steps = np.arange(count, dtype=np.uint32) * np.uint32(_GOLDEN)
    a = base.astype(np.uint32)[:, None] + steps[None, :]
    t = _mix(a, np.empty_like(a), np.empty_like(a))
    if n < (1 << 21):  # exact: see mulberry32_indices
        wide = np.multiply(t, np.uint64(n), dtype=np.uint64)  # widened as it multiplies
        wide >>= np.uint64(32)
        # below 2**32, so its bits read as an index as they are (one pass fewer)
        return wide.view(np.intp) if np.dtype(np.intp).itemsize == 8 else wide.astype(np.intp)
    return np.floor(t / 4294967296.0 * n).astype(np.intp)


def rng_name(seed: Seed) -> str:
    """``"mulberry32"`` for an integer seed, ``"numpy"`` for a numpy Generator."""
    _check_seed(seed)
    return "numpy" if isinstance(seed, np.random.Generator) else "mulberry32"


def mulberry32_indices(seed: int, count: int, start: int, n: int) -> np.ndarray:
    """``floor(next() * n)`` for outputs ``start .. start+count-1``, as the reference does."""
    out = np.empty(count, dtype=np.intp)
    wide = np.empty(min(_CHUNK, count), dtype=np.uint64)
    for offset, t in _mulberry32_chunks(seed, count, start):
        dest = out[offset : offset + t.size]
        if n < (1 << 21):
            # u = t / 2**32 and t * n < 2**53, so the double product u * n is exact
            # and its floor is (t * n) >> 32.
            w = wide[: t.size]
            np.multiply(t, np.uint64(n), out=w)
            w >>= np.uint64(32)
            dest[:] = w
        else:
            dest[:] = np.floor(t / 4294967296.0 * n)
    return out


def resample_indices(n: int, rounds: int, seed: Seed = DEFAULTS.seed) -> np.ndarray:
    """Question indices for ``rounds`` resamples of ``n`` questions: a (rounds, n) array.

    With an integer seed, entry ``[b, i]`` is ``floor(next() * n)`` for draw number
    ``b * n + i`` of mulberry32, the reference loop's order. With a numpy
    Generator it is ``rng.integers(0, n, size=(rounds, n))``.
    """
    _check_int(n, "n", minimum=1)
    _check_int(rounds, "rounds", minimum=1)
    return np.array(_draw_indices(n, n, rounds, seed, 0), dtype=np.intp)  # the caller's own


class _DrawCache:
    """The last few blocks of bootstrap draws (``m = n``), kept as small integers.

    A summary bootstraps every metric, every comparison and the first sample-size row with
    the same seed, the same questions and the same rounds, so it needs the same draws
    dozens of times; they are a pure function of ``(seed, n, rows, row0)``, so each block
    is generated once and handed out again. Entries hold ``uint16`` or ``uint32`` indices
    (never more than :data:`_DRAW_CACHE_BYTES` in all) and are handed out read-only, as they
    are: numpy gathers with them directly, and the narrow type halves to quarters the memory
    the sums read.
    """

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._items: dict[tuple[int, int, int, int], np.ndarray] = {}

    def get(self, key: tuple[int, int, int, int]) -> np.ndarray | None:
        found = self._items.pop(key, None)
        if found is not None:
            self._items[key] = found  # most recently used last
        return found

    def put(self, key: tuple[int, int, int, int], idx: np.ndarray, n: int) -> None:
        small = idx.astype(np.uint16 if n <= 1 << 16 else np.uint32)
        if small.nbytes > self.max_bytes:
            return
        small.setflags(write=False)
        self._items[key] = small
        while sum(a.nbytes for a in self._items.values()) > self.max_bytes:
            del self._items[next(iter(self._items))]


# Bootstrap draws kept between calls: 10,000 rounds of up to ~1,500 questions.
_DRAW_CACHE_BYTES = 32 << 20
_DRAWS = _DrawCache(_DRAW_CACHE_BYTES)


def _draw_indices(n: int, m: int, rows: int, seed: Seed, row0: int) -> np.ndarray:
    """Rows ``row0 .. row0+rows-1`` of a resample drawing ``m`` of ``n`` questions a round."""
    if isinstance(seed, np.random.Generator):
        return seed.integers(0, n, size=(rows, m))
    if m != n:  # sample-size rows: each size is drawn once per series
        return mulberry32_indices(seed, rows * m, row0 * m, n).reshape(rows, m)
    key = (int(seed), n, rows, row0)
    cached = _DRAWS.get(key)
    if cached is not None:
        return cached.reshape(rows, m)
    idx = mulberry32_indices(seed, rows * m, row0 * m, n)
    _DRAWS.put(key, idx, n)
    return idx.reshape(rows, m)


def _rows_per_block(m: int) -> int:
    """Rounds of ``m`` draws each in one block of :data:`_BLOCK` draws (at least one)."""
    return max(1, _BLOCK // m)


def _index_blocks(n: int, m: int, rounds: int, seed: Seed) -> Iterator[tuple[int, np.ndarray]]:
    """Yield ``(row0, indices)`` blocks covering all rounds, in order."""
    step = _rows_per_block(m)
    for row0 in range(0, rounds, step):
        rows = min(step, rounds - row0)
        yield row0, _draw_indices(n, m, rows, seed, row0)


def _sign_blocks(n: int, rounds: int, seed: Seed) -> Iterator[tuple[int, np.ndarray]]:
    """Yield ``(row0, signs)`` blocks of +1/-1 for the sign-flip test.

    With an integer seed the flips continue the mulberry32 stream after the
    ``rounds * n`` resampling draws: question ``i`` in round ``r`` is flipped when
    output ``rounds*n + r*n + i`` is below 0.5. A Generator draws
    ``integers(0, 2)`` after the resampling indices.
    """
    step = _rows_per_block(n)
    for row0 in range(0, rounds, step):
        rows = min(step, rounds - row0)
        if isinstance(seed, np.random.Generator):
            bits = seed.integers(0, 2, size=(rows, n))
        else:
            # u < 0.5 exactly when the top bit of the 32-bit output is clear.
            bits = np.empty(rows * n, dtype=np.uint32)
            for offset, t in _mulberry32_chunks(seed, rows * n, rounds * n + row0 * n):
                np.right_shift(t, np.uint32(31), out=bits[offset : offset + t.size])
        signs = bits.reshape(rows, n).astype(np.float64)
        signs *= 2.0
        signs -= 1.0
        yield row0, signs

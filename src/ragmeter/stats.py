"""Bootstrap intervals, paired comparisons, sample sizes and rater agreement.

Every interval here is reproducible bit for bit. With an integer seed the random
draws come from mulberry32, and :func:`bootstrap` and the interval of
:func:`paired` return exactly what the reference TypeScript ``bootstrapInterval``
and ``pairedDifference`` return for the same scores, rounds and seed: the same
draws, the same left-to-right sums, the same sort and the same order statistics.
A :class:`numpy.random.Generator` may be passed instead of a seed; the result
then records ``rng="numpy"`` and ``seed=None``.

See ``docs/statistics.md`` for what the numbers mean.

Size: the bit-for-bit ports of the reference implementation (mulberry32, bootstrap,
paired differences) and everything built on them share the same RNG and summation order;
keeping them together keeps that order in one place.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterator, Sequence
from dataclasses import asdict, dataclass, fields, replace
from statistics import NormalDist
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike

from ragmeter.errors import InputError

__all__ = [
    "Agreement",
    "Comparison",
    "Estimate",
    "SizeRow",
    "agreement",
    "bootstrap",
    "bootstrap_many",
    "cohen_kappa",
    "compare_all",
    "holm",
    "mulberry32",
    "paired",
    "questions_for_half_width",
    "questions_to_separate",
    "resample_indices",
    "rng_name",
    "sample_size",
]

Method = Literal["percentile", "bca"]
Seed = int | np.random.Generator

_GOLDEN = 0x6D2B79F5
_MASK = 0xFFFFFFFF
_METHODS = ("percentile", "bca")
# Draws generated per block (rows x questions); bounds memory for large inputs.
_BLOCK = 1 << 18
# Generator outputs computed per step; small enough to stay in cache.
_CHUNK = 1 << 15
# Flipped sums within this share of sum(|d|) of the observed sum count as ties.
_TIE = 1e-9


# --------------------------------------------------------------------------- generator


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
        # t = Math.imul(t ^ (t >>> 15), t | 1)
        t = np.right_shift(a, np.uint32(15), out=t_buf[:m])
        t ^= a
        a |= np.uint32(1)
        t *= a
        # t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
        u = np.right_shift(t, np.uint32(7), out=u_buf[:m])
        u ^= t
        np.bitwise_or(t, np.uint32(61), out=a)
        u *= a
        u += t
        t ^= u
        # (t ^ (t >>> 14)) >>> 0
        np.right_shift(t, np.uint32(14), out=u)
        t ^= u
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


def rng_name(seed: Seed) -> str:
    """``"mulberry32"`` for an integer seed, ``"numpy"`` for a numpy Generator."""
    _check_seed(seed)
    return "numpy" if isinstance(seed, np.random.Generator) else "mulberry32"


def _mulberry32_indices(seed: int, count: int, start: int, n: int) -> np.ndarray:
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


def resample_indices(n: int, rounds: int, seed: Seed = 1) -> np.ndarray:
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
        return _mulberry32_indices(seed, rows * m, row0 * m, n).reshape(rows, m)
    key = (int(seed), n, rows, row0)
    cached = _DRAWS.get(key)
    if cached is not None:
        return cached.reshape(rows, m)
    idx = _mulberry32_indices(seed, rows * m, row0 * m, n)
    _DRAWS.put(key, idx, n)
    return idx.reshape(rows, m)


def _index_blocks(n: int, m: int, rounds: int, seed: Seed) -> Iterator[tuple[int, np.ndarray]]:
    """Yield ``(row0, indices)`` blocks covering all rounds, in order."""
    step = max(1, _BLOCK // m)
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
    step = max(1, _BLOCK // n)
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


# --------------------------------------------------------------------------- sums


def _integer_scale(col: np.ndarray, terms: int) -> int | None:
    """Smallest ``s`` with every value a multiple of ``2**-s``, if sums stay exact.

    Returns None unless ``terms * max|value| * 2**s < 2**53``: only then is every
    partial sum of up to ``terms`` values an integer multiple of ``2**-s`` below
    ``2**53`` units, so that no addition rounds and any summation order gives the
    reference's left-to-right result.
    """
    top = float(np.max(np.abs(col)))
    for s in range(41):
        scaled = col * (2.0**s)
        if np.array_equal(scaled, np.floor(scaled)):
            return s if terms * top * 2.0**s < 2.0**53 else None
    return None


@dataclass(frozen=True)
class _Word:
    """Exact columns packed side by side into one uint64 per question.

    Column ``cols[f]`` stores ``value * 2**scales[f] - lows[f]`` (a non-negative
    integer) in bits ``shifts[f] .. shifts[f] + widths[f] - 1``; the widths leave
    room for the sum of ``terms`` values, so one integer sum of the words adds
    every packed column at once with no carry between fields.
    """

    cols: list[int]
    words: np.ndarray
    shifts: list[int]
    widths: list[int]
    lows: list[int]
    scales: list[int]


def _plan(values: np.ndarray, terms: int) -> tuple[list[_Word], list[int]]:
    """Split columns into packed exact words and columns that need sequential sums."""
    fields: list[tuple[int, np.ndarray, int, int, int]] = []  # col, ints, width, low, scale
    other: list[int] = []
    for j in range(values.shape[1]):
        s = _integer_scale(values[:, j], terms)
        if s is None:
            other.append(j)
            continue
        ints = (values[:, j] * 2.0**s).astype(np.int64)
        low = int(ints.min())
        ints -= low
        fields.append((j, ints, max(1, (terms * int(ints.max())).bit_length()), low, s))
    words: list[_Word] = []
    group: list[tuple[int, np.ndarray, int, int, int]] = []

    def close() -> None:
        if not group:
            return
        shifts = list(np.cumsum([0] + [f[2] for f in group[:-1]]))
        packed = np.zeros(values.shape[0], dtype=np.uint64)
        for f, shift in zip(group, shifts, strict=True):
            packed |= f[1].astype(np.uint64) << np.uint64(shift)
        words.append(
            _Word(
                cols=[f[0] for f in group],
                words=packed,
                shifts=[int(x) for x in shifts],
                widths=[f[2] for f in group],
                lows=[f[3] for f in group],
                scales=[f[4] for f in group],
            )
        )
        group.clear()

    for f in fields:
        if sum(g[2] for g in group) + f[2] > 64:
            close()
        group.append(f)
    close()
    return words, other


def _sequential_sums(values: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """``sum += values[idx[b, i]]`` left to right for each round b: (rows, k).

    Vectorised across rounds, sequential across draws, so each sum rounds exactly
    as the reference loop's does.
    """
    rows, k = idx.shape[0], values.shape[1]
    if rows < 256:
        # Few, long rounds (large resample sizes): accumulate along each round instead.
        return np.stack(
            [np.cumsum(np.take(values[:, j], idx), axis=1)[:, -1] for j in range(k)], axis=1
        )
    out = np.zeros((rows, k))
    sub = 2048 if k <= 8 else 1024  # rounds per pass: running sums stay in cache
    buf = np.empty((sub, k))
    for r0 in range(0, rows, sub):
        acc = out[r0 : r0 + sub]
        b = buf[: acc.shape[0]]
        draws = np.ascontiguousarray(idx[r0 : r0 + sub].T)  # one row per draw
        for draw in draws:
            np.take(values, draw, axis=0, out=b)
            acc += b
    return out


def _block_sums(
    values: np.ndarray, idx: np.ndarray, words: list[_Word], other: list[int]
) -> np.ndarray:
    """Resampled sums (rows, k), each bit-identical to a left-to-right sum."""
    terms = idx.shape[1]
    out = np.empty((idx.shape[0], values.shape[1]))
    for w in words:
        total = np.take(w.words, idx).sum(axis=1, dtype=np.uint64)
        for col, shift, width, low, scale in zip(
            w.cols, w.shifts, w.widths, w.lows, w.scales, strict=True
        ):
            field = (total >> np.uint64(shift)) & np.uint64((1 << width) - 1)
            exact = field.astype(np.int64) + terms * low  # the sum in units of 2**-scale
            out[:, col] = exact.astype(np.float64) / 2.0**scale
    if other:
        out[:, other] = _sequential_sums(np.ascontiguousarray(values[:, other]), idx)
    return out


def _resampled_means(values: np.ndarray, m: int, rounds: int, seed: Seed) -> np.ndarray:
    """Means of ``rounds`` resamples of ``m`` draws from the rows of ``values`` (n, k)."""
    n = values.shape[0]
    words, other = _plan(values, m)
    sums = np.empty((rounds, values.shape[1]))
    for row0, idx in _index_blocks(n, m, rounds, seed):
        sums[row0 : row0 + idx.shape[0]] = _block_sums(values, idx, words, other)
    return sums / m


def _seq_mean(x: np.ndarray) -> float:
    """Left-to-right sum divided by the count, as the reference computes a mean."""
    return float(np.cumsum(x)[-1] / x.size) + 0.0


def from_fields(cls, data: dict[str, Any]):
    """``cls(**data)`` keeping only ``cls``'s fields (a saved dict may carry more)."""
    names = {f.name for f in fields(cls)}
    return cls(**{k: v for k, v in data.items() if k in names})


# --------------------------------------------------------------------------- intervals


@dataclass(frozen=True)
class Estimate:
    """A mean with its bootstrap interval, and everything needed to reproduce it."""

    mean: float
    low: float
    high: float
    n: int
    rounds: int
    seed: int | None
    method: str
    rng: str
    confidence: float = 0.95

    def to_dict(self) -> dict[str, Any]:
        """Plain dict (JSON-ready)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Estimate:
        """The inverse of :meth:`to_dict`."""
        return from_fields(cls, data)

    def format(self, scale: float = 100, digits: int = 1) -> str:
        """``"85.0 [77.5, 92.5]"``: the mean and interval, multiplied by ``scale``."""
        return format_interval(self.mean, self.low, self.high, scale, digits)


def format_interval(
    mean: float, low: float, high: float, scale: float = 100, digits: int = 1
) -> str:
    """``"85.0 [77.5, 92.5]"``: every printed estimate goes through here.

    :func:`ragmeter.metrics.format_estimate` picks ``scale`` and ``digits`` from
    the metric (percent for shares); :meth:`Estimate.format` takes them as given.
    """
    return f"{mean * scale:.{digits}f} [{low * scale:.{digits}f}, {high * scale:.{digits}f}]"


def _tails(confidence: float) -> tuple[float, float]:
    """Lower and upper tail quantiles; 0.95 gives exactly the literals 0.025 and 0.975."""
    lo = float(f"{(1.0 - confidence) / 2:.12g}")
    return lo, float(f"{1.0 - lo:.12g}")


def _order_stat(rounds: int, q: float) -> int:
    """``Math.floor(rounds * q)``, kept inside the array."""
    return min(max(math.floor(rounds * q), 0), rounds - 1)


def _interval(
    means: np.ndarray, observed: float, data: np.ndarray, method: str, confidence: float
) -> tuple[float, float]:
    """Percentile or BCa interval from one column of resampled means."""
    rounds = means.size
    lo_q, hi_q = _tails(confidence)
    if method == "bca":
        centred = data - data.mean()
        ss = float(np.sum(centred**2))
        if ss == 0.0:
            return observed, observed
        # Jackknife acceleration; for the mean it reduces to the skewness form.
        accel = float(np.sum(centred**3)) / (6.0 * ss**1.5)
        below = np.count_nonzero(means < observed)
        at_or_below = np.count_nonzero(means <= observed)
        share = (below + at_or_below) / (2.0 * rounds)  # ties count half
        share = min(max(share, 0.5 / rounds), 1.0 - 0.5 / rounds)
        nd = NormalDist()
        z0 = nd.inv_cdf(share)

        def adjust(q: float) -> float:
            z = z0 + nd.inv_cdf(q)
            return nd.cdf(z0 + z / (1.0 - accel * z))

        lo_q, hi_q = adjust(lo_q), adjust(hi_q)
    lo_k, hi_k = _order_stat(rounds, lo_q), _order_stat(rounds, hi_q)
    part = np.partition(means, sorted({lo_k, hi_k}))
    return float(part[lo_k]) + 0.0, float(part[hi_k]) + 0.0


def bootstrap(
    scores: ArrayLike,
    rounds: int = 10_000,
    seed: Seed = 1,
    method: Method = "percentile",
    confidence: float = 0.95,
) -> Estimate:
    """Bootstrap interval for the mean of per-question scores.

    Resamples the questions with replacement ``rounds`` times and reads the
    interval off the resampled means. ``method="percentile"`` takes the sorted
    means at ``floor(rounds * 0.025)`` and ``floor(rounds * 0.975)`` (for 95%),
    exactly as the reference ``bootstrapInterval``; ``"bca"`` shifts those
    positions for bias and skew (bias-corrected and accelerated, jackknife
    acceleration).
    """
    x = _as_vector(scores, "scores")
    return bootstrap_many(x[None, :], rounds, seed, method, confidence)[0]


def bootstrap_many(
    matrix: ArrayLike,
    rounds: int = 10_000,
    seed: Seed = 1,
    method: Method = "percentile",
    confidence: float = 0.95,
) -> list[Estimate]:
    """One :class:`Estimate` per row of ``matrix`` (series x questions).

    All rows share one set of resampling indices, drawn once; each row's result
    equals ``bootstrap(row, rounds, seed, ...)`` for an integer seed.
    """
    m = _as_matrix(matrix, "matrix")
    _check_common(rounds, seed, method, confidence)
    n = m.shape[1]
    means = _resampled_means(np.ascontiguousarray(m.T), n, rounds, seed)
    return [
        _estimate(m[j], means[:, j], rounds, seed, method, confidence) for j in range(m.shape[0])
    ]


def _estimate(
    data: np.ndarray,
    means: np.ndarray,
    rounds: int,
    seed: Seed,
    method: str,
    confidence: float,
) -> Estimate:
    observed = _seq_mean(data)
    low, high = _interval(means, observed, data, method, confidence)
    return Estimate(
        mean=observed,
        low=low,
        high=high,
        n=int(data.size),
        rounds=rounds,
        seed=_seed_record(seed),
        method=method,
        rng=rng_name(seed),
        confidence=confidence,
    )


# --------------------------------------------------------------------------- comparisons


@dataclass(frozen=True)
class Comparison:
    """System ``a`` against system ``b`` on the same questions.

    ``difference`` is the paired bootstrap interval of mean(a - b). ``p_value``
    comes from a sign-flip randomization test; ``p_holm`` is the Holm-adjusted
    p-value when the comparison is one of a family (else None). ``wins``,
    ``ties`` and ``losses`` count questions where a scored above, equal to and
    below b.
    """

    a: str
    b: str
    difference: Estimate
    p_value: float
    p_holm: float | None
    wins: int
    ties: int
    losses: int
    verdict: str

    def to_dict(self) -> dict[str, Any]:
        """Plain dict (JSON-ready)."""
        return asdict(self)


def _verdict(diff: Estimate, a: str, b: str) -> str:
    if diff.low > 0:
        return f"{a} better"
    if diff.high < 0:
        return f"{b} better"
    return "tie (interval crosses 0)"


def _flip_p_values(diffs: np.ndarray, rounds: int, seed: Seed) -> list[float]:
    """Sign-flip randomization p-values for each column of ``diffs`` (n, k).

    ``p = (b + 1) / (rounds + 1)`` where ``b`` counts rounds whose flipped mean is
    at least as far from 0 as the observed mean. Flipped sums within
    ``1e-9 * sum(|d|)`` of the observed one count as ties (at least as far), so
    the result does not hinge on the order of floating-point additions.
    """
    n = diffs.shape[0]
    observed = np.abs(np.cumsum(diffs, axis=0)[-1])
    threshold = observed - _TIE * np.sum(np.abs(diffs), axis=0)
    hits = np.zeros(diffs.shape[1], dtype=np.int64)
    for _, signs in _sign_blocks(n, rounds, seed):
        flipped = np.abs(signs @ diffs)
        hits += np.count_nonzero(flipped >= threshold, axis=0)
    return [float((h + 1) / (rounds + 1)) for h in hits]


def _compare(
    m: np.ndarray,
    names: Sequence[str],
    pairs: list[tuple[int, int]],
    rounds: int,
    seed: Seed,
    method: str,
    confidence: float,
) -> list[Comparison]:
    n = m.shape[1]
    diffs = np.stack([m[i] - m[j] for i, j in pairs], axis=1) + 0.0  # (n, pairs)
    means = _resampled_means(diffs, n, rounds, seed)  # indices drawn once
    p_values = _flip_p_values(diffs, rounds, seed)  # then the sign flips
    out = []
    for c, (i, j) in enumerate(pairs):
        diff = _estimate(diffs[:, c], means[:, c], rounds, seed, method, confidence)
        a, b = m[i], m[j]
        out.append(
            Comparison(
                a=names[i],
                b=names[j],
                difference=diff,
                p_value=p_values[c],
                p_holm=None,
                wins=int(np.count_nonzero(a > b)),
                ties=int(np.count_nonzero(a == b)),
                losses=int(np.count_nonzero(a < b)),
                verdict=_verdict(diff, names[i], names[j]),
            )
        )
    return out


def paired(
    a: ArrayLike,
    b: ArrayLike,
    rounds: int = 10_000,
    seed: Seed = 1,
    names: tuple[str, str] = ("A", "B"),
    method: Method = "percentile",
    confidence: float = 0.95,
) -> Comparison:
    """Paired comparison of two systems scored on the same questions.

    The interval is the bootstrap of the per-question differences ``a - b`` with
    the same seed, exactly the reference ``pairedDifference``. The p-value is a
    sign-flip randomization test: each round flips the sign of each question's
    difference at random (see :func:`compare_all` for the draws).
    """
    x = _as_vector(a, "a")
    y = _as_vector(b, "b")
    if x.size != y.size:
        raise InputError(f"score lists must be paired: a has {x.size} scores, b has {y.size}")
    _check_names(names, 2)
    _check_common(rounds, seed, method, confidence)
    return _compare(np.stack([x, y]), names, [(0, 1)], rounds, seed, method, confidence)[0]


def compare_all(
    matrix: ArrayLike,
    names: Sequence[str],
    rounds: int = 10_000,
    seed: Seed = 1,
    method: Method = "percentile",
    confidence: float = 0.95,
) -> list[Comparison]:
    """Every pair ``i < j`` of systems (rows of ``matrix``), with Holm-adjusted p-values.

    All pairs share one set of resampling indices and one set of sign flips, so
    each pair's result equals ``paired(matrix[i], matrix[j], rounds, seed)``
    (plus ``p_holm``). With an integer seed the sign flips are mulberry32
    outputs ``rounds*n`` onwards, i.e. the stream continues after the
    resampling draws; a question's sign is flipped when its output is below 0.5.
    """
    m = _as_matrix(matrix, "matrix")
    if m.shape[0] < 2:
        raise InputError("compare_all needs at least two systems (rows)")
    _check_names(names, m.shape[0])
    _check_common(rounds, seed, method, confidence)
    pairs = [(i, j) for i in range(m.shape[0]) for j in range(i + 1, m.shape[0])]
    out = _compare(m, list(names), pairs, rounds, seed, method, confidence)
    adjusted = holm([c.p_value for c in out])
    return [_with_holm(c, p) for c, p in zip(out, adjusted, strict=True)]


def _with_holm(c: Comparison, p: float) -> Comparison:
    return replace(c, p_holm=p)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm step-down adjustment, returned in the input order.

    Sort the m p-values ascending; the k-th smallest (k = 1..m) becomes
    ``max over j <= k of min(1, (m - j + 1) * p_(j))``.
    """
    p = [float(v) for v in p_values]
    for v in p:
        if not 0.0 <= v <= 1.0:
            raise InputError(f"p-values must lie in [0, 1], got {v}")
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    out = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = running
    return out


# --------------------------------------------------------------------------- sample size


@dataclass(frozen=True)
class SizeRow:
    """The interval a question set of ``n`` questions would give."""

    n: int
    mean: float
    low: float
    high: float
    half_width: float
    rounds: int
    seed: int | None
    rng: str
    confidence: float = 0.95

    def to_dict(self) -> dict[str, Any]:
        """Plain dict (JSON-ready)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SizeRow:
        """The inverse of :meth:`to_dict`."""
        return from_fields(cls, data)


def sample_size(
    scores: ArrayLike,
    sizes: Sequence[int] | None = None,
    rounds: int = 10_000,
    seed: Seed = 1,
    confidence: float = 0.95,
) -> list[SizeRow]:
    """Percentile intervals a larger question set would give (default n, 2n, 4n, 8n).

    For each size m, every round draws m questions with replacement from the n
    observed ones; the interval is read off the resampled means as in
    :func:`bootstrap`. Each size starts the generator afresh from ``seed``, so
    the row for m = n equals ``bootstrap(scores, rounds, seed)``.
    """
    x = _as_vector(scores, "scores")
    _check_common(rounds, seed, "percentile", confidence)
    n = x.size
    sizes = [n, 2 * n, 4 * n, 8 * n] if sizes is None else list(sizes)
    if not sizes:
        raise InputError("sizes must not be empty")
    for m in sizes:
        _check_int(m, "each size", minimum=1)
    observed = _seq_mean(x)
    shared = _shared_stream_means(x, sizes, rounds, seed)
    rows = []
    for m in sizes:
        means = shared[m] if shared else _resampled_means(x[:, None], m, rounds, seed)[:, 0]
        low, high = _interval(means, observed, x, "percentile", confidence)
        rows.append(
            SizeRow(
                n=m,
                mean=observed,
                low=low,
                high=high,
                half_width=(high - low) / 2.0,
                rounds=rounds,
                seed=_seed_record(seed),
                rng=rng_name(seed),
                confidence=confidence,
            )
        )
    return rows


def _shared_stream_means(
    x: np.ndarray, sizes: Sequence[int], rounds: int, seed: Seed
) -> dict[int, np.ndarray] | None:
    """Resampled means for every size of ``sizes`` from one pass over the generator.

    Round ``b`` of size ``m`` uses outputs ``b*m .. (b+1)*m - 1``, so every size reads a
    prefix of the same stream: when each size divides the largest, blocks of whole rounds
    of the largest hold whole rounds of every size, and the stream is generated once
    instead of once per size (same draws, same sums). None when that does not apply.
    """
    top = max(sizes)
    distinct = sorted(set(sizes))
    if isinstance(seed, np.random.Generator) or len(distinct) < 2 or any(top % m for m in distinct):
        return None
    n = x.size
    values = x[:, None]
    plans = {m: _plan(values, m) for m in distinct}
    sums = {m: np.empty((rounds, 1)) for m in distinct}
    step = max(1, _BLOCK // top)
    for row0 in range(0, rounds, step):
        rows = min(step, rounds - row0)
        first = row0 * top  # a multiple of every size
        flat = _mulberry32_indices(seed, rows * top, first, n)
        for m in distinct:
            b0, b1 = first // m, min(rounds, (first + rows * top) // m)
            if b1 > b0:
                idx = flat[: (b1 - b0) * m].reshape(b1 - b0, m)
                sums[m][b0:b1] = _block_sums(values, idx, *plans[m])
    return {m: (sums[m] / m)[:, 0] for m in distinct}


def _z(p: float) -> float:
    return NormalDist().inv_cdf(p)


def _ceil(x: float) -> int:
    # Round away float noise such as 306.00000000000006 before taking the ceiling.
    return max(1, math.ceil(round(x, 9)))


def questions_for_half_width(
    scores: ArrayLike, half_width: float = 0.04, confidence: float = 0.95
) -> int:
    """Questions needed for an interval of +/- ``half_width`` around the mean.

    ``n = ceil((z * sd / half_width) ** 2)`` with ``sd`` the sample standard
    deviation (n - 1) of the observed per-question scores and ``z`` the normal
    quantile for ``confidence`` (1.96 for 95%).
    """
    x = _as_vector(scores, "scores")
    if x.size < 2:
        raise InputError("need at least two scores to estimate their spread")
    _check_fraction(confidence, "confidence")
    if not half_width > 0:
        raise InputError(f"half_width must be positive, got {half_width}")
    sd = float(np.std(x, ddof=1))
    z = _z(0.5 + confidence / 2.0)
    return _ceil((z * sd / half_width) ** 2)


def questions_to_separate(
    a: ArrayLike,
    b: ArrayLike,
    difference: float = 0.05,
    confidence: float = 0.95,
    power: float = 0.8,
) -> int:
    """Questions needed to tell two systems apart when they differ by ``difference``.

    Paired normal approximation: ``n = ceil(((z_(1-alpha/2) + z_power) * sd_d /
    difference) ** 2)`` where ``sd_d`` is the sample standard deviation of the
    per-question differences ``a - b``, ``alpha = 1 - confidence``, and
    ``power`` the chance the interval excludes 0 when the true difference is
    ``difference``.
    """
    x = _as_vector(a, "a")
    y = _as_vector(b, "b")
    if x.size != y.size:
        raise InputError(f"score lists must be paired: a has {x.size} scores, b has {y.size}")
    if x.size < 2:
        raise InputError("need at least two paired scores to estimate their spread")
    _check_fraction(confidence, "confidence")
    _check_fraction(power, "power")
    if not difference > 0:
        raise InputError(f"difference must be positive, got {difference}")
    sd = float(np.std(x - y, ddof=1))
    z = _z(0.5 + confidence / 2.0) + _z(power)
    return _ceil((z * sd / difference) ** 2)


# --------------------------------------------------------------------------- agreement


@dataclass(frozen=True)
class Agreement:
    """How often two raters (e.g. two judges) gave the same label.

    ``confusion[i][j]`` counts items rater a labelled ``classes[i]`` and rater b
    labelled ``classes[j]``.
    """

    percent: Estimate
    kappa: Estimate
    confusion: list[list[int]]
    classes: list[Hashable]
    n: int

    def to_dict(self) -> dict[str, Any]:
        """Plain dict (JSON-ready when the labels are)."""
        return asdict(self)


def _kappa_from_counts(diag: np.ndarray, expected: np.ndarray, n: int) -> np.ndarray:
    """``(n*diag - E) / (n*n - E)`` with ``E = sum_k rows_k * cols_k``; 1 where E = n*n."""
    num = (n * diag - expected).astype(np.float64)
    den = (n * n - expected).astype(np.float64)
    safe = np.where(den == 0, 1.0, den)
    return np.where(den == 0, 1.0, num / safe)


def cohen_kappa(confusion: ArrayLike) -> float:
    """Cohen's kappa of a square confusion table: ``(p_o - p_e) / (1 - p_e)``.

    ``p_o`` is the share on the diagonal, ``p_e`` the agreement expected by
    chance from the two raters' label shares. When ``p_e = 1`` (both raters gave
    every item the same single label) kappa is 0/0; it is taken as 1.0, since
    then the raters agree on every item.
    """
    t = np.asarray(confusion, dtype=np.int64)
    if t.ndim != 2 or t.shape[0] != t.shape[1] or t.size == 0:
        raise InputError("confusion must be a non-empty square table")
    if np.any(t < 0):
        raise InputError("confusion counts must not be negative")
    n = int(t.sum())
    if n == 0:
        raise InputError("confusion table is empty")
    expected = np.int64(t.sum(axis=1) @ t.sum(axis=0))
    return float(_kappa_from_counts(np.int64(np.trace(t)), expected, n))


def agreement(
    labels_a: Sequence[Hashable],
    labels_b: Sequence[Hashable],
    classes: Sequence[Hashable] | None = None,
    rounds: int = 10_000,
    seed: Seed = 1,
    confidence: float = 0.95,
) -> Agreement:
    """Percent agreement and Cohen's kappa of two raters, with percentile intervals.

    Both intervals resample the items with the same indices (drawn once, as in
    :func:`bootstrap`); ``percent`` equals ``bootstrap`` of the 0/1 agreement per
    item. ``classes`` fixes the label order (default: sorted labels, or first
    appearance when the labels do not sort). Kappa is taken as 1.0 in any
    resample where both raters used one and the same label throughout.
    """
    la, lb = list(labels_a), list(labels_b)
    if not la:
        raise InputError("labels must not be empty")
    if len(la) != len(lb):
        raise InputError(f"label lists must be paired: a has {len(la)}, b has {len(lb)}")
    _check_common(rounds, seed, "percentile", confidence)
    if classes is None:
        seen = list(dict.fromkeys(la + lb))
        try:
            classes = sorted(seen)
        except TypeError:
            classes = seen
    cls = list(classes)
    pos = {c: i for i, c in enumerate(cls)}
    if len(pos) != len(cls):
        raise InputError("classes must not repeat")
    missing = [v for v in dict.fromkeys(la + lb) if v not in pos]
    if missing:
        raise InputError(f"labels not among classes: {missing[:5]!r}")
    k = len(cls)
    n = len(la)
    code = np.array([pos[u] * k + pos[v] for u, v in zip(la, lb, strict=True)], dtype=np.intp)
    table = np.bincount(code, minlength=k * k).reshape(k, k)
    diag_cells = np.arange(k) * (k + 1)

    diag = np.empty(rounds, dtype=np.int64)
    expected = np.empty(rounds, dtype=np.int64)
    for row0, idx in _index_blocks(n, n, rounds, seed):
        rows = idx.shape[0]
        flat = code[idx] + (np.arange(rows, dtype=np.intp) * (k * k))[:, None]
        cells = np.bincount(flat.ravel(), minlength=rows * k * k).reshape(rows, k, k)
        diag[row0 : row0 + rows] = cells.reshape(rows, k * k)[:, diag_cells].sum(axis=1)
        expected[row0 : row0 + rows] = np.einsum("rk,rk->r", cells.sum(axis=2), cells.sum(axis=1))

    hits = (code // k == code % k).astype(np.float64)
    percent = _estimate(hits, diag / n, rounds, seed, "percentile", confidence)
    kappas = _kappa_from_counts(diag, expected, n)
    observed = cohen_kappa(table)
    low, high = _interval(kappas, observed, hits, "percentile", confidence)
    kappa = Estimate(
        mean=observed,
        low=low,
        high=high,
        n=n,
        rounds=rounds,
        seed=_seed_record(seed),
        method="percentile",
        rng=rng_name(seed),
        confidence=confidence,
    )
    return Agreement(
        percent=percent,
        kappa=kappa,
        confusion=table.tolist(),
        classes=cls,
        n=n,
    )


# --------------------------------------------------------------------------- validation


def _check_int(value: object, name: str, minimum: int | None = None) -> None:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise InputError(f"{name} must be an integer, got {value!r}")
    if minimum is not None and value < minimum:
        raise InputError(f"{name} must be at least {minimum}, got {value}")


def _check_seed(seed: object) -> None:
    if isinstance(seed, np.random.Generator):
        return
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
        raise InputError(f"seed must be an integer or a numpy Generator, got {seed!r}")


def _seed_record(seed: Seed) -> int | None:
    return None if isinstance(seed, np.random.Generator) else int(seed)


def _check_fraction(value: float, name: str) -> None:
    if not 0.0 < value < 1.0:
        raise InputError(f"{name} must lie strictly between 0 and 1, got {value}")


def _check_common(rounds: int, seed: Seed, method: str, confidence: float) -> None:
    _check_int(rounds, "rounds", minimum=1)
    _check_seed(seed)
    if method not in _METHODS:
        raise InputError(f"method must be one of {_METHODS}, got {method!r}")
    _check_fraction(confidence, "confidence")


def _check_names(names: Sequence[str], count: int) -> None:
    if isinstance(names, str) or len(names) != count:
        raise InputError(f"need {count} names, got {names!r}")
    if len(set(names)) != count:
        raise InputError(f"names must be distinct, got {list(names)!r}")


def _finite(arr: np.ndarray, name: str) -> np.ndarray:
    if not np.all(np.isfinite(arr)):
        raise InputError(f"{name} must be finite numbers (found NaN or infinity)")
    return arr + 0.0  # also turns -0.0 into 0.0


def _as_vector(values: ArrayLike, name: str) -> np.ndarray:
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{name} must be numbers: {exc}") from None
    if arr.ndim != 1:
        raise InputError(f"{name} must be a flat list of per-question scores")
    if arr.size == 0:
        raise InputError(f"{name} must not be empty")
    return _finite(arr, name)


def _as_matrix(values: ArrayLike, name: str) -> np.ndarray:
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(
            f"{name} must be a table of numbers with equal-length rows: {exc}"
        ) from None
    if arr.ndim != 2:
        raise InputError(f"{name} must be 2-D (systems x questions)")
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise InputError(f"{name} must not be empty")
    return _finite(arr, name)

"""Bootstrap intervals for a mean, reproducible bit for bit.

:func:`bootstrap` returns exactly what the reference TypeScript ``bootstrapInterval``
returns for the same scores, rounds and integer seed: the same draws
(:mod:`ragmeter.stats.draws`), the same left-to-right sums and the same order
statistics. Sums that are exact in any order (scores on a binary grid) are added as
packed integers; the others are added draw by draw, as the reference loop adds them.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields, replace
from statistics import NormalDist
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ragmeter.defaults import DEFAULTS
from ragmeter.stats.draws import _index_blocks, rng_name
from ragmeter.stats.exact import exact_interval
from ragmeter.stats.resample import long_rounds, tiled_sums, unpack
from ragmeter.stats.validate import (
    Method,
    Seed,
    _as_vector,
    as_matrix,
    check_common,
    seed_record,
)

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
        unpack(out, w, np.take(w.words, idx).sum(axis=1, dtype=np.uint64), terms)
    if other:
        out[:, other] = _sequential_sums(np.ascontiguousarray(values[:, other]), idx)
    return out


def resampled_means(values: np.ndarray, m: int, rounds: int, seed: Seed) -> np.ndarray:
    """Means of ``rounds`` resamples of ``m`` draws from the rows of ``values`` (n, k)."""
    n = values.shape[0]
    words, other = _plan(values, m)
    if long_rounds(m, seed):  # thousands of draws a round: tiles of rounds and draws
        return tiled_sums(values, m, rounds, int(seed), words, other) / m
    sums = np.empty((rounds, values.shape[1]))
    for row0, idx in _index_blocks(n, m, rounds, seed):
        sums[row0 : row0 + idx.shape[0]] = _block_sums(values, idx, words, other)
    return sums / m


def seq_mean(x: np.ndarray) -> float:
    """Left-to-right sum divided by the count, as the reference computes a mean."""
    return float(np.cumsum(x)[-1] / x.size) + 0.0


def from_fields(cls, data: dict[str, Any]):
    """``cls(**data)`` keeping only ``cls``'s fields (a saved dict may carry more)."""
    names = {f.name for f in fields(cls)}
    return cls(**{k: v for k, v in data.items() if k in names})


def with_exact(record: Any) -> dict[str, Any]:
    """A dataclass with an ``exact`` interval as a plain dict: ``exact`` (and the method
    that made it) only when there is one, so ``low``, ``high`` and ``method`` stay the
    bootstrap's. :class:`Estimate` and :class:`ragmeter.stats.SizeRow` are saved so."""
    out = asdict(record)
    if record.exact is None:
        del out["exact"]
    else:
        out["exact"] = list(record.exact)
        out["exact_method"] = "clopper-pearson"
    return out


def read_exact(cls: Any, data: dict[str, Any]) -> Any:
    """The inverse of :func:`with_exact`."""
    record = from_fields(cls, data)
    if record.exact is not None:
        record = replace(record, exact=(float(record.exact[0]), float(record.exact[1])))
    return record


# --------------------------------------------------------------------------- intervals


@dataclass(frozen=True)
class Estimate:
    """A mean with its bootstrap interval, and everything needed to reproduce it.

    ``low`` and ``high`` are always the bootstrap interval of ``method`` (the seed's
    numbers, bit for bit). ``exact``, when set, is the exact binomial (Clopper-Pearson)
    interval at the same confidence, which the views show instead for 0/1 scores where
    the bootstrap cannot be trusted (:mod:`ragmeter.stats.exact`).
    """

    mean: float
    low: float
    high: float
    n: int
    rounds: int
    seed: int | None
    method: str
    rng: str
    confidence: float = DEFAULTS.confidence
    exact: tuple[float, float] | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain dict (JSON-ready); ``exact`` (and the method that made it) only when
        there is one, so ``low``, ``high`` and ``method`` stay the bootstrap's."""
        return with_exact(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Estimate:
        """The inverse of :meth:`to_dict`."""
        return read_exact(cls, data)

    def format(self, scale: float = 100, digits: int = 1) -> str:
        """``"85.0 [77.5, 92.5]"``: the mean and interval, multiplied by ``scale``."""
        return format_interval(self.mean, self.low, self.high, scale, digits)


def format_interval(
    mean: float, low: float, high: float, scale: float = 100, digits: int = 1
) -> str:
    """``"85.0 [77.5, 92.5]"``: every printed estimate goes through here (the one
    definition; :mod:`ragmeter.comparison.formatting` prints with it).

    :func:`ragmeter.comparison.formatting.format_estimate` picks ``scale`` and ``digits``
    from the metric (percent for shares); :meth:`Estimate.format` takes them as given.
    An interval too narrow to show at ``digits`` prints with more (:func:`spread_digits`).
    """
    digits = spread_digits((high - low) / 2, scale, digits)
    return f"{mean * scale:.{digits}f} {format_ends(low, high, scale, digits)}"


def format_ends(low: float, high: float, scale: float = 100, digits: int = 1) -> str:
    """``"[77.5, 92.5]"``: an interval's ends as :func:`format_interval` prints them, for a
    table that shows the mean in a column of its own."""
    digits = spread_digits((high - low) / 2, scale, digits)
    return f"[{low * scale:.{digits}f}, {high * scale:.{digits}f}]"


def spread_digits(half_width: float, scale: float, digits: int) -> int:
    """``digits``, or as many more (at most six) as a nonzero ``half_width`` needs not to
    print as 0: a MAP of ``0.0123 [0.0119, 0.0127]`` never reads ``0.012 [0.012, 0.013]``
    with ``± 0.000``. Widths that show at ``digits`` print as before."""
    half = abs(half_width) * scale
    wanted = digits
    while half > 0 and float(f"{half:.{wanted}f}") == 0.0 and wanted < digits + 6:
        wanted += 1
    return wanted


def _tails(confidence: float) -> tuple[float, float]:
    """Lower and upper tail quantiles; 0.95 gives exactly the literals 0.025 and 0.975."""
    lo = float(f"{(1.0 - confidence) / 2:.12g}")
    return lo, float(f"{1.0 - lo:.12g}")


def _order_stat(rounds: int, q: float) -> int:
    """``Math.floor(rounds * q)``, kept inside the array."""
    return min(max(math.floor(rounds * q), 0), rounds - 1)


def percentile_interval(
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
    rounds: int = DEFAULTS.rounds,
    seed: Seed = DEFAULTS.seed,
    method: Method = "percentile",
    confidence: float = DEFAULTS.confidence,
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
    rounds: int = DEFAULTS.rounds,
    seed: Seed = DEFAULTS.seed,
    method: Method = "percentile",
    confidence: float = DEFAULTS.confidence,
) -> list[Estimate]:
    """One :class:`Estimate` per row of ``matrix`` (series x questions).

    All rows share one set of resampling indices, drawn once; each row's result
    equals ``bootstrap(row, rounds, seed, ...)`` for an integer seed. A row of 0/1
    scores whose interval has zero width, or with few hits or misses, also carries
    its exact binomial interval (``exact``); ``low`` and ``high`` stay the bootstrap's.
    """
    m = as_matrix(matrix, "matrix")
    check_common(rounds, seed, method, confidence)
    n = m.shape[1]
    means = resampled_means(np.ascontiguousarray(m.T), n, rounds, seed)
    out = []
    for j in range(m.shape[0]):
        est = _estimate(m[j], means[:, j], rounds, seed, method, confidence)
        exact = exact_interval(m[j], est.low, est.high, confidence)
        out.append(est if exact is None else replace(est, exact=exact))
    return out


def _estimate(
    data: np.ndarray,
    means: np.ndarray,
    rounds: int,
    seed: Seed,
    method: str,
    confidence: float,
) -> Estimate:
    observed = seq_mean(data)
    low, high = percentile_interval(means, observed, data, method, confidence)
    return Estimate(
        mean=observed,
        low=low,
        high=high,
        n=int(data.size),
        rounds=rounds,
        seed=seed_record(seed),
        method=method,
        rng=rng_name(seed),
        confidence=confidence,
    )

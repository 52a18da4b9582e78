"""Sample sizes: the interval a larger question set would give, and the questions needed.

:func:`sample_size` resamples m questions from the n observed for each size m (m = n gives
the :func:`ragmeter.stats.bootstrap` interval); the two ``questions_*`` functions are
normal approximations for planning.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ragmeter.defaults import DEFAULTS
from ragmeter.errors import InputError
from ragmeter.stats.bootstrap import (
    _block_sums,
    _plan,
    percentile_interval,
    read_exact,
    resampled_means,
    seq_mean,
    with_exact,
)
from ragmeter.stats.draws import _rows_per_block, mulberry32_indices, rng_name
from ragmeter.stats.exact import exact_for
from ragmeter.stats.resample import long_rounds, tiled_sums_sizes
from ragmeter.stats.validate import (
    Seed,
    _as_vector,
    _check_int,
    as_matrix,
    check_common,
    check_fraction,
    seed_record,
)

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
    confidence: float = DEFAULTS.confidence
    exact: tuple[float, float] | None = None  # 0/1 scores: the exact interval at n, if shown

    def to_dict(self) -> dict[str, Any]:
        """Plain dict (JSON-ready); ``exact`` (with the method that made it) only when
        there is one, as :meth:`ragmeter.stats.Estimate.to_dict`."""
        return with_exact(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SizeRow:
        """The inverse of :meth:`to_dict`."""
        return read_exact(cls, data)


def sample_size(
    scores: ArrayLike,
    sizes: Sequence[int] | None = None,
    rounds: int = DEFAULTS.rounds,
    seed: Seed = DEFAULTS.seed,
    confidence: float = DEFAULTS.confidence,
) -> list[SizeRow]:
    """Percentile intervals a larger question set would give (default n, 2n, 4n, 8n).

    For each size m, every round draws m questions with replacement from the n
    observed ones; the interval is read off the resampled means as in
    :func:`bootstrap`. Each size starts the generator afresh from ``seed``, so
    the row for m = n equals ``bootstrap(scores, rounds, seed)``.

    For 0/1 scores each row also carries the exact binomial interval of the same hit
    rate at m questions (``m * hits / n`` hits, rounded) where
    :func:`ragmeter.stats.exact.exact_for` shows it instead of the bootstrap's, as the
    estimates do: 2 hits of 2 print ``[15.8, 100.0]``, not ``[100.0, 100.0]``.
    """
    x = _as_vector(scores, "scores")
    return sample_size_many(x[None, :], sizes, rounds, seed, confidence)[0]


def sample_size_many(
    matrix: ArrayLike,
    sizes: Sequence[int] | None = None,
    rounds: int = DEFAULTS.rounds,
    seed: Seed = DEFAULTS.seed,
    confidence: float = DEFAULTS.confidence,
) -> list[list[SizeRow]]:
    """:func:`sample_size` of each row of ``matrix`` (systems x questions).

    With an integer seed every system reads the same draws, so each size's draws are
    made once and added for every system at once; each row's result equals
    ``sample_size(row, sizes, rounds, seed, confidence)``, bit for bit. A numpy
    Generator is read system after system, as that many calls would read it.
    """
    m = as_matrix(matrix, "matrix")
    check_common(rounds, seed, "percentile", confidence)
    n = m.shape[1]
    sizes = [n, 2 * n, 4 * n, 8 * n] if sizes is None else list(sizes)
    if not sizes:
        raise InputError("sizes must not be empty")
    for size in sizes:
        _check_int(size, "each size", minimum=1)
    if isinstance(seed, np.random.Generator) and m.shape[0] > 1:
        return [sample_size_many(row[None, :], sizes, rounds, seed, confidence)[0] for row in m]
    values = np.ascontiguousarray(m.T)
    shared = _shared_stream_means(values, sizes, rounds, seed)
    # without one stream, each size is drawn afresh (a Generator: in the order of sizes)
    means = [
        shared[size] if shared else resampled_means(values, size, rounds, seed) for size in sizes
    ]
    return [
        _size_rows(m[j], sizes, [col[:, j] for col in means], rounds, seed, confidence)
        for j in range(m.shape[0])
    ]


def _size_rows(
    x: np.ndarray,
    sizes: list[int],
    means: list[np.ndarray],
    rounds: int,
    seed: Seed,
    confidence: float,
) -> list[SizeRow]:
    """One system's rows from its resampled means at each size."""
    n = x.size
    observed = seq_mean(x)
    binary = bool(np.all((x == 0.0) | (x == 1.0)))
    hits = int(np.count_nonzero(x))
    rows = []
    for size, col in zip(sizes, means, strict=True):
        low, high = percentile_interval(col, observed, x, "percentile", confidence)
        exact = exact_for(round(hits * size / n), size, low, high, confidence) if binary else None
        rows.append(
            SizeRow(
                n=size,
                mean=observed,
                low=low,
                high=high,
                half_width=(high - low) / 2.0,
                rounds=rounds,
                seed=seed_record(seed),
                rng=rng_name(seed),
                confidence=confidence,
                exact=exact,
            )
        )
    return rows


def _shared_stream_means(
    values: np.ndarray, sizes: Sequence[int], rounds: int, seed: Seed
) -> dict[int, np.ndarray] | None:
    """Resampled means (rounds, k) of the columns of ``values`` (n, k) for every size of
    ``sizes``, from one pass over the generator.

    Round ``b`` of size ``m`` uses outputs ``b*m .. (b+1)*m - 1``, so every size reads a
    prefix of the same stream: when each size divides the largest, blocks of whole rounds
    of the largest hold whole rounds of every size, and the stream is generated once
    instead of once per size (same draws, same sums). Long rounds go by tiles of the
    largest size's rounds (:func:`ragmeter.stats.resample.tiled_sums_sizes`). None when
    that does not apply.
    """
    top = max(sizes)
    distinct = sorted(set(sizes))
    if isinstance(seed, np.random.Generator) or len(distinct) < 2 or any(top % m for m in distinct):
        return None
    if long_rounds(top, seed):
        tiled = tiled_sums_sizes(values, distinct, rounds, int(seed), *_plan(values, top))
        return None if tiled is None else {m: tiled[m] / m for m in distinct}
    n = values.shape[0]
    plans = {m: _plan(values, m) for m in distinct}
    sums = {m: np.empty((rounds, values.shape[1])) for m in distinct}
    step = _rows_per_block(top)
    for row0 in range(0, rounds, step):
        rows = min(step, rounds - row0)
        first = row0 * top  # a multiple of every size
        flat = mulberry32_indices(seed, rows * top, first, n)
        for m in distinct:
            b0, b1 = first // m, min(rounds, (first + rows * top) // m)
            if b1 > b0:
                idx = flat[: (b1 - b0) * m].reshape(b1 - b0, m)
                sums[m][b0:b1] = _block_sums(values, idx, *plans[m])
    return {m: sums[m] / m for m in distinct}


def _z(p: float) -> float:
    return NormalDist().inv_cdf(p)


def _ceil(x: float) -> int:
    # Round away float noise such as 306.00000000000006 before taking the ceiling.
    return max(1, math.ceil(round(x, 9)))


def questions_for_half_width(
    scores: ArrayLike,
    half_width: float = DEFAULTS.half_width,
    confidence: float = DEFAULTS.confidence,
) -> int:
    """Questions needed for an interval of +/- ``half_width`` around the mean.

    ``n = ceil((z * sd / half_width) ** 2)`` with ``sd`` the sample standard
    deviation (n - 1) of the observed per-question scores and ``z`` the normal
    quantile for ``confidence`` (1.96 for 95%).
    """
    x = _as_vector(scores, "scores")
    if x.size < 2:
        raise InputError("need at least two scores to estimate their spread")
    check_fraction(confidence, "confidence")
    if not half_width > 0:
        raise InputError(f"half_width must be positive, got {half_width}")
    sd = float(np.std(x, ddof=1))
    z = _z(0.5 + confidence / 2.0)
    return _ceil((z * sd / half_width) ** 2)


def questions_to_separate(
    a: ArrayLike,
    b: ArrayLike,
    difference: float = DEFAULTS.difference,
    confidence: float = DEFAULTS.confidence,
    power: float = DEFAULTS.power,
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
    check_fraction(confidence, "confidence")
    check_fraction(power, "power")
    if not difference > 0:
        raise InputError(f"difference must be positive, got {difference}")
    sd = float(np.std(x - y, ddof=1))
    z = _z(0.5 + confidence / 2.0) + _z(power)
    return _ceil((z * sd / difference) ** 2)

"""Exact binomial intervals for 0/1 scores near 0% or 100%.

Resampling cannot invent a miss the test set never showed: 20 hits of 20 give a
bootstrap interval of [100, 100], although a true hit rate of 84% gives 20 of 20 one
time in 40. For 0/1 scores whose bootstrap interval has zero width, on fewer than :data:`SMALL`
questions, or with fewer than :data:`FEW` hits or misses (where the percentile interval
covers less than it says: 64% at 20 questions and a true rate of 95%, 87% at 40, 91% at
80; docs/statistics.md), :func:`clopper_pearson` gives the exact binomial interval,
which covers the true rate at least as often as its confidence for every rate and
every n. The bootstrap estimate is kept unchanged beside it.

When questions share documents (:mod:`ragmeter.stats.clusters`) the same rule reads
the *effective* number of questions (Korn and Graubard 1998): ``hits`` of ``n`` weigh
as ``hits * e / n`` of ``e`` (``e`` = questions over the design effect, floored at 1,
and narrowed again for few clusters), and :func:`clopper_pearson_effective` gives the
exact interval at those (non-integer) counts from the beta quantiles.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from ragmeter.defaults import DEFAULTS
from ragmeter.errors import InputError
from ragmeter.stats.validate import check_confidence

__all__ = [
    "FEW",
    "SMALL",
    "betainc",
    "binom_cdf",
    "clopper_pearson",
    "clopper_pearson_effective",
    "exact_for",
    "exact_interval",
    "questions_for_exact_half_width",
]

FEW = 5  # fewer hits (or misses) than this: the exact interval is shown
SMALL = 30  # fewer questions than this: the exact interval is shown
_ONE = int(np.float64(1.0).view(np.int64))  # 1.0's bits: positive doubles sort as integers


def _log_comb(n: int) -> np.ndarray:
    """log C(n, i) for i = 0..n."""
    i = np.arange(1, n + 1, dtype=np.float64)
    return np.concatenate([[0.0], np.cumsum(np.log((n - i + 1) / i))])


def binom_cdf(k: int, n: int, p: float) -> float:
    """P(X <= k) for X ~ Binomial(n, p), summed in log space."""
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    if p <= 0.0:
        return 1.0
    if p >= 1.0:
        return 0.0
    return float(_cdf(_log_comb(n)[: k + 1], k, n, p))


def _cdf(log_c: np.ndarray, k: int, n: int, p: float) -> float:
    i = np.arange(k + 1, dtype=np.float64)
    terms = log_c + i * math.log(p) + (n - i) * math.log1p(-p)
    top = float(np.max(terms))
    return min(1.0, math.exp(top) * float(np.sum(np.exp(terms - top))))


def _as_float(bits: int) -> float:
    return float(np.int64(bits).view(np.float64))


def _boundary(holds) -> tuple[float, float]:
    """The adjacent doubles ``(a, b)`` in [0, 1] where ``holds`` turns from true to
    false (``holds`` true at 0, false at 1, monotone): bisection on the doubles' bit
    patterns, so the ends are exact to the last bit at any scale, 1e-15 as 0.5."""
    a, b = 0, _ONE
    while b - a > 1:
        mid = (a + b) // 2
        if holds(_as_float(mid)):
            a = mid
        else:
            b = mid
    return _as_float(a), _as_float(b)


def clopper_pearson(
    hits: int, n: int, confidence: float = DEFAULTS.confidence
) -> tuple[float, float]:
    """The exact (Clopper-Pearson) interval for a hit rate: ``hits`` of ``n``.

    The lower end is the rate at which ``hits`` or more occur with probability
    ``(1 - confidence) / 2`` (0 when there are no hits), the upper end the rate at
    which ``hits`` or fewer do (1 when every question is a hit): the beta quantiles
    ``Beta(alpha/2; k, n - k + 1)`` and ``Beta(1 - alpha/2; k + 1, n - k)``, found by
    bisection on the binomial distribution function (:func:`_boundary`), to the last
    bit.
    """
    if n < 1 or not 0 <= hits <= n:
        raise InputError(f"hits must lie between 0 and n >= 1, got {hits} of {n}")
    check_confidence(confidence)
    tail = (1.0 - confidence) / 2.0
    log_c = _log_comb(n)
    low = 0.0
    if hits > 0:  # P(X >= hits | p) = 1 - P(X <= hits - 1 | p) rises with p
        low = _boundary(lambda p: 1.0 - _cdf(log_c[:hits], hits - 1, n, p) < tail)[1]
    high = 1.0
    if hits < n:  # P(X <= hits | p) falls with p; the interval is closed at both ends
        high = _boundary(lambda p: _cdf(log_c[: hits + 1], hits, n, p) >= tail)[0]
    return low, high


def betainc(a: float, b: float, x: float) -> float:
    """Regularised incomplete beta I_x(a, b) (continued fraction, Numerical Recipes)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    if x > (a + 1.0) / (a + b + 2.0):
        return 1.0 - betainc(b, a, 1.0 - x)
    f, c, d = 1.0, 1.0, 0.0
    for i in range(400):
        m = i // 2
        if i == 0:
            num = 1.0
        elif i % 2 == 0:
            num = (m * (b - m) * x) / ((a + 2 * m - 1) * (a + 2 * m))
        else:
            num = -((a + m) * (a + b + m) * x) / ((a + 2 * m) * (a + 2 * m + 1))
        d = 1.0 + num * d
        d = 1.0 / (d if abs(d) > 1e-300 else 1e-300)
        c = 1.0 + num / c
        c = c if abs(c) > 1e-300 else 1e-300
        f *= c * d
        if abs(1.0 - c * d) < 1e-15:
            break
    return front * (f - 1.0) / a


def clopper_pearson_effective(
    hits: float, n: float, confidence: float = DEFAULTS.confidence
) -> tuple[float, float]:
    """The Clopper-Pearson interval at counts that need not be whole: ``hits`` of ``n``
    effective questions (``0 <= hits <= n``, ``n > 0``), as the beta quantiles
    ``Beta(alpha/2; hits, n - hits + 1)`` and ``Beta(1 - alpha/2; hits + 1, n - hits)``
    (0 and 1 at no hits and no misses), by bisection on the doubles. At whole counts it
    is :func:`clopper_pearson`'s interval (to rounding)."""
    if not n > 0 or not 0.0 <= hits <= n:
        raise InputError(f"hits must lie between 0 and n > 0, got {hits} of {n}")
    check_confidence(confidence)
    tail = (1.0 - confidence) / 2.0
    low = 0.0
    if hits > 0:
        low = _boundary(lambda p: betainc(hits, n - hits + 1.0, p) < tail)[1]
    high = 1.0
    if hits < n:
        high = _boundary(lambda p: betainc(hits + 1.0, n - hits, p) < 1.0 - tail)[0]
    return low, high


def exact_interval(
    scores: ArrayLike,
    low: float,
    high: float,
    confidence: float = DEFAULTS.confidence,
    effective: float | None = None,
) -> tuple[float, float] | None:
    """The exact interval to show beside a bootstrap ``[low, high]``, or None.

    Only for 0/1 scores, and only where the bootstrap is not to be trusted: its
    interval has zero width, there are fewer than :data:`SMALL` questions, or fewer
    than :data:`FEW` of them are hits or misses (``effective``: questions that share
    documents, read at the counts they weigh as; :func:`exact_for`).
    """
    x = np.asarray(scores, dtype=np.float64)
    if x.size == 0 or not bool(np.all((x == 0.0) | (x == 1.0))):
        return None
    return exact_for(int(np.count_nonzero(x)), int(x.size), low, high, confidence, effective)


def exact_for(
    hits: int,
    n: int,
    low: float,
    high: float,
    confidence: float = DEFAULTS.confidence,
    effective: float | None = None,
) -> tuple[float, float] | None:
    """The rule of :func:`exact_interval` on counts: ``hits`` of ``n`` 0/1 scores whose
    bootstrap interval is ``[low, high]``. The one place that decides between the
    exact interval and the bootstrap's: the estimates (cluster-aware ones too), the
    sample-size rows (at every projected number of questions) and the plan all ask here.

    ``effective`` (questions that share documents: fewer than ``n``,
    :func:`ragmeter.stats.clusters.effective_questions`) applies the rule to the counts
    they weigh as, ``hits * effective / n`` of ``effective``, and gives
    :func:`clopper_pearson_effective` there: never narrower than the question-level
    exact interval, since fewer effective questions only widen it."""
    if effective is not None and effective < n:
        x = hits * effective / n
        if low != high and effective >= SMALL and min(x, effective - x) >= FEW:
            return None
        return clopper_pearson_effective(x, effective, confidence)
    if low != high and n >= SMALL and min(hits, n - hits) >= FEW:
        return None
    return clopper_pearson(hits, n, confidence)


def questions_for_exact_half_width(
    hits: int, n: int, half_width: float, confidence: float = DEFAULTS.confidence
) -> int | None:
    """Questions at which the exact interval of a system that hits on every question
    (``hits == n``) or on none (``hits == 0``), as now, narrows to ``± half_width``
    (half its width); None for other systems, where the normal approximation of
    :func:`ragmeter.stats.questions_for_half_width` applies.

    With every question a hit the interval is ``[(alpha/2)**(1/m), 1]`` at ``m``
    questions, so ``m = ceil(log(alpha/2) / log(1 - 2 * half_width))``, checked against
    :func:`clopper_pearson` itself (no miss: the mirror image).
    """
    if n < 1 or hits not in (0, n):
        return None
    if not half_width > 0:
        raise InputError(f"half_width must be positive, got {half_width}")
    if half_width >= 0.5:
        return 1
    tail = (1.0 - confidence) / 2.0
    m = max(1, math.ceil(math.log(tail) / math.log1p(-2.0 * half_width)))

    def half(q: int) -> float:
        lo, hi = clopper_pearson(q if hits else 0, q, confidence)
        return (hi - lo) / 2.0

    while m > 1 and half(m - 1) <= half_width:  # rounding in the logarithms: one step
        m -= 1
    while half(m) > half_width:
        m += 1
    return m

"""Exact paired tests and the intervals that invert them.

McNemar's exact test and Tango's score interval for 0/1 scores; the seeded sign-flip
test and its inverted interval for graded scores. :mod:`ragmeter.comparison.verdicts` builds
comparison tables from these; each function here is one test or one inversion.
"""

from __future__ import annotations

import math
from functools import lru_cache
from statistics import NormalDist

import numpy as np
from numpy.typing import ArrayLike

from ragmeter import stats
from ragmeter.defaults import DEFAULTS
from ragmeter.errors import InputError
from ragmeter.stats.draws import _sign_blocks
from ragmeter.stats.paired import _TIE

__all__ = [
    "Flips",
    "flip_ends",
    "is_binary",
    "mcnemar_exact",
    "min_differing",
    "rounds_for_level",
    "signflip_interval",
    "tango_ends",
    "tango_interval",
    "tango_z",
]

_ITER = 40  # bisection steps: brackets of width <= 4 end up below 4e-12


@lru_cache(maxsize=65536)
def mcnemar_exact(wins: int, losses: int) -> float:
    """Two-sided exact McNemar p-value: the binomial test of ``wins`` among the differing.

    ``p = min(1, 2 * P(X <= min(wins, losses)))`` for ``X ~ Binomial(wins + losses, 1/2)``;
    1 when no question differs. Exact integers up to 2,000 differing questions, then
    the same sum in log space (relative error about 1e-12).
    """
    if wins < 0 or losses < 0:
        raise InputError("wins and losses must not be negative")
    n = wins + losses
    if n == 0:
        return 1.0
    k = min(wins, losses)
    if n <= 2000:
        tail = sum(math.comb(n, i) for i in range(k + 1))
        return min(1.0, 2 * tail / 2**n)
    # Large counts: the same sum in log space (relative error about 1e-12).
    i = np.arange(k + 1, dtype=np.float64)
    logs = (
        math.lgamma(n + 1)
        - np.array([math.lgamma(v + 1) + math.lgamma(n - v + 1) for v in i])
        - n * math.log(2.0)
    )
    top = float(np.max(logs))
    return min(1.0, 2.0 * math.exp(top) * float(np.sum(np.exp(logs - top))))


def min_differing(level: float) -> int:
    """Fewest differing questions that an exact paired test can separate at ``level``.

    The most extreme split, all differing questions going one way, has two-sided
    p = 2 * 2**-N; this is the smallest N with that below ``level``.
    """
    if not 0.0 < level < 1.0:
        raise InputError(f"level must lie strictly between 0 and 1, got {level}")
    n = 1
    while 2.0 * 0.5**n >= level:
        n += 1
    return n


def tango_z(wins: ArrayLike, losses: ArrayLike, n: ArrayLike, delta: ArrayLike) -> np.ndarray:
    """Tango's score statistic for ``H0: P(win) - P(loss) = delta`` on paired 0/1 scores.

    ``Z = (w - l - n*delta) / sqrt(n * (2*q + delta*(1 - delta)))`` where ``q`` is the
    maximum-likelihood P(loss) under the null (Tango 1998, Statistics in Medicine
    17:891-908), the root of ``2n q^2 + B q + C`` with
    ``B = -w - l + (2n - w + l) * delta`` and ``C = -l * delta * (1 - delta)``.
    0 where numerator and variance both vanish (nothing differs and delta = 0).
    """
    w = np.asarray(wins, dtype=np.float64)
    lo = np.asarray(losses, dtype=np.float64)
    nn = np.asarray(n, dtype=np.float64)
    d = np.asarray(delta, dtype=np.float64)
    a = 2.0 * nn
    b = -w - lo + (2.0 * nn - w + lo) * d
    c = -lo * d * (1.0 - d)
    q = (np.sqrt(np.maximum(b * b - 4.0 * a * c, 0.0)) - b) / (2.0 * a)
    var = nn * (2.0 * q + d * (1.0 - d))
    num = w - lo - nn * d
    with np.errstate(divide="ignore", invalid="ignore"):
        z = num / np.sqrt(np.maximum(var, 0.0))
    z = np.where(var > 1e-300, z, np.where(np.abs(num) < 1e-12, 0.0, np.copysign(np.inf, num)))
    return z


def tango_interval(
    wins: int, losses: int, n: int, level: float = 0.05, reject_zero: bool | None = None
) -> tuple[float, float]:
    """Tango's score interval for ``P(win) - P(loss)`` at two-sided ``level``.

    ``reject_zero`` fixes which side of 0 the ends are searched on (the decision of
    another test, e.g. McNemar's exact one); by default Tango's own test at 0 decides.
    """
    lo, hi = tango_ends(
        np.array([wins]),
        np.array([losses]),
        np.array([n]),
        np.array([level]),
        None if reject_zero is None else np.array([reject_zero]),
    )
    return float(lo[0]), float(hi[0])


def tango_ends(
    w: np.ndarray, lo: np.ndarray, n: np.ndarray, level: np.ndarray, reject: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    crit = np.array([NormalDist().inv_cdf(1.0 - float(a) / 2.0) for a in level])
    est = (w - lo) / n

    def accepts(d: np.ndarray, idx: np.ndarray) -> np.ndarray:
        return np.abs(tango_z(w[idx], lo[idx], n[idx], d)) <= crit[idx]

    if reject is None:
        reject = ~accepts(np.zeros_like(est), np.arange(est.size))
    return _ends(est, reject, accepts, np.full(est.size, -1.0), np.full(est.size, 1.0))


def _ends(
    est: np.ndarray,
    reject: np.ndarray,
    accepts,
    low_bound: np.ndarray,
    high_bound: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Interval ends by bisection, each on the side of 0 that ``reject`` fixes.

    ``accepts(deltas, idx)`` says whether the test of pair ``idx[i]`` accepts
    ``deltas[i]``. The estimate is always accepted. For a rejected pair with a
    positive estimate the lower end is searched in (0, est], so it is above 0;
    for an accepted pair it is searched in [bound, min(0, est)], so it is at most 0.
    Mirror-wise for the upper end. An end whose bound is still accepted is the bound.
    """
    k = est.size
    pos = est > 0
    neg = est < 0
    # Lower ends: bracket (rejected, accepted).
    lo_rej = np.where(reject & pos, 0.0, low_bound)
    lo_acc = np.where(reject & pos, est, np.minimum(est, 0.0))
    hi_rej = np.where(reject & neg, 0.0, high_bound)
    hi_acc = np.where(reject & neg, est, np.maximum(est, 0.0))
    idx = np.concatenate([np.arange(k), np.arange(k)])
    rej = np.concatenate([lo_rej, hi_rej])
    acc = np.concatenate([lo_acc, hi_acc])
    # An outer bound the test still accepts is the end itself.
    outer = np.concatenate([~(reject & pos), ~(reject & neg)])
    if outer.any():
        at_bound = accepts(rej[outer], idx[outer])
        sel = np.flatnonzero(outer)[at_bound]
        acc[sel] = rej[sel]
    for _ in range(_ITER):
        mid = (rej + acc) / 2.0
        ok = accepts(mid, idx)
        acc = np.where(ok, mid, acc)
        rej = np.where(ok, rej, mid)
    return acc[:k] + 0.0, acc[k:] + 0.0


# --------------------------------------------------------------------------- sign-flip inversion


class Flips:
    """Seeded sign flips, summarised so the test of any shift is cheap.

    For differences ``d`` (n, k) and flips ``s`` (rounds, n), the flipped sum of
    ``d - delta`` is ``s @ d - delta * sum(s)``: ``a = s @ d`` and ``b = sum(s)``
    are all a test of any ``delta`` needs. The flips are the same mulberry32
    stream as :func:`ragmeter.stats.compare_all` (after the resampling draws), so
    at ``delta = 0`` the p-value equals its ``p_value``. With ``clusters`` (a code
    0..G-1 per question) round ``b`` flips whole clusters: the G signs are the
    stream after ``rounds * G`` draws, and every question of a cluster takes its sign.

    :meth:`of_pairs` flips the systems' own scores instead: a pair's flipped sum is
    the difference of its two systems' (the flips are linear), so m systems cost m
    flipped sums, not one per pair, and nothing of size rounds x pairs is held.
    :meth:`column` and :meth:`diff` give one comparison's flipped sums and differences.
    """

    def __init__(
        self,
        diffs: np.ndarray,
        rounds: int,
        seed: stats.Seed,
        clusters: np.ndarray | None = None,
        minus: np.ndarray | None = None,
        plus: np.ndarray | None = None,
    ) -> None:
        n, cols = diffs.shape
        self.rounds = rounds
        self.n = n
        self._x = diffs
        self._plus = np.arange(cols) if plus is None else np.asarray(plus, dtype=np.intp)
        self._minus = None if minus is None else np.asarray(minus, dtype=np.intp)
        self._flipped = np.empty((rounds, cols))
        self.b = np.empty(rounds)
        rows_of, weights = diffs, np.ones(n)
        if clusters is not None:  # one sign per cluster: whole documents flip together
            codes = np.asarray(clusters, dtype=np.intp)
            groups = int(codes.max()) + 1
            rows_of = np.zeros((groups, cols))
            np.add.at(rows_of, codes, diffs)
            weights = np.bincount(codes, minlength=groups).astype(np.float64)
        for row0, signs in _sign_blocks(rows_of.shape[0], rounds, seed):
            rows = signs.shape[0]
            self._flipped[row0 : row0 + rows] = signs @ rows_of
            self.b[row0 : row0 + rows] = signs @ weights if clusters is not None else signs.sum(1)
        k = self._plus.size
        self.total = np.array([np.cumsum(self.diff(c))[-1] for c in range(k)]).reshape(k)
        self.spread = np.array([np.sum(np.abs(self.diff(c))) for c in range(k)]).reshape(k)

    @classmethod
    def of_pairs(
        cls,
        matrix: np.ndarray,
        pairs: list[tuple[int, int]],
        rounds: int,
        seed: stats.Seed,
        clusters: np.ndarray | None = None,
    ) -> Flips:
        """Flips of every pair ``(i, j)`` of the (systems, n) ``matrix``: row i minus row j."""
        plus = np.array([i for i, _ in pairs], dtype=np.intp)
        minus = np.array([j for _, j in pairs], dtype=np.intp)
        x = np.ascontiguousarray(np.asarray(matrix, dtype=np.float64).T)
        return cls(x, rounds, seed, clusters, minus=minus, plus=plus)

    @property
    def pairs(self) -> int:
        """How many comparisons these flips test."""
        return int(self._plus.size)

    def diff(self, c: int) -> np.ndarray:
        """Comparison ``c``'s per-question differences (n)."""
        if self._minus is None:
            return self._x[:, self._plus[c]]
        return self._x[:, self._plus[c]] - self._x[:, self._minus[c]] + 0.0

    def column(self, c: int) -> np.ndarray:
        """Comparison ``c``'s flipped sum in every round (rounds)."""
        if self._minus is None:
            return self._flipped[:, self._plus[c]]
        return self._flipped[:, self._plus[c]] - self._flipped[:, self._minus[c]]

    def p_values(self, delta: np.ndarray, idx: np.ndarray) -> np.ndarray:
        """p-value of ``H0: mean = delta[i]`` for pair ``idx[i]``."""
        hits = np.empty(len(idx), dtype=np.int64)
        for i, c in enumerate(np.asarray(idx).tolist()):  # a pair's rounds at a time
            if delta[i] == 0:
                observed, spread = abs(self.total[c]), self.spread[c]
            else:
                observed = abs(self.total[c] - self.n * delta[i])
                spread = np.sum(np.abs(self.diff(c) - delta[i]))
            a = self.column(c)
            flipped = np.abs(a if delta[i] == 0 else a - self.b * delta[i])
            hits[i] = np.count_nonzero(flipped >= observed - _TIE * spread)
        return (hits + 1) / (self.rounds + 1)


def signflip_interval(
    a: ArrayLike,
    b: ArrayLike,
    level: float = 0.05,
    rounds: int = DEFAULTS.rounds,
    seed: stats.Seed = DEFAULTS.seed,
) -> tuple[float, float, float]:
    """``(p, low, high)``: sign-flip p-value of mean(a - b) = 0 and its inverted interval.

    The interval holds every shift ``delta`` whose sign-flip test of ``a - b - delta``
    has p >= ``level``, found by bisection with the same flips for every shift.
    """
    d = (np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64))[:, None] + 0.0
    flips = Flips(d, rounds, seed)
    p = float(flips.p_values(np.zeros(1), np.zeros(1, dtype=np.intp))[0])
    lo, hi = flip_ends(flips, np.array([p < level]), np.array([level]))
    return p, float(lo[0]), float(hi[0])


def flip_ends(flips: Flips, reject: np.ndarray, level: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The inverted sign-flip interval, exactly, on the side of 0 that ``reject`` fixes.

    Round ``b`` counts against ``H0: mean = delta`` when ``|a_b - delta*b_b| >=
    |D - n*delta|`` (``D`` the observed sum). Since ``|b_b| <= n`` this holds on one
    interval ``[L_b, U_b]`` around the estimate, whose ends are the roots
    ``(D - a_b) / (n - b_b)`` and ``(D + a_b) / (n + b_b)`` (every delta when all
    signs agree). So the p-value rises up to the estimate and falls after it, the
    accepted shifts form an interval, and its lower end is the h-th smallest ``L_b``
    (upper: the h-th largest ``U_b``), h being the fewest counting rounds that give
    p >= level.
    """
    n, rounds = flips.n, flips.rounds
    total = flips.total
    est = total / n
    b = flips.b
    every = np.abs(b) >= n
    lows = np.empty(est.size)
    highs = np.empty(est.size)
    for c in range(est.size):  # a pair at a time: memory of one pair's rounds, not every pair's
        span = max(1.0, float(np.max(np.abs(flips.diff(c)))))  # [0, 1] scores: |mean| <= 1
        h = _hits_needed(float(level[c]), rounds)
        if h <= 0:
            lows[c], highs[c] = -span, span
            continue
        a = flips.column(c)
        with np.errstate(divide="ignore", invalid="ignore"):
            r1 = (total[c] - a) / (n - b)
            r2 = (total[c] + a) / (n + b)
        low_b = np.where(every, -np.inf, np.minimum(r1, r2))
        high_b = np.where(every, np.inf, np.maximum(r1, r2))
        lows[c] = max(-span, np.partition(low_b, h - 1)[h - 1])
        highs[c] = min(span, -np.partition(-high_b, h - 1)[h - 1])
    # The decision at 0 (with the tie tolerance of the p-value) fixes each end's side.
    pos, neg = est > 0, est < 0
    lows = np.where(reject & pos, np.maximum(lows, np.nextafter(0.0, 1.0)), lows)
    highs = np.where(reject & neg, np.minimum(highs, -np.nextafter(0.0, 1.0)), highs)
    lows = np.where(~(reject & pos), np.minimum(lows, 0.0), lows)
    highs = np.where(~(reject & neg), np.maximum(highs, 0.0), highs)
    return lows + 0.0, highs + 0.0


def rounds_for_level(level: float) -> int:
    """Fewest rounds at which a sign-flip test can reject at ``level``, so that its
    inverted interval has ends of its own (with fewer, it is the whole scale)."""
    rounds = max(1, math.floor(1.0 / level) - 2)
    for _ in range(8):  # the estimate is a step or two off where floats round
        if _hits_needed(level, rounds) >= 1:
            break
        rounds += 1
    return rounds


def _hits_needed(level: float, rounds: int) -> int:
    """Fewest counting rounds h with (h + 1) / (rounds + 1) >= level."""
    h = max(0, math.ceil(level * (rounds + 1)) - 1)
    while (h + 1) / (rounds + 1) < level:
        h += 1
    while h > 0 and h / (rounds + 1) >= level:
        h -= 1
    return h


# --------------------------------------------------------------------------- families


def is_binary(matrix: ArrayLike) -> bool:
    """True when every score is 0 or 1 (hit rates and other yes/no scores)."""
    m = np.asarray(matrix, dtype=np.float64)
    return bool(np.all((m == 0.0) | (m == 1.0)))

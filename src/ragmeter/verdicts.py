"""Paired comparisons whose verdict, interval and p-value come from one decision.

A table of comparisons answers "which differences are real?" for a *family* of
pairs: every pair of systems, every system against one baseline, or pairs named
in advance. :func:`compare_family` applies one decision rule to the whole family
and builds each row so that it cannot contradict itself:

* ``adjust="holm"`` (the default). Each pair gets an exact paired test (McNemar's
  exact test when the scores are 0/1, else the seeded sign-flip test), Holm's
  step-down adjustment over the family, and a verdict ``better`` exactly when the
  adjusted p-value is below ``alpha``. The interval is the test inverted at the
  level Holm used for that pair (``alpha / (m - r)``), searched on the side of 0
  the decision fixed: a ``better`` row's interval lies strictly on one side of 0,
  a tie's interval contains 0 (an end exactly at 0 is a tie).
* ``adjust="none"``: the seed's per-pair rule, bit for bit: the verdict reads the
  95% paired percentile bootstrap interval (``pairedDifference``), with no
  adjustment for the number of pairs and no p-value.

:func:`fmt_end` and :func:`fmt_p` print numbers without rounding across the
decision boundary (an end of +0.03 points is not shown as +0.0, a p of 0.04996
not as 0.05), so the rendered row agrees with itself too.

See ``docs/statistics.md`` ("One rule per table").

Size: the decision rule, the test inversion that gives each row its interval and the
formatting that must not round across the decision are one argument; the module is long
because each step is spelled out and checked.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from statistics import NormalDist
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike

from ragmeter import stats
from ragmeter.errors import InputError
from ragmeter.metrics import is_share

__all__ = [
    "ADJUSTMENTS",
    "Row",
    "Rule",
    "Verdicts",
    "compare_family",
    "fmt_end",
    "fmt_p",
    "identical_groups",
    "is_binary",
    "mcnemar_exact",
    "min_differing",
    "parse_pairs",
    "signflip_interval",
    "tango_interval",
    "tango_z",
]

Adjust = Literal["holm", "none"]
ADJUSTMENTS = ("holm", "none")
_ITER = 40  # bisection steps: brackets of width <= 4 end up below 4e-12


# --------------------------------------------------------------------------- exact tests


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
    lo, hi = _tango_ends(
        np.array([wins]),
        np.array([losses]),
        np.array([n]),
        np.array([level]),
        None if reject_zero is None else np.array([reject_zero]),
    )
    return float(lo[0]), float(hi[0])


def _tango_ends(
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


class _Flips:
    """Seeded sign flips, summarised so the test of any shift is cheap.

    For differences ``d`` (n, k) and flips ``s`` (rounds, n), the flipped sum of
    ``d - delta`` is ``s @ d - delta * sum(s)``: ``a = s @ d`` and ``b = sum(s)``
    are all a test of any ``delta`` needs. The flips are the same mulberry32
    stream as :func:`ragmeter.stats.compare_all` (after the resampling draws), so
    at ``delta = 0`` the p-value equals its ``p_value``.
    """

    def __init__(self, diffs: np.ndarray, rounds: int, seed: stats.Seed) -> None:
        n, k = diffs.shape
        self.diffs = diffs
        self.rounds = rounds
        self.a = np.empty((rounds, k))
        self.b = np.empty(rounds)
        for row0, signs in stats._sign_blocks(n, rounds, seed):
            rows = signs.shape[0]
            self.a[row0 : row0 + rows] = signs @ diffs
            self.b[row0 : row0 + rows] = signs.sum(axis=1)
        self.total = np.cumsum(diffs, axis=0)[-1]  # left-to-right, as compare_all
        self.n = n

    def p_values(self, delta: np.ndarray, idx: np.ndarray) -> np.ndarray:
        """p-value of ``H0: mean = delta[i]`` for pair ``idx[i]``."""
        d, a = self.diffs[:, idx], self.a[:, idx]
        if np.all(delta == 0):
            observed = np.abs(self.total[idx])
            spread = np.sum(np.abs(d), axis=0)
            flipped = np.abs(a)
        else:
            observed = np.abs(self.total[idx] - self.n * delta)
            spread = np.sum(np.abs(d - delta), axis=0)
            flipped = np.abs(a - self.b[:, None] * delta)
        threshold = observed - stats._TIE * spread
        hits = np.count_nonzero(flipped >= threshold, axis=0)
        return (hits + 1) / (self.rounds + 1)


def signflip_interval(
    a: ArrayLike,
    b: ArrayLike,
    level: float = 0.05,
    rounds: int = 10_000,
    seed: stats.Seed = 1,
) -> tuple[float, float, float]:
    """``(p, low, high)``: sign-flip p-value of mean(a - b) = 0 and its inverted interval.

    The interval holds every shift ``delta`` whose sign-flip test of ``a - b - delta``
    has p >= ``level``, found by bisection with the same flips for every shift.
    """
    d = (np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64))[:, None] + 0.0
    flips = _Flips(d, rounds, seed)
    p = float(flips.p_values(np.zeros(1), np.zeros(1, dtype=np.intp))[0])
    lo, hi = _flip_ends(flips, np.array([p < level]), np.array([level]))
    return p, float(lo[0]), float(hi[0])


def _flip_ends(
    flips: _Flips, reject: np.ndarray, level: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
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
    a = flips.a
    b = flips.b[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        r1 = (total - a) / (n - b)
        r2 = (total + a) / (n + b)
    every = np.abs(b) >= n
    low_b = np.where(every, -np.inf, np.minimum(r1, r2))
    high_b = np.where(every, np.inf, np.maximum(r1, r2))
    span = np.maximum(1.0, np.max(np.abs(flips.diffs), axis=0))  # [0, 1] scores: |mean| <= 1
    lows = np.empty(est.size)
    highs = np.empty(est.size)
    for c in range(est.size):
        h = _hits_needed(float(level[c]), rounds)
        if h <= 0:
            lows[c], highs[c] = -span[c], span[c]
            continue
        lows[c] = max(-span[c], np.partition(low_b[:, c], h - 1)[h - 1])
        highs[c] = min(span[c], -np.partition(-high_b[:, c], h - 1)[h - 1])
    # The decision at 0 (with the tie tolerance of the p-value) fixes each end's side.
    pos, neg = est > 0, est < 0
    lows = np.where(reject & pos, np.maximum(lows, np.nextafter(0.0, 1.0)), lows)
    highs = np.where(reject & neg, np.minimum(highs, -np.nextafter(0.0, 1.0)), highs)
    lows = np.where(~(reject & pos), np.minimum(lows, 0.0), lows)
    highs = np.where(~(reject & neg), np.maximum(highs, 0.0), highs)
    return lows + 0.0, highs + 0.0


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


def identical_groups(matrices: Sequence[ArrayLike], names: Sequence[str]) -> list[list[str]]:
    """Groups (of two or more) of systems with the same score on every question and metric.

    ``matrices`` are (systems x questions) arrays with rows in ``names`` order. Each
    group lists its systems in ``names`` order; the first stands for the group.
    """
    rows = [
        np.concatenate([np.asarray(m, dtype=np.float64)[i] for m in matrices])
        for i in range(len(names))
    ]
    groups: list[list[int]] = []
    for i, row in enumerate(rows):
        for g in groups:
            if np.array_equal(rows[g[0]], row):
                g.append(i)
                break
        else:
            groups.append([i])
    return [[names[i] for i in g] for g in groups if len(g) > 1]


def parse_pairs(spec: str | Sequence[str] | Sequence[Sequence[str]]) -> list[tuple[str, str]]:
    """``"A:B,C:D"`` (or ``["A:B", ...]`` or ``[["A", "B"], ...]``) as a list of pairs."""
    items: list[Any] = (
        [s for s in spec.split(",") if s.strip()] if isinstance(spec, str) else list(spec)
    )
    out: list[tuple[str, str]] = []
    for item in items:
        if isinstance(item, str):
            parts = [p.strip() for p in item.split(":")]
        else:
            parts = [str(p).strip() for p in item]
        if len(parts) != 2 or not all(parts):
            raise InputError(f"a planned pair is written A:B, got {item!r}")
        if parts[0] == parts[1]:
            raise InputError(f"a planned pair needs two different systems, got {item!r}")
        out.append((parts[0], parts[1]))
    if not out:
        raise InputError("no planned pairs given; write them as A:B,C:D")
    return out


@dataclass(frozen=True)
class Rule:
    """The decision rule of one table, and everything needed to reproduce it."""

    adjust: str
    alpha: float
    family: str
    pairs: int
    test: str
    interval: str
    seed: int | None
    rounds: int
    rng: str
    identical: list[list[str]] = field(default_factory=list)

    @property
    def header(self) -> str:
        """One line naming the rule and the family, for the top of a table."""
        plural = "" if self.pairs == 1 else "s"
        if self.adjust == "none":
            return (
                f"Rule: the seed's per-pair rule: 'better' when the pair's "
                f"{(1 - self.alpha) * 100:g}% paired percentile "
                f"interval excludes 0; no adjustment for the {self.pairs} pair{plural} "
                f"({self.family})"
            )
        if self.pairs == 1:
            return (
                f"Rule: a family of one pair ({self.family}), so no adjustment: 'better' when "
                f"p < {self.alpha:g}; {self.test}; interval: {self.interval}"
            )
        return (
            f"Rule: Holm over {self.pairs} pairs ({self.family}): 'better' when the adjusted "
            f"p < {self.alpha:g}; {self.test}; interval: {self.interval} at the level Holm "
            f"used for the pair"
        )

    @property
    def p_label(self) -> str | None:
        if self.adjust == "none":
            return None
        return "p" if self.pairs == 1 else "p (Holm)"

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["header"] = self.header
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Rule:
        """The inverse of :meth:`to_dict` (``header`` is derived, so dropped)."""
        return stats.from_fields(cls, data)


@dataclass(frozen=True)
class Row:
    """One comparison, A - B. ``p`` is the rule's p-value (None under ``adjust="none"``).

    ``p_value`` is the unadjusted p-value of the pair's test, ``level`` the two-sided
    level its interval was built at (the difference's ``confidence`` is 1 - level),
    ``differ`` the questions where A and B scored differently and ``needed`` the
    fewest differing questions that could be separated at ``level``.
    """

    a: str
    b: str
    difference: stats.Estimate
    p_value: float
    p: float | None
    level: float
    wins: int
    ties: int
    losses: int
    differ: int
    needed: int
    separated: bool
    identical: bool
    verdict: str

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["p_holm"] = self.p  # the name earlier summaries used
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any], *, ruled: bool = True) -> Row:
        """The inverse of :meth:`to_dict`; also reads the rows of summaries written
        before the decision rule was recorded (``ruled=False``: no ``p``, ``level``,
        ``differ``..., the verdict taken from the interval)."""
        d = dict(data)
        diff = stats.Estimate.from_dict(d["difference"])
        if "p" not in d:  # an earlier summary: p_holm beside p_value, no rule
            d["p"] = d.get("p_holm") if ruled or d.get("p_holm") is not None else d["p_value"]
        d.setdefault("level", round(1.0 - diff.confidence, 12))
        d.setdefault("differ", int(d["wins"]) + int(d["losses"]))
        d.setdefault("needed", 0)
        d.setdefault("separated", diff.low > 0 or diff.high < 0)
        d.setdefault("identical", False)
        d.setdefault("verdict", "")
        d["difference"] = diff
        return stats.from_fields(cls, d)


@dataclass(frozen=True)
class Verdicts:
    """A table of comparisons under one :class:`Rule`."""

    rule: Rule
    rows: list[Row]

    def to_dict(self) -> dict[str, Any]:
        return {"rule": self.rule.to_dict(), "rows": [r.to_dict() for r in self.rows]}


def _family(
    names: list[str],
    baseline: str | None,
    pairs: Sequence[tuple[str, str]] | None,
    groups: list[list[str]],
) -> tuple[str, list[tuple[int, int]], list[tuple[int, int]]]:
    """Family label, compared pairs and identical pairs (as row indices)."""
    pos = {s: i for i, s in enumerate(names)}
    rep = {s: g[0] for g in groups for s in g}

    def known(s: str) -> int:
        if s not in pos:
            raise InputError(f"unknown system {s!r}; choose one of {names}")
        return pos[s]

    compared: list[tuple[int, int]] = []
    same: list[tuple[int, int]] = []
    if pairs is not None and baseline is not None:
        raise InputError("give a baseline or planned pairs, not both")
    if pairs is not None:
        seen = set()
        for a, b in pairs:
            i, j = known(a), known(b)
            if frozenset((i, j)) in seen:
                raise InputError(f"planned pair {a}:{b} is given twice")
            seen.add(frozenset((i, j)))
            (same if rep.get(a, a) == rep.get(b, b) else compared).append((i, j))
        label = "planned pairs" if len(pairs) > 1 else "a single chosen pair"
        return label, compared, same
    if baseline is not None:
        base = known(baseline)
        for i, s in enumerate(names):
            if i == base:
                continue
            r = rep.get(s, s)
            if r == rep.get(baseline, baseline):
                same.append((i, base))
            elif r != s:
                same.append((i, pos[r]))
            else:
                compared.append((i, base))
        return f"every system against {baseline}", compared, same
    for i, s in enumerate(names):
        if rep.get(s, s) != s:
            same.append((pos[rep[s]], i))
            continue
        for j in range(i + 1, len(names)):
            if rep.get(names[j], names[j]) == names[j]:
                compared.append((i, j))
    return "all pairs", compared, same


def _levels(p_adj: list[float], p_raw: list[float], alpha: float) -> list[float]:
    """The level Holm compared each p-value with: alpha / (m - r) at its step r.

    Pairs Holm did not reject all get the level of the step where it stopped.
    """
    m = len(p_raw)
    order = sorted(range(m), key=lambda i: p_raw[i])
    out = [0.0] * m
    stop = None
    for r, i in enumerate(order):
        if stop is None and not p_adj[i] < alpha:
            stop = r
        out[i] = alpha / (m - (r if stop is None else stop))
    return out


def compare_family(
    matrix: ArrayLike,
    names: Sequence[str],
    *,
    adjust: Adjust = "holm",
    baseline: str | None = None,
    pairs: Sequence[tuple[str, str]] | None = None,
    identical: list[list[str]] | None = None,
    alpha: float = 0.05,
    rounds: int = 10_000,
    seed: stats.Seed = 1,
    binary: bool | None = None,
) -> Verdicts:
    """Compare systems (rows of ``matrix``) over one family of pairs under one rule.

    The family is every pair (default), every system against ``baseline``, or the
    planned ``pairs`` (``(A, B)`` names; A - B is reported). ``identical`` groups
    (default: systems with identical rows of ``matrix``) are compared once, through
    their first member, and reported as identical. ``binary`` (default: all scores
    0 or 1) picks McNemar's exact test and Tango's interval; otherwise the sign-flip
    test and its inverted interval are used. ``adjust="none"`` reproduces the seed's
    per-pair percentile rule exactly.
    """
    m = stats._as_matrix(matrix, "matrix")
    names = list(names)
    stats._check_names(names, m.shape[0])
    stats._check_common(rounds, seed, "percentile", 1.0 - alpha if 0 < alpha < 1 else 0.5)
    stats._check_fraction(alpha, "alpha")
    if adjust not in ADJUSTMENTS:
        raise InputError(f"adjust must be one of {ADJUSTMENTS}, got {adjust!r}")
    if m.shape[0] < 2:
        raise InputError("a comparison needs at least two systems")
    groups = identical_groups([m], names) if identical is None else identical
    label, compared, same = _family(names, baseline, pairs, groups)
    binary = is_binary(m) if binary is None else binary
    n = m.shape[1]
    if adjust == "none":
        test = "no test (the interval decides)"
        interval = f"{(1 - alpha) * 100:g}% paired percentile bootstrap"
    elif binary:
        test = "McNemar's exact test (0/1 scores)"
        interval = "Tango's score interval"
    else:
        test = f"sign-flip test ({rounds} rounds)"
        interval = "sign-flip test inverted"
    rule = Rule(
        adjust=adjust,
        alpha=alpha,
        family=label,
        pairs=len(compared),
        test=test,
        interval=interval,
        seed=stats._seed_record(seed),
        rounds=rounds,
        rng=stats.rng_name(seed),
        identical=[list(g) for g in groups],
    )
    rows: list[Row] = []
    if compared:
        rows = _rows(m, names, compared, adjust, alpha, rounds, seed, binary)
    for i, j in same:
        zero = stats.Estimate(0.0, 0.0, 0.0, n, rounds, rule.seed, "identical", rule.rng)
        rows.append(
            Row(
                names[i],
                names[j],
                zero,
                1.0,
                None if adjust == "none" else 1.0,
                alpha,
                0,
                n,
                0,
                0,
                min_differing(alpha),
                False,
                True,
                "identical (same scores on every question)",
            )
        )
    return Verdicts(rule, rows)


def _counts(x: np.ndarray, y: np.ndarray) -> tuple[int, int, int]:
    return (
        int(np.count_nonzero(x > y)),
        int(np.count_nonzero(x == y)),
        int(np.count_nonzero(x < y)),
    )


def _rows(
    m: np.ndarray,
    names: list[str],
    compared: list[tuple[int, int]],
    adjust: str,
    alpha: float,
    rounds: int,
    seed: stats.Seed,
    binary: bool,
) -> list[Row]:
    n = m.shape[1]
    k = len(compared)
    diffs = np.stack([m[i] - m[j] for i, j in compared], axis=1) + 0.0
    counts = [_counts(m[i], m[j]) for i, j in compared]
    if adjust == "none":
        # The seed's rule: the percentile paired interval (pairedDifference) decides.
        comps = stats._compare(m, names, compared, rounds, seed, "percentile", 1.0 - alpha)
        out = []
        for c, (w, t, lo) in zip(comps, counts, strict=True):
            sep = c.difference.low > 0 or c.difference.high < 0
            out.append(
                Row(
                    c.a,
                    c.b,
                    c.difference,
                    c.p_value,
                    None,
                    alpha,
                    w,
                    t,
                    lo,
                    w + lo,
                    min_differing(alpha),
                    sep,
                    False,
                    c.verdict,
                )
            )
        return out
    flips = None if binary else _Flips(diffs, rounds, seed)
    if binary:
        p_raw = [mcnemar_exact(w, lo) for w, _, lo in counts]
    else:
        p_raw = [float(p) for p in flips.p_values(np.zeros(k), np.arange(k))]
    p_adj = stats.holm(p_raw)
    reject = np.array([p < alpha for p in p_adj])
    levels = np.array(_levels(p_adj, p_raw, alpha))
    if binary:
        wins = np.array([c[0] for c in counts], dtype=np.float64)
        losses = np.array([c[2] for c in counts], dtype=np.float64)
        lows, highs = _tango_ends(wins, losses, np.full(k, float(n)), levels, reject)
    else:
        lows, highs = _flip_ends(flips, reject, levels)
    out = []
    for c, (i, j) in enumerate(compared):
        w, t, lo = counts[c]
        mean = stats._seq_mean(diffs[:, c])
        est = stats.Estimate(
            mean=mean,
            low=float(lows[c]),
            high=float(highs[c]),
            n=n,
            rounds=rounds,
            seed=stats._seed_record(seed),
            method="tango" if binary else "sign-flip inversion",
            rng=stats.rng_name(seed),
            confidence=1.0 - float(levels[c]),
        )
        needed = min_differing(float(levels[c]))
        if reject[c]:
            verdict = f"{names[i] if mean > 0 else names[j]} better"
        elif w + lo < needed:
            verdict = (
                f"tie: too few differing questions ({w + lo} of {n} differ; "
                f"at least {needed} needed)"
            )
        else:
            verdict = "tie (interval includes 0)"
        out.append(
            Row(
                names[i],
                names[j],
                est,
                p_raw[c],
                p_adj[c],
                float(levels[c]),
                w,
                t,
                lo,
                w + lo,
                needed,
                bool(reject[c]),
                False,
                verdict,
            )
        )
    return out


# --------------------------------------------------------------------------- printing


def fmt_end(x: float, scale: float = 100.0, digits: int = 1) -> str:
    """A signed interval end, with extra digits when rounding would move it onto 0.

    ``fmt_end(0.0003)`` is ``"+0.03"``, not ``"+0.0"``: a printed end reads as 0 only
    when it is exactly 0, so a printed interval excludes 0 exactly when the real one does.
    """
    v = x * scale
    if v == 0:
        return f"{0.0:.{digits}f}"
    d = digits
    while float(f"{v:.{d}f}") == 0.0 and d < 12:
        d += 1
    text = f"{v:+.{d}f}"
    return text if float(text) != 0.0 else f"{v:+.1e}"


def fmt_p(p: float | None, alpha: float = 0.05) -> str:
    """A p-value to 3 significant digits, with more when rounding would cross ``alpha``."""
    if p is None:
        return ""
    d = 3
    text = f"{p:.{d}g}"
    while (float(text) < alpha) != (p < alpha) and d < 17:
        d += 1
        text = f"{p:.{d}g}"
    return text


def shown_difference(row: Row, metric: str) -> str:
    """A comparison's difference as every view prints it: ``+12.6 [+1.8, +24.4]`` in
    points for shares, three decimals otherwise, ``identical`` for identical systems;
    no end is rounded onto 0 (:func:`fmt_end`)."""
    if row.identical:
        return "identical"
    scale, digits = (100, 1) if is_share(metric) else (1, 3)
    d = row.difference
    return (
        f"{d.mean * scale:+.{digits}f} [{fmt_end(d.low, scale, digits)}, "
        f"{fmt_end(d.high, scale, digits)}]"
    )


def shown_p(row: Row, alpha: float) -> str:
    """The rule's p-value of a comparison as every view prints it (empty when the rule
    has none or the systems are identical)."""
    return "" if row.p is None or row.identical else fmt_p(row.p, alpha)


def column_labels(rule: Rule | None) -> tuple[str, str | None]:
    """The headers of the difference and p columns under ``rule`` (``None``: a summary
    saved before the rule was recorded, whose p-values are Holm's)."""
    if rule is None:
        return "A - B [95% CI]", "p (Holm)"
    if rule.adjust == "none":
        return f"A - B [{(1 - rule.alpha) * 100:g}% CI]", None
    if rule.pairs == 1:
        return f"A - B [{(1 - rule.alpha) * 100:g}% CI]", "p"
    return "A - B [Holm-level CI]", "p (Holm)"


# --------------------------------------------------------------------------- the CI gate


@dataclass(frozen=True)
class Check:
    """Non-inferiority of a candidate run against a baseline run, for one system and metric.

    ``difference`` is candidate - baseline, paired by question id, with its two-sided
    interval (a family of one under the default rule); the check passes when the
    interval's lower end is above ``-margin`` (``margin`` in points: hundredths of
    the metric's scale).
    """

    system: str
    metric: str
    margin: float
    baseline: float
    candidate: float
    difference: stats.Estimate
    wins: int
    ties: int
    losses: int
    interval: str
    passed: bool

    @property
    def line(self) -> str:
        d = self.difference
        verdict = "PASS" if self.passed else "FAIL"
        rel = ">" if self.passed else "<="
        return (
            f"{verdict} {self.metric} {self.system}: candidate - baseline = "
            f"{d.mean * 100:+.1f} [{fmt_end(d.low)}, {fmt_end(d.high)}] points "
            f"({d.confidence * 100:g}% {self.interval}, {d.n} questions, seed {d.seed}, "
            f"{d.rounds} rounds); lower end {rel} -{self.margin:g} (margin)"
        )

    def markdown(self) -> str:
        d = self.difference
        head = "passed" if self.passed else "failed"
        return "\n".join(
            [
                f"### ragmeter check {head}: {self.metric}, {self.system}",
                "",
                "| | value |",
                "|---|--:|",
                f"| baseline | {self.baseline * 100:.1f} |",
                f"| candidate | {self.candidate * 100:.1f} |",
                f"| candidate - baseline | {d.mean * 100:+.1f} |",
                f"| {d.confidence * 100:g}% interval | [{fmt_end(d.low)}, {fmt_end(d.high)}] |",
                f"| margin | -{self.margin:g} |",
                f"| questions better / same / worse | {self.wins} / {self.ties} / {self.losses} |",
                "",
                f"Non-inferiority: the check passes when the lower end of the paired interval "
                f"is above -{self.margin:g} points. Interval: {self.interval}; "
                f"{d.n} questions paired by id; seed {d.seed}, {d.rounds} rounds.",
                "",
            ]
        )

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["line"] = self.line
        return out


def check_noninferior(
    baseline: Any,
    candidate: Any,
    system: str,
    metric: str,
    margin: float,
    confidence: float = 0.95,
    rounds: int | None = None,
    seed: int | None = None,
) -> Check:
    """Is the candidate run no worse than the baseline by more than ``margin`` points?

    ``baseline`` and ``candidate`` are :class:`ragmeter.results.Results` (or their
    paths). Questions are paired by id; both runs must hold the same questions
    (same ids and texts), the system and the metric. Seed and rounds default to
    the baseline run's.
    """
    from ragmeter.results import Results

    base = baseline if isinstance(baseline, Results) else Results(baseline)
    cand = candidate if isinstance(candidate, Results) else Results(candidate)
    if not margin >= 0 or not math.isfinite(margin):
        raise InputError(f"margin must be a non-negative number of points, got {margin}")
    for res, label in ((base, "baseline"), (cand, "candidate")):
        if system not in res.systems:
            raise InputError(
                f"{res.path}: no system {system!r} in the {label} run; it has {res.systems}"
            )
        if metric not in res.metrics:
            raise InputError(
                f"{res.path}: no metric {metric!r} in the {label} run; it has {res.metrics}"
            )
    ids_b, ids_c = base.question_ids, cand.question_ids
    if set(ids_b) != set(ids_c) or len(ids_b) != len(ids_c):
        only_b = sorted(set(ids_b) - set(ids_c))
        only_c = sorted(set(ids_c) - set(ids_b))
        where = (
            f"{only_b[0]!r} is only in the baseline"
            if only_b
            else f"{only_c[0]!r} is only in the candidate"
            if only_c
            else "a question id repeats"
        )
        raise InputError(
            f"different test sets: baseline {base.path} has {len(ids_b)} questions, candidate "
            f"{cand.path} has {len(ids_c)}; {where}. Run both on the same test set"
        )
    texts_b = _question_texts(base)
    texts_c = _question_texts(cand)
    if texts_b is not None and texts_c is not None:
        for qid in ids_b:
            if texts_b.get(qid) != texts_c.get(qid):
                raise InputError(
                    f"different test sets: question {qid!r} reads differently in "
                    f"{base.path} and {cand.path}. Run both on the same test set"
                )
    order = {q: i for i, q in enumerate(ids_c)}
    y = base.scores(system, metric)
    x = cand.scores(system, metric)[[order[q] for q in ids_b]]
    seed = base.summary.seed if seed is None else seed
    rounds = base.summary.rounds if rounds is None else rounds
    alpha = round(1.0 - confidence, 12)
    table = compare_family(
        np.stack([x, y]),
        ["candidate", "baseline"],
        pairs=[("candidate", "baseline")],
        identical=[],
        alpha=alpha,
        rounds=rounds,
        seed=seed,
    )
    row = table.rows[0]
    diff = row.difference
    return Check(
        system=system,
        metric=metric,
        margin=float(margin),
        baseline=stats._seq_mean(y),
        candidate=stats._seq_mean(x),
        difference=diff,
        wins=row.wins,
        ties=row.ties,
        losses=row.losses,
        interval=table.rule.interval,
        passed=bool(diff.low > -margin / 100.0),
    )


def _question_texts(res: Any) -> dict[str, str] | None:
    try:
        return {q.id: q.text for q in res.questions}
    except (OSError, ValueError, KeyError):
        return None

"""Prediction-powered means and their differences: the pure arithmetic.

A person grades a random sample of n answers by hand, and a judge grades them and the
N others (the unlabelled ones). With a rectifier weight ``lam`` the prediction-powered
estimate of the share correct is

    theta = lam * mean(judge over the N others) + mean(hand - lam * judge over the n)

(Angelopoulos et al., *Science* 2023, with ``lam = 1``; PPI++, Angelopoulos, Duchi and
Zrnic, arXiv:2311.01453, 2023, for any ``lam``). ``lam = 0`` is the hand grades alone;
``lam = 1`` the plain correction. Its asymptotic variance is

    var(lam * judge) / N + var(hand - lam * judge) / n

(population variances, divisor N and n, as the authors' ``ppi_py`` computes them), and
the **tuned** weight (:func:`tuned_weight`) is the one that minimises it, estimated
from the data and clipped to [0, 1], by the formula of ``ppi_py``'s ``_calc_lam_glm``
for a mean. Because ``lam = 0`` is allowed, the tuned interval is never wider than the
hand grades' own, up to the noise in estimating the weight.

:func:`effective_hand` is the number of hand grades alone that would give the same
variance: ``n * (var(hand) / n) / var(theta) = var(hand) / var(theta)``.

The two samples are disjoint, so the two parts are independent and the variance is
exact (as in the papers and ``ppi_py``). For several systems graded on the same
questions, :func:`joint_ppi` gives every system's estimate and their covariance: the
parts of two systems are correlated through the questions they share (paired), and
hand samples of different questions are independent. :func:`pair_tests` turns it into
paired differences with z-tests adjusted by max-T (the maximum |z| over the family,
simulated from the joint normal with seeded mulberry32 draws), Holm, or none.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from ragmeter.defaults import DEFAULTS
from ragmeter.errors import InputError
from ragmeter.stats.clusters import widening
from ragmeter.stats.draws import mulberry32
from ragmeter.stats.validate import alpha_of

__all__ = [
    "WEIGHTS",
    "Joint",
    "check_weight",
    "PairTest",
    "effective_hand",
    "joint_ppi",
    "pair_tests",
    "PSEUDO_COUNT",
    "rectifier_variance",
    "half_width",
    "ppi_interval",
    "ppi_mean",
    "ppi_variance",
    "table_variance",
    "tuned_weight",
    "weight_from",
    "weight_of",
    "widening_for",
]

WEIGHTS = ("tuned", "plain")
"""The rectifier weights by name: ``tuned`` (PPI++, the default) and ``plain`` (1)."""


def _arrays(hand: Sequence[float], judge_hand: Sequence[float], judge_all: Sequence[float]):
    h = np.asarray(hand, dtype=np.float64)
    jh = np.asarray(judge_hand, dtype=np.float64)
    ja = np.asarray(judge_all, dtype=np.float64)
    if h.ndim != 1 or h.shape != jh.shape or h.size == 0 or ja.ndim != 1 or ja.size == 0:
        raise InputError(
            "hand and judge_hand must be paired, non-empty lists of grades, and judge_all "
            "a non-empty list"
        )
    return h, jh, ja


def tuned_weight(
    hand: Sequence[float], judge_hand: Sequence[float], judge_all: Sequence[float]
) -> float:
    """The PPI++ weight for a mean: ``cov(hand, judge) / ((1 + n/N) var(judge))``, the
    covariance over the n hand-graded answers (divisor n), the variance over the n and
    N judge grades pooled (divisor n + N - 1), clipped to [0, 1]; 0 when the judge
    gives one grade to every answer (nothing to learn from it)."""
    h, jh, ja = _arrays(hand, judge_hand, judge_all)
    cov = float(np.mean((h - h.mean()) * (jh - jh.mean())))
    pooled = np.concatenate([jh, ja])
    var = float(np.var(pooled, ddof=1)) if pooled.size > 1 else 0.0
    return weight_from(cov, var, h.size, ja.size)


def weight_from(cov: float, judge_variance: float, n: int, big: int) -> float:
    """:func:`tuned_weight` from its moments: ``cov / ((1 + n/N) judge_variance)``
    clipped to [0, 1], 0 when the judge does not vary; the rule a plan predicts the
    weight by (:func:`ragmeter.stats.answer_plan.predicted_corrected_half_width`)."""
    if judge_variance <= 0.0:
        return 0.0
    return float(min(1.0, max(0.0, cov / ((1.0 + n / big) * judge_variance))))


def check_weight(name: str, flag: str = "--ppi") -> str:
    """``name`` when it names a rectifier weight (:data:`WEIGHTS`); else one line saying
    which to use."""
    if name not in WEIGHTS:
        raise InputError(
            f"{flag}: unknown rectifier weight {name!r}; use one of {', '.join(WEIGHTS)}"
        )
    return name


def weight_of(
    rule: str | float,
    hand: Sequence[float],
    judge_hand: Sequence[float],
    judge_all: Sequence[float],
) -> float:
    """The weight a rule names: ``"tuned"`` (:func:`tuned_weight`), ``"plain"`` (1), or
    a number in [0, 1] as it is."""
    if isinstance(rule, str):
        if rule == "tuned":
            return tuned_weight(hand, judge_hand, judge_all)
        if rule == "plain":
            return 1.0
        raise InputError(f"unknown rectifier weight {rule!r}; use one of {', '.join(WEIGHTS)}")
    lam = float(rule)
    if not 0.0 <= lam <= 1.0:
        raise InputError(f"a rectifier weight must be between 0 and 1, not {lam}")
    return lam


def ppi_mean(
    hand: Sequence[float], judge_hand: Sequence[float], judge_all: Sequence[float], lam: float
) -> float:
    """``lam * mean(judge_all) + mean(hand - lam * judge_hand)``."""
    h, jh, ja = _arrays(hand, judge_hand, judge_all)
    return float(lam * ja.mean() + (h - lam * jh).mean())


def ppi_variance(
    hand: Sequence[float],
    judge_hand: Sequence[float],
    judge_all: Sequence[float],
    lam: float,
    adjusted: bool = False,
) -> float:
    """The estimate's asymptotic variance, ``var(lam * judge_all) / N + var(hand - lam *
    judge_hand) / n`` (population variances, as ``ppi_py``); with ``adjusted`` the
    second variance is :func:`rectifier_variance`'s."""
    h, jh, ja = _arrays(hand, judge_hand, judge_all)
    rect = rectifier_variance(h, jh, lam) if adjusted else np.var(h - lam * jh)
    return float(np.var(lam * ja) / ja.size + rect / h.size)


def ppi_interval(
    hand: Sequence[float],
    judge_hand: Sequence[float],
    judge_all: Sequence[float],
    lam: float,
    confidence: float = DEFAULTS.confidence,
    adjusted: bool = False,
    widen: bool = False,
) -> tuple[float, float]:
    """The asymptotic (normal) interval: the estimate +- z * its standard error, as
    ``ppi_py.ppi_mean_ci`` with ``alpha = 1 - confidence`` computes it. ``adjusted``:
    with :func:`rectifier_variance`; ``widen``: z times :func:`widening_for` the n hand
    grades. Both together are the rule of the judge-corrected intervals ``grade`` prints
    (one system's here; a pair's in :func:`pair_tests`, on :func:`joint_ppi`)."""
    mean = ppi_mean(hand, judge_hand, judge_all, lam)
    var = ppi_variance(hand, judge_hand, judge_all, lam, adjusted)
    half = half_width(var, len(hand), confidence, widen)
    return mean - half, mean + half


def half_width(
    variance: float, hand_grades: int, confidence: float = DEFAULTS.confidence, widen: bool = True
) -> float:
    """``z * sqrt(variance)``, z widened by :func:`widening_for` ``hand_grades`` with
    ``widen``: :func:`ppi_interval`'s half-width, and what a plan predicts with it."""
    z = NormalDist().inv_cdf(0.5 + confidence / 2.0)
    if widen:
        z *= widening_for(hand_grades, confidence)
    return z * math.sqrt(variance)


def effective_hand(
    hand: Sequence[float], judge_hand: Sequence[float], judge_all: Sequence[float], lam: float
) -> float:
    """How many hand grades alone would give the estimate's variance: ``var(hand) /
    var(theta)``, with ``var(hand)`` the hand grades' population variance (so ``lam = 0``
    gives n). When neither varies (every grade the same), n."""
    h = np.asarray(hand, dtype=np.float64)
    var = ppi_variance(hand, judge_hand, judge_all, lam)
    if var <= 0.0:
        return float(h.size)
    return float(np.var(h) / var)


# --- several systems on the same questions ---------------------------------------------------


@dataclass(frozen=True)
class Joint:
    """Every system's prediction-powered estimate and their covariance.

    ``means[s]``, ``weights[s]``, ``n_hand[s]`` per system (in the order given);
    ``cov`` the estimates' asymptotic covariance; ``judge_means`` each system's judge
    accuracy over all the questions (uncorrected); ``both[s][t]`` the questions
    hand-graded for both ``s`` and ``t``."""

    means: np.ndarray
    weights: np.ndarray
    cov: np.ndarray
    judge_means: np.ndarray
    n_hand: list[int]
    both: list[list[int]]


def _part_cov(a: np.ndarray, b: np.ndarray, on: np.ndarray) -> float:
    """Population covariance of ``a`` and ``b`` over the questions ``on`` (0 under 2)."""
    if on.sum() < 2:
        return 0.0
    x, y = a[on], b[on]
    return float(np.mean((x - x.mean()) * (y - y.mean())))


PSEUDO_COUNT = 0.25
"""Pseudo answers added to each cell of the hand x judge table by
:func:`rectifier_variance`: a quarter, one answer in all (Perks's prior)."""


def rectifier_variance(hand: np.ndarray, judge_hand: np.ndarray, lam: float) -> float:
    """The variance of ``hand - lam * judge`` over 0/1 grades, with a quarter of an answer
    (:data:`PSEUDO_COUNT`) added to each of the four cells (hand x judge) first: a sample
    where the judge was never caught wrong still leaves room for its errors. Grades other
    than 0/1: the plain population variance.

    Why a quarter: the intervals built on this variance are also widened for few hand
    grades (:func:`widening_for`, Student's t on n - 1 degrees of freedom), which covers
    the variance estimate's noise in general. What the widening cannot mend is a cell the
    sample left empty (a good judge errs on a few answers in 40, often on none of one
    kind), where the plug-in variance is 0 or near it; one pseudo answer spread evenly
    over the cells (Perks's prior, a total weight of 1 whatever the number of cells:
    Perks, J. Inst. Actuaries 73, 1947) keeps it off 0. Agresti and Min's half answer
    per cell (Stat. Med. 24, 2005; two answers in all, Jeffreys's prior) is calibrated
    for a z interval with no other correction; with the widening as well it corrects the
    same fault twice, and a good judge's intervals over-covered (bench/ppi.py: 97.6% of
    pairs with 40 hand grades, where a quarter gives 96.4%)."""
    h, jh = np.asarray(hand, dtype=np.float64), np.asarray(judge_hand, dtype=np.float64)
    if not (np.isin(h, (0.0, 1.0)).all() and np.isin(jh, (0.0, 1.0)).all()):
        return float(np.var(h - lam * jh))
    return table_variance(
        np.array([[np.sum((h == a) & (jh == b)) for b in (0, 1)] for a in (0, 1)]), lam
    )


def table_variance(counts: np.ndarray, lam: float) -> float:
    """:func:`rectifier_variance` from the hand x judge table ``counts[hand][judge]`` of
    0/1 grades (whole or expected counts, so a plan predicts it with the same rule):
    the variance of ``hand - lam * judge`` with :data:`PSEUDO_COUNT` added to each cell."""
    cells = np.asarray(counts, dtype=np.float64) + PSEUDO_COUNT
    w = cells / cells.sum()
    vals = np.array([[a - lam * b for b in (0, 1)] for a in (0, 1)], dtype=np.float64)
    mean = float(np.sum(w * vals))
    return float(np.sum(w * (vals - mean) ** 2))


def joint_ppi(
    judge: np.ndarray,
    hand: np.ndarray,
    weights: Sequence[str | float] | str | float = "tuned",
    adjusted: bool = True,
) -> Joint:
    """``judge`` is ``[systems, questions]`` (0/1 by the judge, every question), ``hand``
    the same shape with NaN where an answer was not hand-graded. System s's estimate is
    :func:`ppi_mean` with its hand-graded questions ``S_s`` as the labelled sample and
    the others ``U_s`` as the unlabelled one, its weight tuned (or given) on its own
    answers. Questions are independent draws, so two estimates' covariance is the sum
    over the four pairs of parts (``U_s`` or ``S_s`` with ``U_t`` or ``S_t``) of
    ``k cov(part_s, part_t) / (size_s size_t)`` over the k questions the two parts
    share, with ``lam * judge`` on a U part and ``hand - lam * judge`` on an S part
    (population covariances; 0 under 2 shared questions). For one system it is
    :func:`ppi_variance`, except that with ``adjusted`` (the default) a system's own
    rectifier variance is :func:`rectifier_variance`'s."""
    j = np.asarray(judge, dtype=np.float64)
    h = np.asarray(hand, dtype=np.float64)
    if j.ndim != 2 or j.shape != h.shape or j.shape[1] == 0:
        raise InputError("judge and hand must be [systems, questions] arrays of one shape")
    m = j.shape[0]
    seen = ~np.isnan(h)
    rules = [weights] * m if isinstance(weights, str | float | int) else list(weights)
    lams, means = np.zeros(m), np.zeros(m)
    for s in range(m):
        if seen[s].sum() == 0:
            raise InputError("every system needs at least one hand grade")
        if seen[s].all():  # every answer graded by hand: the judge has nothing to add
            means[s] = float(h[s].mean())
            continue
        args = (h[s, seen[s]], j[s, seen[s]], j[s, ~seen[s]])
        lams[s] = weight_of(rules[s], *args)
        means[s] = ppi_mean(*args, lams[s])
    parts = []  # per system: (values, where, size) of its unlabelled and labelled parts
    for s in range(m):
        rect = np.where(seen[s], np.nan_to_num(h[s]) - lams[s] * j[s], 0.0)
        parts.append(((lams[s] * j[s], ~seen[s]), (rect, seen[s])))
    cov = np.zeros((m, m))
    for s in range(m):
        for t in range(m):
            for a, on_a in parts[s]:
                for b, on_b in parts[t]:
                    on = on_a & on_b
                    if on.any():
                        cov[s, t] += on.sum() * _part_cov(a, b, on) / (on_a.sum() * on_b.sum())
        if adjusted:
            n = seen[s].sum()
            own = _part_cov(parts[s][1][0], parts[s][1][0], seen[s])
            fixed = rectifier_variance(h[s, seen[s]], j[s, seen[s]], lams[s])
            cov[s, s] += (fixed - own) / n
    both = [[int((seen[s] & seen[t]).sum()) for t in range(m)] for s in range(m)]
    return Joint(means, lams, cov, j.mean(axis=1), [int(x) for x in seen.sum(axis=1)], both)


@dataclass(frozen=True)
class PairTest:
    """One pair's prediction-powered difference ``a - b`` (indices into the systems):
    ``difference`` and ``se``, the interval ``low``/``high`` at the family's critical
    value ``critical``, the unadjusted and adjusted two-sided p-values, and ``judge``,
    the uncorrected judge difference over the same questions."""

    a: int
    b: int
    difference: float
    se: float
    low: float
    high: float
    p_value: float
    p: float
    critical: float
    judge: float


@functools.lru_cache(maxsize=4096)
def widening_for(hand_grades: int, confidence: float = DEFAULTS.confidence) -> float:
    """How much a judge-corrected interval on ``hand_grades`` hand grades is widened, as
    the cluster intervals are for few clusters: :func:`ragmeter.stats.clusters.widening`
    (``t_{k-1} / z * sqrt(k / (k - 1))``; 1.045 at k = 40, 1.009 at k = 200); 1 under 2."""
    return widening(hand_grades, confidence) if hand_grades >= 2 else 1.0


def _widen(joint: Joint, pairs: Sequence[tuple[int, int]], alpha: float) -> np.ndarray:
    """Each pair's widening for the fewer of its two systems' hand grades."""
    fewest = [min(joint.n_hand[a], joint.n_hand[b]) for a, b in pairs]
    return np.array([widening_for(int(k), 1.0 - alpha) for k in fewest])


def _normals(seed: int, rounds: int, m: int) -> np.ndarray:
    """``[rounds, m]`` standard normals by Box-Muller from mulberry32 draws 0 onwards."""
    u = mulberry32(seed, 2 * rounds * m).reshape(rounds, m, 2)
    return np.sqrt(-2.0 * np.log1p(-u[..., 0])) * np.cos(2.0 * np.pi * u[..., 1])


def _max_t(joint: Joint, pairs: Sequence[tuple[int, int]], se: np.ndarray, seed, rounds):
    """The simulated maximum |z| over the family under the joint normal null."""
    vals, vecs = np.linalg.eigh(joint.cov)
    root = vecs * np.sqrt(np.clip(vals, 0.0, None))
    draws = _normals(seed, rounds, len(joint.means)) @ root.T
    a = np.array([p[0] for p in pairs])
    b = np.array([p[1] for p in pairs])
    safe = np.where(se > 0, se, np.inf)
    return np.max(np.abs(draws[:, a] - draws[:, b]) / safe, axis=1)


def pair_tests(
    joint: Joint,
    pairs: Sequence[tuple[int, int]],
    *,
    adjust: str = "maxt",
    alpha: float = alpha_of(DEFAULTS.confidence),
    seed: int = DEFAULTS.seed,
    rounds: int = DEFAULTS.rounds,
    widen: bool = True,
) -> list[PairTest]:
    """Each pair's z-test and interval under the family rule ``adjust``:

    * ``maxt``: single-step max-T; adjusted p = the share of simulated max |z| at least
      the pair's |z|, the interval +- the max's 1 - alpha quantile (simultaneous);
    * ``holm``: Holm's step-down p-values; intervals at Bonferroni's alpha / pairs;
    * ``none``: each pair at ``alpha`` alone.

    With ``widen`` (the default) each pair's standard error is widened for its few hand
    grades by :func:`widening_for` k, the fewer of the two systems' hand grades (one
    system's interval, :func:`ppi_interval` with ``widen``, by its own n).
    The max-T null is simulated on the plain standard errors and compared with the
    widened statistics.
    """
    if not pairs:
        return []
    nd = NormalDist()
    diffs = np.array([joint.means[a] - joint.means[b] for a, b in pairs])
    var = np.array([joint.cov[a, a] + joint.cov[b, b] - 2 * joint.cov[a, b] for a, b in pairs])
    se = np.sqrt(np.clip(var, 0.0, None))
    wide = se * _widen(joint, pairs, alpha) if widen else se
    z = np.where(wide > 0, np.abs(diffs) / np.where(wide > 0, wide, 1.0), 0.0)
    raw = np.array([2.0 * (1.0 - nd.cdf(float(v))) for v in z])
    if adjust == "maxt":
        maxes = _max_t(joint, pairs, se, seed, rounds)
        adj = np.array([float(np.mean(maxes >= v)) for v in z])
        crit = float(np.quantile(maxes, 1.0 - alpha, method="higher"))
    elif adjust == "holm":
        order = np.argsort(raw, kind="stable")
        adj, run = np.empty_like(raw), 0.0
        for step, i in enumerate(order):
            run = max(run, min(1.0, (len(raw) - step) * raw[i]))
            adj[i] = run
        crit = nd.inv_cdf(1.0 - alpha / (2 * len(pairs)))
    elif adjust == "none":
        adj, crit = raw, nd.inv_cdf(1.0 - alpha / 2)
    else:
        raise InputError(f"unknown family rule {adjust!r}; use maxt, holm or none")
    judge = [float(joint.judge_means[a] - joint.judge_means[b]) for a, b in pairs]
    return [
        PairTest(
            a,
            b,
            float(d),
            float(s),
            float(d - crit * s),
            float(d + crit * s),
            float(r),
            float(p),
            float(crit),
            jd,
        )
        for (a, b), d, s, r, p, jd in zip(pairs, diffs, wide, raw, adj, judge, strict=True)
    ]

"""Westfall-Young step-down max-T over a family of paired comparisons.

The pairs of one table share their questions (and often a system), so their test
statistics move together. Holm's procedure ignores that and pays for every pair as
if it were unrelated; the max-T procedure (Westfall and Young 1993, algorithm 4.1)
reads the joint null distribution of all the pairs' statistics off one set of
paired sign flips and pays only for the dependence that is really there.

* **One set of flips for every pair.** Round ``b`` flips the sign of question
  ``i``'s whole row of differences (every pair at once) with the seeded draws of
  :class:`ragmeter.paired_tests.Flips`, so the flipped statistics keep the
  correlation between pairs. Under "the systems are interchangeable on every
  question" each question's row of differences is as likely to be flipped as not,
  for 0/1 scores too (the flip is exact-conditional on the differing questions).
* **The statistic is each pair's own p-value** (the max-T of ``-log p``, also known
  as min-p): McNemar's exact p for 0/1 scores, the sign-flip p (ranked among the
  rounds) otherwise. Pairs with few differing questions have coarse statistics;
  putting every pair on the p-value scale stops such a pair from dominating the
  maximum, and makes every step at least as lenient as Holm's (whose level is the
  Bonferroni bound of this one).
* **Step-down.** Pairs sorted by raw p; the adjusted p of the ``j``-th is the share
  of configurations (the observed one included) whose smallest p among pairs
  ``j..m`` is at most its raw p, made non-decreasing along the order.
* **The level of each step** is the largest raw p that step could reject: the
  pair's own test inverted at that level is the interval that matches the decision
  (:mod:`ragmeter.verdicts`).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ragmeter.paired_tests import Flips, _hits_needed, mcnemar_exact
from ragmeter.stats_compare import _TIE

__all__ = ["null_p_values", "step_down"]

_REL = 1e-9  # p-values this close (relatively) to the observed one count as equal


@lru_cache(maxsize=4096)
def _mcnemar_table(differ: int) -> np.ndarray:
    """McNemar's exact p for every split ``(k, differ - k)``, k = 0..differ."""
    return np.array([mcnemar_exact(k, differ - k) for k in range(differ + 1)])


def null_p_values(
    flips: Flips, binary: bool, counts: list[tuple[int, int, int]]
) -> tuple[np.ndarray, np.ndarray]:
    """``(p_raw, p_null)``: each pair's observed p and its p in each flip round.

    ``p_null`` is (rounds, pairs). For 0/1 scores a round's p is McNemar's exact p of
    the flipped wins; otherwise it is the round's rank among the flipped sums of the
    pair, counted over the rounds and the observed data (so the observed p is the
    sign-flip p of :meth:`Flips.p_values`).
    """
    k = flips.diffs.shape[1]
    if binary:
        p_raw = np.array([mcnemar_exact(w, lo) for w, _, lo in counts])
        p_null = np.empty((flips.rounds, k))
        for c, (w, _, lo) in enumerate(counts):
            differ = w + lo
            wins = np.rint((differ + flips.a[:, c]) / 2.0).astype(np.int64)
            p_null[:, c] = _mcnemar_table(differ)[np.clip(wins, 0, differ)]
        return p_raw, p_null
    p_raw = flips.p_values(np.zeros(k), np.arange(k)).astype(np.float64)
    flipped = np.abs(flips.a)
    observed = np.abs(flips.total)
    tol = _TIE * np.sum(np.abs(flips.diffs), axis=0)
    p_null = np.empty((flips.rounds, k))
    for c in range(k):
        srt = np.sort(flipped[:, c])
        at_least = flips.rounds - np.searchsorted(srt, flipped[:, c] - tol[c], side="left")
        at_least += observed[c] >= flipped[:, c] - tol[c]
        p_null[:, c] = at_least / (flips.rounds + 1)
    return p_raw, p_null


def step_down(
    p_raw: np.ndarray, p_null: np.ndarray, alpha: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(p_adj, reject, levels)`` of the step-down max-T (min-p) procedure.

    ``p_adj[c]`` is ``(#{rounds whose smallest p over the pairs not yet passed is
    <= p_raw[c]} + 1) / (rounds + 1)``, made non-decreasing in the order of
    ``p_raw``; ``reject = p_adj < alpha``. ``levels[c]`` is the raw p below which
    the step that decided pair ``c`` rejects (for pairs not rejected, the step where
    the procedure stopped), capped at ``alpha``.
    """
    rounds, k = p_null.shape
    order = np.argsort(p_raw, kind="stable")
    # Successive minima: q[:, j] = min over the pairs order[j:] of each round's p.
    q = np.minimum.accumulate(p_null[:, order[::-1]], axis=1)[:, ::-1]
    thresholds = p_raw[order] * (1.0 + _REL)
    hits = np.count_nonzero(q <= thresholds[None, :], axis=0)
    step_p = np.minimum(1.0, (hits + 1) / (rounds + 1))
    adj_sorted = np.maximum.accumulate(step_p)
    h = _hits_needed(alpha, rounds)
    if h > 0:
        # Reject at step j exactly when fewer than h rounds reach p_raw: p_raw < q_[h].
        crit = np.partition(q, h - 1, axis=0)[h - 1]
    else:  # too few rounds to reject anything: Bonferroni's levels for the intervals
        crit = alpha / (k - np.arange(k))
    step_level = np.minimum(crit, alpha)
    levels_sorted = np.empty(k)
    stop = None
    for j in range(k):
        if stop is None and not adj_sorted[j] < alpha:
            stop = j
        levels_sorted[j] = step_level[j if stop is None else stop]
    p_adj = np.empty(k)
    levels = np.empty(k)
    p_adj[order] = adj_sorted
    levels[order] = levels_sorted
    levels = np.maximum(levels, np.finfo(float).tiny)  # a level is a positive number
    return p_adj, p_adj < alpha, levels

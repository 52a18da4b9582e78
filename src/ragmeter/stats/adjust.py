"""Which pairs of a family a rule calls different, and the level of each pair's interval.

:func:`decide` is the one place a comparison table's adjustment is applied
(:func:`ragmeter.comparison.verdicts.compare_family` calls it): the step-down max-T
(:mod:`ragmeter.stats.maxt`), Holm's step-down or Benjamini-Hochberg's step-up over
each pair's own test (McNemar's exact p for 0/1 scores, the sign-flip p otherwise).
Each returns the level the decision used for every pair, so the pair's test inverted
at that level is an interval that agrees with the verdict:

* **Holm** (:func:`holm_levels`): ``alpha / (m - r)`` at the step ``r`` that decided
  the pair; pairs not rejected get the level of the step where it stopped.
* **Benjamini-Hochberg** (:func:`bh_levels`): ``R * alpha / m`` for the ``R`` pairs
  rejected (every one's p is below it: Benjamini and Yekutieli's false coverage-rate
  intervals, 2005), ``(R + 1) * alpha / m`` (capped at alpha) for the others, the
  level BH would have needed (every one's p is at least that). It controls the
  expected share of false rejections among the rejections, not the chance of any.

Imported from its own module: it reaches :mod:`ragmeter.stats.maxt`, whose paired
tests read this package, so re-exporting it from :mod:`ragmeter.stats` would close a
loop.
"""

from __future__ import annotations

import numpy as np

from ragmeter.stats.maxt import null_p_values, step_down
from ragmeter.stats.paired import benjamini_hochberg, holm
from ragmeter.stats.paired_tests import Flips, mcnemar_exact

__all__ = [
    "FAMILY_WISE",
    "FDR_GUARANTEE",
    "RULES",
    "bh_levels",
    "decide",
    "guarantee",
    "holm_levels",
]

RULES = ("maxt", "holm", "fdr")
"""The adjustments :func:`decide` applies over a family of pairs."""

#: What an ``fdr`` table guarantees, as its header and docs say it: not family-wise.
FDR_GUARANTEE = (
    "controls the expected share of false 'better' among the 'better' verdicts "
    "(false discovery rate), not the chance of any false 'better'"
)

#: What a max-T or Holm table guarantees.
FAMILY_WISE = "controls the chance of any false 'better' among the family's verdicts (family-wise)"


def guarantee(rule: str) -> str:
    """What a family adjusted by ``rule`` (one of :data:`RULES`) guarantees, in words."""
    return FDR_GUARANTEE if rule == "fdr" else FAMILY_WISE


def holm_levels(p_adj: list[float], p_raw: list[float], alpha: float) -> list[float]:
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


def bh_levels(reject: np.ndarray, alpha: float) -> np.ndarray:
    """The level of each pair's interval under Benjamini-Hochberg: ``R * alpha / m``
    for the R pairs rejected, ``min(alpha, (R + 1) * alpha / m)`` for the others."""
    m, r = len(reject), int(np.count_nonzero(reject))
    return np.where(reject, r * alpha / m, min(alpha, (r + 1) * alpha / m)).astype(np.float64)


def decide(
    flips: Flips | None,
    binary: bool,
    counts: list[tuple[int, int, int]],
    pairs: list[tuple[int, int]],
    alpha: float,
    rule: str,
) -> tuple[list[float], list[float], np.ndarray, np.ndarray]:
    """``(p_raw, p_adj, reject, levels)`` of every pair under ``rule``: ``"maxt"``
    (the step-down max-T, with logical constraints over ``pairs``), ``"fdr"``
    (Benjamini-Hochberg) or ``"holm"``. ``counts`` are each pair's (wins, ties,
    losses); ``flips`` the pairs' shared sign flips (None only for 0/1 scores under
    Holm or BH, whose tests are McNemar's exact ones)."""
    if rule == "maxt":
        raw, p_null = null_p_values(flips, binary, counts)
        adj, reject, levels = step_down(raw, p_null, alpha, pairs)
        return [float(p) for p in raw], [float(p) for p in adj], reject, levels
    k = len(pairs)
    if binary:
        p_raw = [mcnemar_exact(w, lo) for w, _, lo in counts]
    else:
        p_raw = [float(p) for p in flips.p_values(np.zeros(k), np.arange(k))]
    if rule == "fdr":
        p_adj = benjamini_hochberg(p_raw)
        reject = np.array([p < alpha for p in p_adj])
        return p_raw, p_adj, reject, bh_levels(reject, alpha)
    p_adj = holm(p_raw)
    reject = np.array([p < alpha for p in p_adj])
    return p_raw, p_adj, reject, np.array(holm_levels(p_adj, p_raw, alpha))

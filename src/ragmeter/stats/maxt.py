"""Westfall-Young step-down max-T over a family of paired comparisons.

The pairs of one table share their questions (and often a system), so their test
statistics move together. Holm's procedure ignores that and pays for every pair as
if it were unrelated; the max-T procedure (Westfall and Young 1993, algorithm 4.1)
reads the joint null distribution of all the pairs' statistics off one set of
paired sign flips and pays only for the dependence that is really there.

* **One set of flips for every pair.** Round ``b`` flips the sign of question
  ``i``'s whole row of differences (every pair at once) with the seeded draws of
  :class:`ragmeter.stats.paired_tests.Flips`, so the flipped statistics keep the
  correlation between pairs. Under "the systems are interchangeable on every
  question" each question's row of differences is as likely to be flipped as not,
  for 0/1 scores too (the flip is exact-conditional on the differing questions).
  When questions share documents (:mod:`ragmeter.stats.clusters`) the flips are
  of whole documents instead (``Flips(..., clusters=...)``): every question of a
  document takes its document's sign, so the null keeps the dependence within
  documents, and the statistic is the sign-flip p for 0/1 scores too.
* **The statistic is each pair's own p-value** (the max-T of ``-log p``, also known
  as min-p): McNemar's exact p for 0/1 scores, the sign-flip p (ranked among the
  rounds) otherwise. Pairs with few differing questions have coarse statistics;
  putting every pair on the p-value scale stops such a pair from dominating the
  maximum, and makes every step at least as lenient as Holm's (whose level is the
  Bonferroni bound of this one).
* **Step-down.** Pairs sorted by raw p; the adjusted p of the ``j``-th is the share
  of configurations (the observed one included) whose smallest p among pairs
  ``j..m`` is at most its raw p, made non-decreasing along the order.
* **Logical constraints** (Shaffer 1986; Westfall and Tobias 2007). Pairs of one
  table cannot be true or false independently: if A equals B and B equals C, A
  equals C. A set of pairs can all be true only when it is the set of pairs within
  the groups of some partition of the systems. So the step that tests pair ``j``
  after pairs ``1..j-1`` were rejected needs the maximum only over the pairs of a
  partition that holds ``j`` within a group and none of the rejected pairs, and
  only over the largest such sets: never more than the pairs not yet passed (plain
  max-T), often far fewer (7 systems: 21 pairs at the first step, at most 15 once
  one pair is rejected). The first false rejection of a true pair happens at a step
  whose sets include the true ones, so the family-wise error stays at alpha. The
  partitions are listed for tables of up to :data:`MAX_SYSTEMS` systems; larger
  tables use plain max-T (valid, only less sharp).
* **The level of each step** is the largest raw p that step could reject: the
  pair's own test inverted at that level is the interval that matches the decision
  (:mod:`ragmeter.comparison.verdicts`).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ragmeter.stats.paired import _TIE
from ragmeter.stats.paired_tests import Flips, _hits_needed, mcnemar_exact

__all__ = ["MAX_SYSTEMS", "NullP", "constrained", "null_p_values", "step_down"]

_REL = 1e-9  # p-values this close (relatively) to the observed one count as equal
MAX_SYSTEMS = 8  # partitions of 8 systems: 4,140; of 9: 21,147


@lru_cache(maxsize=16)
def _partitions(m: int) -> np.ndarray:
    """Every partition of ``m`` systems, as (partitions, m) group numbers."""
    rows: list[list[int]] = [[]]
    for _ in range(m):  # each system joins a group already open or opens the next
        rows = [r + [g] for r in rows for g in range((max(r) + 2) if r else 1)]
    return np.array(rows).reshape(len(rows), m)  # group numbers, any integer type


@lru_cache(maxsize=4096)
def _mcnemar_table(differ: int) -> np.ndarray:
    """McNemar's exact p for every split ``(k, differ - k)``, k = 0..differ."""
    return np.array([mcnemar_exact(k, differ - k) for k in range(differ + 1)])


class NullP:
    """Each pair's p in every flip round, worked out a pair at a time.

    ``column(c)`` is pair ``c``'s p in each of the ``rounds`` rounds: for 0/1 scores
    McNemar's exact p of the flipped wins; otherwise the round's rank among the
    pair's flipped sums, counted over the rounds and the observed data (so the
    observed p is the sign-flip p of :meth:`Flips.p_values`). Nothing of size
    rounds x pairs is held: :func:`step_down` takes the columns one at a time.
    """

    def __init__(self, flips: Flips, binary: bool, counts: list[tuple[int, int, int]]) -> None:
        self.flips, self.binary, self.counts = flips, binary, counts
        self.shape = (flips.rounds, flips.pairs)

    def column(self, c: int) -> np.ndarray:
        flips = self.flips
        if self.binary:
            w, _, lo = self.counts[c]
            differ = w + lo
            wins = np.rint((differ + flips.column(c)) / 2.0).astype(np.int64)
            return _mcnemar_table(differ)[np.clip(wins, 0, differ)]
        flipped = np.abs(flips.column(c))
        tol = _TIE * flips.spread[c]
        at_least = flips.rounds - np.searchsorted(np.sort(flipped), flipped - tol, side="left")
        at_least += abs(flips.total[c]) >= flipped - tol
        return at_least / (flips.rounds + 1)

    def matrix(self) -> np.ndarray:
        """Every column at once, (rounds, pairs): for small families only."""
        return np.column_stack([self.column(c) for c in range(self.shape[1])])


def null_p_values(
    flips: Flips, binary: bool, counts: list[tuple[int, int, int]]
) -> tuple[np.ndarray, NullP]:
    """``(p_raw, p_null)``: each pair's observed p, and its p in each flip round
    (:class:`NullP`, a pair at a time)."""
    if binary:
        p_raw = np.array([mcnemar_exact(w, lo) for w, _, lo in counts])
    else:
        p_raw = flips.p_values(np.zeros(flips.pairs), np.arange(flips.pairs)).astype(np.float64)
    return p_raw, NullP(flips, binary, counts)


def constrained(pairs: list[tuple[int, int]] | None, rounds: int, alpha: float) -> bool:
    """Whether :func:`step_down` applies logical constraints to this family: pairs of
    3 to :data:`MAX_SYSTEMS` systems, and rounds enough to reject anything."""
    systems = len({s for p in pairs for s in p}) if pairs else 0
    return 2 < systems <= MAX_SYSTEMS and len(pairs or ()) > 1 and _hits_needed(alpha, rounds) > 0


class _Constraints:
    """The sets of pairs that can all be true at once, for the pairs ``pairs``.

    Each partition of the systems makes the pairs within its groups true together;
    ``sets(c, rejected)`` gives the largest such sets that hold pair ``c`` and no
    rejected pair, as a (sets, pairs) boolean array.
    """

    def __init__(self, pairs: list[tuple[int, int]]) -> None:
        systems = sorted({s for p in pairs for s in p})
        index = {s: i for i, s in enumerate(systems)}
        self.groups = _partitions(len(systems))
        a = np.array([index[i] for i, _ in pairs])
        b = np.array([index[j] for _, j in pairs])
        self.a, self.b = a, b
        self.within = self.groups[:, a] == self.groups[:, b]  # (partitions, pairs)

    def sets(self, c: int, rejected: np.ndarray) -> np.ndarray:
        ok = self.within[:, c] & ~np.any(self.within[:, rejected], axis=1)
        groups, within = self.groups[ok], self.within[ok]
        # The largest sets: no two groups can merge, i.e. a rejected pair stands
        # between any two groups (merging two others only adds pairs to the set).
        size = groups.max(axis=1) + 1
        top = int(size.max(initial=1))
        blocked = np.zeros((len(groups), top, top), bool)
        rows = np.arange(len(groups))
        for u, v in zip(self.a[rejected], self.b[rejected], strict=True):
            blocked[rows, groups[:, u], groups[:, v]] = True
            blocked[rows, groups[:, v], groups[:, u]] = True
        g = np.arange(blocked.shape[1])
        need = (g[:, None] != g[None, :])[None] & (g[None, :, None] < size[:, None, None])
        need &= g[None, None, :] < size[:, None, None]
        maximal = np.all(blocked | ~need, axis=(1, 2))
        return np.unique(within[maximal], axis=0)


def _counts(p_null: np.ndarray, sets: np.ndarray, threshold: float, h: int):
    """(most rounds reaching ``threshold`` over ``sets``, smallest h-th smallest min);
    ``h`` >= 1 (:func:`constrained`)."""
    reach = (p_null <= threshold).astype(np.float32) @ sets.T.astype(np.float32)
    hits = int(np.count_nonzero(reach > 0, axis=0).max())
    crit = min(float(np.partition(p_null[:, s].min(axis=1), h - 1)[h - 1]) for s in sets)
    return hits, crit


def step_down(
    p_raw: np.ndarray,
    p_null: np.ndarray | NullP,
    alpha: float,
    pairs: list[tuple[int, int]] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(p_adj, reject, levels)`` of the step-down max-T (min-p) procedure.

    ``p_adj[c]`` is ``(#{rounds whose smallest p over the pairs not yet passed is
    <= p_raw[c]} + 1) / (rounds + 1)``, made non-decreasing in the order of
    ``p_raw``; ``reject = p_adj < alpha``. With ``pairs`` (the two systems of each
    pair, by number) and at most :data:`MAX_SYSTEMS` systems, each step up to the
    first pair not rejected takes the smallest p only over the largest sets of
    pairs that can be true together (logical constraints), the most rounds over
    those sets. ``levels[c]`` is the raw p below which the step that decided pair
    ``c`` rejects (for pairs not rejected, the step where the procedure stopped),
    capped at ``alpha``.
    """
    rounds, k = p_null.shape
    column = p_null.column if isinstance(p_null, NullP) else (lambda c: p_null[:, c])
    order = np.argsort(p_raw, kind="stable")
    thresholds = p_raw[order] * (1.0 + _REL)
    h = _hits_needed(alpha, rounds)
    hits = np.empty(k, dtype=np.int64)
    crit = alpha / (k - np.arange(k))  # Bonferroni's levels, when h = 0
    smallest = np.full(rounds, np.inf)
    for j in range(k - 1, -1, -1):  # smallest p over the pairs order[j:], a pair at a time
        np.minimum(smallest, column(order[j]), out=smallest)
        hits[j] = np.count_nonzero(smallest <= thresholds[j])
        if h > 0:  # reject at step j exactly when fewer than h rounds reach p_raw
            crit[j] = np.partition(smallest, h - 1)[h - 1]
    if pairs is not None and constrained(pairs, rounds, alpha):
        every = p_null.matrix() if isinstance(p_null, NullP) else p_null  # <= 28 pairs
        constraints = _Constraints(pairs)
        rejected = np.zeros(k, bool)
        for j in range(k):  # up to the first pair not rejected; later steps keep plain max-T
            c = order[j]
            hits[j], crit[j] = _counts(every, constraints.sets(c, rejected), thresholds[j], h)
            if not (hits[j] + 1) / (rounds + 1) < alpha:
                break
            rejected[c] = True
    step_p = np.minimum(1.0, (hits + 1) / (rounds + 1))
    adj_sorted = np.maximum.accumulate(step_p)
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

"""Paired comparisons whose verdict, interval and p-value come from one decision.

A table of comparisons answers "which differences are real?" for a *family* of
pairs: every pair of systems, every system against one baseline, pairs named
in advance, or, for a strategy x retriever grid, the pairs a grid asks about
(retrievers within each strategy and strategies within each retriever, one family).
:func:`compare_family` applies one decision rule to the whole family and builds each
row so that it cannot contradict itself:

* ``adjust="holm"``. Each pair gets an exact paired test (McNemar's
  exact test when the scores are 0/1, else the seeded sign-flip test; both in
  :mod:`ragmeter.stats.paired_tests`), Holm's step-down adjustment over the family, and
  a verdict ``better`` exactly when the adjusted p-value is below ``alpha``. The
  interval is the test inverted at the level Holm used for that pair
  (``alpha / (m - r)``), searched on the side of 0 the decision fixed: a ``better``
  row's interval lies strictly on one side of 0, a tie's interval contains 0 (an
  end exactly at 0 is a tie).
* ``adjust="maxt"`` (the default): the same tests and the same construction of the
  interval, with Westfall-Young's step-down max-T over the family in place of Holm
  (:mod:`ragmeter.stats.maxt`): the joint null distribution of every pair's p-value
  comes from one set of sign flips of whole questions, so pairs that share questions
  and systems are not paid for as if they were unrelated. The level of each pair is
  the largest raw p its step rejects.
* ``adjust="none"``: the seed's per-pair rule, bit for bit: the verdict reads the
  95% paired percentile bootstrap interval (``pairedDifference``), with no
  adjustment for the number of pairs and no p-value.

This module decides; it neither prints (:mod:`ragmeter.comparison.formatting`) nor chooses
the family of a run (:mod:`ragmeter.comparison.systems`). See ``docs/statistics.md``
("One rule per table").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike

from ragmeter import stats
from ragmeter.comparison.effects import MAIN_EFFECTS, names_an_effect, with_main_effects
from ragmeter.comparison.families import FAMILIES, GRID_LABELS, grid_pairs
from ragmeter.comparison.formatting import column_labels, fmt_end, fmt_p, shown_difference, shown_p
from ragmeter.defaults import DEFAULTS
from ragmeter.errors import InputError, did_you_mean
from ragmeter.inputs.config import ADJUST_CHOICES
from ragmeter.stats.adjust import FDR_GUARANTEE, decide
from ragmeter.stats.clusters import cluster_bootstrap_many
from ragmeter.stats.maxt import constrained
from ragmeter.stats.paired_tests import (
    Flips,
    flip_ends,
    is_binary,
    mcnemar_exact,
    min_differing,
    signflip_interval,
    tango_ends,
    tango_interval,
    tango_z,
)

__all__ = [
    "ADJUSTMENTS",
    "Row",
    "Rule",
    "Verdicts",
    "column_labels",
    "compare_family",
    "fmt_end",
    "fmt_p",
    "identical_groups",
    "is_binary",
    "mcnemar_exact",
    "min_differing",
    "parse_pairs",
    "shown_difference",
    "shown_p",
    "signflip_interval",
    "tango_interval",
    "tango_z",
]

Adjust = Literal["holm", "maxt", "fdr", "none"]
ADJUSTMENTS = ADJUST_CHOICES


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
    constraints: bool = False  # max-T steps limited to pairs that can be true together
    clusters: int = 0  # flips of whole clusters (documents), 0: of whole questions

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
        if self.adjust == "maxt":
            limited = (
                ", each step over the pairs that can be true together" if self.constraints else ""
            )
            return (
                f"Rule: Westfall-Young step-down max-T over {self.pairs} pairs ({self.family})"
                f"{limited}: "
                f"'better' when the adjusted p < {self.alpha:g}; {self.test}, joint null from "
                f"{self.rounds} sign flips of whole {self._units} shared by every pair; interval: "
                f"{self.interval} at the level max-T used for the pair"
            )
        if self.adjust == "fdr":
            return (
                f"Rule: Benjamini-Hochberg over {self.pairs} pairs ({self.family}): 'better' "
                f"when the BH-adjusted p < {self.alpha:g}; {FDR_GUARANTEE}; {self.test}; "
                f"interval: {self.interval} at the level BH used (R x {self.alpha:g} / "
                f"{self.pairs}, R the pairs called 'better': false coverage-rate intervals)"
            )
        return (
            f"Rule: Holm over {self.pairs} pairs ({self.family}): 'better' when the adjusted "
            f"p < {self.alpha:g}; {self.test}; interval: {self.interval} at the level Holm "
            f"used for the pair"
        )

    @property
    def _units(self) -> str:
        return f"clusters ({self.clusters} documents)" if self.clusters else "questions"

    @property
    def p_label(self) -> str | None:
        return column_labels(self)[1]

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        if not self.clusters:
            del out["clusters"]  # question-level: as summaries were written before
        out["header"] = self.header
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Rule:
        """The inverse of :meth:`to_dict` (``header`` is derived, so dropped)."""
        return stats.from_fields(cls, data)


def rule_alpha(rule: Rule | None, confidence: float = DEFAULTS.confidence) -> float:
    """The level a table decided at: its rule's, else :func:`ragmeter.stats.alpha_of`
    (a table saved before rules were recorded)."""
    return rule.alpha if rule is not None else stats.alpha_of(confidence)


@dataclass(frozen=True)
class Row:
    """One comparison, A - B. ``p`` is the rule's p-value (None under ``adjust="none"``).

    ``p_value`` is the unadjusted p-value of the pair's test, ``level`` the two-sided
    level its interval was built at (the difference's ``confidence`` is 1 - level),
    ``differ`` the questions where A and B scored differently and ``needed`` the
    fewest differing questions that could be separated at ``level``. ``winner`` is who
    won: the system the rule puts above the other (the higher mean: a row does not know its
    measure's direction), None for a tie or an identical pair; ``verdict`` is worded from
    it (:func:`ragmeter.stats.verdict_text`). Read ``winner``, never the verdict's words.
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
    winner: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The row as summary.json keeps it: ``p`` is the rule's p (the rule is
        named beside the rows); earlier summaries' ``p_holm`` is still read."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any], *, ruled: bool = True) -> Row:
        """The inverse of :meth:`to_dict`; also reads the rows of summaries written
        before the decision rule was recorded (``ruled=False``: no ``p``, ``level``,
        ``differ``..., the verdict taken from the interval) or before the winner was
        (:func:`~ragmeter.stats.winner_of`: from ``separated``, ``identical`` and the sign
        of the difference)."""
        d = dict(data)
        diff = stats.Estimate.from_dict(d["difference"])
        if "p" not in d:  # an earlier summary: p_holm beside p_value, no rule
            d["p"] = d.get("p_holm") if ruled or d.get("p_holm") is not None else d["p_value"]
        d.setdefault("level", stats.alpha_of(diff.confidence))
        d.setdefault("differ", int(d["wins"]) + int(d["losses"]))
        d.setdefault("needed", 0)
        d.setdefault("separated", diff.low > 0 or diff.high < 0)
        d.setdefault("identical", False)
        d.setdefault("verdict", "")
        if "winner" not in d:  # who won, from the decision: never from the verdict's words
            won = d["separated"] and not d["identical"]
            d["winner"] = stats.winner_of(d["a"], d["b"], diff, won)
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
    family: str = "all",
) -> tuple[str, list[tuple[int, int]], list[tuple[int, int]]]:
    """Family label, compared pairs and identical pairs (as row indices)."""
    pos = {s: i for i, s in enumerate(names)}
    rep = {s: g[0] for g in groups for s in g}

    def known(s: str) -> int:
        if s not in pos:
            raise InputError(f"unknown system {s!r}{did_you_mean(s, names)}; choose one of {names}")
        return pos[s]

    compared: list[tuple[int, int]] = []
    same: list[tuple[int, int]] = []
    if pairs is not None and baseline is not None:
        raise InputError("give a baseline or planned pairs, not both")
    if family not in FAMILIES:
        raise InputError(f"family must be one of {FAMILIES}, got {family!r}")
    if family != "all" and (pairs is not None or baseline is not None):
        raise InputError(
            f"the family {family!r} chooses its own pairs; give it, a baseline or "
            f"planned pairs, not more than one"
        )
    if family != "all":
        for i, j in grid_pairs(names, family):
            a, b = names[i], names[j]
            (same if rep.get(a, a) == rep.get(b, b) else compared).append((i, j))
        return GRID_LABELS[family], compared, same
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


def compare_family(
    matrix: ArrayLike,
    names: Sequence[str],
    *,
    adjust: Adjust = "maxt",
    baseline: str | None = None,
    pairs: Sequence[tuple[str, str]] | None = None,
    identical: list[list[str]] | None = None,
    alpha: float = stats.alpha_of(DEFAULTS.confidence),
    rounds: int = DEFAULTS.rounds,
    seed: stats.Seed = DEFAULTS.seed,
    binary: bool | None = None,
    clusters: ArrayLike | None = None,
    family: str = "all",
) -> Verdicts:
    """Compare systems (rows of ``matrix``) over one family of pairs under one rule.

    The family is every pair (default), every system against ``baseline``, the
    planned ``pairs`` (``(A, B)`` names; A - B is reported), or a grid ``family``
    (``"grid"``, ``"retrievers"``, ``"strategies"``:
    :func:`ragmeter.comparison.families.grid_pairs`, adjusted as one family). ``identical`` groups
    (default: systems with identical rows of ``matrix``) are compared once, through
    their first member, and reported as identical. ``binary`` (default: all scores
    0 or 1) picks McNemar's exact test and Tango's interval; otherwise the sign-flip
    test and its inverted interval are used. ``adjust="maxt"`` (the default) decides
    with the step-down max-T over those tests, ``adjust="holm"`` with Holm's
    procedure; ``adjust="none"`` reproduces the seed's per-pair percentile rule exactly.
    ``clusters`` (a code 0..G-1 per question, :mod:`ragmeter.stats.clusters`) makes
    every test flip whole clusters instead of questions (the sign-flip test, for 0/1
    scores too: McNemar's test assumes independent questions) and ``adjust="none"``
    read the cluster bootstrap's interval.
    """
    m = stats.as_matrix(matrix, "matrix")
    names = list(names)
    stats.check_names(names, m.shape[0])
    stats.check_common(rounds, seed, "percentile", 1.0 - alpha if 0 < alpha < 1 else 0.5)
    stats.check_fraction(alpha, "alpha")
    if adjust not in ADJUSTMENTS:
        raise InputError(f"adjust must be one of {ADJUSTMENTS}, got {adjust!r}")
    if m.shape[0] < 2:
        raise InputError("a comparison needs at least two systems")
    groups = identical_groups([m], names) if identical is None else identical
    if names_an_effect(pairs):  # planned main effects: pairs of averaged rows
        m, names, _ = with_main_effects(m, names)
    label, compared, same = _family(names, baseline, pairs, groups, family)
    if family == MAIN_EFFECTS:  # each main effect: a pair of rows of averaged scores
        m, names, effects = with_main_effects(m, names)
        compared = compared + effects
    binary = is_binary(m) if binary is None else binary
    n = m.shape[1]
    codes = None
    if clusters is not None:
        codes = np.asarray(clusters, dtype=np.intp)
        binary = False  # exact McNemar/Tango assume independent questions
    test, interval = _test_and_interval(adjust, alpha, rounds, binary, codes is not None)
    rule = Rule(
        adjust=adjust,
        alpha=alpha,
        family=label,
        pairs=len(compared),
        test=test,
        interval=interval,
        seed=stats.seed_record(seed),
        rounds=rounds,
        rng=stats.rng_name(seed),
        identical=[list(g) for g in groups],
        constraints=adjust == "maxt" and constrained(compared, rounds, alpha),
        clusters=0 if codes is None else int(codes.max()) + 1,
    )
    rows: list[Row] = []
    if compared:
        rows = _rows(m, names, compared, adjust, alpha, rounds, seed, binary, codes)
    for i, j in same:
        zero = stats.Estimate(0.0, 0.0, 0.0, n, rounds, rule.seed, "identical", rule.rng)
        p = None if adjust == "none" else 1.0
        verdict = stats.verdict_text(None, "identical (same scores on every question)")
        args = (zero, 1.0, p, alpha, (0, n, 0), min_differing(alpha), False, verdict)
        rows.append(_row(names[i], names[j], *args, identical=True))
    return Verdicts(rule, rows)


def _test_and_interval(
    adjust: str, alpha: float, rounds: int, binary: bool, clustered: bool
) -> tuple[str, str]:
    """The names of a table's test and interval, as its rule records them."""
    if adjust == "none" and clustered:
        return (
            "no test (the interval decides)",
            f"{(1 - alpha) * 100:g}% paired cluster bootstrap (whole documents)",
        )
    if adjust == "none":
        return (
            "no test (the interval decides)",
            f"{(1 - alpha) * 100:g}% paired percentile bootstrap",
        )
    if clustered:
        return f"sign-flip test of whole clusters ({rounds} rounds)", "sign-flip test inverted"
    if binary:
        return "McNemar's exact test (0/1 scores)", "Tango's score interval"
    return f"sign-flip test ({rounds} rounds)", "sign-flip test inverted"


def _row(
    a: str,
    b: str,
    difference: stats.Estimate,
    p_value: float,
    p: float | None,
    level: float,
    counts: tuple[int, int, int],
    needed: int,
    separated: bool,
    verdict: str,
    identical: bool = False,
    winner: str | None = None,
) -> Row:
    """A row from its pair's counts (wins, ties, losses): the differing questions are
    the wins and losses."""
    w, t, lo = counts
    fields = (a, b, difference, p_value, p, level, w, t, lo, w + lo, needed, separated, identical)
    return Row(*fields, verdict, winner)


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
    codes: np.ndarray | None = None,
) -> list[Row]:
    n = m.shape[1]
    k = len(compared)
    counts = [_counts(m[i], m[j]) for i, j in compared]
    if adjust == "none" and codes is not None:
        return _cluster_none_rows(m, names, compared, counts, alpha, rounds, seed, codes)
    if adjust == "none":
        return _percentile_rows(m, names, compared, counts, alpha, rounds, seed)
    rule = adjust if k > 1 else "holm"  # a family of one is its own test under any rule
    flips = None if binary and rule != "maxt" else Flips.of_pairs(m, compared, rounds, seed, codes)
    p_raw, p_adj, reject, levels = decide(flips, binary, counts, compared, alpha, rule)
    if binary:
        wins = np.array([c[0] for c in counts], dtype=np.float64)
        losses = np.array([c[2] for c in counts], dtype=np.float64)
        lows, highs = tango_ends(wins, losses, np.full(k, float(n)), levels, reject)
    else:
        lows, highs = flip_ends(flips, reject, levels)
    method = (
        "tango"
        if binary
        else ("sign-flip inversion" if codes is None else "cluster sign-flip inversion")
    )
    out = []
    for c, (i, j) in enumerate(compared):
        mean = stats.seq_mean(m[i] - m[j] + 0.0)
        est = stats.Estimate(
            mean=mean,
            low=float(lows[c]),
            high=float(highs[c]),
            n=n,
            rounds=rounds,
            seed=stats.seed_record(seed),
            method=method,
            rng=stats.rng_name(seed),
            confidence=1.0 - float(levels[c]),
        )
        needed = min_differing(float(levels[c]))
        differ = counts[c][0] + counts[c][2]
        winner = stats.winner_of(names[i], names[j], est, bool(reject[c]))
        if differ < needed:
            tie = (
                f"tie: too few differing questions ({differ} of {n} differ; "
                f"at least {needed} needed)"
            )
        else:
            tie = "tie (interval includes 0)"
        verdict = stats.verdict_text(winner, tie)
        level = float(levels[c])
        args = (est, p_raw[c], p_adj[c], level, counts[c], needed, bool(reject[c]), verdict)
        out.append(_row(names[i], names[j], *args, winner=winner))
    return out


def _percentile_rows(m, names, compared, counts, alpha, rounds, seed) -> list[Row]:
    """``adjust="none"``: the seed's rule, the percentile paired interval
    (pairedDifference), decides."""
    comps = stats.compare_pairs(m, names, compared, rounds, seed, "percentile", 1.0 - alpha)
    out = []
    for c, cnt in zip(comps, counts, strict=True):
        winner = stats.interval_winner(c.difference, c.a, c.b)
        sep = winner is not None
        args = (c.difference, c.p_value, None, alpha, cnt, min_differing(alpha), sep, c.verdict)
        out.append(_row(c.a, c.b, *args, winner=winner))
    return out


def _cluster_none_rows(m, names, compared, counts, alpha, rounds, seed, codes) -> list[Row]:
    """``adjust="none"`` with clusters: the paired cluster bootstrap's interval decides."""
    diffs = np.stack([m[i] - m[j] for i, j in compared], axis=1) + 0.0
    ests = cluster_bootstrap_many(diffs.T, codes, rounds, seed, 1.0 - alpha)
    flips = Flips.of_pairs(m, compared, rounds, seed, codes)
    p_raw = flips.p_values(np.zeros(len(compared)), np.arange(len(compared)))
    out = []
    for c, (i, j) in enumerate(compared):
        diff = ests[c]
        winner = stats.interval_winner(diff, names[i], names[j])
        sep = winner is not None
        verdict = stats.interval_verdict(diff, names[i], names[j])
        args = (diff, float(p_raw[c]), None, alpha, counts[c], min_differing(alpha), sep, verdict)
        out.append(_row(names[i], names[j], *args, winner=winner))
    return out

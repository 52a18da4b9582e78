"""Where each system ranks: tie groups from a table's verdicts, and rank ranges.

Two readings of one comparison, each read off verdicts as data (a row's ``winner``,
set from ``separated`` and the sign of its ``difference``; never its text):

* **Tie groups** (from the table's own family and rule). Two systems are *not
  separated* when no verdict of the table separates them: the table calls them a tie,
  calls them identical, or (a baseline, planned pairs, a grid family) does not compare
  them. A tie is not transitive (A ties B and B ties C while A beats C), so the groups
  may overlap: they are the largest sets of systems no two of which are separated (the
  maximal cliques of "not separated", as a compact letter display prints them). Every
  pair the table calls a tie shares a group, and no group holds a pair it separates.
  The **top** is the systems no verdict puts below another (never empty: the highest
  mean is one), and a system every other system is found ahead of is **below all**.
* **Rank ranges** (simultaneous, Mogstad, Romano, Shaikh and Wilhelm, "Inference for
  ranks", REStud 2024). With ``K`` systems, a system's range runs from 1 + the number
  of systems found ahead of it to ``K`` - the number found behind it, where "found"
  means separated by a family-wise rule over *all* pairs. When that rule makes no
  false claim of "ahead" (probability at least 1 - alpha), every range holds its
  system's true rank (1 + the systems truly ahead; systems with equal true means share
  the better rank) at once: the ranges cover jointly at the rule's level. The table's
  own rows are read when its family is every pair under a family-wise rule (max-T or
  Holm); otherwise (a baseline, planned pairs, a grid family, ``adjust="none"`` or a
  rule that does not bound the family-wise error) every pair is compared again under
  max-T, with the table's level, seed, rounds, clusters and identical systems
  (:func:`ragmeter.comparison.systems.compare_systems`), and the ranges say so.

"Ahead" follows the measure's direction: a higher score, or fewer words where lower is
better (:func:`ragmeter.scoring.names.lower_is_better`). Identical systems are compared
once, through the first of their group, as the table compares them; each member takes
its group's verdicts. ``bench/ranks.py`` measures the joint coverage.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ragmeter import stats
from ragmeter.comparison.formatting import metric_scale
from ragmeter.comparison.systems import ComparisonPlan, compare_systems
from ragmeter.comparison.verdicts import Row, Rule, Verdicts
from ragmeter.scoring.names import is_share, lower_is_better, metric_label

__all__ = [
    "FAMILYWISE",
    "RankRange",
    "Ranks",
    "ahead_pairs",
    "rank_ranges",
    "rank_run",
    "ranks_of",
    "resolve_ranks",
    "tie_groups",
]

FAMILYWISE = ("maxt", "holm")
"""Rules whose verdicts bound the family-wise error, so a table of all pairs under one
of them gives rank ranges as it stands."""

MAX_GROUPS = 200
"""More largest tied sets than this (only a tangle of ties no real table makes) and each
system's group is itself with every system not separated from it instead: every tied pair
still shares a group, but a group may then hold a pair that is separated."""


@dataclass(frozen=True)
class RankRange:
    """One system's mean and the ranks it may hold (``low`` best, 1 = first)."""

    system: str
    mean: float
    low: int
    high: int

    @property
    def shown(self) -> str:
        """``"2"``, or ``"1-3"`` for a range."""
        return str(self.low) if self.low == self.high else f"{self.low}-{self.high}"


def ahead_pairs(
    rows: Sequence[Row], identical: Sequence[Sequence[str]] = (), *, lower_better: bool = False
) -> set[tuple[str, str]]:
    """``{(ahead, behind)}``: the pairs ``rows`` separate, ordered by the direction of the
    measure (a row's ``winner`` has the higher score: ahead, unless lower is better); each
    member of an identical group takes its first member's verdicts."""
    members = {g[0]: list(g) for g in identical if g}
    out: set[tuple[str, str]] = set()
    for r in rows:
        if r.identical or r.winner is None:
            continue
        other = r.b if r.winner == r.a else r.a
        pair = (other, r.winner) if lower_better else (r.winner, other)
        for first in members.get(pair[0], [pair[0]]):
            for second in members.get(pair[1], [pair[1]]):
                out.add((first, second))
    return out


def rank_ranges(
    order: Sequence[str], means: Mapping[str, float], ahead: set[tuple[str, str]]
) -> list[RankRange]:
    """Each system's range: 1 + the systems ``ahead`` of it to K - those behind it."""
    k = len(order)
    return [
        RankRange(
            s,
            float(means[s]),
            1 + sum((t, s) in ahead for t in order),
            k - sum((s, t) in ahead for t in order),
        )
        for s in order
    ]


def tie_groups(order: Sequence[str], ahead: set[tuple[str, str]]) -> list[list[str]]:
    """The largest sets of systems no two of which are separated, each in ``order``,
    sorted by their members' places in it (Bron-Kerbosch with a pivot)."""
    k = len(order)
    apart = {frozenset(p) for p in ahead}
    tied = [{j for j in range(k) if j != i and {order[i], order[j]} not in apart} for i in range(k)]
    found: list[list[int]] = []

    def grow(clique: list[int], candidates: set[int], done: set[int]) -> None:
        if len(found) > MAX_GROUPS:
            return
        if not candidates and not done:
            found.append(sorted(clique))
            return
        pivot = max(candidates | done, key=lambda u: len(tied[u] & candidates))
        for v in sorted(candidates - tied[pivot]):
            grow([*clique, v], candidates & tied[v], done & tied[v])
            candidates = candidates - {v}
            done = done | {v}

    grow([], set(range(k)), set())
    if len(found) > MAX_GROUPS:
        found = [sorted({i} | tied[i]) for i in range(k)]
    return [[order[i] for i in g] for g in sorted(found)]


def _letters(index: int) -> str:
    """Group ``index`` as a letter: a..z, then aa, ab..."""
    out = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        out = chr(ord("a") + rest) + out
    return out


def _names(names: Sequence[str], most: int = 4) -> str:
    shown = list(names[:most])
    if len(names) > most:
        return ", ".join(shown) + f" and {len(names) - most} more"
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]


@dataclass(frozen=True)
class Ranks:
    """Where each system of one comparison ranks on ``metric``.

    ``order`` is the systems by mean, best first (equal means in the table's order);
    ``groups`` the tie groups of the table's verdicts (``family``: its family and rule);
    ``top`` the systems no verdict puts below another; ``leader`` the system the table
    finds ahead of every other, and ``below_all`` the one every other is found ahead of,
    if any; ``ranges`` each system's simultaneous rank range,
    in ``order``, from the all-pairs family-wise ``rule`` (``own``: the table's own rows,
    else a comparison of every pair under max-T made for the ranges).
    """

    metric: str
    lower_better: bool
    order: list[str]
    groups: list[list[str]]
    top: list[str]
    below_all: str | None
    ranges: list[RankRange]
    rule: Rule
    own: bool
    family: str = ""
    leader: str | None = None

    @property
    def confidence(self) -> float:
        return 1.0 - self.rule.alpha

    def letters(self, system: str) -> str:
        """The letters of the groups ``system`` is in (``"ab"``)."""
        return "".join(_letters(i) for i, g in enumerate(self.groups) if system in g)

    @property
    def column(self) -> str:
        """The heading of the means' column: the measure as its row names it
        (:func:`~ragmeter.scoring.names.metric_label`), ``(%)`` for a share."""
        return metric_label(self.metric) + (" (%)" if is_share(self.metric) else "")

    def shown_mean(self, system: str) -> str:
        scale, digits = metric_scale(self.metric)
        mean = next(r.mean for r in self.ranges if r.system == system)
        return f"{mean * scale:.{digits}f}"

    @property
    def sentence(self) -> str:
        """The headline's words: ``"sentence, recursive and parent-400 share the top;
        fixed below all"``."""
        k = len(self.order)
        if len(self.top) == k:
            return f"{_names(self.top)} share the top: no verdict separates " + (
                "any two" if k > 2 else "them"
            )
        if len(self.top) > 1:
            head = f"{_names(self.top)} share the top"
        elif self.leader is not None and k == 2:
            return f"{self.leader} ahead of {self.order[1]}"
        elif self.leader is not None:
            head = f"{self.leader} ahead of every other system"
        else:
            head = f"{self.top[0]} alone is below no other system"
        if self.below_all is not None:
            head += f"; {self.below_all} below all"
        return head

    @property
    def ranges_note(self) -> str:
        """The line under the ranks saying what the ranges mean and where they come from."""
        level = f"{self.confidence * 100:g}%"
        k = len(self.order)
        pairs = "the pair" if self.rule.pairs == 1 else f"the {self.rule.pairs} pairs"
        how = (
            f"{pairs} of the table above"
            if self.own
            else f"every pair ({self.rule.pairs}) compared again for the ranks under max-T, "
            f"as the table above compares {self.family}"
        )
        return (
            f"Rank: every system's rank lies in its range at once with {level} confidence "
            f"(Mogstad et al. 2024): from 1 + the systems found ahead of it to {k} - those "
            f"found behind it, over {how}; seed {self.rule.seed}, {self.rule.rounds} rounds. "
            f"Groups: systems sharing a letter are not separated by the table's verdicts "
            f"(every pair it calls a tie shares a letter; pairs it does not compare count "
            f"as not separated)."
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready form ``summary.json`` and ``answers/verdicts.json`` keep; the
        texts the views print (``sentence``, ``note``, each system's ``rank``, ``mean``
        shown and group ``letters``) are carried beside the numbers."""
        return {
            "metric": self.metric,
            "lower_better": self.lower_better,
            "confidence": self.confidence,
            "column": self.column,
            "order": list(self.order),
            "groups": [list(g) for g in self.groups],
            "top": list(self.top),
            "below_all": self.below_all,
            "leader": self.leader,
            "systems": [
                {
                    "system": r.system,
                    "mean": r.mean,
                    "rank_low": r.low,
                    "rank_high": r.high,
                    "rank": r.shown,
                    "shown_mean": self.shown_mean(r.system),
                    "letters": self.letters(r.system),
                }
                for r in self.ranges
            ],
            "rule": self.rule.to_dict(),
            "own": self.own,
            "family": self.family,
            "sentence": self.sentence,
            "note": self.ranges_note,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Ranks:
        """The inverse of :meth:`to_dict` (the texts are derived, so dropped)."""
        return cls(
            metric=str(data["metric"]),
            lower_better=bool(data["lower_better"]),
            order=[str(s) for s in data["order"]],
            groups=[[str(s) for s in g] for g in data["groups"]],
            top=[str(s) for s in data["top"]],
            below_all=None if data.get("below_all") is None else str(data["below_all"]),
            ranges=[_range_of(r) for r in data["systems"]],
            rule=Rule.from_dict(data["rule"]),
            own=bool(data["own"]),
            family=str(data.get("family", "")),
            leader=None if data.get("leader") is None else str(data["leader"]),
        )


def _range_of(data: dict[str, Any]) -> RankRange:
    """A :class:`RankRange` from a system's entry in :meth:`Ranks.to_dict`."""
    return RankRange(
        str(data["system"]), float(data["mean"]), int(data["rank_low"]), int(data["rank_high"])
    )


def ranks_of(
    table: Verdicts,
    every_pair: Verdicts,
    means: Mapping[str, float],
    metric: str,
    *,
    own: bool = False,
) -> Ranks:
    """The ranks of the systems in ``means`` (in the table's order): tie groups from
    ``table``'s verdicts, rank ranges from ``every_pair`` (all pairs, a family-wise rule)."""
    lower = lower_is_better(metric)
    names = list(means)
    order = sorted(names, key=lambda s: (means[s] if lower else -means[s], names.index(s)))
    told = ahead_pairs(table.rows, table.rule.identical, lower_better=lower)
    found = ahead_pairs(every_pair.rows, every_pair.rule.identical, lower_better=lower)
    beaten = {behind for _, behind in told}
    bottom = [s for s in order if all((t, s) in told for t in order if t != s)]
    first = [s for s in order if all((s, t) in told for t in order if t != s)]
    return Ranks(
        metric=metric,
        lower_better=lower,
        order=order,
        groups=tie_groups(order, told),
        top=[s for s in order if s not in beaten],
        below_all=bottom[0] if bottom and len(order) > 1 else None,
        ranges=rank_ranges(order, means, found),
        rule=every_pair.rule,
        own=own,
        family=_family_words(table.rule),
        leader=first[0] if first and len(order) > 1 else None,
    )


def _family_words(rule: Rule) -> str:
    names = {"maxt": "max-T", "holm": "Holm", "none": "the per-pair rule"}
    return f"{rule.family} under {names.get(rule.adjust, rule.adjust)}"


def resolve_ranks(
    matrices: Mapping[str, np.ndarray],
    systems: Sequence[str],
    plan: ComparisonPlan,
    table: Verdicts,
) -> Ranks:
    """The ranks of ``systems`` on ``plan.metric``: ``table`` is their comparison under
    ``plan`` (:func:`ragmeter.comparison.systems.compare_systems`). Its rows give the
    ranges when it compares every pair under a family-wise rule; otherwise every pair is
    compared again under max-T with the plan's level, seed, rounds and clusters."""
    own = table.rule.family == "all pairs" and table.rule.adjust in FAMILYWISE
    every = table
    if not own:
        every = compare_systems(
            matrices, systems, replace(plan, adjust="maxt", baseline=None, pairs=None, family="all")
        )
    scores = np.asarray(matrices[plan.metric], dtype=np.float64)
    means = {s: stats.seq_mean(scores[i]) for i, s in enumerate(systems)}
    return ranks_of(table, every, means, plan.metric, own=own)


def rank_run(run: Any, plan: ComparisonPlan, table: Verdicts) -> Ranks:
    """:func:`resolve_ranks` over every system and metric of a run in memory or on disk,
    ``table`` being its comparison under ``plan``
    (:func:`ragmeter.comparison.systems.compare_run`)."""
    systems = [str(s) for s in run.systems]
    return resolve_ranks({m: run.matrix(m, systems) for m in run.metrics}, systems, plan, table)

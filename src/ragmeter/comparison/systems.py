"""The one comparison of a run's systems: every view's rows come from here.

``summary.json``, the terminal (``search``, ``compare``, ``evaluate``), the
report, the notebook (:func:`ragmeter.compare`) and ``ragmeter check`` all call
:func:`compare_systems`, so they agree by construction: the level is always
``1 - confidence`` of the run, identical systems are found one way (the same
scores on every question and every metric), and the family (all pairs, a
baseline, planned pairs, the families of a strategy x retriever grid) and its rule
come from one :class:`ComparisonPlan`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ragmeter.comparison import verdicts
from ragmeter.comparison.families import grid_cells
from ragmeter.defaults import DEFAULTS, EARLIER
from ragmeter.errors import InputError
from ragmeter.inputs.config import FAMILY_CHOICES, check_family, one_family
from ragmeter.scoring.metrics import find_metric
from ragmeter.stats.clusters import decide_clusters
from ragmeter.stats.validate import alpha_of

__all__ = [
    "FAMILY_CHOICES",
    "ComparisonPlan",
    "check_family",
    "compare_run",
    "compare_systems",
    "family_of",
]


@dataclass(frozen=True)
class ComparisonPlan:
    """What a comparison table compares and under which rule.

    ``metric`` is compared at level ``1 - confidence``; ``adjust`` names the rule
    (``"maxt"``, the default, ``"holm"`` or ``"none"``; a saved run that names none
    was decided under Holm); the family is every pair, every system against
    ``baseline``, the planned ``pairs``, or named by ``family``: ``"all"`` (every
    pair), ``"grid"`` (retrievers within each strategy and strategies within each
    retriever, one family), ``"retrievers"`` or ``"strategies"`` (one of the two),
    or ``"auto"`` (``"grid"`` when the systems form a strategy x retriever grid and
    no baseline or pairs are given, else every pair: :func:`family_of`); ``seed``
    and ``rounds`` drive the resampling. ``clusters`` (one label per question, e.g.
    its document) makes the tests flip whole clusters when ``cluster_mode`` says so
    ("auto": when the design effect is measurably above 1,
    :func:`ragmeter.stats.clusters.decide_clusters`; "document"/"field": always;
    "none": never); None flips questions.
    """

    metric: str
    seed: int
    rounds: int
    confidence: float = DEFAULTS.confidence
    adjust: str = "maxt"
    baseline: str | None = None
    pairs: tuple[tuple[str, str], ...] | None = None
    clusters: tuple[str, ...] | None = None
    cluster_mode: str = DEFAULTS.clusters
    family: str = "all"

    @property
    def alpha(self) -> float:
        """The family's level (:func:`ragmeter.stats.alpha_of`)."""
        return alpha_of(self.confidence)

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any]) -> ComparisonPlan:
        """A plan from a run's statistics settings (a ``Config`` as a dict, or the
        ``[stats]`` table of a saved ``config.toml`` merged with ``summary.json``)."""
        pairs = settings.get("pairs") or None
        return cls(
            metric=str(settings["metric"]),
            seed=int(settings["seed"]),
            rounds=int(settings["rounds"]),
            confidence=float(settings.get("confidence", EARLIER.confidence)),
            adjust=str(settings.get("adjust") or "holm"),
            baseline=settings.get("baseline") or None,
            pairs=tuple(verdicts.parse_pairs(pairs)) if pairs else None,
            # a saved run that names no family compared every pair
            family=str(settings.get("family") or EARLIER.family),
            # clusters ("auto" decides as the summary did: decide_clusters)
            cluster_mode=str(settings.get("clusters") or EARLIER.clusters),
        )

    def choose(
        self,
        a: str | None = None,
        b: str | None = None,
        *,
        metric: str | None = None,
        seed: int | None = None,
        rounds: int | None = None,
        adjust: str | None = None,
        baseline: str | None = None,
        pairs: Sequence[tuple[str, str]] | str | None = None,
        family: str | None = None,
    ) -> ComparisonPlan:
        """This plan with what the caller chose instead: one pair ``a``/``b`` (a family
        of one), a ``baseline``, planned ``pairs``, a named ``family`` (``"all"``,
        ``"grid"``, ``"retrievers"``, ``"strategies"``), another metric, seed, rounds
        or rule. Choosing a family replaces the run's family; anything not chosen stays."""
        if family is not None:
            check_family(family)
        if (a is None) != (b is None):
            raise InputError("give both A and B of a pair, or neither to compare every pair")
        chosen = verdicts.parse_pairs(pairs) if pairs else None
        if a is not None:
            if baseline or chosen or family:
                raise InputError(
                    "one pair (A and B) is a family of its own; do not combine it "
                    "with a baseline, planned pairs or a family"
                )
            chosen = [(str(a), str(b))]
        if baseline and chosen:
            raise InputError("give a baseline or planned pairs, not both")
        one_family(family, baseline, chosen)
        family_chosen = bool(baseline or chosen or family)
        return replace(
            self,
            metric=metric or self.metric,
            seed=self.seed if seed is None else int(seed),
            rounds=rounds or self.rounds,
            adjust=adjust or self.adjust,
            baseline=baseline if family_chosen else self.baseline,
            pairs=tuple(chosen) if chosen else (None if family_chosen else self.pairs),
            family=family or ("all" if family_chosen else self.family),
        )


def family_of(plan: ComparisonPlan, systems: Sequence[str]) -> str:
    """The family kind ``plan`` compares ``systems`` under: ``"auto"`` is ``"grid"``
    when the systems form a strategy x retriever grid
    (:func:`ragmeter.comparison.families.grid_cells`)
    and no baseline or planned pairs are given, else ``"all"``; a baseline or pairs
    always compare as themselves (``"all"`` here)."""
    if plan.baseline or plan.pairs:
        return "all"
    if plan.family == "auto":
        return "grid" if grid_cells(systems) is not None else "all"
    return plan.family


def compare_systems(
    matrices: Mapping[str, np.ndarray],
    systems: Sequence[str],
    plan: ComparisonPlan,
    *,
    fold_identical: bool = True,
) -> verdicts.Verdicts:
    """The comparison table of ``systems`` under ``plan``.

    ``matrices`` maps every metric of the run to its (systems x questions) scores,
    rows in ``systems`` order; identical systems (the same score on every question
    of every metric given) are compared once and reported as identical, unless
    ``fold_identical`` is off (two runs of one system, as ``ragmeter check`` pairs).
    """
    metric = find_metric(plan.metric, matrices)  # P_5 or precision@5, as the run names it
    if len(systems) < 2:
        raise InputError("a comparison needs at least two systems")
    identical = (
        verdicts.identical_groups(list(matrices.values()), list(systems)) if fold_identical else []
    )
    return verdicts.compare_family(
        matrices[metric],
        list(systems),
        adjust=plan.adjust,  # type: ignore[arg-type]
        baseline=plan.baseline,
        pairs=list(plan.pairs) if plan.pairs else None,
        identical=identical,
        alpha=plan.alpha,
        rounds=plan.rounds,
        seed=plan.seed,
        clusters=decide_clusters(
            np.asarray(matrices[plan.metric], dtype=np.float64),
            plan.clusters,
            plan.cluster_mode,
            plan.seed,
            plan.rounds,
            plan.confidence,
        )[1],
        family=family_of(plan, systems),
    )


def compare_run(run: Any, plan: ComparisonPlan) -> verdicts.Verdicts:
    """:func:`compare_systems` over every system and metric of a run in memory
    (:class:`ragmeter.runs.search_run.SearchRun`) or on disk
    (:class:`ragmeter.runs.results.Results`)."""
    systems = [str(s) for s in run.systems]
    return compare_systems({m: run.matrix(m, systems) for m in run.metrics}, systems, plan)

"""A search's summary, typed: intervals, comparisons and sample sizes.

:func:`summarize` computes it (every interval, comparison and sample size of a run
comes from here); :class:`Summary` holds it as :class:`~ragmeter.stats.Estimate`,
:class:`~ragmeter.comparison.verdicts.Row`, :class:`~ragmeter.comparison.verdicts.Rule` and
:class:`~ragmeter.stats.SizeRow` objects. ``summary.json`` is
:meth:`Summary.to_json`; :meth:`Summary.from_json` reads it back, and is the one
place where a summary written by an earlier version gets its defaults (seed 1,
10,000 rounds, 95%, percentile). The terminal, the report and the notebook tables
all read these objects.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import numpy as np

from ragmeter import stats
from ragmeter.comparison import verdicts
from ragmeter.comparison.ranks import Ranks, resolve_ranks
from ragmeter.comparison.systems import ComparisonPlan, compare_systems
from ragmeter.defaults import DEFAULTS, EARLIER
from ragmeter.errors import InputError
from ragmeter.scoring import measurement
from ragmeter.scoring.metrics import find_metric
from ragmeter.stats.clusters import (
    Clusters,
    Design,
    cluster_bootstrap_many,
    cluster_codes,
    decide_clusters,
    design_effects,
)

RETURNED_IDEAL_NOTE = (
    "nDCG ranks these systems differently from recall: with the returned ideal it scores "
    "the order of what each system returned, not what it missed (recall counts that)."
)
DEFAULT_METRIC = "recall@5"
DEFAULT_SEED = DEFAULTS.seed  # kept importable: ragmeter.defaults holds the defaults
DEFAULT_ROUNDS = DEFAULTS.rounds


@dataclass(frozen=True)
class Summary:
    """Intervals for every system x metric, the comparisons on ``metric`` under one
    rule, and sample-size rows, with the seed, rounds and confidence they were drawn
    with. ``k_capped`` names systems scored at their item count for a larger k."""

    metric: str = DEFAULT_METRIC
    seed: int = DEFAULT_SEED
    rounds: int = DEFAULT_ROUNDS
    confidence: float = DEFAULTS.confidence
    method: str = "percentile"
    estimates: dict[str, dict[str, stats.Estimate]] = field(default_factory=dict)
    comparisons: list[verdicts.Row] = field(default_factory=list)
    comparison_rule: verdicts.Rule | None = None
    sample_size: dict[str, list[stats.SizeRow]] = field(default_factory=dict)
    k_capped: dict[str, int] = field(default_factory=dict)
    clusters: Clusters | None = None
    design: dict[str, dict[str, Design]] = field(default_factory=dict)
    # each question's cluster label (scores.json keeps them, not summary.json)
    cluster_labels: tuple[str, ...] | None = field(default=None, compare=False)
    # per system, the questions it matched nothing for (:func:`unmatched_questions`)
    unmatched: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # where each system ranks on the metric (:mod:`ragmeter.comparison.ranks`)
    ranks: Ranks | None = None

    @property
    def compared_by(self) -> tuple[str, ...] | None:
        """The cluster labels the comparisons flip by (None: whole questions)."""
        used = self.clusters is not None and self.clusters.used
        return self.cluster_labels if used else None

    def design_of(self, system: str, metric: str | None = None) -> Design | None:
        """One system's design effect on ``metric`` (the comparison metric by default)."""
        return self.design.get(str(system), {}).get(metric or self.metric)

    ndcg: dict[str, str] = field(default_factory=dict)
    """nDCG's ideal and gain (``{"ideal": "returned", "gain": "exponential"}``);
    empty for a summary written before it was recorded."""

    @property
    def ndcg_label(self) -> str:
        """``nDCG: returned ideal, exponential gain`` (``""`` when not recorded)."""
        return ndcg_label(self.ndcg)

    def ndcg_note(self, ks: list[int]) -> str | None:
        """:data:`RETURNED_IDEAL_NOTE` where, under the returned ideal, nDCG@k orders two
        systems one way and recall@k the other (at any k both were computed at)."""
        if self.ndcg.get("ideal") != "returned":
            return None
        for k in ks:
            means = [
                (e[f"ndcg@{k}"].mean, e[f"recall@{k}"].mean)
                for e in self.estimates.values()
                if f"ndcg@{k}" in e and f"recall@{k}" in e
            ]
            for i, (n_a, r_a) in enumerate(means):
                if any((n_a - n_b) * (r_a - r_b) < 0 for n_b, r_b in means[i + 1 :]):
                    return RETURNED_IDEAL_NOTE
        return None

    @property
    def rng(self) -> str | None:
        """The generator the intervals were drawn with (``mulberry32``)."""
        for per_system in self.estimates.values():
            for est in per_system.values():
                return est.rng
        return None

    @property
    def alpha(self) -> float:
        """The comparisons' level: the rule's, else 1 - confidence."""
        return verdicts.rule_alpha(self.comparison_rule, self.confidence)

    def estimate(self, system: str, metric: str | None = None) -> stats.Estimate | None:
        """One system's estimate on ``metric`` (the comparison metric by default)."""
        return self.estimates.get(str(system), {}).get(metric or self.metric)

    def to_json(self) -> dict[str, Any]:
        """``summary.json`` as a plain dict (JSON-ready)."""
        out: dict[str, Any] = {
            "metric": self.metric,
            "seed": self.seed,
            "rounds": self.rounds,
            "confidence": self.confidence,
            "method": self.method,
            "estimates": {
                s: {m: e.to_dict() for m, e in per.items()} for s, per in self.estimates.items()
            },
            "comparisons": [r.to_dict() for r in self.comparisons],
            "comparison_rule": None
            if self.comparison_rule is None
            else self.comparison_rule.to_dict(),
            "sample_size": {s: [r.to_dict() for r in rows] for s, rows in self.sample_size.items()},
        }
        if self.k_capped:
            out["k_capped"] = dict(self.k_capped)
        if self.clusters is not None:
            out["clusters"] = self.clusters.to_dict()
            out["design"] = {
                s: {m: d.to_dict() for m, d in per.items()} for s, per in self.design.items()
            }
        if self.ndcg:
            out["ndcg"] = dict(self.ndcg)
        if self.unmatched:
            out["unmatched"] = {s: list(ids) for s, ids in self.unmatched.items()}
        if self.ranks is not None:
            out["ranks"] = self.ranks.to_dict()
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any], where: str = "summary.json") -> Summary:
        """Read :meth:`to_json`'s dict back; keys an earlier version did not write
        take their defaults here. A damaged file is an :class:`InputError` naming
        ``where``."""
        try:
            rule = data.get("comparison_rule")
            return cls(
                metric=str(data.get("metric") or DEFAULT_METRIC),
                seed=int(data.get("seed", EARLIER.seed)),
                rounds=int(data.get("rounds", EARLIER.rounds)),
                confidence=float(data.get("confidence", EARLIER.confidence)),
                method=str(data.get("method", "percentile")),
                estimates={
                    str(s): {str(m): stats.Estimate.from_dict(e) for m, e in per.items()}
                    for s, per in (data.get("estimates") or {}).items()
                },
                comparisons=[
                    verdicts.Row.from_dict(c, ruled=rule is not None)
                    for c in data.get("comparisons") or []
                ],
                comparison_rule=None if rule is None else verdicts.Rule.from_dict(rule),
                sample_size={
                    str(s): [stats.SizeRow.from_dict(r) for r in rows]
                    for s, rows in (data.get("sample_size") or {}).items()
                },
                k_capped={str(s): int(k) for s, k in (data.get("k_capped") or {}).items()},
                clusters=None
                if data.get("clusters") is None
                else stats.from_fields(Clusters, data["clusters"]),
                design={
                    str(s): {str(m): Design.from_dict(d) for m, d in per.items()}
                    for s, per in (data.get("design") or {}).items()
                },
                ndcg={str(k): str(v) for k, v in (data.get("ndcg") or {}).items()},
                unmatched={
                    str(s): tuple(str(q) for q in ids)
                    for s, ids in (data.get("unmatched") or {}).items()
                },
                ranks=None if data.get("ranks") is None else Ranks.from_dict(data["ranks"]),
            )
        except (AttributeError, KeyError, TypeError, ValueError) as exc:
            raise InputError(
                f"{where}: not a summary ragmeter can read ({type(exc).__name__}: {exc}); "
                f"run `ragmeter search` again"
            ) from None


def _clustering(
    matrices: dict[str, np.ndarray],
    metric: str,
    labels,
    source: str,
    mode: str,
    seed: int,
    rounds: int,
    confidence: float,
) -> tuple[Clusters | None, np.ndarray | None, dict[str, list[Design]]]:
    """``(clusters, codes, designs)``: whether the run's numbers are cluster-aware
    (:func:`ragmeter.stats.clusters.decide_clusters`, on the comparison metric, as
    :func:`ragmeter.comparison.systems.compare_systems` decides) and every metric's design
    effects for the views."""
    info, codes = decide_clusters(
        matrices[metric], labels, mode, seed, rounds, confidence, source=source, metric=metric
    )
    if info is None or info.count < 2:  # one cluster: nothing to resample or measure
        return info, None, {}
    every_code, _ = cluster_codes(labels)
    names = list(matrices)
    k = matrices[metric].shape[0]
    # one pass over the draws for every metric (each row's result is its own)
    every = design_effects(
        np.vstack([matrices[name] for name in names]), every_code, rounds, seed, confidence
    )
    designs = {name: every[i * k : (i + 1) * k] for i, name in enumerate(names)}
    return info, codes, designs


def ndcg_label(ndcg: dict[str, str]) -> str:
    """``nDCG: returned ideal, exponential gain``; ``""`` when not recorded."""
    if not ndcg.get("ideal"):
        return ""
    gain = f", {ndcg['gain']} gain" if ndcg.get("gain") else ""
    return f"nDCG: {ndcg['ideal']} ideal{gain}"


def plan_of(
    metric: str,
    seed: int,
    rounds: int,
    confidence: float = DEFAULTS.confidence,
    *,
    adjust: str = "maxt",
    baseline: str | None = None,
    pairs: Sequence[tuple[str, str]] | None = None,
    clusters: Sequence[Any] | None = None,
    cluster_mode: str = DEFAULTS.clusters,
    family: str = "all",
) -> ComparisonPlan:
    """The :class:`~ragmeter.comparison.systems.ComparisonPlan` of settings named one by
    one, as :func:`summarize` took them before it took a plan (``clusters``: a label
    per question, kept as given)."""
    return ComparisonPlan(
        metric,
        seed,
        rounds,
        confidence,
        adjust,
        baseline or None,
        tuple(pairs) if pairs else None,
        None if clusters is None else tuple(clusters),
        cluster_mode,
        family,
    )


def summarize(
    matrices: dict[str, np.ndarray],
    systems: list[str],
    plan: ComparisonPlan | str,
    *earlier: Any,
    method: str = "percentile",
    k_capped: dict[str, int] | None = None,
    cluster_source: str = "document",
    ndcg: dict[str, str] | None = None,
    unmatched: dict[str, tuple[str, ...]] | None = None,
    **settings: Any,
) -> Summary:
    """Intervals for every metric x system, paired comparisons and sample sizes on the
    plan's metric.

    The comparisons form one family (every pair, every system against the plan's
    ``baseline``, its planned ``pairs``, or a named ``family``: ``"auto"`` is the grid's
    families on a strategy x retriever grid) under one rule (``adjust``), built by
    :func:`ragmeter.comparison.systems.compare_systems` as every view builds it;
    ``comparison_rule`` records the rule, the family, seed and rounds. The plan's
    ``clusters`` (a label per question, from ``cluster_source``) add each interval's
    design effect and, when its ``cluster_mode`` says so (:func:`_clustering`), make
    the intervals and comparisons cluster-aware.

    The earlier form, ``summarize(matrices, systems, metric, seed, rounds, confidence,
    method, *, adjust=..., baseline=..., pairs=..., clusters=..., cluster_mode=...,
    family=..., ...)``, still works: :func:`plan_of` makes its plan.
    """
    if not isinstance(plan, ComparisonPlan):
        plan, method = _earlier_form(plan, earlier, method, settings)
    elif earlier or settings:
        raise TypeError(
            "summarize(matrices, systems, plan, *, method, k_capped, cluster_source, ndcg): "
            f"the plan holds the comparison's settings, not {[*map(repr, earlier), *settings]}"
        )
    plan = replace(plan, metric=find_metric(plan.metric, matrices))  # as the run names it
    labels = plan.clusters
    info, codes, designs = _clustering(
        matrices,
        plan.metric,
        labels,
        cluster_source,
        plan.cluster_mode,
        plan.seed,
        plan.rounds,
        plan.confidence,
    )
    estimates = _estimates(matrices, systems, plan, method, codes)
    comparisons, rule, ranks = _comparisons(
        matrices, systems, plan, None if codes is None else labels
    )
    every_size = stats.sample_size_many(  # one pass over the draws for every system
        matrices[plan.metric], rounds=plan.rounds, seed=plan.seed, confidence=plan.confidence
    )
    sizes = dict(zip(systems, every_size, strict=True))
    return Summary(
        metric=plan.metric,
        seed=plan.seed,
        rounds=plan.rounds,
        confidence=plan.confidence,
        method=method,
        estimates=estimates,
        comparisons=comparisons,
        comparison_rule=rule,
        sample_size=sizes,
        k_capped=dict(k_capped or {}),
        clusters=info,
        cluster_labels=None if info is None else tuple(str(x) for x in labels or ()),
        design={s: {name: designs[name][i] for name in designs} for i, s in enumerate(systems)}
        if info is not None
        else {},
        ndcg=dict(ndcg or {}),
        unmatched=dict(unmatched or {}),
        ranks=ranks,
    )


def _earlier_form(
    metric: str, earlier: tuple[Any, ...], method: str, settings: dict[str, Any]
) -> tuple[ComparisonPlan, str]:
    """The plan and method of a call in :func:`summarize`'s earlier form (``metric,
    seed, rounds, confidence, method`` and the comparison's settings by keyword)."""
    if len(earlier) > 4:
        raise TypeError(
            "summarize(matrices, systems, metric, seed, rounds, confidence, method, ...): "
            f"{len(earlier) + 3} positional arguments given, at most 7"
        )
    if len(earlier) == 4:
        method = earlier[3]
    return plan_of(metric, *earlier[:3], **settings), method


def _estimates(
    matrices: dict[str, np.ndarray],
    systems: list[str],
    plan: ComparisonPlan,
    method: str,
    codes: np.ndarray | None,
) -> dict[str, dict[str, stats.Estimate]]:
    """Every system's interval on every metric: by question, or by cluster when
    ``codes`` (each question's cluster) is given."""
    seed, rounds, confidence = plan.seed, plan.rounds, plan.confidence
    names = list(matrices)
    stacked = np.vstack([matrices[name] for name in names])
    if codes is not None:  # one pass over the cluster draws for every metric
        every = cluster_bootstrap_many(stacked, codes, rounds, seed, confidence)
    elif isinstance(seed, np.random.Generator):  # read metric after metric, as always
        every = [
            est
            for name in names
            for est in stats.bootstrap_many(matrices[name], rounds, seed, method, confidence)
        ]
    else:  # one pass over the draws for every metric and system: each column's sums
        # are its own, so every interval is the one a call per metric gives
        every = stats.bootstrap_many(stacked, rounds, seed, method, confidence)
    k = len(systems)
    by_metric = {name: every[i * k : (i + 1) * k] for i, name in enumerate(names)}
    estimates: dict[str, dict[str, stats.Estimate]] = {s: {} for s in systems}
    for name in names:
        for system, est in zip(systems, by_metric[name], strict=True):
            estimates[system][name] = est
    return estimates


def _comparisons(
    matrices: dict[str, np.ndarray],
    systems: list[str],
    plan: ComparisonPlan,
    labels: Sequence[Any] | None,
) -> tuple[list[verdicts.Row], verdicts.Rule | None, Ranks | None]:
    """The paired comparisons on the plan's metric, their rule and the ranks they give
    (none for one system); ``labels``: each question's cluster when the summary made its
    numbers cluster-aware (decided already, so the comparisons flip them as given)."""
    if len(systems) < 2:
        return [], None, None
    clusters = None if labels is None else tuple(str(x) for x in labels)
    plan = replace(plan, clusters=clusters, cluster_mode="document")
    table = compare_systems(matrices, systems, plan)
    return list(table.rows), table.rule, resolve_ranks(matrices, systems, plan, table)


class ScoredRun(Protocol):
    """What :func:`summarize_run` reads off a run: its configuration, metric names,
    systems (each with a ``name`` and ``k_cap``) and score matrices; ``clusters`` and
    ``cluster_source`` where the run knows them. A search run in memory is one."""

    @property
    def config(self) -> Any: ...

    @property
    def metric_names(self) -> list[str]: ...

    @property
    def systems(self) -> Sequence[Any]: ...

    def matrix(self, metric: str) -> np.ndarray: ...


def summarize_run(run: ScoredRun) -> Summary:
    """:func:`summarize` with the run's own configuration (seed, rounds, method...)."""
    cfg = run.config
    plan = plan_of(
        cfg.metric,
        cfg.seed,
        cfg.rounds,
        cfg.confidence,
        adjust=cfg.adjust,
        baseline=cfg.baseline or None,
        pairs=verdicts.parse_pairs(cfg.pairs) if cfg.pairs else None,
        # a run that knows no clusters (a stand-in, an evaluation of run files) has none
        clusters=getattr(run, "clusters", None),
        cluster_mode=getattr(cfg, "clusters", DEFAULTS.clusters),
        family=cfg.family,
    )
    return summarize(
        {m: run.matrix(m) for m in run.metric_names},
        [s.name for s in run.systems],
        plan,
        method=cfg.method,
        k_capped={s.name: s.k_cap for s in run.systems if s.k_cap is not None},
        cluster_source=getattr(run, "cluster_source", "none"),
        ndcg=measurement.ndcg_settings(cfg),
        unmatched=unmatched_questions(run.systems, getattr(run, "questions", None) or ()),
    )


def unmatched_questions(systems: Sequence[Any], questions: Sequence[Any]) -> dict[str, tuple]:
    """``{system: (question id, ...)}``: the questions each system matched nothing for.

    A question is matched by nothing when no item the system returned for it scored
    above 0 (BM25 scores a text sharing no term with the question 0, so it returns
    items scored 0 in an order that means nothing). A system that scores no item of
    any question above 0 is on another scale (a run file's negative scores) and is
    never listed. Systems with none such are left out: the dict is empty when every
    question matched something. The terminal, ``summary.json`` and the report say
    these, from here.
    """
    ids = [str(getattr(q, "id", q)) for q in questions]
    out = {}
    for s in systems:
        rows = getattr(s, "items", None)
        if rows is None or len(rows) != len(ids):
            continue
        best = [max((it.score for it in row), default=float("-inf")) for row in rows]
        if not any(b > 0 for b in best):
            continue
        missed = tuple(qid for qid, b in zip(ids, best, strict=True) if not b > 0)
        if missed:
            out[str(s.name)] = missed
    return out

"""A search's summary, typed: intervals, comparisons and sample sizes.

:func:`summarize` computes it (every interval, comparison and sample size of a run
comes from here); :class:`Summary` holds it as :class:`~ragmeter.stats.Estimate`,
:class:`~ragmeter.verdicts.Row`, :class:`~ragmeter.verdicts.Rule` and
:class:`~ragmeter.stats.SizeRow` objects. ``summary.json`` is
:meth:`Summary.to_json`; :meth:`Summary.from_json` reads it back, and is the one
place where a summary written by an earlier version gets its defaults (seed 1,
10,000 rounds, 95%, percentile). The terminal, the report and the notebook tables
all read these objects.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ragmeter import stats, verdicts
from ragmeter.comparison import ComparisonPlan, compare_systems
from ragmeter.errors import InputError
from ragmeter.metrics import find_metric

if TYPE_CHECKING:
    from ragmeter.runs import SearchRun

DEFAULT_METRIC = "recall@5"
DEFAULT_SEED = 1
DEFAULT_ROUNDS = 10_000


@dataclass(frozen=True)
class Summary:
    """Intervals for every system x metric, the comparisons on ``metric`` under one
    rule, and sample-size rows, with the seed, rounds and confidence they were drawn
    with. ``k_capped`` names systems scored at their item count for a larger k."""

    metric: str = DEFAULT_METRIC
    seed: int = DEFAULT_SEED
    rounds: int = DEFAULT_ROUNDS
    confidence: float = 0.95
    method: str = "percentile"
    estimates: dict[str, dict[str, stats.Estimate]] = field(default_factory=dict)
    comparisons: list[verdicts.Row] = field(default_factory=list)
    comparison_rule: verdicts.Rule | None = None
    sample_size: dict[str, list[stats.SizeRow]] = field(default_factory=dict)
    k_capped: dict[str, int] = field(default_factory=dict)

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
        if self.comparison_rule is not None:
            return self.comparison_rule.alpha
        return round(1.0 - self.confidence, 12)

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
                seed=int(data.get("seed", DEFAULT_SEED)),
                rounds=int(data.get("rounds", DEFAULT_ROUNDS)),
                confidence=float(data.get("confidence", 0.95)),
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
            )
        except (AttributeError, KeyError, TypeError, ValueError) as exc:
            raise InputError(
                f"{where}: not a summary ragmeter can read ({type(exc).__name__}: {exc}); "
                f"run `ragmeter search` again"
            ) from None


def summarize(
    matrices: dict[str, np.ndarray],
    systems: list[str],
    metric: str,
    seed: int,
    rounds: int,
    confidence: float = 0.95,
    method: str = "percentile",
    *,
    adjust: str = "maxt",
    baseline: str | None = None,
    pairs: list[tuple[str, str]] | None = None,
    k_capped: dict[str, int] | None = None,
) -> Summary:
    """Intervals for every metric x system, paired comparisons and sample sizes on ``metric``.

    The comparisons form one family (every pair, every system against ``baseline``,
    or the planned ``pairs``) under one rule (``adjust``), built by
    :func:`ragmeter.comparison.compare_systems` as every view builds it;
    ``comparison_rule`` records the rule, the family, seed and rounds.
    """
    metric = find_metric(metric, matrices)  # P_5 or precision@5, as the run names it
    estimates: dict[str, dict[str, stats.Estimate]] = {s: {} for s in systems}
    for name, matrix in matrices.items():
        for system, est in zip(
            systems,
            stats.bootstrap_many(
                matrix, rounds=rounds, seed=seed, confidence=confidence, method=method
            ),
            strict=True,
        ):
            estimates[system][name] = est
    main = matrices[metric]
    comparisons: list[verdicts.Row] = []
    rule = None
    if len(systems) > 1:
        plan = ComparisonPlan(
            metric,
            seed,
            rounds,
            confidence,
            adjust,
            baseline or None,
            tuple(pairs) if pairs else None,
        )
        table = compare_systems(matrices, systems, plan)
        comparisons = list(table.rows)
        rule = table.rule
    sizes = {
        s: stats.sample_size(row, rounds=rounds, seed=seed, confidence=confidence)
        for s, row in zip(systems, main, strict=True)
    }
    return Summary(
        metric=metric,
        seed=seed,
        rounds=rounds,
        confidence=confidence,
        method=method,
        estimates=estimates,
        comparisons=comparisons,
        comparison_rule=rule,
        sample_size=sizes,
        k_capped=dict(k_capped or {}),
    )


def summarize_run(run: SearchRun) -> Summary:
    """:func:`summarize` with the run's own configuration (seed, rounds, method...)."""
    cfg = run.config
    return summarize(
        {m: run.matrix(m) for m in run.metric_names},
        [s.name for s in run.systems],
        cfg.metric,
        cfg.seed,
        cfg.rounds,
        cfg.confidence,
        cfg.method,
        adjust=cfg.adjust,
        baseline=cfg.baseline or None,
        pairs=verdicts.parse_pairs(cfg.pairs) if cfg.pairs else None,
        k_capped={s.name: s.k_cap for s in run.systems if s.k_cap is not None},
    )

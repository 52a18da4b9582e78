"""``ragmeter check``: is a candidate run no worse than a baseline run?

The CI gate reads two results directories, so it lives above them; the paired
comparison itself is :func:`ragmeter.comparison.compare_systems`, the one
comparison every view uses.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from ragmeter import measurement, stats
from ragmeter.comparison import ComparisonPlan, compare_systems
from ragmeter.errors import InputError
from ragmeter.formatting import fmt_end
from ragmeter.metrics import COST_FAMILIES, family
from ragmeter.results import Results

__all__ = ["Check", "check_noninferior"]


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
    #: points: the smallest margin an unchanged candidate would pass on these questions
    #: (the lower end of the interval of a difference of 0 on every question); set on FAIL
    supported_margin: float | None = None

    def _support(self) -> str:
        if self.supported_margin is None:
            return ""
        if self.supported_margin == 0:
            return f"; these {self.difference.n} questions support any margin above 0"
        return (
            f"; these {self.difference.n} questions support a margin above "
            f"{self.supported_margin:.1f} points (an unchanged candidate's interval "
            f"reaches -{self.supported_margin:.1f})"
        )

    @property
    def line(self) -> str:
        d = self.difference
        verdict = "PASS" if self.passed else "FAIL"
        rel = ">" if self.passed else "<="
        return (
            f"{verdict} {self.metric} {self.system}: candidate - baseline = "
            f"{d.mean * 100:+.1f} [{fmt_end(d.low)}, {fmt_end(d.high)}] points "
            f"({d.confidence * 100:g}% {self.interval}, {d.n} questions, seed {d.seed}, "
            f"{d.rounds} rounds); lower end {rel} -{self.margin:g} (margin)" + self._support()
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
                f"{d.n} questions paired by id; seed {d.seed}, {d.rounds} rounds"
                + (self._support().replace(";", ".", 1).replace(" these", " These", 1) + ".")
                if self.supported_margin is not None
                else f"{d.n} questions paired by id; seed {d.seed}, {d.rounds} rounds.",
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
    paths). Both runs must have measured the same thing (corpus, questions, answer
    keys and measurement settings: :mod:`ragmeter.measurement`) and hold the system
    and the metric; questions are paired by id. A cost (``words@k``) is refused.
    Seed and rounds default to the baseline run's.
    """
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
    if family(metric) in COST_FAMILIES:
        raise InputError(
            f"{metric} is a cost (lower is better), not a score a margin protects; check a "
            f"score such as recall@5, and read {metric} beside it"
        )
    differ = measurement.differences(
        base.meta.get("measurement") or {}, cand.meta.get("measurement") or {}, metric
    )
    if differ:
        raise InputError(
            f"baseline {base.path} and candidate {cand.path} measured different things "
            f"({'; '.join(differ)}); the system under test may change, the measurement may "
            f"not: run both on the same corpus and test set with the same settings"
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
    plan = ComparisonPlan(
        metric,
        base.summary.seed if seed is None else seed,
        base.summary.rounds if rounds is None else rounds,
        confidence,
        pairs=(("candidate", "baseline"),),
    )
    # two runs of one system: never folded as "identical", however alike
    table = compare_systems(
        {metric: np.stack([x, y])}, ["candidate", "baseline"], plan, fold_identical=False
    )
    row = table.rows[0]
    diff = row.difference
    passed = bool(diff.low > -margin / 100.0)
    supported = None
    if not passed:  # what an unchanged candidate would get on these questions
        same = compare_systems(
            {metric: np.stack([y, y])}, ["candidate", "baseline"], plan, fold_identical=False
        ).rows[0]
        supported = max(0.0, -same.difference.low * 100.0)
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
        passed=passed,
        supported_margin=supported,
    )


def _question_texts(res: Any) -> dict[str, str] | None:
    try:
        return {q.id: q.text for q in res.questions}
    except (OSError, ValueError, KeyError):
        return None

"""How many questions would settle it: the arithmetic behind ``ragmeter plan``.

For each system, the interval its metric would have at n, 2n, 4n and 8n questions
and the questions a target half-width needs; for each pair, the questions a paired
difference of a given size needs. Systems with no spread and pairs that never
differ are named, since no number of questions narrows or separates them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ragmeter.errors import InputError
from ragmeter.stats import SizeRow, questions_for_half_width, questions_to_separate, sample_size

__all__ = ["PairNeed", "Plan", "SystemNeed", "plan_questions"]


@dataclass(frozen=True)
class SystemNeed:
    """One system: its intervals at larger question sets, and the questions a
    half-width needs (``None`` when its scores have no spread)."""

    system: str
    sizes: list[SizeRow]
    needed: int | None
    constant: float | None = None  # the one score of a system with no spread


@dataclass(frozen=True)
class PairNeed:
    """One pair: the questions a paired difference needs (``None`` when the pair's
    difference is the same on every question: ``identical`` when that is 0)."""

    a: str
    b: str
    needed: int | None
    identical: bool = False


@dataclass(frozen=True)
class Plan:
    """Everything ``ragmeter plan`` prints, for one metric."""

    metric: str
    half_width: float
    difference: float
    seed: int
    rounds: int
    systems: list[SystemNeed] = field(default_factory=list)
    pairs: list[PairNeed] = field(default_factory=list)


def plan_questions(
    run: Any,
    metric: str,
    *,
    half_width: float = 0.04,
    difference: float = 0.05,
    systems: Sequence[str] | None = None,
    seed: int = 1,
    rounds: int = 10_000,
) -> Plan:
    """The sample-size view of a run (a :class:`ragmeter.results.Results` or an
    in-memory :class:`ragmeter.runs.SearchRun`) on ``metric``.

    ``half_width`` and ``difference`` are on the metric's own scale (0.04 is 4 points
    of a share).
    """
    for name, value in (("half-width", half_width), ("difference", difference)):
        if not (isinstance(value, int | float) and np.isfinite(value) and value > 0):
            raise InputError(f"the {name} must be a positive number, got {value}")
    names = [str(s) for s in (systems or run.systems)]
    scores = {s: run.scores(s, metric) for s in names}
    plan = Plan(metric, float(half_width), float(difference), seed, rounds)
    for s in names:
        x = scores[s]
        flat = bool(np.ptp(x) == 0)
        plan.systems.append(
            SystemNeed(
                s,
                sample_size(x, rounds=rounds, seed=seed),
                None if flat else questions_for_half_width(x, half_width),
                float(x[0]) if flat else None,
            )
        )
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            diff = scores[a] - scores[b]
            if np.ptp(diff) == 0:
                plan.pairs.append(PairNeed(a, b, None, identical=bool(diff[0] == 0)))
            else:
                need = questions_to_separate(scores[a], scores[b], difference)
                plan.pairs.append(PairNeed(a, b, need))
    return plan

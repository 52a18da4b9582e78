"""What planning reads of a run, declared in the planning layer.

:mod:`ragmeter.stats.planning` plans from a run and its summary, which live in higher
layers (``runs``, ``comparison``). Rather than take them as ``Any``, it names here, as
protocols, exactly the members it reads; a :class:`ragmeter.runs.results.Results` or a
:class:`ragmeter.runs.search_run.SearchRun` and its
:class:`ragmeter.comparison.summary.Summary`, ``Rule`` and ``Row`` satisfy them as they
are. The dependency is visible and points down: those types fit these, and nothing here
imports them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np


class PlannedRule(Protocol):
    """The rule a run's comparison table was decided under (``comparison.verdicts.Rule``)."""

    adjust: str  # maxt, holm or none
    pairs: int  # the pairs its family holds


class PlannedRow(Protocol):
    """One pair of a run's comparison table (``comparison.verdicts.Row``)."""

    a: str
    b: str
    verdict: str  # its words, carried to the plan as they are
    level: float  # the level its decision was tested at
    separated: bool
    identical: bool


class PlannedClusters(Protocol):
    """Whether a run's comparisons resampled whole documents."""

    used: bool


class PlannedSummary(Protocol):
    """What planning reads of a run's summary (``comparison.summary.Summary``)."""

    metric: str
    seed: int
    rounds: int
    alpha: float
    clusters: PlannedClusters | None
    comparison_rule: PlannedRule | None
    comparisons: Sequence[PlannedRow]


class PlannedRun(Protocol):
    """What planning reads of a run (``runs.reading.ReadableRun``): its systems, each
    system's scores on a metric and its summary; a run may also hold ``clusters``, each
    question's document."""

    @property
    def systems(self) -> Sequence[object]: ...  # names, or systems that print as them

    @property
    def summary(self) -> PlannedSummary: ...

    def scores(self, system: str, metric: str) -> np.ndarray: ...

"""The one run type: what a run in memory and a results directory read back both are.

:class:`ReadableRun` is the reading API that summaries, tables, comparisons, the report and a
notebook rely on: the systems, metrics and questions, per-question scores, the
summary, the comparison plan, the ranked items and ``meta.json``
(:class:`ragmeter.runs.meta.RunMeta`). :class:`ragmeter.runs.search_run.SearchRun` (a
search in memory) and :class:`ragmeter.runs.results.Results` (a results directory) both
satisfy it; the reading methods they share live once, in :class:`RunReading`.

The small data types of a run (:class:`RankedItem`, :class:`SystemRun`) live here
too, so the writer (:mod:`ragmeter.runs.saving`) and both run types name them without
importing each other (``ragmeter.runs.search_run`` still exports them).

``isinstance(obj, ReadableRun)`` looks every member up; on Python 3.11 that computes a lazy
member on the spot (a :class:`~ragmeter.runs.search_run.SearchRun`'s summary), so
code that only reads a run needs no such check.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from ragmeter.errors import InputError, did_you_mean
from ragmeter.scoring.metrics import find_metric

if TYPE_CHECKING:
    from ragmeter.comparison.summary import Summary
    from ragmeter.comparison.systems import ComparisonPlan
    from ragmeter.inputs.config import Config
    from ragmeter.inputs.corpus import Document
    from ragmeter.inputs.testset import Question, TestSet
    from ragmeter.runs.meta import RunMeta

__all__ = ["RankedItem", "ReadableRun", "RunReading", "SearchedRun", "SystemRun"]


@dataclass(frozen=True, slots=True)
class RankedItem:
    """One ranked result of one question: a span of a document, graded.

    ``rank`` counts from 1. ``text`` is the span's text where it was read back from a
    results directory (:attr:`ragmeter.runs.results.Results.runs`,
    :attr:`ragmeter.runs.search_run.SearchRun.runs`); items made by a search leave it
    ``None``, as the documents hold it.
    """

    rank: int
    doc: str
    start: int
    end: int
    score: float
    grade: int
    words: int
    text: str | None = None


@dataclass
class SystemRun:
    """One strategy x retriever: the ranked items and per-question scores."""

    name: str
    strategy: dict
    retriever: dict
    n_items: int
    items: Sequence[list[RankedItem]]  # per question, best first, at most `depth`
    scores: dict[str, np.ndarray]  # metric name -> per-question vector
    k_cap: int | None = None  # set when a k was larger than n_items: scored at n_items

    def __str__(self) -> str:
        return self.name


@runtime_checkable
class ReadableRun(Protocol):
    """A run to read: a :class:`~ragmeter.runs.search_run.SearchRun` or a
    :class:`~ragmeter.runs.results.Results`. ``systems`` holds names, or objects whose
    ``str`` is the name; every method that takes a system takes either."""

    @property
    def systems(self) -> Sequence[Any]: ...

    @property
    def metrics(self) -> list[str]: ...

    @property
    def question_ids(self) -> list[str]: ...

    @property
    def questions(self) -> list[Question]: ...

    @property
    def clusters(self) -> tuple[str, ...] | None: ...

    @property
    def summary(self) -> Summary: ...

    @property
    def comparison_plan(self) -> ComparisonPlan: ...

    @property
    def runs(self) -> Mapping[str, Mapping[str, list[RankedItem]]]: ...

    @property
    def meta(self) -> RunMeta: ...

    def scores(self, system: Any, metric: str) -> np.ndarray: ...

    def matrix(self, metric: str, systems: Sequence[Any] | None = None) -> np.ndarray: ...


class SearchedRun(ReadableRun, Protocol):
    """A run a search (or an evaluation of run files) made, as
    :func:`ragmeter.runs.saving.save_results` writes it: a :class:`ReadableRun` with its
    configuration, documents, test set and :class:`SystemRun` systems."""

    @property
    def config(self) -> Config: ...

    @property
    def documents(self) -> list[Document]: ...

    @property
    def testset(self) -> TestSet: ...

    @property
    def systems(self) -> list[SystemRun]: ...

    @property
    def metric_names(self) -> list[str]: ...


class RunReading:
    """The reading methods both run types share: a system's per-question scores on a
    metric, and the (systems x questions) matrix. A class mixing it in gives
    ``systems``, ``metrics`` and :meth:`_score_row` (one system's scores by metric)."""

    systems: Sequence[Any]
    metrics: list[str]

    def _score_row(self, system: str) -> Mapping[str, Any] | None:
        """``{metric: per-question scores}`` of the system named ``system`` (None: no
        such system)."""
        raise NotImplementedError

    def _unknown_system(self, system: object) -> InputError:
        """The error for a system this run does not hold, naming the ones it does."""
        names = [str(s) for s in self.systems]
        return InputError(
            f"unknown system {str(system)!r}{did_you_mean(system, names)}; choose one of {names}"
        )

    def _metric_name(self, metric: str) -> str:
        """``metric`` as this run names it (``P_5`` or ``precision@5``)."""
        try:
            return find_metric(metric, self.metrics)
        except InputError:
            raise InputError(
                f"unknown metric {metric!r}{did_you_mean(metric, self.metrics)}; "
                f"choose one of {self.metrics}"
            ) from None

    def scores(self, system: Any, metric: str) -> np.ndarray:
        """Per-question scores of one system on one metric."""
        row = self._score_row(str(system))
        if row is None:
            raise self._unknown_system(system)
        return np.asarray(row[self._metric_name(metric)], dtype=np.float64)

    def matrix(self, metric: str, systems: Sequence[Any] | None = None) -> np.ndarray:
        """(systems x questions) scores for one metric (all systems when none are given)."""
        return np.vstack([self.scores(s, metric) for s in systems or self.systems])

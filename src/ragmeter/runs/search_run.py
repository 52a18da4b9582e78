"""A search run in memory: the ranked, graded items and per-question scores.

:class:`SearchRun` reads like :class:`ragmeter.runs.results.Results` (a results
directory read back): both are the one run type, :class:`ragmeter.runs.reading.ReadableRun`,
so summaries, tables, comparisons and the report take either. The pipeline
(:mod:`ragmeter.runs.pipeline`) makes these objects; it does not summarise or save them.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path

import numpy as np

from ragmeter.comparison.summary import Summary, summarize_run
from ragmeter.comparison.systems import ComparisonPlan
from ragmeter.comparison.tables import ShowsItself
from ragmeter.inputs.config import Config
from ragmeter.inputs.corpus import Document
from ragmeter.inputs.testset import Question, TestSet, question_clusters
from ragmeter.runs.meta import RunMeta
from ragmeter.runs.reading import RankedItem, RunReading, SystemRun
from ragmeter.runs.saving import meta_record, save_results

__all__ = ["RankedItem", "SearchRun", "SystemRun"]


@dataclass(repr=False)  # ShowsItself's one-line repr, not every field
class SearchRun(RunReading, ShowsItself):
    """Everything a search produced, in memory.

    It reads like :class:`ragmeter.runs.results.Results`, so a notebook needs no
    disk: ``scores(system, metric)``, ``matrix(metric, systems)``, ``metrics``,
    ``question_ids``, ``questions``, ``runs`` (ranked items with their text) and
    ``summary`` (a :class:`ragmeter.comparison.summary.Summary`, computed once on first use),
    ``comparison_plan`` and ``meta`` (:class:`ragmeter.runs.meta.RunMeta`, as ``meta.json``
    will hold it): a :class:`ragmeter.runs.reading.ReadableRun`. :meth:`save` writes the results
    directory.
    ``systems`` holds :class:`SystemRun` objects whose ``str`` is the system's
    name; every reading method takes a name or one of them. It shows itself as
    a table (``_repr_html_``, ``to_markdown()``, ``to_pandas()``).
    """

    config: Config
    documents: list[Document]
    testset: TestSet
    systems: list[SystemRun]
    timings: dict[str, float] = field(default_factory=dict)
    chunk_keys: dict[str, int] = field(default_factory=dict)  # strategy -> hash of its chunks

    @property
    def questions(self) -> list[Question]:
        return self.testset.questions

    @property
    def question_ids(self) -> list[str]:
        return [q.id for q in self.testset.questions]

    @property
    def metric_names(self) -> list[str]:
        return list(self.systems[0].scores) if self.systems else []

    @property
    def metrics(self) -> list[str]:
        """The metric names, as :attr:`ragmeter.runs.results.Results.metrics`."""
        return self.metric_names

    def system(self, name: str | SystemRun) -> SystemRun:
        """The :class:`SystemRun` of ``name``."""
        for s in self.systems:
            if s is name or s.name == str(name):
                return s
        raise self._unknown_system(name)

    def _score_row(self, system: str) -> dict[str, np.ndarray] | None:
        return next((s.scores for s in self.systems if s.name == system), None)

    @cached_property
    def _clusters(self) -> tuple[tuple[str, ...] | None, str]:
        return question_clusters(self.questions, self.config.clusters)

    @property
    def clusters(self) -> tuple[str, ...] | None:
        """Each question's cluster under the run's ``clusters`` setting (its document,
        or its ``cluster`` field: :func:`ragmeter.inputs.testset.question_clusters`), or None."""
        return self._clusters[0]

    @property
    def cluster_source(self) -> str:
        """Where :attr:`clusters` came from: ``"document"``, ``"field"`` or ``"none"``."""
        return self._clusters[1]

    @cached_property
    def summary(self) -> Summary:
        """Intervals, paired comparisons and sample sizes, as ``summary.json`` holds them
        (:func:`ragmeter.comparison.summary.summarize_run`; computed on first use)."""
        return summarize_run(self)

    @property
    def comparison_plan(self) -> ComparisonPlan:
        """The run's own comparison: its metric, seed, rounds, confidence, family and
        clusters (when the summary made its numbers cluster-aware)."""
        plan = ComparisonPlan.from_settings(self.config.to_dict()["stats"])
        # the comparison decides on clusters as the summary does (decide_clusters)
        return replace(plan, clusters=self.clusters)

    @cached_property
    def runs(self) -> dict[str, dict[str, list[RankedItem]]]:
        """``runs[system][question_id]``: the ranked items, best first, with their text,
        as :attr:`ragmeter.runs.results.Results.runs` reads them back."""
        texts = {d.id: d.text for d in self.documents}
        return {
            s.name: {
                q.id: [replace(it, text=texts[it.doc][it.start : it.end]) for it in row]
                for q, row in zip(self.questions, s.items, strict=True)
            }
            for s in self.systems
        }

    @cached_property
    def meta(self) -> RunMeta:
        """``meta.json`` as :meth:`save` writes it (:func:`ragmeter.runs.saving.meta_record`;
        made on first use)."""
        return meta_record(self)

    def save(self, path: str | Path, *, overwrite: bool = False) -> Path:
        """Write this run as a results directory (:func:`ragmeter.runs.saving.save_results`;
        ``overwrite=True`` replaces earlier ragmeter results there)."""
        return save_results(self, path, overwrite=overwrite)

"""The results directory: what a search run saved, and how to read it back.

Layout (every file is deterministic: same inputs and seed, same bytes)::

    config.toml       the configuration used (absolute paths)
    meta.json         versions, corpus/test-set sizes, systems, seed and rounds
    questions.jsonl   the questions scored, with their answer spans
    documents.jsonl   the documents that any result or answer key points into
    runs.jsonl        per system and question: the ranked items with grades
    scores.json       per-question scores: {systems, questions, metrics, values}
    scores.csv        the same, one row per system and question
    summary.json      intervals for every system x metric, paired comparisons and
                      the rule that decided them (comparison_rule),
                      sample-size rows (each with its seed and rounds)

Nothing downstream (comparisons, the report, answer grading) re-runs retrieval:
it all reads this directory through :class:`Results`.
"""

from __future__ import annotations

import tomllib
from collections.abc import Collection, Iterator
from dataclasses import replace
from functools import cached_property
from pathlib import Path

import numpy as np

from ragmeter.comparison.summary import Summary, summarize, summarize_run
from ragmeter.comparison.systems import ComparisonPlan
from ragmeter.comparison.tables import ShowsItself
from ragmeter.errors import InputError
from ragmeter.files.io import read_json, read_jsonl
from ragmeter.files.schemas import (
    ResultsDocument,
    ResultsMeta,
    ResultsQuestion,
    ResultsSummary,
    RunLine,
    ScoresFile,
    validate,
)
from ragmeter.inputs.testset import AnswerSpan, Question
from ragmeter.runs.meta import RunMeta
from ragmeter.runs.reading import RankedItem, RunReading
from ragmeter.runs.saving import LATER_STAGES, save_results

__all__ = [
    "LATER_STAGES",
    "RankedItem",
    "Results",
    "Summary",
    "as_results",
    "results_path",
    "save_results",
    "summarize",
    "summarize_run",
]


def _trec_runs(folder: Path, limit: int = 20) -> list[Path]:
    """The files of ``folder`` whose first line reads as a TREC run line
    (``qid Q0 doc rank score tag``), at most ``limit`` files looked at."""
    found = []
    for path in sorted(p for p in folder.iterdir() if p.is_file())[:limit]:
        try:
            with path.open(encoding="utf-8", errors="replace") as fh:
                fields = fh.readline(4096).split()
            int(fields[3]), float(fields[4])
        except (OSError, ValueError, IndexError):
            continue
        if len(fields) == 6:
            found.append(path)
    return found


def _not_results(path: Path) -> str:
    """Why ``path`` is not a results directory, and what to run instead."""
    if not path.exists():
        return (
            f"{path}: no such folder; give the results directory `ragmeter search -o DIR` "
            "wrote (default ragmeter-results)"
        )
    if path.is_dir() and _trec_runs(path):
        return (
            f"{path}: holds TREC run files, not ragmeter results; score them with "
            f"`ragmeter evaluate --qrels QRELS {path}/*`"
        )
    return f"{path}: not a ragmeter results directory (no scores.json); run `ragmeter search` first"


class Results(RunReading, ShowsItself):
    """A results directory, read back for comparisons, reports and answer grading.

    It reads like an in-memory :class:`~ragmeter.runs.search_run.SearchRun`: both are
    the one run type, :class:`ragmeter.runs.reading.ReadableRun`. ``meta`` is its ``meta.json``
    (:class:`ragmeter.runs.meta.RunMeta`). Shows itself as a table of intervals
    (``_repr_html_``, ``to_markdown()``, ``to_pandas()``), as a ``SearchRun`` does.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if not (self.path / "scores.json").is_file():
            raise InputError(_not_results(self.path))
        raw_meta = self._json("meta.json")
        validate(ResultsMeta, raw_meta, str(self.path / "meta.json"), _AGAIN)
        self.meta = RunMeta.from_json(raw_meta)
        scores = validate(
            ScoresFile, self._json("scores.json"), str(self.path / "scores.json"), _AGAIN
        )
        _check_scores(scores, self.path / "scores.json")
        self._scores = scores.model_dump(exclude={"values"})
        self._scores["values"] = {  # arrays: a tenth of the memory of lists of floats
            s: {m: np.asarray(v, dtype=np.float64) for m, v in per.items()}
            for s, per in scores.values.items()
        }
        del scores
        raw = self._json("summary.json")
        validate(ResultsSummary, raw, str(self.path / "summary.json"), _AGAIN)
        self.summary = Summary.from_json(raw, str(self.path / "summary.json"))
        if self.clusters is not None and self.summary.clusters is not None:
            self.summary = replace(self.summary, cluster_labels=self.clusters)
        if not self.summary.ndcg and self.meta.ndcg:  # written before summary.json named it
            self.summary = replace(self.summary, ndcg=self.meta.ndcg)

    def _json(self, name: str) -> dict:
        path = self.path / name
        if not path.is_file():
            raise InputError(
                f"{path}: missing; the results directory is incomplete, run `ragmeter search` again"
            )
        data = read_json(path, nan_ok=True)
        if not isinstance(data, dict):
            raise InputError(f"{path}: expected a JSON object, got {type(data).__name__}; {_AGAIN}")
        return data

    def _lines(self, name: str) -> Iterator[tuple[int, dict]]:
        path = self.path / name
        if not path.is_file():
            raise InputError(
                f"{path}: missing; the results directory is incomplete, run `ragmeter search` again"
            )
        return read_jsonl(path, nan_ok=True)

    @property
    def systems(self) -> list[str]:
        return list(self._scores["systems"])

    @property
    def metrics(self) -> list[str]:
        return list(self._scores["metrics"])

    @property
    def question_ids(self) -> list[str]:
        return list(self._scores["questions"])

    @property
    def clusters(self) -> tuple[str, ...] | None:
        """Each question's cluster as the run saved it (None for results saved without)."""
        labels = self._scores.get("clusters")
        return None if labels is None else tuple(labels)

    def _score_row(self, system: str) -> dict[str, np.ndarray] | None:
        return self._scores["values"].get(system)

    @cached_property
    def comparison_plan(self) -> ComparisonPlan:
        """The run's own comparison, as its ``summary.json`` was made: metric, seed,
        rounds and confidence from the summary, the family and rule from the saved
        ``config.toml`` (all pairs under Holm when it names none)."""
        settings: dict = {}
        path = self.path / "config.toml"
        if path.is_file():
            try:
                settings = dict(tomllib.loads(path.read_text(encoding="utf-8")).get("stats", {}))
            except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
                raise InputError(f"{path}: cannot be read ({exc}); {_AGAIN}") from None
        rule = self.summary.comparison_rule
        if rule is not None:
            settings["adjust"] = rule.adjust
        summary = self.summary
        settings.update(
            metric=summary.metric,
            seed=summary.seed,
            rounds=summary.rounds,
            confidence=summary.confidence,
        )
        # the saved labels and [stats] clusters: the comparison decides on clusters again
        # as the summary did (decide_clusters), as a run in memory does
        return replace(ComparisonPlan.from_settings(settings), clusters=self.clusters)

    @cached_property
    def questions(self) -> list[Question]:
        out = []
        path = self.path / "questions.jsonl"
        for number, obj in self._lines("questions.jsonl"):
            q = validate(ResultsQuestion, obj, f"{path}:{number}", _AGAIN)
            spans = tuple(AnswerSpan(a.doc, a.start, a.end, a.text) for a in q.answers)
            any_of = tuple(AnswerSpan(a.doc, a.start, a.end, a.text) for a in q.any_of)
            key = ("id", "question", "answers", "any_of", "qrels")
            meta = {k: v for k, v in obj.items() if k not in key}
            qrels = tuple((d, g) for d, g in q.qrels.items())
            out.append(Question(q.id, q.question, spans, meta, any_of, qrels))
        return out

    @cached_property
    def documents(self) -> dict[str, str]:
        out = {}
        path = self.path / "documents.jsonl"
        for number, obj in self._lines("documents.jsonl"):
            d = validate(ResultsDocument, obj, f"{path}:{number}", _AGAIN)
            out[d.id] = d.text
        return out

    def document_texts(self, ids: Collection[str]) -> dict[str, str]:
        """The texts of the documents ``ids`` (those in the results), read without
        holding the others."""
        if "documents" in self.__dict__:  # read already
            return {d: self.documents[d] for d in ids if d in self.documents}
        wanted = set(ids)
        out = {}
        path = self.path / "documents.jsonl"
        for number, obj in self._lines("documents.jsonl"):
            if isinstance(obj, dict) and obj.get("id") not in wanted:
                continue
            d = validate(ResultsDocument, obj, f"{path}:{number}", _AGAIN)
            out[d.id] = d.text
        return out

    @cached_property
    def runs(self) -> dict[str, dict[str, list[RankedItem]]]:
        """``runs[system][question_id]``: the ranked items, best first, with text."""
        return self.rankings()

    def rankings(
        self, questions: Collection[str] | None = None
    ) -> dict[str, dict[str, list[RankedItem]]]:
        """``[system][question_id]``: the ranked items of ``questions`` (every question by
        default), best first, with text; the other questions' items are never held."""
        wanted = None if questions is None else set(questions)
        out: dict[str, dict[str, list[RankedItem]]] = {s: {} for s in self.systems}
        path = self.path / "runs.jsonl"
        read = []  # plain tuples: a model per line would be heavy
        for number, obj in self._lines("runs.jsonl"):
            where = f"{path}:{number}"
            if wanted is not None and isinstance(obj, dict) and obj.get("question") not in wanted:
                continue
            line = validate(RunLine, obj, where, _AGAIN)
            if line.system not in out:
                raise InputError(f"{where}: system {line.system!r} is not in scores.json; {_AGAIN}")
            items = [(it.doc, it.start, it.end, it.score, it.grade, it.words) for it in line.items]
            read.append((where, line.system, line.question, items))
        docs = self.document_texts({it[0] for *_, items in read for it in items})
        for where, system, question, items in read:
            ranked = []
            for r, (doc, start, end, score, grade, words) in enumerate(items, start=1):
                text = docs.get(doc)
                if text is None or not start <= end <= len(text):
                    raise InputError(f"{where}: item {r} points outside document {doc!r}; {_AGAIN}")
                ranked.append(RankedItem(r, doc, start, end, score, grade, words, text[start:end]))
            out[system][question] = ranked
        ids = self.question_ids if wanted is None else [q for q in self.question_ids if q in wanted]
        missing = [(s, q) for s in self.systems for q in ids if q not in out[s]]
        if missing:
            s, q = missing[0]
            raise InputError(
                f"{path}: no ranking for system {s!r} and question {q!r} "
                f"({len(missing)} missing; the file is cut short?); {_AGAIN}"
            )
        return out


_AGAIN = "the results directory is damaged: run `ragmeter search` again"


def _check_scores(scores: ScoresFile, path: Path) -> None:
    """Every system has every metric, with one value per question."""
    for name in ("systems", "questions", "metrics"):
        if not getattr(scores, name):
            raise InputError(f"{path}: {name} is empty; {_AGAIN}")
    n = len(scores.questions)
    if scores.clusters is not None and len(scores.clusters) != n:
        raise InputError(
            f"{path}: clusters: expected {n} labels (one per question), "
            f"got {len(scores.clusters)}; {_AGAIN}"
        )
    for system in scores.systems:
        row = scores.values.get(system)
        if row is None:
            raise InputError(f"{path}: no values for system {system!r}; {_AGAIN}")
        for metric in scores.metrics:
            values = row.get(metric)
            if values is None or len(values) != n:
                raise InputError(
                    f"{path}: system {system!r}, metric {metric!r}: expected {n} values "
                    f"(one per question), got {0 if values is None else len(values)}; {_AGAIN}"
                )


def as_results(results: Results | str | Path) -> Results:
    """``results`` as a :class:`Results`: a results directory is read (a one-line error when
    it is not one), a run already read is returned as it is."""
    return results if isinstance(results, Results) else Results(results)


def results_path(results: Results | str | Path) -> Path:
    """The folder of ``results``: a run already read, or a results directory's path (not
    read, so a folder still being written is named without reading it)."""
    return results.path if isinstance(results, Results) else Path(results)

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

import csv
import io
import json
import platform
import shutil
from collections.abc import Iterator
from functools import cached_property
from pathlib import Path

import numpy as np
import tomli_w

from ragmeter import __version__
from ragmeter.errors import InputError
from ragmeter.experiment import RankedItem, SearchRun
from ragmeter.io import atomic_directory, dumps, read_json, read_jsonl
from ragmeter.outputs import check_results_target, results_lock, results_marker
from ragmeter.schemas import (
    ResultsDocument,
    ResultsMeta,
    ResultsQuestion,
    ResultsSummary,
    RunLine,
    ScoresFile,
    check,
)
from ragmeter.summary import Summary, summarize, summarize_run
from ragmeter.tables import ShowsItself
from ragmeter.testset import AnswerSpan, Question

__all__ = [
    "RankedItem",
    "Results",
    "Summary",
    "save_results",
    "summarize",
    "summarize_run",
]


def _versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {"ragmeter": __version__, "python": platform.python_version()}
    for pkg in ("numpy", "bm25s", "syntok"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            pass
    return out


def save_results(
    run: SearchRun, path: str | Path, summary: Summary | None = None, *, overwrite: bool = False
) -> Path:
    """Write a complete results directory atomically (temporary name, then rename).

    ``path`` must not exist yet, or be an empty folder, or (with ``overwrite``)
    hold earlier ragmeter results; it may not be, hold or lie inside the
    corpus or test set. Anything else is an :class:`InputError`. The directory
    is written under its lock (:func:`ragmeter.outputs.results_lock`).
    """
    path = Path(path)
    cfg = run.config
    inputs = (("corpus", cfg.corpus), ("test set", cfg.testset))
    check_results_target(path, inputs, overwrite=overwrite)
    with results_lock(path):
        check_results_target(path, inputs, overwrite=overwrite)  # as it is now, under the lock
        return _save_results(run, path, summary)


def _save_results(run: SearchRun, path: Path, summary: Summary | None) -> Path:
    cfg = run.config
    systems = [s.name for s in run.systems]
    metric_names = run.metric_names
    if summary is None:
        summary = run.summary  # computed once per run
    questions = run.questions
    used_docs = {a.doc for q in questions for a in q.answers}
    used_docs |= {it.doc for s in run.systems for row in s.items for it in row}
    carried = _later_stages(path, systems, [q.id for q in questions])
    with atomic_directory(path) as tmp:
        for name in carried:
            shutil.copytree(path / name, tmp / name)
        (tmp / "config.toml").write_text(tomli_w.dumps(_toml_safe(cfg.to_dict())), "utf-8")
        meta = {
            **results_marker(),
            "versions": _versions(),
            "corpus": {
                "path": cfg.corpus,
                "documents": len(run.documents),
                "characters": sum(len(d.text) for d in run.documents),
            },
            "testset": {
                "path": cfg.testset,
                "questions": len(questions),
                "skipped": run.testset.skipped,
            },
            "systems": [
                {
                    "name": s.name,
                    "strategy": s.strategy,
                    "retriever": s.retriever,
                    "items": s.n_items,
                    **({"k_cap": s.k_cap} if s.k_cap is not None else {}),
                }
                for s in run.systems
            ],
            "ks": list(cfg.ks),
            "depth": cfg.depth,
            "relevant_grade": cfg.relevant_grade,
            "ideal": cfg.ideal,
            "seed": cfg.seed,
            "rounds": cfg.rounds,
            "metrics": metric_names,
        }
        (tmp / "meta.json").write_text(dumps(meta), "utf-8")
        _write_lines(tmp / "questions.jsonl", (q.to_dict() for q in questions))
        _write_lines(
            tmp / "documents.jsonl",
            (
                {"id": d.id, "text": d.text, **({"title": d.title} if d.title else {})}
                for d in run.documents
                if d.id in used_docs
            ),
        )
        _write_lines(
            tmp / "runs.jsonl",
            (
                {
                    "system": s.name,
                    "question": q.id,
                    "items": [
                        {
                            "doc": it.doc,
                            "start": it.start,
                            "end": it.end,
                            "score": it.score,
                            "grade": it.grade,
                            "words": it.words,
                        }
                        for it in row
                    ],
                }
                for s in run.systems
                for q, row in zip(questions, s.items, strict=True)
            ),
        )
        values = {s.name: {m: s.scores[m].tolist() for m in metric_names} for s in run.systems}
        (tmp / "scores.json").write_text(
            dumps(
                {
                    "systems": systems,
                    "questions": [q.id for q in questions],
                    "metrics": metric_names,
                    "values": values,
                }
            ),
            "utf-8",
        )
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(["system", "question", *metric_names])
        for s in run.systems:
            for i, q in enumerate(questions):
                writer.writerow(
                    [s.name, q.id, *(repr(float(s.scores[m][i])) for m in metric_names)]
                )
        (tmp / "scores.csv").write_text(buf.getvalue(), "utf-8")
        (tmp / "summary.json").write_text(dumps(summary.to_json()), "utf-8")
    return path


LATER_STAGES = ("answers", "audit")


def _later_stages(path: Path, systems: list[str], question_ids: list[str]) -> list[str]:
    """Folders of later stages (answers, hand grades, audit) to keep when a search is rerun.

    They are kept when the rerun scores the same systems on the same questions (the
    answer cache then re-answers only what changed); otherwise writing over them would
    lose work such as hand grades, so that is an error.
    """
    present = [name for name in LATER_STAGES if (path / name).is_dir()]
    if not present:
        return []
    try:
        old = json.loads((path / "scores.json").read_text(encoding="utf-8"))
        same = old["systems"] == systems and old["questions"] == question_ids
    except (OSError, ValueError, KeyError, TypeError):
        same = False
    if not same:
        raise InputError(
            f"{path} holds {' and '.join(present)} from a run with other systems or questions; "
            f"write to another --out, or move {path} away first"
        )
    return present


def _toml_safe(d: dict) -> dict:
    return {
        k: _toml_safe(v) if isinstance(v, dict) else v
        for k, v in d.items()
        if v is not None and v != [] and v != {}
    }


def _write_lines(path: Path, rows) -> None:
    with path.open("w", encoding="utf-8", newline="\n") as fh:
        for row in rows:
            fh.write(json.dumps(row, sort_keys=True, ensure_ascii=False) + "\n")


class Results(ShowsItself):
    """A results directory, read back for comparisons, reports and answer grading.

    Shows itself as a table of intervals (``_repr_html_``, ``to_markdown()``,
    ``to_pandas()``), as an in-memory :class:`~ragmeter.experiment.SearchRun` does.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if not (self.path / "scores.json").is_file():
            raise InputError(
                f"{self.path}: not a ragmeter results directory (no scores.json); "
                f"run `ragmeter search` first"
            )
        self.meta = self._json("meta.json")
        check(ResultsMeta, self.meta, str(self.path / "meta.json"), _AGAIN)
        scores = check(
            ScoresFile, self._json("scores.json"), str(self.path / "scores.json"), _AGAIN
        )
        _check_scores(scores, self.path / "scores.json")
        self._scores = scores.model_dump()
        raw = self._json("summary.json")
        check(ResultsSummary, raw, str(self.path / "summary.json"), _AGAIN)
        self.summary = Summary.from_json(raw, str(self.path / "summary.json"))

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

    def scores(self, system: str, metric: str) -> np.ndarray:
        """Per-question scores of one system on one metric."""
        system = str(system)
        self._check(system, metric)
        return np.asarray(self._scores["values"][system][metric], dtype=np.float64)

    def matrix(self, metric: str, systems: list[str] | None = None) -> np.ndarray:
        """(systems x questions) scores for one metric."""
        systems = systems or self.systems
        return np.vstack([self.scores(s, metric) for s in systems])

    def _check(self, system: str, metric: str) -> None:
        if system not in self._scores["values"]:
            raise InputError(f"unknown system {system!r}; choose one of {self.systems}")
        if metric not in self.metrics:
            raise InputError(f"unknown metric {metric!r}; choose one of {self.metrics}")

    @cached_property
    def questions(self) -> list[Question]:
        out = []
        path = self.path / "questions.jsonl"
        for number, obj in self._lines("questions.jsonl"):
            q = check(ResultsQuestion, obj, f"{path}:{number}", _AGAIN)
            spans = tuple(AnswerSpan(a.doc, a.start, a.end, a.text) for a in q.answers)
            meta = {k: v for k, v in obj.items() if k not in ("id", "question", "answers")}
            out.append(Question(q.id, q.question, spans, meta))
        return out

    @cached_property
    def documents(self) -> dict[str, str]:
        out = {}
        path = self.path / "documents.jsonl"
        for number, obj in self._lines("documents.jsonl"):
            d = check(ResultsDocument, obj, f"{path}:{number}", _AGAIN)
            out[d.id] = d.text
        return out

    @cached_property
    def runs(self) -> dict[str, dict[str, list[RankedItem]]]:
        """``runs[system][question_id]``: the ranked items, best first, with text."""
        docs = self.documents
        out: dict[str, dict[str, list[RankedItem]]] = {s: {} for s in self.systems}
        path = self.path / "runs.jsonl"
        for number, obj in self._lines("runs.jsonl"):
            where = f"{path}:{number}"
            line = check(RunLine, obj, where, _AGAIN)
            if line.system not in out:
                raise InputError(f"{where}: system {line.system!r} is not in scores.json; {_AGAIN}")
            items = []
            for r, it in enumerate(line.items, start=1):
                text = docs.get(it.doc)
                if text is None or not it.start <= it.end <= len(text):
                    raise InputError(
                        f"{where}: item {r} points outside document {it.doc!r}; {_AGAIN}"
                    )
                items.append(
                    RankedItem(
                        r,
                        it.doc,
                        it.start,
                        it.end,
                        it.score,
                        it.grade,
                        it.words,
                        text[it.start : it.end],
                    )
                )
            out[line.system][line.question] = items
        missing = [(s, q) for s in self.systems for q in self.question_ids if q not in out[s]]
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

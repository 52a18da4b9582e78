"""The results directory: what a search run saved, and how to read it back.

Layout (every file is deterministic: same inputs and seed, same bytes)::

    config.toml       the configuration used (absolute paths)
    meta.json         versions, corpus/test-set sizes, systems, seed and rounds
    questions.jsonl   the questions scored, with their answer spans
    documents.jsonl   the documents that any result or answer key points into
    runs.jsonl        per system and question: the ranked items with grades
    scores.json       per-question scores: {systems, questions, metrics, values}
    scores.csv        the same, one row per system and question
    summary.json      intervals for every system x metric, paired comparisons,
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
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np
import tomli_w

from ragmeter import __version__, stats
from ragmeter.errors import InputError
from ragmeter.experiment import SearchRun
from ragmeter.io import atomic_directory, dumps
from ragmeter.tables import ShowsItself
from ragmeter.testset import AnswerSpan, Question


def _versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {"ragmeter": __version__, "python": platform.python_version()}
    for pkg in ("numpy", "bm25s", "syntok"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            pass
    return out


def summarize(
    matrices: dict[str, np.ndarray],
    systems: list[str],
    metric: str,
    seed: int,
    rounds: int,
    confidence: float = 0.95,
    method: str = "percentile",
) -> dict:
    """Intervals for every metric x system, paired comparisons and sample sizes on ``metric``."""
    estimates: dict[str, dict[str, dict]] = {s: {} for s in systems}
    for name, matrix in matrices.items():
        for system, est in zip(
            systems,
            stats.bootstrap_many(
                matrix, rounds=rounds, seed=seed, confidence=confidence, method=method
            ),
            strict=True,
        ):
            estimates[system][name] = est.to_dict()
    if metric not in matrices:
        raise InputError(f"metric {metric!r} was not computed; choose one of {sorted(matrices)}")
    main = matrices[metric]
    comparisons = (
        [
            c.to_dict()
            for c in stats.compare_all(
                main, systems, rounds=rounds, seed=seed, confidence=confidence
            )
        ]
        if len(systems) > 1
        else []
    )
    sizes = {
        s: [r.to_dict() for r in stats.sample_size(row, rounds=rounds, seed=seed)]
        for s, row in zip(systems, main, strict=True)
    }
    return {
        "metric": metric,
        "seed": seed,
        "rounds": rounds,
        "confidence": confidence,
        "method": method,
        "estimates": estimates,
        "comparisons": comparisons,
        "sample_size": sizes,
    }


def summarize_run(run: SearchRun) -> dict:
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
    )


def save_results(run: SearchRun, path: str | Path, summary: dict | None = None) -> Path:
    """Write a complete results directory atomically (temporary name, then rename)."""
    path = Path(path)
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
        (tmp / "summary.json").write_text(dumps(summary), "utf-8")
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
    except (OSError, ValueError, KeyError):
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


@dataclass(frozen=True, slots=True)
class RankedItem:
    """A saved ranked result, with its text taken from the saved documents."""

    rank: int
    doc: str
    start: int
    end: int
    score: float
    grade: int
    words: int
    text: str


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
        self._scores = self._json("scores.json")
        self.summary = self._json("summary.json")

    def _json(self, name: str) -> dict:
        try:
            return json.loads((self.path / name).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise InputError(
                f"{self.path / name}: missing; the results directory is "
                f"incomplete, run `ragmeter search` again"
            ) from None
        except json.JSONDecodeError as exc:
            raise InputError(f"{self.path / name}:{exc.lineno}: malformed JSON") from None

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
        with (self.path / "questions.jsonl").open(encoding="utf-8") as fh:
            for line in fh:
                obj = json.loads(line)
                spans = tuple(
                    AnswerSpan(a["doc"], a["start"], a["end"], a["text"])
                    for a in obj.pop("answers")
                )
                out.append(Question(obj.pop("id"), obj.pop("question"), spans, obj))
        return out

    @cached_property
    def documents(self) -> dict[str, str]:
        out = {}
        with (self.path / "documents.jsonl").open(encoding="utf-8") as fh:
            for line in fh:
                obj = json.loads(line)
                out[obj["id"]] = obj["text"]
        return out

    @cached_property
    def runs(self) -> dict[str, dict[str, list[RankedItem]]]:
        """``runs[system][question_id]``: the ranked items, best first, with text."""
        docs = self.documents
        out: dict[str, dict[str, list[RankedItem]]] = {s: {} for s in self.systems}
        with (self.path / "runs.jsonl").open(encoding="utf-8") as fh:
            for line in fh:
                obj = json.loads(line)
                out[obj["system"]][obj["question"]] = [
                    RankedItem(
                        r,
                        it["doc"],
                        it["start"],
                        it["end"],
                        it["score"],
                        it["grade"],
                        it["words"],
                        docs[it["doc"]][it["start"] : it["end"]],
                    )
                    for r, it in enumerate(obj["items"], start=1)
                ]
        return out

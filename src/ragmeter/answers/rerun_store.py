"""Where reruns 1..K-1 live, beside rerun 0's files in ``<results>/answers/``.

::

    answers/
      reader_reruns.jsonl  the reader's reruns 1..K-1: an answer record with its
                           "rerun" index, "seed", "temperature" and "top_p"
      grade_reruns.jsonl   each judge's grades of reruns 1..K-1: a grade record with
                           its "rerun" index and "seed" (the judge's; 0 when the
                           judge is not rerun), tied to the answer it graded by
                           "answer_sha"
      reruns.json          what grade found: the flip rate of every question and
                           system, their means, the questions that flip most

Rerun 0 stays in ``reader.jsonl`` and ``grades.jsonl`` (and so in ``answers.jsonl``),
where everything that reads answers finds it. A run without reruns writes none of
these files.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragmeter.answers.reruns import Reruns, rerun_seed
from ragmeter.answers.store import (
    GRADES,
    UNSCORED,
    Answer,
    Grade,
    answers_dir,
    jsonl_text,
    read_saved_lines,
    row_from_line,
    update_meta,
)
from ragmeter.errors import InputError
from ragmeter.files.io import atomic_write_text
from ragmeter.files.outputs import results_lock
from ragmeter.runs.results import Results

__all__ = [
    "READER_RERUNS",
    "GRADE_RERUNS",
    "AnswerRerun",
    "GradeRerun",
    "answer_reruns",
    "read_answer_reruns",
    "read_grade_reruns",
    "reruns_to_grade",
    "save_answer_reruns",
    "save_grade_reruns",
    "write_answer_reruns",
    "write_grade_reruns",
]

READER_RERUNS = "reader_reruns.jsonl"
GRADE_RERUNS = "grade_reruns.jsonl"

RerunKey = tuple[str, str, int]  # (system, question, rerun)


@dataclass(frozen=True)
class AnswerRerun(Answer):
    """The reader's answer in rerun ``rerun`` (1 or more), with the sampling it had."""

    rerun: int = 1
    seed: int | None = None
    temperature: float = 0.0
    top_p: float | None = None

    @property
    def rerun_key(self) -> RerunKey:
        return (self.system, self.question, self.rerun)


@dataclass(frozen=True)
class GradeRerun(Grade):
    """One judge's grade in rerun ``rerun`` (1 or more) of the answer it graded."""

    rerun: int = 1
    seed: int | None = None

    @property
    def rerun_key(self) -> tuple[str, str, str, int]:
        return (self.judge, self.system, self.question, self.rerun)


def read_answer_reruns(folder: Path) -> dict[RerunKey, AnswerRerun]:
    """The reader's reruns by ``(system, question, rerun)``; a later line wins."""
    path = folder / READER_RERUNS
    out: dict[RerunKey, AnswerRerun] = {}
    for lineno, obj in read_saved_lines(path):
        a = row_from_line(AnswerRerun, path, lineno, obj)
        if a.rerun < 1:
            raise InputError(f"{path}:{lineno}: rerun must be 1 or more, got {a.rerun}")
        out[a.rerun_key] = a
    return out


def write_answer_reruns(folder: Path, answers: Iterable[AnswerRerun]) -> None:
    atomic_write_text(folder / READER_RERUNS, jsonl_text(answers))


def read_grade_reruns(folder: Path) -> dict[tuple[str, str, str, int], GradeRerun]:
    """Grades of reruns by ``(judge, system, question, rerun)``; a later line wins."""
    path = folder / GRADE_RERUNS
    out: dict[tuple[str, str, str, int], GradeRerun] = {}
    for lineno, obj in read_saved_lines(path):
        g = row_from_line(GradeRerun, path, lineno, obj)
        if g.grade not in (*GRADES, UNSCORED):
            raise InputError(f"{path}:{lineno}: unknown grade {g.grade!r}")
        if g.rerun < 1:
            raise InputError(f"{path}:{lineno}: rerun must be 1 or more, got {g.rerun}")
        out[g.rerun_key] = g
    return out


def write_grade_reruns(folder: Path, grades: Iterable[GradeRerun]) -> None:
    atomic_write_text(folder / GRADE_RERUNS, jsonl_text(grades))


# --- merging a run's reruns into the files ----------------------------------------------


def answer_reruns(made: list[Answer], per_rerun: int, reruns: Reruns) -> list[AnswerRerun]:
    """``made`` (reruns 1..K-1, ``per_rerun`` answers each, in order) as rerun records."""
    out = []
    for i, a in enumerate(made):
        r = 1 + i // per_rerun
        out.append(
            AnswerRerun(
                **{f: getattr(a, f) for f in Answer.__dataclass_fields__},
                rerun=r,
                seed=rerun_seed(reruns.seed, r),
                temperature=float(reruns.temperature or 0.0),
                top_p=reruns.top_p,
            )
        )
    return out


def save_answer_reruns(
    res: Results, reader_k: tuple[str, int], new: list[AnswerRerun], reruns: Reruns
) -> None:
    """Merge the reader's reruns 1..K-1 into ``reader_reruns.jsonl``: earlier reruns are
    kept while they match (same reader, k, sampling and seed, a rerun below K); the
    file is removed when none is left. The settings go to ``meta.json``."""
    folder = answers_dir(res)
    count = reruns.count("reader")
    with results_lock(res.path):
        kept = {
            key: a
            for key, a in read_answer_reruns(folder).items()
            if (a.reader, a.k) == reader_k
            and a.rerun < count
            and (a.temperature, a.top_p) == (float(reruns.temperature or 0.0), reruns.top_p)
            and a.seed == rerun_seed(reruns.seed, a.rerun)
        }
        kept.update({a.rerun_key: a for a in new})
        path = folder / READER_RERUNS
        if kept:
            write_answer_reruns(folder, _in_order(res, kept.values()))
        elif path.exists():
            path.unlink()
        update_meta(folder, answer_reruns=reruns.to_meta() if reruns.active else None)


def _in_order(res: Results, rows: Any) -> list[Any]:
    """Rerun records in order: judge (for grades), rerun, then results order (systems,
    then questions)."""
    order = {s: i for i, s in enumerate(res.systems)}
    qorder = {q: i for i, q in enumerate(res.question_ids)}
    return sorted(
        rows,
        key=lambda a: (
            getattr(a, "judge", ""),
            a.rerun,
            order.get(a.system, 0),
            qorder.get(a.question, 0),
        ),
    )


def reruns_to_grade(res: Results, todo: list[Answer], reruns: Reruns) -> list[list[Answer]]:
    """The answers reruns 1..K-1 grade, one list per rerun in ``todo``'s order: the
    reader's reruns when it is rerun (each must have been made: else an error before
    any call), else ``todo`` again for the judge's reruns."""
    if not reruns.reruns("reader"):
        return [list(todo) for _ in range(1, reruns.k)]
    saved = read_answer_reruns(answers_dir(res))
    out = []
    for r in range(1, reruns.k):
        batch = []
        for a in todo:
            again = saved.get((a.system, a.question, r))
            if again is None or (again.reader, again.k) != (a.reader, a.k):
                raise InputError(
                    f"{answers_dir(res) / READER_RERUNS}: no rerun {r} of "
                    f"{a.system}/{a.question} by {a.reader} at k={a.k}; run `ragmeter answer "
                    f"{res.path} --reruns {reruns.k} --reruns-of {reruns.of}` first"
                )
            batch.append(again)
        out.append(batch)
    return out


def save_grade_reruns(res: Results, label: str, new: list[GradeRerun], reruns: Reruns) -> None:
    """Merge one judge's grades of reruns 1..K-1 into ``grade_reruns.jsonl``: its earlier
    ones of a rerun at or past K are dropped; the file is removed when none is left."""
    folder = answers_dir(res)
    with results_lock(res.path):
        saved = {
            key: g
            for key, g in read_grade_reruns(folder).items()
            if g.judge != label or g.rerun < reruns.k
        }
        saved.update({g.rerun_key: g for g in new})
        path = folder / GRADE_RERUNS
        if saved:
            write_grade_reruns(folder, _in_order(res, saved.values()))
        elif path.exists():
            path.unlink()

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

from ragmeter.answers.store import GRADES, UNSCORED, Answer, Grade, _build, _jsonl, _read_jsonl
from ragmeter.errors import InputError
from ragmeter.files.io import atomic_write_text

__all__ = [
    "READER_RERUNS",
    "GRADE_RERUNS",
    "AnswerRerun",
    "GradeRerun",
    "read_answer_reruns",
    "read_grade_reruns",
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
    for lineno, obj in _read_jsonl(path):
        a = _build(AnswerRerun, path, lineno, obj)
        if a.rerun < 1:
            raise InputError(f"{path}:{lineno}: rerun must be 1 or more, got {a.rerun}")
        out[a.rerun_key] = a
    return out


def write_answer_reruns(folder: Path, answers: Iterable[AnswerRerun]) -> None:
    atomic_write_text(folder / READER_RERUNS, _jsonl(answers))


def read_grade_reruns(folder: Path) -> dict[tuple[str, str, str, int], GradeRerun]:
    """Grades of reruns by ``(judge, system, question, rerun)``; a later line wins."""
    path = folder / GRADE_RERUNS
    out: dict[tuple[str, str, str, int], GradeRerun] = {}
    for lineno, obj in _read_jsonl(path):
        g = _build(GradeRerun, path, lineno, obj)
        if g.grade not in (*GRADES, UNSCORED):
            raise InputError(f"{path}:{lineno}: unknown grade {g.grade!r}")
        if g.rerun < 1:
            raise InputError(f"{path}:{lineno}: rerun must be 1 or more, got {g.rerun}")
        out[g.rerun_key] = g
    return out


def write_grade_reruns(folder: Path, grades: Iterable[GradeRerun]) -> None:
    atomic_write_text(folder / GRADE_RERUNS, _jsonl(grades))

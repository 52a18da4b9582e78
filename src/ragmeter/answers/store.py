"""Where answers and grades live: ``<results>/answers/``.

::

    answers/
      cache.sqlite    every reader and judge reply (ragmeter.llm.ReplyCache)
      reader.jsonl    one answer per system and question, with tokens and latency
      grades.jsonl    one grade per judge, system and question, with the judge's
                      reason and raw reply (unscored replies keep their text)
      hand.jsonl      hand grades, appended and synced one at a time as typed
      meta.json       reader, judges (the first gives the accuracy unless
                      accuracy_judge names another), k, run stats
      answers.jsonl   the merged view for other tools (the HTML report reads it
                      only when reader.jsonl is absent), rewritten after
                      every change: {"system", "question", "answer",
                      "grades": {judge: grade}, "hand"?}

A grade or hand grade records the SHA-256 of the answer it graded; when the
reader is run again and an answer changes, its old grades no longer apply and
are left out of the merged view (they stay in the files).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragmeter.defaults import EARLIER
from ragmeter.errors import InputError
from ragmeter.files.io import atomic_write_text, dumps, read_json, read_jsonl
from ragmeter.files.outputs import results_lock, write_output
from ragmeter.files.schemas import describe_error, normalize
from ragmeter.runs.results import Results, as_results, results_path

GRADES: tuple[str, str, str] = ("correct", "partial", "wrong")
"""The three grades a judge gives; ``unscored`` marks a reply that could not be read."""

__all__ = [
    "GRADES",
    "Answer",
    "AnswerSet",
    "Grade",
    "HandGrade",
    "HAND_LABELS",
    "answer_sha",
    "answers_dir",
    "append_hand",
    "as_answer_set",
    "graded_answers",
    "HAND_BUILT",
    "hand_stamp",
    "jsonl_text",
    "stale_hand_files",
    "answers_or_refuse",
    "load_answers",
    "load_answer_set",
    "load_merged_answer_set",
    "read_answers",
    "read_grades",
    "read_hand",
    "read_meta",
    "read_saved_lines",
    "reader_k_of",
    "row_from_line",
    "update_meta",
    "write_answers",
    "write_grades",
    "write_merged",
]

UNSCORED = "unscored"
HAND_LABELS = (*GRADES, "skip")
Key = tuple[str, str]  # (system, question)


def answers_dir(results: Results | str | Path) -> Path:
    """``<results>/answers``."""
    base = results_path(results)
    return base / "answers"


def answer_sha(text: str) -> str:
    """Short SHA-256 of an answer: ties a grade to the exact text it graded."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class Answer:
    """The reader's answer for one system and question.

    ``error`` is set (and ``answer`` empty) when no answer could be had
    (timeout, server error); such an answer is not sent to the judges.
    ``latency_s`` is the time of the call that produced it, also when it now
    comes from the cache (``cached``).
    """

    system: str
    question: str
    answer: str
    reader: str
    k: int
    error: str | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    latency_s: float = 0.0
    cached: bool = False

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def sha(self) -> str:
        return answer_sha(self.answer)

    @property
    def key(self) -> Key:
        return (self.system, self.question)


@dataclass(frozen=True)
class Grade:
    """One judge's grade of one answer.

    ``grade`` is correct, partial, wrong or ``unscored`` (the reply could not
    be read against the schema, or no reply came); ``raw`` keeps the judge's
    text and ``error`` says why it is unscored.
    """

    judge: str
    system: str
    question: str
    grade: str
    reason: str = ""
    raw: str = ""
    error: str | None = None
    answer_sha: str = ""
    tokens_in: int = 0
    tokens_out: int = 0
    latency_s: float = 0.0
    cached: bool = False

    @property
    def key(self) -> Key:
        return (self.system, self.question)


@dataclass(frozen=True)
class HandGrade:
    """A grade typed by a person: correct, partial, wrong, or ``skip``."""

    system: str
    question: str
    hand: str
    answer_sha: str
    seed: int | None = None
    at: str = ""

    @property
    def key(self) -> Key:
        return (self.system, self.question)


# --- reading and writing -----------------------------------------------------------------


def read_saved_lines(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """A saved JSONL file's lines as (line number, object); none when it is absent."""
    if not path.is_file():
        return []
    # a last line cut off by a crash mid-write was never saved: skip it
    return list(read_jsonl(path, torn_tail_ok=True, nan_ok=True))


_ADAPTERS: dict[type, Any] = {}


def row_from_line(cls: type, path: Path, lineno: int, obj: dict[str, Any]):
    """``cls`` from one line's fields, each type-checked (a wrong type names the line)."""
    import typing

    from pydantic import ConfigDict, ValidationError, create_model

    if cls not in _ADAPTERS:
        hints = typing.get_type_hints(cls)
        _ADAPTERS[cls] = create_model(
            cls.__name__,
            __config__=ConfigDict(strict=True),
            **{
                f.name: (hints[f.name], ... if f.default is dataclasses.MISSING else f.default)
                for f in dataclasses.fields(cls)
            },
        )
    names = {f.name for f in dataclasses.fields(cls)}
    try:
        checked = _ADAPTERS[cls].model_validate({k: v for k, v in obj.items() if k in names})
    except ValidationError as exc:
        raise InputError(
            f"{path}:{lineno}: {describe_error(exc)}; fix or delete the line"
        ) from None
    return cls(**{name: getattr(checked, name) for name in names})


def jsonl_text(rows: Iterable[Any]) -> str:
    """``rows`` (dataclasses or dicts) as JSONL text, keys sorted."""
    return "".join(
        json.dumps(
            dataclasses.asdict(r) if dataclasses.is_dataclass(r) else r,
            sort_keys=True,
            ensure_ascii=False,
        )
        + "\n"
        for r in rows
    )


def read_answers(folder: Path) -> dict[Key, Answer]:
    path = folder / "reader.jsonl"
    out: dict[Key, Answer] = {}
    for lineno, obj in read_saved_lines(path):
        a = row_from_line(Answer, path, lineno, obj)
        out[a.key] = a
    return out


def write_answers(folder: Path, answers: Iterable[Answer]) -> None:
    atomic_write_text(folder / "reader.jsonl", jsonl_text(answers))


def read_grades(folder: Path) -> dict[tuple[str, str, str], Grade]:
    """Grades by ``(judge, system, question)``; a later line wins."""
    path = folder / "grades.jsonl"
    out: dict[tuple[str, str, str], Grade] = {}
    for lineno, obj in read_saved_lines(path):
        g = row_from_line(Grade, path, lineno, obj)
        if g.grade not in (*GRADES, UNSCORED):
            raise InputError(f"{path}:{lineno}: unknown grade {g.grade!r}")
        out[(g.judge, g.system, g.question)] = g
    return out


def write_grades(folder: Path, grades: Iterable[Grade]) -> None:
    atomic_write_text(folder / "grades.jsonl", jsonl_text(grades))


def read_hand(folder: Path) -> list[HandGrade]:
    """Every hand-grade line, in the order typed."""
    path = folder / "hand.jsonl"
    out = []
    for lineno, obj in read_saved_lines(path):
        h = row_from_line(HandGrade, path, lineno, obj)
        if h.hand not in HAND_LABELS:
            raise InputError(f"{path}:{lineno}: unknown hand grade {h.hand!r}")
        out.append(h)
    return out


def append_hand(folder: Path, grade: HandGrade) -> None:
    """Append one hand grade and sync it to disk before returning (under the results lock)."""
    with results_lock(folder.parent):
        _append_hand(folder, grade)


def _append_hand(folder: Path, grade: HandGrade) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "hand.jsonl"
    line = json.dumps(dataclasses.asdict(grade), sort_keys=True, ensure_ascii=False) + "\n"
    with open(path, "a+b") as fh:
        size = fh.seek(0, os.SEEK_END)
        if size:
            fh.seek(size - 1)
            if fh.read(1) != b"\n":
                # a line cut off by a crash was never a saved grade: drop it (the only
                # case that reads more than the last byte)
                fh.seek(0)
                fh.truncate(fh.read().rfind(b"\n") + 1)
        fh.seek(0, os.SEEK_END)
        fh.write(line.encode("utf-8"))
        fh.flush()
        os.fsync(fh.fileno())


def read_meta(folder: Path) -> dict[str, Any]:
    path = folder / "meta.json"
    if not path.is_file():
        return {}
    data = read_json(path, nan_ok=True)
    if not isinstance(data, dict):
        raise InputError(f"{path}: expected a JSON object; fix or delete the file")
    return data


def reader_k_of(meta: dict[str, Any]) -> int:
    """The top k passages the reader answered from, as ``answers/meta.json`` records it;
    a record without one (an earlier version's, or a hand-made answers.jsonl's) was made
    from :data:`ragmeter.defaults.EARLIER`'s."""
    return int(meta.get("k") or EARLIER.reader_k)


def update_meta(folder: Path, **changes: Any) -> dict[str, Any]:
    """Merge ``changes`` into ``meta.json`` (``None`` values remove a key), under the lock."""
    with results_lock(folder.parent):
        meta = read_meta(folder)
        for key, value in changes.items():
            if value is None:
                meta.pop(key, None)
            else:
                meta[key] = value
        atomic_write_text(folder / "meta.json", dumps(meta))
    return meta


# --- the merged view ---------------------------------------------------------------------


@dataclass
class AnswerSet:
    """Everything graded so far, with stale grades (of a changed answer) left out.

    ``grades[judge][(system, question)]`` and ``hand[(system, question)]``
    hold grades of the current answers only; ``hand`` keeps the latest
    correct/partial/wrong typed for each answer (skips are in ``hand_seen``).
    """

    results: Results
    answers: dict[Key, Answer]
    judges: list[str]
    grades: dict[str, dict[Key, Grade]]
    hand: dict[Key, HandGrade]
    hand_seen: set[Key]
    reader: str | None
    k: int
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def folder(self) -> Path:
        return answers_dir(self.results)

    def ordered_keys(self, systems: Iterable[str] | None = None) -> list[Key]:
        """Answer keys in results order: systems, then questions."""
        wanted = list(systems) if systems is not None else self.results.systems
        return [(s, q) for s in wanted for q in self.results.question_ids if (s, q) in self.answers]

    def labels(self, judge: str, keys: Iterable[Key]) -> dict[Key, str]:
        """The judge's grade of each key it graded (``unscored`` included)."""
        have = self.grades.get(judge, {})
        return {k: have[k].grade for k in keys if k in have}


def load_answer_set(results: Results | str | Path) -> AnswerSet:
    """Read ``reader.jsonl``, ``grades.jsonl``, ``hand.jsonl`` and ``meta.json``."""
    res = as_results(results)
    folder = answers_dir(res)
    meta = read_meta(folder)
    answers = read_answers(folder)
    known_s, known_q = set(res.systems), set(res.question_ids)
    for s, q in answers:
        if s not in known_s or q not in known_q:
            raise InputError(
                f"{folder / 'reader.jsonl'}: system {s!r} / question {q!r} is not in "
                f"{res.path}; the answers belong to another results directory"
            )
    judges: list[str] = list(meta.get("judges") or [])
    grades: dict[str, dict[Key, Grade]] = {}
    for (judge, s, q), g in read_grades(folder).items():
        a = answers.get((s, q))
        if a is None or g.answer_sha != a.sha:
            continue
        grades.setdefault(judge, {})[(s, q)] = g
        if judge not in judges:
            judges.append(judge)
    hand: dict[Key, HandGrade] = {}
    seen: set[Key] = set()
    for h in read_hand(folder):
        a = answers.get(h.key)
        if a is None or h.answer_sha != a.sha:
            continue
        seen.add(h.key)
        if h.hand != "skip":
            hand[h.key] = h
    return AnswerSet(
        results=res,
        answers=answers,
        judges=judges,
        grades=grades,
        hand=hand,
        hand_seen=seen,
        reader=meta.get("reader"),
        k=reader_k_of(meta),
        meta=meta,
    )


def as_answer_set(results: AnswerSet | Results | str | Path) -> AnswerSet:
    """The answer run, read once: an :class:`AnswerSet` already read is handed on as it
    is; a run or its folder is read (:func:`load_answer_set`). Every function of the
    answer half that takes either converts through here, so a command reads the answer
    files once and carries the set."""
    return results if isinstance(results, AnswerSet) else load_answer_set(results)


def load_answers(results: Results | str | Path) -> AnswerSet | None:
    """The answers of ``results``: ``answers/reader.jsonl`` with its grades, else a
    hand-made ``answers/answers.jsonl``; None when neither holds an answer."""
    res = as_results(results)
    if (answers_dir(res) / "reader.jsonl").is_file():
        aset = load_answer_set(res)
    else:
        aset = load_merged_answer_set(res)
    return aset if aset is not None and aset.answers else None


def graded_answers(results: AnswerSet | Results | str | Path) -> AnswerSet | None:
    """The answers a report on them reads: an :class:`AnswerSet` as it is, else
    :func:`load_answers` (None when there are none)."""
    return results if isinstance(results, AnswerSet) else load_answers(results)


def answers_or_refuse(
    results: AnswerSet | Results | str | Path, doing: str = "", then: str = "`ragmeter answer`"
) -> AnswerSet:
    """:func:`graded_answers`, the one reader of every report on an answer run (the
    accuracy, the paired verdicts, the gate's scores): ``answers/reader.jsonl`` with its
    grades, else a hand-made ``answers.jsonl``; with neither, one line naming the
    results and what to run (``then``) to make some."""
    aset = graded_answers(results)
    if aset is None:
        raise InputError(f"{results}: no answers{doing}; run {then} first")
    return aset


HAND_BUILT = {"accuracy.json": "grade", "verdicts.json": "grade", "by_judge.json": "judges"}
"""The answer files with judge-corrected numbers, so built from the hand grades, and the
command that writes each: each records :func:`hand_stamp` of the hand grades it was
built from."""


def hand_stamp(aset: AnswerSet) -> dict[str, Any]:
    """The hand grades numbers are built from: ``count`` and ``digest``, the sha256 of
    every (system, question, grade, answer sha) in key order, so a file that records it
    can tell when ``hand.jsonl`` has moved on."""
    rows = sorted([*k, h.hand, h.answer_sha] for k, h in aset.hand.items())
    digest = hashlib.sha256(json.dumps(rows).encode("utf-8")).hexdigest()
    return {"count": len(rows), "digest": digest}


def stale_hand_files(results: AnswerSet | Results | str | Path) -> list[str]:
    """The files of :data:`HAND_BUILT` in the answers folder whose recorded hand grades
    (:func:`hand_stamp`) are not those the answers hold now (a file that records none
    counts as stale): their judge-corrected numbers wait for the next ``grade``."""
    aset = graded_answers(results)
    if aset is None:
        return []
    now = hand_stamp(aset)
    stale = []
    for name in HAND_BUILT:
        path = answers_dir(aset.results) / name
        if path.is_file():
            data = read_json(path, nan_ok=True)
            if not isinstance(data, dict) or data.get("hand_grades") != now:
                stale.append(name)
    return stale


def _merged_grade(value: Any) -> str:
    """A grade written by hand: case, spaces and punctuation around it set aside as in
    a judge's reply (:func:`ragmeter.files.schemas.normalize`); anything else is unscored."""
    if value is None:
        return UNSCORED
    g = normalize(str(value), {"enum": [*GRADES, UNSCORED]})
    return g if g in (*GRADES, UNSCORED) else UNSCORED


def load_merged_answer_set(results: Results | str | Path) -> AnswerSet | None:
    """An :class:`AnswerSet` from ``answers.jsonl`` alone (None when the file is absent).

    For answers graded elsewhere and written in the merged format by hand::

        {"system": "recursive", "question": "q001", "answer": "...",
         "grades": {"gpt-oss:20b": "correct", "llama3.2": "partial"}, "hand": "correct"}

    ``grades`` maps each judge to correct | partial | wrong | unscored (anything
    else reads as unscored); a single ``"judge"`` + ``"grade"`` pair is read the
    same way. ``hand`` is optional. ``meta.json`` may name the ``reader``, the
    ``judges`` and ``k``. A line naming a system or question that is not in the
    results is a one-line error with its line number.
    """
    res = as_results(results)
    folder = answers_dir(res)
    path = folder / "answers.jsonl"
    if not path.is_file():
        return None
    meta = read_meta(folder)
    reader = meta.get("reader")
    k = reader_k_of(meta)
    known_s, known_q = set(res.systems), set(res.question_ids)
    judges: list[str] = [str(j) for j in meta.get("judges") or []]
    answers: dict[Key, Answer] = {}
    grades: dict[str, dict[Key, Grade]] = {}
    hand: dict[Key, HandGrade] = {}
    for lineno, row in read_jsonl(path, nan_ok=True):
        s, q = row.get("system"), row.get("question")
        if s not in known_s or q not in known_q:
            raise InputError(
                f"{path}:{lineno}: system {s!r} / question {q!r} is not in this results "
                f"directory; grade answers of this run only"
            )
        a = Answer(s, q, str(row.get("answer") or ""), str(reader or ""), k)
        answers[a.key] = a
        given = row.get("grades") or {}
        if not isinstance(given, dict):
            raise InputError(f"{path}:{lineno}: grades must be an object {{judge: grade}}")
        given = dict(given)
        if "grade" in row:
            given[str(row.get("judge") or "judge")] = row["grade"]
        for judge, value in given.items():
            judge = str(judge)
            if judge not in judges:
                judges.append(judge)
            grades.setdefault(judge, {})[a.key] = Grade(
                judge, s, q, _merged_grade(value), answer_sha=a.sha
            )
        label = _merged_grade(row.get("hand")) if row.get("hand") is not None else UNSCORED
        if label != UNSCORED:
            hand[a.key] = HandGrade(s, q, label, a.sha)
    return AnswerSet(
        results=res,
        answers=answers,
        judges=judges,
        grades=grades,
        hand=hand,
        hand_seen=set(hand),
        reader=reader,
        k=k,
        meta=meta,
    )


def merged_rows(aset: AnswerSet) -> list[dict[str, Any]]:
    """One row per answer in the format the HTML report reads."""
    rows = []
    for key in aset.ordered_keys():
        a = aset.answers[key]
        grades = {}
        for judge in aset.judges:
            g = aset.grades.get(judge, {}).get(key)
            if g is not None:
                grades[judge] = g.grade
        row: dict[str, Any] = {
            "system": a.system,
            "question": a.question,
            "answer": a.answer,
            "grades": grades,
        }
        if key in aset.hand:
            row["hand"] = aset.hand[key].hand
        rows.append(row)
    return rows


def reference_text(results: Results, question: str) -> str:
    """The answer key: the text of the question's answer span(s), one per line."""
    for q in results.questions:
        if q.id == question:
            return "\n".join(span.text for span in q.answers)
    raise KeyError(question)


def write_merged(results: Results | str | Path) -> Path:
    """Rewrite ``answers/answers.jsonl`` (atomically, under the lock) from the files beside it."""
    base = results_path(results)
    with results_lock(base):
        aset = load_answer_set(results)
        path = aset.folder / "answers.jsonl"
        write_output(path, jsonl_text(merged_rows(aset)), "merged answers file", flag=None)
    return path

"""Runs whose results are written but not yet recorded: a note kept until the record is.

A command that records its run (``search``, ``evaluate``, ``grade``) first leaves a note
beside the history file (:func:`begin`: ``history.sqlite-unrecorded/<uid>.json``, holding
the results directory, the command, the git state and how the directory looked before
the run), then writes its results, records them under the note's uid and removes the
note (:func:`finish`). A command killed between its results and its record leaves the
note; the next command that records or reads the history records that run
(:func:`recover`) when its results directory is complete and was written after the note,
and drops the note of a run killed before its results were. The uid is the record's, so
a run is recorded once however often the note is recovered, also by two commands at once.
"""

from __future__ import annotations

import contextlib
import json
import os
import uuid
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ragmeter.errors import InputError
from ragmeter.files.outputs import pid_alive, results_lock
from ragmeter.history.store import (
    EXTRA_FILES,
    RESULT_FILES,
    HistoryStore,
    RunRecord,
    _new_folder,
    git_state,
    history_path,
    record,
)
from ragmeter.runs.results import Results

__all__ = ["Pending", "begin", "drop", "finish", "notes_folder", "recover"]

SUFFIX = "-unrecorded"


@dataclass(frozen=True)
class Pending:
    """A run about to write its results: what its record needs, and its note's file."""

    uid: str
    results: str
    command: str
    git: dict[str, Any]
    started_at: str
    before: list[list[Any]]
    pid: int
    history: str

    @property
    def note(self) -> Path:
        return notes_folder(self.history) / f"{self.uid}.json"


def notes_folder(history: str | Path) -> Path:
    """``history.sqlite-unrecorded``: the notes of the history in ``history``."""
    path = history_path(history)
    return path.with_name(path.name + SUFFIX)


def _state(results: Path) -> list[list[Any]]:
    """How the results directory and the files a record keeps look now (file id, time,
    size): a directory written anew, or a file rewritten, looks different."""
    out: list[list[Any]] = []
    for name in ("", *RESULT_FILES, *EXTRA_FILES):
        try:
            st = (results / name).stat() if name else results.stat()
        except OSError:
            out.append([name])
            continue
        out.append([name, st.st_ino, st.st_mtime_ns, st.st_size])
    return out


def begin(
    results: str | Path, command: str, history: str | Path, git_folder: str | Path | None = None
) -> Pending:
    """Leave the note of a run that will write ``results`` and record it in ``history``
    (a folder where no note can be written leaves none: :func:`finish` still records)."""
    where = Path(results).resolve()
    pending = Pending(
        uid=uuid.uuid4().hex,
        results=str(where),
        command=command,
        git=git_state(git_folder),
        started_at=datetime.now(UTC).isoformat(timespec="seconds"),
        before=_state(where),
        pid=os.getpid(),
        history=str(history),
    )
    try:
        _new_folder(history_path(history).parent)
        _write_note(pending)
    except OSError:
        pass  # recorded at its end all the same (where the store names what is wrong)
    return pending


def _write_note(pending: Pending) -> None:
    """The note, whole or not at all (a temporary name, synced, then renamed)."""
    note = pending.note
    note.parent.mkdir(exist_ok=True)
    tmp = note.with_suffix(".tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(json.dumps(asdict(pending), indent=1))
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, note)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        raise


def drop(pending: Pending) -> None:
    """Remove a note (its run recorded, or given up)."""
    with contextlib.suppress(OSError):
        pending.note.unlink(missing_ok=True)


def finish(pending: Pending, store: HistoryStore | None = None) -> RunRecord:
    """Record the run of ``pending`` under its uid (once, however often it is called),
    then remove its note."""
    kept = record(
        pending.results,
        command=pending.command,
        history=store if store is not None else pending.history,
        git=pending.git,
        uid=pending.uid,
    )
    drop(pending)
    return kept


def _read(note: Path, history: str | Path) -> Pending | None:
    try:
        body = json.loads(note.read_text(encoding="utf-8"))
        return Pending(**{**body, "history": str(history)})
    except (OSError, ValueError, TypeError):
        return None


def recover(history: str | Path) -> list[RunRecord]:
    """Record the runs whose commands were killed after writing complete results and
    before recording them; drop the notes of runs killed before their results were
    written. A run whose command still runs, or whose results another command is
    writing, is left for later. The records made, oldest note first."""
    folder = notes_folder(history)
    if not folder.is_dir():
        return []
    notes = [(n, _read(n, history)) for n in folder.glob("*.json") if n.stem.isalnum()]
    found = sorted((p.started_at, n.name, p) for n, p in notes if p is not None)
    for note, pending in notes:
        if pending is None:  # cut short while written: it names no run
            with contextlib.suppress(OSError):
                note.unlink()
    kept: list[RunRecord] = []
    for _, _, pending in found:
        if pending.pid != os.getpid() and pid_alive(pending.pid):
            continue  # its command still runs and records its run itself
        where = Path(pending.results)
        if _state(where) == pending.before:
            drop(pending)  # killed before its results were written
            continue
        try:
            Results(where)
        except InputError:
            drop(pending)  # incomplete or gone: nothing complete to record
            continue
        try:
            with results_lock(where, wait_s=0):  # never waits for another command
                kept.append(finish(pending))
        except InputError:
            continue  # another command is writing its results: next time
    return kept

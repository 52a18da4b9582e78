"""Run history: every search, evaluation and grading run kept in one SQLite file.

``ragmeter search``, ``evaluate`` and ``grade`` each record their run here
(:func:`record`, also the notebook's way in): the results directory's summary,
per-question scores, config, questions and ``measurement`` record, with the git
commit, branch and dirty state of the working tree, and the time. The file is
``history.sqlite`` in ``.ragmeter/`` beside ``ragmeter.toml`` (or in the
current folder); ``[history] path`` moves it, ``[history] enabled = false``,
``--no-history`` or ``RAGMETER_HISTORY=off`` turns recording off, and
``RAGMETER_HISTORY=FOLDER`` points everything at another folder.

Each record is one transaction (WAL, busy timeout: :class:`ragmeter.files.sqlite.SQLiteStore`),
so several writers at once and a writer killed mid-record lose or half-write
nothing. A file that is not a run history (other tables, another
``application_id``, a newer schema) is refused, never changed.

The trend across runs and the paired changes are :mod:`ragmeter.history.trend`.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import tomllib
import uuid
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from hashlib import blake2b
from pathlib import Path
from typing import Any

from ragmeter import __version__
from ragmeter.errors import CacheError, InputError, RagmeterError
from ragmeter.files.outputs import results_lock
from ragmeter.files.sqlite import SQLiteStore
from ragmeter.history.integrity import (
    APPLICATION_ID,
    SCHEMA_VERSION,
    _check_header,
    _open_error,
    _read_error,
    _refuse_foreign,
    damaged,
)
from ragmeter.runs.meta import RunMeta
from ragmeter.runs.results import Results

__all__ = [
    "HistoryStore",
    "RunRecord",
    "git_state",
    "locate",
    "open_history",
    "record",
    "scores_digest_of",
]

FILE_NAME = "history.sqlite"
DEFAULT_DIR = ".ragmeter"
ENV = "RAGMETER_HISTORY"
_OFF = ("off", "0", "false", "no")

RESULT_FILES = ("config.toml", "meta.json", "scores.json", "summary.json", "questions.jsonl")
"""The files of a results directory a record keeps (those ``Results`` and the gate read)."""
EXTRA_FILES = ("answers/meta.json",)
"""Kept too when present (a graded run)."""

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS runs (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        uid TEXT NOT NULL UNIQUE,
        recorded_at TEXT NOT NULL,
        command TEXT NOT NULL,
        results TEXT NOT NULL,
        git_commit TEXT NOT NULL DEFAULT '',
        git_branch TEXT NOT NULL DEFAULT '',
        git_dirty INTEGER,
        metric TEXT NOT NULL,
        systems TEXT NOT NULL,
        metrics TEXT NOT NULL,
        questions INTEGER NOT NULL,
        measurement TEXT NOT NULL,
        scores_digest TEXT NOT NULL,
        version TEXT NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS run_files (
        run INTEGER NOT NULL REFERENCES runs(id),
        name TEXT NOT NULL,
        data BLOB NOT NULL,
        PRIMARY KEY (run, name)
    )""",
    "CREATE INDEX IF NOT EXISTS runs_branch ON runs (git_branch)",
    "CREATE INDEX IF NOT EXISTS runs_commit ON runs (git_commit)",
)

_COLUMNS = (
    "id, uid, recorded_at, command, results, git_commit, git_branch, git_dirty, metric, "
    "systems, metrics, questions, measurement, scores_digest, version"
)


@dataclass(frozen=True)
class RunRecord:
    """One recorded run: when, what (command, results directory), at which commit, and
    what it measured (``measurement`` as ``meta.json`` holds it)."""

    id: int
    uid: str
    recorded_at: str
    command: str
    results: str
    commit: str
    branch: str
    dirty: bool | None
    metric: str
    systems: tuple[str, ...]
    metrics: tuple[str, ...]
    questions: int
    measurement: dict[str, Any]
    scores_digest: str
    version: str

    @property
    def label(self) -> str:
        """``#3 abc1234`` (``+`` when the tree was dirty), or ``#3`` without git."""
        if not self.commit:
            return f"#{self.id}"
        return f"#{self.id} {self.commit[:7]}{'+' if self.dirty else ''}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "uid": self.uid,
            "recorded_at": self.recorded_at,
            "command": self.command,
            "results": self.results,
            "commit": self.commit,
            "branch": self.branch,
            "dirty": self.dirty,
            "metric": self.metric,
            "systems": list(self.systems),
            "metrics": list(self.metrics),
            "questions": self.questions,
            "measurement": self.measurement,
            "version": self.version,
        }

    @classmethod
    def _from_row(cls, row: Sequence[Any]) -> RunRecord:
        (rid, uid, at, command, results, commit, branch, dirty, metric, systems, metrics, n) = row[
            :12
        ]
        measurement, digest, version = row[12:]
        return cls(
            int(rid),
            uid,
            at,
            command,
            results,
            commit,
            branch,
            None if dirty is None else bool(dirty),
            metric,
            tuple(json.loads(systems)),
            tuple(json.loads(metrics)),
            int(n),
            json.loads(measurement),
            digest,
            version,
        )


# --- where the history lives -----------------------------------------------------------------


def _history_table(config: Path) -> dict[str, Any]:
    """``[history]`` of a config file, type-checked (``{}`` when absent)."""
    try:
        raw = tomllib.loads(config.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise InputError(f"{config}: cannot read the config ({exc})") from None
    body = raw.get("history", {})
    if not isinstance(body, dict):
        raise InputError(f"{config}: history must be a [history] table, got {body!r}")
    for key, kind in (("path", str), ("enabled", bool)):
        if key in body and not isinstance(body[key], kind):
            want = "a string" if kind is str else "true or false"
            raise InputError(f"{config}: [history] {key} must be {want}, got {body[key]!r}")
    return body


def locate(
    config: str | Path | None = None, *, cwd: str | Path | None = None, recording: bool = False
) -> Path | None:
    """The history folder: ``$RAGMETER_HISTORY``, else ``[history] path`` of the config
    (relative to its folder), else ``.ragmeter`` beside the config, else in ``cwd``.

    ``config`` defaults to ``ragmeter.toml`` in ``cwd`` when there is one. With
    ``recording``, ``None`` when recording is off (``RAGMETER_HISTORY=off`` or
    ``[history] enabled = false``).
    """
    here = Path(cwd) if cwd is not None else Path.cwd()
    env = os.environ.get(ENV, "").strip()
    if config is None and (here / "ragmeter.toml").is_file():
        config = here / "ragmeter.toml"
    body = _history_table(Path(config)) if config is not None and Path(config).is_file() else {}
    if recording and (env.lower() in _OFF or body.get("enabled") is False):
        return None
    if env and env.lower() not in _OFF:
        return Path(env)
    base = Path(config).resolve().parent if config is not None else here
    if body.get("path"):
        return base / body["path"]
    return base / DEFAULT_DIR


def history_file(folder: str | Path) -> Path:
    p = Path(folder)
    return p if p.suffix in (".sqlite", ".db") else p / FILE_NAME


def history_path(folder: str | Path) -> Path:
    """The history file of ``folder`` (:func:`history_file`); a file given as the folder that
    is not an ``.sqlite`` or ``.db`` file is refused on one line."""
    given = Path(folder)
    if given.is_file() and given.suffix not in (".sqlite", ".db"):
        raise InputError(
            f"{given}: is a file, not a run history folder; give the folder that holds "
            f"{FILE_NAME} (or that file itself) as --history"
        )
    return history_file(given)


# --- the store -------------------------------------------------------------------------------


class HistoryStore:
    """The run history file in ``folder`` (``history.sqlite``; a path ending in
    ``.sqlite`` is the file itself). ``create=False`` refuses a missing file instead
    of making one."""

    def __init__(self, folder: str | Path, *, create: bool = True) -> None:
        self.path = history_path(folder)
        if not self.path.is_file():
            if not create:
                raise InputError(
                    f"{self.path}: no run history here yet; `ragmeter search`, `evaluate` "
                    f"and `grade` record their runs (or give --history FOLDER)"
                )
            _new_folder(self.path.parent)
        _check_header(self.path)
        try:
            self.store = SQLiteStore(self.path, _SCHEMA, what="run history")
        except RagmeterError as exc:
            raise _open_error(self.path, exc) from None
        try:
            self._claim()
        except BaseException:
            self.store.close()
            raise

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        """All rows of one statement; a damaged or unreadable file is one line."""
        try:
            return self.store.query(sql, params)
        except sqlite3.DatabaseError as exc:
            raise _read_error(self.path, exc) from None

    def _claim(self) -> None:
        """Mark a new file as a run history; refuse one that is another's or newer."""
        ((app,),) = self._query("PRAGMA application_id")
        ((version,),) = self._query("PRAGMA user_version")
        if app == 0 and version == 0:
            try:
                with self.store.batch() as conn:  # a new file: mark it, once
                    app = conn.execute("PRAGMA application_id").fetchone()[0]
                    version = conn.execute("PRAGMA user_version").fetchone()[0]
                    if app == 0 and version == 0:
                        conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                        return
            except CacheError as exc:
                raise _open_error(self.path, exc) from None
        _refuse_foreign(self.path, app, version)

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> HistoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writing

    def add(
        self,
        files: dict[str, bytes],
        *,
        command: str,
        results: str,
        git: dict[str, Any],
        recorded_at: str | None = None,
        uid: str | None = None,
    ) -> RunRecord:
        """Keep one run (its results files by name) in one transaction; return its record.

        A ``uid`` already recorded adds nothing: its record is returned (a run recorded
        again after its command was killed, or by two commands at once, is kept once)."""
        scores = _json_of(files, "scores.json")
        summary = _json_of(files, "summary.json")
        meta = RunMeta.from_json(_json_of(files, "meta.json"))
        at = recorded_at or datetime.now(UTC).isoformat(timespec="seconds")
        row = (
            uid or uuid.uuid4().hex,
            at,
            command,
            results,
            git.get("commit") or "",
            git.get("branch") or "",
            None if git.get("dirty") is None else int(bool(git["dirty"])),
            str(summary.get("metric") or (scores.get("metrics") or [""])[0]),
            json.dumps([str(s) for s in scores.get("systems", [])]),
            json.dumps(list(scores.get("metrics", []))),
            len(scores.get("questions", [])),
            json.dumps(dict(meta.measurement), sort_keys=True),
            scores_digest_of(files["scores.json"]),
            __version__,
        )
        try:
            with self.store.batch() as conn:
                run_id = _insert(conn, row, files)
        except CacheError as exc:
            raise _open_error(self.path, exc) from None
        return self.get(run_id)  # after the transaction: its lock is not re-entrant

    # -- reading

    def runs(
        self,
        *,
        system: str | None = None,
        metric: str | None = None,
        branch: str | None = None,
    ) -> list[RunRecord]:
        """Every recorded run, oldest first, holding ``system`` and ``metric`` and made on
        ``branch`` when given."""
        sql = f"SELECT {_COLUMNS} FROM runs"
        params: tuple[Any, ...] = ()
        if branch is not None:
            sql, params = sql + " WHERE git_branch = ?", (branch,)
        out = [self._record(r) for r in self._query(sql + " ORDER BY id", params)]
        return [
            r
            for r in out
            if (system is None or system in r.systems) and (metric is None or metric in r.metrics)
        ]

    def get(self, run_id: int) -> RunRecord:
        rows = self._query(f"SELECT {_COLUMNS} FROM runs WHERE id = ?", (int(run_id),))
        if not rows:
            raise InputError(
                f"{self.path}: no run {run_id} in the history; `ragmeter history list` "
                f"shows the runs"
            )
        return self._record(rows[0])

    def _record(self, row: Sequence[Any]) -> RunRecord:
        try:
            return RunRecord._from_row(row)
        except (ValueError, TypeError, KeyError) as exc:
            raise damaged(self.path, f"run {row[0]}'s fields do not read: {exc}") from None

    def files(self, run_id: int) -> dict[str, bytes]:
        """The results files kept with run ``run_id``, by name."""
        rows = self._query(
            "SELECT name, data FROM run_files WHERE run = ? ORDER BY name", (int(run_id),)
        )
        return {name: self._unpack(run_id, name, data) for name, data in rows}

    def run_meta(self, run_id: int) -> RunMeta:
        """A run's kept ``meta.json`` (:class:`ragmeter.runs.meta.RunMeta`; an empty record,
        every field at its default, when it was not kept)."""
        return RunMeta.from_json(self.file_json(run_id, "meta.json"))

    def file_json(self, run_id: int, name: str) -> dict[str, Any]:
        """One kept JSON file of a run (``{}`` when it was not kept)."""
        rows = self._query(
            "SELECT data FROM run_files WHERE run = ? AND name = ?", (int(run_id), name)
        )
        if not rows:
            return {}
        try:
            obj = json.loads(self._unpack(run_id, name, rows[0][0]))
        except ValueError as exc:
            raise damaged(self.path, f"run {run_id}'s {name} does not read: {exc}") from None
        if not isinstance(obj, dict):
            raise damaged(self.path, f"run {run_id}'s {name} is not a JSON object")
        return obj

    def _unpack(self, run_id: int, name: str, data: Any) -> bytes:
        try:
            return zlib.decompress(data)
        except (zlib.error, TypeError) as exc:
            raise damaged(self.path, f"run {run_id}'s {name} does not read: {exc}") from None


def _insert(conn: sqlite3.Connection, row: tuple[Any, ...], files: dict[str, bytes]) -> int:
    """Insert one run and its files; a uid already recorded inserts nothing. Its id."""
    seen = conn.execute("SELECT id FROM runs WHERE uid = ?", (row[0],)).fetchone()
    if seen is not None:
        return int(seen[0])
    cur = conn.execute(
        f"INSERT INTO runs ({_COLUMNS.removeprefix('id, ')}) VALUES ({', '.join('?' * len(row))})",
        row,
    )
    run_id = int(cur.lastrowid or 0)
    for name, data in files.items():
        conn.execute(
            "INSERT INTO run_files (run, name, data) VALUES (?, ?, ?)", (run_id, name, _pack(data))
        )
    return run_id


def scores_digest_of(data: bytes) -> str:
    """The digest a record keeps of a results directory's ``scores.json`` (its bytes)."""
    return blake2b(data, digest_size=16).hexdigest()


def _pack(data: bytes) -> bytes:
    return zlib.compress(data, 6)


def _json_of(files: dict[str, bytes], name: str) -> dict[str, Any]:
    try:
        obj = json.loads(files[name])
    except KeyError:
        raise InputError(f"{name}: missing; the results directory is incomplete") from None
    except ValueError as exc:
        raise InputError(f"{name}: not valid JSON ({exc}); run the search again") from None
    if not isinstance(obj, dict):
        raise InputError(f"{name}: expected a JSON object; run the search again")
    return obj


def _new_folder(folder: Path) -> None:
    """Make the history folder; a new default ``.ragmeter`` keeps itself out of git."""
    existed = folder.is_dir()
    folder.mkdir(parents=True, exist_ok=True)
    if not existed and folder.name == DEFAULT_DIR:
        try:
            (folder / ".gitignore").write_text("*\n", encoding="utf-8")  # a folder ragmeter made
        except OSError:
            pass


def open_history(
    history: str | Path | HistoryStore | None = None,
    *,
    config: str | Path | None = None,
    create: bool = False,
) -> HistoryStore:
    """A :class:`HistoryStore`: the one given, the folder given, or the one :func:`locate`
    finds (``RAGMETER_HISTORY=off`` does not hide it from reading)."""
    if isinstance(history, HistoryStore):
        return history
    folder = Path(history) if history is not None else locate(config)
    assert folder is not None
    return HistoryStore(folder, create=create)


# --- recording -------------------------------------------------------------------------------


def git_state(folder: str | Path | None = None) -> dict[str, Any]:
    """Commit, branch and dirty state of the git working tree holding ``folder``
    (``{"commit": "", "branch": "", "dirty": None}`` without git or a repository).

    Dirty means a tracked file differs from the commit (untracked files, such as
    results, do not count). A detached HEAD takes its branch from CI's variables
    (``GITHUB_HEAD_REF``, ``GITHUB_REF_NAME``, ``CI_COMMIT_REF_NAME``) when set.
    """
    where = str(folder) if folder is not None else None
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}

    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(
                ["git", *args],
                cwd=where,
                env=env,
                capture_output=True,
                text=True,
                timeout=20,
                check=False,
            )
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    commit = git("rev-parse", "--verify", "-q", "HEAD")
    if not commit:
        return {"commit": "", "branch": "", "dirty": None}
    branch = git("rev-parse", "--abbrev-ref", "HEAD") or ""
    if branch == "HEAD":
        branch = next(
            (
                os.environ[v]
                for v in ("GITHUB_HEAD_REF", "GITHUB_REF_NAME", "CI_COMMIT_REF_NAME")
                if os.environ.get(v)
            ),
            "",
        )
    status = git("status", "--porcelain", "--untracked-files=no")
    return {"commit": commit, "branch": branch, "dirty": None if status is None else bool(status)}


def read_results_files(results_dir: str | Path) -> dict[str, bytes]:
    """The files of a results directory a record keeps, read under its lock (no search
    replaces it meanwhile) and checked by reading it as :class:`ragmeter.runs.results.Results`."""

    Results(results_dir)  # a results directory, or a one-line error before any lock
    with results_lock(results_dir):
        res = Results(results_dir)
        out = {}
        for name in (*RESULT_FILES, *EXTRA_FILES):
            path = res.path / name
            if path.is_file():
                out[name] = path.read_bytes()
    return out


def record(
    results_dir: str | Path,
    *,
    command: str = "record",
    history: str | Path | HistoryStore | None = None,
    config: str | Path | None = None,
    git_folder: str | Path | None = None,
    git: dict[str, Any] | None = None,
    uid: str | None = None,
) -> RunRecord:
    """Keep the run in ``results_dir`` in the run history; return its record.

    ``history`` is a folder (default: :func:`locate` from ``config``); recording is
    explicit here, so ``[history] enabled`` is not consulted. The git state is ``git``
    when given, else that of ``git_folder`` (default: the config's folder, else the
    current folder). A ``uid`` already recorded is not recorded again (``HistoryStore.add``).
    """
    files = read_results_files(results_dir)
    if git_folder is None and config is not None:
        git_folder = Path(config).resolve().parent
    if git is None:
        git = git_state(git_folder)
    store = open_history(history, config=config, create=True)
    try:
        where = str(Path(results_dir).resolve())
        return store.add(files, command=command, results=where, git=git, uid=uid)
    finally:
        if store is not history:
            store.close()


def record_if_enabled(
    results_dir: str | Path, command: str, config: str | Path | None = None
) -> RunRecord | None:
    """What the CLI commands call: :func:`record` unless recording is off (``None``)."""
    folder = locate(config, recording=True)
    if folder is None:
        return None
    return record(results_dir, command=command, history=folder, config=config)

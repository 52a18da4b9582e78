"""One SQLite file in write-ahead-log mode: the storage under both caches.

The reply cache (:mod:`ragmeter.llm.cache`) and the embedding cache
(:mod:`ragmeter.retrieval.embedcache`) keep their entries in an
:class:`SQLiteStore`:

- WAL journal with ``synchronous=NORMAL``: a committed batch survives a killed
  process, and readers never block the writer;
- a busy timeout, so several processes can share one file (SQLite serialises
  their writes);
- one connection behind a lock, so threads can share the store;
- autocommit outside :meth:`SQLiteStore.batch`, one transaction inside it, so
  each batch is committed on its own and a run killed between batches leaves
  every earlier batch readable.
"""

from __future__ import annotations

import errno
import os
import re
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from ragmeter.errors import CacheError, InputError

T = TypeVar("T")

_TABLE = re.compile(r"CREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?[\"`]?(\w+)", re.IGNORECASE)

__all__ = ["SQLiteStore", "cache_file", "names_file"]

_NOT_A_DATABASE = 26  # SQLITE_NOTADB
_NOT_OURS = frozenset({_NOT_A_DATABASE, 11})  # and SQLITE_CORRUPT: the file is something else


def _cannot_open(path: str, what: str, exc: BaseException) -> str:
    """Why a store cannot be opened, naming a read-only file or folder as what to fix
    (SQLite writes its journal beside the file), else SQLite's own words."""
    file, folder = Path(path), Path(path).parent
    if file.exists() and not os.access(file, os.W_OK):
        why = "the file is read-only; make it writable (chmod u+w)"
    elif folder.is_dir() and not os.access(folder, os.W_OK):
        why = f"{folder} is read-only, and SQLite writes its journal beside the file"
    else:
        why = str(exc)
    return f"cannot open {what} {path}: {why}"


def _refuse_loop(path: Path, what: str) -> None:
    """A path through a symbolic link that loops (or a chain too long to follow) is
    one line naming the link, not SQLite's or mkdir's "File exists"."""
    for part in (path, *path.parents):
        if not os.path.islink(part):
            continue
        try:
            os.stat(part)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise InputError(
                    f"{part}: is a symbolic link that loops back on itself, so the {what} "
                    f"{path} cannot be opened; point the link at a folder, or give another path"
                ) from None


class SQLiteStore:
    """The SQLite file at ``path`` (``":memory:"`` keeps it in memory), opened in WAL mode.

    ``schema`` statements run once on opening (``CREATE TABLE IF NOT EXISTS
    ...``). ``what`` names the store in error messages. Failing to open raises
    :class:`~ragmeter.errors.CacheError`.
    """

    def __init__(
        self,
        path: str | Path,
        schema: Sequence[str] = (),
        *,
        timeout_s: float = 30.0,
        what: str = "cache",
    ) -> None:
        self.path = str(path)
        # a file this store creates and leaves empty is removed again on close
        self._created = self.path != ":memory:" and not Path(self.path).exists()
        self.what = what
        self.lock = threading.Lock()
        if self.path != ":memory:":
            _refuse_loop(Path(self.path), what)
        try:
            if self.path != ":memory:":
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            self.conn = sqlite3.connect(
                self.path, timeout=timeout_s, isolation_level=None, check_same_thread=False
            )
            self.conn.execute(f"PRAGMA busy_timeout = {int(timeout_s * 1000)}")
            self._check_ours(schema)
            self.journal_mode = _retry_locked(
                lambda: self.conn.execute("PRAGMA journal_mode = WAL").fetchone()[0], timeout_s
            )
            # NORMAL is crash-safe in WAL mode: a killed process loses no committed batch;
            # only a power cut may lose the last commits, never corrupt the file
            self.conn.execute("PRAGMA synchronous = NORMAL")
            if schema:
                _retry_locked(lambda: self._create(schema), timeout_s)
        except (OSError, sqlite3.Error) as exc:
            raise CacheError(_cannot_open(self.path, what, exc)) from None

    def _check_ours(self, schema: Sequence[str]) -> None:
        """Refuse an existing database that is not this store's (before anything is written).

        It must hold no tables, or only tables ``schema`` creates: a database of
        the user's given as ``--cache`` is never changed.
        """
        ours = {m.group(1).lower() for st in schema if (m := _TABLE.search(st))}
        if self.path == ":memory:" or not ours:
            return
        try:
            rows = self.conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            ).fetchall()
        except sqlite3.DatabaseError as exc:
            self.conn.close()
            if getattr(exc, "sqlite_errorcode", _NOT_A_DATABASE) & 0xFF not in _NOT_OURS:
                raise CacheError(_cannot_open(self.path, self.what, exc)) from None
            raise InputError(
                f"{self.path}: is not a {self.what} ({exc}); give another path, "
                f"or move the file away"
            ) from None
        foreign = sorted(name for (name,) in rows if name.lower() not in ours)
        if foreign:
            self.conn.close()
            raise InputError(
                f"{self.path}: is an SQLite database that is not a ragmeter {self.what} "
                f"(it holds table {', '.join(foreign[:3])}); give another path, "
                f"or move the file away"
            )

    def _create(self, schema: Sequence[str]) -> None:
        with self.lock:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                for statement in schema:
                    self.conn.execute(statement)
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            self.conn.execute("COMMIT")

    @contextmanager
    def batch(self) -> Iterator[sqlite3.Connection]:
        """One transaction, committed on leaving (rolled back on an error), under the lock.

        A database error while writing raises :class:`~ragmeter.errors.CacheError`.
        """
        with self.lock:
            try:
                self.conn.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise CacheError(f"cannot write {self.what} {self.path}: {exc}") from None
            try:
                yield self.conn
            except sqlite3.Error as exc:
                self.conn.execute("ROLLBACK")
                raise CacheError(f"cannot write {self.what} {self.path}: {exc}") from None
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            try:
                self.conn.execute("COMMIT")
            except sqlite3.Error as exc:
                raise CacheError(f"cannot write {self.what} {self.path}: {exc}") from None

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        """All rows of one statement, under the lock."""
        with self.lock:
            return self.conn.execute(sql, params).fetchall()

    def close(self) -> None:
        """Close the file; one this store created that still holds no row is removed
        (a run that failed before its first reply leaves no empty cache behind)."""
        with self.lock:
            empty = self._created and self._holds_nothing()
            self.conn.close()
        if empty:
            for suffix in ("", "-wal", "-shm"):
                Path(self.path + suffix).unlink(missing_ok=True)

    def _holds_nothing(self) -> bool:
        try:
            tables = self.conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            ).fetchall()
            rows = (self.conn.execute(f'SELECT 1 FROM "{n}" LIMIT 1').fetchone() for (n,) in tables)
            return not any(rows)
        except sqlite3.Error:
            return False

    def __enter__(self) -> SQLiteStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"SQLiteStore({self.path!r})"


def _retry_locked(step: Callable[[], T], timeout_s: float) -> T:
    """Run ``step``, retrying while SQLite says the file is locked.

    Two processes opening one new file at once can both ask for WAL mode; SQLite
    answers one of them "database is locked" at once, without its busy handler, so
    the open is retried for up to ``timeout_s`` seconds.
    """
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            return step()
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


_OFF = ("off", "0", "false", "no", "none")


def names_file(path: Path) -> bool:
    """Whether a cache path names the SQLite file itself (``.sqlite3``, ``.sqlite`` or
    ``.db``) rather than a folder to keep it in."""
    return path.suffix in (".sqlite3", ".sqlite", ".db")


def cache_file(env: str, folder: str, db_name: str) -> tuple[Path | None, bool]:
    """Where a cache's SQLite file lives, and whether the user named it: ``$env`` (a
    folder, or a file ending in ``.sqlite3``, ``.sqlite`` or ``.db``; ``off`` turns the
    cache off: ``(None, True)``), else ``$XDG_CACHE_HOME/ragmeter/<folder>`` (default
    ``~/.cache/ragmeter/<folder>``), file ``db_name``. ``$env`` naming a file of another
    kind is an :class:`InputError`."""
    value = os.environ.get(env, "").strip()
    if value.lower() in _OFF:
        return None, True
    if value:
        p = Path(value).expanduser()
        if names_file(p):
            return p, True
        if p.exists() and not p.is_dir():
            raise InputError(
                f"${env} points at a file ({p}), not a folder: name a folder for the cache "
                f"(it keeps {db_name} there), a file ending in .sqlite3, or {env}=off"
            )
        return p / db_name, True
    root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return root / "ragmeter" / folder / db_name, False

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

import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ragmeter.errors import CacheError

__all__ = ["SQLiteStore"]


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
        self.what = what
        self.lock = threading.Lock()
        try:
            if self.path != ":memory:":
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            self.conn = sqlite3.connect(
                self.path, timeout=timeout_s, isolation_level=None, check_same_thread=False
            )
            self.conn.execute(f"PRAGMA busy_timeout = {int(timeout_s * 1000)}")
            self.journal_mode = self.conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            # NORMAL is crash-safe in WAL mode: a killed process loses no committed batch;
            # only a power cut may lose the last commits, never corrupt the file
            self.conn.execute("PRAGMA synchronous = NORMAL")
            if schema:
                with self.batch() as conn:
                    for statement in schema:
                        conn.execute(statement)
        except (OSError, sqlite3.Error) as exc:
            raise CacheError(f"cannot open {what} {self.path}: {exc}") from None

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
        with self.lock:
            self.conn.close()

    def __enter__(self) -> SQLiteStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"SQLiteStore({self.path!r})"

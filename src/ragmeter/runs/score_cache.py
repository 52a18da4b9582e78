"""Each run file's scores on disk, so that ``evaluate`` never scores an unchanged run twice.

``ragmeter evaluate`` stores a run's :class:`~ragmeter.scoring.trec.Evaluation` (its
per-query scores and kept top documents) as soon as the run is scored. A run that is
killed keeps every run it finished, and the next ``evaluate`` scores only the rest; a
second ``evaluate`` of the same files with other statistics (``--rounds``, ``--metric``,
``--baseline``, ``--adjust``) scores nothing. The results are the same bit for bit.

An entry is keyed by SHA-256 of: :data:`FORMAT`, ragmeter's version, the run file and the
qrels file as the file system names them (resolved path, size, modification time in
nanoseconds), how they are scored (measures, relevance level, gain, ideal, trec_eval's
mode) and the documents kept per query. A file rewritten, or scored another way, is a new
key; nothing is read from a run file's content to check it, as ``make`` and ``rsync``
decide.

Storage is one SQLite file in write-ahead-log mode (:class:`ragmeter.files.sqlite.SQLiteStore`,
as the other caches), one transaction a run. Where it lives: ``$RAGMETER_SCORE_CACHE`` (a
folder, or a file ending in ``.sqlite3``, ``.sqlite`` or ``.db``; ``off`` turns it off), else
``$XDG_CACHE_HOME/ragmeter/scores`` (default ``~/.cache/ragmeter/scores``), file
:data:`DB_NAME`. A file there that is not this cache is refused with a one-line error and
never changed. Where the default folder cannot be used (a read-only home), ``evaluate``
goes on without it; a place named in ``$RAGMETER_SCORE_CACHE`` must work. A damaged entry
is a miss: that run is scored again and its entry replaced.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import sqlite3
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ragmeter import __version__
from ragmeter.errors import CacheError, InputError
from ragmeter.files.sqlite import SQLiteStore, cache_file
from ragmeter.scoring.trec import Evaluation, Matrix

__all__ = ["DB_NAME", "ENV", "FORMAT", "ScoreCache", "configured_path", "open_cache", "run_key"]

ENV = "RAGMETER_SCORE_CACHE"
DB_NAME = "scores.sqlite3"
FORMAT = 1  # bump when what an entry holds, or how a run is scored, changes
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS run_scores (key BLOB PRIMARY KEY, evaluation BLOB NOT NULL)",
    "CREATE TABLE IF NOT EXISTS score_cache_meta (name TEXT PRIMARY KEY, value TEXT)",
    f"INSERT OR IGNORE INTO score_cache_meta VALUES ('format', '{FORMAT}')",
)


def configured_path() -> tuple[Path | None, bool]:
    """The cache file and whether the user named it: ``(None, True)`` when
    ``$RAGMETER_SCORE_CACHE`` turns the cache off (:func:`ragmeter.files.sqlite.cache_file`)."""
    return cache_file(ENV, "scores", DB_NAME)


def _file_identity(path: str | Path) -> list[Any]:
    st = os.stat(path)
    return [str(Path(path).resolve()), st.st_size, st.st_mtime_ns]


def run_key(run: str | Path, qrels: str | Path, scoring: Sequence[Any]) -> bytes | None:
    """The entry's key of ``run`` scored against ``qrels`` as ``scoring`` (plain values:
    the measures and every setting that changes a score); ``None`` when either file
    cannot be looked at (the scorer then says why)."""
    try:
        parts = [FORMAT, __version__, _file_identity(run), _file_identity(qrels), list(scoring)]
    except OSError:
        return None
    return hashlib.sha256(json.dumps(parts).encode("utf-8")).digest()


def pack(e: Evaluation) -> bytes:
    """``e`` as the bytes of one ``.npz`` (no pickled objects: lists travel as JSON)."""
    arrays = {f"score_{i}": v for i, v in enumerate(e.scores.values())}
    top = e.top
    meta: dict[str, Any] = {
        "name": e.name,
        "query_ids": e.query_ids,
        "measures": list(e.scores),
        "missing": e.missing,
        "unjudged": e.unjudged,
        "depth": e.depth,
        "top": None,
    }
    if top is not None:
        meta["top"] = {"unjudged": top.unjudged, "docs": top.docs is not None}
        arrays["top_grades"], arrays["top_missing"] = top.grades, top.missing
        if top.docs is not None:
            arrays["top_docs"], arrays["top_scores"] = top.docs, top.scores
    buf = io.BytesIO()
    np.savez(buf, meta=np.frombuffer(json.dumps(meta).encode("utf-8"), np.uint8), **arrays)
    return buf.getvalue()


def unpack(blob: object) -> Evaluation | None:
    """The :class:`Evaluation` :func:`pack` made, or ``None`` for a damaged entry."""
    try:
        with np.load(io.BytesIO(blob), allow_pickle=False) as z:  # type: ignore[arg-type]
            meta = json.loads(z["meta"].tobytes().decode("utf-8"))
            scores = {m: z[f"score_{i}"] for i, m in enumerate(meta["measures"])}
            top = None
            if meta["top"] is not None:
                docs = meta["top"]["docs"]
                top = Matrix(
                    z["top_grades"],
                    z["top_missing"],
                    list(meta["top"]["unjudged"]),
                    z["top_docs"] if docs else None,
                    z["top_scores"] if docs else None,
                )
        return Evaluation(
            str(meta["name"]),
            list(meta["query_ids"]),
            scores,
            list(meta["missing"]),
            list(meta["unjudged"]),
            int(meta["depth"]),
            top,
        )
    except (OSError, ValueError, KeyError, TypeError, EOFError, zipfile.BadZipFile):
        return None


class ScoreCache:
    """Run scores on disk keyed by :func:`run_key`.

    ``required``: a failure to open or write the file is a :class:`CacheError`; otherwise
    the cache turns itself off for the rest of the run, which goes on. A file that is not
    this cache is an :class:`InputError` either way.
    """

    def __init__(self, path: str | os.PathLike[str], required: bool = True) -> None:
        self.path = Path(path)
        self.required = required
        self.broken = ""  # why a cache that is not required turned itself off
        self.hits = 0  # runs read from the cache, not scored
        try:
            self._store: SQLiteStore | None = SQLiteStore(
                self.path, _SCHEMA, timeout_s=60.0, what="score cache"
            )
        except InputError as exc:  # not this cache: name the setting that moves or stops it
            raise InputError(f"{exc} (${ENV} names it; {ENV}=off runs without it)") from None
        fmt = self._store.query("SELECT value FROM score_cache_meta WHERE name = 'format'")
        if fmt != [(str(FORMAT),)]:  # a later ragmeter's file: leave it alone
            self._turn_off(
                f"it is in format {fmt[0][0] if fmt else '?'}, this ragmeter reads {FORMAT}"
            )

    def __repr__(self) -> str:
        return f"ScoreCache({str(self.path)!r})"

    def _turn_off(self, why: str) -> None:
        message = f"score cache {self.path}: {why}; set {ENV}=off to run without it"
        self.close()
        if self.required:
            raise CacheError(message)
        self.broken = message

    def get(self, key: bytes | None) -> Evaluation | None:
        """The stored scores of ``key``; ``None`` when absent or damaged."""
        if self._store is None or key is None:
            return None
        try:
            rows = self._store.query("SELECT evaluation FROM run_scores WHERE key = ?", (key,))
        except sqlite3.DatabaseError as exc:
            self._turn_off(f"cannot be read ({exc})")
            return None
        found = unpack(rows[0][0]) if rows else None
        self.hits += found is not None
        return found

    def put(self, key: bytes | None, e: Evaluation) -> None:
        """Store ``e`` under ``key`` in one transaction."""
        if self._store is None or key is None:
            return
        try:
            with self._store.batch() as conn:
                conn.execute("INSERT OR REPLACE INTO run_scores VALUES (?, ?)", (key, pack(e)))
        except CacheError as exc:
            self._turn_off(f"cannot be written ({str(exc).rpartition(': ')[2]})")

    def count(self) -> int:
        """Entries held."""
        if self._store is None:
            return 0
        return self._store.query("SELECT COUNT(*) FROM run_scores")[0][0]

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None

    def __enter__(self) -> ScoreCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_cache() -> ScoreCache | None:
    """The configured cache, opened; ``None`` when it is off, or where the default folder
    cannot be used (a place named in ``$RAGMETER_SCORE_CACHE`` must work)."""
    path, named = configured_path()
    if path is None:
        return None
    try:
        return ScoreCache(path, required=named)
    except CacheError:
        if named:
            raise
        return None

"""Sentence starts on disk, so that a second run over an unchanged corpus segments nothing.

An entry is one document's sentence starts (character offsets into the text, as
:func:`ragmeter.chunking.strategies.prepare_sentences` finds them), keyed by the SHA-256 of the
text and by the *segmenter key*: the segmenter's name and version, syntok's version (syntok
splits the paragraphs for both segmenters) and :data:`FORMAT`, ragmeter's own version of how it
reads paragraphs and sentences. A new release of either library, or of that code, never reads an
entry of the old one. Only what the segmenter decided is stored; words, chunks and everything
after them are computed again from the text, so cached and fresh runs are the same bit for bit.

Storage is one SQLite file in write-ahead-log mode (:class:`ragmeter.files.sqlite.SQLiteStore`, as
the embedding and reply caches): each round of segmented documents is committed in one
transaction, so a run killed at any moment leaves a valid file holding every round committed
before, and the next run segments only the rest. Several processes may share the file (SQLite
serialises their writes; two runs that segment the same document store the same starts). Only
the run's own process writes it: worker processes and Ray tasks segment, the run stores.

Where it lives: ``$RAGMETER_SEGMENT_CACHE`` (a folder, or a file ending in ``.sqlite3``,
``.sqlite`` or ``.db``; ``off`` turns the cache off), else
``$XDG_CACHE_HOME/ragmeter/segments`` (default ``~/.cache/ragmeter/segments``), file
:data:`DB_NAME`. A file there that is not this cache (another SQLite database, or not SQLite
at all) is refused with a one-line error and never changed. Where the default folder cannot be
created or written (a read-only home), runs go on without the cache; a folder named in
``$RAGMETER_SEGMENT_CACHE`` must work. A damaged entry is a miss: that document is segmented
again and its entry replaced.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from ragmeter.errors import CacheError, InputError
from ragmeter.files.sqlite import SQLiteStore, cache_file

__all__ = [
    "DB_NAME",
    "ENV",
    "FORMAT",
    "SegmentCache",
    "active",
    "configured_path",
    "run_cache",
    "segmenter_key",
    "text_key",
]

ENV = "RAGMETER_SEGMENT_CACHE"
DB_NAME = "segments.sqlite3"
# Bump when what ragmeter stores, or how it reads paragraphs and sentences from a segmenter
# (``_segment``: lone carriage returns, ICU's line ends, blingfire's offsets, trimming), changes.
FORMAT = 1
_LOOKUP_CHUNK = 500  # bound parameters per statement, well under SQLite's limits
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS sentence_starts ("
    " segmenter TEXT NOT NULL,"
    " key BLOB NOT NULL,"
    " n_chars INTEGER NOT NULL,"
    " starts BLOB NOT NULL,"
    " PRIMARY KEY (segmenter, key))",
    "CREATE TABLE IF NOT EXISTS segment_cache_meta (name TEXT PRIMARY KEY, value TEXT)",
    f"INSERT OR IGNORE INTO segment_cache_meta VALUES ('format', '{FORMAT}')",
)


def configured_path() -> tuple[Path | None, bool]:
    """The cache file and whether the user named it: ``(None, True)`` when
    ``$RAGMETER_SEGMENT_CACHE`` turns the cache off (:func:`ragmeter.files.sqlite.cache_file`)."""
    return cache_file(ENV, "segments", DB_NAME)


_VERSIONS: dict[str, str] = {}


def _version(package: str) -> str:
    if package not in _VERSIONS:
        from importlib.metadata import PackageNotFoundError, version

        try:
            _VERSIONS[package] = version(package)
        except PackageNotFoundError:
            _VERSIONS[package] = "unknown"
    return _VERSIONS[package]


def segmenter_key(segmenter: str) -> str:
    """What an entry of ``segmenter`` depends on besides the text, e.g.
    ``"syntok 1.4.4; syntok 1.4.4; ragmeter 1"``: the segmenter and its version (ICU's:
    icu4py's and the ICU library's, whose rules and data it carries), the paragraph
    splitter (syntok) and its version, and :data:`FORMAT`."""
    if segmenter == "icu":
        import icu4py

        own = f"icu4py {_version('icu4py')} ICU {icu4py.icu_version}"
    else:
        own = f"{segmenter} {_version(segmenter)}"
    return f"{own}; syntok {_version('syntok')}; ragmeter {FORMAT}"


def text_key(text: str) -> bytes:
    """SHA-256 of the text's exact UTF-8 bytes (lone surrogates passed through)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


class SegmentCache:
    """Sentence starts on disk keyed by ``(segmenter key, sha256(text))``.

    ``path`` is the database file. ``required``: a failure to open or write it is a
    :class:`~ragmeter.errors.CacheError` (otherwise the cache turns itself off for the rest of
    the run and the run goes on). A file that is not this cache is an
    :class:`~ragmeter.errors.InputError` either way.
    """

    def __init__(self, path: str | os.PathLike[str], required: bool = True) -> None:
        self.path = Path(path)
        self.required = required
        self.broken = ""  # why a cache that is not required turned itself off
        try:
            self._store: SQLiteStore | None = SQLiteStore(
                self.path, _SCHEMA, timeout_s=60.0, what="segmentation cache"
            )
        except InputError as exc:  # not this cache: name the setting that moves or stops it
            raise InputError(f"{exc} (${ENV} names it; {ENV}=off runs without it)") from None
        fmt = self._store.query("SELECT value FROM segment_cache_meta WHERE name = 'format'")
        if fmt != [(str(FORMAT),)]:  # a later ragmeter's file: leave it alone
            self._turn_off(
                f"it is in format {fmt[0][0] if fmt else '?'}, this ragmeter reads {FORMAT}"
            )

    def __repr__(self) -> str:
        return f"SegmentCache({str(self.path)!r})"

    def _turn_off(self, why: str) -> None:
        message = f"segmentation cache {self.path}: {why}; set {ENV}=off to run without it"
        if self.required:
            self.close()
            raise CacheError(message)
        self.broken = message
        self.close()

    def get(self, texts: Sequence[str], segmenter: str) -> dict[int, np.ndarray]:
        """The cached sentence starts of ``texts`` (by position in ``texts``) for
        ``segmenter``; texts not cached, or whose entry is damaged, are absent."""
        if self._store is None or not texts:
            return {}
        seg = segmenter_key(segmenter)
        keys = [text_key(t) for t in texts]
        where: dict[bytes, list[int]] = {}
        for i, k in enumerate(keys):
            where.setdefault(k, []).append(i)
        unique = list(where)
        found: dict[int, np.ndarray] = {}
        try:
            for at in range(0, len(unique), _LOOKUP_CHUNK):
                part = unique[at : at + _LOOKUP_CHUNK]
                rows = self._store.query(
                    "SELECT key, n_chars, starts FROM sentence_starts "
                    f"WHERE segmenter = ? AND key IN ({','.join('?' * len(part))})",
                    (seg, *part),
                )
                for key, n_chars, blob in rows:
                    for i in where.get(bytes(key), ()):
                        starts = _decode(blob, n_chars, len(texts[i]))
                        if starts is not None:
                            found[i] = starts
        except sqlite3.DatabaseError as exc:
            self._turn_off(f"cannot be read ({exc})")
            return {}
        return found

    def put(self, entries: Sequence[tuple[str, np.ndarray]], segmenter: str) -> None:
        """Store ``(text, sentence starts)`` pairs of ``segmenter`` in one transaction."""
        if self._store is None or not entries:
            return
        seg = segmenter_key(segmenter)
        rows = [
            (seg, text_key(t), len(t), np.ascontiguousarray(s, dtype="<i8").tobytes())
            for t, s in entries
        ]
        try:
            with self._store.batch() as conn:
                conn.executemany("INSERT OR REPLACE INTO sentence_starts VALUES (?, ?, ?, ?)", rows)
        except CacheError as exc:
            self._turn_off(f"cannot be written ({str(exc).rpartition(': ')[2]})")

    def count(self, segmenter: str | None = None) -> int:
        """Entries held (of one segmenter, with its current versions, or all)."""
        if self._store is None:
            return 0
        if segmenter is None:
            return self._store.query("SELECT COUNT(*) FROM sentence_starts")[0][0]
        sql = "SELECT COUNT(*) FROM sentence_starts WHERE segmenter = ?"
        return self._store.query(sql, (segmenter_key(segmenter),))[0][0]

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None

    def __enter__(self) -> SegmentCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _decode(blob: object, n_chars: object, length: int) -> np.ndarray | None:
    """An entry's starts, or ``None`` when it is damaged (not whole 64-bit integers, a
    different text length, or an offset outside the text)."""
    if not isinstance(blob, bytes) or n_chars != length or len(blob) % 8:
        return None
    starts = np.frombuffer(blob, dtype="<i8").astype(np.int64)
    if len(starts) and (starts.min() < 0 or starts.max() > length):
        return None
    return starts


# The cache of the runs in progress: opened on first use inside a run (a run without sentence
# strategies never creates the file), closed when the last run ends.
_LOCK = threading.Lock()
_RUNS = [0]  # runs in progress
_OPENED: list[SegmentCache] = []  # the cache they share, once opened


@contextmanager
def run_cache() -> Iterator[None]:
    """A run's scope: inside it :func:`active` gives the configured cache."""
    with _LOCK:
        _RUNS[0] += 1
    try:
        yield
    finally:
        with _LOCK:
            _RUNS[0] -= 1
            if not _RUNS[0]:
                while _OPENED:
                    _OPENED.pop().close()


def active() -> SegmentCache | None:
    """The configured cache when called inside a run (:func:`run_cache`), opened on first
    use; ``None`` outside a run, when it is off, or where the default folder cannot be used."""
    with _LOCK:
        if not _RUNS[0]:
            return None
        if not _OPENED:
            path, named = configured_path()
            if path is None:
                return None
            try:
                _OPENED.append(SegmentCache(path, required=named))
            except CacheError:
                if named:
                    raise
                return None  # the default folder cannot be used: run without the cache
        cache = _OPENED[0]
        return None if cache.broken else cache

"""An on-disk cache of text embeddings, keyed by (model id, sha256 of the text).

Re-chunking a corpus only embeds text that was never embedded before with the
same model, and a second run of the same configuration encodes nothing.

Storage is one SQLite database in write-ahead-log mode (``embeddings.sqlite3``
in the cache folder; see :mod:`ragmeter.files.sqlite`). Each vector is a little-endian
float32 blob. Every encoded batch is committed in its own transaction, so a run killed at any
moment leaves a valid database holding every batch committed before the kill;
the next run reads those and encodes only the rest. Several processes may share
one cache: SQLite serialises their writes.

The cache folder is, in order of precedence: the ``path`` given to
:class:`EmbeddingCache`, the ``RAGMETER_CACHE`` environment variable, or
``~/.cache/ragmeter/embeddings``.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import numpy as np

from ragmeter.errors import CacheError, RagmeterError  # noqa: F401  (CacheError: old home)
from ragmeter.files.sqlite import SQLiteStore, names_file

DB_NAME = "embeddings.sqlite3"
_SCHEMA_VERSION = 1
# SQLite limits the number of bound parameters per statement (32766 on modern
# builds, 999 on old ones); stay well under both.
_LOOKUP_CHUNK = 500

Progress = Callable[[int, int], None]


def default_cache_dir() -> Path:
    """``$RAGMETER_CACHE`` if set, else ``~/.cache/ragmeter/embeddings``."""
    env = os.environ.get("RAGMETER_CACHE")
    if env:
        return Path(env).expanduser()
    return Path.home() / ".cache" / "ragmeter" / "embeddings"


def text_key(text: str) -> bytes:
    """The cache key of a text: sha256 of its exact UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8")).digest()


class EmbeddingCache:
    """Vectors on disk keyed by ``(model_id, sha256(text))``.

    ``path`` is a folder (the database file is created inside it) or a path
    ending in ``.sqlite3``/``.db`` naming the database file itself.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        p = Path(path).expanduser() if path is not None else default_cache_dir()
        self.path = p if names_file(p) else p / DB_NAME
        self._store = SQLiteStore(
            self.path,
            [
                "CREATE TABLE IF NOT EXISTS vectors ("
                " model TEXT NOT NULL,"
                " key BLOB NOT NULL,"
                " dim INTEGER NOT NULL,"
                " vec BLOB NOT NULL,"
                " PRIMARY KEY (model, key)) WITHOUT ROWID",
                "CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT)",
                f"INSERT OR IGNORE INTO meta VALUES ('schema', '{_SCHEMA_VERSION}')",
            ],
            timeout_s=60.0,
            what="embedding cache",
        )
        self._lock = self._store.lock
        self._conn = self._store.conn

    def __repr__(self) -> str:
        return f"EmbeddingCache({str(self.path)!r})"

    def close(self) -> None:
        self._store.close()

    def __enter__(self) -> EmbeddingCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- raw access --------------------------------------------------------

    def get(self, model_id: str, keys: Sequence[bytes]) -> dict[bytes, np.ndarray]:
        """The cached vectors among ``keys`` for ``model_id`` (missing keys are absent)."""
        found: dict[bytes, np.ndarray] = {}
        unique = list(dict.fromkeys(keys))
        with self._lock:
            for start in range(0, len(unique), _LOOKUP_CHUNK):
                part = unique[start : start + _LOOKUP_CHUNK]
                marks = ",".join("?" * len(part))
                rows = self._conn.execute(
                    f"SELECT key, dim, vec FROM vectors WHERE model = ? AND key IN ({marks})",
                    (model_id, *part),
                ).fetchall()
                for key, dim, blob in rows:
                    # A damaged row (wrong length) is simply a miss.
                    if isinstance(blob, bytes) and dim > 0 and len(blob) == 4 * dim:
                        found[bytes(key)] = np.frombuffer(blob, dtype="<f4")
        return found

    def put(self, model_id: str, keys: Sequence[bytes], vectors: np.ndarray) -> None:
        """Store one batch of vectors in a single transaction."""
        vectors = np.asarray(vectors, dtype="<f4")
        if vectors.ndim != 2 or vectors.shape[0] != len(keys):
            raise ValueError(f"expected {len(keys)} vectors, got array of shape {vectors.shape}")
        dim = int(vectors.shape[1])
        rows = [(model_id, k, dim, v.tobytes()) for k, v in zip(keys, vectors, strict=True)]
        with self._store.batch() as conn:
            conn.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?, ?)", rows)

    def count(self, model_id: str | None = None) -> int:
        """Number of cached vectors (for one model, or all)."""
        with self._lock:
            if model_id is None:
                return self._conn.execute("SELECT COUNT(*) FROM vectors").fetchone()[0]
            return self._conn.execute(
                "SELECT COUNT(*) FROM vectors WHERE model = ?", (model_id,)
            ).fetchone()[0]

    def models(self) -> dict[str, int]:
        """Model ids in the cache with their number of vectors."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT model, COUNT(*) FROM vectors GROUP BY model ORDER BY model"
            ).fetchall()
        return {m: n for m, n in rows}

    def clear(self, model_id: str | None = None) -> int:
        """Delete the vectors of one model (or all); returns how many were deleted."""
        with self._store.batch() as conn:
            if model_id is None:
                cur = conn.execute("DELETE FROM vectors")
            else:
                cur = conn.execute("DELETE FROM vectors WHERE model = ?", (model_id,))
        return cur.rowcount

    # -- the main entry point ---------------------------------------------

    def embed(
        self,
        encoder,
        texts: Sequence[str],
        batch_size: int = 32,
        progress: Progress | None = None,
    ) -> np.ndarray:
        """Vectors for ``texts``: cached ones read back, the rest encoded and stored.

        Missing texts are encoded ``batch_size`` at a time and each batch is
        committed before the next starts. Duplicate texts are encoded once.
        """
        return embed_texts(encoder, texts, batch_size=batch_size, cache=self, progress=progress)


def _batches(items: Sequence, size: int) -> Iterator[Sequence]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def embed_texts(
    encoder,
    texts: Sequence[str],
    batch_size: int = 32,
    cache: EmbeddingCache | None = None,
    progress: Progress | None = None,
    engine=None,
) -> np.ndarray:
    """Encode ``texts`` in batches with ``encoder``, through ``cache`` when given.

    Returns a float32 array of shape ``(len(texts), dim)`` in input order.
    ``progress(done, total)`` is called after the cache lookup and after each
    encoded batch, counting texts (cached ones count as done). Each distinct text is
    encoded once; texts are batched by length. With an ``engine`` that has
    ``encode_batches`` (the Ray engine), the batches are encoded on its workers and each
    is committed to the cache as it comes back.
    """
    if batch_size < 1:
        raise ValueError("batch_size must be at least 1")
    texts = list(texts)
    total = len(texts)
    keys = [text_key(t) for t in texts]
    model_id = encoder.model_id
    have: dict[bytes, np.ndarray] = cache.get(model_id, keys) if cache is not None else {}

    # Unique missing texts, in first-seen order.
    missing: dict[bytes, str] = {}
    for k, t in zip(keys, texts, strict=True):
        if k not in have and k not in missing:
            missing[k] = t
    done = sum(1 for k in keys if k in have)
    if progress is not None:
        progress(done, total)

    # Batches of similar length: a model pads each batch to its longest text, so sorting by
    # length (stable) wastes no work on padding. Vectors go back by key, in input order.
    miss_keys = sorted(missing, key=lambda k: len(missing[k]))
    remaining = {k: 0 for k in miss_keys}
    for k in keys:
        if k in remaining:
            remaining[k] += 1
    batches = [list(b) for b in _batches(miss_keys, batch_size)]
    if engine is not None and len(batches) > 1:
        results = engine.encode_batches(encoder, [[missing[k] for k in b] for b in batches])
    else:
        results = ((i, encoder.encode([missing[k] for k in b])) for i, b in enumerate(batches))
    for i, vecs in results:  # each batch is stored as soon as it arrives
        batch_keys = batches[i]
        vecs = np.asarray(vecs, dtype=np.float32)
        if vecs.ndim != 2 or vecs.shape[0] != len(batch_keys):
            raise RagmeterError(
                f"encoder {model_id!r} returned {vecs.shape} for {len(batch_keys)} texts"
            )
        if cache is not None:
            cache.put(model_id, batch_keys, vecs)
        for k, v in zip(batch_keys, vecs, strict=True):
            have[k] = v
            done += remaining[k]
        if progress is not None:
            progress(done, total)

    if total == 0:
        dim = int(getattr(encoder, "dim", 0) or 0)
        return np.zeros((0, dim), dtype=np.float32)
    dims = {have[k].shape[0] for k in set(keys)}
    if len(dims) != 1:
        raise RagmeterError(
            f"embeddings for model {model_id!r} have mixed dimensions {sorted(dims)}; "
            "clear the cache for this model"
        )
    return np.stack([have[k] for k in keys]).astype(np.float32, copy=False)

"""A persistent reply cache: one SQLite file in WAL mode
(:class:`ragmeter.files.sqlite.SQLiteStore`).

The key is the SHA-256 of canonical JSON over everything that can change a
reply: backend kind, model, messages, JSON schema, temperature, seed, top_p (when set),
max_tokens and the backend options that change replies (``cache_options``).
The server URL is left out, so moving a server to another host or port keeps
its cache. Each reply is committed on its own, so a run killed at
any point loses at most the calls in flight and the file stays readable.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import time
from pathlib import Path
from typing import Any

from ragmeter.files.sqlite import SQLiteStore
from ragmeter.llm.client import ChatReply, ChatRequest

KEY_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS replies (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    created REAL NOT NULL
)
"""


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no whitespace: equal values, equal text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def request_key(
    backend_kind: str,
    model: str,
    request: ChatRequest,
    options: dict[str, Any] | None = None,
) -> str:
    """The cache key of ``request`` sent to ``model`` through ``backend_kind``.

    ``options`` are the backend's settings that change a reply (a GGUF model's
    ``chat_format`` and ``n_ctx``, Ollama's model options, an OpenAI server's
    extra request fields): fixing one of them must not return the old replies.
    A backend lists them as ``cache_options``.
    """
    payload = {
        "v": KEY_VERSION,
        "backend": backend_kind,
        "model": model,
        **request.key_payload(),
    }
    if options:
        payload["options"] = _jsonable(options)
    return hashlib.sha256(canonical_json(payload).encode("utf-8")).hexdigest()


def _jsonable(value: Any) -> Any:
    """``value`` with anything JSON cannot hold written as its repr (stable across runs)."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return repr(value)


class ReplyCache:
    """Replies by request key, in the SQLite file at ``path``.

    Safe to share between threads (one connection behind a lock; the calls it
    stores take far longer than the writes) and between processes (WAL mode,
    with a busy timeout). ``":memory:"`` keeps it in memory for one process.
    """

    def __init__(self, path: str | Path, timeout_s: float = 30.0) -> None:
        self._store = SQLiteStore(path, [_SCHEMA], timeout_s=timeout_s, what="reply cache")
        self.path = self._store.path
        self.journal_mode = self._store.journal_mode
        self._lock = self._store.lock
        self._conn = self._store.conn

    def get(self, key: str) -> ChatReply | None:
        """The stored reply for ``key`` (marked ``cached=True``), or ``None``."""
        with self._lock:
            row = self._conn.execute("SELECT value FROM replies WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        try:
            data = json.loads(row[0])
            reply = ChatReply.from_dict(data)
        except (ValueError, TypeError):
            return None
        return _with(reply, cached=True)

    def put(self, key: str, reply: ChatReply) -> None:
        """Store ``reply`` under ``key``, committed before this returns."""
        value = canonical_json(_with(reply, cached=False).to_dict())
        with self._lock:
            self._conn.execute(
                "INSERT OR REPLACE INTO replies (key, value, created) VALUES (?, ?, ?)",
                (key, value, time.time()),
            )

    def __contains__(self, key: object) -> bool:
        with self._lock:
            row = self._conn.execute("SELECT 1 FROM replies WHERE key = ?", (key,)).fetchone()
        return row is not None

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM replies").fetchone()[0])

    def keys(self) -> list[str]:
        with self._lock:
            return [r[0] for r in self._conn.execute("SELECT key FROM replies ORDER BY created")]

    def close(self) -> None:
        self._store.close()

    def __enter__(self) -> ReplyCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _with(reply: ChatReply, **changes: Any) -> ChatReply:
    return dataclasses.replace(reply, **changes)

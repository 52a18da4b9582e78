"""Build retrievers from their config entries (``[[retrievers]]`` in ragmeter.toml).

Each kind maps to a factory taking the entry's keys as keyword arguments.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ragmeter.errors import InputError


def _bm25(**params: Any):
    from ragmeter.retrieval.bm25 import BM25Retriever

    return BM25Retriever(**params)


KINDS: dict[str, Callable[..., Any]] = {
    "bm25": _bm25,
}


def make_retriever(spec: dict[str, Any] | str):
    """A retriever from ``"bm25"`` or ``{"name": ..., "kind": ..., **params}``."""
    if isinstance(spec, str):
        spec = {"name": spec, "kind": spec}
    spec = dict(spec)
    kind = spec.pop("kind", None) or spec.get("name")
    spec.setdefault("name", kind)
    if kind not in KINDS:
        raise InputError(
            f"unknown retriever kind {kind!r}; choose one of: {', '.join(sorted(KINDS))}"
        )
    try:
        return KINDS[kind](**spec)
    except TypeError as exc:
        raise InputError(f"retriever {spec['name']!r}: {exc}") from None

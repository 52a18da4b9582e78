"""Build retrievers from their config entries (``[[retrievers]]`` in ragmeter.toml).

Each kind maps to a factory taking the entry's keys as keyword arguments. A
hybrid's parts (``of``) are built here too and handed to
:class:`~ragmeter.retrieval.hybrid.HybridRetriever` as objects, so the two
modules do not import each other.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ragmeter.errors import InputError, did_you_mean


def _bm25(**params: Any):
    from ragmeter.retrieval.bm25 import BM25Retriever

    return BM25Retriever(**params)


def _dense(**params: Any):
    from ragmeter.retrieval.dense import DenseRetriever

    return DenseRetriever(**params)


def _static(**params: Any):
    from ragmeter.retrieval.static import StaticRetriever

    return StaticRetriever(**params)


def _remote_dense(scheme: str) -> Callable[..., Any]:
    def factory(model: str | None = None, **params: Any):
        from ragmeter.retrieval.dense import DenseRetriever

        if not model:
            raise InputError(f"retriever kind {scheme}-embed needs model= (the model name)")
        if model.startswith(f"{scheme}:"):
            model = model[len(scheme) + 1 :]
        return DenseRetriever(model=f"{scheme}:{model}", **params)

    return factory


def _hybrid(of: Any = ("bm25", "dense"), **params: Any):
    from ragmeter.retrieval.hybrid import HybridRetriever

    if not isinstance(of, str | bytes) and isinstance(of, list | tuple):
        # the parts are built here and handed to the hybrid as objects
        of = [make_retriever(p) if isinstance(p, str | dict) else p for p in of]
    return HybridRetriever(of=of, **params)


def _run_file(**params: Any):
    from ragmeter.retrieval.external import RunFileRetriever

    return RunFileRetriever(**params)


def _callable(**params: Any):
    from ragmeter.retrieval.external import CallableRetriever

    return CallableRetriever(**params)


def _http(**params: Any):
    from ragmeter.retrieval.external import HttpRetriever

    return HttpRetriever(**params)


KINDS: dict[str, Callable[..., Any]] = {
    "bm25": _bm25,
    "dense": _dense,
    "static": _static,
    "openai-embed": _remote_dense("openai"),
    "ollama-embed": _remote_dense("ollama"),
    "hybrid": _hybrid,
    "run-file": _run_file,
    "callable": _callable,
    "http": _http,
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
            f"unknown retriever kind {kind!r}{did_you_mean(kind, sorted(KINDS))}; "
            f"choose one of: {', '.join(sorted(KINDS))}"
        )
    try:
        return KINDS[kind](**spec)
    except TypeError as exc:
        raise InputError(f"retriever {spec['name']!r}: {exc}") from None

"""Embeddings from a server: Ollama (``/api/embed``) or any OpenAI-compatible
``/v1/embeddings`` endpoint (OpenAI, llama.cpp's server, vLLM, LM Studio, ...).

Both encoders batch their inputs, send them through :func:`ragmeter.http.post_json`
(retrying timeouts, connection failures, 429 and 5xx answers with exponential
backoff) and check every answer: one vector per input, all of one dimension,
finite and non-zero. Anything else raises a :class:`~ragmeter.errors.ServerError`
(``RemoteError`` here) with a one-line message naming the URL; a missing or bad
vector is never replaced by a zero vector.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

import httpx
import numpy as np

from ragmeter.errors import BadServerReply, InputError, ServerError
from ragmeter.http import ollama_base_url, one_line, openai_base_url, post_json

RemoteError = ServerError  # the name this module has always raised (see ragmeter.errors)


def _check_vectors(vectors: Any, n_expected: int, url: str, dim: int | None) -> np.ndarray:
    if not isinstance(vectors, list) or len(vectors) != n_expected:
        got = len(vectors) if isinstance(vectors, list) else type(vectors).__name__
        raise BadServerReply(
            f"embedding server at {url} returned {got} vectors for {n_expected} texts"
        )
    try:
        arr = np.asarray(vectors, dtype=np.float64)
    except (TypeError, ValueError):
        lengths = sorted({len(v) if isinstance(v, list) else -1 for v in vectors})
        raise BadServerReply(
            f"embedding server at {url} returned vectors of unequal or invalid lengths {lengths}"
        ) from None
    if arr.ndim == 3:
        raise BadServerReply(
            f"embedding server at {url} returned an array of shape {arr.shape}: one vector per "
            "token, not per text; run the model with pooling (llama.cpp: --pooling mean)"
        )
    if arr.ndim != 2 or arr.shape[1] == 0:
        raise BadServerReply(f"embedding server at {url} returned an array of shape {arr.shape}")
    if dim is not None and arr.shape[1] != dim:
        raise BadServerReply(
            f"embedding server at {url} returned {arr.shape[1]}-dimensional vectors, expected {dim}"
        )
    if not np.isfinite(arr).all():
        raise BadServerReply(f"embedding server at {url} returned non-finite values")
    zero = np.flatnonzero(~arr.any(axis=1))
    if zero.size:
        raise BadServerReply(
            f"embedding server at {url} returned a zero vector for input {int(zero[0])} "
            "of the batch"
        )
    return arr.astype(np.float32)


class _RemoteEncoder:
    """Shared batching, HTTP client and validation."""

    url: str
    model: str

    def __init__(
        self,
        batch_size: int = 64,
        timeout: float = 60.0,
        retries: int = 3,
        backoff: float = 0.5,
        dim: int | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        if batch_size < 1:
            raise InputError("batch_size must be at least 1")
        self.batch_size = int(batch_size)
        self.retries = int(retries)
        self.backoff = float(backoff)
        self.dim = dim
        self._client = httpx.Client(timeout=timeout, headers=headers or {})

    def close(self) -> None:
        self._client.close()

    def _request(self, texts: list[str]) -> list:
        raise NotImplementedError

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        out = []
        for start in range(0, len(texts), self.batch_size):
            batch = texts[start : start + self.batch_size]
            vecs = _check_vectors(self._request(batch), len(batch), self.url, self.dim)
            self.dim = vecs.shape[1]
            out.append(vecs)
        if not out:
            return np.zeros((0, self.dim or 0), dtype=np.float32)
        return np.vstack(out)

    def describe(self) -> dict[str, Any]:
        return {"encoder": self.model_id, "url": self.url, "dim": self.dim}


def _host(url: str) -> str:
    parts = urlsplit(url)
    return parts.netloc or url


class OpenAIEncoder(_RemoteEncoder):
    """``POST {base_url}/embeddings`` with ``{"model": ..., "input": [...]}``.

    The API key is read from the environment variable ``api_key_env``
    (default ``OPENAI_API_KEY``); without one no ``Authorization`` header is
    sent, which local servers accept. ``dimensions`` is passed to models that
    can shorten their vectors.
    """

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        dimensions: int | None = None,
        batch_size: int = 64,
        timeout: float = 60.0,
        retries: int = 3,
        backoff: float = 0.5,
    ) -> None:
        if not model:
            raise InputError("openai encoder: a model name is required (openai:MODEL)")
        self.model = model
        self.base_url = openai_base_url(base_url)
        self.url = f"{self.base_url}/embeddings"
        self.dimensions = dimensions
        headers = {}
        key = os.environ.get(api_key_env) if api_key_env else None
        if key:
            headers["Authorization"] = f"Bearer {key}"
        super().__init__(batch_size, timeout, retries, backoff, dim=dimensions, headers=headers)
        suffix = f"/d{dimensions}" if dimensions else ""
        self.model_id = f"openai:{model}@{_host(self.base_url)}{suffix}"

    def _request(self, texts: list[str]) -> list:
        payload: dict[str, Any] = {"model": self.model, "input": texts}
        if self.dimensions:
            payload["dimensions"] = self.dimensions
        body = post_json(
            self._client,
            self.url,
            payload,
            retries=self.retries,
            backoff=self.backoff,
            what="embedding server",
        )
        data = body.get("data") if isinstance(body, dict) else None
        if not isinstance(data, list):
            raise BadServerReply(
                f"embedding server at {self.url} answered without a 'data' list: "
                f"{one_line(body, 120)!r}"
            )
        try:
            items = sorted(data, key=lambda d: d.get("index", 0))
            return [item["embedding"] for item in items]
        except (AttributeError, KeyError, TypeError):
            raise BadServerReply(
                f"embedding server at {self.url} answered with malformed 'data' items"
            ) from None


class OllamaEncoder(_RemoteEncoder):
    """``POST {base_url}/api/embed`` with ``{"model": ..., "input": [...]}``.

    ``base_url`` defaults to ``$OLLAMA_HOST`` or ``http://127.0.0.1:11434``
    (see :func:`ragmeter.http.ollama_base_url`).
    """

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        batch_size: int = 64,
        timeout: float = 120.0,
        retries: int = 3,
        backoff: float = 0.5,
        dimensions: int | None = None,
    ) -> None:
        if not model:
            raise InputError("ollama encoder: a model name is required (ollama:MODEL)")
        self.model = model
        self.base_url = ollama_base_url(base_url)
        self.url = f"{self.base_url}/api/embed"
        self.dimensions = dimensions
        super().__init__(batch_size, timeout, retries, backoff, dim=dimensions)
        suffix = f"/d{dimensions}" if dimensions else ""
        self.model_id = f"ollama:{model}@{_host(self.base_url)}{suffix}"

    def _request(self, texts: list[str]) -> list:
        payload: dict[str, Any] = {"model": self.model, "input": texts}
        if self.dimensions:
            payload["dimensions"] = self.dimensions
        body = post_json(
            self._client,
            self.url,
            payload,
            retries=self.retries,
            backoff=self.backoff,
            what="ollama",
        )
        vectors = body.get("embeddings") if isinstance(body, dict) else None
        if vectors is None:
            raise BadServerReply(
                f"ollama at {self.url} answered without 'embeddings': {one_line(body, 120)!r}"
            )
        return vectors


def is_remote_spec(model: str | None) -> bool:
    return bool(model) and model.split(":", 1)[0] in ("openai", "ollama") and ":" in model


def make_remote_encoder(spec: str, **options: Any) -> OpenAIEncoder | OllamaEncoder:
    """An encoder from ``"openai:MODEL"`` or ``"ollama:MODEL"``; ``options`` go to it."""
    scheme, _, model = spec.partition(":")
    if scheme == "openai":
        return OpenAIEncoder(model, **options)
    if scheme == "ollama":
        options.pop("api_key_env", None)
        return OllamaEncoder(model, **options)
    raise InputError(f"unknown encoder {spec!r}; use openai:MODEL or ollama:MODEL")


__all__ = [
    "OllamaEncoder",
    "OpenAIEncoder",
    "RemoteError",
    "is_remote_spec",
    "make_remote_encoder",
    "openai_base_url",
    "post_json",
]

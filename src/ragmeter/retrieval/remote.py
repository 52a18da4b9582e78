"""Embeddings from a server: Ollama (``/api/embed``) or any OpenAI-compatible
``/v1/embeddings`` endpoint (OpenAI, llama.cpp's server, vLLM, LM Studio, ...).

Both encoders batch their inputs, retry timeouts, connection failures, 429 and
5xx answers with exponential backoff, and check every answer: one vector per
input, all of one dimension, finite and non-zero. Anything else raises
:class:`RemoteError` with a one-line message naming the URL; a missing or bad
vector is never replaced by a zero vector.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

import httpx
import numpy as np

from ragmeter.errors import InputError, RagmeterError

RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
MAX_RETRY_AFTER_S = 60.0


class RemoteError(RagmeterError):
    """A server could not be reached or gave an unusable answer."""


def _one_line(text: str, limit: int = 200) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _retry_after(resp: httpx.Response) -> float | None:
    value = resp.headers.get("retry-after")
    if value is None:
        return None
    try:
        return min(max(float(value), 0.0), MAX_RETRY_AFTER_S)
    except ValueError:
        return None


def post_json(
    client: httpx.Client,
    url: str,
    payload: dict[str, Any],
    *,
    retries: int = 3,
    backoff: float = 0.5,
    what: str = "server",
) -> Any:
    """POST ``payload`` as JSON and return the decoded JSON answer.

    Timeouts, connection errors, 429 and 5xx answers are retried up to
    ``retries`` times, waiting ``backoff * 2**attempt`` seconds (or the
    server's ``Retry-After``, at most 60 s) between tries. Other 4xx answers
    fail at once. Every failure raises :class:`RemoteError` naming ``url``.
    """
    attempts = max(int(retries), 0) + 1
    last = ""
    for attempt in range(attempts):
        wait = backoff * (2**attempt)
        try:
            resp = client.post(url, json=payload)
        except httpx.TimeoutException:
            last = f"timed out after {client.timeout.read or client.timeout.connect}s"
        except httpx.ConnectError as exc:
            last = f"cannot connect ({_one_line(exc, 80) or 'connection refused'})"
        except httpx.TransportError as exc:
            last = f"{type(exc).__name__}: {_one_line(exc, 80)}"
        else:
            if resp.status_code < 400:
                try:
                    return resp.json()
                except ValueError:
                    raise RemoteError(
                        f"{what} at {url} answered with invalid JSON: {_one_line(resp.text, 80)!r}"
                    ) from None
            last = f"HTTP {resp.status_code}: {_one_line(resp.text, 120)}"
            if resp.status_code not in RETRY_STATUS:
                raise RemoteError(f"{what} at {url} refused the request ({last})")
            hinted = _retry_after(resp)
            wait = hinted if hinted is not None else wait
        if attempt + 1 < attempts:
            time.sleep(wait)
    tries = f"{attempts} attempt" + ("s" if attempts != 1 else "")
    raise RemoteError(f"{what} at {url} failed after {tries}: {last}")


def _check_vectors(vectors: Any, n_expected: int, url: str, dim: int | None) -> np.ndarray:
    if not isinstance(vectors, list) or len(vectors) != n_expected:
        got = len(vectors) if isinstance(vectors, list) else type(vectors).__name__
        raise RemoteError(
            f"embedding server at {url} returned {got} vectors for {n_expected} texts"
        )
    try:
        arr = np.asarray(vectors, dtype=np.float64)
    except (TypeError, ValueError):
        lengths = sorted({len(v) if isinstance(v, list) else -1 for v in vectors})
        raise RemoteError(
            f"embedding server at {url} returned vectors of unequal or invalid lengths {lengths}"
        ) from None
    if arr.ndim == 3:
        raise RemoteError(
            f"embedding server at {url} returned an array of shape {arr.shape}: one vector per "
            "token, not per text; run the model with pooling (llama.cpp: --pooling mean)"
        )
    if arr.ndim != 2 or arr.shape[1] == 0:
        raise RemoteError(f"embedding server at {url} returned an array of shape {arr.shape}")
    if dim is not None and arr.shape[1] != dim:
        raise RemoteError(
            f"embedding server at {url} returned {arr.shape[1]}-dimensional vectors, expected {dim}"
        )
    if not np.isfinite(arr).all():
        raise RemoteError(f"embedding server at {url} returned non-finite values")
    zero = np.flatnonzero(~arr.any(axis=1))
    if zero.size:
        raise RemoteError(
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


def openai_base_url(base_url: str | None = None) -> str:
    """The OpenAI-compatible base URL: ``base_url``, ``$RAGMETER_OPENAI_BASE_URL``,
    ``$OPENAI_BASE_URL`` or ``https://api.openai.com/v1``; ``/v1`` is added to
    a URL that has no path."""
    url = (
        base_url
        or os.environ.get("RAGMETER_OPENAI_BASE_URL")
        or os.environ.get("OPENAI_BASE_URL")
        or "https://api.openai.com/v1"
    ).rstrip("/")
    if urlsplit(url).path in ("", "/"):
        url += "/v1"
    return url


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
            raise RemoteError(
                f"embedding server at {self.url} answered without a 'data' list: "
                f"{_one_line(body, 120)!r}"
            )
        try:
            items = sorted(data, key=lambda d: d.get("index", 0))
            return [item["embedding"] for item in items]
        except (AttributeError, KeyError, TypeError):
            raise RemoteError(
                f"embedding server at {self.url} answered with malformed 'data' items"
            ) from None


class OllamaEncoder(_RemoteEncoder):
    """``POST {base_url}/api/embed`` with ``{"model": ..., "input": [...]}``.

    ``base_url`` defaults to ``$OLLAMA_HOST`` or ``http://127.0.0.1:11434``.
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
        url = base_url or os.environ.get("OLLAMA_HOST") or "http://127.0.0.1:11434"
        if "://" not in url:
            url = "http://" + url
        self.base_url = url.rstrip("/")
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
            raise RemoteError(
                f"ollama at {self.url} answered without 'embeddings': {_one_line(body, 120)!r}"
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

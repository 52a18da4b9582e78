"""Chat backends: Ollama, any OpenAI-compatible server, and llama.cpp in process.

Build one from a spec string with :func:`make_backend`::

    make_backend("ollama:llama3.2")
    make_backend("openai:gpt-4o-mini")
    make_backend("openai:qwen2.5-7b", base_url="http://127.0.0.1:8000/v1")
    make_backend("gguf:/models/gemma-3-270m-it-Q4_K_M.gguf", n_ctx=2048)

Each backend asks for structured output in the strongest form its API offers
and steps down, once and for good, when the server refuses that form.

Size: three backends (Ollama, OpenAI-compatible, llama.cpp in process) behind one
interface; the two HTTP ones share :class:`_HTTPBackend` and the structured-output step-
down (:class:`_Ladder`), and :func:`make_backend` picks among all three, so one module
is the one place to read how a call is made.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import httpx

from ragmeter.errors import (
    BadServerReply,
    InputError,
    MissingExtra,
    ServerRejected,
    ServerUnavailable,
)
from ragmeter.http import ollama_base_url, openai_base_url, post_json
from ragmeter.llm.client import (
    BackendRejected,
    BadResponse,
    ChatRequest,
    Completion,
    RequestRejected,
    TransientError,
)
from ragmeter.llm.llama_env import cpu_has_amx, llama_extra_buffers, quiet_llama

LLM_EXTRA_HINT = "pip install 'ragmeter[llm]'"


# --- shared HTTP plumbing ---------------------------------------------------------------


class _HTTPBackend:
    """POSTs JSON and maps failures onto the runner's error classes."""

    kind = "http"
    unreachable_hint = "start the server or point ragmeter at the right URL"

    def __init__(
        self,
        model: str,
        base_url: str,
        headers: dict[str, str] | None = None,
        max_concurrency: int | None = None,
    ) -> None:
        if not model:
            raise InputError(f"{self.kind} backend needs a model name, e.g. '{self.kind}:NAME'")
        try:
            scheme = httpx.URL(base_url).scheme
        except httpx.InvalidURL as exc:
            raise InputError(f"{self.kind} backend: bad base URL {base_url!r}: {exc}") from None
        if scheme not in ("http", "https"):
            raise InputError(f"{self.kind} backend: base URL {base_url!r} must start with http://")
        self.model = model
        self.cache_model = model
        self.base_url = base_url.rstrip("/")
        self.max_concurrency = max_concurrency
        self._client = httpx.Client(headers=headers or {}, follow_redirects=True)

    def _post(self, path: str, body: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        """One call (the runner retries): failures become the runner's signals."""
        url = self.base_url + path
        try:
            data = post_json(
                self._client, url, body, retries=0, timeout=timeout_s, what=f"{self.kind} server"
            )
        except ServerUnavailable as exc:
            if exc.cause == "timeout":
                message = f"no reply from {url} within {timeout_s:g}s"
                raise TransientError("timeout", message) from None
            if exc.cause == "connect":
                raise TransientError("connect", f"cannot reach {url}: {exc.detail}") from None
            raise TransientError(
                "http",
                f"http {exc.status} from {url}: {exc.detail}",
                status=exc.status,
                retry_after=exc.retry_after,
            ) from None
        except ServerRejected as exc:
            self._reject(int(exc.status or 0), url, exc.detail)
            raise
        except BadServerReply as exc:
            raise BadResponse(
                f"unparseable: {url} answered HTTP {exc.status} with a non-JSON body",
                body=exc.body,
            ) from None
        if not isinstance(data, dict):
            raise BadResponse(
                f"unparseable: {url} answered with JSON that is not an object",
                body=str(data)[:2000],
            )
        return data

    def _reject(self, status: int, url: str, message: str) -> None:
        if status in (401, 403, 404):
            raise BackendRejected(f"{self.kind} server at {url} refused: HTTP {status}: {message}")
        raise RequestRejected(f"rejected: http {status}: {message}", status=status)

    def close(self) -> None:
        self._client.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r}, base_url={self.base_url!r})"


class _Ladder:
    """Structured-output forms from strongest to weakest.

    ``send(level)`` is tried at the current level; an HTTP 400/422 moves to the
    next one. A lower level becomes the default only once it succeeds, so a
    request rejected for another reason (a prompt too long) does not weaken
    later requests.
    """

    def __init__(self, levels: list[str]) -> None:
        self.levels = levels
        self.start = 0
        self._lock = threading.Lock()

    def run(self, send: Callable[[str], dict[str, Any]]) -> dict[str, Any]:
        start = self.start
        for index in range(start, len(self.levels)):
            try:
                result = send(self.levels[index])
            except RequestRejected as exc:
                if exc.status in (400, 422) and index < len(self.levels) - 1:
                    continue
                raise
            if index > start:
                with self._lock:
                    self.start = max(self.start, index)
            return result
        raise RequestRejected("rejected: no structured-output form accepted")


# --- Ollama ------------------------------------------------------------------------------


class OllamaBackend(_HTTPBackend):
    """Ollama's native ``/api/chat``.

    Structured output: ``format`` carries the JSON schema (Ollama 0.5 and
    later); older servers that refuse it get ``format: "json"``, then nothing.
    ``options`` adds Ollama model options (``num_ctx``, ...); ``keep_alive``
    is passed through.
    """

    kind = "ollama"
    unreachable_hint = "start it with `ollama serve`, or set OLLAMA_HOST to where it runs"

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        options: dict[str, Any] | None = None,
        keep_alive: str | int | None = None,
        max_concurrency: int | None = None,
    ) -> None:
        super().__init__(model, ollama_base_url(base_url), max_concurrency=max_concurrency)
        self.options = dict(options or {})
        self.cache_options = {"options": self.options} if self.options else {}
        self.keep_alive = keep_alive
        self._ladder = _Ladder(["schema", "json", "plain"])

    def complete(self, request: ChatRequest, timeout_s: float) -> Completion:
        options: dict[str, Any] = {"temperature": request.temperature, **self.options}
        if request.seed is not None:
            options["seed"] = request.seed
        if request.top_p is not None:
            options["top_p"] = request.top_p
        if request.max_tokens is not None:
            options["num_predict"] = request.max_tokens
        body: dict[str, Any] = {
            "model": self.model,
            "messages": request.message_dicts(),
            "stream": False,
            "options": options,
        }
        if self.keep_alive is not None:
            body["keep_alive"] = self.keep_alive

        def send(level: str) -> dict[str, Any]:
            payload = dict(body)
            if request.json_schema is not None and level != "plain":
                payload["format"] = request.json_schema if level == "schema" else "json"
            return self._post("/api/chat", payload, timeout_s)

        data = self._ladder.run(send) if request.json_schema else send("plain")
        message = data.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, str):
            raise BadResponse("unparseable: Ollama reply has no message.content", body=str(data))
        return Completion(
            content, int(data.get("prompt_eval_count") or 0), int(data.get("eval_count") or 0)
        )

    def _reject(self, status: int, url: str, message: str) -> None:
        if status == 404 and "not found" in message.lower():
            raise BackendRejected(
                f"Ollama at {self.base_url} has no model {self.model!r}: "
                f"run `ollama pull {self.model}` ({message})"
            )
        super()._reject(status, url, message)


# --- OpenAI-compatible ----------------------------------------------------------------


def _strict_ok(schema: Any) -> bool:
    """Whether OpenAI's strict mode accepts ``schema`` (closed objects, all keys required)."""
    if not isinstance(schema, dict):
        return True
    if schema.get("type") == "object" or "properties" in schema:
        props = schema.get("properties") or {}
        if schema.get("additionalProperties") is not False:
            return False
        if set(schema.get("required") or []) != set(props):
            return False
        return all(_strict_ok(p) for p in props.values())
    if isinstance(schema.get("items"), dict):
        return _strict_ok(schema["items"])
    return True


def _schema_name(schema: dict[str, Any]) -> str:
    name = re.sub(r"[^A-Za-z0-9_-]+", "_", str(schema.get("title") or "reply")).strip("_")
    return (name or "reply")[:64]


class OpenAIBackend(_HTTPBackend):
    """Any server speaking OpenAI's ``POST {base_url}/chat/completions``.

    That covers OpenAI itself, vLLM, llama.cpp's ``llama-server``,
    llama-cpp-python's server, LM Studio and Ollama's ``/v1``. ``base_url``
    defaults to ``$RAGMETER_OPENAI_BASE_URL``, then ``$OPENAI_BASE_URL``, then
    OpenAI; a URL with no path gets ``/v1``. The key is ``api_key``, else the
    environment variable named by ``api_key_env`` (default ``OPENAI_API_KEY``);
    without one no ``Authorization`` header is sent (local servers).

    Structured output, strongest first: ``response_format`` of type
    ``json_schema``; ``json_object`` with a ``schema`` (llama-cpp-python);
    plain ``json_object``; nothing. ``extra_body`` is merged into every request.
    """

    kind = "openai"
    unreachable_hint = "start the server, or pass base_url / set RAGMETER_OPENAI_BASE_URL"

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        extra_body: dict[str, Any] | None = None,
        max_concurrency: int | None = None,
    ) -> None:
        url = openai_base_url(base_url)
        key = api_key if api_key is not None else os.environ.get(api_key_env)
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        super().__init__(model, url, headers=headers, max_concurrency=max_concurrency)
        self.api_key_env = api_key_env
        self.extra_body = dict(extra_body or {})
        self.cache_options = {"extra_body": self.extra_body} if self.extra_body else {}
        self._ladder = _Ladder(["json_schema", "json_object_schema", "json_object", "plain"])
        self._token_param = "max_tokens"

    def complete(self, request: ChatRequest, timeout_s: float) -> Completion:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": request.message_dicts(),
            "temperature": request.temperature,
            "stream": False,
            **self.extra_body,
        }
        if request.seed is not None:
            body["seed"] = request.seed
        if request.top_p is not None:
            body["top_p"] = request.top_p
        schema = request.json_schema

        def send(level: str) -> dict[str, Any]:
            payload = dict(body)
            if request.max_tokens is not None:
                payload[self._token_param] = request.max_tokens
            if schema is not None and level == "json_schema":
                payload["response_format"] = {
                    "type": "json_schema",
                    "json_schema": {
                        "name": _schema_name(schema),
                        "schema": schema,
                        "strict": _strict_ok(schema),
                    },
                }
            elif schema is not None and level == "json_object_schema":
                payload["response_format"] = {"type": "json_object", "schema": schema}
            elif schema is not None and level == "json_object":
                payload["response_format"] = {"type": "json_object"}
            try:
                return self._post("/chat/completions", payload, timeout_s)
            except TransientError as exc:
                # llama-cpp-python's server answers an unknown response_format with a 500
                # validation error; treat that as a refusal of this form, not an outage
                text = str(exc)
                if (
                    exc.status == 500
                    and "response_format" in payload
                    and ("response_format" in text or "json_schema" in text)
                ):
                    raise RequestRejected(f"rejected: {text}", status=400) from None
                raise
            except RequestRejected as exc:
                # newer OpenAI models take max_completion_tokens instead of max_tokens
                if self._token_param == "max_tokens" and "max_completion_tokens" in str(exc):
                    self._token_param = "max_completion_tokens"
                    return send(level)
                raise

        data = self._ladder.run(send) if schema is not None else send("plain")
        try:
            content = data["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            raise BadResponse(
                "unparseable: chat completion has no choices[0].message.content",
                body=str(data)[:2000],
            ) from None
        if content is None:
            content = ""
        if not isinstance(content, str):
            raise BadResponse("unparseable: message.content is not text", body=str(data)[:2000])
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
        return Completion(
            content, int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)
        )

    def _reject(self, status: int, url: str, message: str) -> None:
        if status in (401, 403):
            raise BackendRejected(
                f"{url} refused the API key (HTTP {status}: {message}); "
                f"set {self.api_key_env} or pass api_key"
            )
        if status == 404:
            raise BackendRejected(
                f"{url} answered HTTP 404 ({message}); check the model name {self.model!r} "
                "and that the base URL ends in /v1"
            )
        super()._reject(status, url, message)


# --- llama.cpp in process ------------------------------------------------------------


LLAMA_VERBOSE = False
"""Default for the gguf backend's ``verbose``: llama.cpp's own log on stderr (``--verbose``)."""


_NOT_IN_KEY = frozenset({"n_threads", "n_threads_batch", "n_gpu_layers", "verbose", "use_mmap"})


class GGUFBackend:
    """A GGUF model run in this process by llama-cpp-python.

    Structured output is grammar-constrained: ``response_format`` of type
    ``json_object`` with the request's schema, so every reply is JSON that fits
    it (unless cut off by ``max_tokens``). Calls run one at a time
    (``max_concurrency = 1``) and cannot be interrupted, so ``timeout_s`` does
    not apply. The model loads when the backend is made.

    ``extra_buffers`` controls llama.cpp's weight repacking for CPU kernels;
    the default turns it off on CPUs with Intel AMX, where some llama.cpp
    builds crash (see :func:`llama_extra_buffers`). Other keyword arguments
    go to ``llama_cpp.Llama``.
    """

    kind = "gguf"
    max_concurrency = 1
    base_url = None
    unreachable_hint = LLM_EXTRA_HINT

    def __init__(
        self,
        path: str | os.PathLike[str],
        n_ctx: int = 4096,
        n_threads: int | None = None,
        n_gpu_layers: int = 0,
        chat_format: str | None = None,
        verbose: bool | None = None,
        extra_buffers: bool | None = None,
        **llama_kwargs: Any,
    ) -> None:
        file = Path(path).expanduser()
        if not file.is_file():
            raise InputError(f"GGUF model file not found: {file}")
        try:
            import llama_cpp  # noqa: F401
        except ImportError:
            message = f"the gguf backend needs llama-cpp-python: {LLM_EXTRA_HINT}"
            raise MissingExtra(message) from None
        self.path = file
        self.model = file.name
        # the file name alone could collide ("model.gguf"); its size tells builds apart
        self.cache_model = f"{file.name}:{file.stat().st_size}"
        self._params = dict(
            model_path=str(file),
            n_ctx=n_ctx,
            n_threads=n_threads,
            n_gpu_layers=n_gpu_layers,
            chat_format=chat_format,
            verbose=LLAMA_VERBOSE if verbose is None else bool(verbose),
            **llama_kwargs,
        )
        # what changes a reply goes into the cache key; threads, GPU layers and logging do not
        self.cache_options = {
            "n_ctx": n_ctx,
            "chat_format": chat_format,
            **{k: v for k, v in llama_kwargs.items() if k not in _NOT_IN_KEY},
        }
        if extra_buffers is None:
            extra_buffers = not cpu_has_amx()
        self.extra_buffers = extra_buffers
        self._llama: Any = None
        self._lock = threading.Lock()
        with self._lock:
            self._load()

    def _load(self) -> Any:
        if self._llama is None:
            from llama_cpp import Llama

            try:
                with llama_extra_buffers(self.extra_buffers), quiet_llama(self._params["verbose"]):
                    self._llama = Llama(**self._params)
            except (ValueError, RuntimeError) as exc:
                raise InputError(f"cannot load GGUF model {self.path}: {exc}") from None
        return self._llama

    def complete(self, request: ChatRequest, timeout_s: float) -> Completion:
        kwargs: dict[str, Any] = {
            "messages": request.message_dicts(),
            "temperature": request.temperature,
            "max_tokens": request.max_tokens,
            "seed": request.seed,
        }
        if request.top_p is not None:
            kwargs["top_p"] = request.top_p
        if request.json_schema is not None:
            kwargs["response_format"] = {"type": "json_object", "schema": request.json_schema}
        with self._lock:
            llama = self._load()
            try:
                out = llama.create_chat_completion(**kwargs)
            except ValueError as exc:  # e.g. the prompt does not fit in n_ctx
                raise RequestRejected(f"rejected: {exc}") from None
        try:
            content = out["choices"][0]["message"]["content"] or ""
        except (KeyError, IndexError, TypeError):
            raise BadResponse("unparseable: llama.cpp returned no message", body=str(out)) from None
        usage = out.get("usage") or {}
        return Completion(
            content, int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)
        )

    def close(self) -> None:
        with self._lock:
            llama, self._llama = self._llama, None
        if llama is not None and hasattr(llama, "close"):
            llama.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"GGUFBackend(path={str(self.path)!r})"


# --- spec strings ---------------------------------------------------------------------

KINDS = {"ollama": OllamaBackend, "openai": OpenAIBackend, "gguf": GGUFBackend}


def parse_options(items: Sequence[str] | dict[str, Any] | None) -> dict[str, Any]:
    """Backend options for :func:`make_backend` from ``KEY=VALUE`` strings.

    ``["n_ctx=4096", "chat_format=gemma"]`` -> ``{"n_ctx": 4096, "chat_format": "gemma"}``;
    values are read as JSON where they parse (numbers, true/false, objects), else kept
    as text. A dict is returned as a copy.
    """
    if items is None:
        return {}
    if isinstance(items, dict):
        return dict(items)
    out: dict[str, Any] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise InputError(f"model option {item!r}: write KEY=VALUE, e.g. n_ctx=4096")
        try:
            out[name.strip()] = json.loads(value)
        except ValueError:
            out[name.strip()] = value
    return out


def make_backend(spec: str, **options: Any):
    """A backend from ``"KIND:MODEL"``: ``ollama:NAME``, ``openai:NAME`` or ``gguf:PATH``.

    Only the first colon splits, so ``ollama:llama3.2:1b`` names model
    ``llama3.2:1b``. ``options`` go to the backend's constructor (``base_url``,
    ``api_key_env``, ``n_ctx``, ...).
    """
    kind, sep, rest = spec.partition(":")
    kind = kind.strip().lower()
    if not sep or kind not in KINDS:
        raise InputError(
            f"unknown model spec {spec!r}; write KIND:MODEL with KIND one of "
            f"{', '.join(sorted(KINDS))} (e.g. 'ollama:llama3.2')"
        )
    if not rest.strip():
        raise InputError(f"model spec {spec!r} names no model; write {kind}:NAME")
    _check_options(KINDS[kind], spec, options)
    try:
        return KINDS[kind](rest.strip(), **options)
    except TypeError as exc:
        raise InputError(f"model spec {spec!r}: {exc}") from None


def _check_options(cls: type, spec: str, options: dict[str, Any]) -> None:
    """Type-check the options a backend declares (``n_ctx=abc`` is one line, not a crash)."""
    import typing

    from pydantic import TypeAdapter, ValidationError

    hints = typing.get_type_hints(cls.__init__)
    for name, value in options.items():
        hint = hints.get(name)
        if hint is None:
            continue  # passed through (e.g. to llama_cpp.Llama), checked there
        try:
            TypeAdapter(hint).validate_python(value, strict=True)
        except ValidationError:
            raise InputError(
                f"model spec {spec!r}: option {name}={value!r} has the wrong type "
                f"(expected {getattr(hint, '__name__', hint)}); e.g. --option n_ctx=4096"
            ) from None
        if name in ("n_ctx", "max_concurrency") and isinstance(value, int) and value < 1:
            raise InputError(f"model spec {spec!r}: option {name} must be at least 1, got {value}")

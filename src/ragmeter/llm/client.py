"""Requests, replies and errors shared by every backend.

A :class:`ChatRequest` says what to ask; a backend turns it into a
:class:`Completion` (raw text plus token counts); :func:`build_reply` reads the
text against the request's JSON schema and wraps everything in a
:class:`ChatReply`.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

from ragmeter.errors import ServerRejected, ServerUnavailable
from ragmeter.llm.fence import blocks
from ragmeter.llm.parse import parse_reply

ROLES = ("system", "user", "assistant")


class Message(NamedTuple):
    """One chat turn."""

    role: str
    content: str


def _as_message(item: Any) -> Message:
    if isinstance(item, Message):
        return item
    if isinstance(item, dict):
        try:
            return Message(str(item["role"]), str(item["content"]))
        except KeyError as exc:
            raise ValueError(f"chat message {item!r} lacks {exc.args[0]!r}") from None
    if isinstance(item, tuple | list) and len(item) == 2:
        return Message(str(item[0]), str(item[1]))
    raise ValueError(f"chat message must be {{'role': ..., 'content': ...}}, got {item!r}")


@dataclass(frozen=True)
class ChatRequest:
    """What to ask a model.

    Give either ``messages`` (a sequence of ``{"role", "content"}`` dicts) or
    ``prompt`` with an optional ``system`` prompt. After construction
    ``messages`` always holds the full conversation, and only ``messages`` and
    the sampling settings decide the cache key.

    ``json_schema`` asks for structured output: backends that support it
    constrain the reply to the schema, and the reply is parsed and checked
    against it either way.
    """

    messages: tuple[Message, ...] = ()
    prompt: str | None = None
    system: str | None = None
    temperature: float = 0.0
    seed: int | None = 0
    max_tokens: int | None = 512
    json_schema: dict[str, Any] | None = None
    top_p: float | None = None  # None: the backend's own nucleus setting

    def __post_init__(self) -> None:
        messages = tuple(_as_message(m) for m in self.messages)
        if messages and (self.prompt is not None or self.system is not None):
            raise ValueError("give either messages or prompt/system, not both")
        if not messages:
            if self.prompt is None:
                raise ValueError("a chat request needs messages or a prompt")
            messages = ((Message("system", self.system),) if self.system else ()) + (
                Message("user", self.prompt),
            )
        for m in messages:
            if m.role not in ROLES:
                raise ValueError(f"unknown chat role {m.role!r}; use one of {', '.join(ROLES)}")
        if self.max_tokens is not None and self.max_tokens < 1:
            raise ValueError("max_tokens must be at least 1")
        if self.json_schema is not None and not isinstance(self.json_schema, dict):
            raise ValueError("json_schema must be a dict")
        object.__setattr__(self, "messages", messages)

    def __hash__(self) -> int:
        # the schema is a dict, so the generated field hash would fail
        return hash(json.dumps(self.key_payload(), sort_keys=True, ensure_ascii=False))

    def message_dicts(self) -> list[dict[str, str]]:
        """The messages in the ``[{"role": ..., "content": ...}]`` wire form."""
        return [{"role": m.role, "content": m.content} for m in self.messages]

    def key_payload(self) -> dict[str, Any]:
        """Every field that can change the reply (used for the cache key)."""
        return {
            "messages": self.message_dicts(),
            "temperature": float(self.temperature),
            "seed": self.seed,
            "max_tokens": self.max_tokens,
            "json_schema": self.json_schema,
            # only when set, so a request without it keeps the key it always had
            **({"top_p": float(self.top_p)} if self.top_p is not None else {}),
        }


@dataclass(frozen=True)
class ChatReply:
    """A model's answer to one :class:`ChatRequest`.

    ``parsed`` is the JSON object read from ``text`` when the request carried a
    schema and the object validates; otherwise ``None``. ``error`` is ``None``
    on success and a one-line reason otherwise: ``"unparseable: ..."`` when the
    model answered but its text could not be read against the schema,
    ``"timeout: ..."``, ``"http 503: ..."`` or ``"rejected: ..."`` when no usable
    answer came back. Callers record a reply with an error as unscored, keeping
    ``text``.
    """

    text: str
    parsed: dict[str, Any] | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    latency_s: float = 0.0
    cached: bool = False
    backend: str = ""
    model: str = ""
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ChatReply:
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


class Completion(NamedTuple):
    """What a backend hands back for one call: raw text and token counts."""

    text: str
    tokens_in: int = 0
    tokens_out: int = 0


class Backend(Protocol):
    """A chat model reachable through one API.

    ``kind`` and ``model`` name it; ``base_url`` is where it lives, or ``None``
    in process. ``max_concurrency`` caps parallel calls (``None``: no cap
    beyond the runner's). The cache keys replies by ``kind`` and by
    ``cache_model`` when the backend has one, else ``model``.
    ``unreachable_hint``, if present, ends the message of
    :class:`BackendUnavailable`.
    """

    kind: str
    model: str
    base_url: str | None
    max_concurrency: int | None

    def complete(self, request: ChatRequest, timeout_s: float) -> Completion:
        """One call. Raises :class:`TransientError` or :class:`RequestRejected`."""
        ...

    def close(self) -> None: ...


def read_reply(request: ChatRequest, text: str) -> tuple[dict[str, Any] | None, str | None]:
    """``(parsed, error)`` of a reply's text, read against the request's schema.

    The fenced data blocks of the request (:func:`ragmeter.llm.fence.blocks`)
    are what the reply may quote: an object found there is never taken as the
    reply's own. ``(None, None)`` when the request has no schema.
    """
    if request.json_schema is None:
        return None, None
    quoted = [b for m in request.messages for b in blocks(m.content)]
    return parse_reply(text, request.json_schema, quoted)


def build_reply(
    request: ChatRequest, completion: Completion, backend: Backend, latency_s: float
) -> ChatReply:
    """Wrap a completion, reading its text against the request's schema."""
    parsed, error = read_reply(request, completion.text)
    return ChatReply(
        text=completion.text,
        parsed=parsed,
        tokens_in=int(completion.tokens_in or 0),
        tokens_out=int(completion.tokens_out or 0),
        latency_s=round(latency_s, 6),
        cached=False,
        backend=backend.kind,
        model=backend.model,
        error=error,
    )


# --- errors -----------------------------------------------------------------


# ``BackendUnavailable`` and ``BackendRejected`` are the names the chat layer has
# always used for these two errors (see :mod:`ragmeter.errors`).
BackendUnavailable = ServerUnavailable
BackendRejected = ServerRejected


class TransientError(Exception):
    """A call failed in a way that may pass on retry.

    ``kind`` is ``"timeout"``, ``"connect"`` (refused, reset, dropped) or
    ``"http"`` (429 or 5xx, with ``status``). ``retry_after`` is the server's
    hint in seconds, if it sent one.
    """

    def __init__(
        self,
        kind: str,
        message: str,
        status: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.status = status
        self.retry_after = retry_after


class RequestRejected(Exception):
    """The server refused this one request (HTTP 4xx other than 429); not retried."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class BadResponse(Exception):
    """The server answered 200 but not with a readable completion; not retried.

    ``body`` keeps the start of what it sent.
    """

    def __init__(self, message: str, body: str = "") -> None:
        super().__init__(message)
        self.body = body

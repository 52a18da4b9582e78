"""How to call a model, in one value: :class:`CallSettings`, and :func:`open_backend`.

Every route that calls a model (the reader and judges, question generation, the
audit's model checks) takes one :class:`CallSettings` instead of a spec, its
options, a cache path, concurrency, a timeout, a token limit and a retry count
passed separately through every layer, and opens the backend and the reply
cache with :func:`open_backend`, which closes both::

    settings = CallSettings("ollama:llama3.2", cache="cache.sqlite", max_tokens=96)
    with open_backend(settings) as calls:
        replies = calls.run(requests)
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragmeter.errors import InputError
from ragmeter.llm.backends import make_backend, parse_options
from ragmeter.llm.cache import ReplyCache
from ragmeter.llm.client import Backend, ChatReply, ChatRequest
from ragmeter.llm.runner import Runner, RunStats

__all__ = ["CallSettings", "ModelCalls", "call_settings", "model_label", "open_backend"]

DEFAULT_CONCURRENCY = 4
DEFAULT_TIMEOUT_S = 120.0
DEFAULT_RETRIES = 3


def model_label(model: str | Backend | CallSettings) -> str:
    """The name a model's answers, grades and questions are saved under.

    A spec string as given (stripped), except that ``gguf:PATH`` keeps only the
    file name, as the reply cache does: a path is specific to one machine, and
    the same file in another folder is the same model. A backend gives
    ``kind:model``.
    """
    if isinstance(model, CallSettings):
        model = model.spec
    if not isinstance(model, str):
        return f"{model.kind}:{model.model}"
    kind, sep, rest = model.strip().partition(":")
    if sep and kind.strip().lower() == "gguf" and rest.strip():
        return f"gguf:{Path(rest.strip()).name}"
    return model.strip()


@dataclass(frozen=True)
class CallSettings:
    """Everything that says how to call one model.

    ``spec`` is a model spec (``ollama:NAME``, ``openai:NAME``, ``gguf:PATH``)
    or a backend object (its owner closes it). ``options`` go to
    :func:`ragmeter.llm.make_backend` (``KEY=VALUE`` strings or a dict).
    ``cache`` is the reply cache: a path, an open :class:`ReplyCache` (its
    owner closes it) or ``None`` for none. ``max_tokens=None`` leaves the
    longest reply to the route (each has its own default). ``timeout_s`` bounds
    one call; ``retries`` is how often a timed-out or 429/5xx call is repeated.
    ``engine`` is where the calls run: ``local`` (threads here) or ``ray`` (an actor
    pool on the Ray cluster at ``engine_address``, each actor with its own backend,
    ``concurrency`` actors at most; the spec must then be a string). The reply cache
    stays here and is filled as replies come back.
    """

    spec: str | Backend
    options: Mapping[str, Any] = field(default_factory=dict, hash=False)
    cache: str | Path | ReplyCache | None = None
    concurrency: int = DEFAULT_CONCURRENCY
    timeout_s: float = DEFAULT_TIMEOUT_S
    max_tokens: int | None = None
    retries: int = DEFAULT_RETRIES
    engine: str = "local"
    engine_address: str = "auto"

    def __post_init__(self) -> None:

        opts = self.options
        if not isinstance(opts, Mapping):
            opts = parse_options(opts)  # KEY=VALUE strings
        object.__setattr__(self, "options", dict(opts))
        if self.concurrency < 1:
            raise InputError(f"concurrency must be at least 1, got {self.concurrency}")
        if self.timeout_s <= 0:
            raise InputError(f"the timeout must be positive, got {self.timeout_s}")
        if self.max_tokens is not None and self.max_tokens < 1:
            raise InputError(f"max tokens must be at least 1, got {self.max_tokens}")
        if self.retries < 0:
            raise InputError(f"retries must be 0 or more, got {self.retries}")
        from ragmeter.engine import KINDS

        if self.engine not in KINDS:
            raise InputError(f"unknown engine {self.engine!r}; valid engines: {', '.join(KINDS)}")
        if self.engine == "ray" and not isinstance(self.spec, str):
            raise InputError(
                "model calls on the ray engine need a model spec (ollama:NAME, openai:NAME, "
                "gguf:PATH), not a backend object: each worker opens its own"
            )

    @property
    def label(self) -> str:
        """:func:`model_label` of the spec."""
        return model_label(self.spec)

    def replace(self, **changes: Any) -> CallSettings:
        """A copy with ``changes``."""
        return dataclasses.replace(self, **changes)

    def tokens(self, default: int) -> int:
        """``max_tokens``, or the route's ``default`` when unset."""
        return self.max_tokens if self.max_tokens is not None else default


_ALIASES = {"backend_options": "options", "cache_path": "cache"}
_FIELDS = frozenset(f.name for f in dataclasses.fields(CallSettings))


def call_settings(model: str | Backend | CallSettings, **changes: Any) -> CallSettings:
    """``model`` as :class:`CallSettings`, with ``changes`` applied.

    ``changes`` are :class:`CallSettings` fields (``backend_options`` and
    ``cache_path`` are read as ``options`` and ``cache``); a change of ``None``
    for ``options``, ``concurrency``, ``timeout_s`` or ``retries`` keeps what
    ``model`` has. An unknown name is a :class:`TypeError`.
    """
    fields: dict[str, Any] = {}
    for name, value in changes.items():
        name = _ALIASES.get(name, name)
        if name not in _FIELDS or name == "spec":
            raise TypeError(f"unknown model-call setting {name!r}")
        if value is None and name in ("options", "concurrency", "timeout_s", "retries"):
            continue
        fields[name] = value
    if isinstance(model, CallSettings):
        return model.replace(**fields) if fields else model
    return CallSettings(model, **fields)


@dataclass
class ModelCalls:
    """An open backend and reply cache (from :func:`open_backend`)."""

    settings: CallSettings
    backend: Backend
    cache: ReplyCache | None

    def runner(
        self,
        progress: Callable[[int, int, ChatReply], None] | None = None,
        *,
        seed: int = 0,
        stats: RunStats | None = None,
    ) -> Runner:
        """A :class:`Runner` with these settings' concurrency, timeout, retries and engine."""
        s = self.settings
        remote = None
        if s.engine == "ray":
            from ragmeter.engine import make_engine

            engine = make_engine("ray", s.engine_address)
            remote = functools.partial(
                engine.chat_calls,  # type: ignore[attr-defined]
                str(s.spec),
                dict(s.options),
                actor=ChatActor,
                actors=s.concurrency,
                timeout_s=s.timeout_s,
                retries=s.retries,
            )
        runner = Runner(
            self.backend,
            self.cache,
            concurrency=s.concurrency,
            timeout_s=s.timeout_s,
            retries=s.retries,
            progress=progress,
            seed=seed,
            remote=remote,
        )
        if stats is not None:
            runner.stats = stats
        return runner

    def run(
        self,
        requests: Sequence[ChatRequest],
        progress: Callable[[int, int, ChatReply], None] | None = None,
        *,
        seed: int = 0,
        stats: RunStats | None = None,
    ) -> list[ChatReply]:
        """One reply per request, in order (see :func:`ragmeter.llm.run_all`)."""
        return self.runner(progress, seed=seed, stats=stats).run(requests)


class ChatActor:
    """Holds one model backend on a Ray worker and answers requests one at a time.

    The Ray engine (:meth:`ragmeter.engine.RayEngine.chat_calls`) makes a pool of these;
    each runs its requests through its own :class:`Runner` (no cache: the caller caches
    each reply as it arrives) and returns the :class:`RunStats` counts of each call.
    """

    def __init__(self, spec: str, options: dict[str, Any], timeout_s: float, retries: int):
        self.backend = make_backend(spec, **options)
        self.runner = Runner(
            self.backend, None, concurrency=1, timeout_s=timeout_s, retries=retries
        )

    def call(self, index: int, request: ChatRequest):
        self.runner.stats = RunStats()
        reply = self.runner.run([request])[0]
        counts = {
            f.name: getattr(self.runner.stats, f.name)
            for f in dataclasses.fields(RunStats)
            if f.compare
        }
        return index, reply, counts


@contextlib.contextmanager
def open_backend(settings: CallSettings) -> Iterator[ModelCalls]:
    """Open the backend and the reply cache of ``settings``; close both on exit.

    What the caller handed in open (a backend object, a :class:`ReplyCache`)
    is used as is and left open.
    """
    with contextlib.ExitStack() as stack:
        backend = settings.spec
        if isinstance(backend, str):  # first: a bad spec leaves no cache file behind
            backend = make_backend(backend, **settings.options)
            stack.callback(backend.close)
        cache = settings.cache
        if cache is not None and not isinstance(cache, ReplyCache):
            cache = stack.enter_context(ReplyCache(cache))
        yield ModelCalls(settings, backend, cache)

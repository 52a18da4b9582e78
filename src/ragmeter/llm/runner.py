"""Send many chat requests: cached, concurrent, retried, in order.

:func:`run_all` (or :class:`Runner`, which keeps :class:`RunStats`) answers
each request from the cache when it can and otherwise calls the backend with
bounded concurrency. Timeouts, dropped connections, HTTP 429 and 5xx are
retried with exponential backoff and seeded jitter; other HTTP 4xx are not.
Each reply is cached as soon as it arrives, so an interrupted run resumes
where it stopped. With ``remote`` (a Ray engine's
:meth:`~ragmeter.engine.RayEngine.chat_calls`), the calls not in the cache run on a
cluster instead, and each reply is cached here as it comes back.
"""

from __future__ import annotations

import dataclasses
import random
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import CancelledError, Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field

from ragmeter.llm.cache import ReplyCache, request_key
from ragmeter.llm.client import (
    Backend,
    BackendRejected,
    BackendUnavailable,
    BadResponse,
    ChatReply,
    ChatRequest,
    RequestRejected,
    TransientError,
    build_reply,
    read_reply,
)

Progress = Callable[[int, int, ChatReply], None]
Remote = Callable[[Sequence[ChatRequest]], Iterator[tuple[int, ChatReply, dict[str, int]]]]


@dataclass
class RunStats:
    """Counts over every run of one :class:`Runner`.

    ``calls``: requests sent to the backend, retries included (cache hits
    cost none). ``answered``: calls that returned a completion. ``retries``:
    calls repeated after a transient failure. ``errors``: replies returned
    with an error.
    """

    calls: int = 0
    answered: int = 0
    cache_hits: int = 0
    retries: int = 0
    errors: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, **counts: int) -> None:
        with self._lock:
            for name, n in counts.items():
                setattr(self, name, getattr(self, name) + n)


class Runner:
    """Runs requests against one backend; see :func:`run_all` for the arguments."""

    def __init__(
        self,
        backend: Backend,
        cache: ReplyCache | None = None,
        concurrency: int = 4,
        timeout_s: float = 60.0,
        retries: int = 3,
        progress: Progress | None = None,
        backoff_s: float = 0.5,
        max_backoff_s: float = 30.0,
        seed: int = 0,
        remote: Remote | None = None,
    ) -> None:
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        if retries < 0:
            raise ValueError("retries must be 0 or more")
        self.backend = backend
        self.cache = cache
        self.concurrency = concurrency
        self.timeout_s = timeout_s
        self.retries = retries
        self.progress = progress
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s
        self.stats = RunStats()
        self.remote = remote
        self._rng = random.Random(seed)
        self._rng_lock = threading.Lock()

    # -- public ---------------------------------------------------------------------------

    def run(self, requests: Sequence[ChatRequest]) -> list[ChatReply]:
        """One reply per request, in request order.

        Raises :class:`BackendUnavailable` when the server stays unreachable
        and :class:`BackendRejected` when it refuses every request; an
        exception from ``progress`` stops the run the same way. Before
        raising, calls already in flight finish and are cached.
        """
        total = len(requests)
        replies: list[ChatReply | None] = [None] * total
        model_id = getattr(self.backend, "cache_model", self.backend.model)
        options = getattr(self.backend, "cache_options", None)
        groups: dict[str, list[int]] = {}
        for index, request in enumerate(requests):
            key = request_key(self.backend.kind, model_id, request, options)
            groups.setdefault(key, []).append(index)

        done = 0

        def deliver(indices: list[int], reply: ChatReply) -> None:
            nonlocal done
            for index in indices:
                replies[index] = reply
                done += 1
                if self.progress is not None:
                    self.progress(done, total, reply)

        todo: list[tuple[str, list[int]]] = []
        for key, indices in groups.items():
            hit = self.cache.get(key) if self.cache is not None else None
            if hit is None:
                todo.append((key, indices))
                continue
            self.stats.add(cache_hits=len(indices))
            deliver(indices, self._reread(hit, requests[indices[0]]))

        if todo:
            self._call_all(requests, todo, deliver)
        missing = [i for i, r in enumerate(replies) if r is None]
        if missing:
            raise RuntimeError(f"no reply for requests {missing[:5]}")
        return replies  # type: ignore[return-value]

    # -- internals ------------------------------------------------------------------------

    def _call_all(
        self,
        requests: Sequence[ChatRequest],
        todo: list[tuple[str, list[int]]],
        deliver: Callable[[list[int], ChatReply], None],
    ) -> None:
        if self.remote is not None:
            self._call_remote(requests, todo, deliver)
            return
        limit = self.backend.max_concurrency or self.concurrency
        workers = max(1, min(self.concurrency, limit, len(todo)))
        stop = threading.Event()
        fatal: BaseException | None = None
        pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="ragmeter-llm")
        futures: dict[Future[ChatReply | None], list[int]] = {}
        try:
            for key, indices in todo:
                fut = pool.submit(self._one, requests[indices[0]], key, stop)
                futures[fut] = indices
            for fut in as_completed(futures):
                try:
                    reply = fut.result()
                except CancelledError:
                    continue
                except (BackendUnavailable, BackendRejected) as exc:
                    if fatal is None:
                        fatal = exc
                    stop.set()
                    for other in futures:
                        other.cancel()
                    continue
                if reply is not None:
                    deliver(futures[fut], reply)
        finally:
            # on any exit (error, interrupt, progress callback raising): start nothing
            # new, let calls in flight finish and land in the cache
            stop.set()
            pool.shutdown(wait=True, cancel_futures=True)
        if fatal is not None:
            raise fatal

    def _call_remote(
        self,
        requests: Sequence[ChatRequest],
        todo: list[tuple[str, list[int]]],
        deliver: Callable[[list[int], ChatReply], None],
    ) -> None:
        """The calls of ``todo`` through ``remote``; each reply the model produced is
        cached as it comes back (as :meth:`_attempts` does), failures are not."""
        assert self.remote is not None
        for i, reply, counts in self.remote([requests[indices[0]] for _, indices in todo]):
            key, indices = todo[i]
            self.stats.add(**counts)
            if counts.get("answered") and self.cache is not None:
                self.cache.put(key, reply)
            deliver(indices, reply)

    def _one(self, request: ChatRequest, key: str, stop: threading.Event) -> ChatReply | None:
        try:
            return self._attempts(request, key, stop)
        except (BackendUnavailable, BackendRejected):
            stop.set()  # no other worker starts a call that would fail the same way
            raise

    def _attempts(self, request: ChatRequest, key: str, stop: threading.Event) -> ChatReply | None:
        attempt = 0
        while True:
            if stop.is_set():
                return None
            self.stats.add(calls=1)
            started = time.perf_counter()
            try:
                completion = self.backend.complete(request, self.timeout_s)
            except TransientError as exc:
                if attempt >= self.retries:
                    return self._give_up(request, exc, attempt + 1)
                self.stats.add(retries=1)
                stop.wait(self._delay(attempt, exc.retry_after))
                attempt += 1
                continue
            except RequestRejected as exc:
                return self._failed(str(exc))
            except BadResponse as exc:
                return self._failed(str(exc), text=exc.body)
            latency = time.perf_counter() - started
            reply = build_reply(request, completion, self.backend, latency)
            if self.cache is not None:
                self.cache.put(key, reply)
            self.stats.add(
                answered=1,
                tokens_in=reply.tokens_in,
                tokens_out=reply.tokens_out,
                errors=int(reply.error is not None),
            )
            return reply

    def _give_up(self, request: ChatRequest, exc: TransientError, tries: int) -> ChatReply:
        if exc.kind == "connect":
            where = self.backend.base_url or self.backend.kind
            saved = ""
            if self.cache is not None:
                saved = f"; finished replies are cached in {self.cache.path}, rerun to resume"
            raise BackendUnavailable(
                f"{self.backend.kind} server at {where} is unreachable after {tries} tries "
                f"({exc}); {self._hint()}{saved}"
            )
        prefix = "timeout: " if exc.kind == "timeout" else ""
        return self._failed(f"{prefix}{exc} (gave up after {tries} tries)")

    def _hint(self) -> str:
        return getattr(self.backend, "unreachable_hint", "check that the server is running")

    def _failed(self, error: str, text: str = "") -> ChatReply:
        self.stats.add(errors=1)
        return ChatReply(
            text=text, backend=self.backend.kind, model=self.backend.model, error=error
        )

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        with self._rng_lock:
            jitter = 1.0 + 0.25 * self._rng.random()
        delay = min(self.max_backoff_s, self.backoff_s * (2**attempt)) * jitter
        if retry_after is not None:
            delay = max(delay, min(retry_after, self.max_backoff_s))
        return delay

    @staticmethod
    def _reread(reply: ChatReply, request: ChatRequest) -> ChatReply:
        """A cached reply parsed again, so parser fixes reach old entries."""
        if request.json_schema is None:
            return dataclasses.replace(reply, parsed=None, error=None)
        parsed, error = read_reply(request, reply.text)
        return dataclasses.replace(reply, parsed=parsed, error=error)


def run_all(
    backend: Backend,
    requests: Sequence[ChatRequest],
    cache: ReplyCache | None = None,
    concurrency: int = 4,
    timeout_s: float = 60.0,
    retries: int = 3,
    progress: Progress | None = None,
    *,
    backoff_s: float = 0.5,
    seed: int = 0,
    stats: RunStats | None = None,
) -> list[ChatReply]:
    """One reply per request, in order; cached replies cost no call.

    ``concurrency`` bounds parallel calls (a backend may lower it),
    ``timeout_s`` bounds each call, ``retries`` is how many times a call that
    timed out, lost its connection or got HTTP 429/5xx is repeated, waiting
    ``backoff_s * 2**attempt`` seconds plus up to 25% jitter (seeded by
    ``seed``). ``progress(done, total, reply)`` is called in the calling thread
    after each reply; raising from it stops the run. Pass ``stats`` to read the
    counts afterwards.

    A reply that could not be had carries ``error`` (``timeout: ...``,
    ``http 503 ...``, ``rejected: ...``, ``unparseable: ...``); only replies
    the model produced are cached, so errors are retried on the next run.
    Raises :class:`BackendUnavailable` if the server stays unreachable.
    """
    runner = Runner(
        backend,
        cache=cache,
        concurrency=concurrency,
        timeout_s=timeout_s,
        retries=retries,
        progress=progress,
        backoff_s=backoff_s,
        seed=seed,
    )
    if stats is not None:
        runner.stats = stats
    return runner.run(requests)


def chat(
    backend: Backend, request: ChatRequest, cache: ReplyCache | None = None, **kw
) -> ChatReply:
    """One request through :func:`run_all`."""
    return run_all(backend, [request], cache=cache, **kw)[0]

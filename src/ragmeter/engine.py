"""Where the heavy, independent work of a run is done: this machine or a Ray cluster.

An engine runs one function over a list of independent tasks and returns the results in
task order, so what a run computes never depends on the engine or on the number of
workers. Two engines exist:

* ``local`` (the default): worker processes on this machine (``ProcessPoolExecutor``);
  ``workers`` defaults to the CPUs this process may use, or ``$RAGMETER_WORKERS``.
* ``ray``: Ray tasks on a cluster (``address = "auto"`` for the cluster this machine
  belongs to, ``ray://host:10001`` for a remote one, ``""`` to start Ray on this machine).
  Ray is imported only when this engine is asked for (``pip install 'ragmeter[ray]'``).

What goes through the engine: sentence segmentation of the corpus (the costly part of
chunking), the encoding of chunk texts for dense retrieval, and, on Ray, model calls (the
reader, judges, question generation and the audit's model checks: an actor pool, each actor
with its own backend, a GGUF model loaded once per actor). Results come back batch by batch
or reply by reply; the caller stores each (the embedding cache and the reply cache commit
it) as it arrives, so a lost worker costs only its own batch, which Ray retries.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from typing import Any, Protocol, TypeVar

from ragmeter.errors import InputError

T = TypeVar("T")
R = TypeVar("R")
Progress = Callable[[int, int], None]

KINDS = ("local", "ray")


class Engine(Protocol):
    """Runs independent tasks and returns their results in task order."""

    name: str
    workers: int

    def map(
        self,
        fn: Callable[[T], R],
        tasks: Sequence[T],
        progress: Progress | None = None,
        meanwhile: Callable[[], None] | None = None,
        on_result: Callable[[int, R], None] | None = None,
    ) -> list[R]:
        """``[fn(t) for t in tasks]``; ``meanwhile()`` runs in this process while the
        workers work (once the tasks are sent), so the caller's own work overlaps theirs;
        ``on_result(i, result)`` runs in this process as each task's result comes back
        (to store it before the others finish)."""
        ...

    def describe(self) -> dict[str, Any]: ...


def available_cpus() -> int:
    """CPUs this process may run on (its affinity mask where the OS has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - macOS, Windows
        return os.cpu_count() or 1


def count_from_env(name: str) -> int | None:
    """``$name`` as a whole number of at least 1, or None when unset; anything else is
    one line naming the variable."""
    value = os.environ.get(name, "").strip()
    if not value:
        return None
    try:
        n = int(value)
    except ValueError:
        raise InputError(f"{name} must be a whole number, got {value!r}") from None
    if n < 1:
        raise InputError(f"{name} must be at least 1, got {n}")
    return n


def workers_from_env() -> int | None:
    """``$RAGMETER_WORKERS`` as a number of workers (at least 1), or None when unset."""
    return count_from_env("RAGMETER_WORKERS")


THREADS: int | None = None
"""Threads :func:`thread_map` uses; None: ``$RAGMETER_THREADS``, else one per CPU this
process may run on, at most 8."""


def thread_count() -> int:
    """:data:`THREADS`, else ``$RAGMETER_THREADS``, else the available CPUs (at most 8)."""
    if THREADS is not None:
        return max(1, THREADS)
    return count_from_env("RAGMETER_THREADS") or min(8, available_cpus())


def thread_map(fn: Callable[[T], R], items: Iterable[T], threads: int | None = None) -> Iterator[R]:
    """``fn`` over ``items`` in order, on ``threads`` threads (:func:`thread_count`),
    for work that lets go of the interpreter (numpy's): results come in the order of
    ``items``, and at most two items a thread are taken ahead, so memory stays bounded
    when the items are large (blocks of a file). One thread: plain ``map``."""
    n = thread_count() if threads is None else max(1, threads)
    if n == 1:
        yield from map(fn, items)
        return
    with ThreadPoolExecutor(n) as pool:
        pending: deque[Future[R]] = deque()
        for item in items:
            pending.append(pool.submit(fn, item))
            if len(pending) >= 2 * n:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()


def _start_method() -> str:
    """``fork`` on Linux: a worker starts in milliseconds, and unlike ``spawn`` it never
    re-imports the caller's main script (which would run an unguarded script again). The
    tasks sent to workers are pure functions that touch no lock of the parent. Elsewhere
    ``spawn``, the platform default."""
    if sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods():
        return "fork"
    return "spawn"


class LocalEngine:
    """Worker processes on this machine; one worker means everything runs in this process."""

    name = "local"

    def __init__(self, workers: int | None = None) -> None:
        if workers is not None and (isinstance(workers, bool) or int(workers) < 1):
            raise InputError(f"engine workers must be at least 1, got {workers!r}")
        self.workers = int(workers or workers_from_env() or available_cpus())

    def map(
        self,
        fn: Callable[[T], R],
        tasks: Sequence[T],
        progress: Progress | None = None,
        meanwhile: Callable[[], None] | None = None,
        on_result: Callable[[int, R], None] | None = None,
    ) -> list[R]:
        tasks = list(tasks)
        results: list[R] = []

        def arrived(result: R) -> None:
            results.append(result)
            if on_result is not None:
                on_result(len(results) - 1, result)
            if progress is not None:
                progress(len(results), len(tasks))

        if self.workers <= 1 or len(tasks) <= 1:
            if meanwhile is not None:
                meanwhile()
            for task in tasks:
                arrived(fn(task))
            return results
        ctx = multiprocessing.get_context(_start_method())
        with ProcessPoolExecutor(min(self.workers, len(tasks)), mp_context=ctx) as pool:
            found = pool.map(fn, tasks)  # every task is sent now
            if meanwhile is not None:
                meanwhile()
            for result in found:
                arrived(result)
        return results

    @property
    def shares_memory(self) -> bool:
        """Whether the workers :meth:`map` starts are forked from this process and so see
        its memory as it was when the tasks were sent (Linux)."""
        return self.workers > 1 and _start_method() == "fork"

    def describe(self) -> dict[str, Any]:
        return {"kind": "local", "workers": self.workers}


def _check_reachable(address: str, timeout_s: float = 5.0) -> None:
    """A ``host:port`` (or ``ray://host:port``) address must take a connection within
    ``timeout_s``; Ray itself retries a bad one for minutes, then fails with a traceback."""
    import socket

    if address in ("", "auto"):
        return
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise InputError(
            f"[engine] address {address!r} is not host:port or ray://host:port; "
            'use "auto", "", or the address `ray start --head` printed'
        )
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_s).close()
    except OSError as exc:
        raise InputError(
            f"cannot reach a Ray cluster at address {address!r} ({exc.strerror or exc}); start "
            'one with `ray start --head`, give its address, or use address = "" to run Ray '
            "on this machine"
        ) from None


class RayEngine:
    """Ray tasks on a cluster; results are gathered in task order.

    ``address``: ``"auto"`` (the running cluster this machine belongs to), a cluster address
    (``"ray://head:10001"``, ``"head:6379"``), or ``""`` to start Ray on this machine (or join
    ``$RAY_ADDRESS``). ``init`` options go to ``ray.init``. A Ray that is already initialised
    in this process is used as it is.
    """

    name = "ray"

    def __init__(self, address: str = "auto", **init: Any) -> None:
        try:
            import ray
        except ImportError:
            raise InputError(
                "the ray engine needs Ray: pip install 'ragmeter[ray]' (or set "
                '[engine] kind = "local")'
            ) from None
        self._ray = ray
        self.address = address
        if not ray.is_initialized():
            _check_reachable(address)
            options = {"include_dashboard": False, "log_to_driver": False, **init}
            try:
                # "" starts Ray here (or joins $RAY_ADDRESS); never a cluster that a file
                # left by an earlier `ray start` names
                here = os.environ.get("RAY_ADDRESS") or "local"
                ray.init(address=address or here, **options)
            except ConnectionError as exc:
                raise InputError(
                    f"cannot reach a Ray cluster at address {address!r} ({exc}); start one "
                    'with `ray start --head`, give its address, or use address = "" to run '
                    "Ray on this machine"
                ) from None
        self.workers = max(1, int(ray.cluster_resources().get("CPU", 1)))
        self.gpus = int(ray.cluster_resources().get("GPU", 0))
        self._remote: dict[Any, Any] = {}

    def _as_remote(self, fn: Callable, **options: Any):
        key = (fn, tuple(sorted(options.items())))
        if key not in self._remote:
            # Lost workers are retried: a task is a pure function of its input.
            self._remote[key] = self._ray.remote(max_retries=3, **options)(fn)
        return self._remote[key]

    def map(
        self,
        fn: Callable[[T], R],
        tasks: Sequence[T],
        progress: Progress | None = None,
        meanwhile: Callable[[], None] | None = None,
        on_result: Callable[[int, R], None] | None = None,
        num_gpus: float = 0,
    ) -> list[R]:
        ray = self._ray
        remote = self._as_remote(fn, num_gpus=num_gpus) if num_gpus else self._as_remote(fn)
        refs = [remote.remote(task) for task in tasks]
        if meanwhile is not None:
            meanwhile()
        position = {ref: i for i, ref in enumerate(refs)}
        results: list[Any] = [None] * len(refs)
        pending = list(refs)
        done = 0
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            for ref in ready:
                results[position[ref]] = ray.get(ref)
                if on_result is not None:
                    on_result(position[ref], results[position[ref]])
                done += 1
            if progress is not None:
                progress(done, len(refs))
        return results

    def map_unordered(
        self,
        fn: Callable[[T], R],
        tasks: Sequence[T],
        num_gpus: float = 0,
    ):
        """Yield ``(task index, result)`` as tasks finish (for callers that store each one)."""
        ray = self._ray
        remote = self._as_remote(fn, num_gpus=num_gpus) if num_gpus else self._as_remote(fn)
        refs = [remote.remote(task) for task in tasks]
        position = {ref: i for i, ref in enumerate(refs)}
        pending = list(refs)
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            for ref in ready:
                yield position[ref], ray.get(ref)

    def _actor_pool(self, actor: type, args: tuple, tasks: Sequence[Any], most: int, method: str):
        """Yield what ``actor.<method>(index, task)`` returns for each task, as they finish.

        At most ``most`` actors of class ``actor`` are made, each from ``args`` once (on a
        GPU each when the cluster has them), and they take the tasks in turn; lost actors
        are restarted and their tasks retried.
        """
        from ray.util import ActorPool

        ray = self._ray
        per_actor = {"num_gpus": 1} if self.gpus else {"num_cpus": 1}
        actor_cls = ray.remote(max_restarts=2, max_task_retries=2, **per_actor)(actor)
        n_actors = max(1, min(len(tasks), most, self.gpus or self.workers))
        made = [actor_cls.remote(*args) for _ in range(n_actors)]
        pool = ActorPool(made)
        try:
            yield from pool.map_unordered(
                lambda a, task: getattr(a, method).remote(*task), list(enumerate(tasks))
            )
        finally:
            for handle in made:
                ray.kill(handle)

    def encode_batches(self, encoder: Any, batches: Sequence[Sequence[str]]):
        """Yield ``(batch index, vectors)`` as an actor pool encodes ``batches``.

        Each actor loads the model once (on a GPU when the cluster has them) and encodes
        batch after batch. Batches come back in the order they finish: the caller stores
        each one at once (the embedding cache commits it), so a lost worker costs only the
        batches it held, which Ray retries on a restarted actor.
        """
        device = "cuda" if self.gpus else None
        args = (encoder, device)
        yield from self._actor_pool(_EncoderActor, args, batches, len(batches), "encode")

    def chat_calls(
        self,
        spec: str,
        options: dict[str, Any],
        requests: Sequence[Any],
        *,
        actor: type,
        actors: int,
        timeout_s: float,
        retries: int,
    ):
        """Yield ``(request index, reply, counts)`` as an actor pool answers ``requests``.

        ``actor`` is the class that holds a model on a worker
        (:class:`ragmeter.llm.settings.ChatActor`, handed in so that this module never
        imports the model code above it): each of at most ``actors`` actors is made once
        from ``(spec, options, timeout_s, retries)`` (a GGUF model is loaded once per
        actor, on a GPU when the cluster has them) and answers one request per
        ``call(index, request)``. An unreachable server
        (:class:`ragmeter.errors.ServerUnavailable`) is raised here as it is locally.
        """
        args = (spec, dict(options), timeout_s, retries)
        yield from self._actor_pool(actor, args, requests, actors, "call")

    def describe(self) -> dict[str, Any]:
        return {
            "kind": "ray",
            "address": self.address,
            "cpus": self.workers,
            "gpus": self.gpus,
            "library": f"ray {self._ray.__version__}",
        }


class _EncoderActor:
    """Holds one encoder (its model loaded once) on a Ray worker."""

    def __init__(self, encoder: Any, device: str | None = None) -> None:
        if device is not None and hasattr(encoder, "device"):
            encoder.device = device
        self.encoder = encoder

    def encode(self, index: int, texts: Sequence[str]):
        import numpy as np

        return index, np.asarray(self.encoder.encode(list(texts)), dtype=np.float32)


def make_engine(kind: str = "local", address: str = "auto", workers: int | None = None) -> Engine:
    """An engine by kind: ``local`` or ``ray`` (Ray is imported only for ``ray``)."""
    if kind == "local":
        return LocalEngine(workers)
    if kind == "ray":
        return RayEngine(address)
    raise InputError(f"unknown engine kind {kind!r}; valid kinds: {', '.join(KINDS)}")


_DEFAULT: LocalEngine | None = None


def default_engine() -> Engine:
    """The local engine with the default number of workers."""
    global _DEFAULT
    if _DEFAULT is None or _DEFAULT.workers != LocalEngine().workers:
        _DEFAULT = LocalEngine()
    return _DEFAULT

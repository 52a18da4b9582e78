"""Rank fusion: RRF and weighted min-max fusion, hand-computed."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ragmeter.errors import InputError
from ragmeter.retrieval.base import Ranking, Retriever
from ragmeter.retrieval.bm25 import BM25Retriever
from ragmeter.retrieval.hybrid import (
    HybridRetriever,
    drop_unmatched,
    minmax,
    rrf_fuse,
    weighted_fuse,
)
from ragmeter.retrieval.registry import make_retriever


def ranking(ids, scores=None) -> Ranking:
    ids = np.atleast_2d(np.asarray(ids, dtype=np.int64))
    if scores is None:
        scores = -np.arange(ids.shape[1], dtype=np.float64)[None, :].repeat(ids.shape[0], 0)
    return Ranking(ids=ids, scores=np.atleast_2d(np.asarray(scores, dtype=np.float64)))


class Static(Retriever):
    """A retriever whose ranking is fixed; records the k it was asked for."""

    def __init__(self, name, ids, scores=None):
        self.name = name
        self.full = ranking(ids, scores)
        self.asked: list[int] = []

    def index(self, texts):
        self.n = len(texts)

    def rank(self, questions, k):
        self.asked.append(k)
        ids, scores = self.full.ids[:, :k], self.full.scores[:, :k]
        if ids.shape[1] < k:
            pad = k - ids.shape[1]
            ids = np.hstack([ids, np.full((ids.shape[0], pad), -1)])
            scores = np.hstack([scores, np.full((scores.shape[0], pad), -np.inf)])
        return Ranking(ids=ids, scores=scores)


def test_rrf_hand_computed():
    a = ranking([[0, 1, 2]])
    b = ranking([[2, 0, 3]])
    fused = rrf_fuse([a, b], k=4, rrf_k=60)
    # 0: 1/61 + 1/62; 2: 1/63 + 1/61; 1: 1/62; 3: 1/63
    assert fused.ids.tolist() == [[0, 2, 1, 3]]
    np.testing.assert_allclose(
        fused.scores[0], [1 / 61 + 1 / 62, 1 / 61 + 1 / 63, 1 / 62, 1 / 63], rtol=0, atol=1e-15
    )


def test_rrf_constant_changes_the_order():
    # With k=0 the rank-1 item of one side beats an item ranked 2 and 3.
    a = ranking([[5, 7, 9]])
    b = ranking([[8, 9, 7]])
    small = rrf_fuse([a, b], k=5, rrf_k=0)
    # 5: 1; 8: 1; 7: 1/2 + 1/3; 9: 1/3 + 1/2
    assert small.ids.tolist() == [[5, 8, 7, 9, -1]]
    np.testing.assert_allclose(small.scores[0, :4], [1, 1, 5 / 6, 5 / 6])
    assert small.scores[0, 4] == -np.inf
    large = rrf_fuse([a, b], k=4, rrf_k=60)
    # 7: 1/62 + 1/63 = 0.03200; 9 same; 5: 1/61 = 0.01639 -> items in both lists win.
    assert large.ids.tolist() == [[7, 9, 5, 8]]


def test_rrf_ties_break_by_index():
    a = ranking([[4, 1]])
    b = ranking([[3, 0]])
    fused = rrf_fuse([a, b], k=4, rrf_k=60)
    assert fused.ids.tolist() == [[3, 4, 0, 1]]
    assert fused.scores[0, 0] == fused.scores[0, 1] == 1 / 61


def test_rrf_skips_padding_and_handles_several_questions():
    a = ranking([[0, -1], [1, 2]], [[1.0, -np.inf], [3.0, 2.0]])
    b = ranking([[-1, -1], [2, 1]], [[-np.inf, -np.inf], [9.0, 8.0]])
    fused = rrf_fuse([a, b], k=3, rrf_k=1)
    assert fused.ids.tolist() == [[0, -1, -1], [1, 2, -1]]
    np.testing.assert_allclose(fused.scores[0, 0], 1 / 2)
    np.testing.assert_allclose(fused.scores[1, :2], [1 / 2 + 1 / 3, 1 / 3 + 1 / 2])


def test_minmax():
    np.testing.assert_allclose(minmax(np.array([10.0, 6.0, 2.0])), [1.0, 0.5, 0.0])
    np.testing.assert_allclose(minmax(np.array([3.0, 3.0])), [1.0, 1.0])


def test_weighted_hand_computed():
    a = ranking([[0, 1, 2]], [[10.0, 6.0, 2.0]])  # -> 1, .5, 0
    b = ranking([[2, 3, 0]], [[0.9, 0.5, 0.1]])  # -> 1, .5, 0
    fused = weighted_fuse([a, b], k=4, weights=[0.7, 0.3])
    # 0: .7*1 + .3*0 = .7; 1: .7*.5 = .35; 2: .7*0 + .3*1 = .3; 3: .3*.5 = .15
    assert fused.ids.tolist() == [[0, 1, 2, 3]]
    np.testing.assert_allclose(fused.scores[0], [0.7, 0.35, 0.3, 0.15])


def test_weighted_scale_of_each_side_does_not_matter():
    a = ranking([[0, 1, 2]], [[10.0, 6.0, 2.0]])
    b = ranking([[2, 3, 0]], [[0.9, 0.5, 0.1]])
    a_scaled = ranking([[0, 1, 2]], [[1000.0, 600.0, 200.0]])
    one = weighted_fuse([a, b], k=4, weights=[0.5, 0.5])
    two = weighted_fuse([a_scaled, b], k=4, weights=[0.5, 0.5])
    np.testing.assert_array_equal(one.ids, two.ids)
    np.testing.assert_allclose(one.scores, two.scores)


def test_weighted_ties_break_by_index_and_equal_scores_normalise_to_one():
    a = ranking([[5]], [[0.2]])
    b = ranking([[2]], [[40.0]])
    fused = weighted_fuse([a, b], k=2, weights=[0.5, 0.5])
    assert fused.ids.tolist() == [[2, 5]]
    np.testing.assert_allclose(fused.scores[0], [0.5, 0.5])


def test_hybrid_retriever_fuses_each_sides_top_depth():
    a = Static("a", [[0, 1, 2]])
    b = Static("b", [[3, 4, 2]])
    h = HybridRetriever(of=[a, b], depth=2, k=60)
    h.index(["t"] * 5)
    out = h.rank(["q"], 2)
    assert a.asked == [2] and b.asked == [2]
    # item 2 is third on both sides, outside depth 2: it gets nothing.
    assert out.ids.tolist() == [[0, 3]]
    out = h.rank(["q"], 5)
    assert a.asked[-1] == 5  # depth is raised to k
    assert out.ids.tolist() == [[2, 0, 3, 1, 4]]


def test_hybrid_weighted_alpha_weights_first_retriever():
    a = Static("a", [[0, 1]], [[2.0, 1.0]])
    b = Static("b", [[1, 0]], [[2.0, 1.0]])
    for alpha, first in ((0.8, 0), (0.2, 1)):
        h = HybridRetriever(of=[a, b], method="weighted", alpha=alpha)
        h.index(["x", "y"])
        out = h.rank(["q"], 2)
        assert out.ids[0, 0] == first
        np.testing.assert_allclose(out.scores[0], [max(alpha, 1 - alpha), min(alpha, 1 - alpha)])


def test_hybrid_from_registry_matches_manual_fusion():
    texts = [
        "bloom filters answer set membership with false positives",
        "raft elects a leader with randomized election timeouts",
        "a write ahead log makes database writes durable",
        "consistent hashing maps keys onto a ring of nodes",
        "cuckoo filters support deletion unlike bloom filters",
    ]
    spec = {
        "name": "hyb",
        "kind": "hybrid",
        "of": ["bm25", {"name": "bm25-flat", "kind": "bm25", "k1": 0.5, "b": 0.0}],
        "k": 60,
    }
    h = make_retriever(spec)
    assert h.name == "hyb" and [r.name for r in h.retrievers] == ["bm25", "bm25-flat"]
    h.index(texts)
    questions = ["which filters allow deletion", "how is a leader elected"]
    out = h.rank(questions, 3)
    sides = [r.rank(questions, 100) for r in h.retrievers]
    # BM25 gives 0 to texts sharing no word with the question: those are not fused.
    manual = rrf_fuse([drop_unmatched(s, 0.0) for s in sides], k=3, rrf_k=60)
    np.testing.assert_array_equal(out.ids, manual.ids)
    assert out.ids[0, 0] == 4 and out.ids[1, 0] == 1
    keep = make_retriever({**spec, "keep_unmatched": True})
    keep.index(texts)
    np.testing.assert_array_equal(keep.rank(questions, 3).ids, rrf_fuse(sides, k=3).ids)


def test_unmatched_texts_get_no_rank():
    lexical = Static("lex", [[2, 0, 1, 3]], [[4.0, 0.0, 0.0, 0.0]])
    lexical.unmatched_score = 0.0
    semantic = Static("sem", [[3, 2, 0, 1]], [[0.9, 0.8, 0.1, 0.0]])
    h = HybridRetriever(of=[lexical, semantic])
    h.index(["t"] * 4)
    out = h.rank(["q"], 4)
    # 2: 1/61 + 1/62; 3: 1/61 (lexical rank 4 dropped); 0: 1/63; 1: 1/64
    assert out.ids.tolist() == [[2, 3, 0, 1]]
    np.testing.assert_allclose(out.scores[0], [1 / 61 + 1 / 62, 1 / 61, 1 / 63, 1 / 64])
    kept = HybridRetriever(of=[lexical, semantic], keep_unmatched=True)
    # with them: 2: 1/61 + 1/62; 3: 1/64 + 1/61; 0: 1/62 + 1/63; 1: 1/63 + 1/64
    np.testing.assert_allclose(
        kept.rank(["q"], 4).scores[0],
        sorted([1 / 61 + 1 / 62, 1 / 64 + 1 / 61, 1 / 62 + 1 / 63, 1 / 63 + 1 / 64], reverse=True),
    )


@pytest.mark.parametrize(
    "spec",
    [
        {"kind": "hybrid", "of": ["bm25"]},
        {"kind": "hybrid", "of": "bm25"},
        {"kind": "hybrid", "of": ["bm25", "bm25"], "method": "max"},
        {"kind": "hybrid", "of": ["bm25", "bm25"], "alpha": 1.5},
        {"kind": "hybrid", "of": ["bm25", "bm25"], "depth": 0},
        {"kind": "hybrid", "of": ["bm25", "nope"]},
        {"kind": "hybrid", "of": ["bm25", "bm25"], "bogus": 1},
        {"kind": "hybrid", "of": ["bm25", {"kind": "http", "url": "http://127.0.0.1:9/s"}]},
    ],
)
def test_bad_hybrid_specs_are_input_errors(spec):
    with pytest.raises(InputError):
        make_retriever(spec)


# ``ragmeter.retrieval.hybrid``: the settings' edges, the default weight, progress handed to
# both parts, and min-max normalisation of nothing.


def _two():
    return [BM25Retriever(name="a"), BM25Retriever(name="b")]


def test_settings_at_their_edges():
    assert HybridRetriever(of=_two(), method="weighted").describe()["alpha"] == 0.5
    for alpha in (0.0, 1.0):
        assert HybridRetriever(of=_two(), method="weighted", alpha=alpha).alpha == alpha
    with pytest.raises(InputError, match="alpha must be between 0 and 1"):
        HybridRetriever(of=_two(), alpha=1.5)
    assert HybridRetriever(of=_two(), k=0).rrf_k == 0.0
    for bad in (-1, math.inf, "60"):
        with pytest.raises(InputError, match="k must be a number >= 0"):
            HybridRetriever(of=_two(), k=bad)


def test_progress_reaches_both_parts():
    got = []

    class Part(BM25Retriever):
        def follow_progress(self, progress, label):
            got.append((self.name, progress, label))

    def hook(stage, done, total):
        return None

    HybridRetriever(of=[Part(name="a"), Part(name="b")]).follow_progress(hook, "embedding")
    assert got == [("a", hook, "embedding"), ("b", hook, "embedding")]


def test_minmax_of_nothing_and_a_side_with_nothing():
    empty = minmax(np.array([]))
    assert isinstance(empty, np.ndarray) and empty.size == 0
    full = Ranking(ids=np.array([[0, 1]]), scores=np.array([[2.0, 1.0]]))
    none = Ranking(ids=np.array([[-1, -1]]), scores=np.array([[-np.inf, -np.inf]]))
    fused = weighted_fuse([full, none], 2, weights=[0.5, 0.5])
    assert fused.ids.tolist() == [[0, 1]] and fused.scores.tolist() == [[0.5, 0.0]]

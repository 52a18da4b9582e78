"""``ragmeter.retrieval.hybrid``: the settings' edges, the default weight, progress handed
to both parts, and min-max normalisation of nothing."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ragmeter.errors import InputError
from ragmeter.retrieval.base import Ranking
from ragmeter.retrieval.bm25 import BM25Retriever
from ragmeter.retrieval.hybrid import HybridRetriever, minmax, weighted_fuse


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

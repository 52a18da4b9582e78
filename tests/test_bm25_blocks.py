"""BM25's score matrix built in blocks of texts equals the matrix built in one block."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragmeter.retrieval import bm25 as bm25_mod
from ragmeter.retrieval.bm25 import BM25Retriever

texts_of_ids = st.lists(st.lists(st.integers(0, 12), max_size=15), min_size=1, max_size=10)


def _build(texts: list[list[int]], key_block: int) -> dict:
    lengths = np.array([len(t) for t in texts], dtype=np.int64)
    ids = np.array([i for t in texts for i in t], dtype=np.int32)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(bm25_mod, "KEY_BLOCK", key_block)
        return bm25_mod.build_scores(ids, lengths, 14, 1.5, 0.75)


@settings(max_examples=150, deadline=None)
@given(texts_of_ids, st.integers(1, 20))
def test_score_matrix_is_the_same_in_blocks_of_any_size(texts, key_block):
    if not any(texts):
        return
    whole = _build(texts, 1 << 30)
    got = _build(texts, key_block)
    assert got["num_docs"] == whole["num_docs"] == len(texts)
    for name in ("data", "indices", "indptr"):
        assert got[name].dtype == whole[name].dtype
        assert np.array_equal(got[name], whole[name]), name


def test_blocks_hold_whole_texts_and_keep_each_terms_texts_in_order():
    # term 3 is in every text; with one text a block its column still lists texts 0, 1, 2
    texts = [[3, 1, 3], [3, 2], [5, 3, 3, 3]]
    got = _build(texts, 1)
    a, b = got["indptr"][3], got["indptr"][4]
    assert got["indices"][a:b].tolist() == [0, 1, 2]
    assert np.diff(got["indptr"]).tolist()[:6] == [0, 1, 1, 3, 0, 1]
    assert np.array_equal(got["data"], _build(texts, 1 << 30)["data"])


def test_rankings_unchanged_when_the_index_is_built_in_small_blocks(monkeypatch):
    docs = [
        "the cat sat on the mat with another cat",
        "dogs chase cats across the yard",
        "a mat for the dog and the cat",
        "nothing here but words",
    ]
    questions = ["cat on a mat", "dog yard", "words"]
    ref = BM25Retriever()
    ref.index(docs)
    want = ref.rank(questions, 4)
    monkeypatch.setattr(bm25_mod, "KEY_BLOCK", 2)
    small = BM25Retriever()
    small.index(docs)
    got = small.rank(questions, 4)
    assert np.array_equal(got.ids, want.ids)
    assert [s.hex() for s in got.scores.ravel()] == [s.hex() for s in want.scores.ravel()]


def test_token_starts_are_kept_in_32_bits():
    starts, ids, at = bm25_mod._TokenTable("en").doc("Alpha beta, gamma delta epsilon")
    assert starts.dtype == np.int32 and ids.dtype == np.int32 and at is None
    assert starts.tolist() == [0, 6, 12, 18, 24]

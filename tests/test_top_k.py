"""top_k: the highest scores first, ties broken by index, also at the cut.

The reference is ``np.lexsort((index, -score))``: score high to low, then index
low to high. Score matrices with few distinct values make ties at the k-th place
the common case (an argpartition alone cuts inside such a tie arbitrarily).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from ragmeter.retrieval.base import Ranking, top_k


def reference(scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Top k per row by np.lexsort, padded with -1 / -inf to width k."""
    scores = np.atleast_2d(np.asarray(scores, dtype=np.float64))
    n_q, n = scores.shape
    ids = np.full((n_q, k), -1, dtype=np.int64)
    top = np.full((n_q, k), -np.inf)
    for q in range(n_q):
        order = np.lexsort((np.arange(n), -scores[q]))[:k]
        ids[q, : len(order)] = order
        top[q, : len(order)] = scores[q, order]
    return ids, top


def check(scores: np.ndarray, k: int) -> None:
    got = top_k(scores, k)
    ids, top = reference(scores, k)
    assert isinstance(got, Ranking)
    assert got.ids.dtype == np.int64 and got.scores.dtype == np.float64
    np.testing.assert_array_equal(got.ids, ids)
    np.testing.assert_array_equal(got.scores, top)


def test_ties_at_the_cut_keep_the_lowest_indices():
    # four items tied at 1.0 for the last two places: indices 1 and 3 come first
    scores = np.array([[0.0, 1.0, 2.0, 1.0, 1.0, 1.0]])
    ranking = top_k(scores, 3)
    assert ranking.ids.tolist() == [[2, 1, 3]]
    assert ranking.scores.tolist() == [[2.0, 1.0, 1.0]]
    # all tied: the first k in index order
    assert top_k(np.ones((2, 7)), 4).ids.tolist() == [[0, 1, 2, 3]] * 2


def test_random_tie_heavy_matrices_match_lexsort():
    rng = np.random.default_rng(16)
    for _ in range(300):
        n_q = int(rng.integers(1, 5))
        n = int(rng.integers(1, 30))
        levels = int(rng.integers(1, 4))  # 1 to 3 distinct values: ties everywhere
        scores = rng.integers(0, levels, size=(n_q, n)).astype(np.float64)
        for k in (1, 2, 3, n - 1, n, n + 2):
            if k >= 1:
                check(scores, k)


@given(
    st.lists(st.lists(st.sampled_from([-1.5, 0.0, 0.5, 2.0]), min_size=3, max_size=3), min_size=1),
    st.integers(1, 6),
)
@example([[0.0, 0.0, 0.0]], 1)
@example([[2.0, 0.5, 2.0]], 2)
def test_any_small_matrix_matches_lexsort(rows, k):
    check(np.array(rows), k)


def test_fewer_items_than_k_are_padded():
    ranking = top_k(np.array([[0.2, 0.9]]), 4)
    assert ranking.ids.tolist() == [[1, 0, -1, -1]]
    assert ranking.scores[0, :2].tolist() == [0.9, 0.2]
    assert np.all(np.isneginf(ranking.scores[0, 2:]))
    # exactly k items: no padding
    assert top_k(np.array([[0.2, 0.9]]), 2).ids.tolist() == [[1, 0]]
    # an empty index: every place is padding
    empty = top_k(np.zeros((3, 0)), 2)
    assert empty.ids.tolist() == [[-1, -1]] * 3 and np.all(np.isneginf(empty.scores))


def test_one_question_as_a_vector_and_negative_scores():
    ranking = top_k(np.array([-3.0, -1.0, -2.0, -1.0]), 2)
    assert ranking.ids.tolist() == [[1, 3]]
    assert ranking.scores.tolist() == [[-1.0, -1.0]]


@pytest.mark.parametrize("k", [1, 5, 49, 50, 60])
def test_wide_rows(k):
    rng = np.random.default_rng(k)
    check(rng.integers(0, 2, size=(3, 50)).astype(np.float64), k)

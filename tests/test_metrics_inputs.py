"""score_questions' inputs: whole numbers in any numeric dtype, nothing else."""

from __future__ import annotations

import numpy as np
import pytest

from ragmeter.errors import InputError
from ragmeter.scoring.metrics import score_questions

GRADES = [[0, 2, 1], [1, 0, 0], [-1, -1, -1]]


def test_whole_numbers_as_floats_score_like_integers():
    as_int = score_questions(np.array(GRADES), None, ks=[1, 3])
    as_float = score_questions(np.array(GRADES, dtype=np.float64), None, ks=[1, 3])
    assert as_int.keys() == as_float.keys()
    for name in as_int:
        np.testing.assert_array_equal(as_float[name], as_int[name])
    assert as_float["recall@3"].tolist() == [1.0, 0.0, 0.0]


@pytest.mark.parametrize("bad", [np.nan, np.inf, 0.5])
def test_non_whole_or_non_finite_grades_are_rejected(bad):
    grades = np.array(GRADES, dtype=np.float64)
    grades[0, 0] = bad
    with pytest.raises(InputError, match="whole numbers"):
        score_questions(grades, None, ks=[1])


def test_booleans_and_text_are_not_grades():
    with pytest.raises(InputError, match="whole numbers"):
        score_questions(np.array([[True, False]]), None, ks=[1])
    with pytest.raises(InputError, match="whole numbers"):
        score_questions(np.array([["2", "0"]]), None, ks=[1])


def test_zero_and_negative_ideal_grades_add_nothing():
    grades = np.array([[1, 0, 2]])
    plain = score_questions(grades, None, ks=[1, 3], ideal=[np.array([2, 1])])
    padded = score_questions(grades, None, ks=[1, 3], ideal=[np.array([0, 2, -1, 1, 0])])
    for k in (1, 3):
        assert padded[f"ndcg@{k}"].tolist() == plain[f"ndcg@{k}"].tolist()
    # ideal 2, 1: DCG@3 = 1 + 3 / log2(4); IDCG@3 = 3 + 1 / log2(3)
    assert plain["ndcg@3"][0] == pytest.approx((1 + 3 / 2) / (3 + 1 / np.log2(3)))


@pytest.mark.parametrize(
    ("metrics", "expected"),
    [
        (["recall@1", "recall@3", "recall@5", "recall@10", "map"], (10, 5)),
        (["recall@1", "recall@3", "ndcg@20"], (20, 3)),  # no 10: the largest; no 5: below it
        (["recall@7", "recall@20"], (20, 7)),  # nothing below 5: the smallest
        (["map", "rprec", "mrr"], None),  # no cutoff at all
        (["map@²", "recall@5"], (5, 5)),  # a superscript digit is no cutoff
    ],
)
def test_the_default_views_show_rank_measures_at_10_and_5_else_the_nearest_cutoffs(
    metrics, expected
):
    from ragmeter.scoring.names import shown_cutoffs

    assert shown_cutoffs(metrics) == expected

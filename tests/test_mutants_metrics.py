"""Metrics from grades (ragmeter.metrics): MAP per question, cutoff and shape checks."""

from __future__ import annotations

import numpy as np
import pytest

from ragmeter.errors import InputError
from ragmeter.metrics import check_ks, score_questions


def test_average_precision_is_computed_within_each_question():
    grades = np.array([[2, 2, 0], [0, 2, 0]])
    out = score_questions(grades, None, ks=[3], n_relevant=[2, 1], measures=["map"])
    # q0: (1/1 + 2/2) / 2; q1: (1/2) / 1 -- not counting q0's hits at q1's ranks
    assert out["map"].tolist() == pytest.approx([1.0, 0.5])


def test_cutoffs_and_found_are_checked():
    with pytest.raises(InputError, match="must be positive whole numbers"):
        check_ks([])
    with pytest.raises(InputError, match="must be positive whole numbers"):
        check_ks([0, 5])
    assert check_ks([1, 5]) == [1, 5]
    grades = np.array([[2, 0], [0, 2]])
    with pytest.raises(InputError, match="found must have the shape of grades"):
        score_questions(grades, None, ks=[1], n_relevant=[1, 1], found=np.zeros((2, 1)))


def test_ndcg_over_the_whole_list_and_with_nothing_to_find():
    import math

    grades = np.array([[0, 2], [0, 0]])
    out = score_questions(grades, None, ks=[2], measures=["ndcg"], ideal=[[2], []])
    assert out["ndcg"].tolist() == pytest.approx([(3 / math.log2(3)) / 3, 0.0])
    none = score_questions(grades, None, ks=[2], measures=["ndcg"], ideal=[[], []])
    assert none["ndcg"].tolist() == [0.0, 0.0]

"""Public defaults and input rules of ragmeter.stats (the numbers themselves are
checked in tests/test_stats.py).

The documented defaults -- seed 1, 10,000 rounds -- are what every interval
records; a call without them must equal the call that spells them out.
"""

from __future__ import annotations

import numpy as np
import pytest

from ragmeter import stats
from ragmeter.errors import InputError
from ragmeter.stats import (
    agreement,
    bootstrap,
    bootstrap_many,
    cohen_kappa,
    compare_all,
    holm,
    paired,
    questions_to_separate,
    sample_size,
)

RNG = np.random.default_rng(15)
A = (RNG.random(40) < 0.7).astype(float)
B = (RNG.random(40) < 0.5).astype(float)
C = (RNG.random(40) < 0.6).astype(float)


def test_defaults_are_seed_1_and_10000_rounds():
    est = bootstrap(A)
    assert (est.seed, est.rounds) == (1, 10_000)
    assert est == bootstrap(A, rounds=10_000, seed=1)
    m2 = np.vstack([A, B])
    assert bootstrap_many(m2) == bootstrap_many(m2, rounds=10_000, seed=1)
    assert paired(A, B) == paired(A, B, rounds=10_000, seed=1)
    names = ["a", "b", "c"]
    m = np.vstack([A, B, C])
    assert compare_all(m, names) == compare_all(m, names, rounds=10_000, seed=1)
    assert sample_size(A) == sample_size(A, rounds=10_000, seed=1)
    labels_a, labels_b = ["x", "y", "x", "x"] * 5, ["x", "y", "y", "x"] * 5
    assert agreement(labels_a, labels_b) == agreement(labels_a, labels_b, rounds=10_000, seed=1)


def test_compare_all_needs_two_systems_and_takes_two():
    assert len(compare_all(np.vstack([A, B]), ["a", "b"], rounds=200)) == 1
    with pytest.raises(InputError, match="at least two systems"):
        compare_all(A[None, :], ["a"], rounds=200)


@pytest.mark.parametrize("difference", [0, 0.0, -0.05])
def test_questions_to_separate_needs_a_positive_difference(difference):
    with pytest.raises(InputError, match="difference must be positive"):
        questions_to_separate(A, B, difference=difference)
    assert questions_to_separate(A, B, difference=0.05) >= 1


def test_agreement_to_dict_is_plain_data():
    result = agreement(["x", "y", "x", "x"] * 5, ["x", "y", "y", "x"] * 5, rounds=200)
    d = result.to_dict()
    assert isinstance(d, dict)
    assert d["n"] == 20 and d["classes"] == ["x", "y"]
    assert d["confusion"] == [[10, 5], [0, 5]]
    assert d["percent"]["mean"] == pytest.approx(0.75)


def test_holm_takes_p_values_of_exactly_0_and_1():
    assert holm([0.0, 1.0]) == [0.0, 1.0]
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    for bad in (-0.1, 1.1):
        with pytest.raises(InputError, match=r"p-values must lie in \[0, 1\]"):
            holm([0.5, bad])


def test_sample_size_takes_a_single_question():
    [row] = sample_size(A, sizes=[1], rounds=200)
    with pytest.raises(InputError):
        sample_size(A, sizes=[0], rounds=200)
    assert row is not None


def test_two_paired_scores_are_enough_to_plan():
    assert questions_to_separate([1.0, 0.0], [0.0, 0.0], difference=0.1) >= 1
    with pytest.raises(InputError, match="at least two"):
        questions_to_separate([1.0], [0.0], difference=0.1)


@pytest.mark.parametrize("table", [[[1, 2, 3]], [[1, 2], [3, 4], [5, 6]], [1, 2], np.zeros((0, 0))])
def test_kappa_needs_a_non_empty_square_table(table):
    with pytest.raises(InputError, match="non-empty square table"):
        cohen_kappa(table)
    assert cohen_kappa([[5, 0], [0, 5]]) == 1.0


@pytest.mark.parametrize("rounds", [True, 100.5, "100", 0])
def test_rounds_must_be_a_whole_number_of_at_least_1(rounds):
    with pytest.raises(InputError, match="rounds"):
        bootstrap(A, rounds=rounds)
    one = bootstrap(A, rounds=1)
    assert one.rounds == 1 and one.low <= one.high


def test_an_interval_ending_exactly_at_zero_is_a_tie():
    # 3 wins and no losses on 80 questions: no resample can go below 0, so the
    # lower end is exactly 0.0, which does not exclude 0.
    result = stats.paired([1] * 3 + [0] * 77, [0] * 80)
    assert result.difference.low == 0.0 and result.difference.high > 0
    assert "better" not in result.verdict

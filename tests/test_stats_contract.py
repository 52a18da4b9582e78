"""Public defaults and input rules of ragmeter.stats (the numbers themselves are
checked in tests/test_stats.py).

The documented defaults -- seed 1, 10,000 rounds -- are what every interval
records; a call without them must equal the call that spells them out.
"""

from __future__ import annotations

import numpy as np
import pytest

from ragmeter.errors import InputError
from ragmeter.stats import (
    agreement,
    bootstrap,
    compare_all,
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

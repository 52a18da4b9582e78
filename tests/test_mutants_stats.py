"""The statistics rooms' input checks, draws and small formulas (ragmeter.stats_*)."""

from __future__ import annotations

import numpy as np
import pytest

from ragmeter import stats
from ragmeter.errors import InputError
from ragmeter.stats_agreement import agreement, cohen_kappa
from ragmeter.stats_draws import resample_indices
from ragmeter.stats_size import questions_for_half_width


def test_scores_must_be_a_flat_non_empty_list_or_a_non_empty_table():
    with pytest.raises(InputError, match="must be a flat list of per-question scores"):
        stats.bootstrap([[1.0, 0.0]], rounds=10)
    with pytest.raises(InputError, match="must not be empty"):
        stats.bootstrap([], rounds=10)
    for shape in ((0, 3), (2, 0)):
        with pytest.raises(InputError, match="must not be empty"):
            stats.bootstrap_many(np.zeros(shape), rounds=10)


def test_draws_need_a_round_and_keep_indices_past_65536():
    with pytest.raises(InputError, match="rounds"):
        resample_indices(5, 0)
    n = 70_000
    idx = resample_indices(n, 3, seed=1)
    assert idx.shape == (3, n) and idx.max() > 65_536 and idx.max() < n
    x = np.arange(n, dtype=np.float64)
    est = stats.bootstrap(x, rounds=3, seed=1)
    means = np.sort(x[idx].mean(axis=1))
    assert means[0] <= est.low <= est.high <= means[-1]
    assert stats.bootstrap(x, rounds=3, seed=1) == est  # the cached draws, read again


def test_a_half_width_needs_two_scores_and_sample_rows_are_plain_dicts():
    with pytest.raises(InputError, match="at least two scores"):
        questions_for_half_width([1.0])
    assert questions_for_half_width([0.0, 1.0], half_width=0.5) >= 1
    row = stats.sample_size([0.0, 1.0, 1.0, 0.0], rounds=50)[0]
    d = row.to_dict()
    assert d["n"] == 4 and d["rounds"] == 50 and d["confidence"] == 0.95


def test_agreement_refuses_repeated_classes_and_kappa_checks_its_table():
    with pytest.raises(InputError, match="classes must not repeat"):
        agreement(["a", "b"], ["a", "b"], classes=["a", "b", "a"], rounds=10)
    with pytest.raises(InputError, match="must not be negative"):
        cohen_kappa([[1, -1], [0, 2]])
    with pytest.raises(InputError, match="confusion table is empty"):
        cohen_kappa([[0, 0], [0, 0]])
    assert cohen_kappa([[3, 0], [0, 0]]) == 1.0  # one label throughout: agreement
    assert cohen_kappa([[2, 1], [1, 2]]) == pytest.approx((4 / 6 - 0.5) / 0.5)
    # p_e with n * n - E = 1: kappa is an ordinary number, not the 0/0 case
    assert cohen_kappa([[1, 0], [0, 0]]) == 1.0


def test_estimates_print_in_percent_by_default():
    from ragmeter.stats_bootstrap import format_interval

    assert format_interval(0.5, 0.25, 0.75) == "50.0 [25.0, 75.0]"
    assert format_interval(0.5, 0.25, 0.75, scale=1, digits=3) == "0.500 [0.250, 0.750]"

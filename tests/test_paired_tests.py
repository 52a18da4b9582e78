"""Paired tests (ragmeter.stats.paired_tests): the exact McNemar p at its cut-over, the
sign-flip p-value of a shifted null."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ragmeter.stats.paired_tests import Flips, mcnemar_exact, min_differing


def test_mcnemar_is_exact_up_to_two_thousand_differing_questions():
    for wins, losses in ((950, 1050), (1000, 1000), (3, 9)):
        n = wins + losses
        exact = min(1.0, 2 * sum(math.comb(n, i) for i in range(min(wins, losses) + 1)) / 2**n)
        assert mcnemar_exact(wins, losses) == exact
    big = mcnemar_exact(960, 1041)  # 2,001: the log-space sum, within 1e-12
    n = 2001
    exact = 2 * sum(math.comb(n, i) for i in range(961)) / 2**n
    assert big == pytest.approx(exact, rel=1e-11)
    assert mcnemar_exact(0, 0) == 1.0


def test_min_differing():
    assert min_differing(0.05) == 6  # 2 * 2**-6 = 0.031 < 0.05 <= 2 * 2**-5
    assert min_differing(0.5) == 3 and min_differing(0.9) == 2


def test_a_shifted_null_is_tested_around_its_shift():
    rng = np.random.default_rng(2)
    diffs = (rng.random((80, 2)) - 0.5) * 0.2  # graded differences around 0
    flips = Flips(diffs, 500, 1)
    at_zero = flips.p_values(np.zeros(2), np.arange(2))
    at_one = flips.p_values(np.ones(2), np.arange(2))
    assert (at_zero > 0.05).all()
    assert (at_one < 0.01).all()  # a mean of 1 is far from differences near 0
    shifted = flips.p_values(np.full(2, diffs.mean(axis=0)[0]), np.array([0, 0]))
    assert (shifted > 0.9).all()


def test_too_few_rounds_to_reject_give_bonferronis_first_level():
    from ragmeter.stats.maxt import step_down

    p_null = np.random.default_rng(3).random((10, 3))
    adj, reject, levels = step_down(np.array([0.003, 0.001, 0.002]), p_null, 0.05)
    assert not reject.any() and (adj >= 1 / 11).all()
    assert levels == pytest.approx([0.05 / 3] * 3)  # stopped at the first step


def test_a_step_down_stops_at_the_first_pair_not_below_alpha():
    from ragmeter.stats.maxt import step_down

    p_null = np.full((19, 2), 0.5)
    adj, reject, levels = step_down(np.array([0.001, 0.6]), p_null, 0.05)
    assert adj.tolist() == [0.05, 1.0] and not reject.any()  # 1/20 is not below 0.05
    assert levels == pytest.approx([0.025, 0.025])


def test_max_t_on_graded_scores_without_a_difference_rejects_nothing():
    from ragmeter.comparison.verdicts import compare_family

    rng = np.random.default_rng(4)
    m = rng.random((3, 100))
    table = compare_family(m, ["a", "b", "c"], adjust="maxt", rounds=400, seed=2)
    assert table.rule.test == "sign-flip test (400 rounds)"
    for row in table.rows:
        assert not row.separated and row.p >= row.p_value and row.p > 0.05

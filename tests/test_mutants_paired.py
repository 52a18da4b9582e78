"""Paired tests (ragmeter.paired_tests): the exact McNemar p at its cut-over, the
sign-flip p-value of a shifted null."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ragmeter.paired_tests import Flips, mcnemar_exact, min_differing


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

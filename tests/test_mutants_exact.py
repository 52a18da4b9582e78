"""Exact binomial pieces (ragmeter.stats_exact, paired_tests._hits_needed) against
scipy and brute force."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import require

from ragmeter.paired_tests import _hits_needed, signflip_interval
from ragmeter.stats_exact import binom_cdf, clopper_pearson, exact_interval

scipy_stats = require("scipy.stats", "pip install -e '.[test]'")


def test_binom_cdf_against_scipy_and_at_its_edges():
    for k, n, p in ((3, 10, 0.3), (0, 7, 0.5), (12, 40, 0.25), (1, 2, 0.9)):
        assert binom_cdf(k, n, p) == pytest.approx(scipy_stats.binom.cdf(k, n, p), rel=1e-12)
    assert binom_cdf(-1, 5, 0.5) == 0.0
    assert binom_cdf(5, 5, 0.5) == 1.0 and binom_cdf(6, 5, 0.5) == 1.0
    assert binom_cdf(4, 5, 0.0) == 1.0 and binom_cdf(0, 5, 0.0) == 1.0
    assert binom_cdf(4, 5, 1.0) == 0.0
    assert binom_cdf(5, 5, 1.0) == 1.0  # every outcome is at most n, whatever p
    assert binom_cdf(8, 10, 0.01) == 1.0  # the sum rounds to 1 + 2e-16: capped at 1
    assert binom_cdf(4, 5, 0.999999) == pytest.approx(1 - 0.999999**5, rel=1e-9)


def test_clopper_pearson_against_the_beta_quantiles():
    for hits, n in ((0, 10), (3, 10), (10, 10), (17, 40)):
        low, high = clopper_pearson(hits, n, 0.95)
        want_low = 0.0 if hits == 0 else scipy_stats.beta.ppf(0.025, hits, n - hits + 1)
        want_high = 1.0 if hits == n else scipy_stats.beta.ppf(0.975, hits + 1, n - hits)
        assert (low, high) == pytest.approx((want_low, want_high), abs=1e-12)


def test_when_the_exact_interval_is_shown():
    many = np.array([1.0] * 20 + [0.0] * 20)
    assert exact_interval(many, 0.3, 0.7) is None  # 40 questions, 20 hits: bootstrap
    assert exact_interval(many, 0.5, 0.5) == clopper_pearson(20, 40)  # no width
    five = np.array([1.0] * 5 + [0.0] * 35)
    assert exact_interval(five, 0.05, 0.2) is None  # five hits are enough
    four = np.array([1.0] * 4 + [0.0] * 36)
    assert exact_interval(four, 0.05, 0.2) == clopper_pearson(4, 40)
    thirty = np.array([1.0] * 15 + [0.0] * 15)
    assert exact_interval(thirty, 0.3, 0.7) is None
    assert exact_interval(thirty[:29], 0.3, 0.7) == clopper_pearson(15, 29)
    assert exact_interval(np.array([0.5, 1.0]), 0.5, 0.5) is None
    assert exact_interval(np.array([]), 0.0, 0.0) is None


def test_hits_needed_is_the_fewest_rounds_reaching_the_level():
    for level in (0.05, 0.01, 0.1, 0.3, 0.0125):
        for rounds in (10, 19, 20, 39, 99, 100, 999, 1000, 9999):
            want = next(h for h in range(rounds + 2) if (h + 1) / (rounds + 1) >= level)
            assert _hits_needed(level, rounds) == want, (level, rounds)
    # levels where level * (rounds + 1) rounds across a whole number: the first guess is
    # one too few (the first case) or one too many (the others), and gets corrected
    for alpha, k, rounds in ((0.2, 56, 18199), (0.1, 42, 12179), (0.2, 60, 8399), (0.1, 21, 12389)):
        level = alpha / k
        want = next(h for h in range(rounds + 2) if (h + 1) / (rounds + 1) >= level)
        assert _hits_needed(level, rounds) == want, (level, rounds)


def test_signflip_interval_defaults_and_ends():
    rng = np.random.default_rng(8)
    a, b = rng.random(60) + 0.2, rng.random(60)
    p, low, high = signflip_interval(a, b, rounds=300)
    assert low < (a - b).mean() < high and low > 0 and p < 0.05
    assert signflip_interval(a, b, rounds=300, seed=1) == (p, low, high)
    assert signflip_interval(a, b, rounds=300, seed=2) != (p, low, high)
    assert signflip_interval(list(a), list(b), rounds=300) == (p, low, high)
    hits = signflip_interval(a > 0.5, b > 0.5, rounds=300)  # 0/1 hits given as booleans
    assert hits == signflip_interval((a > 0.5) * 1.0, (b > 0.5) * 1.0, rounds=300)

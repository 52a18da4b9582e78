"""Exact binomial intervals where the bootstrap cannot show the uncertainty.

20 hits of 20 resample to [100, 100]; the exact (Clopper-Pearson) interval says
[83.2, 100]. The bootstrap estimate stays bit for bit beside it.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import require
from scipy.stats import beta, binom

from ragmeter import stats
from ragmeter.comparison.formatting import EXACT_NOTE, NO_SPREAD, exact_note, format_estimate
from ragmeter.comparison.summary import Summary, summarize
from ragmeter.report.common import _est
from ragmeter.stats.exact import binom_cdf, clopper_pearson, exact_interval
from ragmeter.stats.paired_tests import _hits_needed, signflip_interval


@pytest.mark.parametrize(
    ("hits", "n"),
    [
        (0, 1),
        (1, 1),
        (0, 20),
        (20, 20),
        (19, 20),
        (1, 5),
        (68, 80),
        (3, 472),
        (470, 472),
        (250, 500),
        (0, 5000),
        (4999, 5000),
    ],
)
@pytest.mark.parametrize("confidence", [0.95, 0.9, 0.99])
def test_clopper_pearson_equals_the_beta_quantiles(hits, n, confidence):
    tail = (1 - confidence) / 2
    lo, hi = clopper_pearson(hits, n, confidence)
    want_lo = 0.0 if hits == 0 else beta.ppf(tail, hits, n - hits + 1)
    want_hi = 1.0 if hits == n else beta.ppf(1 - tail, hits + 1, n - hits)
    assert lo == pytest.approx(want_lo, rel=1e-9, abs=1e-14)
    assert hi == pytest.approx(want_hi, rel=1e-9, abs=1e-14)
    assert lo <= hits / n <= hi


def test_binomial_cdf_matches_scipy():
    for k, n, p in [(0, 10, 0.3), (5, 10, 0.5), (19, 20, 0.9), (100, 472, 0.2), (7, 7, 0.4)]:
        assert binom_cdf(k, n, p) == pytest.approx(binom.cdf(k, n, p), rel=1e-10)


def test_twenty_of_twenty_is_not_certainty():
    est = stats.bootstrap([1.0] * 20)
    assert (est.low, est.high) == (1.0, 1.0)  # the seed's numbers, unchanged
    assert est.method == "percentile"
    assert est.exact == pytest.approx((0.8315665290169146, 1.0))
    assert format_estimate(est, "recall@5") == "100.0 [83.2, 100.0] exact"
    assert est.format() == "100.0 [100.0, 100.0]"  # the seed's method, named and kept


def test_the_bootstrap_stays_bit_for_bit_and_exact_only_where_needed():
    rng = np.random.default_rng(3)
    mid = (rng.random(80) < 0.6).astype(float)
    est = stats.bootstrap(mid)
    assert est.exact is None and "exact" not in est.to_dict()
    assert stats.bootstrap([1.0] * 68 + [0.0] * 12).format() == "85.0 [77.5, 92.5]"
    few = np.array([1.0] * 77 + [0.0] * 3)  # 3 misses of 80: too few to resample
    e = stats.bootstrap(few)
    assert e.exact == clopper_pearson(77, 80) and e.low != e.high
    small = np.array([1.0, 0.0] * 10)  # 20 questions
    assert stats.bootstrap(small).exact == clopper_pearson(10, 20)
    graded = np.full(30, 0.5)  # no spread, not 0/1: nothing exact to say
    g = stats.bootstrap(graded)
    assert g.exact is None
    assert format_estimate(g, "ndcg@10") == f"0.500 ({NO_SPREAD})"
    assert exact_interval(graded, 0.5, 0.5) is None


def test_many_rows_each_get_their_own():
    m = np.stack([np.ones(40), np.r_[np.ones(20), np.zeros(20)], np.zeros(40)])
    out = stats.bootstrap_many(m, rounds=500)
    assert out[0].exact == clopper_pearson(40, 40)
    assert out[1].exact is None
    assert out[2].exact == clopper_pearson(0, 40)
    for row, e in zip(m, out, strict=True):  # each equals the one-row call
        assert e == stats.bootstrap(row, rounds=500)


def test_summary_json_keeps_both_and_reads_back(tmp_path):
    x = np.stack([np.ones(25), np.r_[np.ones(20), np.zeros(5)]])
    summary = summarize({"recall@5": x}, ["a", "b"], "recall@5", 1, 400)
    saved = json.loads(json.dumps(summary.to_json()))
    a = saved["estimates"]["a"]["recall@5"]
    assert (a["low"], a["high"], a["method"]) == (1.0, 1.0, "percentile")
    assert a["exact"] == pytest.approx(list(clopper_pearson(25, 25)))
    assert a["exact_method"] == "clopper-pearson"
    assert Summary.from_json(saved) == summary
    page = _est(summary.estimates["a"]["recall@5"], "recall@5")
    assert page["shown"].endswith(" exact") and (page["low"], page["high"]) == (1.0, 1.0)
    assert page["exact"][0] < page["exact"][1] == 1.0
    assert exact_note(summary.estimates["a"].values()) == EXACT_NOTE
    assert exact_note([stats.bootstrap(np.r_[np.ones(60), np.zeros(40)], rounds=200)]) is None


def test_no_view_prints_a_zero_width_interval():
    rng = np.random.default_rng(8)
    for _ in range(200):
        n = int(rng.integers(1, 60))
        p = rng.choice([0.0, 0.02, 0.5, 0.98, 1.0])
        x = (rng.random(n) < p).astype(float)
        e = stats.bootstrap(x, rounds=200)
        text = format_estimate(e, "recall@5")
        low, high = e.exact if e.exact is not None else (e.low, e.high)
        assert low < high or NO_SPREAD in text, text
        if e.exact is not None:
            assert e.exact[0] <= e.mean <= e.exact[1]


def test_agreement_percent_carries_it_too():
    labels = ["a", "b"] * 10
    ag = stats.agreement(labels, labels, rounds=300)
    assert (ag.percent.low, ag.percent.high) == (1.0, 1.0)
    assert ag.percent.exact == clopper_pearson(20, 20)


def test_bad_counts_are_refused():
    from ragmeter.errors import InputError

    with pytest.raises(InputError):
        clopper_pearson(5, 4)
    with pytest.raises(InputError):
        clopper_pearson(1, 0)
    with pytest.raises(InputError):
        clopper_pearson(1, 3, confidence=1.0)


@pytest.mark.parametrize(
    ("hits", "n", "confidence"),
    [(1, 30, 0.95), (3, 135, 0.95), (131, 135, 0.95), (5, 40, 0.9), (1, 10**6, 0.9999999)],
)
def test_ends_are_exact_to_the_last_bit_at_any_scale(hits, n, confidence):
    """Each end is the double where the binomial tail crosses alpha/2: the next double
    inward is outside the interval. A lower end of 5e-14 is as exact as one of 0.9."""
    from scipy.stats import beta

    from ragmeter.stats.exact import _cdf, _log_comb

    tail = (1 - confidence) / 2
    log_c = _log_comb(n)
    low, high = clopper_pearson(hits, n, confidence)
    assert 1.0 - _cdf(log_c[:hits], hits - 1, n, low) >= tail
    assert 1.0 - _cdf(log_c[:hits], hits - 1, n, np.nextafter(low, 0.0)) < tail
    assert _cdf(log_c[: hits + 1], hits, n, high) >= tail
    assert _cdf(log_c[: hits + 1], hits, n, np.nextafter(high, 1.0)) < tail
    assert low == pytest.approx(beta.ppf(tail, hits, n - hits + 1), rel=1e-12)
    assert high == pytest.approx(beta.ppf(1 - tail, hits + 1, n - hits), rel=1e-9)


def test_the_interval_is_closed_where_a_tail_is_exactly_alpha():
    """One question at confidence 0.5: P(miss | 0.75) is exactly 0.25 in double
    precision, so 0.75, the beta quantile, is in the interval; a count out of range is
    refused."""
    from ragmeter.errors import InputError

    assert clopper_pearson(0, 1, 0.5) == (0.0, 0.75)
    for hits, n in ((-1, 3), (4, 3), (0, 0)):
        with pytest.raises(InputError, match="hits must lie between 0 and n"):
            clopper_pearson(hits, n)


@pytest.mark.parametrize("n", [1, 2, 9, 30, 31, 200])
@pytest.mark.parametrize("half_width", [0.01, 0.04, 0.1, 0.3, 0.6])
@pytest.mark.parametrize("all_hits", [True, False])
def test_questions_for_an_exact_half_width_is_the_first_that_reaches_it(n, half_width, all_hits):
    from ragmeter.stats.exact import questions_for_exact_half_width

    hits = n if all_hits else 0
    m = questions_for_exact_half_width(hits, n, half_width)

    def half(q):
        low, high = clopper_pearson(q if all_hits else 0, q)
        return (high - low) / 2

    assert half(m) <= half_width and (m == 1 or half(m - 1) > half_width)


def test_questions_for_an_exact_half_width_only_without_spread():
    from ragmeter.stats.exact import questions_for_exact_half_width

    assert questions_for_exact_half_width(29, 30, 0.04) is None
    from ragmeter.errors import InputError

    with pytest.raises(InputError, match="half_width must be positive"):
        questions_for_exact_half_width(30, 30, 0.0)


def test_sample_size_rows_carry_the_exact_interval_where_estimates_do():
    """The rows for n, 2n, 4n and 8n questions decide as the estimate does
    (:func:`ragmeter.stats.exact.exact_for`): 2 of 2 is not [100, 100] at any size."""
    rows = stats.sample_size(np.ones(2), rounds=300, seed=1)
    assert [r.exact for r in rows] == [clopper_pearson(n, n) for n in (2, 4, 8, 16)]
    mixed = (np.arange(40) % 4 != 0).astype(float)  # 30 of 40: the bootstrap is kept
    big = stats.sample_size(mixed, rounds=300, seed=1)
    assert all(r.exact is None for r in big)
    few = (np.arange(40) % 20 != 0).astype(float)  # 2 misses of 40, 4 of 80: under 5
    rows = stats.sample_size(few, rounds=300, seed=1)
    assert rows[0].exact == exact_interval(few, rows[0].low, rows[0].high)
    assert rows[1].exact == clopper_pearson(76, 80)
    assert rows[2].exact is None and rows[3].exact is None  # 8 and 16 misses: bootstrap
    assert all(r.exact is None for r in stats.sample_size(np.full(5, 0.5), rounds=300))
    back = [stats.SizeRow.from_dict(json.loads(json.dumps(r.to_dict()))) for r in rows]
    assert back == rows  # summary.json keeps it and reads it back
    assert "exact" not in stats.sample_size(mixed, rounds=300)[0].to_dict()  # as before


# Exact binomial pieces (ragmeter.stats.exact, paired_tests._hits_needed) against scipy and
# brute force.

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


def test_the_exact_interval_at_effective_counts_is_clopper_pearson_at_whole_ones():
    from ragmeter.stats.exact import clopper_pearson_effective

    for hits, n in ((0, 20), (3, 20), (20, 20), (89, 92), (45, 100)):
        got = clopper_pearson_effective(float(hits), float(n))
        assert got == pytest.approx(clopper_pearson(hits, n), abs=1e-12)
    # non-integer counts: the beta quantiles themselves
    low, high = clopper_pearson_effective(41.3, 47.9)
    assert low == pytest.approx(beta.ppf(0.025, 41.3, 47.9 - 41.3 + 1), abs=1e-10)
    assert high == pytest.approx(beta.ppf(0.975, 42.3, 47.9 - 41.3), abs=1e-10)


def test_fewer_effective_questions_never_narrow_the_exact_interval():
    from ragmeter.stats.exact import exact_for

    for n in (12, 30, 92, 200):
        for hits in sorted({0, 1, 3, n // 2, n - 4, n - 1, n}):
            plain = clopper_pearson(hits, n)
            for effective in (n * 0.95, n / 1.5, n / 3):
                got = exact_for(hits, n, 0.0, 0.0, effective=effective)
                assert got[0] <= plain[0] + 1e-12 and got[1] >= plain[1] - 1e-12
    # the rule reads the effective counts: 20 misses in 200 questions weigh as 2.5 in 25
    assert exact_for(180, 200, 0.85, 0.95) is None
    assert exact_for(180, 200, 0.85, 0.95, effective=25.0) is not None
    assert exact_for(180, 200, 0.85, 0.95, effective=200.0) is None  # no fewer: as before

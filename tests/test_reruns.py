"""Intervals, paired tests, variance shares and flip rates of scores with reruns."""

from __future__ import annotations

import numpy as np
import pytest

from ragmeter import stats
from ragmeter.answers.analysis import accuracy
from ragmeter.stats.paired_tests import mcnemar_exact
from ragmeter.stats.rerun_variance import flip_rates, variance_components, variance_shares
from ragmeter.stats.reruns import (
    compare_reruns,
    question_means,
    rerun_accuracy,
    rerun_difference,
)

NAN = float("nan")


def _binary(seed: int, n: int, k: int, p: float = 0.7) -> np.ndarray:
    return (np.random.default_rng(seed).random((n, k)) < p).astype(float)


# --- one rerun is today's one-call interval -------------------------------------------------


def test_one_rerun_accuracy_is_todays_accuracy_interval_bit_for_bit():
    grades = ["correct", "wrong", "partial", "correct", "correct", "wrong"] * 7
    today = accuracy(grades, rounds=2000, seed=5).correct
    scores = [[1.0 if g == "correct" else 0.0] for g in grades]
    assert rerun_accuracy(scores, rounds=2000, seed=5) == today


def test_one_rerun_of_graded_scores_equals_bootstrap_including_left_to_right_sums():
    x = np.random.default_rng(3).random(97) / 3.0  # sums that round: order matters
    for within in (False, True):
        got = rerun_accuracy(x[:, None], rounds=3000, seed=11, within=within)
        assert got == stats.bootstrap(x, rounds=3000, seed=11)


def test_one_rerun_difference_and_p_value_equal_paired():
    a, b = _binary(1, 60, 1), _binary(2, 60, 1, 0.55)
    got = rerun_difference(a, b, rounds=2000, seed=4)
    want = stats.paired(a[:, 0], b[:, 0], rounds=2000, seed=4)
    assert rerun_difference(a, b, rounds=2000, seed=4, within=True) == got
    assert got.difference == want.difference
    assert got.p_value == want.p_value
    assert (got.wins, got.ties, got.losses) == (want.wins, want.ties, want.losses)


# --- the two-level draws ------------------------------------------------------------------


def _reference_two_level(y: np.ndarray, rounds: int, seed: int) -> np.ndarray:
    """The documented stream, one draw at a time: questions, then reruns from 2*rounds*n."""
    n, k = y.shape
    u = stats.mulberry32(seed, 2 * rounds * n + rounds * n * k)
    means = []
    for b in range(rounds):
        total = 0.0
        for i in range(n):
            q = int(np.floor(u[b * n + i] * n))
            obs = [v for v in y[q] if not np.isnan(v)]
            s = 0.0
            for r in range(k):
                if r < len(obs):
                    s += obs[int(np.floor(u[2 * rounds * n + (b * n + i) * k + r] * len(obs)))]
            total += s / len(obs)
        means.append(total / n)
    return np.sort(means)


def test_two_level_interval_follows_the_documented_stream():
    y = np.array([[1, 0, 1], [1, 1, NAN], [0, 0, 0], [0.5, 1, 0], [1, NAN, NAN]])
    rounds = 200
    ref = _reference_two_level(y, rounds, 9)
    got = rerun_accuracy(y, rounds=rounds, seed=9, within=True)
    assert (got.low, got.high) == (ref[5], ref[195])  # floor(200 * .025), floor(200 * .975)
    assert got.mean == pytest.approx((2 / 3 + 1 + 0 + 0.5 + 1) / 5)


def test_rerun_noise_widens_the_interval_and_agreeing_reruns_do_not():
    noisy = _binary(7, 120, 4, 0.5)
    two = rerun_accuracy(noisy, rounds=2000, seed=1, within=True)
    one = rerun_accuracy(noisy, rounds=2000, seed=1)
    assert two.high - two.low > 1.1 * (one.high - one.low)
    steady = np.repeat(_binary(8, 120, 1), 4, axis=1)  # every rerun agrees
    assert rerun_accuracy(steady, 2000, 1, within=True) == rerun_accuracy(steady, 2000, 1)
    assert rerun_accuracy(steady, 2000, 1) == stats.bootstrap(steady[:, 0], 2000, 1)


def test_reproducible_and_seed_dependent():
    y = _binary(4, 80, 3)
    for within in (False, True):
        first = rerun_accuracy(y, 1000, 3, within=within)
        assert first == rerun_accuracy(y.copy(), 1000, 3, within=within)
        assert first != rerun_accuracy(y, 1000, 4, within=within)
    g = np.random.default_rng(0)
    est = rerun_accuracy(y, 500, g)
    assert est.rng == "numpy" and est.seed is None


def test_missing_reruns_are_left_out_wherever_they_sit():
    a = np.array([[1, NAN, 0], [1, 1, 1], [0, 1, NAN], [1, 0, 0]])
    b = np.array([[NAN, 1, 0], [1, 1, 1], [NAN, 0, 1], [1, 0, 0]])
    assert question_means(a).tolist() == [0.5, 1.0, 0.5, 1 / 3]
    for within in (False, True):
        assert rerun_accuracy(a, 500, 2, within=within) == rerun_accuracy(b, 500, 2, within=within)


# --- bad input -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("scores", "message"),
    [
        ([1, 0, 1], "2-D"),
        ([[[1]]], "2-D"),
        (np.zeros((0, 3)), "empty"),
        ([[1, 0], [NAN, NAN]], "no score"),
        ([[1, float("inf")]], "infinity"),
        ([["a", "b"]], "numbers"),
    ],
)
def test_bad_shapes_are_refused_with_a_clear_value_error(scores, message):
    with pytest.raises(ValueError, match=message):
        rerun_accuracy(scores, rounds=10)


def test_systems_on_different_questions_are_refused():
    with pytest.raises(ValueError, match="same questions"):
        rerun_difference(np.ones((5, 2)), np.ones((6, 2)), rounds=10)
    with pytest.raises(ValueError, match="family"):
        compare_reruns([np.ones((5, 2))] * 2, ["a", "b"], rounds=10, family="bonferroni")


# --- families ------------------------------------------------------------------------------


def test_family_one_rerun_of_binary_scores_uses_mcnemar_and_adjusts_upward():
    systems = [_binary(s, 150, 1, p) for s, p in ((1, 0.8), (2, 0.6), (3, 0.6))]
    for family in ("maxt", "holm"):
        rows = compare_reruns(systems, ["a", "b", "c"], rounds=1000, seed=2, family=family)
        for r in rows:
            assert r.p_value == mcnemar_exact(r.wins, r.losses)
            assert r.family == family and 0.0 < r.p_family <= 1.0
            if family == "holm":  # max-T's p is read off the flips, so it may sit a hair below
                assert r.p_family >= r.p_value
    holm = compare_reruns(systems, ["a", "b", "c"], rounds=1000, seed=2, family="holm")
    assert holm[0].verdict == "a better" and holm[2].verdict.startswith("tie")


def test_family_with_reruns_uses_sign_flip_p_of_question_means():
    systems = [_binary(s, 90, 3) for s in (1, 2)]
    row = compare_reruns(systems, ["a", "b"], rounds=1000, seed=3)[0]
    alone = rerun_difference(*systems, rounds=1000, seed=3, names=("a", "b"))
    assert row.p_value == alone.p_value and row.difference == alone.difference


def _bh_by_hand(p: list[float]) -> list[float]:
    """Benjamini-Hochberg written out: the k-th smallest p times m / k, made monotone from
    the largest down, capped at 1."""
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    out, running = [0.0] * m, 1.0
    for rank in range(m - 1, -1, -1):
        running = min(running, p[order[rank]] * m / (rank + 1))
        out[order[rank]] = running
    return out


def _five_systems() -> list[np.ndarray]:
    """Five systems, three reruns: a at 80%, the rest from 72% to 62%, so the pairs' p
    spread from tiny to large and Benjamini-Hochberg rejects pairs Holm keeps."""
    return [
        _binary(s, 160, 3, p) for s, p in ((11, 0.8), (12, 0.72), (13, 0.7), (14, 0.66), (15, 0.62))
    ]


def test_an_fdr_family_adjusts_the_pairs_own_p_values_by_benjamini_hochberg():
    from statsmodels.stats.multitest import multipletests

    names = ["a", "b", "c", "d", "e"]
    rows = compare_reruns(_five_systems(), names, rounds=2000, seed=4, family="fdr")
    raw = [r.p_value for r in rows]
    expect = multipletests(raw, method="fdr_bh")[1]
    assert [r.p_family for r in rows] == pytest.approx(list(expect), rel=1e-12)
    assert [r.p_family for r in rows] == pytest.approx(_bh_by_hand(raw), rel=1e-12)
    holm = compare_reruns(_five_systems(), names, rounds=2000, seed=4, family="holm")
    assert [r.p_value for r in holm] == raw  # the same tests, adjusted otherwise
    better = [r for r in rows if r.verdict.endswith("better")]
    assert len(better) > sum(r.verdict.endswith("better") for r in holm)  # BH rejects more
    for r in rows:
        assert r.verdict.endswith("better") == (r.p_family < 0.05)
        assert r.family == "fdr"


def test_each_family_says_what_it_guarantees_in_the_tables_words():
    from ragmeter.comparison.verdicts import FDR_GUARANTEE
    from ragmeter.stats.adjust import FAMILY_WISE

    systems = _five_systems()[:3]
    for family, words in (("fdr", FDR_GUARANTEE), ("maxt", FAMILY_WISE), ("holm", FAMILY_WISE)):
        row = compare_reruns(systems, ["a", "b", "c"], rounds=500, seed=1, family=family)[0]
        assert row.guarantee == words and row.to_dict()["guarantee"] == words
    fdr = compare_reruns(systems, ["a", "b", "c"], rounds=500, seed=1, family="fdr")[0]
    assert "false discovery rate" in fdr.guarantee and "family-wise" not in fdr.guarantee
    assert "guarantee" not in rerun_difference(*systems[:2], rounds=500).to_dict()
    with pytest.raises(stats.InputError, match="'maxt', 'holm', 'fdr'"):
        compare_reruns(systems, ["a", "b", "c"], family="bonferroni")


# --- variance shares and flip rates --------------------------------------------------------


def test_variance_components_by_hand():
    # means 1, 0, .5; MSW = .5 / 3; MSB = 1 / 2; k0 = 2 -> between = 1/6.
    got = variance_components([[1, 1], [0, 0], [1, 0]])
    assert got["within"] == pytest.approx(1 / 6)
    assert got["between"] == pytest.approx(1 / 6)
    assert got["rerun_share"] == pytest.approx(1 / 3)  # (1/6 * 1/2) / (1/6 + 1/12)
    assert got["question_share"] == pytest.approx(2 / 3)
    assert got["answer_rerun_share"] == pytest.approx(0.5)


def test_unbalanced_components_use_each_questions_own_reruns():
    # K = 3, 2, 1: N = 6, k0 = (6 - 14/6) / 2 = 11/6.
    got = variance_components([[1, 0, 1], [0, 0, NAN], [1, NAN, NAN]])
    msw = (2 / 3) / 3  # SSW: 2/3 + 0 + 0 over N - n = 3
    msb = (3 * (2 / 3 - 0.5) ** 2 + 2 * 0.25 + 1 * 0.25) / 2
    assert got["within"] == pytest.approx(msw)
    assert got["between"] == pytest.approx((msb - msw) / (11 / 6))


def test_variance_shares_intervals_hold_the_estimate_and_repeat():
    y = _binary(5, 150, 3, 0.6)
    v = variance_shares(y, rounds=500, seed=2)
    for e in (v.between, v.within, v.question_share, v.rerun_share):
        assert e.low <= e.mean <= e.high
    assert v.question_share.mean + v.rerun_share.mean == pytest.approx(1.0)
    assert variance_shares(y, rounds=500, seed=2) == v


def test_shares_need_a_question_with_two_reruns():
    with pytest.raises(ValueError, match="2 or more reruns"):
        variance_shares([[1], [0], [1]], rounds=10)


def test_flip_rates_by_hand_and_the_questions_that_flip_most():
    y = [[1, 0, 1], [1, 1, 1], [0, NAN, 1], [0.5, 0.5, 1], [1, NAN, NAN]]
    f = flip_rates(y, ids=list("abcde"), top=2, rounds=100)
    assert f.rates[:4] == pytest.approx([2 / 3, 0.0, 1.0, 2 / 3])
    assert np.isnan(f.rates[4])
    assert f.most == [("c", 1.0, 2), ("a", pytest.approx(2 / 3), 3)]
    assert (f.flipping, f.measured) == (3, 4)
    assert f.mean.mean == pytest.approx((2 / 3 + 0 + 1 + 2 / 3) / 4)
    with pytest.raises(ValueError, match="ids"):
        flip_rates(y, ids=["a"], rounds=10)


def test_a_flip_rate_is_counted_in_whole_pairs_and_divided_once():
    # (pairs - agreeing) / pairs: 2/3 exactly, where 1 - 1/3 would be one bit above it
    f = flip_rates([[1, 0, 1, NAN], [1, 0, 0, 0]], rounds=10)
    assert f.rates == [2 / 3, 3 / 6]
    assert flip_rates([[1, 1, 0, 0.5]], rounds=10).rates == [5 / 6]

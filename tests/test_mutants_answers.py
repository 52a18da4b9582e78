"""Answer accuracy and its judge-corrected (PPI) interval (ragmeter.answers.analysis),
checked against the documented draws and plain counts."""

from __future__ import annotations

import numpy as np
import pytest

from ragmeter import stats
from ragmeter.answers.analysis import accuracy, ppi_accuracy
from ragmeter.errors import InputError

RNG = np.random.default_rng(5)
J_ALL = (RNG.random(60) < 0.7).astype(float)
J_HAND = J_ALL[:12].copy()
HAND = J_HAND.copy()
HAND[[1, 4, 7]] = 1 - HAND[[1, 4, 7]]  # the judge was wrong on three of twelve


def test_accuracy_counts_unscored_as_not_correct():
    grades = ["correct"] * 5 + ["partial"] * 2 + ["wrong"] * 2 + ["unscored"]
    acc = accuracy(grades, rounds=300, seed=2)
    assert acc.counts == {"correct": 5, "partial": 2, "wrong": 2, "unscored": 1}
    assert (acc.scored, acc.unscored) == (9, 1)
    assert acc.correct.mean == 0.5 and acc.correct_or_partial.mean == 0.7
    assert acc.correct_if_unscored.mean == 0.6
    want = stats.bootstrap(np.array([1.0] * 5 + [0.0] * 5), rounds=300, seed=2)
    assert (acc.correct.low, acc.correct.high) == (want.low, want.high)
    assert acc.correct.rounds == 300 and acc.correct.confidence == 0.95
    some = accuracy(["correct", "partial", "wrong"], confidence=0.9, rounds=200)
    assert some.correct.confidence == some.correct_or_partial.confidence == 0.9
    default = accuracy(["correct", "wrong"])
    assert (default.correct.rounds, default.correct.seed, default.correct.confidence) == (
        10_000,
        1,
        0.95,
    )
    assert accuracy(["correct"], rounds=200).correct_if_unscored is None
    empty = accuracy([])
    assert (empty.correct, empty.correct_or_partial) == (None, None)
    assert (empty.scored, empty.unscored, empty.counts["correct"]) == (0, 0, 0)
    with pytest.raises(InputError, match=r"unknown grades \['great'\]"):
        accuracy(["correct", "great"])


def test_ppi_estimate_is_judge_accuracy_plus_the_rectifier():
    est = ppi_accuracy(J_ALL, J_HAND, HAND, rounds=400, seed=3, confidence=0.9)
    assert est.mean == pytest.approx(J_ALL.mean() + (HAND - J_HAND).mean())
    assert (est.n, est.rounds, est.seed, est.confidence) == (60, 400, 3, 0.9)
    assert est.method == "ppi-percentile" and est.rng == "mulberry32"
    default = ppi_accuracy(J_ALL, J_HAND, HAND)
    assert (default.seed, default.rounds, default.confidence) == (1, 10_000, 0.95)


def test_ppi_interval_draws_the_hand_sample_after_the_judges_draws():
    rounds, seed, big, small = 400, 3, J_ALL.size, HAND.size
    j_idx = stats._mulberry32_indices(seed, rounds * big, 0, big).reshape(rounds, big)
    h_idx = stats._mulberry32_indices(seed, rounds * small, rounds * big, small)
    rect = HAND - J_HAND
    means = J_ALL[j_idx].mean(axis=1) + rect[h_idx.reshape(rounds, small)].mean(axis=1)
    q = np.sort(means)
    est = ppi_accuracy(J_ALL, J_HAND, HAND, rounds=rounds, seed=seed)
    low, high = stats._interval(means, est.mean, rect, "percentile", 0.95)
    assert (est.low, est.high) == pytest.approx((low, high), abs=1e-12)
    assert q[0] <= est.low < est.high <= q[-1]
    # reusing the judge's own draws for the hand sample would give another interval
    reused = stats._mulberry32_indices(seed, rounds * small, 0, small)
    other = J_ALL[j_idx].mean(axis=1) + rect[reused.reshape(rounds, small)].mean(axis=1)
    assert stats._interval(other, est.mean, rect, "percentile", 0.95) != (est.low, est.high)


def test_a_perfect_judge_gives_the_judges_own_bootstrap_interval():
    est = ppi_accuracy(J_ALL, J_HAND, J_HAND, rounds=500, seed=4)
    want = stats.bootstrap(J_ALL, rounds=500, seed=4)
    assert (est.mean, est.low, est.high) == pytest.approx((want.mean, want.low, want.high))


def test_ppi_refuses_unpaired_or_empty_grades():
    with pytest.raises(InputError, match="judge_all must be a non-empty"):
        ppi_accuracy([], [1], [1])
    with pytest.raises(InputError, match="judge_all must be a non-empty"):
        ppi_accuracy([[1, 0]], [1], [1])
    with pytest.raises(InputError, match="must be paired"):
        ppi_accuracy([1, 0], [1, 0], [1])
    with pytest.raises(InputError, match="must be paired"):
        ppi_accuracy([1, 0], [], [])


def test_corrected_accuracy_leaves_out_unscored_and_uses_every_setting():
    from ragmeter.answers.analysis import MIN_HAND, corrected_accuracy

    judge = {f"q{i}": g for i, g in enumerate(["correct"] * 6 + ["wrong"] * 3 + ["unscored"])}
    hand = {"q0": "correct", "q1": "wrong", "q2": "correct", "q6": "wrong", "q7": "correct"}
    hand |= {"q9": "correct", "q8": "unscored"}
    got = corrected_accuracy(judge, hand, "j", "sys", rounds=300, seed=6, confidence=0.9)
    assert (got.judge, got.system, got.n, got.n_hand) == ("j", "sys", 9, MIN_HAND)
    j_all = np.array([1.0] * 6 + [0.0] * 3)
    h = np.array([1.0, 0.0, 1.0, 0.0, 1.0])
    j_hand = np.array([1.0, 1.0, 1.0, 0.0, 0.0])
    assert got.rectifier == pytest.approx((h - j_hand).mean())
    for est, want in (
        (got.raw, stats.bootstrap(j_all, rounds=300, seed=6, confidence=0.9)),
        (got.hand_only, stats.bootstrap(h, rounds=300, seed=6, confidence=0.9)),
        (got.corrected, ppi_accuracy(j_all, j_hand, h, rounds=300, seed=6, confidence=0.9)),
    ):
        assert (est.mean, est.low, est.high, est.seed, est.confidence) == (
            want.mean,
            want.low,
            want.high,
            6,
            0.9,
        )
    del hand["q7"]
    assert corrected_accuracy(judge, hand) is None  # four graded both ways: too few
    assert corrected_accuracy({"a": "unscored"}, {"a": "correct"}) is None

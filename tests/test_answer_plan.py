"""The arithmetic of the answer plan: the half-width n questions x K reruns will have,
the questions a target needs, and whether a rerun or more questions buy more."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ragmeter.answers.analysis import ppi_accuracy
from ragmeter.errors import InputError
from ragmeter.stats.answer_plan import (
    ASSUMED_ACCURACY,
    ASSUMED_JUDGE_DISAGREEMENT,
    ASSUMED_RERUN_SHARE,
    NoiseModel,
    assumed_noise,
    assumed_table,
    hand_grades_for_half_width,
    noise_of,
    predicted_corrected_half_width,
    predicted_half_width,
    questions_for_half_width,
    questions_to_separate,
    rerun_or_question,
)
from ragmeter.stats.rerun_variance import variance_components
from ragmeter.stats.reruns import rerun_accuracy


def flipping(rng, n: int, k: int, accuracy: float = 0.7, flip: float = 0.3) -> np.ndarray:
    """0/1 grades: each question a base grade, each rerun the other grade at ``flip``."""
    base = (rng.random(n) < accuracy).astype(float)[:, None]
    flips = rng.random((n, k)) < flip
    return np.where(flips, 1.0 - base, base)


def test_predicted_half_width_is_z_times_the_standard_error_of_questions_and_reruns():
    noise = NoiseModel(0.16, 0.09, "test")
    expected = 1.959963984540054 * math.sqrt((0.16 + 0.09 / 3) / 200)
    assert predicted_half_width(noise, 200, 3) == pytest.approx(expected)
    # more reruns narrow only the rerun part: never below the questions' own share
    assert predicted_half_width(noise, 200, 1000) > 1.959963984540054 * math.sqrt(0.16 / 200)


def test_prediction_from_the_runs_own_components_matches_its_bootstrap_interval():
    rng = np.random.default_rng(3)
    scores = flipping(rng, 400, 3)
    est = rerun_accuracy(scores, rounds=4000, seed=1)
    predicted = predicted_half_width(noise_of(scores), 400, 3)
    assert predicted == pytest.approx((est.high - est.low) / 2, rel=0.08)


def test_noise_of_reruns_is_the_moment_estimate_and_of_one_call_an_assumed_split():
    rng = np.random.default_rng(5)
    scores = flipping(rng, 50, 3)
    parts = variance_components(scores)
    found = noise_of(scores)
    assert (found.between, found.within, found.source) == (
        parts["between"],
        parts["within"],
        "pilot",
    )
    one = noise_of(scores[:, :1])
    total = float(np.var(scores[:, 0], ddof=1))
    assert one.total == pytest.approx(total)
    assert one.within == pytest.approx(total * ASSUMED_RERUN_SHARE)
    assert one.source == "pilot, rerun share assumed"


def test_nothing_graded_plans_on_the_widest_accuracy_and_says_it_is_assumed():
    noise = noise_of(np.full((4, 2), np.nan))
    assert noise.source == "assumed" and noise.total == pytest.approx(0.25)
    assert assumed_noise("difference").total == pytest.approx(0.3)


def test_questions_for_a_half_width_reach_it_and_one_fewer_does_not():
    noise = NoiseModel(0.15, 0.1, "test")
    for k in (1, 2, 5):
        n = questions_for_half_width(noise, k, 0.04)
        assert predicted_half_width(noise, n, k) <= 0.04 < predicted_half_width(noise, n - 1, k)


def test_questions_to_separate_need_more_at_a_stricter_level_and_fewer_with_reruns():
    noise = NoiseModel(0.2, 0.2, "test")
    alone = questions_to_separate(noise, 1, 0.05, alpha=0.05)
    assert questions_to_separate(noise, 1, 0.05, alpha=0.05 / 6) > alone
    assert questions_to_separate(noise, 3, 0.05, alpha=0.05) < alone
    z = 1.959963984540054 + 0.8416212335729143
    assert alone == math.ceil(z**2 * 0.4 / 0.05**2)


def test_a_cheap_rerun_of_a_noisy_judge_buys_more_than_questions():
    noisy = NoiseModel(0.05, 0.2, "test")  # most of the noise is the judge's

    def judge_only(n: int, k: int) -> float:  # a question: 1 reader call + k judge calls
        return n * (1 + k)

    choice = rerun_or_question(noisy, 100, 1, judge_only)
    assert choice.better == "rerun" and choice.with_rerun < choice.with_questions
    assert choice.more_questions == 50  # the 100 calls of a rerun buy 50 questions at K = 1


def test_when_a_rerun_costs_as_much_as_a_question_more_questions_buy_more():
    noisy = NoiseModel(0.05, 0.2, "test")

    def both(n: int, k: int) -> float:  # reader and judge rerun: k of each per question
        return 2 * n * k

    choice = rerun_or_question(noisy, 100, 1, both)
    assert choice.better == "question" and choice.more_questions == 100


@pytest.mark.parametrize("bad", [0, -1, 1.5, True])
def test_reruns_below_one_or_not_whole_are_refused_in_one_line(bad):
    with pytest.raises(InputError, match="reruns must be a whole number"):
        predicted_half_width(NoiseModel(0.1, 0.1, "test"), 10, bad)


def test_a_target_of_zero_is_refused():
    with pytest.raises(InputError, match="half-width must be a number above 0"):
        questions_for_half_width(NoiseModel(0.1, 0.1, "test"), 1, 0.0)


def _graded(counts, rest_correct: int, rest: int):
    """Hand and judge 0/1 grades with the hand x judge table ``counts[hand][judge]``, and
    the judge's grades of ``rest`` other answers, ``rest_correct`` of them correct."""
    cells = np.asarray(counts).ravel()
    hand = np.repeat([0.0, 0.0, 1.0, 1.0], cells)
    judge = np.repeat([0.0, 1.0, 0.0, 1.0], cells)
    return hand, judge, np.array([1.0] * rest_correct + [0.0] * (rest - rest_correct))


def test_the_planned_corrected_half_width_is_the_one_grade_prints_on_the_same_table():
    counts = [[8, 0], [4, 28]]  # the judge never caught passing a wrong answer
    hand, judge, rest = _graded(counts, 252, 360)
    printed = ppi_accuracy(rest, judge, hand)
    judge_variance = float(np.var(np.concatenate([judge, rest]), ddof=1))
    predicted = predicted_corrected_half_width(counts, judge_variance, 400, 40)
    assert predicted == pytest.approx((printed.high - printed.low) / 2, rel=1e-3)
    # the former rule (plain z, the plain variance of hand - judge, the judge over all
    # N) predicts another interval than grade prints
    plain = 1.959963984540054 * math.sqrt(judge_variance / 400 + np.var(hand - judge) / 40)
    assert abs(plain / predicted - 1) > 0.05


def test_the_plan_predicts_from_shares_as_from_counts():
    counts = np.array([[8.0, 0.0], [4.0, 28.0]])
    assert predicted_corrected_half_width(counts / 40, 0.21, 400, 40) == pytest.approx(
        predicted_corrected_half_width(counts, 0.21, 400, 40), rel=1e-12
    )


def test_hand_grades_reach_the_corrected_accuracys_target_and_one_fewer_does_not():
    table = assumed_table()
    n = hand_grades_for_half_width(0.2, table, 400, 0.06)
    assert n is not None
    assert predicted_corrected_half_width(table, 0.2, 400, n) <= 0.06
    assert predicted_corrected_half_width(table, 0.2, 400, n - 1) > 0.06


def test_the_assumed_table_disagrees_on_the_assumed_share_at_the_assumed_accuracy():
    table = assumed_table()
    assert table.sum() == pytest.approx(1.0)
    assert table[1].sum() == pytest.approx(ASSUMED_ACCURACY)
    assert table[0, 1] + table[1, 0] == pytest.approx(ASSUMED_JUDGE_DISAGREEMENT)


def test_a_table_that_is_not_two_by_two_counts_is_refused():
    with pytest.raises(InputError, match="2 x 2"):
        predicted_corrected_half_width([[1, 2, 3]], 0.2, 100, 10)
    with pytest.raises(InputError, match="2 x 2"):
        hand_grades_for_half_width(0.2, [[1, -1], [0, 1]], 100, 0.05)


def test_no_hand_grades_suffice_when_the_judges_own_noise_is_wider_than_the_target():
    assert hand_grades_for_half_width(0.25, assumed_table(), 100, 0.04) is None

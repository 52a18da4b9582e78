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


def test_two_judges_compared_over_what_both_scored():
    from ragmeter import stats as st
    from ragmeter.answers.judges import JudgePair, check_against_hand, compare_judges

    a = {"q1": "correct", "q2": "correct", "q3": "partial", "q4": "unscored", "q5": "wrong"}
    b = {"q1": "correct", "q2": "wrong", "q3": "wrong", "q4": "correct", "q5": "unscored"}
    b["q6"] = "unscored"
    pair = compare_judges(a, b, "A", "B", rounds=200, seed=3, confidence=0.9)
    assert (pair.n, pair.correct_a, pair.correct_b) == (3, 2, 1)
    assert (pair.a_only, pair.b_only) == (["q2"], [])
    assert [(d.a, d.b) for d in pair.differ] == [("correct", "wrong"), ("partial", "wrong")]
    assert (pair.unscored_a, pair.unscored_b) == (1, 2)
    assert (pair.lenient, pair.margin) == ("A", 1)
    three = st.agreement(
        ["correct", "correct", "partial"],
        ["correct", "wrong", "wrong"],
        classes=["correct", "partial", "wrong"],
        rounds=200,
        seed=3,
        confidence=0.9,
    )
    assert pair.three.kappa.low == three.kappa.low and pair.three.percent.rounds == 200
    assert pair.binary.percent.seed == 3 and pair.binary.percent.confidence == 0.9
    d = pair.to_dict()
    assert (d["lenient"], d["margin"], d["unscored_b"]) == ("A", 1, 2)
    default = compare_judges(a, b)
    assert (default.three.percent.rounds, default.three.percent.seed) == (10_000, 1)
    bare = JudgePair("a", "b", 0, None, None, 0, 0, [], [], [])
    assert (bare.unscored_a, bare.unscored_b, bare.lenient) == (0, 0, None)
    check = check_against_hand(a, b, "A", rounds=200)
    assert (check.n, check.matched, check.exact, check.unscored) == (3, 2, 1, 1)
    assert (check.lenient, check.strict, check.partial_wrong) == (["q2"], [], ["q3"])
    from ragmeter.answers.judges import HandCheck

    assert HandCheck("j", 0, 0, 0, None, None, [], [], []).unscored == 0
    empty = compare_judges({"x": "unscored"}, {"x": "correct"})
    assert (empty.n, empty.binary, empty.three) == (0, None, None)


def test_a_changed_number_is_matched_to_the_reference_it_stands_for():
    from ragmeter.answers.failures import Change, check_number_changed

    refs = ["It is 48 metres, or 120 feet."]
    assert check_number_changed("It is 4.8 metres.", refs) == [Change("4.8", "48", 6, 9)]
    assert check_number_changed("It is 115 feet.", refs) == [Change("115", "120", 6, 9)]
    assert check_number_changed("It is 50 metres.", refs) == [Change("50", "48", 6, 8)]
    assert check_number_changed("It is 48 metres.", refs) == []
    assert check_number_changed("It is 7.", ["no number here"]) == []
    assert Change("1", None).start == 0 and Change("1", None).end == 0


def test_content_words_and_their_light_stems():
    from ragmeter.answers.failures import AnswerCheck, _stem, content_words

    words = content_words("The cities were running quickly to 12 x to ab 7 boxes a1")
    assert words == {"12", "runn", "city", "7", "box", "quick"}
    stems = [_stem(w) for w in ("cities", "walked", "quickly", "sings", "bees", "tries", "x1")]
    assert stems == ["city", "walk", "quick", "sing", "bees", "tri", "x1"]
    check = AnswerCheck("s", "q", True, "correct", False)
    assert (check.left_out, check.changed, check.unsupported, check.failures) == (
        False,
        (),
        (),
        (),
    )


NUMBERS = {
    # text: (values, tolerances), worked out by hand: value, then in base units
    "2k": ((2.0, 2000.0), (0.5, 500.0)),
    "2.5k": ((2.5, 2500.0), (0.05, 50.0)),
    "5 M": ((5.0, 5e6), (0.5, 5e5)),
    "5 m": ((5.0,), (0.5,)),  # metres or minutes: no scale
    "3 min": ((3.0, 180.0), (0.5, 30.0)),
    "1.5 h": ((1.5, 5400.0), (0.05, 180.0)),
    "2 sec": ((2.0, 2.0), (0.5, 0.5)),
    "250 ms": ((250.0, 0.25), (0.5, 0.0005)),
    "7 milliseconds": ((7.0, 0.007), (0.5, 0.0005)),  # the longest unit, not "m"
    "4 GiB": ((4.0, 4 * 2.0**30), (0.5, 0.5 * 2.0**30)),
    "12.5": ((12.5,), (0.05,)),
    "12.50%": ((12.5, 0.125), (0.005, 0.00005)),
    "1/4": ((0.25, 1.0, 4.0), (0.0, 0.5, 0.5)),
    "3/4%": ((0.75, 3.0, 4.0, 0.0075), (0.0, 0.5, 0.5, 0.0)),
    "twenty-one": ((21.0,), (0.0,)),
}


def test_numbers_read_with_their_units_and_rounding():
    from ragmeter.answers.numbers import numbers

    for text, (values, tolerances) in NUMBERS.items():
        (n,) = numbers(text)
        assert n.values == pytest.approx(values), text
        assert n.tolerances == pytest.approx(tolerances), text
    assert numbers("3/0") == []
    assert [n.text for n in numbers("see [2] for 3")] == ["3"]


def test_numbers_match_within_the_stated_rounding():
    from ragmeter.answers.numbers import numbers, same_as_written, same_number

    def one(text):
        return numbers(text)[0]

    assert same_number(one("4.8"), one("4.84")) and not same_number(one("4.8"), one("4.9"))
    assert same_number(one("2k"), one("2000")) and same_number(one("2000"), one("2k"))
    assert same_as_written(one("2"), one("2k"))  # as written: 2 and 2
    assert not same_as_written(one("2000"), one("2k"))
    assert not same_as_written(one("8%"), one("8"))
    assert not same_as_written(one("1.5 h"), one("1.57"))  # 1.5 is +/- 0.05, not 180
    # "40" may be 40.5 rounded (exactly half its last digit away), not 40.51
    assert same_number(one("40"), one("40.5")) and not same_number(one("40"), one("40.51"))
    assert [n.text for n in numbers("5%five")] == ["5%", "five"]  # side by side, both read

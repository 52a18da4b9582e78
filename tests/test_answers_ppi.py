"""Judge-corrected answer accuracy (prediction-powered inference)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from rich.console import Console

from ragmeter import stats
from ragmeter.answers.analysis import MIN_HAND, corrected_accuracy, ppi_accuracy
from ragmeter.cli.answer_views import print_corrected
from ragmeter.errors import InputError
from ragmeter.stats import ppi


def _by_hand(j_all, j_hand, hand, lam, confidence=0.95):
    """The documented interval, written out: the judge part's population variance over
    N, the rectifier's over the hand x judge table with a quarter answer added to each
    cell, over n; z widened by Student's t on n - 1 degrees of freedom (scipy's)."""
    from scipy.stats import t

    big, small = len(j_all), len(hand)
    judge_mean = sum(j_all) / big
    judge_var = sum((lam * x - lam * judge_mean) ** 2 for x in j_all) / big
    cells = {(a, b): 0.25 for a in (0, 1) for b in (0, 1)}
    for h, j in zip(hand, j_hand, strict=True):
        cells[(int(h), int(j))] += 1
    total = sum(cells.values())
    rect_mean = sum(w * (a - lam * b) for (a, b), w in cells.items()) / total
    rect_var = sum(w * (a - lam * b - rect_mean) ** 2 for (a, b), w in cells.items()) / total
    mean = lam * judge_mean + sum(h - lam * j for h, j in zip(hand, j_hand, strict=True)) / small
    q = 0.5 + confidence / 2
    half = t.ppf(q, small - 1) * math.sqrt(small / (small - 1))
    half *= math.sqrt(judge_var / big + rect_var / small)
    return mean, max(0.0, mean - half), min(1.0, mean + half)


J_ALL = [1.0] * 28 + [0.0] * 12
J_HAND = [1.0, 1.0, 1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0] * 2
HAND = [1.0, 0.0, 1.0, 0.0, 1.0, 1.0, 1.0, 0.0, 1.0, 1.0] * 2


def test_ppi_matches_a_hand_computation():
    # The plain weight (1), by name: the estimate of PPI before PPI++, its normal interval.
    est = ppi_accuracy(J_ALL, J_HAND, HAND, rounds=400, seed=3, weight="plain")
    assert est.mean == pytest.approx(0.7 + 2 * (0 - 1 + 0 + 0 + 1) / 20)
    want = _by_hand(J_ALL, J_HAND, HAND, 1.0)
    assert (est.mean, est.low, est.high) == pytest.approx(want, abs=1e-12)
    assert 0.0 < est.low < est.high < 1.0  # not clipped: the formula decides both ends
    # no draws, yet the run's seed and rounds are recorded beside it
    assert (est.n, est.seed, est.rounds, est.method) == (40, 3, 400, "ppi-normal")
    assert ppi_accuracy(J_ALL, J_HAND, HAND, rounds=100, seed=9, weight="plain").low == est.low
    # A lenient judge: it passed two answers the hand grade failed; the correction removes them.
    lenient = ppi_accuracy(J_ALL, [1.0] * 5, [1.0, 0.0, 1.0, 0.0, 1.0], rounds=200, weight=1.0)
    assert lenient.mean == pytest.approx(0.7 - 2 / 5)


def test_tuned_ppi_matches_a_hand_computation_with_its_weight():
    # The default weight is PPI++'s: both parts scaled by it, in the estimate and the variance.
    lam = ppi.tuned_weight(HAND, J_HAND, J_ALL)
    assert 0.0 < lam < 1.0
    est = ppi_accuracy(J_ALL, J_HAND, HAND, rounds=400, seed=3, confidence=0.9)
    rectifier = np.mean(np.subtract(HAND, np.multiply(lam, J_HAND)))
    assert est.mean == pytest.approx(lam * 0.7 + rectifier)
    want = _by_hand(J_ALL, J_HAND, HAND, lam, 0.9)
    assert (est.mean, est.low, est.high) == pytest.approx(want, abs=1e-12)
    assert est.confidence == 0.9


def test_an_interval_past_a_share_is_kept_within_0_and_1():
    # five hand grades, every one correct: the normal interval runs past 100%
    mean, _, _ = _by_hand([1.0] * 20, [1.0] * 5, [1.0] * 5, 1.0)
    est = ppi_accuracy([1.0] * 20, [1.0] * 5, [1.0] * 5, weight="plain")
    assert est.mean == mean == 1.0 and est.high == 1.0 and est.low < 1.0


def test_ppi_covers_the_truth_where_the_raw_judge_does_not():
    # True accuracy 0.6; the judge passes 30% of wrong answers and fails 10% of right ones,
    # so its raw accuracy is about 0.66. 400 answers, 60 graded by hand.
    rng = np.random.default_rng(0)
    truth, big, small, sims = 0.6, 400, 60, 150
    ppi_hits = raw_hits = hand_hits = 0
    ppi_width = hand_width = 0.0
    means = []
    for s in range(sims):
        right = rng.random(big) < truth
        judge = np.where(right, rng.random(big) > 0.1, rng.random(big) < 0.3).astype(float)
        sample = rng.choice(big, size=small, replace=False)
        rest = np.delete(judge, sample)
        est = ppi_accuracy(rest, judge[sample], right[sample].astype(float), 500, s + 1)
        raw = stats.bootstrap(judge, rounds=500, seed=s + 1)
        alone = stats.bootstrap(right[sample].astype(float), rounds=500, seed=s + 1)
        ppi_hits += est.low <= truth <= est.high
        raw_hits += raw.low <= truth <= raw.high
        hand_hits += alone.low <= truth <= alone.high
        ppi_width += est.high - est.low
        hand_width += alone.high - alone.low
        means.append(est.mean)
    assert abs(np.mean(means) - truth) < 0.01  # unbiased (raw is 0.06 too high)
    assert ppi_hits / sims >= 0.9
    assert raw_hits / sims < 0.5
    assert hand_hits / sims >= 0.88
    # This judge agrees with the hand grade on about 82% of answers: that is enough
    # for the corrected interval to be narrower than hand grades alone.
    assert ppi_width < hand_width


def test_corrected_accuracy_needs_hand_grades_and_skips_unscored():
    judge = {f"q{i}": "correct" if i % 3 else "wrong" for i in range(30)}
    judge["q1"] = "unscored"
    hand = {f"q{i}": "correct" for i in range(MIN_HAND - 1)}
    assert corrected_accuracy(judge, hand, rounds=100) is None  # q1 is unscored: 3 usable
    hand.update({"q10": "partial", "q11": "correct", "q12": "wrong"})
    c = corrected_accuracy(judge, hand, "j", rounds=100, weight="plain")
    assert c.n == 29 and c.n_hand == 6  # q0 q2 q3 q10 q11 q12
    # hand - judge on q0 q2 q3 q10 q11 q12: judge wrong/correct/wrong/correct/correct/wrong,
    # hand correct/correct/correct/partial/correct/wrong
    assert c.rectifier == pytest.approx((1 + 0 + 1 - 1 + 0 + 0) / 6)
    # the judge's part is over the 23 scored answers not graded by hand
    rest = [judge[f"q{i}"] == "correct" for i in range(30) if i not in (0, 1, 2, 3, 10, 11, 12)]
    assert c.corrected.mean == pytest.approx(np.mean(rest) + c.rectifier)
    assert (c.weight, c.weight_rule) == (1.0, "plain")
    with pytest.raises(InputError):
        ppi_accuracy([], [1.0], [1.0])


def test_print_corrected_shows_raw_hand_and_corrected_side_by_side():
    judge = {f"q{i}": "correct" if i % 4 else "wrong" for i in range(40)}
    hand = {f"q{i}": "correct" if i % 5 else "wrong" for i in range(10)}
    c = corrected_accuracy(judge, hand, "gpt-oss:20b", rounds=200)
    console = Console(width=200, record=True)
    print_corrected([c], console, "All systems together")
    text = console.export_text()
    assert "judge-corrected" in text and "hand grades alone" in text
    assert c.corrected.format() in text and c.raw.format() in text and "40 / 10" in text
    assert "seed 1, 200 rounds" in text


def search_with_lenient_answers(tmp_path):
    """A search of two systems with an answers file graded by a lenient judge and, for
    the first 12 questions of each system, by hand (the hand fails every third answer
    the judge passed): ``(results, judge, hand)``, grades keyed by (system, question)."""
    import json

    from typer.testing import CliRunner

    from ragmeter.cli import app
    from ragmeter.runs.results import Results

    results = tmp_path / "res"
    done = CliRunner().invoke(
        app, ["search", "--strategies", "fixed,sentence", "--rounds", "200", "-o", str(results)]
    )
    assert done.exit_code == 0, done.output
    res = Results(results)
    (results / "answers").mkdir()
    (results / "answers" / "meta.json").write_text(
        json.dumps({"reader": "r", "judges": ["judge-a"], "k": 5})
    )
    grades = ["correct", "partial", "wrong", "correct", "correct"]
    judge, hand = {}, {}
    with (results / "answers" / "answers.jsonl").open("w", encoding="utf-8") as fh:
        for i, s in enumerate(res.systems):
            for j, q in enumerate(res.question_ids):
                g = grades[(i + j) % 5]
                row = {"system": s, "question": q, "answer": "a", "grades": {"judge-a": g}}
                judge[(s, q)] = g
                if j < 12:  # a lenient judge: the hand fails every third answer it passed
                    row["hand"] = "wrong" if g != "correct" or j % 3 == 0 else "correct"
                    hand[(s, q)] = row["hand"]
                fh.write(json.dumps(row) + "\n")
    return res, judge, hand


def test_report_answer_table_carries_the_corrected_accuracy(tmp_path):
    from ragmeter.report.html import report_data

    res, by_pair, hand_by_pair = search_with_lenient_answers(tmp_path)
    judge, hand = {}, {}
    for (s, q), g in by_pair.items():
        judge.setdefault(s, {})[q] = g
    for (s, q), g in hand_by_pair.items():
        hand.setdefault(s, {})[q] = g
    data = report_data(res)
    for row in data["optional"]["answers"]["accuracy"]:
        s = row["system"]
        expect = corrected_accuracy(judge[s], hand[s], "judge-a", s, rounds=200, seed=1)
        assert row["corrected"]["n_hand"] == 12
        assert row["corrected"]["mean"] == pytest.approx(expect.corrected.mean, abs=1e-6)
        assert row["corrected"]["mean"] < row["correct"]["mean"]  # the judge was lenient

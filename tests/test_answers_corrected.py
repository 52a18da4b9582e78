"""Judge-corrected paired verdicts: differences between systems corrected by hand grades."""

from __future__ import annotations

import numpy as np
import pytest
from rich.console import Console

from ragmeter.answers.corrected import CorrectedVerdicts, corrected_verdicts
from ragmeter.errors import InputError
from ragmeter.stats import ppi


def _biased_run(seed, q=400, n=80, p=(0.6, 0.6), lenient=(0.35, 0.05)):
    """Two systems equally good by hand; a judge lenient to the first only. Hand grades of
    n random answers per system, on different questions."""
    rng = np.random.default_rng(seed)
    right = rng.random((len(p), q)) < np.array(p)[:, None]
    u = rng.random(right.shape)
    judge = np.where(right, u < 0.95, u < np.array(lenient)[:, None]).astype(float)
    hand = np.full(judge.shape, np.nan)
    for s in range(len(p)):
        pick = rng.choice(q, n, replace=False)
        hand[s, pick] = right[s, pick]
    return judge, hand


def test_one_system_joint_variance_is_ppi_variance():
    judge, hand = _biased_run(1)
    joint = ppi.joint_ppi(judge, hand, adjusted=False)
    seen = ~np.isnan(hand[0])
    args = (hand[0, seen], judge[0, seen], judge[0, ~seen])
    lam = ppi.tuned_weight(*args)
    assert joint.weights[0] == pytest.approx(lam)
    assert joint.means[0] == pytest.approx(ppi.ppi_mean(*args, lam))
    assert joint.cov[0, 0] == pytest.approx(ppi.ppi_variance(*args, lam))


def test_one_systems_printed_interval_is_the_paired_verdicts_rule_for_one_system():
    # What `grade` prints for one system: the joint estimate and its variance (adjusted),
    # z widened for its hand grades as a pair's is for the fewer of its two systems'.
    from statistics import NormalDist

    from ragmeter.answers.analysis import ppi_accuracy

    judge, hand = _biased_run(1)
    joint = ppi.joint_ppi(judge, hand)
    for s in range(judge.shape[0]):
        seen = ~np.isnan(hand[s])
        n = int(seen.sum())
        est = ppi_accuracy(judge[s, ~seen], judge[s, seen], hand[s, seen])
        half = NormalDist().inv_cdf(0.975) * ppi.widening_for(n) * np.sqrt(joint.cov[s, s])
        assert est.mean == pytest.approx(joint.means[s], abs=1e-12)
        assert (est.low, est.high) == pytest.approx((est.mean - half, est.mean + half), abs=1e-12)
        assert (est.low, est.high) == ppi.ppi_interval(
            hand[s, seen],
            judge[s, seen],
            judge[s, ~seen],
            joint.weights[s],
            adjusted=True,
            widen=True,
        )
        assert est.method == "ppi-normal"
    pairs = ppi.pair_tests(joint, [(0, 1)], adjust="none")
    one = NormalDist().inv_cdf(0.975) * ppi.widening_for(min(joint.n_hand[:2]))
    var = joint.cov[0, 0] + joint.cov[1, 1] - 2 * joint.cov[0, 1]
    assert pairs[0].high - pairs[0].difference == pytest.approx(one * np.sqrt(var), rel=1e-12)


def test_same_questions_hand_graded_pair_their_rectifiers():
    # Both systems hand-graded on the same questions: the difference's variance is that
    # of the paired differences of each part.
    rng = np.random.default_rng(2)
    judge = (rng.random((2, 300)) < 0.6).astype(float)
    hand = np.full(judge.shape, np.nan)
    pick = rng.choice(300, 60, replace=False)
    hand[:, pick] = np.where(rng.random((2, 60)) < 0.8, judge[:, pick], 1 - judge[:, pick])
    joint = ppi.joint_ppi(judge, hand, weights="plain", adjusted=False)
    rest = np.setdiff1d(np.arange(300), pick)
    r = hand[:, pick] - judge[:, pick]
    expect = np.var(judge[0, rest] - judge[1, rest]) / rest.size + np.var(r[0] - r[1]) / 60
    got = joint.cov[0, 0] + joint.cov[1, 1] - 2 * joint.cov[0, 1]
    assert got == pytest.approx(expect, rel=1e-9)
    assert joint.both[0][1] == 60


def test_corrected_difference_covers_where_the_judges_misses():
    hits = judge_hits = 0
    for seed in range(200):
        judge, hand = _biased_run(seed)
        joint = ppi.joint_ppi(judge, hand)
        (t,) = ppi.pair_tests(joint, [(0, 1)], adjust="none")
        hits += t.low <= 0.0 <= t.high
        judge_hits += abs(t.judge) < 0.04  # the judge's own difference is about +0.12
    assert hits / 200 >= 0.92
    assert judge_hits / 200 < 0.1


def test_max_t_is_between_unadjusted_and_bonferroni_and_holm_steps_down():
    judge, hand = _biased_run(3, p=(0.6, 0.6, 0.75), lenient=(0.3, 0.05, 0.05))
    joint = ppi.joint_ppi(judge, hand)
    pairs = [(0, 1), (0, 2), (1, 2)]
    none = ppi.pair_tests(joint, pairs, adjust="none")
    maxt = ppi.pair_tests(joint, pairs, adjust="maxt", seed=1, rounds=4000)
    holm = ppi.pair_tests(joint, pairs, adjust="holm")
    assert none[0].critical < maxt[0].critical < holm[0].critical
    for a, b in zip(none, maxt, strict=True):
        assert a.p_value == b.p_value and b.p >= a.p
    order = sorted(none, key=lambda t: t.p_value)
    assert min(1.0, 3 * order[0].p_value) == pytest.approx(
        next(h.p for h in holm if h.a == order[0].a and h.b == order[0].b)
    )
    again = ppi.pair_tests(joint, pairs, adjust="maxt", seed=1, rounds=4000)
    assert [t.p for t in again] == [t.p for t in maxt]  # seeded: the same bit for bit
    with pytest.raises(InputError, match="family rule"):
        ppi.pair_tests(joint, pairs, adjust="bonferroni")


def _grades(judge, hand, names=("a", "b"), questions=None):
    questions = questions or [f"q{i:03d}" for i in range(judge.shape[1])]
    label = {1.0: "correct", 0.0: "wrong"}
    grades = {
        s: {q: label[judge[i, k]] for k, q in enumerate(questions)} for i, s in enumerate(names)
    }
    by_hand = {
        (s, q): label[hand[i, k]]
        for i, s in enumerate(names)
        for k, q in enumerate(questions)
        if not np.isnan(hand[i, k])
    }
    return grades, by_hand, questions


def test_corrected_verdicts_mark_the_pair_and_count_hand_grades():
    judge, hand = _biased_run(4)
    grades, by_hand, questions = _grades(judge, hand)
    v = corrected_verdicts(grades, by_hand, questions, [("a", "b")], seed=3, rounds=500)
    (row,) = v.rows
    assert (row.hand_a, row.hand_b) == (80, 80)
    shared = {q for s, q in by_hand if s == "a"} & {q for s, q in by_hand if s == "b"}
    assert row.hand_both == len(shared)
    assert row.judge > 0.08  # the lenient judge favours a
    assert abs(row.difference.mean) < row.judge
    assert (row.difference.seed, row.difference.rounds, row.difference.method) == (
        3,
        500,
        "ppi-normal-maxt",
    )
    assert CorrectedVerdicts.from_dict(v.to_dict()) == v


def test_a_system_with_too_few_hand_grades_is_left_out_with_a_note():
    judge, hand = _biased_run(5, p=(0.6, 0.6, 0.6), lenient=(0.3, 0.05, 0.05))
    hand[2, np.flatnonzero(~np.isnan(hand[2]))[3:]] = np.nan  # c keeps 3 hand grades
    grades, by_hand, questions = _grades(judge, hand, ("a", "b", "c"))
    pairs = [("a", "b"), ("a", "c"), ("b", "c")]
    v = corrected_verdicts(grades, by_hand, questions, pairs)
    assert [(r.a, r.b) for r in v.rows] == [("a", "b")]
    assert "c (3)" in v.notes[0] and "2 of 3 pairs" in v.notes[0]
    only_c = corrected_verdicts(grades, by_hand, questions, [("a", "c")])
    assert only_c is None


def test_grade_output_and_verdicts_file_carry_the_corrected_family(tmp_path):
    from test_answers_ppi import search_with_lenient_answers

    from ragmeter.answers.paired import answer_verdicts, read_answer_verdicts, write_answer_verdicts
    from ragmeter.cli.answer_verdict_views import print_answer_verdicts

    res, _, _ = search_with_lenient_answers(tmp_path)
    v = answer_verdicts(res)
    assert list(v.corrected) == ["correct", "correct or partial"]
    fixed = v.corrected["correct"]
    assert fixed.measure == "correct" and fixed.rows
    assert all(r.hand_a == 12 and r.hand_b == 12 for r in fixed.rows)
    write_answer_verdicts(v, res)
    assert read_answer_verdicts(res).corrected == v.corrected
    console = Console(width=80, record=True)
    print_answer_verdicts(v, console)
    text = console.export_text()
    assert "Paired verdicts on correct, judge-corrected by hand" in text
    assert "Paired verdicts on correct or partial, judge-corrected by hand" in text
    assert "12/12/12" in text and "share correct or partial = weight" in text
    assert all(r.judge_corrected and r.verdict in text for r in fixed.rows)
    assert "random sample" in text
    assert max(len(line) for line in text.splitlines()) <= 80
    plain = answer_verdicts(res, ppi="plain").corrected
    assert {w for c in plain.values() for w in c.weights.values()} == {1.0}


def test_saving_table_shows_weight_worth_bound_and_warns_when_hand_is_as_tight():
    from ragmeter.answers.analysis import corrected_accuracy
    from ragmeter.cli.corrected_views import print_saving

    rng = np.random.default_rng(8)
    right = rng.random(400) < 0.7
    keys = [f"q{i}" for i in range(400)]
    good = {
        k: "correct" if (r if rng.random() < 0.95 else not r) else "wrong"
        for k, r in zip(keys, right, strict=True)
    }
    coin = {k: "correct" if rng.random() < 0.5 else "wrong" for k in keys}
    hand = {k: "correct" if r else "wrong" for k, r in zip(keys[:60], right[:60], strict=True)}
    helped = corrected_accuracy(good, hand, "good", "sys-a", rounds=200)
    useless = corrected_accuracy(coin, hand, "coin", "sys-b", rounds=200)
    assert helped.effective_hand > 2 * helped.n_hand and not helped.hand_as_tight
    assert helped.bound is None  # agrees on about 95%, more than the 70% correct
    assert useless.hand_as_tight and useless.weight < 0.2
    assert useless.bound == 2.0  # agrees on about half: no better than the system
    console = Console(width=80, record=True)
    print_saving([helped, useless], console, "per system")
    text = console.export_text()
    assert f"{helped.effective_hand:.0f}" in text and "x2" in text and "tuned" in text
    assert "Warning: sys-b: hand grades alone are as tight" in text
    assert "sys-a: hand grades alone" not in text
    assert max(len(line) for line in text.splitlines()) <= 80
    assert useless.to_dict()["saved"] == pytest.approx(useless.effective_hand - 60)


def test_an_unknown_weight_is_one_line_and_exit_code_2(tmp_path):
    from typer.testing import CliRunner

    from ragmeter.cli import app

    done = CliRunner().invoke(app, ["judges", str(tmp_path), "--ppi", "best"])
    assert done.exit_code == 2
    assert "--ppi: unknown rectifier weight 'best'; use one of tuned, plain" in done.output


def test_correct_or_partial_is_the_same_correction_with_partial_passing():
    # Correcting "correct or partial" is correcting "correct" once every partial grade (by
    # the judge and by hand) is read as correct; it differs from "correct" itself.
    judge, hand = _biased_run(9)
    grades, by_hand, questions = _grades(judge, hand)
    rng = np.random.default_rng(9)
    half = {q for q in questions if rng.random() < 0.3}

    def partial(g, q):
        return "partial" if g == "correct" and q in half else g

    mixed = {s: {q: partial(g, q) for q, g in row.items()} for s, row in grades.items()}
    mixed_hand = {(s, q): partial(g, q) for (s, q), g in by_hand.items()}
    got = corrected_verdicts(
        mixed, mixed_hand, questions, [("a", "b")], measure="correct or partial", seed=2
    )
    same = corrected_verdicts(grades, by_hand, questions, [("a", "b")], seed=2)
    assert got.measure == "correct or partial"
    assert got.rows[0].difference.mean == pytest.approx(same.rows[0].difference.mean, abs=1e-12)
    assert (got.rows[0].difference.low, got.rows[0].difference.high) == pytest.approx(
        (same.rows[0].difference.low, same.rows[0].difference.high), abs=1e-12
    )
    strict = corrected_verdicts(mixed, mixed_hand, questions, [("a", "b")], seed=2)
    assert strict.rows[0].difference.mean != pytest.approx(got.rows[0].difference.mean)


def test_a_verdicts_file_with_one_corrected_family_still_reads():
    from ragmeter.answers.paired import _read_corrected

    judge, hand = _biased_run(4)
    grades, by_hand, questions = _grades(judge, hand)
    v = corrected_verdicts(grades, by_hand, questions, [("a", "b")], rounds=200)
    assert _read_corrected(v.to_dict()) == {"correct": v}
    assert _read_corrected({"correct": v.to_dict()}) == {"correct": v}
    assert _read_corrected(None) == {}

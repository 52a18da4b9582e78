"""``ragmeter check --metric correct``: the CI gate on an answer run. Each run's scores are
those its paired verdicts use (0/1 by the accuracy judge, unscored as not correct, the mean
over reruns with K > 1), paired by question and decided by the gate's one rule."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from test_answers import Scripted, judge_by_question, reader
from test_answers_reruns import Sampling, seeded_judge
from typer.testing import CliRunner

from ragmeter.answers import answer_questions, grade_answers
from ragmeter.answers.flips import rerun_scores
from ragmeter.answers.paired import answer_measure, answer_scores
from ragmeter.answers.reruns import Reruns
from ragmeter.cli import app
from ragmeter.errors import InputError
from ragmeter.history.gate import check_answers_noninferior, check_noninferior
from ragmeter.runs.results import Results

SYSTEM = "sentence"


def _graded(path, judge, name="judge", reruns=None):
    answer_questions(path, Scripted("reader", reader))
    grade_answers(path, Scripted(name, judge), reruns=reruns)
    return path


def wrong_on(*words):
    return judge_by_question(dict.fromkeys(words, "wrong"))


@pytest.fixture
def pair(small_example_results, tmp_path):
    """Two copies of one search run, to be answered and graded differently."""
    base = shutil.copytree(small_example_results, tmp_path / "base")
    cand = shutil.copytree(small_example_results, tmp_path / "cand")
    return base, cand


def _questions_with(path, word):
    return [q.id for q in Results(path).questions if word in q.text]


def test_an_identical_answer_run_passes_and_one_that_lost_answers_fails(pair):
    base, cand = pair
    _graded(base, wrong_on("Raft"))
    _graded(cand, wrong_on("Raft"))
    same = check_answers_noninferior(base, cand, SYSTEM, "correct", 0.02, rounds=300)
    assert same.passed and same.identical and same.metric == "correct"
    assert "answers graded by test:judge" in same.line

    worse = shutil.copytree(cand, cand.parent / "worse", ignore=shutil.ignore_patterns("answers"))
    _graded(worse, wrong_on("Raft", "Bloom", "filter"))
    lost = set(_questions_with(worse, "Bloom")) | set(_questions_with(worse, "filter"))
    lost -= set(_questions_with(worse, "Raft"))
    assert lost, "the example has questions the candidate's judge marks wrong"
    check = check_answers_noninferior(base, worse, SYSTEM, "correct", 0.02, rounds=300)
    assert not check.passed and check.line.startswith("FAIL correct sentence")
    assert check.difference.n == 8 and check.losses == len(lost) and check.wins == 0
    assert check.difference.mean == pytest.approx(-len(lost) / 8)
    base_scores = answer_scores(base, SYSTEM, "correct").scores
    assert check.baseline == pytest.approx(base_scores.mean())


def test_the_answer_gate_decides_by_the_search_gates_rule_on_the_same_scores(pair):
    """The same 0/1 scores as a search metric and as answers: one rule, one verdict."""
    base, cand = pair
    _graded(base, wrong_on("Raft"))
    _graded(cand, wrong_on("Raft", "Bloom"))
    answers = check_answers_noninferior(base, cand, SYSTEM, "correct", 0.3, rounds=300)
    x = answer_scores(cand, SYSTEM, "correct").scores
    y = answer_scores(base, SYSTEM, "correct").scores
    # the search gate on runs whose metric holds those scores gives the same interval
    fake_base, fake_cand = Results(base), Results(cand)
    fake_base.scores = lambda system, metric: y  # type: ignore[method-assign]
    fake_cand.scores = lambda system, metric: x  # type: ignore[method-assign]
    metric = fake_base.metrics[0]
    search = check_noninferior(fake_base, fake_cand, SYSTEM, metric, 0.3, rounds=300)
    assert (answers.difference.low, answers.difference.high) == (
        search.difference.low,
        search.difference.high,
    )
    assert answers.passed == search.passed and answers.interval == search.interval


def test_with_reruns_each_question_scores_its_mean_over_its_reruns(pair):
    base, cand = pair
    reruns = Reruns(k=3, of="judge", temperature=0.7, seed=1)
    answer_questions(base, Scripted("reader", reader))
    grade_answers(base, Sampling("judge", seeded_judge), reruns=reruns)
    answer_questions(cand, Scripted("reader", reader))
    grade_answers(
        cand,
        Sampling("judge", seeded_judge),
        reruns=Reruns(k=3, of="judge", temperature=0.7, seed=7),
    )
    check = check_answers_noninferior(base, cand, SYSTEM, "correct", 0.5, rounds=300)
    means = {
        p: np.nanmean(rerun_scores(p, measure="correct").scores[SYSTEM], axis=1)
        for p in (base, cand)
    }
    assert check.difference.mean == pytest.approx(float(np.mean(means[cand] - means[base])))
    assert "each question's mean over its reruns (K = 3 / 3)" in check.line
    assert not np.isin(means[base], (0.0, 1.0)).all()  # the reruns flipped: not 0/1 scores


def test_correct_or_partial_counts_partial_and_both_spellings_name_it(pair):
    base, cand = pair
    _graded(base, judge_by_question({}))
    _graded(cand, judge_by_question({"Bloom": "partial"}))
    assert answer_measure("correct_or_partial") == answer_measure("Correct or partial")
    assert answer_measure("recall@5") is None
    cp = check_answers_noninferior(base, cand, SYSTEM, "correct_or_partial", 0.02, rounds=300)
    assert cp.identical and cp.metric == "correct or partial"
    strict = check_answers_noninferior(base, cand, SYSTEM, "correct", 0.02, rounds=300)
    assert not strict.identical and strict.losses == len(_questions_with(cand, "Bloom"))


def test_runs_graded_by_different_judges_are_refused(pair):
    base, cand = pair
    _graded(base, judge_by_question({}), name="judge")
    _graded(cand, judge_by_question({}), name="other")
    with pytest.raises(InputError, match="a change of judge changes the measurement"):
        check_answers_noninferior(base, cand, SYSTEM, "correct", 0.02)


def test_a_run_without_answers_is_a_one_line_error(pair):
    base, cand = pair
    _graded(base, judge_by_question({}))
    with pytest.raises(InputError, match="no answers; run `ragmeter answer`"):
        check_answers_noninferior(base, cand, SYSTEM, "correct", 0.02)


def test_questions_graded_in_one_run_only_are_left_out_and_said(pair):
    base, cand = pair
    _graded(base, judge_by_question({}))
    answer_questions(cand, Scripted("reader", reader))
    grade_answers(cand, Scripted("judge", judge_by_question({})), limit=5)
    check = check_answers_noninferior(base, cand, SYSTEM, "correct", 0.02, rounds=300)
    assert check.difference.n == 5 and check.identical
    assert "3 questions without a graded answer in one run left out" in check.line


def test_the_cli_gates_on_correct_with_exit_codes_and_markdown(pair, tmp_path):
    base, cand = pair
    _graded(base, judge_by_question({}))
    _graded(cand, wrong_on("Bloom", "Raft", "filter"))
    runner = CliRunner()
    args = ["check", str(base), str(cand), "--system", SYSTEM, "--metric", "correct"]
    md = tmp_path / "gate.md"
    failed = runner.invoke(app, [*args, "--markdown", str(md)], env={"COLUMNS": "1000"})
    assert failed.exit_code == 1, failed.output
    assert failed.stdout.startswith("FAIL correct sentence: candidate - baseline = ")
    assert "answers graded by test:judge" in failed.stdout
    assert "### ragmeter check failed: correct, sentence" in md.read_text()
    assert "Answers graded by test:judge" in md.read_text()
    passed = runner.invoke(app, [*args, "--margin", "99"], env={"COLUMNS": "1000"})
    assert passed.exit_code == 0, passed.output
    bad = runner.invoke(app, [*args[:-1], "correct_or_wrong"], env={"COLUMNS": "1000"})
    assert bad.exit_code == 2


def test_an_answer_measure_with_a_baseline_from_history_is_refused(pair):
    base, cand = pair
    _graded(cand, judge_by_question({}))
    done = CliRunner().invoke(
        app,
        ["check", "--baseline-from-history", "latest", str(cand), "--system", SYSTEM,
         "--metric", "correct"],
        env={"COLUMNS": "1000"},
    )  # fmt: skip
    assert done.exit_code == 2
    assert "the history keeps search scores, not answers" in done.output

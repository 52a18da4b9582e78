"""The answer measures as rows of the metric table (``scoring.names.FAMILIES``): ``correct``,
``correct or partial`` and each failure rate are rows of the answer half (no cutoff, no
name a search lists), and the views read their title, digits and direction from the row:
a row changed in the table reaches the grade table, the paired verdicts on answers and
the gate's line with nothing else changed."""

from __future__ import annotations

import dataclasses
import io
import shutil

import pytest
from rich.console import Console
from test_answers import Scripted, judge_by_question, reader

from ragmeter.answers import answer_questions, grade_answers
from ragmeter.answers.analysis import Accuracy, AnswerReport, CrossTable, SystemAnswers
from ragmeter.answers.paired import answer_verdicts
from ragmeter.cli.answer_verdict_views import print_answer_verdicts
from ragmeter.cli.answer_views import print_answer_report
from ragmeter.history.gate import check_answers_noninferior
from ragmeter.scoring import names
from ragmeter.stats import Estimate

SYSTEM = "sentence"

RETITLED = dataclasses.replace(names.FAMILY["correct"], title="right answers", digits=2)
"""``correct``'s row with another title and two decimals: what every view should show."""


@pytest.fixture
def retitled(monkeypatch):
    rows = tuple(RETITLED if r.name == "correct" else r for r in names.FAMILIES)
    monkeypatch.setattr(names, "FAMILIES", rows)


def _est(mean: float, low: float, high: float) -> Estimate:
    return Estimate(mean, low, high, 8, 500, 3, "percentile", "mulberry32")


def _report() -> AnswerReport:
    accuracy = Accuracy(
        _est(0.5, 0.25, 0.75), _est(0.625, 0.25, 0.875), {"correct": 4, "partial": 1}, 8, 0
    )
    cross = CrossTable({k: {c: [] for c in ("correct", "partial", "wrong", "unscored")}
                        for k in ("found", "missed")})  # fmt: skip
    row = SystemAnswers(SYSTEM, "test:j", 8, accuracy, _est(0.75, 0.5, 1.0), cross)
    return AnswerReport("test:r", "test:j", ["test:j"], 5, 3, 500, [row])


def _printed(show, *args) -> str:
    console = Console(width=250, record=True, file=io.StringIO())
    show(*args, console)
    text = "".join(c for c in console.export_text() if not "\u2500" <= c <= "\u257f")
    return " ".join(text.split())  # the words, without the tables' rules


def test_the_answer_measures_are_rows_of_the_answer_half_without_a_cutoff():
    assert names.answer_measures() == ("correct", "correct or partial")
    assert set(names.answer_measures(costs=True)) == {"refused", "number_changed",
        "number_left_out", "unsupported", "without_passage", "any"}  # fmt: skip
    m = names.Metric.parse("correct or partial")
    assert (m.k, m.share, m.rules.half, names.metric_scale(m)) == (None, True, "answers", (100, 1))
    with pytest.raises(names.InputError):
        names.Metric("correct", 5)
    assert names.lower_is_better("any") and not names.lower_is_better("correct")
    assert names.answer_measure("correct_or_partial") == "correct or partial"


def test_a_search_lists_no_answer_measure():
    every = names.metric_names((5,))
    assert not set(every) & set(names.table().answers)
    assert not set(names.METRIC_NAMES) & set(names.table().answers)
    assert "correct" not in str(names._bad_metric("nope"))


def test_the_grade_table_prints_correct_as_the_table_says(retitled):
    printed = _printed(print_answer_report, _report())
    assert "hit@5 right answers correct or partial" in printed
    assert "50.00 [25.00, 75.00]" in printed  # correct: two decimals
    assert "62.5 [25.0, 87.5]" in printed  # correct or partial: its own row, one decimal


def test_the_grade_table_without_the_change_prints_what_it_did():
    printed = _printed(print_answer_report, _report())
    assert "hit@5 correct correct or partial" in printed
    assert "50.0 [25.0, 75.0]" in printed and "right answers" not in printed


@pytest.fixture
def graded(small_example_results, tmp_path):
    """Two copies of the example, answered alike; the candidate's judge marks wrong the
    answers to the questions on Raft and on Bloom filters, the baseline's on Raft only."""
    runs = {}
    for name, words in (("base", ("Raft",)), ("cand", ("Raft", "Bloom"))):
        path = shutil.copytree(small_example_results, tmp_path / name)
        answer_questions(path, Scripted("reader", reader))
        grade_answers(path, Scripted("judge", judge_by_question(dict.fromkeys(words, "wrong"))))
        runs[name] = path
    return runs["base"], runs["cand"]


def test_the_gate_names_and_prints_the_answer_measure_by_its_row(graded, retitled):
    base, cand = graded
    check = check_answers_noninferior(base, cand, SYSTEM, "correct", 0.02, rounds=300)
    assert check.metric == "correct"  # the name it is recorded by does not change
    line = check.line
    assert line.startswith("FAIL right answers sentence: candidate - baseline = -25.00 [-59.07, ")
    assert "observed loss 25.00 points: only a margin above 59.07 points" in line
    assert "| candidate - baseline | -25.00 |" in check.markdown()


def test_the_gate_without_the_change_prints_what_it_did(graded):
    base, cand = graded
    check = check_answers_noninferior(base, cand, SYSTEM, "correct", 0.02, rounds=300)
    assert check.line.startswith("FAIL correct sentence: candidate - baseline = -25.0 [-59.1, ")


def test_the_paired_verdicts_on_answers_are_titled_by_the_row(graded, retitled):
    base, cand = graded
    shutil.rmtree(base / "answers")  # one run, two systems: the candidate's answers
    printed = _printed(print_answer_verdicts, answer_verdicts(cand, rounds=300))
    assert "Paired comparisons on right answers (A - B, points;" in printed
    assert "Paired comparisons on correct or partial (A - B, points;" in printed


def test_the_report_is_given_the_rows_title_and_digits(graded, retitled):
    from ragmeter.report.sections import load_answers
    from ragmeter.runs.results import Results

    _, cand = graded
    data = load_answers(Results(cand))
    assert data["titles"] == {
        "correct": "right answers",
        "correct or partial": "correct or partial",
    }
    assert data["accuracy"][0]["correct"]["shown"].startswith("75.00 [")
    tables = data["verdicts"]["tables"]
    assert [t["title"] for t in tables] == ["right answers", "correct or partial"]
    assert [t["measure"] for t in tables] == ["correct", "correct or partial"]  # its name


def test_a_failure_rate_is_titled_and_printed_by_its_row(graded, monkeypatch):
    from ragmeter.answers.failure_counts import failure_report
    from ragmeter.cli.failure_views import print_failure_table

    row = dataclasses.replace(names.FAMILY["any"], title="some failure", digits=2)
    monkeypatch.setattr(
        names, "FAMILIES", tuple(row if r.name == "any" else r for r in names.FAMILIES)
    )
    report = failure_report(graded[1], rounds=300)
    printed = _printed(print_failure_table, report)
    rate = report.systems[0].rates["any"]
    assert f"some failure {report.systems[0].counts['any']}: {rate.mean * 100:.2f} [" in printed
    assert "any failure" not in printed


def test_an_answer_measures_passing_grades_come_from_its_row(monkeypatch):
    """Which grades count as a 1 is the row's rule: a row that stops counting partial
    answers changes the scores the paired verdicts compare, with no other change."""
    from dataclasses import replace

    from ragmeter.answers import paired
    from ragmeter.scoring import names

    assert names.passing_grades("correct_or_partial") == ("correct", "partial")
    assert names.passing_grades("correct") == ("correct",)
    rows = tuple(
        replace(f, passes=("correct",)) if f.name == "correct or partial" else f
        for f in names.FAMILIES
    )
    monkeypatch.setattr(names, "FAMILIES", rows)
    assert names.passing_grades("correct or partial") == ("correct",)
    grades = {"A": {"q1": "partial", "q2": "correct"}, "B": {"q1": "wrong", "q2": "partial"}}
    monkeypatch.setattr(paired, "rerun_count", lambda aset: 1)  # one grade an answer
    scores = paired._scores(None, None, grades, ["q1", "q2"])
    assert scores["correct or partial"].tolist() == [[0.0, 1.0], [0.0, 0.0]]
    assert scores["correct"].tolist() == [[0.0, 1.0], [0.0, 0.0]]

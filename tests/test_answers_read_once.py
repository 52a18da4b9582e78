"""An answer run is read once: ``grade`` turns its results folder into the run one time
and hands that run on, and the views after grading (accuracy, failure counts, paired
verdicts, flip rates) share the one answer set read after grading."""

from __future__ import annotations

import io

import pytest
from rich.console import Console
from test_answers import Scripted, reader

import ragmeter.answers.store as store
from ragmeter.cli.answer_views import answer_command, grade_command
from ragmeter.runs.results import Results


def _console() -> Console:
    return Console(file=io.StringIO(), width=100)


def _counted(monkeypatch) -> dict[str, int]:
    """How often a results folder is read into a run and the answer files into a set."""
    counts = {"runs": 0, "answer sets": 0}
    opened, read = Results.__init__, store.read_answers

    def init(self, path):
        counts["runs"] += 1
        opened(self, path)

    def answers(folder):
        counts["answer sets"] += 1
        return read(folder)

    monkeypatch.setattr(Results, "__init__", init)
    monkeypatch.setattr(store, "read_answers", answers)  # load_answer_set's own read
    return counts


@pytest.mark.parametrize(
    ("choice", "reruns"),
    [(None, None), ({"adjust": "none"}, {})],  # the second as the command line calls it
)
def test_grade_reads_its_run_once_and_its_answers_once_after_grading(
    small_example_results_copy, monkeypatch, choice, reruns
):
    results = small_example_results_copy
    answer_command(results, Scripted("reader", reader), console=_console())
    counts = _counted(monkeypatch)
    grade_command(results, [Scripted("j", lambda p: '{"grade": "correct"}')],
                  choice=choice, reruns=reruns, console=_console())  # fmt: skip
    # the run once; the answers once to choose what to grade, once to rewrite the merged
    # view when the judge is done (under the lock), and once for every view after
    assert counts == {"runs": 1, "answer sets": 3}


def test_the_report_reads_the_answers_once_for_its_answer_and_failure_sections(
    small_example_results_copy, monkeypatch
):
    from ragmeter.report.data import report_data

    results = small_example_results_copy
    answer_command(results, Scripted("reader", reader), console=_console())
    grade_command(results, [Scripted("j", lambda p: '{"grade": "correct"}')], console=_console())
    run = Results(results)
    counts = _counted(monkeypatch)
    data = report_data(run)
    assert counts == {"runs": 0, "answer sets": 1}
    assert {"answers", "failures"} <= set(data["optional"])  # both drawn from that one set


def test_the_plan_and_the_usage_take_the_pilot_s_set_and_read_nothing_more(
    small_example_results_copy, monkeypatch
):
    from ragmeter.answers.cost import plan_answers, run_usage

    results = small_example_results_copy
    answer_command(results, Scripted("reader", reader), limit=3, console=_console())
    grade_command(results, [Scripted("j", lambda p: '{"grade": "correct"}')], console=_console())
    from_folder = plan_answers(results, half_width=0.2), run_usage(results)
    pilot = store.load_answer_set(results)
    counts = _counted(monkeypatch)
    from_set = plan_answers(pilot, half_width=0.2), run_usage(pilot)
    assert counts == {"runs": 0, "answer sets": 0}
    assert from_set == from_folder

"""``ragmeter.cli.failure_views``: the check settings from ``--refusal`` and ``--support``
(patterns added, a share above 0 and at most 1), each failure described in its own words,
10 answers listed per failure by default with the rest counted, the one-line summary per
system, the comparison's verdict naming the system that fails less with its difference
right-aligned, the leniency table only when a judge scored flagged answers, and
``failures`` passing its seed, rounds and settings on and printing on its console."""

from __future__ import annotations

import pytest
from rich.console import Console

from ragmeter.answers.failure_counts import (
    ANY,
    FailureReport,
    Leniency,
    Precision,
    SystemFailures,
    _comparisons,
)
from ragmeter.answers.failures import (
    DEFAULT,
    FAILURES,
    AnswerCheck,
    Change,
    CheckSettings,
    Unsupported,
)
from ragmeter.cli import failure_views
from ragmeter.cli.failure_views import (
    check_settings,
    failures_command,
    print_comparisons,
    print_failure_details,
    print_failure_summary,
    print_leniency,
)
from ragmeter.errors import InputError
from ragmeter.stats import Estimate


def _console() -> Console:
    return Console(width=200, record=True, file=open("/dev/null", "w"))  # noqa: SIM115


def _est(mean: float, low: float, high: float, n: int = 4) -> Estimate:
    return Estimate(mean, low, high, n, 1000, 1, "percentile", "mulberry32")


def _report(checks=(), leniency=(), precision=(), comparisons=None) -> FailureReport:
    counts = {k: i for i, k in enumerate((*FAILURES, ANY))}
    rates = {k: _est(0.25, 0.1, 0.5) for k in (*FAILURES, ANY)}
    return FailureReport(
        reader="test:reader",
        judge="test:judge",
        k=5,
        seed=1,
        rounds=1000,
        confidence=0.95,
        settings=DEFAULT,
        checks=list(checks),
        systems=[SystemFailures("sentence", 4, counts, rates)],
        comparisons=comparisons,
        leniency=list(leniency),
        precision=list(precision),
    )


def _check(question: str, kind: str, **kw) -> AnswerCheck:
    return AnswerCheck(
        "sentence", question, True, "correct", kind == "refused", failures=(kind,), **kw
    )


# --- settings -------------------------------------------------------------------------------


def test_check_settings_add_refusals_and_take_a_support_share():
    assert check_settings() == DEFAULT
    assert check_settings([r"^meh\b"]).refusals == (*DEFAULT.refusals, r"^meh\b")
    assert check_settings(support=0.25) == CheckSettings(
        DEFAULT.refusals, DEFAULT.quantity, 0.25, DEFAULT.min_words
    )
    assert check_settings(support=1.0).threshold == 1.0
    for bad in (0.0, 1.5, -0.1):
        with pytest.raises(InputError, match="--support"):
            check_settings(support=bad)
    with pytest.raises(InputError, match="--refusal"):
        check_settings(["("])


# --- the details ----------------------------------------------------------------------------


def test_each_failure_is_described_in_its_own_words():
    checks = [
        _check("q1", "number_changed", changed=(Change("48", "4.8"), Change("9", None))),
        _check("q2", "unsupported", unsupported=(Unsupported("Elephants fly.", 0.2),)),
        _check("q3", "without_passage"),
        _check("q4", "refused"),
        _check("q5", "number_left_out", left_out=True),
    ]
    console = _console()
    print_failure_details(_report(checks), console)
    lines = [line.strip() for line in console.export_text().splitlines()]
    assert "sentence/q1: 48 (reference: 4.8); 9 (reference: None)" in lines
    assert "sentence/q2: 'Elephants fly.' (20% support)" in lines
    assert "sentence/q3: graded correct, passage not in the top k" in lines
    assert "sentence/q4: declined with the passage in the top k" in lines
    assert "sentence/q5: states none of the reference's numbers" in lines
    assert "number changed (1):" in lines and "refused with the passage (1):" in lines


def _listed(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip().startswith("sentence/")]


def test_ten_answers_are_listed_per_failure_by_default_the_rest_counted():
    checks = [_check(f"q{i:02d}", "refused") for i in range(11)]
    console = _console()
    print_failure_details(_report(checks), console)
    text = console.export_text()
    assert len(_listed(text)) == 10 and "... and 1 more (all in answers/failures.json)" in text
    console = _console()
    print_failure_details(_report(checks), console, show=0)
    text = console.export_text()
    assert len(_listed(text)) == 11 and "more" not in text


def test_the_summary_has_one_line_per_system_with_each_count():
    console = _console()
    print_failure_summary(_report(), console)
    assert (
        "  sentence (4 answers): 0 refused with the passage, 1 number changed, "
        "2 number left out, 3 unsupported statement, 4 correct without the passage"
    ) in console.export_text().splitlines()


# --- comparisons and judges -----------------------------------------------------------------


def test_a_separated_pair_names_the_system_that_fails_less_right_aligned():
    n = 40
    any_by_q = {
        "a": {f"q{i}": float(i < 24) for i in range(n)},
        "b": {f"q{i}": 0.0 for i in range(n)},
    }
    verdicts = _comparisons(any_by_q, 2000, 3, 0.95, "holm")
    [row] = verdicts.rows
    assert row.separated
    console = _console()
    print_comparisons(_report(comparisons=verdicts), console)
    text = console.export_text()
    assert "a - b (points)" in text
    [line] = [x for x in text.splitlines() if x.startswith("│ a ")]
    cells = line.split("│")
    assert cells[-2].strip() == "b fails less"
    diff = cells[3]
    assert diff.strip().startswith("+60.0") and diff.endswith("] ") and diff.startswith("  ")


@pytest.mark.parametrize("failing", ["a", "b"])
def test_the_verdict_names_the_system_with_fewer_failures_either_way(failing):
    n = 40
    any_by_q = {s: {f"q{i}": float(s == failing and i < 24) for i in range(n)} for s in ("a", "b")}
    verdicts = _comparisons(any_by_q, 2000, 3, 0.95, "holm")
    console = _console()
    print_comparisons(_report(comparisons=verdicts), console)
    [line] = [x for x in console.export_text().splitlines() if x.startswith("│ a ")]
    better = "b" if failing == "a" else "a"
    assert line.split("│")[-2].strip() == f"{better} fails less"


def test_leniency_is_shown_only_when_a_judge_scored_flagged_answers():
    console = _console()
    print_leniency([Leniency("test:j", 0, [], None)], console)
    assert console.export_text() == ""

    rows = [
        Leniency("test:lenient", 4, ["sentence/q1", "sentence/q2"], _est(0.5, 0.25, 0.75)),
        Leniency("test:none", 0, [], None),
    ]
    console = _console()
    print_leniency(rows, console)
    text = console.export_text()
    assert "Judges passing a changed or left-out number" in text
    [line] = [x for x in text.splitlines() if x.startswith("│ test:lenient ")]
    assert [c.strip() for c in line.split("│")[1:-1]] == [
        "test:lenient",
        "4",
        "2",
        "50.0 [25.0, 75.0]",
    ]
    assert "  test:lenient passed: sentence/q1 sentence/q2" in text.splitlines()


# --- the command ----------------------------------------------------------------------------


def test_failures_command_passes_its_settings_and_prints_on_its_console(monkeypatch, tmp_path):
    checks = [_check(f"q{i:02d}", "refused") for i in range(11)]
    report = _report(checks, precision=[Precision("refused", 2, 1)])
    asked = []
    monkeypatch.setattr(failure_views, "load_answers", lambda results: ("answers of", results))

    def failure_report(aset, judge, **kw):
        asked.append((aset, judge, kw))
        return report

    monkeypatch.setattr(failure_views, "failure_report", failure_report)
    monkeypatch.setattr(failure_views, "write_failures", lambda r, results: tmp_path / "f.json")
    settings = CheckSettings(threshold=0.7)
    console = _console()
    got = failures_command(
        tmp_path, accuracy_judge="test:j", seed=7, rounds=300, settings=settings, console=console
    )
    assert got is report
    assert asked == [
        (("answers of", tmp_path), "test:j", {"seed": 7, "rounds": 300, "settings": settings})
    ]
    text = console.export_text()
    assert len(_listed(text)) == 10 and "... and 1 more" in text
    assert "Checks against the hand grades" in text and "50%" in text
    assert f"Failures: {tmp_path / 'f.json'}" in text


def test_failures_command_needs_answers(monkeypatch, tmp_path):
    monkeypatch.setattr(failure_views, "load_answers", lambda results: None)
    with pytest.raises(InputError, match="ragmeter answer"):
        failures_command(tmp_path, console=_console())

"""The terminal and the HTML report show the same answer numbers, computed once.

A run that counts part of a passage as found (``relevant_grade = 1``), answers
read from the top 3 for only some questions (as ``answer --k 3 --limit 6``
leaves them), two judges and hand grades; the answer files are written with the
answer store's own writers, so no model is needed.
"""

from __future__ import annotations

import io
import re
import shutil

import pytest
from conftest import SMALL_EXAMPLE_SETTINGS, copy_results, save_example
from rich.console import Console
from typer.testing import CliRunner

from ragmeter.answers.analysis import answer_figures, answer_report, hand_checks, judge_pairs
from ragmeter.answers.store import (
    Answer,
    Grade,
    HandGrade,
    answer_sha,
    answers_dir,
    append_hand,
    update_meta,
    write_answers,
    write_grades,
    write_merged,
)
from ragmeter.comparison.formatting import format_estimate
from ragmeter.errors import InputError
from ragmeter.inputs.config import Config
from ragmeter.runs.results import Results

K = 3
LIMIT = 6
PATTERN_A = ["correct", "partial", "wrong", "correct", "unscored", "correct"]
PATTERN_B = ["correct", "correct", "wrong", "correct", "wrong", "correct"]
HAND = ["correct", "wrong", "wrong", "correct", "partial", "wrong"]


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    path = tmp_path_factory.mktemp("one-view") / "results"
    save_example(path, 8, **(SMALL_EXAMPLE_SETTINGS | {"ks": (1, 3, 5), "relevant_grade": 1}))
    res = Results(path)
    folder = answers_dir(path)
    folder.mkdir()
    answers, grades = [], []
    for i, system in enumerate(res.systems):
        for j, q in enumerate(res.question_ids[:LIMIT]):
            text = f"answer {i}/{j}"
            answers.append(Answer(system, q, text, "test:reader", K))
            for judge, pattern in (("test:a", PATTERN_A), ("test:b", PATTERN_B)):
                grade = pattern[(i + j) % LIMIT]
                grades.append(Grade(judge, system, q, grade, answer_sha=answer_sha(text)))
    write_answers(folder, answers)
    write_grades(folder, grades)
    for i, a in enumerate(answers):
        append_hand(folder, HandGrade(a.system, a.question, HAND[i % LIMIT], a.sha))
    update_meta(folder, reader="test:reader", judges=["test:a", "test:b"], k=K)
    write_merged(path)
    return path


@pytest.fixture
def results(run_dir, tmp_path):
    return copy_results(run_dir, tmp_path / "results")


def fmt(est: dict) -> str:
    """The text the report prints for an estimate (made in Python, as the terminal's),
    checked against the estimate's own rounded numbers."""
    mean, low, high = (float(x) for x in re.findall(r"-?\d+\.\d+", est["shown"]))
    ends = est.get("exact") or (est["low"], est["high"])  # few questions: the exact interval
    assert (mean, low, high) == pytest.approx(
        (est["mean"] * 100, ends[0] * 100, ends[1] * 100), abs=0.051
    )
    return est["shown"]


def terminal_report(results, judge=None) -> str:
    from ragmeter.cli.answer_views import print_answer_report

    console = Console(file=io.StringIO(), width=250, force_terminal=False)
    print_answer_report(answer_report(results, judge=judge), console)
    return console.file.getvalue()


def report_answers(results, judge=None) -> dict:
    from ragmeter.report.html import report_data

    return report_data(Results(results), accuracy_judge=judge)["optional"]["answers"]


def test_hits_count_the_run_relevant_grade_at_the_reader_k_over_answered_questions(results):
    res = Results(results)
    data = report_answers(results)
    assert data["k"] == K and data["primary"] == "test:a"
    differs = 0
    for row in data["accuracy"]:
        runs = res.runs[row["system"]]
        answered = res.question_ids[:LIMIT]
        part = [any(it.grade >= 1 for it in runs[q][:K]) for q in answered]
        whole = [any(it.grade >= 2 for it in runs[q][:K]) for q in answered]
        differs += part != whole
        assert row["n"] == LIMIT  # the answered questions, not all 8
        assert row["found"]["n"] == LIMIT
        assert row["found"]["mean"] == pytest.approx(sum(part) / LIMIT)
    assert differs  # the data tell grade >= 1 from grade >= 2, so the check above bites


def test_terminal_and_report_show_the_same_answer_numbers(results):
    data = report_answers(results)
    rep = answer_report(results)
    text = terminal_report(results)
    assert f"judged by {data['primary']}" in text and f"top {data['k']}" in text
    for row, cross, typed in zip(data["accuracy"], data["cross"], rep.systems, strict=True):
        assert row["system"] == typed.system
        assert row["counts"] == typed.accuracy.counts
        for key, est in (("correct", typed.accuracy.correct), ("found", typed.hit)):
            assert (row[key]["mean"], row[key]["low"], row[key]["high"]) == pytest.approx(
                (est.mean, est.low, est.high), abs=1e-6
            )
            assert fmt(row[key]) in text
        assert row["corrected"]["n_hand"] == typed.corrected.n_hand == LIMIT - 1  # 1 unscored
        assert fmt(row["corrected"]) in text
        for kind in ("found", "missed"):
            for grade, count in cross["table"][kind].items():
                ids = typed.cross.cells[kind][grade]
                assert count == len(ids)
                if ids:  # the terminal lists the same questions in the same cell
                    assert f"{count}: {' '.join(ids)}" in text

    [pair] = judge_pairs(results)
    [ag] = data["agreement"]
    assert (ag["a"], ag["b"], ag["n"]) == (pair.a, pair.b, pair.n)
    assert ag["kappa"]["mean"] == pytest.approx(pair.binary.kappa.mean, abs=1e-6)
    assert ag["more_correct"] == pair.correct_a - pair.correct_b
    checks = {c.judge: c for c in hand_checks(results)}
    for h in data["hand"]:
        c = checks[h["a"]]
        assert (h["n"], h["lenient"], h["strict"]) == (c.n, len(c.lenient), len(c.strict))
        assert h["percent"]["mean"] == pytest.approx(c.binary.percent.mean, abs=1e-6)

    from ragmeter.cli import app

    done = CliRunner().invoke(app, ["judges", str(results)], env={"COLUMNS": "250"})
    assert done.exit_code == 0, done.output
    assert fmt(ag["percent"]) in done.output
    assert ag["kappa"]["shown"] == format_estimate(pair.binary.kappa, "kappa")
    assert ag["kappa"]["shown"] in done.output


def test_the_accuracy_judge_is_chosen_and_named_in_both_views(results):
    data = report_answers(results, judge="test:b")
    text = terminal_report(results, judge="test:b")
    assert data["primary"] == "test:b" and "judged by test:b" in text
    rep = answer_report(results, judge="test:b")
    for row, typed in zip(data["accuracy"], rep.systems, strict=True):
        assert row["judge"] == "test:b"
        assert row["correct"]["mean"] == pytest.approx(typed.accuracy.correct.mean, abs=1e-6)
        assert fmt(row["correct"]) in text
    # the choice can be recorded with the answers; both views follow it
    update_meta(answers_dir(results), accuracy_judge="test:b")
    assert report_answers(results)["primary"] == "test:b"
    assert answer_figures(results).report.judge == "test:b"
    with pytest.raises(InputError, match="no grades by judge 'nobody'"):
        report_answers(results, judge="nobody")


def test_hand_made_merged_file_alone_reads_the_same(results):
    """A hand-written answers.jsonl (no reader.jsonl) goes through the same analysis."""
    before = report_answers(results)
    folder = answers_dir(results)
    for name in ("reader.jsonl", "grades.jsonl", "hand.jsonl"):
        (folder / name).unlink()
    after = report_answers(results)
    assert after["accuracy"] == before["accuracy"]
    assert after["cross"] == before["cross"]
    assert after["agreement"] == before["agreement"] and after["hand"] == before["hand"]


def test_answers_the_judge_has_not_graded_are_counted_apart_in_both_views(results):
    from ragmeter.answers.store import read_grades

    folder = answers_dir(results)
    grades = read_grades(folder)
    res = Results(results)
    first = (res.systems[0], res.question_ids[0])
    write_grades(folder, [g for k, g in grades.items() if (k[0], *k[1:]) != ("test:a", *first)])
    data = report_answers(results)
    row = data["accuracy"][0]
    assert row["ungraded"] == 1 and sum(row["counts"].values()) == LIMIT - 1
    assert data["accuracy"][1]["ungraded"] == 0
    assert "(+1 ungraded)" in terminal_report(results)


# --- the accuracy judge chosen on the command line or in the config ----------------------


class FixedJudge:
    """A ``test:NAME`` backend for ``--judge test:NAME``: grades every answer correct."""

    base_url = None
    max_concurrency = None
    calls = 0

    def __init__(self, model: str, **options) -> None:
        self.kind = "test"
        self.model = model

    def complete(self, request, timeout_s):
        from ragmeter.llm.client import Completion

        FixedJudge.calls += 1
        return Completion('{"grade": "correct", "reason": "fits"}', tokens_in=5, tokens_out=5)

    def close(self) -> None:
        pass


@pytest.fixture
def test_judges(monkeypatch):
    from ragmeter.llm import backends

    monkeypatch.setitem(backends.KINDS, "test", FixedJudge)
    monkeypatch.setattr(FixedJudge, "calls", 0)


def cli(*args: str):
    from ragmeter.cli import app

    return CliRunner().invoke(app, [*args], env={"COLUMNS": "250"})


def report_page_answers(results) -> dict:
    """The answer data embedded in the written report.html."""
    import json
    import re

    html = (results / "report.html").read_text(encoding="utf-8")
    m = re.search(r'<script type="application/json" id="ragmeter-data">(.*?)</script>', html, re.S)
    return json.loads(m.group(1))["optional"].get("answers")


def accuracy_cells(results, judge: str) -> list[str]:
    """How the terminal writes each system's accuracy by ``judge``."""
    return [
        format_estimate(row.accuracy.correct, "hit")  # as every view prints it
        for row in answer_report(results, judge=judge).systems
    ]


def test_accuracy_by_the_two_judges_differ(results):
    # so that the tests below can tell which judge's numbers a view shows
    assert accuracy_cells(results, "test:a") != accuracy_cells(results, "test:b")


def test_accuracy_judge_flag_names_and_uses_the_judge_in_both_views(results):
    done = cli("judges", str(results), "--accuracy-judge", "test:b")
    assert done.exit_code == 0, done.output
    assert "Answer accuracy is judged by test:b" in done.output
    assert "test:b (gives accuracy)" in done.output and "test:a (gives accuracy)" not in done.output

    done = cli("report", str(results), "--accuracy-judge", "test:b")
    assert done.exit_code == 0, done.output
    page = report_page_answers(results)
    assert page["primary"] == "test:b"
    typed = answer_report(results, judge="test:b")
    for row, sys_row in zip(page["accuracy"], typed.systems, strict=True):
        assert row["judge"] == "test:b"
        assert fmt(row["correct"]) == format_estimate(sys_row.accuracy.correct, "hit")
    # nothing was recorded: without the flag the first judge gives accuracy again
    done = cli("report", str(results))
    assert done.exit_code == 0, done.output
    assert report_page_answers(results)["primary"] == "test:a"


def test_grade_records_the_accuracy_judge_for_later_reports(results, test_judges):
    done = cli("grade", str(results), "--judge", "test:c", "--accuracy-judge", "test:b")
    assert done.exit_code == 0, done.output
    assert FixedJudge.calls > 0
    text = " ".join(done.output.split())
    assert "judged by test:b" in text
    for cell in accuracy_cells(results, "test:b"):
        assert cell in text
    assert all(cell not in text for cell in accuracy_cells(results, "test:c"))  # all 100.0
    from ragmeter.answers.store import read_meta

    meta = read_meta(answers_dir(results))
    assert meta["accuracy_judge"] == "test:b" and meta["judges"][0] == "test:c"
    assert report_page_answers(results)["primary"] == "test:b"  # the report grade rewrote
    done = cli("report", str(results))
    assert done.exit_code == 0, done.output
    assert report_page_answers(results)["primary"] == "test:b"
    done = cli("judges", str(results))
    assert "Answer accuracy is judged by test:b" in done.output


def test_grade_with_an_accuracy_judge_of_this_run_only(results, test_judges):
    done = cli("grade", str(results), "--judge", "test:c", "--accuracy-judge", "test:c")
    assert done.exit_code == 0, done.output
    assert "judged by test:c" in done.output
    assert report_page_answers(results)["primary"] == "test:c"


def test_accuracy_judge_in_the_run_config_beats_meta_and_loses_to_the_flag(results):
    update_meta(answers_dir(results), accuracy_judge="test:a")
    config = results / "config.toml"
    config.write_text(config.read_text() + '\n[answers]\njudge = "test:b"\n')
    done = cli("judges", str(results))
    assert done.exit_code == 0, done.output
    assert "Answer accuracy is judged by test:b" in done.output
    done = cli("report", str(results))
    assert done.exit_code == 0, done.output
    page = report_page_answers(results)
    assert page["primary"] == "test:b"
    assert [fmt(r["correct"]) for r in page["accuracy"]] == accuracy_cells(results, "test:b")

    done = cli("report", str(results), "--accuracy-judge", "test:a")
    assert done.exit_code == 0, done.output
    assert report_page_answers(results)["primary"] == "test:a"
    done = cli("judges", str(results), "--accuracy-judge", "test:a")
    assert "Answer accuracy is judged by test:a" in done.output


def test_search_saves_the_config_judge_with_the_run(tmp_path):
    from ragmeter.inputs.config import answers_judge, load_config

    toml = tmp_path / "ragmeter.toml"
    toml.write_text('[answers]\njudge = "ollama:gpt-oss:20b"\n')
    cfg = load_config(toml)
    assert cfg.accuracy_judge == "ollama:gpt-oss:20b"
    assert cfg.to_dict()["answers"] == {"judge": "ollama:gpt-oss:20b"}
    assert "answers" not in Config().to_dict()  # nothing written when none is chosen
    assert answers_judge(toml) == "ollama:gpt-oss:20b"
    assert answers_judge(tmp_path / "absent.toml") == ""
    toml.write_text("[answers]\njudge = 3\n")
    with pytest.raises(InputError, match=r"\[answers\] judge must be a string, got 3"):
        load_config(toml)
    with pytest.raises(InputError, match=r"\[answers\] judge must be a string, got 3"):
        answers_judge(toml)
    toml.write_text('[answers]\njugde = "x"\n')
    with pytest.raises(InputError, match="did you mean 'judge'"):
        load_config(toml)


def one_line_error(done) -> str:
    assert done.exit_code == 2, done.output
    lines = done.output.strip().splitlines()
    assert len(lines) == 1, done.output
    return lines[0]


@pytest.mark.parametrize("command", ["judges", "report"])
def test_an_unknown_accuracy_judge_is_one_line_listing_the_judges(results, command):
    line = one_line_error(cli(command, str(results), "--accuracy-judge", "nobody"))
    assert "no grades by judge 'nobody'; graded by test:a, test:b" in line
    assert not (results / "report.html").exists() or command != "report"


def test_an_unknown_accuracy_judge_in_the_config_names_the_file(results):
    config = results / "config.toml"
    config.write_text(config.read_text() + '\n[answers]\njudge = "nobody"\n')
    line = one_line_error(cli("judges", str(results)))
    assert f"{config}: [answers] judge: no grades by judge 'nobody'" in line
    assert "graded by test:a, test:b" in line


def test_grade_checks_the_accuracy_judge_before_any_model_call(results, test_judges):
    line = one_line_error(
        cli("grade", str(results), "--judge", "test:c", "--accuracy-judge", "nobody")
    )
    assert "--accuracy-judge 'nobody' is not a judge here" in line
    assert "this run grades with test:c; earlier runs graded with test:a, test:b" in line
    assert FixedJudge.calls == 0


def test_grade_checks_the_config_judge_before_any_model_call(results, test_judges):
    config = results / "config.toml"
    config.write_text(config.read_text() + '\n[answers]\njudge = "test:big"\n')
    line = one_line_error(cli("grade", str(results), "--judge", "test:c"))
    assert f"{config}: [answers] judge 'test:big' is not a judge here" in line
    assert "this run grades with test:c; earlier runs graded with test:a, test:b" in line
    assert FixedJudge.calls == 0
    # the flag decides for this run; the config still decides later views
    done = cli("grade", str(results), "--judge", "test:c", "--accuracy-judge", "test:c")
    assert done.exit_code == 0, done.output
    assert "judged by test:c" in done.output and "Note:" in done.output
    done = cli("grade", str(results), "--judge", "test:big")
    assert done.exit_code == 0, done.output
    assert "judged by test:big" in done.output
    assert report_page_answers(results)["primary"] == "test:big"


def test_report_flag_without_answers_is_an_error(results):
    shutil.rmtree(answers_dir(results))
    line = one_line_error(cli("report", str(results), "--accuracy-judge", "test:a"))
    assert "no answers graded yet, so no judge 'test:a'" in line
    assert not (results / "report.html").exists()
    done = cli("report", str(results))  # without the flag: a report without answers
    assert done.exit_code == 0, done.output
    assert report_page_answers(results) is None

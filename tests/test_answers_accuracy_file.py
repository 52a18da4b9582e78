"""The answer numbers as data: ``answer_report(...).to_dict()`` and ``answers/accuracy.json``
carry each judge-corrected accuracy with what the judge saved, and ``grade`` keeps the file
beside ``answers/verdicts.json`` (which holds the judge-corrected paired verdicts)."""

from __future__ import annotations

import io
import json

import pytest
from rich.console import Console
from test_answers import Scripted, reader
from test_answers_paired import by_answer
from test_answers_ppi import search_with_lenient_answers

from ragmeter.answers.accuracy_files import FILE, write_answer_report
from ragmeter.answers.analysis import answer_report, corrected_by_judge
from ragmeter.answers.hand import hand_grade
from ragmeter.answers.paired import answer_verdicts, read_answer_verdicts
from ragmeter.answers.store import (
    HAND_BUILT,
    answers_dir,
    hand_stamp,
    load_answer_set,
    load_answers,
    stale_hand_files,
)
from ragmeter.cli.answer_views import (
    answer_command,
    grade_command,
    handgrade_command,
    judges_command,
)
from ragmeter.errors import InputError
from ragmeter.report.corrected import saving_table


def _console() -> Console:
    return Console(file=io.StringIO(), width=120, force_terminal=False)


def test_the_report_as_data_carries_what_the_judge_saved_per_system_and_all_together(
    tmp_path,
):
    res, _, _ = search_with_lenient_answers(tmp_path)
    report = answer_report(load_answers(res))  # the hand-made answers.jsonl
    data = json.loads(json.dumps(report.to_dict()))  # JSON-ready as it is
    fixed = [row["corrected"] for row in data["systems"]] + [data["corrected"]]
    assert all(c is not None for c in fixed)
    objects = [r.corrected for r in report.systems] + [report.corrected]
    for got, c in zip(fixed, objects, strict=True):
        assert got["saved"] == c.saved and got["bound"] == c.bound
        assert got["hand_as_tight"] == c.hand_as_tight
        assert got["effective_hand"] == c.effective_hand and got["n_hand"] == 12 * (
            1 if c.system else 2
        )
    # the same figures as the saving table grade prints and the report draws
    table = saving_table(report)
    assert [(r["saved"], r["bound"]) for r in table["rows"]] == [
        (c["saved"], c["bound"]) for c in fixed
    ]


def test_the_accuracy_file_is_the_report_as_data_and_reads_back(tmp_path):
    res, _, _ = search_with_lenient_answers(tmp_path)
    report = answer_report(load_answers(res))
    path = write_answer_report(report, res)
    assert path == answers_dir(res) / FILE == res.path / "answers" / "accuracy.json"
    assert json.loads(path.read_text()) == json.loads(json.dumps(report.to_dict()))
    write_answer_report(report, res)  # over the file it wrote: no refusal


def test_an_accuracy_json_of_the_user_s_is_never_written_over(tmp_path):
    res, _, _ = search_with_lenient_answers(tmp_path)
    mine = answers_dir(res) / FILE
    mine.write_text("my notes\n")
    with pytest.raises(InputError, match="accuracy.json"):
        write_answer_report(answer_report(load_answers(res)), res)
    assert mine.read_text() == "my notes\n"


def test_grade_keeps_the_accuracy_and_its_judge_correction_beside_the_verdicts(
    small_example_results_copy,
):
    results = small_example_results_copy
    answer_command(results, Scripted("reader", reader), console=_console())
    hand_grade(results, 12, seed=3, ask=lambda item: "correct", flagged_first=False)
    grade_command(results, [Scripted("j", by_answer)], console=_console())
    data = json.loads((answers_dir(results) / "accuracy.json").read_text())
    assert data == json.loads(json.dumps(answer_report(results).to_dict()))
    assert data["judge"] == "test:j" and [r["system"] for r in data["systems"]]
    assert data["corrected"] is not None and "saved" in data["corrected"]
    assert read_answer_verdicts(results) is not None  # the paired half, as before


def test_the_report_reads_a_hand_made_answers_file_as_the_verdicts_do(tmp_path):
    res, _, _ = search_with_lenient_answers(tmp_path)  # answers.jsonl alone, no reader.jsonl
    report = answer_report(res.path)  # the folder, not a set read beforehand
    verdicts = answer_verdicts(res.path)
    assert [r.system for r in report.systems] == verdicts.systems == list(res.systems)
    assert report.to_dict() == answer_report(load_answers(res)).to_dict()
    assert [c.judge for c in corrected_by_judge(res.path)] == ["judge-a"]


def test_a_report_on_results_without_answers_is_one_line_naming_what_to_run(
    small_example_results,
):
    with pytest.raises(InputError, match="no answers to report; run `ragmeter answer` first"):
        answer_report(small_example_results)
    with pytest.raises(InputError, match="no answers to correct; run `ragmeter answer`"):
        corrected_by_judge(small_example_results)


def test_the_answer_files_record_the_hand_grades_they_were_built_from(
    small_example_results_copy,
):
    results = small_example_results_copy
    answer_command(results, Scripted("reader", reader), console=_console())
    hand_grade(results, 12, seed=3, ask=lambda item: "correct", flagged_first=False)
    grade_command(results, [Scripted("j", by_answer)], console=_console())
    stamp = hand_stamp(load_answer_set(results))
    assert stamp["count"] == 12 and len(stamp["digest"]) == 64
    for name in ("accuracy.json", "verdicts.json"):  # what grade writes
        assert json.loads((answers_dir(results) / name).read_text())["hand_grades"] == stamp
    assert read_answer_verdicts(results).hand_grades == stamp  # and reads back
    assert stale_hand_files(results) == []


def test_hand_grades_after_grade_mark_the_answer_files_stale_until_grade_runs_again(
    small_example_results_copy,
):
    results = small_example_results_copy
    answer_command(results, Scripted("reader", reader), console=_console())
    grade_command(results, [Scripted("j", by_answer)], console=_console())
    before = (answers_dir(results) / "accuracy.json").read_text()
    out = _console()
    handgrade_command(results, n=6, seed=2, input=io.StringIO("c\nw\nc\nc\nw\nc\n"),
                      console=out, flagged_first=False)  # fmt: skip
    said = " ".join(out.file.getvalue().split())
    assert (
        "answers/accuracy.json and answers/verdicts.json hold judge-corrected numbers "
        "from other hand grades"
        in said
        and f"ragmeter grade {results}" in said
    )
    assert stale_hand_files(results) == ["accuracy.json", "verdicts.json"]
    assert (answers_dir(results) / "accuracy.json").read_text() == before  # not rewritten
    grade_command(results, [Scripted("j", by_answer)], console=_console())
    assert stale_hand_files(results) == []
    data = json.loads((answers_dir(results) / "accuracy.json").read_text())
    assert data["hand_grades"]["count"] == 6 and data["corrected"]["n_hand"] == 6


def test_handgrade_says_nothing_is_stale_before_grade_wrote_any_file(
    small_example_results_copy,
):
    results = small_example_results_copy
    answer_command(results, Scripted("reader", reader), console=_console())
    out = _console()
    handgrade_command(results, n=2, seed=2, input=io.StringIO("c\nw\n"), console=out)
    assert stale_hand_files(results) == [] and "stale" not in out.file.getvalue()
    assert "judge-corrected numbers from other hand grades" not in out.file.getvalue()


def test_judges_keeps_its_saving_table_as_data_beside_the_answer_files(tmp_path):
    res, _, _ = search_with_lenient_answers(tmp_path)
    aset = load_answers(res)
    printed = corrected_by_judge(aset)
    judges_command(res.path, console=_console())
    data = json.loads((answers_dir(res) / "by_judge.json").read_text())
    assert data["ppi"] == "tuned" and data["hand_grades"] == hand_stamp(aset)
    assert data["judges"] == json.loads(json.dumps([c.to_dict() for c in printed]))
    assert [(j["judge"], j["saved"], j["n_hand"]) for j in data["judges"]] == [
        ("judge-a", printed[0].saved, 24)
    ]
    assert HAND_BUILT["by_judge.json"] == "judges" and stale_hand_files(res) == []


def test_hand_grades_after_judges_name_its_file_and_the_command_that_refreshes_it(
    small_example_results_copy,
):
    results = small_example_results_copy
    answer_command(results, Scripted("reader", reader), console=_console())
    grade_command(results, [Scripted("j", by_answer)], console=_console())
    judges_command(results, console=_console())
    out = _console()
    handgrade_command(results, n=2, seed=2, input=io.StringIO("c\nw\n"), console=out)
    said = " ".join(out.file.getvalue().split())
    assert stale_hand_files(results) == list(HAND_BUILT)
    assert (
        f"answers/by_judge.json holds judge-corrected numbers from other hand grades: "
        f"run `ragmeter judges {results}` again" in said
    )
    judges_command(results, console=_console())
    assert stale_hand_files(results) == ["accuracy.json", "verdicts.json"]

"""``ragmeter.report.sections``: the optional sections. An audit's notes (a hand-written
note, else the rules' reasons) and its meta file, and the failure cases' marked text."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

from conftest import save_example

from ragmeter.report.data import report_data
from ragmeter.report.sections import _failure_case, _segments
from ragmeter.runs.results import Results


def _audited(path: Path, rows: list[dict], meta: str | None) -> Results:
    """The results at ``path`` (a test's own copy) with an audit of ``rows`` and ``meta``."""
    (path / "audit").mkdir()
    lines = "".join(json.dumps(r) + "\n" for r in rows)
    (path / "audit" / "flags.jsonl").write_text(lines, encoding="utf-8")
    if meta is not None:
        (path / "audit" / "meta.json").write_text(meta, encoding="utf-8")
    return Results(path)


def test_an_audit_note_is_the_hand_note_else_the_rules_reasons(example_results_copy):
    ids = Results(example_results_copy).question_ids
    rule = {"kind": "misstated", "reason": "says upper bound; passage: lower", "source": "rule"}
    rows = [
        {"question": ids[0], "flags": ["copied"], "note": "copied from the passage"},
        {"id": ids[1], "reasons": [rule]},
        {"question": ids[2], "flags": []},
    ]
    # meta.json as Python's json writes a missing number: NaN is read, not refused
    res = _audited(example_results_copy, rows, '{"generator": "rules v2", "copy_ratio": NaN}')
    data = report_data(res)
    audit = data["optional"]["audit"]
    assert (audit["source"], audit["audited"], audit["flagged"]) == ("rules v2", 3, 2)
    notes = {q["id"]: q["audit"] for q in data["questions"] if "audit" in q}
    assert notes[ids[0]] == {"flags": ["copied"], "note": "copied from the passage"}
    assert notes[ids[1]] == {"flags": ["misstated"], "note": "says upper bound; passage: lower"}
    assert notes[ids[2]] == {"flags": [], "note": ""}


def test_segments_mark_runs_of_text_and_later_marks_win():
    marks = [(0, 2, "same"), (4, 10, "missing"), (-3, 1, "changed")]
    assert _segments("abcdef", marks) == [
        ["a", "changed"],
        ["b", "same"],
        ["cd", None],
        ["ef", "missing"],
    ]
    assert _segments("abc", []) == [["abc", None]]
    assert _segments("", [(0, 3, "same")]) == []


def test_a_failure_case_marks_numbers_and_only_sentences_found_in_the_answer():
    answer = "The filter uses 12 bits. It was made in 1970."
    reference = "A Bloom filter uses 10 bits per key; it dates from 1970."
    check = SimpleNamespace(
        system="s",
        question="q1",
        failures=("number_changed", "unsupported"),
        number_flag=True,
        grade="wrong",
        hit=True,
        changed=[SimpleNamespace(start=16, end=18, stated="12", reference="10")],
        unsupported=[
            SimpleNamespace(sentence="It was made in 1970.", support=0.2),
            SimpleNamespace(sentence="Not in the answer at all.", support=0.0),
        ],
    )
    case = _failure_case(check, answer, [reference], "How many bits per key?")
    assert case["answer"] == [
        ["The filter uses ", None],
        ["12", "changed"],
        [" bits. ", None],
        ["It was made in ", "unsupported"],
        ["1970", "same"],
        [".", "unsupported"],
    ]
    assert ["10", "missing"] in case["reference"] and ["1970", "same"] in case["reference"]
    assert case["changed"] == [["12", "10"]]
    assert case["unsupported"] == [
        ["It was made in 1970.", 0.2],
        ["Not in the answer at all.", 0.0],
    ]


def test_graded_answers_give_the_answer_and_failure_sections(tmp_path):
    path = save_example(tmp_path / "r", strategies=("sentence",))  # the one system answering
    ids = Results(path).question_ids
    (path / "answers").mkdir()
    meta = {"reader": "r", "judges": ["judge-a", "judge-b"], "k": 5}
    (path / "answers" / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
    rows = []
    for j, q in enumerate(ids[:20]):
        a = "correct" if j % 2 == 0 else "wrong"  # 10 correct
        b = "correct" if j % 4 == 0 else "wrong"  # 5 correct
        row = {"system": "sentence", "question": q, "answer": f"answer {j}"}
        row["grades"] = {"judge-a": a, "judge-b": b}
        if j < 8:  # by hand: judge-a passed 2 the hand fails and failed 1 it passes
            row["hand"] = {0: "wrong", 2: "wrong", 1: "correct"}.get(j, a)
        rows.append(row)
    lines = "".join(json.dumps(r) + "\n" for r in rows)
    (path / "answers" / "answers.jsonl").write_text(lines, encoding="utf-8")
    data = report_data(Results(path))
    assert {"answers", "failures"} <= set(data["optional"])
    answers = data["optional"]["answers"]
    (pair,) = answers["agreement"]
    assert (pair["a"], pair["b"], pair["n"], pair["more_correct"]) == ("judge-a", "judge-b", 20, 5)
    hand = {h["a"]: h for h in answers["hand"]}
    assert (hand["judge-a"]["lenient"], hand["judge-a"]["strict"]) == (2, 1)
    assert hand["judge-a"]["more_correct"] == 1 and hand["judge-a"]["n"] == 8
    by_id = {q["id"]: q for q in data["questions"]}
    first = by_id[ids[0]]["model_answers"]
    assert first == [
        {
            "answer": "answer 0",
            "grades": {"judge-a": "correct", "judge-b": "correct"},
            "hand": "wrong",
        }
    ]
    assert "hand" not in by_id[ids[9]]["model_answers"][0]
    assert data["optional"]["failures"]["judge"] == "judge-a"


# --- paired verdicts and flip rates on answers -------------------------------------------------


def test_the_answer_section_holds_the_paired_verdicts_grade_prints(small_example_results_copy):
    from test_answers_paired import write_grades

    from ragmeter.answers.paired import MEASURES, answer_verdicts, basis_line

    results = small_example_results_copy
    write_grades(results, {"sentence": "cccccpww", "fixed-40": "cwwwwcpw"})
    got = report_data(Results(results))["optional"]["answers"]["verdicts"]
    want = answer_verdicts(results)
    assert [t["measure"] for t in got["tables"]] == list(MEASURES)
    for table in got["tables"]:
        verdicts = want.tables[table["measure"]]
        rows = [{k: v for k, v in r.items() if k != "shown"} for r in table["rows"]]
        assert rows == [json.loads(json.dumps(r.to_dict())) for r in verdicts.rows]
        assert table["rule"]["header"] == verdicts.rule.header
        (row,) = table["rows"]
        assert row["verdict"] and row["shown"]["difference"].startswith("+")
    assert got["basis"] == basis_line(want) and got["judge"] == "j"


def test_no_verdicts_without_two_graded_systems_and_no_flips_without_reruns(
    small_example_results_copy,
):
    from test_answers_paired import write_grades

    results = small_example_results_copy
    write_grades(results, {"sentence": "cccccpww"})  # one system
    answers = report_data(Results(results))["optional"]["answers"]
    assert answers["verdicts"] is None and answers["flips"] is None
    write_grades(results, {"sentence": "cccccpww", "fixed-40": "cwwwwcpw"})
    assert report_data(Results(results))["optional"]["answers"]["flips"] is None


def test_with_reruns_the_answer_section_holds_each_systems_flip_rate_and_variance_share(
    small_example_results_copy,
):
    from test_answers_reruns import SYSTEMS, Sampling, quiet, seeded_judge, seeded_reader

    from ragmeter.answers import answer_questions
    from ragmeter.answers.flips import flip_report
    from ragmeter.answers.reruns import Reruns
    from ragmeter.cli.answer_views import grade_command

    results = small_example_results_copy
    answer_questions(results, Sampling("reader", seeded_reader))
    reruns = Reruns(k=3, of="judge", temperature=0.8)
    grade_command(results, [Sampling("j", seeded_judge)], console=quiet(), reruns=reruns)
    answers = report_data(Results(results))["optional"]["answers"]
    flips = answers["flips"]
    want = flip_report(results)
    assert flips["reruns"] == 3 and [r["system"] for r in flips["rows"]] == list(SYSTEMS)
    for row in flips["rows"]:
        assert row["mean_flip_rate"] == want.systems[row["system"]]
        share = want.shares[row["system"]].rerun_share
        assert row["rerun_share"]["mean"] == share.mean
        assert (
            row["share"]
            == f"{share.mean * 100:.1f} [{share.low * 100:.1f}, {share.high * 100:.1f}]"
        )
    assert answers["verdicts"]["tables"]  # paired over the means of the reruns

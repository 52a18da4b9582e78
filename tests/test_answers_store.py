"""``ragmeter.answers.store``: answers of another results directory refused, stale and
unknown hand grades left out, the judges' order kept from ``meta.json``, the merged
file's single judge-and-grade pair, the reader and k a merged file takes from
``meta.json``, and the files read back as written (a line cut off by a crash, a NaN,
text that is not ASCII)."""

from __future__ import annotations

import json

import pytest
from test_answers import results  # noqa: F401  (a fixture)

from ragmeter.answers.store import (
    Answer,
    Grade,
    HandGrade,
    answers_dir,
    append_hand,
    load_answer_set,
    load_merged_answer_set,
    read_answers,
    read_hand,
    update_meta,
    write_answers,
    write_grades,
)
from ragmeter.errors import InputError


def _answers(results, *keys, text="Bloom"):  # noqa: F811
    folder = answers_dir(results)
    folder.mkdir(exist_ok=True)
    answers = [Answer(s, q, text, "test:r", 5) for s, q in keys]
    write_answers(folder, answers)
    return folder, answers


@pytest.mark.parametrize(
    ("system", "question"), [("sentence", "q999"), ("nope", "q001"), ("nope", "q999")]
)
def test_answers_of_another_results_directory_are_refused(results, system, question):  # noqa: F811
    _answers(results, ("sentence", "q001"), (system, question))
    with pytest.raises(InputError, match="belong to another results directory"):
        load_answer_set(results)
    folder = answers_dir(results)
    (folder / "answers.jsonl").write_text(
        json.dumps({"system": "sentence", "question": "q001", "answer": "a"})
        + "\n"
        + json.dumps({"system": system, "question": question, "answer": "b"})
        + "\n"
    )
    with pytest.raises(InputError, match=r"answers.jsonl:2: .* not in this results directory"):
        load_merged_answer_set(results)


def test_hand_grades_of_a_changed_or_missing_answer_are_left_out(results):  # noqa: F811
    folder, [a, _] = _answers(results, ("sentence", "q001"), ("sentence", "q002"))
    append_hand(folder, HandGrade("sentence", "q001", "wrong", a.sha))
    append_hand(folder, HandGrade("sentence", "q002", "correct", "an older answer"))
    append_hand(folder, HandGrade("fixed-40", "q001", "correct", a.sha))  # never answered
    append_hand(folder, HandGrade("sentence", "q003", "skip", a.sha))
    aset = load_answer_set(results)
    assert list(aset.hand) == [("sentence", "q001")]
    assert aset.hand_seen == {("sentence", "q001")}
    assert len(read_hand(folder)) == 4  # the file keeps them all


def test_the_judges_keep_the_order_meta_json_gives(results):  # noqa: F811
    folder, [a] = _answers(results, ("sentence", "q001"))
    write_grades(
        folder,
        [Grade(j, "sentence", "q001", "correct", answer_sha=a.sha) for j in ("a", "b")],
    )
    update_meta(folder, judges=["b", "c", "a"])
    assert load_answer_set(results).judges == ["b", "c", "a"]
    update_meta(folder, judges=None)  # no list: the order of the grades file
    assert load_answer_set(results).judges == ["a", "b"]


def test_a_merged_line_with_one_judge_and_grade(results):  # noqa: F811
    folder = answers_dir(results)
    folder.mkdir(exist_ok=True)
    rows = [
        {"system": "sentence", "question": "q001", "answer": "a", "judge": "gpt", "grade": "wrong"},
        {"system": "sentence", "question": "q002", "answer": "b", "grade": "Correct"},
    ]
    (folder / "answers.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    aset = load_merged_answer_set(results)
    assert aset.judges == ["gpt", "judge"]
    [g] = aset.grades["gpt"].values()
    assert (g.judge, g.system, g.question, g.grade) == ("gpt", "sentence", "q001", "wrong")
    [g] = aset.grades["judge"].values()
    assert (g.judge, g.system, g.question, g.grade) == ("judge", "sentence", "q002", "correct")
    assert aset.answers[("sentence", "q002")].answer == "b"


def test_files_read_back_as_written(results):  # noqa: F811
    folder = answers_dir(results)
    folder.mkdir()
    answers = [
        Answer("sentence", "q001", "Über 8 %", "test:r", 5, latency_s=float("nan")),
        Answer("sentence", "q002", "b", "test:r", 5, tokens_in=3),
    ]
    write_answers(folder, answers)
    path = folder / "reader.jsonl"
    assert "Über 8 %" in path.read_text(encoding="utf-8")  # UTF-8, not escaped
    got = read_answers(folder)
    assert got[("sentence", "q002")] == answers[1]
    assert got[("sentence", "q001")].answer == "Über 8 %"
    # a last line cut off by a crash mid-write was never saved
    path.write_text(path.read_text() + '{"system": "sentence", "question": "q00')
    assert list(read_answers(folder)) == [("sentence", "q001"), ("sentence", "q002")]
    # hand grades are kept as readable UTF-8 too
    append_hand(folder, HandGrade("sentence", "q001", "partial", "sha", 3, "Zeit: 12 Uhr ä"))
    assert "Zeit: 12 Uhr ä" in (folder / "hand.jsonl").read_text(encoding="utf-8")
    [h] = read_hand(folder)
    assert (h.hand, h.seed, h.at) == ("partial", 3, "Zeit: 12 Uhr ä")


def test_a_grade_of_an_answer_never_made_records_no_call(results):  # noqa: F811
    from test_answers import Scripted, judge_by_question

    from ragmeter.answers import grade_answers

    folder = answers_dir(results)
    folder.mkdir()
    write_answers(
        folder,
        [
            Answer("sentence", "q001", "Bloom", "test:r", 5),
            Answer("sentence", "q002", "", "test:r", 5, error="timeout: no reply in 120 s"),
        ],
    )
    judge = Scripted("j", judge_by_question({}))
    grade_answers(results, judge)
    assert judge.calls == 1
    g = load_answer_set(results).grades["test:j"][("sentence", "q002")]
    assert (g.grade, g.error) == ("unscored", "no answer: timeout: no reply in 120 s")
    assert (g.tokens_in, g.tokens_out, g.latency_s, g.cached) == (0, 0, 0.0, False)


def test_a_merged_file_takes_its_reader_and_k_from_meta_json(results):  # noqa: F811
    folder = answers_dir(results)
    folder.mkdir()
    rows = [
        {"system": "sentence", "question": "q001", "answer": "a", "grades": {"gpt": "wrong"}},
        {"system": "fixed-40", "question": "q002", "answer": "b"},
    ]
    (folder / "answers.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    aset = load_merged_answer_set(results)
    assert {(a.reader, a.k) for a in aset.answers.values()} == {("", 5)}  # no meta.json
    assert aset.reader is None and aset.k == 5
    update_meta(folder, reader="ollama:llama3.2", k=3)
    aset = load_merged_answer_set(results)
    assert {(a.reader, a.k) for a in aset.answers.values()} == {("ollama:llama3.2", 3)}
    assert (aset.reader, aset.k) == ("ollama:llama3.2", 3)

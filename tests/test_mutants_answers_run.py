"""``ragmeter.answers.run``: the reply cache a caller names, ``meta.json``'s judges kept
when the reader runs again, the judge's reason saved tidy, the seconds each run records,
and a stopped run that never deletes a file saved beside it."""

from __future__ import annotations

import json
import types

import pytest
from test_answers import (  # noqa: F401  (results, results_dir: fixtures)
    Scripted,
    judge_by_question,
    question_of,
    reader,
    results,
    results_dir,
)

import ragmeter.answers.run as run_module
from ragmeter.answers import answer_questions, grade_answers
from ragmeter.answers.store import answers_dir, read_grades
from ragmeter.llm import ReplyCache


def test_a_named_reply_cache_is_used_instead_of_the_answers_folders(results, tmp_path):  # noqa: F811
    path = tmp_path / "replies.sqlite"
    answer_questions(results, Scripted("reader", reader), limit=1, cache=path)
    with ReplyCache(path) as cache:
        assert len(cache) == 2  # one question, two systems
    assert not (answers_dir(results) / "cache.sqlite").exists()
    again = Scripted("reader", reader)
    run = answer_questions(results, again, limit=1, cache=path)
    assert again.calls == 0 and run.stats.cache_hits == 2
    assert (run.reader, run.k, run.folder) == ("test:reader", 5, answers_dir(results))
    assert [a.key for a in run.answers] == [("sentence", "q001"), ("fixed-40", "q001")]


def test_answering_again_keeps_the_judges_of_meta_json(results):  # noqa: F811
    answer_questions(results, Scripted("reader", reader), limit=2)
    meta_path = answers_dir(results) / "meta.json"
    assert json.loads(meta_path.read_text())["judges"] == []  # none yet
    grade_answers(
        results, [Scripted("b", judge_by_question({})), Scripted("a", judge_by_question({}))]
    )
    assert json.loads(meta_path.read_text())["judges"] == ["test:b", "test:a"]
    answer_questions(results, Scripted("reader", reader), limit=3)
    meta = json.loads(meta_path.read_text())
    assert meta["judges"] == ["test:b", "test:a"] and meta["k"] == 5


def test_the_judges_reason_is_saved_on_one_line_and_may_be_blank(results):  # noqa: F811
    answer_questions(results, Scripted("reader", reader), limit=2)

    def respond(prompt: str) -> str:
        if "what year" in question_of(prompt):
            return json.dumps(
                {"grade": "partial", "reason": "  half of it,\n  the year  is missing "}
            )
        return json.dumps({"grade": "wrong", "reason": " \n "})

    [judged] = grade_answers(results, Scripted("j", respond)).judges
    reasons = {(g.question, g.grade): g.reason for g in judged.grades}
    assert reasons[("q001", "partial")] == "half of it, the year is missing"
    assert reasons[("q002", "wrong")] == ""
    saved = {k[2]: g.reason for k, g in read_grades(answers_dir(results)).items()}
    assert saved == {"q001": "half of it, the year is missing", "q002": ""}


def test_each_run_records_the_seconds_its_calls_took(results, monkeypatch):  # noqa: F811
    ticks = iter([100.0, 102.5, 200.0, 200.75])  # a clock that moves only when read
    monkeypatch.setattr(run_module, "time", types.SimpleNamespace(perf_counter=lambda: next(ticks)))
    run = answer_questions(results, Scripted("reader", reader), limit=1)
    assert run.seconds == 2.5
    [judged] = grade_answers(results, Scripted("j", judge_by_question({}))).judges
    assert judged.seconds == 0.75
    meta = json.loads((answers_dir(results) / "meta.json").read_text())
    assert meta["reader_run"]["seconds"] == 2.5
    assert meta["judge_runs"]["test:j"]["seconds"] == 0.75


def test_a_stopped_run_keeps_a_file_saved_in_the_new_answers_folder(results, tmp_path):  # noqa: F811
    folder = answers_dir(results)
    assert not folder.exists()

    def note_then_stop(label, done, total):
        folder.mkdir(exist_ok=True)
        (folder / "notes.txt").write_text("kept by hand\n")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        answer_questions(
            results,
            Scripted("reader", reader),
            limit=1,
            cache=tmp_path / "elsewhere.sqlite",
            progress=note_then_stop,
        )
    assert (folder / "notes.txt").read_text() == "kept by hand\n"

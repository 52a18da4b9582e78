"""``ragmeter.answers.run``: the reply cache a caller names, ``meta.json``'s judges kept
when the reader runs again, the judge's reason saved tidy, the seconds each run records,
a stopped run that never deletes a file saved beside it, a progress bar that asks for
each reply gets it, and the accuracy judge: one graded now or before, anything else
refused (flag or config) before any model call."""

from __future__ import annotations

import json
import types

import pytest
from test_answers import (  # noqa: F401  (results: a fixture)
    Scripted,
    judge_by_question,
    question_of,
    reader,
    results,
)

import ragmeter.answers.run as run_module
from ragmeter.answers import answer_questions, grade_answers
from ragmeter.answers.store import answers_dir, read_grades
from ragmeter.errors import InputError
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


def test_a_bar_that_wants_the_reply_gets_each_one(results):  # noqa: F811
    calls = []

    def bar(label, done, total, reply):
        calls.append((label, done, total, reply.cached))

    bar.wants_reply = True
    answer_questions(results, Scripted("reader", reader), limit=1, progress=bar)
    answer_questions(results, Scripted("reader", reader), limit=1, progress=bar)
    assert calls == [
        ("answer", 1, 2, False),
        ("answer", 2, 2, False),
        ("answer", 1, 2, True),
        ("answer", 2, 2, True),
    ]


def test_the_accuracy_judge_may_be_one_graded_now_or_before(results):  # noqa: F811
    answer_questions(results, Scripted("reader", reader), limit=1)
    grade_answers(results, Scripted("a", judge_by_question({})))
    meta_path = answers_dir(results) / "meta.json"
    # one graded before, not now
    grade_answers(results, Scripted("b", judge_by_question({})), accuracy_judge="test:a")
    meta = json.loads(meta_path.read_text())
    assert meta["accuracy_judge"] == "test:a" and meta["judges"] == ["test:b", "test:a"]
    # one of this run's judges, graded for the first time
    grade_answers(results, Scripted("c", judge_by_question({})), accuracy_judge="test:c")
    assert json.loads(meta_path.read_text())["accuracy_judge"] == "test:c"


def test_an_accuracy_judge_that_is_no_judge_here_is_refused_before_any_call(results):  # noqa: F811
    answer_questions(results, Scripted("reader", reader), limit=1)
    grade_answers(results, Scripted("a", judge_by_question({})))
    judge = Scripted("b", judge_by_question({}))
    with pytest.raises(
        InputError,
        match=r"^--accuracy-judge 'nobody' is not a judge here: this run grades with "
        r"test:b; earlier runs graded with test:a; name one of those$",
    ):
        grade_answers(results, judge, accuracy_judge="nobody")
    assert judge.calls == 0
    config = results / "config.toml"
    config.write_text(config.read_text() + '\n[answers]\njudge = "test:big"\n')
    with pytest.raises(InputError, match=r"\[answers\] judge 'test:big' is not a judge here"):
        grade_answers(results, judge)
    assert judge.calls == 0
    # the config's judge, once it grades, is accepted
    grade_answers(results, Scripted("big", judge_by_question({})))
    assert json.loads((answers_dir(results) / "meta.json").read_text())["judges"][0] == "test:big"

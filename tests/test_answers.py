"""Answer grading without a model: statistics on hand-made grades, the files, the loops.

A scripted backend stands in for the reader and the judges, so every path that
does not depend on what a real model says is checked here; the real model runs
in ``test_answers_integration.py``.
"""

from __future__ import annotations

import io
import json
import math
import threading
import time
from pathlib import Path
from statistics import NormalDist

import numpy as np
import pytest
from rich.console import Console

import ragmeter.answers as answers
from ragmeter import stats
from ragmeter.answers import (
    HandItem,
    answer_questions,
    answer_report,
    cross_table,
    grade_answers,
    hand_checks,
    hand_grade,
    judge_pairs,
    load_answer_set,
)
from ragmeter.answers.analysis import (
    accuracy,
    check_against_hand,
    compare_judges,
    ppi_accuracy,
    search_hits,
)
from ragmeter.answers.failure_counts import leniency_flags
from ragmeter.answers.hand import flagged_first_order, sample_order
from ragmeter.answers.prompts import (
    GRADE_SCHEMA,
    JUDGE_PROMPT,
    READER_PROMPT,
    judge_request,
    reader_request,
)
from ragmeter.answers.run import backend_label
from ragmeter.answers.store import answers_dir, read_grades, read_hand
from ragmeter.cli.answer_views import (
    answer_command,
    grade_by_hand,
    grade_command,
    handgrade_command,
    judges_command,
)
from ragmeter.errors import InputError
from ragmeter.llm import Completion, ReplyCache, parse_options
from ragmeter.llm.fence import fenced
from ragmeter.runs.results import Results
from ragmeter.stats import ppi

# --- a scripted backend ---------------------------------------------------------------------


class Scripted:
    """A backend whose reply is ``respond(prompt)``; counts its calls."""

    base_url = None
    max_concurrency = None

    def __init__(self, model: str, respond, kind: str = "test") -> None:
        self.kind = kind
        self.model = model
        self.respond = respond
        self.calls = 0
        self._lock = threading.Lock()

    def complete(self, request, timeout_s):
        with self._lock:
            self.calls += 1
        prompt = request.messages[-1].content
        return Completion(self.respond(prompt), tokens_in=len(prompt.split()), tokens_out=3)

    def close(self) -> None:
        pass


def question_of(prompt: str) -> str:
    return fenced(prompt, "question")


def reader(prompt: str) -> str:
    """Answers with the first passage's first words, or declines when asked about Raft."""
    if "Raft" in question_of(prompt):
        return "not in the context"
    return " ".join(fenced(prompt, "passages").split("[1] ", 1)[1].split()[:6])


def judge_by_question(table: dict[str, str]):
    """A judge that grades by the question text's first word present in ``table``."""

    def respond(prompt: str) -> str:
        q = fenced(prompt, "question")
        for word, grade in table.items():
            if word in q:
                if grade == "garbage":
                    return "I think it is mostly fine"
                return json.dumps({"grade": grade, "reason": f"because {word}"})
        return '{"grade": "correct", "reason": "fits"}'

    return respond


@pytest.fixture
def results(small_example_results_copy):
    """The small example (8 blog questions, two chunking strategies, BM25), a fresh copy per
    test, so answers of one test never leak into another."""
    return small_example_results_copy


def quiet() -> Console:
    return Console(file=io.StringIO(), width=200, force_terminal=False)


def text_of(console: Console) -> str:
    return console.file.getvalue()


# --- statistics on hand-made grades ----------------------------------------------------------


def test_accuracy_counts_unscored_as_not_correct_and_says_how_many():
    acc = accuracy(["correct", "correct", "partial", "wrong", "unscored"], rounds=500, seed=3)
    assert (acc.scored, acc.unscored) == (4, 1)
    assert acc.counts == {"correct": 2, "partial": 1, "wrong": 1, "unscored": 1}
    assert acc.correct.mean == 0.4  # 2 of 5: an unscored answer is not a correct one
    assert acc.correct_or_partial.mean == 0.6
    assert acc.correct.n == 5
    assert acc.correct == stats.bootstrap([1.0, 1.0, 0.0, 0.0, 0.0], rounds=500, seed=3)
    # beside it: the accuracy had every unscored answer been correct
    assert acc.correct_if_unscored.mean == 0.6


def test_accuracy_all_unscored_is_zero_with_its_upper_bound():
    acc = accuracy(["unscored"] * 3)
    assert acc.correct.mean == 0.0 and acc.correct_if_unscored.mean == 1.0
    assert (acc.scored, acc.unscored) == (0, 3)
    assert accuracy([]).correct is None
    with pytest.raises(InputError, match="unknown grades"):
        accuracy(["right"])


A = "C C C C C P W W W C".split()
B = "C C C P W P W W C C".split()
NAMES = {"C": "correct", "P": "partial", "W": "wrong"}


def labelled(codes: list[str]) -> dict[str, str]:
    return {f"q{i + 1}": NAMES[c] for i, c in enumerate(codes)}


def test_two_judges_agreement_kappa_and_leniency_by_hand():
    a, b = labelled(A), labelled(B)
    a["q11"], b["q11"] = "unscored", "correct"  # left out of the comparison
    pair = compare_judges(a, b, "judge-a", "judge-b", rounds=300)
    assert pair.n == 10 and pair.unscored_a == 1 and pair.unscored_b == 0
    # correct-or-not: 4 both correct, 3 both not, a-only 2, b-only 1 -> p_o 0.7;
    # p_e = 0.6*0.5 + 0.4*0.5 = 0.5 -> kappa 0.4
    assert pair.binary.percent.mean == pytest.approx(0.7)
    assert pair.binary.kappa.mean == pytest.approx(0.4)
    assert pair.binary.confusion == [[4, 2], [1, 3]]
    # three classes: 7 agree; p_e = (6*5 + 1*2 + 3*3) / 100 = 0.41 -> kappa 0.29 / 0.59
    assert pair.three.percent.mean == pytest.approx(0.7)
    assert pair.three.kappa.mean == pytest.approx(0.29 / 0.59)
    assert pair.three.classes == ["correct", "partial", "wrong"]
    assert pair.three.confusion == [[4, 1, 1], [0, 1, 0], [1, 0, 2]]
    assert pair.three.kappa.low <= pair.three.kappa.mean <= pair.three.kappa.high
    assert (pair.correct_a, pair.correct_b) == (6, 5)
    assert pair.lenient == "judge-a" and pair.margin == 1
    assert pair.a_only == ["q4", "q5"] and pair.b_only == ["q9"]
    assert [(d.key, d.a, d.b) for d in pair.differ] == [
        ("q4", "correct", "partial"),
        ("q5", "correct", "wrong"),
        ("q9", "wrong", "correct"),
    ]


def test_equally_lenient_judges_have_no_lenient_one():
    a = labelled("C P W".split())
    pair = compare_judges(a, dict(a), rounds=100)
    assert pair.lenient is None and pair.margin == 0 and pair.differ == []
    assert pair.binary.percent.mean == 1.0 and pair.three.kappa.mean == 1.0


def test_hand_check_counts_lenient_and_strict_misses_like_the_seed():
    # 20 hand grades: 14 correct, 4 partial, 2 wrong; one judge matches all,
    # the other passes 2 partial and 1 wrong answer (three lenient misses)
    hand = labelled(list("C" * 14 + "P" * 4 + "W" * 2))
    exact = dict(hand)
    lenient = dict(hand, q15="correct", q16="correct", q19="correct")
    good = check_against_hand(exact, hand, "gpt-oss:20b", rounds=300)
    loose = check_against_hand(lenient, hand, "llama3.2", rounds=300)
    assert (good.matched, good.n, good.lenient, good.strict) == (20, 20, [], [])
    assert (loose.matched, loose.n, loose.exact) == (17, 20, 17)
    assert loose.lenient == ["q15", "q16", "q19"] and loose.strict == []
    # correct-or-not: p_o = 0.85; p_e = 0.85*0.7 + 0.15*0.3 = 0.64 -> kappa 0.21 / 0.36
    assert loose.binary.percent.mean == pytest.approx(0.85)
    assert loose.binary.kappa.mean == pytest.approx(0.21 / 0.36)
    strict = check_against_hand(dict(hand, q1="partial", q17="wrong"), hand, rounds=100)
    assert strict.strict == ["q1"] and strict.lenient == [] and strict.partial_wrong == ["q17"]
    assert (strict.matched, strict.exact) == (19, 18)


def test_cross_table_puts_question_ids_in_each_cell():
    hits = {"q1": True, "q2": True, "q3": False, "q4": False, "q5": True, "q6": False}
    grades = {
        "q1": "correct",
        "q2": "wrong",
        "q3": "correct",
        "q4": "wrong",
        "q5": "unscored",
        "q6": "partial",
    }
    table = cross_table(hits, grades)
    assert table.cells["found"] == {
        "correct": ["q1"],
        "partial": [],
        "wrong": ["q2"],
        "unscored": ["q5"],
    }
    assert table.cells["missed"] == {
        "correct": ["q3"],
        "partial": ["q6"],
        "wrong": ["q4"],
        "unscored": [],
    }
    assert table.found_not_correct == ["q2"]
    assert table.correct_without_passage == ["q3"]
    assert table.count("missed", "wrong") == 1
    with pytest.raises(InputError, match="no search result"):
        cross_table({}, {"q9": "correct"})


# --- prompts and parsing -----------------------------------------------------------------


def test_prompts_hold_the_question_passages_and_reference():
    text = reader_request("Why?", ["one", " two "]).messages[-1].content
    assert fenced(text, "passages") == "[1] one\n\n[2] two"
    assert fenced(text, "question") == "Why?"
    assert "not in the context" in text
    text = judge_request("Q?", "REF", "ANS").messages[-1].content
    assert fenced(text, "question") == "Q?" and fenced(text, "reference") == "REF"
    assert fenced(text, "answer") == "ANS" and '"grade"' in text
    assert GRADE_SCHEMA["properties"]["grade"]["enum"] == ["correct", "partial", "wrong"]


def test_docs_quote_the_prompts_verbatim():
    from pathlib import Path

    docs = (Path(__file__).resolve().parents[1] / "docs" / "answers.md").read_text("utf-8")
    assert READER_PROMPT in docs
    assert (
        JUDGE_PROMPT.format(
            question="{question}", reference="{reference}", answer="{answer}", tag="{tag}"
        )
        in docs
    )


def test_backend_labels():
    assert backend_label("ollama:gpt-oss:20b") == "ollama:gpt-oss:20b"
    assert backend_label(" openai:gpt-4o-mini ") == "openai:gpt-4o-mini"
    assert backend_label("gguf:/models/x/gemma.gguf") == "gguf:gemma.gguf"
    assert backend_label(Scripted("m", reader)) == "test:m"


def test_parse_options_reads_json_values():
    assert parse_options(["n_ctx=2048", "chat_format=gemma", "verbose=false"]) == {
        "n_ctx": 2048,
        "chat_format": "gemma",
        "verbose": False,
    }
    assert parse_options(None) == {}
    with pytest.raises(InputError, match="KEY=VALUE"):
        parse_options(["n_ctx"])


# --- the reader and judges on a results directory ------------------------------------------------


def test_answers_grades_and_merged_file(results):
    rd = Scripted("reader", reader)
    res = Results(results)
    run = answer_questions(results, rd, k=5, concurrency=2)
    assert len(run.answers) == 16 and rd.calls == run.stats.calls == 16
    assert all(a.ok and a.tokens_in > 0 and a.tokens_out == 3 for a in run.answers)
    # the reader saw exactly the top 5 items of each system
    first = run.answers[0]
    assert first.answer.split()[:3] == res.runs[first.system][first.question][0].text.split()[:3]

    judge_a = Scripted("a", judge_by_question({"Bloom filter": "partial", "seven": "garbage"}))
    judge_b = Scripted("b", judge_by_question({"Bloom filter": "wrong"}))
    graded = grade_answers(results, [judge_a, judge_b])
    counts_a = graded.judges[0].counts
    assert counts_a["unscored"] == 2  # q002 ("ten bits ... seven hashes"), both systems
    unscored = graded.judges[0].unscored[0]
    assert unscored.raw == "I think it is mostly fine" and unscored.error.startswith("unparseable")

    folder = answers_dir(results)
    meta = json.loads((folder / "meta.json").read_text())
    assert meta["reader"] == "test:reader" and meta["k"] == 5
    assert meta["judges"] == ["test:a", "test:b"]
    rows = [json.loads(line) for line in (folder / "answers.jsonl").read_text().splitlines()]
    assert len(rows) == 16
    assert set(rows[0]) == {"system", "question", "answer", "grades"}
    assert [(r["system"], r["question"]) for r in rows[:2]] == [
        ("sentence", "q001"),
        ("sentence", "q002"),
    ]
    by = {(r["system"], r["question"]): r for r in rows}
    assert by[("sentence", "q002")]["grades"] == {"test:a": "unscored", "test:b": "correct"}
    assert by[("fixed-40", "q001")]["grades"] == {"test:a": "partial", "test:b": "wrong"}

    # the report: unscored counted as not correct, and counted
    report = answer_report(results)
    assert report.judge == "test:a" and report.k == 5
    sent = next(s for s in report.systems if s.system == "sentence")
    assert (sent.n, sent.accuracy.scored, sent.accuracy.unscored) == (8, 7, 1)
    assert sent.unscored_ids == ["q002"]
    grades_a = {
        q: g.grade
        for (s, q), g in load_answer_set(results).grades["test:a"].items()
        if s == "sentence"
    }
    assert sent.accuracy.correct.mean == pytest.approx(
        sum(g == "correct" for g in grades_a.values()) / 8
    )
    # hit = whole passage in the top 5, the same as the results' recall@5
    hits = search_hits(res, "sentence", 5)
    np.testing.assert_array_equal(
        res.scores("sentence", "recall@5"), [float(hits[q]) for q in res.question_ids]
    )
    assert sent.hit.mean == pytest.approx(res.scores("sentence", "recall@5").mean())
    for row, cells in sent.cross.cells.items():
        for grade, ids in cells.items():
            for q in ids:
                assert hits[q] == (row == "found") and grades_a[q] == grade

    # the HTML report reads the merged file
    from ragmeter.report.html import load_answers

    loaded = load_answers(res)
    assert loaded["judges"] == ["test:a", "test:b"] and loaded["reader"] == "test:reader"

    # judge against judge from the files
    [pair] = judge_pairs(results)
    assert (pair.a, pair.b) == ("test:a", "test:b")
    assert pair.n == 14 and pair.unscored_a == 2
    # they differ only on partial against wrong: neither marks more answers correct
    assert pair.lenient is None and pair.binary.percent.mean == 1.0
    assert [(d.key, d.a, d.b) for d in pair.differ] == [
        ("sentence/q001", "partial", "wrong"),
        ("fixed-40/q001", "partial", "wrong"),
    ]


def slow_reader(prompt: str) -> str:
    time.sleep(0.02)  # slower than the main thread's bookkeeping, like a real model
    return reader(prompt)


def test_second_run_costs_no_calls_and_a_stopped_run_resumes(results):
    rd = Scripted("reader", slow_reader)

    def stop_after_5(label, done, total):
        if done == 5:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        answer_questions(results, rd, concurrency=1, progress=stop_after_5)
    cache_path = answers_dir(results) / "cache.sqlite"
    with ReplyCache(cache_path) as cache:
        saved = len(cache)  # the 5 delivered, plus any call in flight when it stopped
    assert 5 <= saved < 16 and rd.calls == saved
    assert not (answers_dir(results) / "reader.jsonl").exists()  # nothing half-written
    resumed = answer_questions(results, rd, concurrency=1)
    assert resumed.stats.calls == 16 - saved and resumed.stats.cache_hits == saved
    assert rd.calls == 16  # each question x system answered exactly once
    again = answer_questions(results, rd)
    assert again.stats.calls == 0 and again.stats.cache_hits == 16 and rd.calls == 16
    assert all(a.cached for a in again.answers)

    judge = Scripted("j", judge_by_question({}))
    grade_answers(results, [judge])
    grade_answers(results, [judge])
    assert judge.calls == 16


def test_limit_systems_and_merging_runs(results):
    rd = Scripted("reader", reader)
    run = answer_questions(results, rd, systems="fixed-40", limit=3)
    assert [(a.system, a.question) for a in run.answers] == [
        ("fixed-40", "q001"),
        ("fixed-40", "q002"),
        ("fixed-40", "q003"),
    ]
    answer_questions(results, rd, systems=["sentence"], limit=2)
    aset = load_answer_set(results)
    assert len(aset.answers) == 5  # merged with the first run
    assert aset.ordered_keys()[0] == ("sentence", "q001")  # results order
    with pytest.raises(InputError, match="unknown system 'nope'"):
        answer_questions(results, rd, systems="nope")


def test_grading_before_answering_is_a_clear_error(results):
    with pytest.raises(InputError, match="ragmeter answer"):
        grade_answers(results, [Scripted("j", judge_by_question({}))])


def test_a_new_reader_replaces_answers_and_their_grades_drop_out(results):
    answer_questions(results, Scripted("r1", reader), limit=2)
    grade_answers(results, [Scripted("j", judge_by_question({}))])
    assert len(load_answer_set(results).grades["test:j"]) == 4
    run = answer_questions(results, Scripted("r2", lambda p: "something else"), limit=1)
    assert run.replaced == 4
    aset = load_answer_set(results)
    assert {a.reader for a in aset.answers.values()} == {"test:r2"}
    assert aset.grades.get("test:j", {}) == {}  # the old grades were of other answers
    assert len(read_grades(answers_dir(results))) == 4  # but stay in the file
    rows = (answers_dir(results) / "answers.jsonl").read_text().splitlines()
    assert all(json.loads(r)["grades"] == {} for r in rows)


def test_reader_errors_are_unscored_without_asking_the_judge(results):
    def flaky(prompt):
        raise RuntimeError("boom")  # pragma: no cover - replaced below

    from ragmeter.llm.client import RequestRejected

    class Refusing(Scripted):
        def complete(self, request, timeout_s):
            if "Bloom" in fenced(request.messages[-1].content, "question"):
                raise RequestRejected("rejected: http 400: prompt too long", status=400)
            return super().complete(request, timeout_s)

    run = answer_questions(results, Refusing("r", reader), limit=2, systems="sentence")
    assert run.errors == 1
    judge = Scripted("j", judge_by_question({}))
    graded = grade_answers(results, [judge])
    assert judge.calls == 1
    [g] = graded.judges[0].unscored
    assert g.question == "q001" and g.error.startswith("no answer: rejected")


# --- the commands print ----------------------------------------------------------------------


def test_commands_print_accuracy_cross_table_and_judge_checks(results):
    out = quiet()
    answer_command(results, Scripted("reader", reader), console=out)
    assert "16 answers (questions x systems) by" in text_of(out)
    out = quiet()
    report = grade_command(
        results,
        [
            Scripted("a", judge_by_question({"Bloom": "wrong"})),
            Scripted("b", judge_by_question({})),
        ],
        console=out,
    )
    printed = text_of(out)
    assert "Answer accuracy" in printed and "hit@5" in printed
    assert "passage found" in printed and "passage missed" in printed
    assert report.systems[0].accuracy.correct is not None
    out = quiet()
    [pair] = judges_command(results, console=out)
    printed = text_of(out)
    assert "correct or not" in printed and "Cohen's kappa" in printed
    assert "test:b is more lenient" in printed
    assert pair.lenient == "test:b"
    for d in pair.differ:
        assert d.key in printed


# --- hand grades -----------------------------------------------------------------------------


def test_hand_grade_loop_saves_each_key_and_resumes(results):
    answer_questions(results, Scripted("reader", reader))
    grade_answers(results, [Scripted("j", judge_by_question({"Bloom": "wrong"}))])
    aset = load_answer_set(results)
    # answers the judge passed with a changed or left-out number come first
    order = flagged_first_order(sample_order(aset.ordered_keys(), seed=7), leniency_flags(aset))
    out = quiet()
    run = grade_by_hand(
        results, n=4, seed=7, input=io.StringIO("c\nx\n\nP\ns\nq\nw\n"), console=out
    )
    assert (run.graded, run.skipped, run.total, run.stopped) == (2, 1, 2, True)
    printed = text_of(out)
    assert printed.count("is not a grade") == 2  # 'x' and the empty line are asked again
    assert order[0][1] in printed
    hand = read_hand(answers_dir(results))
    assert [(h.key, h.hand, h.seed) for h in hand] == [
        (order[0], "correct", 7),
        (order[1], "partial", 7),
        (order[2], "skip", 7),
    ]
    merged = {
        (r["system"], r["question"]): r
        for r in map(json.loads, (answers_dir(results) / "answers.jsonl").read_text().splitlines())
    }
    assert merged[order[0]]["hand"] == "correct" and merged[order[1]]["hand"] == "partial"
    assert "hand" not in merged[order[2]]

    # resume: graded and skipped answers are not shown again; stops at n = 4
    out = quiet()
    run = handgrade_command(results, n=4, seed=7, input=io.StringIO("w\nc\nc\n"), console=out)
    assert (run.graded, run.total, run.stopped, run.remaining) == (2, 4, False, 0)
    hand = read_hand(answers_dir(results))
    assert [(h.key, h.hand) for h in hand[3:]] == [(order[3], "wrong"), (order[4], "correct")]
    assert "Judges against the hand grades" in text_of(out)

    # the judge against these hand grades
    [check] = hand_checks(results)
    judge = load_answer_set(results).grades["test:j"]
    expected = {
        k: h
        for k, h in zip(order[:5], ["correct", "partial", None, "wrong", "correct"], strict=True)
        if h
    }
    lenient = sorted(
        f"{s}/{q}"
        for (s, q), h in expected.items()
        if judge[(s, q)].grade == "correct" and h != "correct"
    )
    assert check.n == 4 and sorted(check.lenient) == lenient


def test_hand_grade_library_loop_takes_choices_from_ask(results):
    answer_questions(results, Scripted("reader", reader), limit=2)
    order = sample_order(load_answer_set(results).ordered_keys(), seed=3)
    seen: list[HandItem] = []

    def ask(item: HandItem) -> str:
        seen.append(item)
        return ["skip", "wrong", "quit"][len(seen) - 1]

    run = hand_grade(results, n=3, seed=3, ask=ask)
    assert (run.graded, run.skipped, run.total, run.stopped) == (1, 1, 1, True)
    assert [(i.system, i.question) for i in seen] == order[:3]
    assert [i.position for i in seen] == [1, 1, 2] and seen[0].target == 3
    assert seen[0].reference and seen[0].question_text
    assert [(h.key, h.hand) for h in read_hand(answers_dir(results))] == [
        (order[0], "skip"),
        (order[1], "wrong"),
    ]
    with pytest.raises(ValueError, match="not one of"):
        hand_grade(results, n=3, seed=3, ask=lambda item: "c")


def test_handgrade_command_line_reads_keys_from_stdin(results):
    from typer.testing import CliRunner

    from ragmeter.cli import app

    answer_questions(results, Scripted("reader", reader), limit=2)
    order = sample_order(load_answer_set(results).ordered_keys(), seed=5)
    result = CliRunner().invoke(
        app, ["handgrade", str(results), "--n", "2", "--seed", "5"], input="w\nc\n"
    )
    assert result.exit_code == 0, result.output
    assert "Hand-graded 2 answers this time (0 skipped); 2 of 2 in all (seed 5)" in " ".join(
        result.output.split()
    )
    assert [(h.key, h.hand, h.seed) for h in read_hand(answers_dir(results))] == [
        (order[0], "wrong", 5),
        (order[1], "correct", 5),
    ]


def test_hand_grade_end_of_input_stops_and_needs_answers(results):
    with pytest.raises(InputError, match="ragmeter answer"):
        grade_by_hand(results, input=io.StringIO(""), console=quiet())
    answer_questions(results, Scripted("reader", reader), limit=1)
    run = grade_by_hand(results, n=5, seed=1, input=io.StringIO(""), console=quiet())
    assert run.stopped and run.total == 0 and run.available == 2
    assert read_hand(answers_dir(results)) == []


def test_hand_file_cut_off_mid_line_is_repaired_on_append(results):
    answer_questions(results, Scripted("reader", reader), limit=2)
    folder = answers_dir(results)
    (folder / "hand.jsonl").write_text('{"system": "sentence", "quest')  # a crash mid-write
    run = grade_by_hand(results, n=1, seed=1, input=io.StringIO("c\n"), console=quiet())
    assert run.total == 1
    [h] = read_hand(folder)
    assert h.hand == "correct"
    assert len((folder / "hand.jsonl").read_text().splitlines()) == 1


def test_judge_order_and_a_judge_whose_server_is_gone(results):
    from ragmeter.llm import BackendUnavailable
    from ragmeter.llm.client import TransientError

    class Gone(Scripted):
        def complete(self, request, timeout_s):
            raise TransientError("connect", "cannot reach http://127.0.0.1:9: refused")

    answer_questions(results, Scripted("reader", reader), limit=2)
    a, b = Scripted("a", judge_by_question({})), Scripted("b", judge_by_question({}))
    grade_answers(results, [a, b])
    grade_answers(results, [b])
    meta = json.loads((answers_dir(results) / "meta.json").read_text())
    assert meta["judges"] == ["test:b", "test:a"]  # the latest run's judges first
    with pytest.raises(BackendUnavailable, match="rerun to resume"):
        grade_answers(results, [Gone("gone", reader)], retries=0)
    meta = json.loads((answers_dir(results) / "meta.json").read_text())
    assert meta["judges"] == ["test:b", "test:a"]  # a judge with no grades never leads
    rows = (answers_dir(results) / "answers.jsonl").read_text().splitlines()
    assert all(set(json.loads(r)["grades"]) == {"test:a", "test:b"} for r in rows)


def test_hand_grading_touches_the_disk_once_per_grade(results, monkeypatch):
    # each key press: one locked append of one line; the merged view is written once at
    # the end of the loop, also when the loop is interrupted
    import ragmeter.answers.hand as hand_module
    import ragmeter.answers.store as store

    answer_questions(results, Scripted("reader", reader), limit=3)
    locks, merges = [], []
    real_lock, real_merge = store.results_lock, hand_module.write_merged

    def counting_lock(*args, **kwargs):
        locks.append(args)
        return real_lock(*args, **kwargs)

    def counting_merge(*args, **kwargs):
        merges.append(args)
        return real_merge(*args, **kwargs)

    monkeypatch.setattr(store, "results_lock", counting_lock)
    monkeypatch.setattr(hand_module, "write_merged", counting_merge)
    between: list[tuple[int, int]] = []  # (locks, merges) since the previous answer shown

    def asked(item: HandItem) -> str:
        if asked.seen:
            between.append((len(locks), len(merges)))
        locks.clear()
        if len(asked.seen) == 2:
            raise KeyboardInterrupt  # the user presses Ctrl-C at the third answer
        asked.seen.append(item)
        return "correct"

    asked.seen = []
    with pytest.raises(KeyboardInterrupt):
        hand_grade(results, n=3, seed=3, ask=asked)
    assert between == [(1, 0), (1, 0)]  # one locked append per grade, nothing else
    assert len(asked.seen) == 2 and len(merges) == 1  # merged once, on the way out
    hand = read_hand(answers_dir(results))
    assert [h.hand for h in hand] == ["correct", "correct"]
    merged = [
        json.loads(line)
        for line in (answers_dir(results) / "answers.jsonl").read_text().splitlines()
    ]
    assert sum(1 for r in merged if r.get("hand") == "correct") == 2


def test_appending_a_hand_grade_reads_only_the_last_byte(tmp_path, monkeypatch):
    from ragmeter.answers.store import HandGrade, _append_hand

    folder = tmp_path / "answers"
    grade = HandGrade("s", "q1", "correct", "sha", 1, "2026-01-01T00:00:00+00:00")
    _append_hand(folder, grade)
    path = folder / "hand.jsonl"
    path.write_bytes(path.read_bytes() * 200)  # a long file of complete lines
    import builtins

    sizes = []
    real_open = builtins.open

    class Spy:
        def __init__(self, fh):
            self.fh = fh

        def __getattr__(self, name):
            return getattr(self.fh, name)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return self.fh.__exit__(*exc)

        def read(self, n=-1):
            data = self.fh.read(n)
            sizes.append(len(data))
            return data

    monkeypatch.setattr(builtins, "open", lambda *a, **k: Spy(real_open(*a, **k)))
    _append_hand(folder, grade)
    monkeypatch.undo()
    assert sizes == [1]  # the last byte, not the file
    assert path.read_text().count("\n") == 201
    # a line cut off by a crash is dropped before the next grade is appended
    path.write_bytes(path.read_bytes() + b'{"system": "s", "quest')
    _append_hand(folder, grade)
    lines = path.read_text().splitlines()
    assert len(lines) == 202 and all(line.endswith("}") for line in lines)


def test_the_hand_grade_loop_loads_no_model_code():
    import subprocess
    import sys

    code = (
        "import sys, ragmeter.answers.hand, ragmeter.answers.store; "
        "print(sorted(m for m in sys.modules if m.startswith(('ragmeter.llm', 'llama_cpp'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# --- files written by older versions ----------------------------------------------------------


def _key_removals(path: Path):
    """``(what, rewrite)`` for each key of a results or answers file: the file with that
    key removed (from every line of a .jsonl, from every estimate of summary.json)."""
    if path.suffix == ".json":
        data = json.loads(path.read_text())
        for key in list(data):
            yield key, {k: v for k, v in data.items() if k != key}
        estimates = data.get("estimates") or {}
        one = next((e for per in estimates.values() for e in per.values()), None)
        for key in list(one or {}):
            trimmed = json.loads(json.dumps(data))
            for per in trimmed["estimates"].values():
                for est in per.values():
                    est.pop(key, None)
            yield f"estimates/*/{key}", trimmed
    else:
        rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        for key in sorted({k for r in rows for k in r}):
            yield key, [{k: v for k, v in r.items() if k != key} for r in rows]


def test_files_without_a_newer_key_load_with_defaults_or_one_line_errors(results):
    from ragmeter.answers.store import load_merged_answer_set
    from ragmeter.errors import RagmeterError
    from ragmeter.report.data import report_data

    answer_questions(results, Scripted("reader", reader))
    grade_answers(results, [Scripted("a", judge_by_question({"Bloom": "wrong"}))])
    folder = answers_dir(results)
    hand_grade(results, 2, ask=lambda item: "correct")
    files = sorted(p for p in [*results.glob("*.json*"), *folder.glob("*.json*")])
    assert {"summary.json", "scores.json", "runs.jsonl", "grades.jsonl", "hand.jsonl"} <= {
        p.name for p in files
    }
    tried = 0
    for path in files:
        original = path.read_text()
        for key, trimmed in _key_removals(path):
            if path.suffix == ".json":
                path.write_text(json.dumps(trimmed))
            else:
                path.write_text("".join(json.dumps(r) + "\n" for r in trimmed))
            tried += 1
            try:
                Results(results)
                load_answer_set(results)
                load_merged_answer_set(results)
                answer_report(results)
                report_data(Results(results))
            except RagmeterError as exc:
                assert "\n" not in str(exc), (path.name, key, str(exc))
            finally:
                path.write_text(original)
    assert tried > 40


def test_the_accuracy_footer_says_what_the_numbers_are(results):
    from ragmeter.answers.analysis import ACCURACY_BASIS
    from ragmeter.cli.answer_views import accuracy_footer, print_answer_report

    answer_questions(results, Scripted("reader", reader))
    grade_answers(results, [Scripted("a", judge_by_question({"seven": "garbage"}))])
    report = answer_report(results)
    sent = report.systems[0]
    assert sent.accuracy.unscored >= 1  # counted as not correct, not left out
    footer = accuracy_footer(report)
    assert footer.startswith(ACCURACY_BASIS) and "unscored one counted as not correct" in footer
    assert "scored answers only" not in footer and "kept out of the mean" not in footer
    est = sent.accuracy.correct
    assert f"{est.confidence * 100:g}% {est.method} bootstrap intervals, seed {est.seed}" in footer
    assert (est.seed, est.rounds) == (report.seed, report.rounds)
    if est.exact is not None:  # 8 questions: the exact interval is what the cells show
        assert "Clopper-Pearson" in footer
    out = quiet()
    print_answer_report(report, out)
    assert " ".join(footer.split()) in " ".join(text_of(out).split())


# Answer accuracy and its judge-corrected (PPI) interval (ragmeter.answers.analysis), checked
# against the documented draws and plain counts.

RNG = np.random.default_rng(5)
J_ALL = (RNG.random(60) < 0.7).astype(float)
J_HAND = J_ALL[:12].copy()
HAND = J_HAND.copy()
HAND[[1, 4, 7]] = 1 - HAND[[1, 4, 7]]  # the judge was wrong on three of twelve


def test_accuracy_counts_unscored_as_not_correct():
    grades = ["correct"] * 5 + ["partial"] * 2 + ["wrong"] * 2 + ["unscored"]
    acc = accuracy(grades, rounds=300, seed=2)
    assert acc.counts == {"correct": 5, "partial": 2, "wrong": 2, "unscored": 1}
    assert (acc.scored, acc.unscored) == (9, 1)
    assert acc.correct.mean == 0.5 and acc.correct_or_partial.mean == 0.7
    assert acc.correct_if_unscored.mean == 0.6
    want = stats.bootstrap(np.array([1.0] * 5 + [0.0] * 5), rounds=300, seed=2)
    assert (acc.correct.low, acc.correct.high) == (want.low, want.high)
    assert acc.correct.rounds == 300 and acc.correct.confidence == 0.95
    some = accuracy(["correct", "partial", "wrong"], confidence=0.9, rounds=200)
    assert some.correct.confidence == some.correct_or_partial.confidence == 0.9
    default = accuracy(["correct", "wrong"])
    assert (default.correct.rounds, default.correct.seed, default.correct.confidence) == (
        10_000,
        1,
        0.95,
    )
    assert accuracy(["correct"], rounds=200).correct_if_unscored is None
    empty = accuracy([])
    assert (empty.correct, empty.correct_or_partial) == (None, None)
    assert (empty.scored, empty.unscored, empty.counts["correct"]) == (0, 0, 0)
    with pytest.raises(InputError, match=r"unknown grades \['great'\]"):
        accuracy(["correct", "great"])


def test_ppi_estimate_is_judge_accuracy_plus_the_rectifier():
    # the plain weight (1) by name; the default, PPI++'s, in tests/test_ppi_tuned.py
    est = ppi_accuracy(J_ALL, J_HAND, HAND, rounds=400, seed=3, confidence=0.9, weight="plain")
    assert est.mean == pytest.approx(J_ALL.mean() + (HAND - J_HAND).mean())
    assert (est.n, est.rounds, est.seed, est.confidence) == (60, 400, 3, 0.9)
    assert est.method == "ppi-normal" and est.rng == "mulberry32"
    default = ppi_accuracy(J_ALL, J_HAND, HAND)
    assert (default.seed, default.rounds, default.confidence) == (1, 10_000, 0.95)


def test_a_perfect_judge_leaves_only_the_quarter_answers_room_for_its_errors():
    # The hand grades equal the judge's: the rectifier never varies, and only the quarter
    # answer in each hand x judge cell keeps it off 0 (a variance of 0.5 / (n + 1)).
    est = ppi_accuracy(J_ALL, J_HAND, J_HAND, rounds=500, seed=4, weight="plain")
    n = J_HAND.size
    var = np.var(J_ALL) / J_ALL.size + 0.5 / (n + 1) / n
    half = NormalDist().inv_cdf(0.975) * ppi.widening_for(n) * math.sqrt(var)
    assert est.mean == pytest.approx(J_ALL.mean(), abs=1e-12)
    assert (est.low, est.high) == pytest.approx((est.mean - half, est.mean + half), abs=1e-12)
    judge_alone = NormalDist().inv_cdf(0.975) * math.sqrt(np.var(J_ALL) / J_ALL.size)
    assert est.high - est.mean > judge_alone


def test_ppi_refuses_unpaired_or_empty_grades():
    with pytest.raises(InputError, match="judge_all must be a non-empty"):
        ppi_accuracy([], [1], [1])
    with pytest.raises(InputError, match="judge_all must be a non-empty"):
        ppi_accuracy([[1, 0]], [1], [1])
    with pytest.raises(InputError, match="must be paired"):
        ppi_accuracy([1, 0], [1, 0], [1])
    with pytest.raises(InputError, match="must be paired"):
        ppi_accuracy([1, 0], [], [])


def test_corrected_accuracy_leaves_out_unscored_and_uses_every_setting():
    from ragmeter.answers.analysis import MIN_HAND, corrected_accuracy

    judge = {f"q{i}": g for i, g in enumerate(["correct"] * 6 + ["wrong"] * 3 + ["unscored"])}
    hand = {"q0": "correct", "q1": "wrong", "q2": "correct", "q6": "wrong", "q7": "correct"}
    hand |= {"q9": "correct", "q8": "unscored"}
    got = corrected_accuracy(judge, hand, "j", "sys", rounds=300, seed=6, confidence=0.9)
    assert (got.judge, got.system, got.n, got.n_hand) == ("j", "sys", 9, MIN_HAND)
    j_all = np.array([1.0] * 6 + [0.0] * 3)
    h = np.array([1.0, 0.0, 1.0, 0.0, 1.0])
    j_hand = np.array([1.0, 1.0, 1.0, 0.0, 0.0])
    j_rest = np.array([1.0, 1.0, 1.0, 0.0])  # q3 q4 q5 q8: the judge's part, not hand-graded
    assert got.rectifier == pytest.approx((h - j_hand).mean())
    assert got.weight_rule == "tuned"
    for est, want in (
        (got.raw, stats.bootstrap(j_all, rounds=300, seed=6, confidence=0.9)),
        (got.hand_only, stats.bootstrap(h, rounds=300, seed=6, confidence=0.9)),
        (got.corrected, ppi_accuracy(j_rest, j_hand, h, rounds=300, seed=6, confidence=0.9)),
    ):
        assert (est.mean, est.low, est.high, est.seed, est.confidence) == (
            want.mean,
            want.low,
            want.high,
            6,
            0.9,
        )
    del hand["q7"]
    assert corrected_accuracy(judge, hand) is None  # four graded both ways: too few
    assert corrected_accuracy({"a": "unscored"}, {"a": "correct"}) is None


def test_two_judges_compared_over_what_both_scored():
    from ragmeter import stats as st
    from ragmeter.answers.judges import JudgePair, check_against_hand, compare_judges

    a = {"q1": "correct", "q2": "correct", "q3": "partial", "q4": "unscored", "q5": "wrong"}
    b = {"q1": "correct", "q2": "wrong", "q3": "wrong", "q4": "correct", "q5": "unscored"}
    b["q6"] = "unscored"
    pair = compare_judges(a, b, "A", "B", rounds=200, seed=3, confidence=0.9)
    assert (pair.n, pair.correct_a, pair.correct_b) == (3, 2, 1)
    assert (pair.a_only, pair.b_only) == (["q2"], [])
    assert [(d.a, d.b) for d in pair.differ] == [("correct", "wrong"), ("partial", "wrong")]
    assert (pair.unscored_a, pair.unscored_b) == (1, 2)
    assert (pair.lenient, pair.margin) == ("A", 1)
    three = st.agreement(
        ["correct", "correct", "partial"],
        ["correct", "wrong", "wrong"],
        classes=["correct", "partial", "wrong"],
        rounds=200,
        seed=3,
        confidence=0.9,
    )
    assert pair.three.kappa.low == three.kappa.low and pair.three.percent.rounds == 200
    assert pair.binary.percent.seed == 3 and pair.binary.percent.confidence == 0.9
    d = pair.to_dict()
    assert (d["lenient"], d["margin"], d["unscored_b"]) == ("A", 1, 2)
    default = compare_judges(a, b)
    assert (default.three.percent.rounds, default.three.percent.seed) == (10_000, 1)
    bare = JudgePair("a", "b", 0, None, None, 0, 0, [], [], [])
    assert (bare.unscored_a, bare.unscored_b, bare.lenient) == (0, 0, None)
    check = check_against_hand(a, b, "A", rounds=200)
    assert (check.n, check.matched, check.exact, check.unscored) == (3, 2, 1, 1)
    assert (check.lenient, check.strict, check.partial_wrong) == (["q2"], [], ["q3"])
    from ragmeter.answers.judges import HandCheck

    assert HandCheck("j", 0, 0, 0, None, None, [], [], []).unscored == 0
    empty = compare_judges({"x": "unscored"}, {"x": "correct"})
    assert (empty.n, empty.binary, empty.three) == (0, None, None)


def test_a_changed_number_is_matched_to_the_reference_it_stands_for():
    from ragmeter.answers.failures import Change, check_number_changed

    refs = ["It is 48 metres, or 120 feet."]
    assert check_number_changed("It is 4.8 metres.", refs) == [Change("4.8", "48", 6, 9)]
    assert check_number_changed("It is 115 feet.", refs) == [Change("115", "120", 6, 9)]
    assert check_number_changed("It is 50 metres.", refs) == [Change("50", "48", 6, 8)]
    assert check_number_changed("It is 48 metres.", refs) == []
    assert check_number_changed("It is 7.", ["no number here"]) == []
    assert Change("1", None).start == 0 and Change("1", None).end == 0


def test_content_words_and_their_light_stems():
    from ragmeter.answers.failures import AnswerCheck, _stem, content_words

    words = content_words("The cities were running quickly to 12 x to ab 7 boxes a1")
    assert words == {"12", "runn", "city", "7", "box", "quick"}
    stems = [_stem(w) for w in ("cities", "walked", "quickly", "sings", "bees", "tries", "x1")]
    assert stems == ["city", "walk", "quick", "sing", "bees", "tri", "x1"]
    check = AnswerCheck("s", "q", True, "correct", False)
    assert (check.left_out, check.changed, check.unsupported, check.failures) == (
        False,
        (),
        (),
        (),
    )


NUMBERS = {
    # text: (values, tolerances), worked out by hand: value, then in base units
    "2k": ((2.0, 2000.0), (0.5, 500.0)),
    "2.5k": ((2.5, 2500.0), (0.05, 50.0)),
    "5 M": ((5.0, 5e6), (0.5, 5e5)),
    "5 m": ((5.0,), (0.5,)),  # metres or minutes: no scale
    "3 min": ((3.0, 180.0), (0.5, 30.0)),
    "1.5 h": ((1.5, 5400.0), (0.05, 180.0)),
    "2 sec": ((2.0, 2.0), (0.5, 0.5)),
    "250 ms": ((250.0, 0.25), (0.5, 0.0005)),
    "7 milliseconds": ((7.0, 0.007), (0.5, 0.0005)),  # the longest unit, not "m"
    "4 GiB": ((4.0, 4 * 2.0**30), (0.5, 0.5 * 2.0**30)),
    "12.5": ((12.5,), (0.05,)),
    "12.50%": ((12.5, 0.125), (0.005, 0.00005)),
    "1/4": ((0.25, 1.0, 4.0), (0.0, 0.5, 0.5)),
    "3/4%": ((0.75, 3.0, 4.0, 0.0075), (0.0, 0.5, 0.5, 0.0)),
    "twenty-one": ((21.0,), (0.0,)),
}


def test_numbers_read_with_their_units_and_rounding():
    from ragmeter.answers.numbers import numbers

    for text, (values, tolerances) in NUMBERS.items():
        (n,) = numbers(text)
        assert n.values == pytest.approx(values), text
        assert n.tolerances == pytest.approx(tolerances), text
    assert numbers("3/0") == []
    assert [n.text for n in numbers("see [2] for 3")] == ["3"]


def test_numbers_match_within_the_stated_rounding():
    from ragmeter.answers.numbers import numbers, same_as_written, same_number

    def one(text):
        return numbers(text)[0]

    assert same_number(one("4.8"), one("4.84")) and not same_number(one("4.8"), one("4.9"))
    assert same_number(one("2k"), one("2000")) and same_number(one("2000"), one("2k"))
    assert same_as_written(one("2"), one("2k"))  # as written: 2 and 2
    assert not same_as_written(one("2000"), one("2k"))
    assert not same_as_written(one("8%"), one("8"))
    assert not same_as_written(one("1.5 h"), one("1.57"))  # 1.5 is +/- 0.05, not 180
    # "40" may be 40.5 rounded (exactly half its last digit away), not 40.51
    assert same_number(one("40"), one("40.5")) and not same_number(one("40"), one("40.51"))
    assert [n.text for n in numbers("5%five")] == ["5%", "five"]  # side by side, both read


# ``ragmeter.answers``: the package's names are imported on first use; an unknown name is an
# ``AttributeError`` as for any module, and ``dir()`` lists every public name.


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        answers.nope  # noqa: B018
    assert not hasattr(answers, "answer_questionz")
    assert getattr(answers, "missing", "default") == "default"


def test_dir_lists_every_public_name():
    names = dir(answers)
    assert set(answers.__all__) <= set(names) and names == sorted(names)
    for name in answers.__all__:
        assert getattr(answers, name) is not None
    from ragmeter.answers.hand import hand_grade
    from ragmeter.answers.store import AnswerSet

    assert answers.hand_grade is hand_grade and answers.AnswerSet is AnswerSet

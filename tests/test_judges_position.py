"""The judges' position check (``grade --position-check N``): a seeded sample of answers
graded again with the answer before the reference, kept beside the grades, resumable
through the reply cache, and compared with the grades in the given order (kappa,
weighted kappa, the grades that changed) in ``ragmeter judges`` and the report."""

from __future__ import annotations

import json
import time

import pytest
from test_answers import (  # noqa: F401  (results: a fixture)
    Scripted,
    judge_by_question,
    quiet,
    reader,
    results,
    text_of,
)

from ragmeter.answers import answer_questions, grade_answers
from ragmeter.answers.position import (
    GIVEN,
    OTHER,
    POSITION,
    position_check,
    position_checks,
    position_sample,
    read_position,
    reversed_reference,
)
from ragmeter.answers.prompts import JUDGE_PROMPT, JUDGE_PROMPT_SWAPPED, judge_request
from ragmeter.answers.store import answers_dir, load_answer_set, read_meta, reference_text
from ragmeter.cli.answer_views import grade_command, judges_command
from ragmeter.comparison.formatting import format_estimate
from ragmeter.errors import InputError
from ragmeter.llm.fence import fenced
from ragmeter.report.sections import load_answers
from ragmeter.runs.results import Results


def _prompt(req) -> str:
    return req.messages[-1].content


def test_the_swapped_prompt_puts_the_answer_first_with_the_same_words():
    given = _prompt(judge_request("Q?", "first span\nsecond", "the answer"))
    other = _prompt(judge_request("Q?", "first span\nsecond", "the answer", swapped=True))
    assert given.index("<<<reference") < given.index("<<<answer")  # as it always was
    assert other.index("<<<answer") < other.index("<<<reference")
    assert fenced(other, "reference") == fenced(given, "reference") == "first span\nsecond"
    assert fenced(other, "answer") == fenced(given, "answer") == "the answer"
    assert fenced(other, "question") == "Q?"
    # the same words otherwise: only the two blocks (and the sentence naming them) move
    assert sorted(JUDGE_PROMPT_SWAPPED) == sorted(JUDGE_PROMPT)
    assert JUDGE_PROMPT_SWAPPED != JUDGE_PROMPT


def test_the_reordered_reference_gives_a_questions_spans_last_first(results):  # noqa: F811
    res = Results(results)
    spans = {q.id: [s.text for s in q.answers] for q in res.questions}
    assert any(len(v) > 1 for v in spans.values()), "the example has a two-span answer"
    for qid, texts in spans.items():
        assert reversed_reference(res, qid) == "\n".join(reversed(texts))
        assert reference_text(res, qid) == "\n".join(texts)


def test_the_sample_is_seeded_kept_in_order_and_all_answers_when_fewer():
    keys = [("s", f"q{i}") for i in range(20)]
    one = position_sample(keys, 5, seed=3)
    assert one == position_sample(keys, 5, seed=3) and len(one) == 5
    assert one == sorted(one, key=keys.index)
    assert one != position_sample(keys, 5, seed=4)
    assert position_sample(keys, 50, seed=3) == keys


def order_biased(prompt: str) -> str:
    """Correct when the reference comes first; with the answer first, a Bloom question's
    answer drops to partial (the judge leans on what it reads last)."""
    answer_first = prompt.index("<<<answer") < prompt.index("<<<reference")
    if answer_first and "Bloom" in fenced(prompt, "question"):
        return json.dumps({"grade": "partial", "reason": "order"})
    return json.dumps({"grade": "correct", "reason": "fits"})


def _answered_and_graded(results, judge):  # noqa: F811
    answer_questions(results, Scripted("reader", reader))
    grade_answers(results, judge)


def test_a_position_check_regrades_the_sample_in_the_other_order_and_counts_the_changes(
    results,  # noqa: F811
):
    judge = Scripted("judge", order_biased)
    _answered_and_graded(results, judge)
    before = judge.calls
    [run] = position_check(results, judge, n=16, seed=5)  # all 16 answers (8 x 2 systems)
    assert judge.calls - before == 16 and len(run.grades) == 16
    meta = read_meta(answers_dir(results))["position_check"]
    assert (meta["n"], meta["seed"], meta["sampled"]) == (16, 5, 16)
    saved = read_position(answers_dir(results))
    assert len(saved) == 16
    bloom = {q.id for q in Results(results).questions if "Bloom" in q.text}
    assert bloom, "the example has a Bloom-filter question"
    [check] = position_checks(results)
    assert (check.pair.a, check.pair.b) == (GIVEN, OTHER)
    assert check.pair.n == 16 and check.changed == 2 * len(bloom)  # both systems' answers
    assert {d.key.split("/")[1] for d in check.pair.differ} == bloom
    assert all((d.a, d.b) == ("correct", "partial") for d in check.pair.differ)
    assert check.pair.lenient == GIVEN and check.pair.margin == 2 * len(bloom)
    assert check.pair.three_weighted is not None and check.pair.three.kappa is not None


def test_a_repeated_position_check_costs_no_call_and_the_same_seed_draws_the_same_answers(
    results,  # noqa: F811
):
    judge = Scripted("judge", judge_by_question({}))
    _answered_and_graded(results, judge)
    position_check(results, judge, n=5, seed=2)
    first = sorted(read_position(answers_dir(results)))
    calls = judge.calls
    position_check(results, judge, n=5, seed=2)
    assert judge.calls == calls  # every reordered reply came from the cache
    assert sorted(read_position(answers_dir(results))) == first and len(first) == 5
    position_check(results, judge, n=5, seed=9)  # another sample replaces the old one
    assert judge.calls > calls
    assert len(read_position(answers_dir(results))) == 5


def test_a_position_check_stopped_part_way_resumes_asking_only_the_rest(
    results,  # noqa: F811
):
    grades = judge_by_question({})

    def slow(prompt):  # a model takes a while: the stop lands before the last call
        time.sleep(0.05)
        return grades(prompt)

    judge = Scripted("judge", slow)
    _answered_and_graded(results, judge)
    before = judge.calls

    def stop_after_3(label, done, total):
        if done == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        position_check(results, judge, n=8, seed=1, progress=stop_after_3, concurrency=1)
    asked = judge.calls - before
    assert 3 <= asked < 8
    assert not (answers_dir(results) / POSITION).exists()  # written once the judge finished
    position_check(results, judge, n=8, seed=1)
    assert judge.calls - before == 8  # each reordered answer asked exactly once


def test_a_grade_of_an_answer_that_changed_since_is_left_out(results):  # noqa: F811
    judge = Scripted("judge", order_biased)
    _answered_and_graded(results, judge)
    position_check(results, judge, n=16, seed=5)
    # the reader answers anew: every answer changes, so no position grade applies
    answer_questions(results, Scripted("reader-2", lambda p: "something else entirely"))
    grade_answers(results, judge)
    assert position_checks(results) == []


def test_position_check_size_must_be_one_or_more_before_any_call(results):  # noqa: F811
    judge = Scripted("judge", judge_by_question({}))
    _answered_and_graded(results, judge)
    calls = judge.calls
    for bad in (0, -2, 1.5, True):
        with pytest.raises(InputError, match="--position-check must be a whole number"):
            position_check(results, judge, n=bad)
    with pytest.raises(InputError, match="--position-check must be a whole number"):
        grade_command(results, [judge], console=quiet(), position=(0, None))
    assert judge.calls == calls


def test_grade_with_a_position_check_prints_it_and_judges_prints_it_again(
    results,  # noqa: F811
):
    answer_questions(results, Scripted("reader", reader))
    judge = Scripted("judge", order_biased)
    out = quiet()
    grade_command(results, [judge], console=out, position=(16, 5))
    printed = text_of(out)
    assert "Position check: 16 sampled answers (seed 5) graded again with the answer" in printed
    [check] = position_checks(results)
    shown = format_estimate(check.pair.three_weighted, "kappa")
    assert shown in printed
    assert f"the {GIVEN} marked {check.changed} more answers correct" in printed
    again = quiet()
    judges_command(results, console=again)
    assert "Position check: 16 sampled answers" in text_of(again) and shown in text_of(again)


def test_judges_without_a_position_check_prints_none(results):  # noqa: F811
    _answered_and_graded(results, Scripted("judge", judge_by_question({})))
    out = quiet()
    judges_command(results, console=out)
    assert "Position check" not in text_of(out)
    assert position_checks(load_answer_set(results)) == []
    assert "position" not in (load_answers(Results(results)).get("reliability") or {})


def test_the_report_data_carries_the_position_check_as_judges_prints_it(
    results,  # noqa: F811
):
    judge = Scripted("judge", order_biased)
    _answered_and_graded(results, judge)
    position_check(results, judge, n=16, seed=5)
    [check] = position_checks(results)
    [row] = load_answers(Results(results))["reliability"]["position"]
    assert row["judge"] == "test:judge" and row["changed"] == check.changed
    assert (row["sampled"], row["seed"], row["answers"]) == (16, 5, 16)
    assert row["kappa_weighted"]["shown"] == format_estimate(check.pair.three_weighted, "kappa")
    assert row["more_correct"] == check.pair.margin

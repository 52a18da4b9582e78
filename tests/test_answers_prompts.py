"""``ragmeter.answers.prompts``: the reader's and the judge's requests are deterministic
(temperature 0, seed 0), ask for 256 tokens unless told, only the judge's asks for the
grade schema, and an empty answer is shown to the judge as "(no answer)"."""

from __future__ import annotations

import pytest

from ragmeter.answers.prompts import GRADE_SCHEMA, judge_request, reader_request
from ragmeter.llm.fence import fenced


def test_reader_request_is_deterministic_and_asks_for_256_tokens():
    r = reader_request("Why?", ["one"])
    assert (r.temperature, r.seed, r.max_tokens, r.json_schema) == (0.0, 0, 256, None)
    assert reader_request("Why?", ["one"], max_tokens=40).max_tokens == 40


def test_judge_request_is_deterministic_and_asks_for_the_grade_schema():
    j = judge_request("Q?", "REF", "ANS")
    assert (j.temperature, j.seed, j.max_tokens) == (0.0, 0, 256)
    assert j.json_schema == GRADE_SCHEMA
    assert judge_request("Q?", "REF", "ANS", max_tokens=40).max_tokens == 40


@pytest.mark.parametrize("answer", ["", "  \n "])
def test_the_judge_sees_an_empty_answer_as_no_answer(answer):
    text = judge_request("Q?", "REF", answer).messages[-1].content
    assert fenced(text, "answer") == "(no answer)"
    assert fenced(text, "question") == "Q?" and fenced(text, "reference") == "REF"

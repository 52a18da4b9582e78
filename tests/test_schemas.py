"""The file schemas, pinned: a relevance grade is a whole number within +-(2**31 - 1),
never a boolean, text, NaN or a fraction; the closed SQuAD models coerce nothing and
cannot be changed once read; a SQuAD question is answerable unless it says otherwise; a
valid line comes back as its model; and the first problem is named in words: the field
(list indexes in brackets, union branches left out), what is wrong, and the value given,
cut to 60 characters."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from ragmeter.errors import InputError
from ragmeter.files.schemas import (
    MAX_GRADE,
    QuestionLine,
    SquadQA,
    SquadTestSet,
    validate,
    whole_grade,
)

LINE = {"id": 7, "question": "Where?", "answers": [{"doc": "d1", "start": 0, "end": 3}]}


def problem(model, data) -> str:
    with pytest.raises(InputError) as caught:
        validate(model, data, "q.jsonl:3", "fix the line")
    return str(caught.value)


def test_the_grade_range_is_that_of_a_signed_32_bit_number():
    assert MAX_GRADE == 2_147_483_647
    assert whole_grade(MAX_GRADE, "g") == MAX_GRADE
    assert whole_grade(-MAX_GRADE, "g") == -MAX_GRADE
    assert whole_grade(float(MAX_GRADE), "g") == MAX_GRADE
    for value in (MAX_GRADE + 1, -MAX_GRADE - 1, 2**32 - 1, 2.0**31):
        with pytest.raises(InputError, match="out of range"):
            whole_grade(value, "g")


def test_a_grade_is_a_whole_number_and_nothing_else():
    assert whole_grade(2, "g") == 2 and type(whole_grade(2, "g")) is int
    assert whole_grade(2.0, "g") == 2 and type(whole_grade(2.0, "g")) is int
    assert whole_grade(-1.0, "g") == -1
    for value in (True, False, "2", None, [1], 1.5, float("nan"), float("inf"), -float("inf")):
        with pytest.raises(InputError, match=r"^run\.txt:4: grade is .*not a whole number"):
            whole_grade(value, "run.txt:4: grade")


def test_a_valid_line_comes_back_as_its_model():
    line = validate(QuestionLine, {**LINE, "source": "faq"}, "q.jsonl:1")
    assert isinstance(line, QuestionLine)
    assert line.id == 7 and line.question == "Where?"
    assert (line.answers[0].doc, line.answers[0].start, line.answers[0].end) == ("d1", 0, 3)


def test_squad_questions_are_answerable_unless_marked():
    qa = SquadQA.model_validate({"id": "q1", "question": "Who?"})
    assert qa.is_impossible is False and qa.answers == []
    assert SquadQA.model_validate(
        {"id": "q1", "question": "Who?", "is_impossible": True}
    ).is_impossible


def test_the_squad_models_coerce_nothing():
    data = {"data": [{"paragraphs": [{"context": "c", "qas": [{"id": "q", "question": "Who?"}]}]}]}
    assert validate(SquadTestSet, data, "s.json").data[0].paragraphs[0].qas[0].id == "q"
    answer = {"text": "c", "answer_start": "0"}
    data["data"][0]["paragraphs"][0]["qas"][0]["answers"] = [answer]
    assert problem(SquadTestSet, data) == (
        "q.jsonl:3: data[0].paragraphs[0].qas[0].answers[0].answer_start must be a whole "
        "number, got '0'; fix the line"
    )


def test_the_closed_models_are_immutable():
    qa = SquadQA.model_validate({"id": "q1", "question": "Who?"})
    with pytest.raises(ValidationError, match="frozen"):
        qa.question = "Why?"
    assert qa.question == "Who?"


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"id": [1]}, "id must be a string or a whole number, got [1]"),
        ({"question": "  "}, "question must not be empty, got '  '"),
        ({"question": 5}, "question must be a string, got 5"),
        ({"answers": []}, "answers must not be empty, got []"),
        (
            {"answers": [{"doc": "d"}, {"doc": "d", "start": "ten"}]},
            "answers[1].start must be a whole number, got 'ten'",
        ),
        ({"answers": [{"doc": "d", "end": -1}]}, "answers[0].end must not be negative, got -1"),
    ],
)
def test_the_first_problem_in_words(change, said):
    assert problem(QuestionLine, {**LINE, **change}) == f"q.jsonl:3: {said}; fix the line"


def test_a_missing_field_shows_no_value():
    line = {k: v for k, v in LINE.items() if k != "answers"}
    assert problem(QuestionLine, line) == "q.jsonl:3: answers is missing; fix the line"


def test_a_problem_with_the_whole_line_names_the_value():
    assert problem(QuestionLine, "text") == (
        "q.jsonl:3: the value must be an object, got 'text'; fix the line"
    )


def test_a_long_value_is_cut_to_sixty_characters():
    said = problem(QuestionLine, {**LINE, "answers": "x" * 100})
    shown = "'" + "x" * 56 + "..."
    assert len(shown) == 60
    assert said == f"q.jsonl:3: answers must be a list, got {shown}; fix the line"
    exact = "x" * 58  # its repr is 60 characters: shown whole
    assert problem(QuestionLine, {**LINE, "answers": exact}).endswith(
        f"got '{exact}'; fix the line"
    )

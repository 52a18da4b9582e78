"""``ragmeter.questions.audit_model``: the requests the model checks send (the reply
schemas, 24 tokens by default), an unknown check refused, and an unreadable reply
kept as ``unscored`` naming its check, with at most 300 characters of the raw text."""

from __future__ import annotations

import pytest

from ragmeter.errors import InputError
from ragmeter.inputs.corpus import Document
from ragmeter.inputs.testset import AnswerSpan, Question
from ragmeter.llm import Completion
from ragmeter.questions.audit import audit_questions

PASSAGE = "A bloom filter sets bits with several hash functions and never forgets a key."
DOC = Document("bloom.md", PASSAGE)


class _Backend:
    """Answers each prompt with ``reply(prompt)``; keeps the requests."""

    kind = "scripted"
    model = "m"
    base_url = None
    max_concurrency = 1

    def __init__(self, reply):
        self.reply = reply
        self.requests: list = []

    def complete(self, request, timeout_s):
        self.requests.append(request)
        return Completion(self.reply(request.messages[-1].content))

    def close(self):
        pass


def _question(text: str = "Does a bloom filter forget keys?") -> Question:
    return Question("q", text, (AnswerSpan(DOC.id, 0, len(PASSAGE), PASSAGE),))


def _answers(prompt: str) -> str:
    return '{"verdict": "answers"}' if "<<<passage " in prompt else '{"understandable": "yes"}'


def test_each_check_asks_for_one_field_in_24_tokens():
    backend = _Backend(_answers)
    audit_questions([_question()], [DOC], llm=backend)
    misstated, context = backend.requests
    assert misstated.json_schema == {
        "type": "object",
        "properties": {
            "verdict": {"type": "string", "enum": ["answers", "contradicts", "does not answer"]}
        },
        "required": ["verdict"],
        "additionalProperties": False,
    }
    assert context.json_schema == {
        "type": "object",
        "properties": {"understandable": {"type": "string", "enum": ["yes", "no"]}},
        "required": ["understandable"],
        "additionalProperties": False,
    }
    assert misstated.max_tokens == context.max_tokens == 24
    again = _Backend(_answers)
    audit_questions([_question()], [DOC], llm=again, max_tokens=40)
    assert [r.max_tokens for r in again.requests] == [40, 40]


def test_an_unknown_model_check_is_refused():
    with pytest.raises(InputError, match=r"unknown model check\(s\) \['spelling'\]"):
        audit_questions([_question()], [DOC], llm=_Backend(_answers), llm_checks=("spelling",))


@pytest.mark.parametrize(("check", "name"), [("misstated", "misstatement"), ("context", "context")])
def test_an_unreadable_reply_names_its_check_and_keeps_300_characters(check, name):
    long = "".join(f"{i:03d}" for i in range(200))  # 600 characters, no JSON

    def reply(prompt: str) -> str:
        asks_misstated = "<<<passage " in prompt
        return long if asks_misstated == (check == "misstated") else _answers(prompt)

    [result] = audit_questions([_question()], [DOC], llm=_Backend(reply))
    [flag] = [f for f in result.flags if f.kind == "unscored"]
    assert flag.reason.startswith(f"{name} check: ") and flag.source == "llm"
    assert flag.reason.endswith(f"raw reply: {long[:300]!r}")
    assert result.checks[check] == "unscored"

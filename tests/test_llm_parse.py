"""Reading JSON out of raw model replies, and checking it against a schema."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragmeter.llm.client import ChatReply, ChatRequest, Completion, build_reply
from ragmeter.llm.parse import (
    MAX_SCAN_CHARS,
    extract_objects,
    normalize,
    parse_reply,
    repair,
    validate,
)

GRADE = {
    "type": "object",
    "properties": {
        "grade": {"type": "string", "enum": ["correct", "partial", "wrong"]},
        "reason": {"type": "string"},
    },
    "required": ["grade", "reason"],
}

# Raw outputs in the shapes small instruction-tuned models actually produce.
READABLE = [
    ('{"grade": "correct", "reason": "Matches the reference."}', "correct"),
    (
        'Here is my assessment:\n```json\n{\n  "grade": "partial",\n'
        '  "reason": "Names Raft but not the election timeout."\n}\n```\nLet me know!',
        "partial",
    ),
    ('```\n{"grade": "wrong", "reason": "Confuses B-trees with LSM trees."}\n```', "wrong"),
    (
        'The answer mentions the quorum {majority} rule. Final verdict: {"grade": "correct", '
        '"reason": "It states the majority quorum."} I am confident.',
        "correct",
    ),
    ("{'grade': 'wrong', 'reason': 'The answer doesn't mention bloom filters.'}", "wrong"),
    ('{"grade": "partial", "reason": "Half right.",}', "partial"),
    ('{"grade": "correct", "reason": "ok", "confident": True, "notes": None}', "correct"),
    ('{"grade": "Correct ", "reason": "Case and spacing differ from the enum."}', "correct"),
    (
        '{"grade": "wrong", "reason": "He calls it "consistent hashing" but describes sharding"}',
        "wrong",
    ),
    ("{grade: partial, reason: bare words}", "partial"),
    # cut off by max_tokens in the middle of the reason: the grade is complete
    ('{"grade": "correct", "reason": "The write-ahead log is flushed before the', "correct"),
    ('{"grade": "partial", "reason": "ok", "extra": "dangling', "partial"),
    ('{"reason": "The answer is right", "grade": "correct"}', "correct"),
    ('<think>maybe {"grade": "x"}</think>{"grade": "wrong", "reason": "no"}', "wrong"),
]

UNREADABLE = [
    ("I think the answer is mostly correct.", "no JSON object"),
    ("", "no JSON object"),
    ("{{{{", "missing required key"),  # read as a cut-off empty object
    ('{"grade": "excellent", "reason": "not in the enum"}', "not one of"),
    ('{"grade": "correct"}', "missing required key 'reason'"),
    ('{"grade": "correct", "reason": 42}', "expected string"),
    ('{"grade": "corr', "not one of"),
    ('["correct", "fine"]', "no JSON object"),
    ('{"grade": "correct", "reason": ', "missing required key"),
]


@pytest.mark.parametrize(("raw", "grade"), READABLE)
def test_readable_replies_parse_and_validate(raw, grade):
    parsed, error = parse_reply(raw, GRADE)
    assert error is None, error
    assert parsed is not None
    assert parsed["grade"] == grade
    assert isinstance(parsed["reason"], str) and parsed["reason"]
    assert validate(parsed, GRADE) == []


@pytest.mark.parametrize(("raw", "why"), UNREADABLE)
def test_unreadable_replies_give_none_and_a_reason(raw, why):
    parsed, error = parse_reply(raw, GRADE)
    assert parsed is None
    assert error is not None and error.startswith("unparseable: ")
    assert why in error


def test_details_survive_repair():
    parsed, _ = parse_reply("{'grade': 'wrong', 'reason': 'it\\'s \"quoted\"\\nline two',}", GRADE)
    assert parsed == {"grade": "wrong", "reason": 'it\'s "quoted"\nline two'}
    parsed, _ = parse_reply('{"grade": "correct", "reason": "caf\\u00e9 ok"}', GRADE)
    assert parsed["reason"] == "café ok"


def test_a_draft_and_a_final_object_are_ambiguous():
    raw = 'Draft: {"grade": "maybe", "reason": "x"}\nFinal: {"grade": "partial", "reason": "y"}'
    parsed, error = parse_reply(raw, GRADE)
    assert parsed is None and error.startswith("ambiguous: ")


def test_without_schema_any_object_is_accepted():
    assert parse_reply('noise {"a": [1, 2,], "b": False} noise', None) == (
        {"a": [1, 2], "b": False},
        None,
    )


def test_truncated_reply_drops_only_the_dangling_key():
    text, _ = repair('{"grade": "correct", "reason": "fine", "conf', 0)
    assert json.loads(text) == {"grade": "correct", "reason": "fine"}
    text, _ = repair('{"a": {"b": [1, 2', 0)
    assert json.loads(text) == {"a": {"b": [1, 2]}}


def test_extract_objects_yields_each_object_in_order():
    objs = list(extract_objects('{"n": 1} then {"n": 2} and ```json\n{"n": 3}\n```'))
    assert [o["n"] for o in objs] == [1, 2, 3]


def test_validator_subset():
    schema = {
        "type": "object",
        "properties": {
            "score": {"type": "integer"},
            "ratio": {"type": "number"},
            "ok": {"type": "boolean"},
            "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}},
            "kind": {"const": "grade"},
        },
        "required": ["score"],
        "additionalProperties": False,
    }
    assert (
        validate({"score": 3, "ratio": 0.5, "ok": True, "tags": ["a"], "kind": "grade"}, schema)
        == []
    )
    assert validate({"score": 3.0}, schema) == []  # 3.0 is an integer in JSON Schema
    assert validate({"score": True}, schema)  # a boolean is not a number
    assert validate({"score": 2.5}, schema)
    assert validate({"score": 1, "ok": "yes"}, schema)
    assert validate({"score": 1, "tags": ["a", "c"]}, schema) == [
        "$.tags[1]: 'c' is not one of ['a', 'b']"
    ]
    assert validate({"score": 1, "kind": "other"}, schema)
    assert validate({"score": 1, "extra": 1}, schema) == ["$: unexpected keys ['extra']"]
    assert validate([], schema) == ["$: expected object, got array"]


def test_normalize_maps_enum_spelling_only_when_unambiguous():
    schema = {"type": "string", "enum": ["Yes", "yes", "no"]}
    assert normalize("NO", schema) == "no"
    assert normalize("YES", schema) == "YES"  # two members fold to "yes"
    assert normalize(" maybe ", schema) == " maybe "


def test_reply_for_schema_request_records_unparseable_text():
    class FakeBackend:
        kind, model = "openai", "m"

    request = ChatRequest(prompt="grade it", json_schema=GRADE)
    reply = build_reply(request, Completion("The answer is right.", 5, 6), FakeBackend(), 0.1)
    assert isinstance(reply, ChatReply)
    assert reply.parsed is None and reply.text == "The answer is right."
    assert reply.error.startswith("unparseable: ")
    assert (reply.tokens_in, reply.tokens_out) == (5, 6)
    ok = build_reply(request, Completion('{"grade":"wrong","reason":"r"}'), FakeBackend(), 0.1)
    assert ok.ok and ok.parsed == {"grade": "wrong", "reason": "r"}


def test_chat_request_forms():
    a = ChatRequest(prompt="q", system="be brief")
    b = ChatRequest(messages=[{"role": "system", "content": "be brief"}, ("user", "q")])
    assert a.messages == b.messages
    assert a.key_payload() == b.key_payload()
    with_schema = ChatRequest(prompt="q", json_schema=GRADE)
    assert len({with_schema, ChatRequest(prompt="q", json_schema=dict(GRADE)), a}) == 2
    with pytest.raises(ValueError):
        ChatRequest()
    with pytest.raises(ValueError):
        ChatRequest(prompt="q", messages=[{"role": "user", "content": "q"}])
    with pytest.raises(ValueError):
        ChatRequest(messages=[{"role": "robot", "content": "q"}])


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None)
@given(
    obj=st.dictionaries(st.text(max_size=8), json_values, max_size=5),
    before=st.text(alphabet=st.characters(blacklist_characters="{}"), max_size=30),
    after=st.text(max_size=30),
)
def test_any_json_object_embedded_in_prose_is_recovered(obj, before, after):
    raw = f"{before}{json.dumps(obj, ensure_ascii=False)}{after}"
    assert next(extract_objects(raw)) == obj


@settings(max_examples=200, deadline=None)
@given(raw=st.text(max_size=200))
def test_parser_never_raises(raw):
    parsed, error = parse_reply(raw, GRADE)
    assert (parsed is None) != (error is None)


def _cases(word: str) -> list[str]:
    mixed = "".join(c.upper() if i % 2 else c for i, c in enumerate(word))
    return sorted({word, word.upper(), word.capitalize(), mixed})


_AROUND = [
    ("", ""),
    (" ", " "),
    ("\t", "\n"),
    ("", "."),
    ("", "!"),
    ("", ":"),
    ("**", "**"),
    ("'", "'"),
    ("(", ")"),
    ("  *", ".* "),
]


@pytest.mark.parametrize("word", ["correct", "partial", "wrong"])
def test_a_judges_grade_reads_in_any_case_spacing_and_punctuation_around_it(word):
    from ragmeter.answers.prompts import GRADE_SCHEMA

    for spelled in _cases(word):
        for before, after in _AROUND:
            value = json.dumps(before + spelled + after)
            for reply in (
                f'{{"grade": {value}, "reason": "r"}}',
                f'{{ "grade" :{value} ,\n "reason" : "r" }}',
                f'Verdict:\n```json\n{{"reason": "r", "grade": {value}}}\n```',
            ):
                parsed, error = parse_reply(reply, GRADE_SCHEMA)
                assert error is None and parsed["grade"] == word, (reply, error)


@pytest.mark.parametrize(
    "value", ["not correct", "incorrect", "correct or partial", "partially correct", "wrongly", ""]
)
def test_other_words_around_a_grade_are_not_read_as_that_grade(value):
    from ragmeter.answers.prompts import GRADE_SCHEMA

    parsed, error = parse_reply(json.dumps({"grade": value, "reason": "r"}), GRADE_SCHEMA)
    assert parsed is None and error.startswith("unparseable"), (value, parsed)


# Reading a judge's reply (ragmeter.llm.parse): the scan limit, the shown snippet, schemas
# without required keys.

SCHEMA = {
    "type": "object",
    "properties": {"grade": {"type": "string", "enum": ["correct", "wrong"]}},
    "required": ["grade"],
}


def test_only_the_first_hundred_thousand_characters_are_read():
    assert MAX_SCAN_CHARS == 100_000
    reply = '{"grade": "correct"}'
    at_end = " " * (100_000 - len(reply)) + reply
    assert parse_reply(at_end, SCHEMA) == ({"grade": "correct"}, None)
    past = " " * 100_000 + reply  # its opening brace is character 100,001
    obj, error = parse_reply(past, SCHEMA)
    assert obj is None and error.startswith("unparseable: no JSON object")


def test_a_reply_without_json_is_shown_in_eighty_characters():
    _, error = parse_reply("word " * 40, SCHEMA)
    assert error == f"unparseable: no JSON object in reply {('word ' * 16)!r}"  # 80 chars
    _, short = parse_reply("x" * 100, SCHEMA)
    assert short.endswith(repr("x" * 80))


def test_without_required_keys_the_one_valid_object_is_taken():
    loose = {"type": "object", "properties": {"grade": {"type": "string"}}}
    reply = 'first ["a"] then {"grade": "correct"} and {"grade": 3}'
    assert parse_reply(reply, loose) == ({"grade": "correct"}, None)
    obj, error = parse_reply('{"grade": 3} {"grade": 4}', loose)
    assert obj is None and "does not match the schema" in error
    assert parse_reply('{"a": 1} {"b": 2}', None) == ({"b": 2}, None)


def test_a_repaired_reply_reads_every_four_digit_unicode_escape():
    reply = '{"reason": "\\u4e2d, \\u00e9 and \\uFFFD", "grade": "correct"'  # unclosed
    assert parse_reply(reply, None) == ({"reason": "中, é and \ufffd", "grade": "correct"}, None)
    text, _ = repair('{"a": "\\u4e2dx', 0)
    assert json.loads(text) == {"a": "中x"}

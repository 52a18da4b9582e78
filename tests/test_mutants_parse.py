"""Reading a judge's reply (ragmeter.llm.parse): the scan limit, the shown snippet,
schemas without required keys."""

from __future__ import annotations

from ragmeter.llm.parse import MAX_SCAN_CHARS, parse_reply

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

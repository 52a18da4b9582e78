"""``ragmeter.llm.client``: a chat request built from (role, content) pairs or a prompt,
its checks and defaults, a reply's defaults (an older cache entry reads with them), and
the reply :func:`build_reply` makes of a backend's completion."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from ragmeter.llm.client import (
    ChatReply,
    ChatRequest,
    Completion,
    Message,
    build_reply,
)

SCHEMA = {
    "type": "object",
    "properties": {"grade": {"type": "string"}},
    "required": ["grade"],
}
BACKEND = SimpleNamespace(kind="test", model="tiny")


def test_messages_given_as_role_content_pairs():
    r = ChatRequest(messages=[("system", "be brief"), ["user", "hi"]])
    assert r.messages == (Message("system", "be brief"), Message("user", "hi"))
    with pytest.raises(ValueError, match="chat message must be"):
        ChatRequest(messages=[("user", "hi", "extra")])
    with pytest.raises(ValueError, match="chat message must be"):
        ChatRequest(messages=["hi"])


def test_messages_and_a_prompt_together_are_refused():
    with pytest.raises(ValueError, match="not both"):
        ChatRequest(messages=[("user", "hi")], prompt="hi")
    with pytest.raises(ValueError, match="not both"):
        ChatRequest(messages=[("user", "hi")], system="be brief")
    r = ChatRequest(prompt="hi", system="be brief")
    assert r.messages == (Message("system", "be brief"), Message("user", "hi"))


def test_max_tokens_defaults_to_512_and_may_be_one():
    assert ChatRequest(prompt="hi").max_tokens == 512
    assert ChatRequest(prompt="hi", max_tokens=1).max_tokens == 1
    assert ChatRequest(prompt="hi", max_tokens=None).max_tokens is None
    with pytest.raises(ValueError, match="at least 1"):
        ChatRequest(prompt="hi", max_tokens=0)


def test_a_reply_read_from_fewer_fields_takes_the_defaults():
    r = ChatReply.from_dict({"text": "hi", "unknown": 1})
    assert (r.text, r.parsed, r.tokens_in, r.tokens_out, r.latency_s) == ("hi", None, 0, 0, 0.0)
    assert (r.cached, r.backend, r.model, r.error, r.ok) == (False, "", "", None, True)
    assert Completion("hi") == ("hi", 0, 0)


def test_build_reply_names_the_backend_and_keeps_the_counts():
    request = ChatRequest(prompt="grade it", json_schema=SCHEMA)
    r = build_reply(request, Completion('{"grade": "correct"}', 12, 3), BACKEND, 0.1234567)
    assert (r.parsed, r.error, r.ok) == ({"grade": "correct"}, None, True)
    assert (r.tokens_in, r.tokens_out, r.latency_s) == (12, 3, 0.123457)
    assert (r.backend, r.model, r.cached) == ("test", "tiny", False)
    # a server that reports no token counts: zero, not an error
    r = build_reply(request, Completion("no json here", None, None), BACKEND, 1.0)
    assert (r.tokens_in, r.tokens_out) == (0, 0)
    assert r.parsed is None and r.error.startswith("unparseable") and not r.ok
    assert r.text == "no json here"
    r = build_reply(request, Completion('{"grade": "wrong"}'), BACKEND, 0.0)
    assert (r.tokens_in, r.tokens_out) == (0, 0)

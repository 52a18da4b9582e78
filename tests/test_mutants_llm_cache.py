"""``ragmeter.llm.cache``: the cache key is the SHA-256 of one exact canonical JSON text
(so a cache written by an earlier version keeps being read), backend options included
as JSON values or their repr; the keys listed in the order stored; a busy timeout of 30 s
unless told otherwise."""

from __future__ import annotations

import hashlib
from fractions import Fraction

from ragmeter.llm.cache import ReplyCache, canonical_json, request_key
from ragmeter.llm.client import ChatReply, ChatRequest


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_the_key_is_the_sha256_of_the_canonical_request():
    request = ChatRequest(prompt="Größe?", max_tokens=64)
    payload = (
        '{"backend":"gguf","json_schema":null,"max_tokens":64,'
        '"messages":[{"content":"Größe?","role":"user"}],'
        '"model":"m.gguf","seed":0,"temperature":0.0,"v":1}'
    )
    assert request_key("gguf", "m.gguf", request) == _sha(payload)
    assert request_key("gguf", "m.gguf", request, {}) == _sha(payload)  # no options: none


def test_options_enter_the_key_as_json_values_or_their_repr():
    request = ChatRequest(prompt="q", max_tokens=64)
    options = {
        "n_ctx": 2048,
        "chat_format": "gemma",
        "flash": True,
        "rope": 0.5,
        "stop": ("a", None),
        "layers": {1: [2, Fraction(1, 3)]},
    }
    payload = (
        '{"backend":"gguf","json_schema":null,"max_tokens":64,'
        '"messages":[{"content":"q","role":"user"}],"model":"m.gguf",'
        '"options":{"chat_format":"gemma","flash":true,"layers":{"1":[2,"Fraction(1, 3)"]},'
        '"n_ctx":2048,"rope":0.5,"stop":["a",null]},'
        '"seed":0,"temperature":0.0,"v":1}'
    )
    assert request_key("gguf", "m.gguf", request, options) == _sha(payload)
    assert canonical_json({"b": "é", "a": [1, None]}) == '{"a":[1,null],"b":"é"}'


def test_keys_are_listed_in_the_order_stored(tmp_path):
    with ReplyCache(tmp_path / "c.sqlite") as cache:
        for key in ("k2", "k1", "k3"):
            cache.put(key, ChatReply(text=key))
        assert cache.keys() == ["k2", "k1", "k3"]
        assert "k1" in cache and "k4" not in cache and len(cache) == 3


def test_the_cache_waits_thirty_seconds_for_another_writer_by_default(tmp_path):
    with ReplyCache(tmp_path / "c.sqlite") as cache:
        assert cache._conn.execute("PRAGMA busy_timeout").fetchone()[0] == 30_000
    with ReplyCache(tmp_path / "c.sqlite", timeout_s=2.5) as cache:
        assert cache._conn.execute("PRAGMA busy_timeout").fetchone()[0] == 2_500

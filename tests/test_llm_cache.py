"""The SQLite reply cache: keys, round trips, WAL, threads, and a killed writer."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
from fractions import Fraction
from pathlib import Path

import pytest

from ragmeter.llm.cache import ReplyCache, canonical_json, request_key
from ragmeter.llm.client import ChatReply, ChatRequest

SCHEMA = {
    "type": "object",
    "properties": {"grade": {"type": "string", "enum": ["correct", "wrong"]}},
    "required": ["grade"],
}
SRC = str(Path(__file__).resolve().parents[1] / "src")


def _reply(i: int = 0, **kw) -> ChatReply:
    base = dict(
        text=f'{{"grade": "correct", "n": {i}}}',
        parsed={"grade": "correct"},
        tokens_in=12,
        tokens_out=7,
        latency_s=0.25,
        backend="openai",
        model="m",
    )
    base.update(kw)
    return ChatReply(**base)


def test_round_trip_marks_hits_cached(tmp_path):
    path = tmp_path / "sub" / "cache.sqlite"
    key = request_key("openai", "m", ChatRequest(prompt="q"))
    with ReplyCache(path) as cache:
        assert cache.get(key) is None
        cache.put(key, _reply(1))
        assert key in cache and len(cache) == 1
    with ReplyCache(path) as cache:  # survives reopening
        hit = cache.get(key)
    assert hit == _reply(1, cached=True)


def test_error_text_and_unicode_round_trip(tmp_path):
    with ReplyCache(tmp_path / "c.sqlite") as cache:
        reply = _reply(text="réponse « ok » \n\t 🙂", parsed=None, error="unparseable: x")
        cache.put("k", reply)
        assert cache.get("k") == _reply(
            text="réponse « ok » \n\t 🙂", parsed=None, error="unparseable: x", cached=True
        )


def test_key_changes_with_every_parameter():
    base = dict(
        messages=[{"role": "system", "content": "s"}, {"role": "user", "content": "q"}],
        temperature=0.0,
        seed=0,
        max_tokens=64,
        json_schema=SCHEMA,
    )
    variants = {
        "messages": [{"role": "user", "content": "q"}],
        "temperature": 0.7,
        "seed": 1,
        "max_tokens": 65,
        "json_schema": {**SCHEMA, "required": []},
    }
    reference = request_key("openai", "m", ChatRequest(**base))
    keys = {reference}
    for name, value in variants.items():
        key = request_key("openai", "m", ChatRequest(**{**base, name: value}))
        assert key != reference, name
        keys.add(key)
    keys.add(request_key("ollama", "m", ChatRequest(**base)))
    keys.add(request_key("openai", "m2", ChatRequest(**base)))
    keys.add(request_key("openai", "m", ChatRequest(**{**base, "seed": None})))
    keys.add(request_key("openai", "m", ChatRequest(**{**base, "json_schema": None})))
    assert len(keys) == 1 + len(variants) + 4


def test_key_is_canonical():
    a = ChatRequest(prompt="q", system="s", json_schema={"type": "object", "required": ["x"]})
    b = ChatRequest(
        messages=[("system", "s"), {"content": "q", "role": "user"}],
        json_schema={"required": ["x"], "type": "object"},
        temperature=0,
    )
    assert request_key("gguf", "f.gguf:1", a) == request_key("gguf", "f.gguf:1", b)


def test_wal_mode_is_on(tmp_path):
    path = tmp_path / "c.sqlite"
    with ReplyCache(path) as cache:
        assert cache.journal_mode == "wal"
        cache.put("k", _reply())
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        conn.close()


def test_threads_share_one_cache(tmp_path):
    with ReplyCache(tmp_path / "c.sqlite") as cache:

        def work(t: int) -> None:
            for i in range(50):
                cache.put(f"{t}-{i}", _reply(i))
                assert cache.get(f"{t}-{i}") is not None

        threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        assert len(cache) == 400
        assert cache.get("7-49") == _reply(49, cached=True)


def test_two_processes_write_one_file(tmp_path):
    path = tmp_path / "c.sqlite"
    script = _writer_script(path, prefix="{prefix}", count=200, big=False)
    procs = [
        subprocess.Popen([sys.executable, "-c", script.replace("{prefix}", p)], env=_env())
        for p in ("a", "b")
    ]
    for p in procs:
        assert p.wait(timeout=600) == 0
    with ReplyCache(path) as cache:
        assert len(cache) == 400


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}


def _writer_script(path: Path, prefix: str, count: int, big: bool) -> str:
    return textwrap.dedent(
        f"""
        import sys
        from ragmeter.llm.cache import ReplyCache
        from ragmeter.llm.client import ChatReply
        cache = ReplyCache({str(path)!r})
        pad = "x" * (20000 if {big!r} else 10)
        for i in range({count}):
            text = '{{"grade": "correct", "i": %d, "pad": "%s"}}' % (i, pad)
            cache.put("{prefix}-%d" % i, ChatReply(text=text, tokens_in=i, tokens_out=len(pad)))
            print(i, flush=True)  # this entry is stored
        """
    )


@pytest.mark.parametrize("round_", range(3))
def test_writer_killed_mid_run_leaves_complete_entries(tmp_path, round_):
    path = tmp_path / "c.sqlite"
    # entries of ~20 KB span several pages, so a kill lands inside a write
    script = _writer_script(path, prefix=f"r{round_}", count=100_000, big=True)
    proc = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, env=_env()
    )
    stored = -1
    target = 20 + 37 * round_  # a different point each round, counted, not timed
    try:
        while stored < target:
            stored = int(proc.stdout.readline())
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        proc.stdout.close()
    assert proc.returncode == -signal.SIGKILL

    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        conn.close()
    with ReplyCache(path) as cache:
        keys = cache.keys()
        assert len(keys) >= stored + 1  # every entry acknowledged before the kill is there
        for key in keys:
            reply = cache.get(key)
            assert reply is not None and reply.cached
            body = json.loads(reply.text)
            assert body["pad"] == "x" * 20000
            assert reply.tokens_out == 20000
            assert key == f"r{round_}-{body['i']}"
        # entries were committed one by one in order: no gaps
        assert sorted(int(k.split("-")[1]) for k in keys) == list(range(len(keys)))
        # and the file still takes writes
        cache.put("after", ChatReply(text="ok"))
        assert cache.get("after").text == "ok"


# ``ragmeter.llm.cache``: the cache key is the SHA-256 of one exact canonical JSON text (so a
# cache written by an earlier version keeps being read), backend options included as JSON values
# or their repr; the keys listed in the order stored; a busy timeout of 30 s unless told
# otherwise.


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

"""The client layer end to end.

Two kinds of server: a scripted HTTP server in a thread (wire formats, retries,
malformed replies; always runs), and a real model, gemma-3 270M, both in
process (``gguf:``) and behind llama-cpp-python's OpenAI-compatible server
(skipped, with the reason, when llama-cpp-python or the model is missing).
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from llm_fixtures import (
    GRADE_CASES,
    GRADE_SCHEMA,
    Scripted,
    ScriptedServer,
    completion,
    free_port,
    gguf_model_path,
    grade_prompt,
    llama_cpp_missing,
    llama_server_missing,
    start_llama_server,
)

from ragmeter.errors import InputError, MissingExtra, RagmeterError
from ragmeter.llm import (
    BackendRejected,
    BackendUnavailable,
    ChatRequest,
    OllamaBackend,
    OpenAIBackend,
    ReplyCache,
    Runner,
    RunStats,
    make_backend,
    run_all,
    validate,
)
from ragmeter.llm.parse import parse_reply

FAST = dict(backoff_s=0.01)
# Tests that count calls must not see a retry: the server answers one request at a time,
# so on a loaded machine a queued request can wait longer than the default timeout.
PATIENT = dict(timeout_s=600.0)


@pytest.fixture
def scripted_server():
    server = ScriptedServer()
    try:
        yield server
    finally:
        server.close()


GRADES = {"correct", "partial", "wrong"}


def grade_requests(n: int | None = None, max_tokens: int = 32) -> list[ChatRequest]:
    cases = GRADE_CASES if n is None else [GRADE_CASES[i % len(GRADE_CASES)] for i in range(n)]
    return [
        ChatRequest(
            prompt=grade_prompt(*case) + ("" if i < len(GRADE_CASES) else f"\n(copy {i})"),
            json_schema=GRADE_SCHEMA,
            max_tokens=max_tokens,
        )
        for i, case in enumerate(cases)
    ]


def openai(server: ScriptedServer, **kw) -> OpenAIBackend:
    return OpenAIBackend("test-model", base_url=server.url + "/v1", **kw)


def assert_all_graded(replies, n):
    assert len(replies) == n
    for reply in replies:
        assert reply.error is None, (reply.error, reply.text)
        assert reply.parsed is not None
        assert validate(reply.parsed, GRADE_SCHEMA) == []
        assert reply.parsed["grade"] in GRADES


# --- spec strings and configuration ---------------------------------------------------


def test_make_backend_specs(monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", "0.0.0.0:9999")
    backend = make_backend("ollama:llama3.2:1b")
    assert (backend.kind, backend.model) == ("ollama", "llama3.2:1b")
    assert backend.base_url == "http://127.0.0.1:9999"
    monkeypatch.delenv("OLLAMA_HOST")
    assert make_backend("ollama:llama3.2").base_url == "http://127.0.0.1:11434"

    monkeypatch.setenv("OPENAI_BASE_URL", "http://env-two:8000")
    monkeypatch.setenv("RAGMETER_OPENAI_BASE_URL", "http://env-one:8000/")
    assert make_backend("openai:m").base_url == "http://env-one:8000/v1"
    monkeypatch.delenv("RAGMETER_OPENAI_BASE_URL")
    assert make_backend("openai:m").base_url == "http://env-two:8000/v1"
    assert make_backend("openai:m", base_url="http://h:1/api/v2").base_url == "http://h:1/api/v2"
    monkeypatch.delenv("OPENAI_BASE_URL")
    assert make_backend("openai:gpt-4o-mini").base_url == "https://api.openai.com/v1"

    for bad in ("llama3.2", "vertex:x", "ollama:", "openai:  "):
        with pytest.raises(InputError):
            make_backend(bad)
    with pytest.raises(InputError, match="not found"):
        make_backend("gguf:/no/such/model.gguf")
    with pytest.raises(InputError, match="base URL"):
        make_backend("openai:m", base_url="ftp://files.example/v1")
    with pytest.raises(InputError, match="unexpected keyword"):
        make_backend("openai:m", bogus=1)


def test_gguf_without_llama_cpp_names_the_extra(monkeypatch, tmp_path):
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # import fails
    with pytest.raises(MissingExtra, match=r"pip install 'ragmeter\[llm\]'"):
        make_backend(f"gguf:{model}")


def test_api_key_from_named_env_var(scripted_server, monkeypatch):
    monkeypatch.setenv("MY_LLM_KEY", "sk-test-123")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    run_all(openai(scripted_server, api_key_env="MY_LLM_KEY"), [ChatRequest(prompt="hi")])
    run_all(openai(scripted_server), [ChatRequest(prompt="hi again")])
    first, second = scripted_server.requests
    assert first["_headers"]["authorization"] == "Bearer sk-test-123"
    assert "authorization" not in second["_headers"]


# --- wire formats -----------------------------------------------------------------------


def test_openai_request_and_reply(scripted_server):
    scripted_server.default = Scripted(
        200, completion('{"grade": "partial", "reason": "half"}', 21, 9)
    )
    request = ChatRequest(
        prompt="grade", system="be strict", json_schema=GRADE_SCHEMA, max_tokens=40, seed=7
    )
    [reply] = run_all(openai(scripted_server), [request])
    assert reply.parsed == {"grade": "partial", "reason": "half"}
    assert (reply.tokens_in, reply.tokens_out) == (21, 9)
    assert (reply.backend, reply.model, reply.cached) == ("openai", "test-model", False)
    assert reply.latency_s > 0
    [sent] = scripted_server.requests
    assert sent["_path"] == "/v1/chat/completions"
    assert sent["messages"] == [
        {"role": "system", "content": "be strict"},
        {"role": "user", "content": "grade"},
    ]
    assert (sent["temperature"], sent["seed"], sent["max_tokens"]) == (0.0, 7, 40)
    fmt = sent["response_format"]
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"]["schema"] == GRADE_SCHEMA
    assert fmt["json_schema"]["strict"] is False  # no additionalProperties: false
    strict = {**GRADE_SCHEMA, "additionalProperties": False}
    run_all(openai(scripted_server), [ChatRequest(prompt="g", json_schema=strict)])
    assert scripted_server.requests[-1]["response_format"]["json_schema"]["strict"] is True


def test_structured_output_steps_down_when_refused(scripted_server):
    def answer(body):
        fmt = body.get("response_format") or {}
        if fmt.get("type") == "json_schema":
            return Scripted(400, {"error": {"message": "response_format json_schema unsupported"}})
        if "schema" in fmt:
            # what llama-cpp-python's server does with a response_format it cannot validate
            return Scripted(500, {"error": {"message": "validation error: response_format"}})
        return Scripted(200, completion('{"grade": "wrong", "reason": "r"}'))

    scripted_server.default = answer
    backend = openai(scripted_server)
    stats = RunStats()
    replies = run_all(backend, grade_requests(3), concurrency=1, stats=stats, **FAST)
    assert_all_graded(replies, 3)
    kinds = [(b.get("response_format") or {}).get("type") for b in scripted_server.requests]
    # the first request walks down the ladder; later ones start where it succeeded
    assert kinds == ["json_schema", "json_object", "json_object", "json_object", "json_object"]
    assert "schema" in scripted_server.requests[1]["response_format"]
    assert "schema" not in scripted_server.requests[2]["response_format"]
    assert stats.retries == 0


def test_other_400s_do_not_weaken_structured_output(scripted_server):
    scripted_server.queue = [Scripted(400, {"error": {"message": "prompt too long"}})] * 4
    backend = openai(scripted_server)
    [bad] = run_all(backend, [ChatRequest(prompt="x" * 50, json_schema=GRADE_SCHEMA)], **FAST)
    assert bad.error == "rejected: http 400: prompt too long"
    [good] = run_all(backend, grade_requests(1))
    assert good.ok
    assert scripted_server.requests[-1]["response_format"]["type"] == "json_schema"


def test_ollama_request_and_reply(scripted_server):
    scripted_server.default = Scripted(
        200,
        {
            "message": {"role": "assistant", "content": '{"grade": "correct", "reason": "ok"}'},
            "prompt_eval_count": 30,
            "eval_count": 12,
        },
    )
    backend = OllamaBackend("llama3.2", base_url=scripted_server.url, options={"num_ctx": 4096})
    [reply] = run_all(backend, grade_requests(1, max_tokens=33))
    assert reply.parsed == {"grade": "correct", "reason": "ok"}
    assert (reply.tokens_in, reply.tokens_out, reply.backend) == (30, 12, "ollama")
    [sent] = scripted_server.requests
    assert sent["_path"] == "/api/chat"
    assert sent["format"] == GRADE_SCHEMA
    assert sent["stream"] is False
    assert sent["options"] == {"temperature": 0.0, "seed": 0, "num_predict": 33, "num_ctx": 4096}


def test_ollama_unknown_model_says_how_to_pull(scripted_server):
    scripted_server.default = Scripted(404, {"error": "model 'llama9' not found"})
    with pytest.raises(BackendRejected, match="ollama pull llama9"):
        run_all(OllamaBackend("llama9", base_url=scripted_server.url), [ChatRequest(prompt="q")])


# --- faults -----------------------------------------------------------------------------


def test_500_then_200_is_retried_and_succeeds(scripted_server, tmp_path):
    scripted_server.queue = [
        Scripted(500, {"error": {"message": "boom"}}),
        Scripted(502, "<html>bad gateway</html>"),
    ]
    with ReplyCache(tmp_path / "c.sqlite") as cache:
        runner = Runner(openai(scripted_server), cache, retries=3, **FAST)
        [reply] = runner.run(grade_requests(1))
        assert reply.ok and reply.parsed["grade"] == "correct"
        assert (runner.stats.calls, runner.stats.retries, runner.stats.answered) == (3, 2, 1)
        assert len(cache) == 1


def test_429_waits_for_retry_after(scripted_server):
    scripted_server.queue = [Scripted(429, {"error": "slow down"}, headers={"Retry-After": "0.3"})]
    runner = Runner(openai(scripted_server), **FAST)
    started = time.monotonic()
    [reply] = runner.run([ChatRequest(prompt="q")])
    assert reply.ok and runner.stats.retries == 1
    assert time.monotonic() - started >= 0.3


def test_persistent_5xx_is_an_error_and_not_cached(scripted_server, tmp_path):
    scripted_server.default = Scripted(503, {"error": {"message": "loading model"}})
    with ReplyCache(tmp_path / "c.sqlite") as cache:
        runner = Runner(openai(scripted_server), cache, retries=2, **FAST)
        [reply] = runner.run([ChatRequest(prompt="q", json_schema=GRADE_SCHEMA)])
        assert reply.parsed is None
        assert reply.error.startswith("http 503 ") and "loading model" in reply.error
        assert "after 3 tries" in reply.error
        assert runner.stats.calls == 3 and runner.stats.errors == 1
        assert len(cache) == 0


def test_4xx_is_not_retried(scripted_server):
    scripted_server.default = Scripted(413, {"error": {"message": "payload too large"}})
    runner = Runner(openai(scripted_server), retries=3, **FAST)
    [reply] = runner.run([ChatRequest(prompt="q")])
    assert reply.error == "rejected: http 413: payload too large"
    assert runner.stats.calls == 1 and len(scripted_server.requests) == 1


def test_bad_key_stops_the_run(scripted_server):
    scripted_server.default = Scripted(401, {"error": {"message": "invalid api key"}})
    with pytest.raises(BackendRejected, match="OPENAI_API_KEY") as info:
        run_all(openai(scripted_server), [ChatRequest(prompt=f"q{i}") for i in range(5)])
    assert isinstance(info.value, RagmeterError)
    assert len(scripted_server.requests) <= 4  # stopped, not one call per request


def test_non_json_body_is_unparseable_not_a_crash(scripted_server, tmp_path):
    scripted_server.default = Scripted(200, "<html><body>Gateway says hi</body></html>")
    with ReplyCache(tmp_path / "c.sqlite") as cache:
        runner = Runner(openai(scripted_server), cache, **FAST)
        [reply] = runner.run(grade_requests(1))
        assert reply.parsed is None
        assert reply.error.startswith("unparseable: ") and "non-JSON body" in reply.error
        assert "Gateway says hi" in reply.text
        assert len(cache) == 0  # not a model answer: asked again next run
        assert runner.stats.calls == 1


@pytest.mark.parametrize(
    "body",
    [
        {"id": "x", "object": "chat.completion"},
        {"choices": []},
        {"choices": [{"message": {"content": 42}}]},
        ["not", "an", "object"],
    ],
)
def test_malformed_completion_is_unparseable(scripted_server, body):
    scripted_server.default = Scripted(200, body)
    [reply] = run_all(openai(scripted_server), grade_requests(1), **FAST)
    assert reply.parsed is None and reply.error.startswith("unparseable: ")


def test_garbage_content_is_unparseable_and_cached_with_its_text(scripted_server, tmp_path):
    garbage = "Honestly, I think this answer is quite good overall!"
    scripted_server.default = Scripted(200, completion(garbage))
    with ReplyCache(tmp_path / "c.sqlite") as cache:
        first = Runner(openai(scripted_server), cache)
        [reply] = first.run(grade_requests(1))
        assert (reply.parsed, reply.text) == (None, garbage)
        assert reply.error.startswith("unparseable: no JSON object")
        again = Runner(openai(scripted_server), cache)
        [cached] = again.run(grade_requests(1))
        assert cached.cached and cached.text == garbage and cached.error == reply.error
        assert (again.stats.calls, again.stats.cache_hits) == (0, 1)


def test_timeout_is_retried_then_recorded(scripted_server):
    scripted_server.default = Scripted(
        200, completion('{"grade": "wrong", "reason": "r"}'), delay_s=1
    )
    runner = Runner(openai(scripted_server), timeout_s=0.2, retries=2, **FAST)
    [reply] = runner.run(grade_requests(1))
    assert reply.parsed is None
    assert reply.error.startswith("timeout: no reply from ") and "after 3 tries" in reply.error
    assert runner.stats.calls == 3 and runner.stats.retries == 2


def test_unreachable_server_raises_backend_unavailable(tmp_path):
    port = free_port()  # nothing listens here
    backend = OpenAIBackend("m", base_url=f"http://127.0.0.1:{port}/v1")
    with ReplyCache(tmp_path / "c.sqlite") as cache, pytest.raises(BackendUnavailable) as info:
        run_all(backend, [ChatRequest(prompt=f"q{i}") for i in range(8)], cache, retries=2, **FAST)
    message = str(info.value)
    assert f"http://127.0.0.1:{port}/v1" in message and "unreachable after 3 tries" in message
    assert "RAGMETER_OPENAI_BASE_URL" in message and "rerun to resume" in message
    assert "\n" not in message


def test_order_kept_and_duplicates_sent_once(scripted_server):
    def echo(body):
        n = int(body["messages"][-1]["content"].split()[-1])
        reply = json.dumps({"grade": "correct", "reason": str(n)})
        return Scripted(200, completion(reply), delay_s=0.002 * ((n * 7) % 11))

    scripted_server.default = echo
    requests = [ChatRequest(prompt=f"n {i % 20}", json_schema=GRADE_SCHEMA) for i in range(30)]
    runner = Runner(openai(scripted_server), concurrency=6)
    seen = []
    runner.progress = lambda done, total, reply: seen.append((done, total))
    replies = runner.run(requests)
    assert [r.parsed["reason"] for r in replies] == [str(i % 20) for i in range(30)]
    assert runner.stats.calls == 20 and len(scripted_server.requests) == 20
    assert seen == [(i, 30) for i in range(1, 31)]


def test_interrupted_run_resumes_without_repeating_calls(scripted_server, tmp_path):
    scripted_server.default = lambda body: Scripted(
        200, completion('{"grade": "partial", "reason": "r"}'), delay_s=0.05
    )
    requests = grade_requests(12)

    class Stop(Exception):
        pass

    def stop_after_4(done, total, reply):
        if done == 4:
            raise Stop

    with ReplyCache(tmp_path / "c.sqlite") as cache:
        first = Runner(openai(scripted_server), cache, concurrency=3, progress=stop_after_4)
        with pytest.raises(Stop):
            first.run(requests)
        assert 4 <= len(cache) == first.stats.calls < 12  # in-flight calls finished and saved
        second = Runner(openai(scripted_server), cache, concurrency=3)
        assert_all_graded(second.run(requests), 12)
        assert first.stats.calls + second.stats.calls == 12
        assert second.stats.cache_hits == first.stats.calls
        assert len(scripted_server.requests) == 12


# --- the real model, in process -----------------------------------------------------------

needs_llama = pytest.mark.skipif(llama_cpp_missing() is not None, reason=str(llama_cpp_missing()))
needs_server = pytest.mark.skipif(
    llama_server_missing() is not None, reason=str(llama_server_missing())
)


@pytest.fixture(scope="module")
def gguf_backend():
    backend = make_backend(
        f"gguf:{gguf_model_path()}", n_ctx=2048, n_threads=2, chat_format="gemma"
    )
    yield backend
    backend.close()


@needs_llama
def test_gguf_grades_parse_and_rerun_costs_nothing(gguf_backend, tmp_path):
    requests = grade_requests()
    with ReplyCache(tmp_path / "c.sqlite") as cache:
        first = Runner(gguf_backend, cache)
        replies = first.run(requests)
        assert_all_graded(replies, len(requests))
        assert first.stats.calls == len(requests) and first.stats.tokens_out > 0
        assert all(r.backend == "gguf" and r.tokens_in > 0 and not r.cached for r in replies)
        second = Runner(gguf_backend, cache)
        again = second.run(requests)
        assert (second.stats.calls, second.stats.cache_hits) == (0, len(requests))
        assert [r.text for r in again] == [r.text for r in replies]
        assert all(r.cached for r in again)


@needs_llama
def test_gguf_without_schema_returns_plain_text(gguf_backend):
    [reply] = run_all(gguf_backend, [ChatRequest(prompt="Name one colour.", max_tokens=8)])
    assert reply.ok and reply.parsed is None and reply.text.strip()


# --- the real model behind an OpenAI-compatible server -----------------------------------


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory):
    if llama_server_missing():
        pytest.skip(llama_server_missing())
    server = start_llama_server(gguf_model_path(), tmp_path_factory.mktemp("llama-server"))
    yield server
    server.stop()


def server_backend(server) -> OpenAIBackend:
    return OpenAIBackend("gemma3-270m", base_url=server.base_url)


@needs_server
def test_server_grades_parse_and_rerun_costs_nothing(llama_server, tmp_path):
    requests = grade_requests()
    served = llama_server.completions_served()
    with ReplyCache(tmp_path / "c.sqlite") as cache:
        first = Runner(server_backend(llama_server), cache, **PATIENT)
        assert_all_graded(first.run(requests), len(requests))
        assert first.stats.calls == len(requests)
        assert llama_server.wait_served(served + len(requests)) == served + len(requests)
        second = Runner(server_backend(llama_server), cache, **PATIENT)
        assert_all_graded(second.run(requests), len(requests))
        assert (second.stats.calls, second.stats.cache_hits) == (0, len(requests))
        assert llama_server.wait_served(served + len(requests)) == served + len(requests)


@needs_server
def test_server_run_interrupted_then_resumed_answers_each_once(llama_server, tmp_path):
    requests = grade_requests(5, max_tokens=32)

    def stop_after_2(done, total, reply):
        if done == 2:
            raise KeyboardInterrupt

    served = llama_server.completions_served()
    with ReplyCache(tmp_path / "c.sqlite") as cache:
        first = Runner(
            server_backend(llama_server), cache, concurrency=2, progress=stop_after_2, **PATIENT
        )
        with pytest.raises(KeyboardInterrupt):
            first.run(requests)
        assert 2 <= len(cache) == first.stats.calls < len(requests)
        second = Runner(server_backend(llama_server), cache, concurrency=2, **PATIENT)
        assert_all_graded(second.run(requests), len(requests))
        assert first.stats.calls + second.stats.calls == len(requests)
        assert llama_server.wait_served(served + len(requests)) == served + len(requests)


RUNNER_SCRIPT = """
import sys
from ragmeter.llm import OpenAIBackend, ReplyCache, run_all
sys.path.insert(0, {tests!r})
from test_llm_integration import grade_requests

cache = ReplyCache({cache!r})
backend = OpenAIBackend("gemma3-270m", base_url={url!r})
run_all(backend, grade_requests(4, max_tokens=32), cache, concurrency=1,
        progress=lambda done, total, reply: print("done", done, flush=True))
print("finished", flush=True)
"""


@needs_server
def test_server_runner_process_killed_then_resumed(llama_server, tmp_path):
    cache_path = tmp_path / "c.sqlite"
    script = RUNNER_SCRIPT.format(
        tests=str(Path(__file__).parent), cache=str(cache_path), url=llama_server.base_url
    )
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        lines = [proc.stdout.readline().strip() for _ in range(2)]
        assert lines == ["done 1", "done 2"]
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        proc.stdout.close()
    with ReplyCache(cache_path) as cache:
        saved = len(cache)
        assert 2 <= saved < 4
        resumed = Runner(server_backend(llama_server), cache, **PATIENT)
        assert_all_graded(resumed.run(grade_requests(4, max_tokens=32)), 4)
        assert resumed.stats.calls == 4 - saved and resumed.stats.cache_hits == saved


@needs_server
def test_server_tiny_timeout_is_retried_then_recorded(llama_server):
    runner = Runner(server_backend(llama_server), timeout_s=0.001, retries=1, **FAST)
    [reply] = runner.run([ChatRequest(prompt="Say hi.", max_tokens=4, json_schema=GRADE_SCHEMA)])
    assert reply.parsed is None and reply.error.startswith("timeout: ")
    assert "after 2 tries" in reply.error
    assert (runner.stats.calls, runner.stats.retries, runner.stats.answered) == (2, 1, 0)


@needs_server
def test_server_stopped_mid_run_raises_and_keeps_finished_replies(tmp_path):
    requests = grade_requests(4, max_tokens=32)
    server = start_llama_server(gguf_model_path(), tmp_path)
    try:
        done_texts = []

        def stop_server_after_2(done, total, reply):
            done_texts.append(reply.text)
            if done == 2:
                server.kill()  # a crash: the call in flight fails too

        with ReplyCache(tmp_path / "c.sqlite") as cache:
            runner = Runner(
                server_backend(server),
                cache,
                concurrency=1,
                retries=2,
                progress=stop_server_after_2,
                **FAST,
                **PATIENT,  # no timeout before the kill: the retries counted are the kill's
            )
            with pytest.raises(BackendUnavailable) as info:
                runner.run(requests)
            assert server.base_url in str(info.value)
            assert runner.stats.answered == 2 and len(cache) == 2
            assert runner.stats.retries == 2  # the third request was tried 3 times

            # the cache key leaves out the URL: a server on another port resumes the run
            restarted = start_llama_server(gguf_model_path(), tmp_path)
            try:
                resumed = Runner(server_backend(restarted), cache, **PATIENT)
                replies = resumed.run(requests)
            finally:
                restarted.stop()
            assert_all_graded(replies, 4)
            assert (resumed.stats.calls, resumed.stats.cache_hits) == (2, 2)
            assert [r.text for r in replies[:2]] == done_texts
    finally:
        server.stop()


def test_cached_replies_are_read_again_with_the_current_parser(scripted_server, tmp_path):
    # a reply stored as unparseable is re-read on every hit, so parser fixes reach old caches
    scripted_server.default = Scripted(200, completion('{"grade": "wrong", "reason": "r"}'))
    with ReplyCache(tmp_path / "c.sqlite") as cache:
        [reply] = run_all(openai(scripted_server), grade_requests(1), cache)
        key = cache.keys()[0]
        cache.put(key, dataclasses.replace(reply, parsed=None, error="old"))
        [hit] = run_all(openai(scripted_server), grade_requests(1), cache)
    assert hit.cached and hit.parsed == parse_reply(reply.text, GRADE_SCHEMA)[0] and hit.ok

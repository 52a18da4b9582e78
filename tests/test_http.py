"""The one HTTP layer: Retry-After, base URLs, post_json, and that chat and
embeddings both go through it."""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragmeter import http as rhttp
from ragmeter.errors import (
    BadServerReply,
    RagmeterError,
    ServerError,
    ServerRejected,
    ServerUnavailable,
)
from ragmeter.llm import BackendRejected, BackendUnavailable, ChatRequest, OllamaBackend
from ragmeter.llm.client import TransientError
from ragmeter.retrieval.remote import OllamaEncoder, OpenAIEncoder, RemoteError

NOW = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


# --- Retry-After --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("7", 7.0),
        (" 1.5 ", 1.5),
        ("0", 0.0),
        ("-3", 0.0),  # never negative
        ("3600", rhttp.MAX_RETRY_AFTER_S),  # capped
        (format_datetime(NOW + timedelta(seconds=20), usegmt=True), 20.0),
        (format_datetime(NOW - timedelta(seconds=20), usegmt=True), 0.0),  # in the past
        (format_datetime(NOW + timedelta(hours=2), usegmt=True), rhttp.MAX_RETRY_AFTER_S),
        ("Fri, 02 Jan 2026 03:04:15 GMT", 10.0),
        ("soon", None),
        ("", None),
        ("nan", None),
        (None, None),
    ],
)
def test_retry_after_reads_seconds_and_http_dates(value, expected):
    assert rhttp.retry_after(value, now=NOW) == expected


def test_retry_after_takes_a_response_or_headers_and_a_cap():
    response = httpx.Response(429, headers={"Retry-After": "12"})
    assert rhttp.retry_after(response) == 12.0
    assert rhttp.retry_after(response.headers) == 12.0
    assert rhttp.retry_after(response, cap=5) == 5.0
    assert rhttp.retry_after(httpx.Response(429)) is None


@given(st.floats(min_value=-1e6, max_value=1e6, allow_nan=False))
def test_retry_after_is_always_within_zero_and_the_cap(seconds):
    got = rhttp.retry_after(repr(seconds))
    assert 0.0 <= got <= rhttp.MAX_RETRY_AFTER_S
    assert got == min(max(seconds, 0.0), rhttp.MAX_RETRY_AFTER_S)


# --- base URLs ----------------------------------------------------------------------------

BASE_URL_CASES = [
    # (function, argument, environment, expected)
    ("ollama", None, {}, "http://127.0.0.1:11434"),
    ("ollama", None, {"OLLAMA_HOST": "0.0.0.0:9999"}, "http://127.0.0.1:9999"),
    ("ollama", None, {"OLLAMA_HOST": "http://0.0.0.0:9999/"}, "http://127.0.0.1:9999"),
    ("ollama", None, {"OLLAMA_HOST": "[::]:9999"}, "http://127.0.0.1:9999"),
    ("ollama", None, {"OLLAMA_HOST": "gpu-box:11434"}, "http://gpu-box:11434"),
    ("ollama", "http://h:1/", {"OLLAMA_HOST": "0.0.0.0:2"}, "http://h:1"),
    ("openai", None, {}, "https://api.openai.com/v1"),
    ("openai", None, {"OPENAI_BASE_URL": "http://env-two:8000"}, "http://env-two:8000/v1"),
    (
        "openai",
        None,
        {"OPENAI_BASE_URL": "http://two:8000", "RAGMETER_OPENAI_BASE_URL": "http://one:8000/"},
        "http://one:8000/v1",
    ),
    ("openai", None, {"OPENAI_BASE_URL": "0.0.0.0:8080"}, "http://127.0.0.1:8080/v1"),
    ("openai", None, {"OPENAI_BASE_URL": "http://h:9/custom/v1/"}, "http://h:9/custom/v1"),
    ("openai", "http://h:1/api/v2", {"OPENAI_BASE_URL": "http://x:1"}, "http://h:1/api/v2"),
]


@pytest.mark.parametrize(("which", "arg", "env", "expected"), BASE_URL_CASES)
def test_base_url_resolution(monkeypatch, which, arg, env, expected):
    for name in ("OLLAMA_HOST", "OPENAI_BASE_URL", "RAGMETER_OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    resolve = rhttp.ollama_base_url if which == "ollama" else rhttp.openai_base_url
    assert resolve(arg) == expected


@pytest.mark.parametrize(("which", "arg", "env", "expected"), BASE_URL_CASES)
def test_chat_and_embeddings_resolve_base_urls_alike(monkeypatch, which, arg, env, expected):
    for name in ("OLLAMA_HOST", "OPENAI_BASE_URL", "RAGMETER_OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    if which == "ollama":
        chat, embed = OllamaBackend("m", base_url=arg), OllamaEncoder("m", base_url=arg)
    else:
        from ragmeter.llm import OpenAIBackend

        chat, embed = OpenAIBackend("m", base_url=arg), OpenAIEncoder("m", base_url=arg)
    try:
        assert chat.base_url == embed.base_url == expected
    finally:
        chat.close()
        embed.close()


# --- post_json ----------------------------------------------------------------------------


def scripted_client(*responses: httpx.Response | Exception, **options) -> tuple[httpx.Client, list]:
    """A client whose requests get ``responses`` in order (an exception is raised);
    ``options`` go to ``httpx.Client``. Returns the client and the requests seen."""
    seen: list[httpx.Request] = []
    queue = list(responses)

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        item = queue.pop(0)
        if isinstance(item, Exception):
            raise item
        return item

    return httpx.Client(transport=httpx.MockTransport(handler), **options), seen


def test_post_json_retries_then_returns_and_obeys_retry_after():
    client, seen = scripted_client(
        httpx.Response(503, text="busy", headers={"Retry-After": "2"}),
        httpx.ConnectError("refused"),
        httpx.Response(200, json={"ok": 1}),
    )
    waits: list[float] = []
    got = rhttp.post_json(
        client, "http://h/x", {"a": 1}, retries=3, backoff=0.5, sleep=waits.append
    )
    assert got == {"ok": 1}
    assert waits == [2.0, 1.0]  # the server's hint, then backoff * 2**1
    assert [json.loads(r.content) for r in seen] == [{"a": 1}] * 3


def test_post_json_gives_up_with_server_unavailable():
    client, seen = scripted_client(*[httpx.Response(500, json={"error": "boom"})] * 3)
    with pytest.raises(ServerUnavailable, match=r"failed after 3 attempts: HTTP 500") as info:
        rhttp.post_json(client, "http://h/x", {}, retries=2, sleep=lambda s: None)
    exc = info.value
    assert (exc.cause, exc.status, exc.detail, exc.url) == ("http", 500, "boom", "http://h/x")
    assert len(seen) == 3
    client, _ = scripted_client(httpx.ReadTimeout("slow"))
    with pytest.raises(ServerUnavailable, match="timed out after 4") as info:
        rhttp.post_json(client, "http://h/x", {}, retries=0, timeout=4)
    assert info.value.cause == "timeout"


def test_post_json_rejects_4xx_at_once_and_flags_bad_json():
    client, seen = scripted_client(httpx.Response(401, json={"error": {"message": "bad key"}}))
    with pytest.raises(ServerRejected, match="refused the request .*HTTP 401") as info:
        rhttp.post_json(client, "http://h/x", {}, retries=3, sleep=lambda s: None)
    assert (info.value.status, info.value.detail, len(seen)) == (401, "bad key", 1)
    client, _ = scripted_client(httpx.Response(200, text="<html>"))
    with pytest.raises(BadServerReply, match="invalid JSON") as info:
        rhttp.post_json(client, "http://h/x", {})
    assert info.value.body == "<html>"


def test_old_error_names_are_the_new_classes():
    assert BackendUnavailable is ServerUnavailable
    assert BackendRejected is ServerRejected
    assert RemoteError is ServerError
    for cls in (ServerUnavailable, ServerRejected, BadServerReply):
        assert issubclass(cls, ServerError) and issubclass(cls, RagmeterError)


# --- both callers, against one small server on 127.0.0.1 --------------------------------


class TinyServer:
    """Answers every POST with the next scripted (status, headers, body); records paths."""

    def __init__(self, script: list[tuple[int, dict[str, str], object]]) -> None:
        self.script = list(script)
        self.paths: list[str] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(length)
                outer.paths.append(self.path)
                status, headers, body = outer.script.pop(0)
                data = json.dumps(body).encode()
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def tiny():
    servers: list[TinyServer] = []

    def make(script):
        server = TinyServer(script)
        servers.append(server)
        return server

    yield make
    for server in servers:
        server.close()


def test_chat_and_embeddings_reach_ollama_host_0000_and_read_retry_after_alike(tiny, monkeypatch):
    far = format_datetime(datetime.now(UTC) + timedelta(hours=1), usegmt=True)
    server = tiny(
        [
            (429, {"Retry-After": far}, {"error": "slow down"}),
            (200, {}, {"message": {"content": "hi"}, "eval_count": 1}),
            (429, {"Retry-After": far}, {"error": "slow down"}),
            (200, {}, {"embeddings": [[1.0, 0.0]]}),
        ]
    )
    monkeypatch.setenv("OLLAMA_HOST", f"0.0.0.0:{server.port}")
    chat = OllamaBackend("m")
    try:
        with pytest.raises(TransientError) as info:
            chat.complete(ChatRequest(prompt="hello"), timeout_s=5)
        # an HTTP date, capped at one minute: the shared parser (the chat one read neither)
        assert info.value.retry_after == rhttp.MAX_RETRY_AFTER_S
        assert chat.complete(ChatRequest(prompt="hello"), timeout_s=5).text == "hi"
    finally:
        chat.close()

    waits: list[float] = []
    monkeypatch.setattr(rhttp.time, "sleep", waits.append)
    encoder = OllamaEncoder("m", retries=1)
    try:
        assert encoder.encode(["a"]).tolist() == [[1.0, 0.0]]
    finally:
        encoder.close()
    assert waits == [rhttp.MAX_RETRY_AFTER_S]
    assert server.paths == ["/api/chat", "/api/chat", "/api/embed", "/api/embed"]


def test_chat_maps_http_failures_like_embeddings(tiny, monkeypatch):
    server = tiny(
        [
            (404, {}, {"error": "model 'm' not found"}),
            (400, {}, {"error": "prompt too long"}),
        ]
    )
    chat = OllamaBackend("m", base_url=f"http://127.0.0.1:{server.port}")
    try:
        with pytest.raises(ServerRejected, match="ollama pull m"):
            chat.complete(ChatRequest(prompt="x"), timeout_s=5)
        from ragmeter.llm.client import RequestRejected

        with pytest.raises(RequestRejected, match="rejected: http 400: prompt too long"):
            chat.complete(ChatRequest(prompt="x"), timeout_s=5)
    finally:
        chat.close()
    closed = OllamaBackend("m", base_url="http://127.0.0.1:9")  # nothing listens on port 9
    try:
        with pytest.raises(TransientError, match="cannot reach http://127.0.0.1:9/api/chat"):
            closed.complete(ChatRequest(prompt="x"), timeout_s=5)
    finally:
        closed.close()


# ``ragmeter.http``: what callers of the one HTTP layer rely on beyond the happy path.  A
# server's ``Retry-After`` is obeyed for at most one minute; 425 (Too Early) is retried like
# 408/409/429, a neighbouring 4xx is refused at once; an error text is cut to its limit with an
# ellipsis; the default backoff is half a second, doubled each try; a negative ``retries`` still
# sends the request once; an HTTP date without a zone is read as UTC; a client's own timeout is
# the one used when a call gives none.


def test_retry_after_is_obeyed_for_at_most_one_minute():
    assert rhttp.MAX_RETRY_AFTER_S == 60.0
    assert rhttp.retry_after("3600") == 60.0
    assert rhttp.retry_after("61") == 60.0
    assert rhttp.retry_after("59") == 59.0


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (400, False),
        (404, False),
        (407, False),
        (408, True),
        (409, True),
        (410, False),
        (424, False),
        (425, True),
        (426, False),
        (428, False),
        (429, True),
        (430, False),
        (499, False),
        (500, True),
        (599, True),
        (600, False),
    ],
)
def test_retryable_statuses(status, expected):
    assert rhttp.retryable(status) is expected


def test_a_425_is_retried_and_a_424_refused_at_once():
    client, seen = scripted_client(httpx.Response(425, text="early"), httpx.Response(200, json=[1]))
    assert rhttp.post_json(client, "http://h/x", {}, retries=1, sleep=lambda s: None) == [1]
    assert len(seen) == 2
    client, seen = scripted_client(httpx.Response(424, text="failed dependency"))
    with pytest.raises(ServerRejected):
        rhttp.post_json(client, "http://h/x", {}, retries=1, sleep=lambda s: None)
    assert len(seen) == 1


def test_one_line_cuts_long_text_to_the_limit_with_an_ellipsis():
    assert rhttp.one_line("a  b\n\tc") == "a b c"
    assert rhttp.one_line("x" * 200) == "x" * 200  # exactly the limit: kept whole
    cut = rhttp.one_line("0123456789" * 30)
    assert len(cut) == 200 and cut == ("0123456789" * 20)[:197] + "..."
    assert rhttp.one_line("abcdefghij", limit=8) == "abcde..."


def test_an_http_date_without_a_zone_is_read_as_utc():
    from datetime import UTC, datetime

    now = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    # "-0000" means "no zone information": parsedate_to_datetime gives a naive datetime
    assert rhttp.retry_after("Fri, 02 Jan 2026 03:04:15 -0000", now=now) == 10.0


def test_the_default_backoff_is_half_a_second_doubled_each_try():
    client, _ = scripted_client(
        httpx.Response(503, text="busy"),
        httpx.Response(503, text="busy"),
        httpx.Response(503, text="busy"),
        httpx.Response(200, json={"ok": True}),
    )
    waits: list[float] = []
    assert rhttp.post_json(client, "http://h/x", {}, sleep=waits.append) == {"ok": True}
    assert waits == [0.5, 1.0, 2.0]


@pytest.mark.parametrize("retries", [-1, -5])
def test_negative_retries_still_send_the_request_once(retries):
    client, seen = scripted_client(httpx.Response(200, json={"ok": 1}))
    assert rhttp.post_json(client, "http://h/x", {"a": 1}, retries=retries) == {"ok": 1}
    assert [json.loads(r.content) for r in seen] == [{"a": 1}]
    client, seen = scripted_client(httpx.Response(503, text="busy"))
    with pytest.raises(ServerUnavailable, match="failed after 1 attempt: HTTP 503"):
        rhttp.post_json(client, "http://h/x", {}, retries=retries, sleep=lambda s: None)
    assert len(seen) == 1


def test_a_timeout_names_the_clients_own_limit_when_the_call_gives_none():
    client, _ = scripted_client(httpx.ReadTimeout("slow"), timeout=httpx.Timeout(7.0))
    with pytest.raises(ServerUnavailable, match=r"timed out after 7\.0s"):
        rhttp.post_json(client, "http://h/x", {}, retries=0)


def test_the_timeout_of_a_call_is_its_own_else_the_clients():
    with httpx.Client(timeout=httpx.Timeout(5.0, connect=2.0)) as client:
        assert rhttp._timeout_of(client, 9.0) == 9.0
        assert rhttp._timeout_of(client, None) == 5.0
    with httpx.Client(timeout=httpx.Timeout(None, connect=2.0)) as client:
        assert rhttp._timeout_of(client, None) == 2.0
        assert rhttp._timeout_of(client, 0.5) == 0.5

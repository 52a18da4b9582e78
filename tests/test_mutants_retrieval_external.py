"""``ragmeter.retrieval.external``: the HTTP retriever's settings reach the requests.

The retriever waits its own ``backoff`` between tries (not the HTTP layer's default) and
gives up on a silent server after its default 30 seconds.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from ragmeter.errors import ServerUnavailable
from ragmeter.retrieval.base import Hit
from ragmeter.retrieval.external import HttpRetriever


class Server:
    """Answers POSTs with the scripted (status, body) in turn, the last one repeating."""

    def __init__(self, replies):
        self.replies = list(replies)
        self.requests: list[dict] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                length = int(self.headers.get("content-length", 0))
                outer.requests.append(json.loads(self.rfile.read(length)))
                status, body = outer.replies[min(len(outer.requests), len(outer.replies)) - 1]
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/search"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def waits(monkeypatch):
    """The retriever's waits between tries, recorded instead of slept."""
    caller = threading.current_thread()
    real_sleep = time.sleep
    seen: list[float] = []

    def sleep(seconds):
        if threading.current_thread() is caller:
            seen.append(seconds)
        else:
            real_sleep(seconds)

    monkeypatch.setattr(time, "sleep", sleep)
    return seen


@pytest.mark.parametrize("backoff", [0.01, 2.0])
def test_the_retriever_waits_its_own_backoff_between_tries(backoff, waits):
    ok = {"results": [{"doc": "a.md", "start": 0, "end": 4, "score": 1.0}]}
    with Server([(503, {"error": "busy"}), (502, {}), (200, ok)]) as server:
        r = HttpRetriever(url=server.url, retries=2, backoff=backoff)
        assert r.search([("q1", "what?")], k=3) == [[Hit("a.md", 0, 4, 1.0)]]
        r.close()
    assert len(server.requests) == 3
    assert waits == [backoff, backoff * 2]


def test_a_silent_server_is_given_thirty_seconds_by_default(monkeypatch):
    r = HttpRetriever(url="http://127.0.0.1:9/search", retries=0)  # never contacted

    def silent(url, **kwargs):
        raise httpx.ReadTimeout("no answer", request=httpx.Request("POST", url))

    monkeypatch.setattr(r._client, "post", silent)
    with pytest.raises(ServerUnavailable, match=r"timed out after 30\.0s") as info:
        r.search([("q1", "what?")], k=3)
    assert info.value.cause == "timeout"
    r.close()

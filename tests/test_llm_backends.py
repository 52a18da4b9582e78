"""``ragmeter.llm.backends``: each HTTP backend makes one try per call (the runner
retries), what Ollama and OpenAI-compatible servers are sent (no streaming, the seed,
``keep_alive`` only when set, a schema named after its title) and how their replies
read (missing counts are zero, a reply without text is unparseable), the structured-
output step-down on 400 and 422, the gguf backend's parameters and counts (a stand-in
``llama_cpp``, no model loaded), and ``KEY=VALUE`` options and their lower bounds."""

from __future__ import annotations

import sys
import types

import pytest
from llm_fixtures import Scripted, ScriptedServer, completion

from ragmeter.errors import InputError
from ragmeter.llm import ChatRequest, OllamaBackend, OpenAIBackend, make_backend
from ragmeter.llm.backends import GGUFBackend, parse_options
from ragmeter.llm.client import BadResponse, TransientError

SCHEMA = {
    "type": "object",
    "properties": {"grade": {"type": "string"}},
    "required": ["grade"],
}


@pytest.fixture
def server():
    scripted = ScriptedServer()
    try:
        yield scripted
    finally:
        scripted.close()


def ollama_reply(content, **counts) -> Scripted:
    return Scripted(200, {"message": {"role": "assistant", "content": content}, **counts})


# --- HTTP: one try per call --------------------------------------------------------------


def test_a_failed_call_is_tried_once_leaving_retries_to_the_runner(server):
    server.queue = [Scripted(503, {"error": {"message": "loading"}})]
    backend = OpenAIBackend("m", base_url=server.url + "/v1")
    with backend, pytest.raises(TransientError) as info:
        backend.complete(ChatRequest(prompt="q"), 30.0)
    assert (info.value.kind, info.value.status) == ("http", 503)
    assert len(server.requests) == 1  # the next call would be answered: none was made


# --- Ollama ------------------------------------------------------------------------------


def test_ollama_sends_keep_alive_only_when_set(server):
    server.default = ollama_reply("hi", prompt_eval_count=4, eval_count=2)
    with OllamaBackend("m", base_url=server.url) as plain:
        assert plain.complete(ChatRequest(prompt="q"), 30.0) == ("hi", 4, 2)
    with OllamaBackend("m", base_url=server.url, keep_alive="5m") as kept:
        kept.complete(ChatRequest(prompt="q"), 30.0)
    first, second = server.requests
    assert "keep_alive" not in first and second["keep_alive"] == "5m"
    assert first["options"] == {"temperature": 0.0, "seed": 0, "num_predict": 512}
    assert first["stream"] is False and "format" not in first


def test_every_http_backend_sends_top_p_only_when_a_request_sets_it(server):
    server.default = ollama_reply("hi")
    with OllamaBackend("m", base_url=server.url) as ollama:
        ollama.complete(ChatRequest(prompt="q", temperature=0.8, top_p=0.9, seed=7), 30.0)
        ollama.complete(ChatRequest(prompt="q"), 30.0)
    sampled, plain = server.requests
    assert sampled["options"] == {"temperature": 0.8, "seed": 7, "top_p": 0.9, "num_predict": 512}
    assert "top_p" not in plain["options"]
    server.requests.clear()
    server.default = Scripted(200, completion("hi"))
    with OpenAIBackend("m", base_url=server.url + "/v1") as openai:
        openai.complete(ChatRequest(prompt="q", top_p=0.5), 30.0)
        openai.complete(ChatRequest(prompt="q"), 30.0)
    sampled, plain = server.requests
    assert sampled["top_p"] == 0.5 and "top_p" not in plain


def test_ollama_reply_without_counts_counts_zero(server):
    server.default = ollama_reply("hi")
    with OllamaBackend("m", base_url=server.url) as backend:
        assert backend.complete(ChatRequest(prompt="q"), 30.0) == ("hi", 0, 0)


@pytest.mark.parametrize(
    "body",
    [{"message": {"role": "assistant"}}, {"message": "hi"}, {"done": True}],
)
def test_ollama_reply_without_text_is_unparseable(server, body):
    server.default = Scripted(200, body)
    with OllamaBackend("m", base_url=server.url) as backend:
        with pytest.raises(BadResponse, match="Ollama reply has no message.content"):
            backend.complete(ChatRequest(prompt="q"), 30.0)


def test_ollama_steps_down_from_schema_to_json_to_plain_on_400_and_422(server):
    def answer(body):
        fmt = body.get("format")
        if isinstance(fmt, dict):
            return Scripted(400, {"error": "format schema not supported"})
        if fmt == "json":
            return Scripted(422, {"error": "format json not supported"})
        return ollama_reply('{"grade": "correct"}')

    server.default = answer
    with OllamaBackend("m", base_url=server.url) as backend:
        request = ChatRequest(prompt="q", json_schema=SCHEMA)
        assert backend.complete(request, 30.0).text == '{"grade": "correct"}'
        backend.complete(request, 30.0)  # starts where the first one succeeded
    formats = [b.get("format") for b in server.requests]
    assert formats == [SCHEMA, "json", None, None]


# --- OpenAI-compatible -------------------------------------------------------------------


def test_openai_body_does_not_stream_and_carries_the_seed_when_set(server):
    with OpenAIBackend("m", base_url=server.url + "/v1") as backend:
        backend.complete(ChatRequest(prompt="q", seed=3), 30.0)
        backend.complete(ChatRequest(prompt="q", seed=None), 30.0)
    first, second = server.requests
    assert first["stream"] is False and first["seed"] == 3
    assert "seed" not in second and "response_format" not in first


@pytest.mark.parametrize(
    ("title", "name"),
    [
        (None, "reply"),
        ("Grade the answer!", "Grade_the_answer"),
        ("???", "reply"),
        ("x" * 80, "x" * 64),
    ],
)
def test_the_json_schema_is_named_after_its_title(server, title, name):
    schema = dict(SCHEMA) if title is None else {**SCHEMA, "title": title}
    with OpenAIBackend("m", base_url=server.url + "/v1") as backend:
        backend.complete(ChatRequest(prompt="q", json_schema=schema), 30.0)
    [sent] = server.requests
    assert sent["response_format"]["json_schema"]["name"] == name


def test_openai_reply_with_null_content_is_empty_text(server):
    body = completion("x", 6, 1)
    body["choices"][0]["message"]["content"] = None
    server.default = Scripted(200, body)
    with OpenAIBackend("m", base_url=server.url + "/v1") as backend:
        assert backend.complete(ChatRequest(prompt="q"), 30.0) == ("", 6, 1)


# --- llama.cpp in process, through a stand-in llama_cpp --------------------------------------


class FakeLlama:
    made: list[FakeLlama] = []

    def __init__(self, **params):
        self.params = params
        self.calls: list[dict] = []
        self.closed = False
        FakeLlama.made.append(self)

    def create_chat_completion(self, **kwargs):
        self.calls.append(kwargs)
        return {
            "choices": [{"message": {"role": "assistant", "content": '{"grade": "wrong"}'}}],
            "usage": {"prompt_tokens": 7, "completion_tokens": 3},
        }

    def close(self):
        self.closed = True


@pytest.fixture
def fake_llama(monkeypatch, tmp_path):
    package = types.ModuleType("llama_cpp")
    lib = types.ModuleType("llama_cpp.llama_cpp")
    lib.llama_model_params = type("llama_model_params", (), {"_fields_": []})
    lib.llama_model_default_params = lambda: lib.llama_model_params()
    package.Llama = FakeLlama
    package.llama_cpp = lib
    monkeypatch.setitem(sys.modules, "llama_cpp", package)
    monkeypatch.setitem(sys.modules, "llama_cpp.llama_cpp", lib)
    monkeypatch.setitem(sys.modules, "llama_cpp._utils", None)
    FakeLlama.made = []
    model = tmp_path / "tiny.gguf"
    model.write_bytes(b"GGUF" + b"\0" * 12)
    return model


def test_gguf_loads_with_the_given_parameters_and_keys_only_what_changes_replies(fake_llama):
    backend = GGUFBackend(fake_llama, n_ctx=1024, n_threads=2, chat_format="gemma", top_k=5)
    [llama] = FakeLlama.made
    assert llama.params == {
        "model_path": str(fake_llama),
        "n_ctx": 1024,
        "n_threads": 2,
        "n_gpu_layers": 0,
        "chat_format": "gemma",
        "verbose": False,
        "top_k": 5,
    }
    assert backend.cache_options == {"n_ctx": 1024, "chat_format": "gemma", "top_k": 5}
    assert (backend.model, backend.cache_model) == ("tiny.gguf", "tiny.gguf:16")
    with backend as entered:
        assert entered is backend
    assert llama.closed


def test_gguf_asks_for_the_schema_and_counts_the_tokens(fake_llama):
    with GGUFBackend(fake_llama) as backend:
        request = ChatRequest(prompt="q", json_schema=SCHEMA, max_tokens=8, seed=4)
        assert backend.complete(request, 1.0) == ('{"grade": "wrong"}', 7, 3)
    [llama] = FakeLlama.made
    [call] = llama.calls
    assert call["response_format"] == {"type": "json_object", "schema": SCHEMA}
    assert (call["max_tokens"], call["seed"], call["temperature"]) == (8, 4, 0.0)
    assert "top_p" not in call  # the model's own unless a request sets it
    with GGUFBackend(fake_llama) as backend:
        backend.complete(ChatRequest(prompt="q", temperature=0.8, top_p=0.95, seed=2), 1.0)
    assert FakeLlama.made[-1].calls[-1]["top_p"] == 0.95


# --- options -----------------------------------------------------------------------------


def test_options_are_read_from_key_value_strings():
    assert parse_options(None) == {}
    assert parse_options(["n_ctx=4096", " chat_format = gemma", "flag=true"]) == {
        "n_ctx": 4096,
        "chat_format": " gemma",
        "flag": True,
    }
    given = {"n_ctx": 1}
    assert parse_options(given) == given and parse_options(given) is not given
    for bad in ("n_ctx", "=4096", " =1"):
        with pytest.raises(InputError, match="write KEY=VALUE"):
            parse_options([bad])


def test_context_and_concurrency_must_be_at_least_one(fake_llama):
    with make_backend("ollama:m", max_concurrency=1) as backend:
        assert backend.max_concurrency == 1
    with pytest.raises(InputError, match="option max_concurrency must be at least 1, got 0"):
        make_backend("ollama:m", max_concurrency=0)
    with pytest.raises(InputError, match="option n_ctx must be at least 1, got 0"):
        make_backend(f"gguf:{fake_llama}", n_ctx=0)
    with make_backend(f"gguf:{fake_llama}", n_ctx=1) as backend:
        assert backend.cache_options["n_ctx"] == 1

"""CallSettings and open_backend: one value for how to call a model, one place that
opens and closes the backend and the reply cache; the CLI builds it the same way
for every command."""

from __future__ import annotations

import json

import pytest
from conftest import EXAMPLE
from typer.testing import CliRunner

import ragmeter.engine as engine_module
import ragmeter.llm.settings as settings_module
from ragmeter.cli import app
from ragmeter.errors import InputError
from ragmeter.llm import (
    CallSettings,
    ChatRequest,
    Completion,
    ReplyCache,
    call_settings,
    model_label,
    open_backend,
)


class Recording:
    """A backend that answers with a fixed JSON object and records what happens to it."""

    kind = "rec"
    base_url = None
    max_concurrency = None

    def __init__(self, model: str = "m", reply: str = '{"question": "What is described?"}'):
        self.model = model
        self.reply = reply
        self.options: dict = {}
        self.closed = False
        self.calls = 0

    def complete(self, request, timeout_s):
        self.calls += 1
        return Completion(self.reply, 3, 2)

    def close(self):
        self.closed = True


@pytest.fixture
def made(monkeypatch):
    """Backends make_backend built, by spec."""
    built: dict[str, Recording] = {}

    def fake(spec, **options):
        if spec.startswith("bad:"):
            raise InputError(f"unknown model spec {spec!r}")
        backend = Recording(spec.partition(":")[2])
        backend.options = options
        built[spec] = backend
        return backend

    monkeypatch.setattr(settings_module, "make_backend", fake)
    return built


def test_open_backend_closes_what_it_opened(made, tmp_path):
    settings = CallSettings("ollama:x", options=["n_ctx=2048", "mode=fast"], cache=tmp_path / "c")
    with open_backend(settings) as calls:
        assert calls.backend is made["ollama:x"] and calls.backend.options == {
            "n_ctx": 2048,
            "mode": "fast",
        }
        replies = calls.run([ChatRequest(prompt="hi")])
        assert replies[0].text.startswith("{")
        cache = calls.cache
    assert made["ollama:x"].closed
    with pytest.raises(Exception, match="closed"):
        len(cache)
    with ReplyCache(tmp_path / "c") as reopened:  # the reply was committed
        assert len(reopened) == 1


def test_open_backend_leaves_the_callers_objects_open(tmp_path):
    backend = Recording()
    with ReplyCache(tmp_path / "c") as cache:
        with open_backend(CallSettings(backend, cache=cache)) as calls:
            assert calls.backend is backend and calls.cache is cache
            calls.run([ChatRequest(prompt="hi")])
        assert not backend.closed and len(cache) == 1


def test_a_bad_spec_leaves_no_cache_file(made, tmp_path):
    with pytest.raises(InputError), open_backend(CallSettings("bad:x", cache=tmp_path / "c")):
        pass
    assert not (tmp_path / "c").exists()


def test_the_backend_is_closed_when_the_run_fails(made, tmp_path):
    with pytest.raises(RuntimeError), open_backend(CallSettings("ollama:y")):
        raise RuntimeError("stop")
    assert made["ollama:y"].closed


def test_settings_concurrency_timeout_and_retries_reach_the_runner():
    calls = settings_module.ModelCalls(
        CallSettings(Recording(), concurrency=2, timeout_s=9.5, retries=0), Recording(), None
    )
    runner = calls.runner(seed=3)
    assert (runner.concurrency, runner.timeout_s, runner.retries) == (2, 9.5, 0)


def test_call_settings_fills_and_overrides():
    base = call_settings("ollama:a", max_tokens=64, backend_options={"k": 1}, cache_path="c")
    assert (base.max_tokens, base.options, base.cache) == (64, {"k": 1}, "c")
    same = call_settings(base, concurrency=None, timeout_s=None)
    assert same is base
    assert call_settings(base, retries=0).retries == 0 and base.retries == 3
    with pytest.raises(TypeError, match="unknown model-call setting 'temperature'"):
        call_settings("ollama:a", temperature=0.5)
    for bad in ({"concurrency": 0}, {"timeout_s": 0}, {"max_tokens": 0}, {"retries": -1}):
        with pytest.raises(InputError):
            CallSettings("ollama:a", **bad)
    with pytest.raises(InputError, match="KEY=VALUE"):
        CallSettings("ollama:a", options=["n_ctx"])
    with pytest.raises(Exception, match="cannot assign"):
        base.max_tokens = 1  # frozen


def test_one_model_label():
    from ragmeter.answers.run import backend_label
    from ragmeter.questions.generate import model_label as questions_label

    assert backend_label is model_label and questions_label is model_label
    assert model_label(" gguf:/models/x/gemma.gguf ") == "gguf:gemma.gguf"
    assert model_label("ollama:llama3.2:1b") == "ollama:llama3.2:1b"
    assert model_label(Recording("m2")) == "rec:m2"
    assert model_label(CallSettings("gguf:/a/b.gguf")) == "gguf:b.gguf"
    assert CallSettings(" openai:gpt-4o-mini ").label == "openai:gpt-4o-mini"


# --- the CLI builds CallSettings the same way for every command ----------------------------

runner = CliRunner()


def test_questions_generate_takes_option_keeps_model_option_hidden_and_seeds_1(made, tmp_path):
    out = tmp_path / "gen.jsonl"
    args = ["questions", "generate", str(EXAMPLE / "posts"), "-m", "ollama:g", "-o", str(out)]
    result = runner.invoke(app, [*args, "--sample", "2", "--option", "n_ctx=512"])
    assert result.exit_code == 0, result.output
    assert made["ollama:g"].options == {"n_ctx": 512}
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [q["seed"] for q in lines] == [1, 1]  # the one seed default
    assert (tmp_path / "gen.llm-cache.sqlite").is_file()

    result = runner.invoke(app, [*args, "--sample", "2", "--model-option", "n_ctx=256"])
    assert result.exit_code == 0, result.output
    assert made["ollama:g"].options == {"n_ctx": 256}
    assert "deprecated" in result.output

    help_text = runner.invoke(app, ["questions", "generate", "--help"]).output
    assert "--option" in help_text and "--model-option" not in help_text


def test_questions_audit_takes_option(made, tmp_path):
    testset = tmp_path / "q.jsonl"
    testset.write_text((EXAMPLE / "questions.jsonl").read_text().splitlines()[0] + "\n")
    made_reply = '{"verdict": "answers", "understandable": "yes"}'
    settings_module_fake = settings_module.make_backend

    def fake(spec, **options):
        backend = settings_module_fake(spec, **options)
        backend.reply = made_reply
        return backend

    settings_module.make_backend = fake
    try:
        result = runner.invoke(
            app,
            [
                "questions",
                "audit",
                str(testset),
                "--corpus",
                str(EXAMPLE / "posts"),
                "--model",
                "ollama:judge",
                "--option",
                "num_ctx=1024",
                "--rounds",
                "200",
            ],
        )
    finally:
        settings_module.make_backend = settings_module_fake
    assert result.exit_code == 0, result.output
    assert made["ollama:judge"].options == {"num_ctx": 1024}
    assert made["ollama:judge"].closed and made["ollama:judge"].calls == 2
    summary = json.loads((tmp_path / "audit-summary.json").read_text())
    assert summary["llm"] == "ollama:judge"


# ``ragmeter.llm.settings``: on the ray engine the model calls go to an actor pool made with
# these settings (spec, options, concurrency as the number of actors, timeout and retries), each
# actor a :class:`ChatActor` that answers one request per call and returns its counts; a stand-
# in engine runs the pool here. ``spec`` cannot be changed through :func:`call_settings`.


class LocalPool:
    """Stands in for the Ray engine: makes the actors here and records how."""

    def __init__(self, address):
        self.address = address
        self.pools: list[dict] = []

    def chat_calls(self, spec, options, requests, *, actor, actors, timeout_s, retries):
        self.pools.append(
            {
                "spec": spec,
                "options": options,
                "actors": actors,
                "timeout_s": timeout_s,
                "retries": retries,
                "actor": actor,
            }
        )
        worker = actor(spec, dict(options), timeout_s, retries)
        for i, request in enumerate(requests):
            yield worker.call(i, request)


@pytest.fixture
def ray_here(monkeypatch):
    made: list[LocalPool] = []

    def make_engine(kind, address):
        assert kind == "ray"
        made.append(LocalPool(address))
        return made[-1]

    monkeypatch.setattr(engine_module, "make_engine", make_engine)
    monkeypatch.setattr(settings_module, "make_backend", lambda spec, **o: Recording(spec))
    return made


def test_calls_on_the_ray_engine_go_to_a_pool_made_with_these_settings(ray_here):
    settings = CallSettings(
        "ollama:m",
        options={"n_ctx": 512},
        concurrency=3,
        timeout_s=7.5,
        retries=1,
        engine="ray",
        engine_address="ray://head:10001",
    )
    with open_backend(settings) as calls:
        replies = calls.run([ChatRequest(prompt="a"), ChatRequest(prompt="b")])
    [pool_engine] = ray_here
    assert pool_engine.address == "ray://head:10001"
    [pool] = pool_engine.pools
    assert (pool["spec"], pool["options"], pool["actors"]) == ("ollama:m", {"n_ctx": 512}, 3)
    assert (pool["timeout_s"], pool["retries"]) == (7.5, 1)
    assert pool["actor"] is settings_module.ChatActor
    assert [r.text for r in replies] == ['{"question": "What is described?"}'] * 2
    assert all(r.ok and (r.tokens_in, r.tokens_out) == (3, 2) for r in replies)


def test_a_chat_actor_answers_one_request_per_call_with_its_counts(ray_here):
    actor = settings_module.ChatActor("ollama:m", {}, 5.0, 0)
    assert (actor.runner.concurrency, actor.runner.timeout_s, actor.runner.retries) == (1, 5.0, 0)
    for index in (4, 9):
        i, reply, counts = actor.call(index, ChatRequest(prompt=f"q{index}"))
        assert i == index and reply.ok and reply.tokens_in == 3
        assert counts == {
            "calls": 1,
            "answered": 1,
            "cache_hits": 0,
            "retries": 0,
            "errors": 0,
            "tokens_in": 3,
            "tokens_out": 2,
        }  # each call's own counts, not a running total
    assert actor.backend.calls == 2


def test_the_spec_is_not_a_setting_to_change():
    base = CallSettings("ollama:a")
    with pytest.raises(TypeError, match="unknown model-call setting 'spec'"):
        call_settings(base, spec="ollama:b")
    assert call_settings(base, max_tokens=9).spec == "ollama:a"


def test_tokens_is_max_tokens_or_the_routes_default():
    assert CallSettings("ollama:a").tokens(256) == 256
    assert CallSettings("ollama:a", max_tokens=64).tokens(256) == 64

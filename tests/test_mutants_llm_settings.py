"""``ragmeter.llm.settings``: on the ray engine the model calls go to an actor pool made
with these settings (spec, options, concurrency as the number of actors, timeout and
retries), each actor a :class:`ChatActor` that answers one request per call and returns
its counts; a stand-in engine runs the pool here. ``spec`` cannot be changed through
:func:`call_settings`."""

from __future__ import annotations

import pytest
from test_llm_settings import Recording

import ragmeter.engine as engine_module
import ragmeter.llm.settings as settings_module
from ragmeter.llm import CallSettings, ChatRequest, call_settings, open_backend


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

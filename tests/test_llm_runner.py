"""``ragmeter.llm.runner``: the retry backoff (``backoff_s * 2**attempt``, capped, times a
seeded jitter of up to 25%, never shorter than the server's Retry-After; ``run_all``
passes its seed on), the counts a run starts from, a negative retry count refused, no
call retried once the server refused the run, a remote sent the first request of each
group and made to answer every one, and ``chat`` returning its one reply."""

from __future__ import annotations

import random
import threading

import pytest

from ragmeter.llm.client import (
    BackendRejected,
    ChatReply,
    ChatRequest,
    Completion,
    TransientError,
)
from ragmeter.llm.runner import Runner, RunStats, chat, run_all


class Idle:
    kind = "idle"
    model = "m"
    base_url = None
    max_concurrency = None

    def complete(self, request, timeout_s):  # pragma: no cover - never called here
        raise AssertionError("no call expected")

    def close(self) -> None:
        pass


def test_backoff_doubles_with_a_seeded_jitter_of_up_to_a_quarter():
    runner = Runner(Idle(), backoff_s=0.5, max_backoff_s=30.0, seed=7)
    rng = random.Random(7)
    for attempt in range(8):
        expected = min(30.0, 0.5 * 2**attempt) * (1.0 + 0.25 * rng.random())
        assert runner._delay(attempt, None) == pytest.approx(expected, rel=1e-12)
    # the server's Retry-After is a floor, itself capped
    again = Runner(Idle(), backoff_s=0.5, max_backoff_s=30.0, seed=7)
    assert again._delay(0, 12.0) == 12.0 and again._delay(0, 99.0) == 30.0


def test_a_run_starts_from_zero_counts_and_reads_back_plainly():
    stats = RunStats()
    assert repr(stats) == (
        "RunStats(calls=0, answered=0, cache_hits=0, retries=0, errors=0, "
        "tokens_in=0, tokens_out=0)"
    )
    stats.add(errors=1, calls=2)
    assert (stats.errors, stats.calls) == (1, 2)


def test_retries_must_be_zero_or_more():
    assert Runner(Idle(), retries=0).retries == 0
    for bad in (-1, -2):
        with pytest.raises(ValueError, match="retries must be 0 or more"):
            Runner(Idle(), retries=bad)


class Flaky(Idle):
    """Fails ``failures`` times with HTTP 503, then answers."""

    def __init__(self, failures: int):
        self.failures = failures
        self.calls = 0

    def complete(self, request, timeout_s):
        self.calls += 1
        if self.calls <= self.failures:
            raise TransientError("http", "http 503: busy", status=503)
        return Completion("ok", 2, 1)


def test_run_all_seeds_the_retry_jitter(monkeypatch):
    waits: list[float] = []
    delay = Runner._delay

    def recorded(self, attempt, retry_after):
        waits.append(delay(self, attempt, retry_after))
        return 0.0  # no real wait

    monkeypatch.setattr(Runner, "_delay", recorded)
    [reply] = run_all(Flaky(2), [ChatRequest(prompt="q")], backoff_s=0.5, seed=11)
    assert reply.ok and reply.text == "ok"
    rng = random.Random(11)
    expected = [0.5 * 2**attempt * (1.0 + 0.25 * rng.random()) for attempt in range(2)]
    assert waits == pytest.approx(expected, rel=1e-12)


def test_once_the_server_refuses_no_other_call_is_retried():
    called = threading.Event()

    class Refusing(Idle):
        calls = {"busy": 0, "refused": 0}

        def complete(self, request, timeout_s):
            if request.prompt == "busy":
                self.calls["busy"] += 1
                called.set()
                raise TransientError("http", "http 503: busy", status=503)
            called.wait(30)  # the other call has been made and waits for its retry
            self.calls["refused"] += 1
            raise BackendRejected("server refused: HTTP 401")

    backend = Refusing()
    runner = Runner(backend, concurrency=2, retries=5, backoff_s=60.0)
    with pytest.raises(BackendRejected):
        runner.run([ChatRequest(prompt="refused"), ChatRequest(prompt="busy")])
    assert backend.calls == {"busy": 1, "refused": 1}  # the retry waiting was dropped


def test_a_remote_is_sent_the_first_request_of_each_group_and_must_answer_all():
    sent: list[list[ChatRequest]] = []

    def remote(requests):
        sent.append(list(requests))
        for i, request in enumerate(requests):
            yield i, ChatReply(text=request.prompt or "messages"), {"calls": 1, "answered": 1}

    first = ChatRequest(prompt="q", system="s")
    same = ChatRequest(messages=[("system", "s"), ("user", "q")])  # the same key
    other = ChatRequest(prompt="r")
    replies = Runner(Idle(), remote=remote).run([first, same, other])
    assert sent == [[first, other]]
    assert [r.text for r in replies] == ["q", "q", "r"]

    def short(requests):
        yield 0, ChatReply(text="only one"), {"calls": 1, "answered": 1}

    with pytest.raises(RuntimeError, match=r"no reply for requests \[1\]"):
        Runner(Idle(), remote=short).run([ChatRequest(prompt="a"), ChatRequest(prompt="b")])


def test_chat_is_one_request_through_a_run():
    backend = Flaky(1)
    reply = chat(backend, ChatRequest(prompt="q"), backoff_s=0.0)
    assert (reply.text, reply.tokens_in, reply.tokens_out, reply.ok) == ("ok", 2, 1, True)
    assert backend.calls == 2

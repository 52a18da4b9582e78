"""``ragmeter.llm.runner``: the retry backoff (``backoff_s * 2**attempt``, capped, times a
seeded jitter of up to 25%, never shorter than the server's Retry-After), the counts a
run starts from, and a negative retry count refused."""

from __future__ import annotations

import random

import pytest

from ragmeter.llm.runner import Runner, RunStats


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

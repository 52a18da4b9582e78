"""``ragmeter.http``: what callers of the one HTTP layer rely on beyond the happy path.

A server's ``Retry-After`` is obeyed for at most one minute; 425 (Too Early) is retried
like 408/409/429, a neighbouring 4xx is refused at once; an error text is cut to its limit
with an ellipsis; the default backoff is half a second, doubled each try; a negative
``retries`` still sends the request once; an HTTP date without a zone is read as UTC; a
client's own timeout is the one used when a call gives none.
"""

from __future__ import annotations

import json

import httpx
import pytest
from test_http import scripted_client

from ragmeter import http as rhttp
from ragmeter.errors import ServerRejected, ServerUnavailable


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

"""``ragmeter.retrieval.external``: the HTTP retriever's settings reach the requests.

The retriever waits its own ``backoff`` between tries (not the HTTP layer's default) and
gives up on a silent server after its default 30 seconds.
"""

from __future__ import annotations

import httpx
import pytest
from test_external import Stub

from ragmeter.errors import ServerUnavailable
from ragmeter.retrieval.base import Hit
from ragmeter.retrieval.external import HttpRetriever


@pytest.mark.parametrize("backoff", [0.01, 2.0])
def test_the_retriever_waits_its_own_backoff_between_tries(backoff, waits):
    ok = {"results": [{"doc": "a.md", "start": 0, "end": 4, "score": 1.0}]}
    with Stub([(503, {"error": "busy"}), (502, {}), (200, ok)]) as server:
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

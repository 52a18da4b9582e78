"""The one HTTP layer for model and embedding servers.

Chat backends (:mod:`ragmeter.llm.backends`), embedding encoders
(:mod:`ragmeter.retrieval.remote`) and the HTTP retriever
(:mod:`ragmeter.retrieval.external`) all go through here:

- :func:`post_json` POSTs a JSON body and returns the decoded answer, retrying
  timeouts, dropped connections and HTTP 408/409/425/429/5xx with exponential
  backoff (or the server's ``Retry-After``); failures raise
  :class:`~ragmeter.errors.ServerUnavailable`,
  :class:`~ragmeter.errors.ServerRejected` or
  :class:`~ragmeter.errors.BadServerReply`, each carrying the details a caller
  needs (:attr:`HTTPFailure.cause`, ``status``, ``retry_after``, ``detail``).
- :func:`retry_after` reads a ``Retry-After`` header (seconds or an HTTP date),
  capped at :data:`MAX_RETRY_AFTER_S`.
- :func:`ollama_base_url` and :func:`openai_base_url` resolve a server's base URL
  from an argument or the environment, the same way for chat and embeddings.
"""

from __future__ import annotations

import email.utils
import os
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

import httpx

from ragmeter.errors import BadServerReply, InputError, ServerRejected, ServerUnavailable

__all__ = [
    "MAX_RETRY_AFTER_S",
    "OLLAMA_DEFAULT_URL",
    "OPENAI_DEFAULT_URL",
    "error_text",
    "normalize_url",
    "ollama_base_url",
    "one_line",
    "openai_base_url",
    "post_json",
    "retry_after",
    "retryable",
]

OLLAMA_DEFAULT_URL = "http://127.0.0.1:11434"
OPENAI_DEFAULT_URL = "https://api.openai.com/v1"
MAX_RETRY_AFTER_S = 60.0
"""The longest a server's ``Retry-After`` is obeyed, in seconds."""

_RETRY_4XX = frozenset({408, 409, 425, 429})


# --- small helpers ------------------------------------------------------------------------


def one_line(text: Any, limit: int = 200) -> str:
    """``text`` on one line, cut to ``limit`` characters."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def retryable(status: int) -> bool:
    """Whether an HTTP status may pass on retry: 408, 409, 425, 429 and every 5xx."""
    return status in _RETRY_4XX or 500 <= status < 600


def retry_after(
    value: httpx.Response | Mapping[str, str] | str | None,
    *,
    cap: float = MAX_RETRY_AFTER_S,
    now: datetime | None = None,
) -> float | None:
    """Seconds to wait from a ``Retry-After`` value, between 0 and ``cap``.

    ``value`` is a response, its headers or the header's text: delay-seconds
    (``"7"``, ``"1.5"``) or an HTTP date (``"Wed, 21 Oct 2015 07:28:00 GMT"``,
    counted from ``now``, default the current time). ``None`` when absent or
    unreadable.
    """
    if isinstance(value, httpx.Response):
        value = value.headers.get("retry-after")
    elif value is not None and not isinstance(value, str):
        value = value.get("retry-after")
    if value is None:
        return None
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - (now or datetime.now(UTC))).total_seconds()
    if seconds != seconds:  # NaN
        return None
    return min(max(seconds, 0.0), cap)


def error_text(response: httpx.Response, limit: int = 300) -> str:
    """The server's own error message, on one line (``error``/``detail``/``message``
    of a JSON body, else the body)."""
    try:
        data = response.json()
    except ValueError:
        data = None
    message: Any = None
    if isinstance(data, dict):
        message = data.get("error") or data.get("detail") or data.get("message")
        if isinstance(message, dict):
            message = message.get("message") or message
    if message is None:
        message = response.text
    return " ".join(str(message).split())[:limit] or response.reason_phrase


# --- base URLs ----------------------------------------------------------------------------


def normalize_url(url: str) -> str:
    """``http://`` added when no scheme is given; a wildcard listen address
    (``0.0.0.0``, ``::``) rewritten to ``127.0.0.1``; no trailing slash."""
    url = url.strip()
    if "://" not in url:
        url = "http://" + url
    try:
        host = urlsplit(url).hostname or "127.0.0.1"
    except ValueError as exc:
        raise InputError(f"bad server URL {url!r}: {exc}") from None
    if host in ("0.0.0.0", "::"):
        url = url.replace(f"[{host}]" if host == "::" else host, "127.0.0.1", 1)
    return url.rstrip("/")


def ollama_base_url(base_url: str | None = None) -> str:
    """Ollama's base URL: ``base_url``, else ``$OLLAMA_HOST``, else
    ``http://127.0.0.1:11434`` (through :func:`normalize_url`, so
    ``OLLAMA_HOST=0.0.0.0:PORT`` means this machine)."""
    return normalize_url(base_url or os.environ.get("OLLAMA_HOST") or OLLAMA_DEFAULT_URL)


def openai_base_url(base_url: str | None = None) -> str:
    """An OpenAI-compatible base URL: ``base_url``, ``$RAGMETER_OPENAI_BASE_URL``,
    ``$OPENAI_BASE_URL`` or ``https://api.openai.com/v1`` (through
    :func:`normalize_url`); ``/v1`` is added to a URL that has no path."""
    url = normalize_url(
        base_url
        or os.environ.get("RAGMETER_OPENAI_BASE_URL")
        or os.environ.get("OPENAI_BASE_URL")
        or OPENAI_DEFAULT_URL
    )
    if urlsplit(url).path in ("", "/"):
        url += "/v1"
    return url


# --- POST JSON ----------------------------------------------------------------------------


def _timeout_of(client: httpx.Client, timeout: float | None) -> float | None:
    """The seconds a call waits: its own ``timeout``, else the client's."""
    if timeout is not None:
        return timeout
    return client.timeout.read or client.timeout.connect


def post_json(
    client: httpx.Client,
    url: str,
    payload: dict[str, Any],
    *,
    retries: int = 3,
    backoff: float = 0.5,
    timeout: float | None = None,
    what: str = "server",
    sleep: Callable[[float], None] | None = None,
) -> Any:
    """POST ``payload`` as JSON to ``url``; return the decoded JSON answer.

    Timeouts, connection errors and :func:`retryable` statuses are tried again
    up to ``retries`` times, waiting ``backoff * 2**attempt`` seconds or the
    server's :func:`retry_after` between tries. ``timeout`` (seconds) overrides
    the client's for this call; ``sleep`` (default :func:`time.sleep`) waits.
    Raises, naming ``what`` and ``url`` (the
    error's attributes say more, see :class:`~ragmeter.errors.ServerError`):

    - :class:`~ragmeter.errors.ServerUnavailable` when every try failed
      (``cause`` ``"timeout"``, ``"connect"``, or ``"http"`` with ``status``
      and ``retry_after``);
    - :class:`~ragmeter.errors.ServerRejected` at once on any other status of
      400 or more (``status``; ``detail`` is the server's message);
    - :class:`~ragmeter.errors.BadServerReply` when the body is not JSON.
    """
    attempts = max(int(retries), 0) + 1
    kwargs: dict[str, Any] = {"json": payload}
    if timeout is not None:
        kwargs["timeout"] = timeout
    last = ""
    failure: dict[str, Any] = {}
    for attempt in range(attempts):
        wait = backoff * (2**attempt)
        try:
            resp = client.post(url, **kwargs)
        except httpx.TimeoutException:
            last = f"timed out after {_timeout_of(client, timeout)}s"
            failure = {"cause": "timeout"}
        except httpx.ConnectError as exc:
            last = f"cannot connect ({one_line(exc, 80) or 'connection refused'})"
            failure = {"cause": "connect", "detail": str(exc) or type(exc).__name__}
        except httpx.TransportError as exc:
            last = f"{type(exc).__name__}: {one_line(exc, 80)}"
            failure = {"cause": "connect", "detail": str(exc) or type(exc).__name__}
        else:
            status = resp.status_code
            if status < 400:
                try:
                    return resp.json()
                except ValueError:
                    raise BadServerReply(
                        f"{what} at {url} answered HTTP {status} with invalid JSON: "
                        f"{one_line(resp.text, 80)!r}",
                        url=url,
                        status=status,
                        body=resp.text[:2000],
                    ) from None
            last = f"HTTP {status}: {one_line(resp.text, 120)}"
            if not retryable(status):
                raise ServerRejected(
                    f"{what} at {url} refused the request ({last})",
                    url=url,
                    status=status,
                    detail=error_text(resp),
                )
            hinted = retry_after(resp)
            failure = {
                "cause": "http",
                "status": status,
                "retry_after": hinted,
                "detail": error_text(resp),
            }
            wait = hinted if hinted is not None else wait
        if attempt + 1 < attempts:
            (sleep or time.sleep)(wait)
    tries = f"{attempts} attempt" + ("s" if attempts != 1 else "")
    raise ServerUnavailable(f"{what} at {url} failed after {tries}: {last}", url=url, **failure)

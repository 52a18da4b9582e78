"""Errors that carry a one-line, user-facing message.

Every error ragmeter raises on purpose is a :class:`RagmeterError`; the CLI
prints its message on one line and exits with status 2. One class per event a
caller can act on::

    RagmeterError
    ├── InputError (ValueError)   bad input: fix the file, line, question id or setting named
    ├── MissingExtra              an optional extra is not installed: run the pip command named
    ├── CacheError                a cache file cannot be opened or written: check the path
    ├── OutputError               an output could not be written (full disk, size limit,
    │                             quota): nothing was half-written; make room, run again
    └── ServerError               a model or embedding server failed
        ├── ServerUnavailable     it cannot be reached, or keeps failing after every retry:
        │                         start it (or point ragmeter at it) and rerun to resume
        ├── ServerRejected        it refuses the requests (key, model name, endpoint): fix
        │                         the setting named
        └── BadServerReply        it answered, but not with something usable

Older names stay importable where they were defined: ``BackendUnavailable``
(:class:`ServerUnavailable`) and ``BackendRejected`` (:class:`ServerRejected`)
from :mod:`ragmeter.llm`, ``RemoteError`` (:class:`ServerError`) from
:mod:`ragmeter.retrieval.remote`, ``CacheError`` from
:mod:`ragmeter.retrieval.embedcache` and ``ReportDependencyError``
(:class:`MissingExtra`) from :mod:`ragmeter.report.html`.

A chat backend signals a single failed call to the runner with the exceptions
in :mod:`ragmeter.llm.client` (``TransientError``, ``RequestRejected``,
``BadResponse``); those never reach the caller: the runner retries, records the
reply as unscored, or raises one of the errors above.
"""

from __future__ import annotations

__all__ = [
    "BadServerReply",
    "CacheError",
    "InputError",
    "MissingExtra",
    "OutputError",
    "RagmeterError",
    "ServerError",
    "ServerRejected",
    "ServerUnavailable",
    "did_you_mean",
]


def did_you_mean(word: object, choices: object) -> str:
    """`` (did you mean 'recall@5'?)`` for the choice closest to ``word``, ``""`` when
    none is close: every message that refuses a name chosen from a list says it so."""
    import difflib

    names = [str(c) for c in choices]  # type: ignore[attr-defined]
    close = difflib.get_close_matches(str(word), names, n=1, cutoff=0.5)
    if not close:  # a case or separator slip ("BM-25", "bm_25") is close too
        folded = {"".join(ch for ch in n.casefold() if ch.isalnum()): n for n in names}
        key = "".join(ch for ch in str(word).casefold() if ch.isalnum())
        close = [folded[key]] if key in folded else []
    return f" (did you mean {close[0]!r}?)" if close else ""


class RagmeterError(Exception):
    """Base class for every error ragmeter raises on purpose."""


class InputError(RagmeterError, ValueError):
    """Bad input: a file, line, question id or setting the user must fix.

    The message names where the problem is (file and line, or question id)
    and what to do about it.
    """


class MissingExtra(RagmeterError):
    """An optional dependency is not installed; the message names the ``pip install``."""


class CacheError(RagmeterError):
    """A cache file (embeddings, model replies) cannot be opened or written."""


class OutputError(RagmeterError, OSError):
    """An output could not be written (no space left, a file-size limit, a quota).

    The message names the path; the temporary it was being written to is removed,
    so nothing is left half-written, and what was there before is unchanged. It is
    an ``OSError`` too, so code that tolerates a failed write (a cache) still does.
    """


class ServerError(RagmeterError):
    """A model or embedding server failed; the message names its URL.

    What is known about the failure rides along: ``url``; ``cause``
    (``"timeout"``, ``"connect"`` or ``"http"``, when no usable answer came);
    ``status`` (the HTTP status, if one came); ``retry_after`` (the server's
    hint, in seconds); ``detail`` (the server's own message); ``body`` (the
    start of an unreadable body).
    """

    def __init__(
        self,
        message: str,
        *,
        url: str | None = None,
        cause: str | None = None,
        status: int | None = None,
        retry_after: float | None = None,
        detail: str = "",
        body: str = "",
    ) -> None:
        super().__init__(message)
        self.url = url
        self.cause = cause
        self.status = status
        self.retry_after = retry_after
        self.detail = detail
        self.body = body


class ServerUnavailable(ServerError):
    """The server cannot be reached, or kept failing (timeouts, HTTP 429/5xx) after
    every retry.

    Work finished before it was raised is cached, so a rerun resumes.
    """


class ServerRejected(ServerError):
    """The server refuses the requests: a wrong key, an unknown model or endpoint."""


class BadServerReply(ServerError):
    """The server answered, but not with something usable (not JSON, wrong shape,
    missing or invalid vectors)."""

"""Text that may be shown or saved: no control characters, no secrets, no formulas.

:func:`printable` is what reaches a terminal (ids, paths and messages come from
input files); :func:`redact_text` and :func:`redact` are what is written to
lock files, ``config.toml`` and error messages; :func:`csv_text` is every CSV file
and CSV output ragmeter writes, each text cell through :func:`csv_cell`.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

__all__ = [
    "REDACTED",
    "csv_cell",
    "csv_text",
    "is_secret_name",
    "markdown_text",
    "printable",
    "redact",
    "redact_text",
    "redact_urls",
]

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def csv_cell(value: Any) -> Any:
    """A CSV cell a spreadsheet shows as text, never runs as a formula (OWASP's rule).

    A text cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage
    return gets a leading apostrophe: a system named ``=HYPERLINK(...)`` is written
    ``'=HYPERLINK(...)``. Numbers are left alone, and so is text that is a plain
    number (``-0.05``, ``+3``, ``1e-05``): a spreadsheet reads those as numbers, and
    they run nothing.
    """
    if (
        isinstance(value, str)
        and value.startswith(_FORMULA_START)
        and not _PLAIN_NUMBER.fullmatch(value)
    ):
        return "'" + value
    return value


def csv_text(columns: Sequence[str], rows: Iterable[Mapping[str, Any] | Sequence[Any]]) -> str:
    """CSV with a header of ``columns`` and one line per row (a dict by column name,
    missing ones empty, or a sequence in column order), every cell through
    :func:`csv_cell`. Every CSV writer of ragmeter calls this (or :func:`csv_lines`)."""
    return "".join(csv_lines(columns, rows))


def csv_lines(
    columns: Sequence[str], rows: Iterable[Mapping[str, Any] | Sequence[Any]]
) -> Iterator[str]:
    """:func:`csv_text` a line at a time, for a file written as its rows are made."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")

    def taken() -> str:
        text = buf.getvalue()
        buf.seek(0)
        buf.truncate(0)
        return text

    writer.writerow([csv_cell(c) for c in columns])
    yield taken()
    for row in rows:
        values = [row.get(c, "") for c in columns] if isinstance(row, Mapping) else row
        writer.writerow([csv_cell(v) for v in values])
        yield taken()


_MARKDOWN_SPECIAL = re.compile(r"([\\`*_|#~])")


def markdown_text(text: str) -> str:
    """``text`` as literal Markdown inline text: ``&``, ``<`` and ``>`` as HTML entities
    (a system named ``<script>`` is shown, never run), the signs that start
    emphasis, code, a table cell or a heading's end backslash-escaped (brackets with no
    link after them are text already), line breaks as spaces, control characters as
    ``\\xNN``. A name from the user's files reaches a Markdown file ragmeter writes
    through this."""
    flat = " ".join(printable(str(text)).splitlines())
    flat = flat.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MARKDOWN_SPECIAL.sub(r"\\\1", flat)


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """``text`` with every control character but newline and tab shown as ``\\xNN``.

    Ids, paths and messages from input files reach the terminal through this,
    so no escape sequence (clear screen, colours, a moved cursor, a title) in
    them is ever sent raw.
    """
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


SECRET_WORDS = ("key", "apikey", "token", "secret", "password", "passwd", "authorization")
REDACTED = "***"


def is_secret_name(name: str) -> bool:
    """Whether an option named ``name`` holds a secret (``api_key``, ``token``,
    ``Authorization``...; not ``max_tokens`` nor ``api_key_env``, which names a variable)."""
    parts = [p for p in re.split(r"[^a-z0-9]+", str(name).lower()) if p]
    if not parts or parts[-1] == "env":
        return False
    return any(p in SECRET_WORDS or p.endswith(("apikey", "password")) for p in parts)


_ASSIGNMENT = re.compile(
    r"""(?P<name>[\w.-]+)(?P<sep>["']?\s*[=:]\s*["']?)(?P<value>[^\s"',;}&?]+)"""
)
_BEARER = re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]+")


_URL = re.compile(
    r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)(?P<userinfo>[^\s/?#@\"'<>]*@)?"
    r"(?P<host>[^\s/?#\"'<>]*)(?P<path>[^\s?#\"'<>]*)(?P<query>\?[^\s#\"'<>]*)?"
)


def redact_urls(text: str) -> str:
    """``text`` with the userinfo and every query value of each URL in it replaced by
    ``***``: ``http://user:KEY@host/x?api_key=KEY&k=3`` is written
    ``http://***@host/x?api_key=***&k=***``. A URL's query and userinfo are where
    keys ride (whatever they are named), so none of it is ever written."""

    def hide(m: re.Match) -> str:
        userinfo = f"{REDACTED}@" if m.group("userinfo") else ""
        query = m.group("query")
        if query:
            parts = (p.partition("=") for p in query[1:].split("&"))
            query = "?" + "&".join(
                (f"{n}={REDACTED}" if sep else REDACTED) if n or sep else "" for n, sep, _ in parts
            )
        return f"{m.group('scheme')}{userinfo}{m.group('host')}{m.group('path')}{query or ''}"

    return _URL.sub(hide, text) if "://" in text else text


def redact_text(text: str) -> str:
    """``text`` with the value of every ``NAME=VALUE`` / ``"NAME": "VALUE"`` whose name
    holds a secret (:func:`is_secret_name`), every bearer token, and the userinfo and
    query values of every URL (:func:`redact_urls`) replaced by ``***``."""

    def hide(m: re.Match) -> str:
        value = m.group("value")
        if not is_secret_name(m.group("name")) or (value.isalpha() and value.isupper()):
            return m.group()  # not a secret, or a placeholder (KEY=VALUE)
        return m.group("name") + m.group("sep") + REDACTED

    text = redact_urls(text)
    return _ASSIGNMENT.sub(hide, _BEARER.sub(lambda m: f"{m.group(1)} {REDACTED}", text))


def _is_headers(name: object) -> bool:
    """Whether an option named ``name`` holds HTTP headers (``headers``,
    ``http_headers``): every header's value may be a key, whatever it is called."""
    parts = [p for p in re.split(r"[^a-z0-9]+", str(name).lower()) if p]
    return bool(parts) and parts[-1] in ("header", "headers")


def redact(value: object, *, strings: bool = True) -> object:
    """A copy of ``value`` (dicts, lists, strings) with secrets replaced by ``***``:
    values under secret names, every value of a ``headers`` table, the userinfo and
    query values of every URL (:func:`redact_urls`), and (with ``strings``) secrets
    written inside strings (:func:`redact_text`). Every configuration ragmeter
    writes (``config.toml``, ``meta.json``, and so the report and the history) is
    written through this."""
    if isinstance(value, dict):
        return {
            k: REDACTED
            if is_secret_name(k) and v not in (None, "")
            else _redact_headers(v)
            if _is_headers(k)
            else redact(v, strings=strings)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return type(value)(redact(v, strings=strings) for v in value)
    if isinstance(value, str):
        return redact_text(value) if strings else redact_urls(value)
    return value


def _redact_headers(value: object) -> object:
    if isinstance(value, dict):
        return {k: REDACTED if v not in (None, "") else v for k, v in value.items()}
    if isinstance(value, list | tuple):  # [["X-Auth", "KEY"]] or ["X-Auth: KEY"]
        return type(value)(_redact_headers(v) for v in value)
    if isinstance(value, str) and value:  # "X-Auth: KEY", "token=KEY", or a value alone
        m = re.match(r"([\w.-]+)\s*([:=])", value)
        return (
            f"{m.group(1)}{m.group(2)}{' ' if m.group(2) == ':' else ''}{REDACTED}"
            if m
            else REDACTED
        )
    return value

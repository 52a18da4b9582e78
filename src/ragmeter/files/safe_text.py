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
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = [
    "REDACTED",
    "csv_cell",
    "csv_text",
    "is_secret_name",
    "printable",
    "redact",
    "redact_text",
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
    :func:`csv_cell`. Every CSV writer of ragmeter calls this."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow([csv_cell(c) for c in columns])
    for row in rows:
        values = [row.get(c, "") for c in columns] if isinstance(row, Mapping) else row
        writer.writerow([csv_cell(v) for v in values])
    return buf.getvalue()


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


def redact_text(text: str) -> str:
    """``text`` with the value of every ``NAME=VALUE`` / ``"NAME": "VALUE"`` whose name
    holds a secret (:func:`is_secret_name`), and every bearer token, replaced by ``***``."""

    def hide(m: re.Match) -> str:
        value = m.group("value")
        if not is_secret_name(m.group("name")) or (value.isalpha() and value.isupper()):
            return m.group()  # not a secret, or a placeholder (KEY=VALUE)
        return m.group("name") + m.group("sep") + REDACTED

    return _ASSIGNMENT.sub(hide, _BEARER.sub(lambda m: f"{m.group(1)} {REDACTED}", text))


def redact(value: object, *, strings: bool = True) -> object:
    """A copy of ``value`` (dicts, lists, strings) with secrets replaced by ``***``:
    values under secret names, and (with ``strings``) secrets written inside
    strings (:func:`redact_text`)."""
    if isinstance(value, dict):
        return {
            k: REDACTED if is_secret_name(k) and v not in (None, "") else redact(v, strings=strings)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return type(value)(redact(v, strings=strings) for v in value)
    if isinstance(value, str) and strings:
        return redact_text(value)
    return value

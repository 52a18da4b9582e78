"""Text that may be shown or saved: no control characters, no secrets.

:func:`printable` is what reaches a terminal (ids, paths and messages come from
input files); :func:`redact_text` and :func:`redact` are what is written to
lock files, ``config.toml`` and error messages.
"""

from __future__ import annotations

import re

__all__ = ["REDACTED", "is_secret_name", "printable", "redact", "redact_text"]

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

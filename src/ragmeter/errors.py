"""Errors that carry a one-line, user-facing message.

Anything raised as :class:`InputError` is bad input: the CLI prints its message
on one line and exits with status 2.
"""

from __future__ import annotations


class RagmeterError(Exception):
    """Base class for every error ragmeter raises on purpose."""


class InputError(RagmeterError, ValueError):
    """Bad input: a file, line, question id or setting the user must fix.

    The message names where the problem is (file and line, or question id)
    and what to do about it.
    """

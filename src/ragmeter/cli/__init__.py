"""The ``ragmeter`` command: a thin layer that parses arguments, calls the library, prints.

Each route's commands live in their own module and register on the one typer app.
"""

from __future__ import annotations

import sys

from ragmeter.cli import (  # noqa: F401  (register commands)
    answers,
    check,
    chunk,
    evaluate,
    export,
    history,
    questions,
    search,
)
from ragmeter.cli.app import app, console, err, example_dir, interrupted

__all__ = ["app", "console", "err", "example_dir", "main"]


def main() -> None:
    """Console entry point."""
    try:
        app()
    except KeyboardInterrupt as exc:
        err.print(interrupted(exc), markup=False, soft_wrap=True)
        sys.exit(130)

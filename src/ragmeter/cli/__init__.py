"""The ``ragmeter`` command: a thin layer that parses arguments, calls the library, prints.

Each route's commands live in their own module and register on the one typer app.
"""

from __future__ import annotations

import sys
from pathlib import Path


def _started_as_the_command() -> bool:
    """Whether this import is the ``ragmeter`` command starting (the console script, or
    ``python -m ragmeter.cli``), not a program importing the package."""
    return Path(sys.argv[0]).name in ("ragmeter", "-m") if sys.argv else False


try:  # importing every command takes a second or two: Ctrl-C then is one line too
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
except KeyboardInterrupt:
    if not _started_as_the_command():
        raise
    sys.stderr.write("interrupted\n")
    raise SystemExit(130) from None

__all__ = ["app", "console", "err", "example_dir", "main"]


def main() -> None:
    """Console entry point."""
    try:
        app()
    except KeyboardInterrupt as exc:
        err.print(interrupted(exc), markup=False, soft_wrap=True)
        sys.exit(130)

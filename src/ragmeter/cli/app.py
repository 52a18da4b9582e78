"""The typer app, the two consoles and the helpers every command shares."""

from __future__ import annotations

import functools
import sys
from importlib.resources import files
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.text import Text

from ragmeter.errors import RagmeterError

app = typer.Typer(
    help="Measure retrieval for language models, with 95% intervals on every number.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
# Piped output (logs, CI) gets a wide console so tables do not wrap.
console = Console(width=None if sys.stdout.isatty() else 160)
err = Console(stderr=True)


def example_dir() -> Path:
    """The shipped example: a blog corpus and reader-style questions."""
    return Path(str(files("ragmeter") / "examples" / "blog"))


def handle_errors(fn):
    """Bad input: one line on stderr, exit code 2."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except RagmeterError as exc:
            err.print(Text.assemble(("error: ", "bold red"), str(exc)), soft_wrap=True)
            raise typer.Exit(2) from None

    return wrapper


def _csv(value: str | None) -> tuple[str, ...] | None:
    return tuple(v.strip() for v in value.split(",") if v.strip()) if value else None


def _progress() -> Progress:
    return Progress(
        TextColumn("[bold]{task.description:<28}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(),
        console=err,
        transient=True,
    )


def refresh_report(results: Path) -> None:
    """Rewrite the HTML report of a results directory, when the report extra is installed."""
    from ragmeter.report.html import ReportDependencyError, write_report

    try:
        path = write_report(results)
    except ReportDependencyError:
        console.print("[dim]HTML report: pip install 'ragmeter\\[report]'; then ragmeter report[/]")
        return
    console.print(f"Report: [bold]{path}[/]")


# Backend options: ``--option KEY=VALUE`` on every command that calls a model.
# ``--model-option`` is the old name of two commands, kept hidden.
ModelOptions = Annotated[
    list[str] | None, typer.Option("--option", help="Backend option KEY=VALUE (repeatable)")
]
OldModelOptions = Annotated[
    list[str] | None,
    typer.Option("--model-option", hidden=True, help="Deprecated: use --option"),
]


def model_options(option: list[str] | None, old: list[str] | None = None) -> list[str]:
    """``--option`` values, then any given under the deprecated ``--model-option``."""
    if old:
        err.print("[yellow]--model-option is deprecated; use --option[/]")
    return [*(option or []), *(old or [])]

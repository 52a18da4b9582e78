"""The typer app, the two consoles and the helpers every command shares."""

from __future__ import annotations

import functools
import shlex
import sys
from importlib.resources import files
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import Progress
from rich.text import Text

from ragmeter.cli import progress
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


def _plain_metavars() -> None:
    """Help that reads as values: ``--out PATH``, ``--seed INT``, flags with no value shown
    (typer's own rich help prints ``<path>``, ``<int>`` and ``--open <bool>``)."""
    try:
        from typer.core import TyperArgument, TyperOption, _TyperParameter
    except ImportError:  # pragma: no cover (another typer)
        return
    names = {"int": "INT", "float": "NUMBER", "str": "TEXT", "bool": "BOOL"}

    def display_type(self, ctx):
        desc = self.type_descriptor
        if desc.is_choice and desc.choices is not None:
            return "|".join(str(getattr(c, "value", c)) for c in desc.choices)
        if desc.is_path:
            return "PATH"
        label = self.bare_type()
        label = label.removeprefix("list[").removesuffix("]")
        return names.get(label, label.upper())

    def option_type(self, ctx):
        if self.is_flag and not self.count:
            return None
        if self.metavar is not None:
            return self.metavar
        return self.display_type(ctx)

    def usage_name(self):  # RESULTS and [CONFIG] on the usage line, not {results}
        name = (self.metavar or self.name or "").upper()
        name = name if self.required else f"[{name}]"
        return name + ("..." if self.nargs != 1 else "")

    if hasattr(_TyperParameter, "display_type") and hasattr(TyperOption, "display_type_rich"):
        _TyperParameter.display_type = display_type
        TyperOption.display_type_rich = option_type
    if hasattr(TyperArgument, "_usage_display_name"):
        TyperArgument._usage_display_name = usage_name


_plain_metavars()


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


def plural(n: int, word: str, words: str | None = None) -> str:
    """``1 system``, ``2 systems``."""
    return f"{n} {word if n == 1 else words or word + 's'}"


def warn(message: str) -> None:
    """One warning line on stderr (the message is printed as plain text, never as markup)."""
    err.print(Text.assemble(("warning: ", "bold yellow"), message), soft_wrap=True)


def _csv(value: str | None) -> tuple[str, ...] | None:
    return tuple(v.strip() for v in value.split(",") if v.strip()) if value else None


def _progress() -> Progress:
    return progress.new_bar()


def hint(message: str) -> None:
    """A dim hint on stderr, left out under ``--quiet`` (``message`` is rich markup)."""
    if not progress.settings.quiet:
        err.print(f"[dim]{message}[/]", soft_wrap=True)


def _version(value: bool) -> None:
    if value:
        from ragmeter import __version__

        console.print(f"ragmeter {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Print the version and exit"
        ),
    ] = False,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="No progress bars and no hints (for scripts)")
    ] = False,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Show backend logs (llama.cpp)")
    ] = False,
) -> None:
    """Measure retrieval for language models, with 95% intervals on every number."""
    progress.set_quiet(quiet)
    progress.settings.verbose = verbose
    if verbose or "ragmeter.llm.backends" in sys.modules:  # no import just to say "quiet"
        from ragmeter.llm import backends

        backends.LLAMA_VERBOSE = verbose


REPORT_STATUS = "Building the HTML report (the first one also builds the chart bundle: ~10 s)"


def refresh_report(results: Path) -> None:
    """Rewrite the HTML report of a results directory, when the report extra is installed."""
    from ragmeter.report.html import ReportDependencyError, write_report

    try:
        with progress.status(REPORT_STATUS):
            path = write_report(results)
    except ReportDependencyError:
        where = escape(shlex.quote(str(results)))
        hint(f"HTML report: pip install 'ragmeter\\[report]', then: ragmeter report {where}")
        return
    console.print(f"Report: [bold]{path}[/]")

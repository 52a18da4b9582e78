"""The typer app, the two consoles and the helpers every command shares."""

from __future__ import annotations

import functools
import shlex
import sys
from importlib.resources import files
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.progress import Progress
from rich.text import Text
from typer.core import TyperGroup

from ragmeter.cli import progress
from ragmeter.cli.safe_console import SafeConsole, TerminalConsole
from ragmeter.defaults import DEFAULTS
from ragmeter.errors import InputError, OutputError, RagmeterError
from ragmeter.files.safe_text import printable, redact_text
from ragmeter.stats.adjust import FDR_GUARANTEE

# click's exception base, whether typer uses click or its own copy of it
_ClickException = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")


class OneLineErrors(TyperGroup):
    """Flag values the command line cannot parse (``--seed x``) are one line and exit 2,
    like every other bad input, instead of a usage box."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        args = _metric_names(sys.argv[1:] if args is None else list(args))
        try:
            rv = super().main(
                args=args,
                prog_name=prog_name,
                complete_var=complete_var,
                standalone_mode=False,
                **extra,
            )
        except _ClickException as exc:
            if not standalone_mode:
                raise
            if type(exc).__name__ == "NoArgsIsHelpError":  # no arguments: show the help
                exc.show()
                sys.exit(exc.exit_code)
            where = f" (see `{exc.ctx.command_path} --help`)" if getattr(exc, "ctx", None) else ""
            _one_line(exc.format_message() + where)
            sys.exit(exc.exit_code)
        except typer.Abort:
            if not standalone_mode:
                raise
            err.print("aborted")
            sys.exit(1)
        if not standalone_mode:
            return rv
        sys.exit(rv if isinstance(rv, int) else 0)

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt as exc:  # typer makes it a silent exit 130: say why it stopped
            err.print(interrupted(exc), markup=False, soft_wrap=True)
            raise


def _metric_names(args: list[str]) -> list[str]:
    """``--metric`` values in lower case: ragmeter's metric names are case-insensitive
    (``RECALL@5`` is ``recall@5``), while results store them in lower case. trec_eval's
    names (``P_5``, ``Rprec``) stay as written, in trec_eval's case."""
    from ragmeter.errors import InputError
    from ragmeter.scoring.metrics import Metric

    def lower(value: str) -> str:
        try:
            Metric.parse(value.lower())
        except InputError:  # P_5 (p_5 is no name) or an unknown name: as typed
            return value
        return value.lower()

    out = []
    for i, arg in enumerate(args):
        if i and args[i - 1] == "--metric":
            arg = lower(arg)
        elif arg.startswith("--metric="):
            arg = "--metric=" + lower(arg.removeprefix("--metric="))
        out.append(arg)
    return out


app = typer.Typer(
    help=(
        "Measure retrieval for language models, with "
        f"{DEFAULTS.confidence * 100:g}% intervals on every number."
    ),
    epilog=(
        "Models are named by their role: --reader (answer), --judge (grade), --model "
        "(questions generate, questions audit; -m, old name --llm), each as gguf:PATH, "
        "ollama:NAME or openai:NAME, with --option KEY=VALUE for the backend. "
        f"Every --seed defaults to {DEFAULTS.seed}, or to the seed of the run it reads."
    ),
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    cls=OneLineErrors,
)


# As wide as COLUMNS, else the terminal the command runs in (piped output too: ``ragmeter
# demo | cat`` prints what the terminal shows), else 160 for logs and CI (layout.py).
console = TerminalConsole()
err = SafeConsole(stderr=True)


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
            _one_line(str(exc))
            raise typer.Exit(2) from None
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError) as exc:
            # a path the user gave that cannot be read or written
            where = f"{exc.filename}: " if exc.filename else ""
            _one_line(f"{where}{exc.strerror or exc}; check the path and its permissions")
            raise typer.Exit(2) from None
        except SystemExit as exc:  # ragmeter never exits from inside a command: user code did
            _one_line(
                f"{_caller(exc)} called sys.exit({exc.code!r}) while ragmeter ran it; nothing "
                f"was saved. Raise an exception there instead (or remove the call)"
            )
            raise typer.Exit(2) from None

    return wrapper


def _caller(exc: BaseException) -> str:
    """``file:line`` of the innermost frame outside ragmeter that raised ``exc``."""
    import traceback

    here = str(Path(__file__).resolve().parents[1])
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename]
    outside = [f for f in frames if not str(Path(f.filename).resolve()).startswith(here)]
    last = (outside or frames or [None])[-1]
    return f"{last.filename}:{last.lineno}" if last is not None else "code run by ragmeter"


def interrupted(exc: KeyboardInterrupt) -> Text:
    """``interrupted``, with whose code was running where ragmeter knows it (a
    strategy's chunker)."""
    said = " ".join(str(exc).split())
    return Text("interrupted" + (f": {shown(said)}" if said else ""))


def plural(n: int, word: str, words: str | None = None) -> str:
    """``1 system``, ``2 systems``."""
    return f"{n} {word if n == 1 else words or word + 's'}"


def shown(message: str) -> str:
    """A message as it may be printed: secrets redacted, control characters as ``\\xNN``."""
    return printable(redact_text(message))


def warn(message: str) -> None:
    """One warning line on stderr (the message is printed as plain text, never as markup)."""
    err.print(Text.assemble(("warning: ", "bold yellow"), shown(message)), soft_wrap=True)


def _one_line(message: str) -> None:
    """``error: message`` on stderr, as one line whatever the message holds (no markup,
    no control character, no secret)."""
    flat = " ".join(shown(message).splitlines()) or "bad input"
    err.print(Text.assemble(("error: ", "bold red"), flat), soft_wrap=True, markup=False)


def points(value: float, flag: str) -> float:
    """A flag given in points (plan's --half-width and --difference, check's --margin),
    as the fraction of the metric's scale the library takes: 4 -> 0.04. The one
    conversion between what a person types and what the library holds.

    A value between 0 and 1 is read as a fraction (0.04 is 4 points), with a warning
    that says how to write it in points: every such flag reads its unit this one way.
    """
    if 0 < value < 1:
        warn(
            f"{flag} {value:g} is read as a fraction ({value * 100:g} points); {flag} takes "
            f"points (hundredths of the metric's scale): write {flag} {value * 100:g}"
        )
        return float(value)
    return value / 100.0


def in_points(fraction: float) -> float:
    """A fraction of the metric's scale as the points a person types (0.04 -> 4.0): a
    flag's default, taken from :data:`ragmeter.defaults.DEFAULTS`, shown as the flag
    reads it; :func:`points` converts it back."""
    return round(fraction * 100.0, 9) + 0.0


def _csv(value: str | None) -> tuple[str, ...] | None:
    return tuple(v.strip() for v in value.split(",") if v.strip()) if value else None


def _names(value: str | None, flag: str, example: str) -> tuple[str, ...] | None:
    """Comma-separated names (``--measures map,P_10``): None when the flag is not given,
    an InputError naming the flag when it names nothing (``' , '``), never the default."""
    from ragmeter.errors import InputError

    items = _csv(value)
    if value is not None and not items:
        raise InputError(
            f"{flag} {value!r} names nothing: give comma-separated names, e.g. {flag} {example}"
        )
    return items


def _ints(value: str | None, flag: str) -> tuple[int, ...] | None:
    """Comma-separated whole numbers (``--ks 1,3,5``), or an InputError naming the flag."""
    from ragmeter.errors import InputError

    items = _csv(value)
    if value is not None and not items:
        raise InputError(f"{flag} {value!r}: give comma-separated whole numbers, e.g. 1,3,5,10")
    if items is None:
        return None
    out = []
    for item in items:
        try:
            out.append(int(item))
        except ValueError:
            raise InputError(
                f"{flag} {value!r}: {item!r} is not a whole number; write e.g. 1,3,5,10"
            ) from None
    return tuple(out)


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


def refresh_report(results: Path, accuracy_judge: str | None = None) -> None:
    """Rewrite the HTML report of a results directory, when the report extra is installed."""
    from ragmeter.report.html import ReportDependencyError, write_report

    try:
        with progress.status(REPORT_STATUS):
            path = write_report(results, accuracy_judge=accuracy_judge)
    except ReportDependencyError:
        where = escape(shlex.quote(str(results)))
        hint(f"HTML report: pip install 'ragmeter\\[report]', then: ragmeter report {where}")
        return
    except (InputError, OutputError) as exc:
        # a file of the user's at report.html (kept, not replaced), or a full disk or a
        # file-size limit: the results are written already and stay
        warn(f"no HTML report written: {exc}")
        return
    console.print(Text.assemble("Report: ", (str(path), "bold")))


# One option name per concept on every command that calls a model:
#   the model spec: --reader (answer), --judge (grade, repeatable), --model / -m
#     (questions generate, questions audit); each names the model's role and takes
#     the same spec, MODEL_SPEC;
#   backend options: --option KEY=VALUE;  the reply cache: --cache PATH;
#   the seed of anything random (samples, bootstrap): --seed, default 1.
# Old names stay working, hidden: --model-option (use --option), --llm (use --model).
MODEL_SPEC = "gguf:PATH, ollama:NAME or openai:NAME"
ModelOptions = Annotated[
    list[str] | None, typer.Option("--option", help="Backend option KEY=VALUE (repeatable)")
]
OldModelOptions = Annotated[
    list[str] | None,
    typer.Option("--model-option", hidden=True, help="Deprecated: use --option"),
]


CallEngine = Annotated[
    str,
    typer.Option(
        "--engine",
        help="local (default) or ray: where model calls run (ray: an actor pool, replies "
        "cached here as they come back)",
    ),
]
CallEngineAddress = Annotated[
    str,
    typer.Option(
        "--engine-address",
        help='Ray cluster address: "auto" (default: the cluster this machine is in), '
        'ray://HOST:10001, or "" to start Ray here',
    ),
]


AccuracyJudge = Annotated[
    str | None,
    typer.Option(
        "--accuracy-judge",
        help=(
            "The judge whose grades give answer accuracy (default: \\[answers] judge in the "
            "run's config.toml, else the one `grade --accuracy-judge` recorded, else the first)"
        ),
        metavar="NAME",
        show_default=False,
    ),
]


# The family and rule of a comparison table, as `search`, `compare` and `grade` take them.
ADJUST_OPTION = typer.Option(
    help="maxt (default): step-down max-T over the table's pairs (more power when pairs "
    "share questions); holm: Holm over the same pairs; fdr: Benjamini-Hochberg, which "
    f"{FDR_GUARANTEE}; none: the seed's per-pair rule"
)
BASELINE_OPTION = typer.Option(help="Compare every system with this one (m - 1 pairs)")
PAIRS_OPTION = typer.Option(
    help="Only these planned comparisons, e.g. A:B,C:D; on a strategy x retriever grid "
    "'*/R' is retriever R over all strategies and 'S/*' strategy S over all retrievers "
    "(quote them: '*/A:*/B')"
)
FAMILY_OPTION = typer.Option(
    help="On a strategy x retriever grid: grid (default there): retrievers within each "
    "strategy and strategies within each retriever, one family; retrievers or strategies: "
    "one of the two; main-effects: the grid's pairs and each retriever over all strategies "
    "(*/R), each strategy over all retrievers (S/*); all: every pair",
    metavar="FAMILY",
)


def judge_name(value: str | None) -> str | None:
    """An ``--accuracy-judge`` value as grades are saved under it (``gguf:PATH`` keeps the
    file name, as ``--judge`` does); ``None`` when not given."""
    if value is None or not value.strip():
        return None
    from ragmeter.llm.settings import model_label

    return model_label(value)


def old_name(new: str | None, old: str | None, new_flag: str, old_flag: str) -> str | None:
    """The value of ``new_flag``, or of its deprecated alias ``old_flag`` (with a warning)."""
    if old is None:
        return new
    if new is not None:
        raise InputError(f"give {new_flag} only ({old_flag} is its old name)")
    err.print(f"[yellow]{old_flag} is deprecated; use {new_flag}[/]")
    return old


def model_options(option: list[str] | None, old: list[str] | None = None) -> list[str]:
    """``--option`` values, then any given under the deprecated ``--model-option``."""
    if old:
        err.print("[yellow]--model-option is deprecated; use --option[/]")
    return [*(option or []), *(old or [])]

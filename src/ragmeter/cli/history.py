"""``ragmeter history``: the recorded runs, one run, the trend across commits, an export.

Also :func:`record_run`, the one call ``search``, ``evaluate`` and ``grade`` make
to keep their run (its block writes the results; a run killed before its record is
recorded by the next command, :func:`recover_runs`), and :data:`NoHistory`, their
``--no-history`` flag.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.text import Text

from ragmeter.cli.app import app, console, err, handle_errors, hint, warn
from ragmeter.cli.layout import Grid, print_grids
from ragmeter.comparison.formatting import (
    format_estimate,
    level_label,
    shown_difference,
    shown_p,
)
from ragmeter.errors import InputError, RagmeterError

NoHistory = Annotated[
    bool,
    typer.Option("--no-history", help="Do not record this run in the run history (.ragmeter/)"),
]
HistoryDir = Annotated[
    Path | None,
    typer.Option(
        "--history",
        help="The history folder (default: $RAGMETER_HISTORY, else \\[history] path of "
        "./ragmeter.toml, else ./.ragmeter)",
        metavar="FOLDER",
    ),
]
SystemFilter = Annotated[str | None, typer.Option(help="Only runs holding this system")]
SystemFollowed = Annotated[
    str | None,
    typer.Option(help="Only runs holding this system (also under a name it had before)"),
]
MetricFilter = Annotated[str | None, typer.Option(help="Only runs holding this metric")]
BranchFilter = Annotated[str | None, typer.Option(help="Only runs made on this git branch")]

history_app = typer.Typer(
    help="Every recorded run: list, show, the trend across commits, export.",
    no_args_is_help=True,
)
app.add_typer(history_app, name="history")


@contextmanager
def record_run(
    results: Path | str, command: str, config: Path | str | None = None, off: bool = False
) -> Iterator[None]:
    """Keep the run that writes ``results`` inside the block in the history (unless
    ``off`` or recording is off); the one call ``search``, ``evaluate`` and ``grade`` make.

    Before the block: the runs of commands killed before they recorded are recorded
    (one line each), and this run's note is left (:mod:`ragmeter.history.pending`), so
    a kill between its results and its record loses no run. After it: the record. The
    run is already saved: a history that cannot be written is a warning, not a failed
    command; a block that fails records nothing.
    """
    pending = None if off else _begin(results, command, config)
    try:
        yield
    except BaseException:
        if pending is not None:
            from ragmeter.history.pending import drop

            drop(pending)
        raise
    if pending is None:
        return
    from ragmeter.history.pending import finish

    try:
        kept = finish(pending)
    except (RagmeterError, OSError) as exc:
        from ragmeter.history.pending import drop

        drop(pending)  # said here; never recorded later behind the user's back
        warn(f"run not recorded in the history: {_reason(exc)}")
        return
    hint(f"History: run {kept.id} recorded (ragmeter history list)")


def _reason(exc: Exception) -> str:
    return str(exc) if isinstance(exc, RagmeterError) else str(exc.strerror or exc)


def _begin(results: Path | str, command: str, config: Path | str | None):
    """Recover the history's unrecorded runs, then leave this run's note; ``None`` when
    recording is off or the history cannot be written (a warning)."""
    from ragmeter.history.pending import begin
    from ragmeter.history.store import locate

    if config is None and Path("ragmeter.toml").is_file():
        config = Path("ragmeter.toml")
    try:
        folder = locate(config, recording=True)
        if folder is None:
            return None
        recover_runs(folder)
        git_folder = Path(config).resolve().parent if config is not None else None
        return begin(results, command, folder, git_folder)
    except (RagmeterError, OSError) as exc:
        warn(f"run not recorded in the history: {_reason(exc)}")
        return None


def recover_runs(folder: Path | str | None) -> None:
    """Record the runs whose commands were killed between their results and their record,
    one line each (:func:`ragmeter.history.pending.recover`)."""
    from ragmeter.history.pending import recover
    from ragmeter.history.store import locate

    folder = folder if folder is not None else locate()
    if folder is None:
        return
    for kept in recover(folder):
        err.print(
            Text(
                f"History: run {kept.id} recorded from {kept.results} (its `ragmeter "
                f"{kept.command}` stopped before recording it)"
            ),
            soft_wrap=True,
        )


def _store(history: Path | None, create: bool = False):
    from ragmeter.history.store import open_history

    recover_runs(history)
    return open_history(history, create=create)


def _when(at: str) -> str:
    return at.replace("T", " ").removesuffix("+00:00")


def _commit(r) -> str:
    if not r.commit:
        return ""
    return r.commit[:7] + (" (dirty)" if r.dirty else "")


def _runs_grid(path: Path, runs: list) -> Grid:
    """``history list``'s table: one row per run, fitted like every table."""
    header = ["run", "recorded (UTC)", "command", "commit", "branch", "systems", "metric"]
    grid = Grid(
        f"Recorded runs ({path})",
        [*header, "questions", "test set", "results"],
        right={0, 5, 7},
        key="runs",
    )
    for r in runs:
        grid.rows.append(
            [
                str(r.id),
                _when(r.recorded_at),
                r.command,
                _commit(r),
                r.branch,
                str(len(r.systems)),
                r.metric,
                str(r.questions),
                str(r.measurement.get("testset", ""))[:8],
                r.results,
            ]
        )
    return grid


def _trend_grid(found, system: str) -> Grid:
    """``history trend``'s table: the metric per run and the paired change from the run
    before it; the verdict wraps between words, nothing else does."""
    metric = found.metric
    level = level_label(p.estimate for p in found.points)  # "" when the runs' levels differ
    shown = f"{metric} [{level} CI]" if level else f"{metric} [CI, each run's level]"
    header = ["run", "recorded (UTC)", "commit", "branch", shown, "from run"]
    grid = Grid(
        f"{metric} of {system} across runs",
        [*header, "change [CI]", "p", "verdict"],
        right={0, 4, 5, 6, 7},
        key="trend",
        wrap={8},
    )
    for p in found.points:
        r, change = p.run, p.change
        cells = [str(r.id), _when(r.recorded_at), _commit(r), r.branch]
        cells.append(format_estimate(p.estimate, metric))
        verdict = Text()
        if p.renamed_from is not None:
            verdict.append(f"named {p.name} here (was {p.renamed_from}). ", style="cyan")
        if p.other_branch:
            verdict.append(
                f"on {'branch ' + r.branch if r.branch else 'another branch'}, not in the "
                f"checked-out commit's history. ",
                style="magenta",
            )
        if p.gap is not None:
            verdict.append(
                f"break: {'; '.join(p.gap.reasons)} changed since run {p.gap.earlier}. ",
                style="yellow",
            )
        if change is None:
            cells += ["", "", ""]
            verdict.append("first run of this measurement" if p.gap or p.series else "first run")
        else:
            cells += [
                str(change.earlier),
                shown_difference(change.row, metric),
                shown_p(change.row, change.rule.alpha),
            ]
            style = {"better": "green", "worse": "red"}.get(change.direction, "")
            verdict.append(change.row.verdict, style=style)
        grid.rows.append([*cells, verdict])
    return grid


@history_app.command("list")
@handle_errors
def history_list(
    system: SystemFollowed = None,
    metric: MetricFilter = None,
    branch: BranchFilter = None,
    history: HistoryDir = None,
) -> None:
    """The recorded runs, oldest first."""
    from ragmeter.history.store import HistoryStore, history_path, locate
    from ragmeter.history.trend import follow

    folder = history if history is not None else locate()
    assert folder is not None
    recover_runs(folder)
    if not history_path(folder).is_file():
        console.print(f"No runs recorded in {escape(str(history_path(folder)))} yet.")
        return
    with HistoryStore(folder, create=False) as store:
        runs = store.runs(metric=metric, branch=branch)
        if system is not None:  # by its name, and by its identity across a rename
            runs = [r for r, _ in follow(store, runs, system)]
    print_grids(console, _runs_grid(store.path, runs))
    if not runs:
        console.print("No recorded run matches.")


@history_app.command("show")
@handle_errors
def history_show(
    run: Annotated[int, typer.Argument(help="The run id (see `ragmeter history list`)")],
    metric: Annotated[str | None, typer.Option(help="Default: the run's metric")] = None,
    config: Annotated[
        bool, typer.Option("--config", help="Also print the run's config.toml as kept")
    ] = False,
    history: HistoryDir = None,
) -> None:
    """One recorded run: where it came from, what it measured, every system's interval."""
    from ragmeter.history.trend import RecordedRun

    with _store(history) as store:
        r = store.get(run)
        kept = RecordedRun(store, r)
        kept_toml = store.files(r.id).get("config.toml", b"") if config else b""
        toml = kept_toml.decode("utf-8", "replace")
    metric = metric or r.metric
    if metric not in r.metrics:
        raise InputError(f"history run {r.id} has no metric {metric!r}; it has {list(r.metrics)}")
    shown = {s: format_estimate(kept.estimate(s, metric), metric) for s in r.systems}
    lines = [
        ("run", f"{r.id} ({r.uid})"),
        ("recorded", f"{_when(r.recorded_at)} UTC by ragmeter {r.command} ({r.version})"),
        ("commit", (r.commit + (" (dirty working tree)" if r.dirty else "")) or "no git"),
        ("branch", r.branch or "-"),
        ("results", r.results),
        ("questions", str(r.questions)),
    ]
    lines += [(f"measured: {k}", json.dumps(v)) for k, v in sorted(r.measurement.items())]
    for key, value in lines:
        console.print(Text.assemble((f"{key}: ", "bold"), value))
    level = level_label(kept.estimate(s, metric) for s in r.systems)
    grid = Grid(f"{metric} [{level} interval]", ["system", metric], right={1}, key="systems")
    for s in r.systems:
        grid.rows.append([s, shown[s]])
    print_grids(console, grid)
    if config:
        console.rule("config.toml")
        console.print(toml or "(not kept)", markup=False, highlight=False)


@history_app.command("trend")
@handle_errors
def history_trend(
    system: Annotated[str, typer.Option(help="The system to follow across runs")],
    metric: Annotated[str | None, typer.Option(help="Default: the newest run's metric")] = None,
    branch: BranchFilter = None,
    history: HistoryDir = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the trend as JSON")] = False,
) -> None:
    """The metric across runs with intervals and the paired change between runs.

    Between consecutive comparable runs: the paired difference (by question id), its
    interval and verdict; where the measurement changed, a break (never compared).
    """
    from ragmeter.history.trend import trend

    with _store(history) as store:
        found = trend(store, system, metric, branch=branch)
    metric = found.metric
    if as_json:
        console.print_json(json.dumps(found.to_dict()))
        return
    print_grids(console, _trend_grid(found, system))
    rule = next((c.rule for c in found.changes), None)
    if rule is not None:
        console.print(
            f"[dim]Changes: later - earlier, questions paired by id; {escape(rule.interval)}, "
            f"seed and rounds of the earlier run; each run against the one before it that "
            f"measured the same thing. A break: the measurement (corpus, test set or "
            f"settings) changed, and runs that measured different things are never compared.[/]"
        )


@history_app.command("export")
@handle_errors
def history_export(
    format_: Annotated[str, typer.Option("--format", help="csv or json")] = "csv",
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="File to write (default: print)")
    ] = None,
    scores: Annotated[
        bool,
        typer.Option(
            "--scores", help="Also every run's per-question scores (csv: one row per question)"
        ),
    ] = False,
    system: SystemFilter = None,
    metric: MetricFilter = None,
    branch: BranchFilter = None,
    history: HistoryDir = None,
) -> None:
    """Every recorded run as CSV (one row per run, system and metric) or JSON."""
    from ragmeter.files.outputs import check_output_file, write_output
    from ragmeter.history.trend import export_csv, export_json

    if format_ not in ("csv", "json"):
        raise InputError(f"--format must be csv or json, got {format_!r}")
    if out is not None:
        check_output_file(out, "history export", (), "--out")
    with _store(history) as store:
        runs = store.runs(system=system, metric=metric, branch=branch)
        if format_ == "json":
            rows = export_json(runs, store, scores=scores)
            text = json.dumps(rows, indent=1, allow_nan=False) + "\n"
        else:
            text = export_csv(runs, store, scores=scores)
    if out is None:
        console.file.write(text)
        return
    write_output(out, text, "history export", (), "--out")
    console.print(Text.assemble("Exported: ", (str(out), "bold")))


_KEPT: list = []  # temporary folders of baselines read from the history (removed at exit)


def history_baseline(
    ref: str,
    first: Path,
    second: Path | None,
    system: str,
    metric: str | None,
    history: Path | None = None,
    baseline_system: str | None = None,
) -> tuple[Path, Path, str]:
    """``ragmeter check CANDIDATE --baseline-from-history REF``: the history run ``REF``
    written as a temporary results directory, the candidate's path, and the system's
    name in the candidate (``system`` may be a name it had in earlier runs)."""
    import tempfile

    from ragmeter.history.baseline import recorded_baseline
    from ragmeter.runs.results import Results

    if second is not None:
        raise InputError("with --baseline-from-history give only the candidate's results directory")
    candidate = Results(first)  # a results directory, or its one-line error first
    with _store(history) as store:
        folder = tempfile.TemporaryDirectory(prefix="ragmeter-baseline-")
        _KEPT.append(folder)
        found = recorded_baseline(
            store,
            ref,
            candidate,
            folder.name,
            system=system,
            metric=metric,
            baseline_system=baseline_system,
        )
    run, elsewhere = found.run, found.elsewhere
    where = ", ".join(
        x
        for x in (
            f"commit {_commit(run)}" if run.commit else "",
            f"branch {run.branch}" if run.branch else "",
            f"recorded {_when(run.recorded_at)} UTC",
            "not in the checked-out commit's history: another branch" if elsewhere else "",
        )
        if x
    )
    err.print(Text(f"Baseline: history run {run.id} ({where}; {run.results})"), soft_wrap=True)
    return found.path, first, found.system

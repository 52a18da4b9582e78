"""``ragmeter evaluate``: score run files against qrels, with no corpus."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from ragmeter.cli import search_views as terminal
from ragmeter.cli.app import _csv, _progress, app, console, err, handle_errors, refresh_report
from ragmeter.cli.history import NoHistory, record_run
from ragmeter.formatting import format_estimate
from ragmeter.outputs import check_results_target, results_lock
from ragmeter.qrels import COMPAT_MEASURES


def _listed(ids: list[str], limit: int = 10) -> str:
    shown = ", ".join(escape(i) for i in ids[:limit])
    return shown + (f" and {len(ids) - limit} more" if len(ids) > limit else "")


@app.command()
@handle_errors
def evaluate(
    runs: Annotated[list[Path], typer.Argument(help="TREC run files (or ranx/ir_measures JSON)")],
    qrels: Annotated[Path, typer.Option(help="Judgments: TREC qrels, BEIR qrels TSV or JSON")],
    measures: Annotated[
        str | None,
        typer.Option(
            help="Comma-separated measures (ragmeter or trec_eval names); "
            f"default {','.join(COMPAT_MEASURES)}"
        ),
    ] = None,
    metric: Annotated[
        str | None, typer.Option(help="Measure for paired comparisons (default: the first)")
    ] = None,
    level: Annotated[
        int, typer.Option(help="Lowest grade that counts as relevant (trec_eval -l)")
    ] = 1,
    gain: Annotated[
        str | None, typer.Option(help="nDCG gain: exponential (2^g - 1, default) or linear")
    ] = None,
    ideal: Annotated[
        str, typer.Option(help="nDCG ideal: judged (from the qrels, default) or returned")
    ] = "judged",
    trec_eval_compat: Annotated[
        bool,
        typer.Option(
            "--trec-eval-compat",
            help="trec_eval's tie order, linear gain, judged ideal and measure names",
        ),
    ] = False,
    seed: Annotated[int, typer.Option(help="Bootstrap seed")] = 1,
    rounds: Annotated[int, typer.Option(help="Bootstrap rounds")] = 10_000,
    method: Annotated[str, typer.Option(help="percentile (default) or bca")] = "percentile",
    out: Annotated[Path, typer.Option("--out", "-o", help="Results directory")] = Path(
        "ragmeter-results"
    ),
    no_history: NoHistory = False,
) -> None:
    """Score run files against qrels: intervals, paired comparisons, a results directory."""
    from ragmeter.evaluate import evaluate_files
    from ragmeter.results import save_results
    from ragmeter.summary import summarize_run

    names = _csv(measures) or COMPAT_MEASURES
    inputs = [("qrels", qrels), *(("run file", r) for r in runs)]
    check_results_target(out, inputs)  # before any work
    with _progress() as bar:
        task = bar.add_task("evaluate", total=len(runs))

        def progress(label: str, done: int, total: int) -> None:
            bar.update(task, description=label, completed=done, total=total)

        result = evaluate_files(
            qrels,
            runs,
            names,
            level=level,
            gain=gain,
            ideal=ideal,
            trec_eval_compat=trec_eval_compat,
            metric=metric,
            seed=seed,
            rounds=rounds,
            method=method,
            output=str(out),
            progress=progress,
        )
        bar.update(task, description="intervals", completed=len(runs))
        run = result.run
        summary = summarize_run(run)
        with results_lock(out):
            check_results_target(out, inputs)  # as it is now, under the lock
            path = save_results(run, out, summary, overwrite=True)  # earlier results only
    n_q = len(run.questions)
    console.print(
        f"[bold]{n_q}[/] judged queries, {len(run.systems)} "
        f"run{'s' if len(run.systems) != 1 else ''}"
    )
    if result.no_relevant:
        console.print(
            f"[yellow]{len(result.no_relevant)} judged queries have no relevant document "
            f"(grade >= {level}); they stay in and score 0, as in trec_eval: "
            f"{_listed(result.no_relevant)}[/]"
        )
    for e in result.evaluations:
        if e.missing:
            console.print(
                f"[yellow]{escape(e.name)}: {len(e.missing)} judged queries are not in the run "
                f"and score 0 (as trec_eval -c): {_listed(e.missing)}[/]"
            )
        if e.unjudged:
            console.print(
                f"[yellow]{escape(e.name)}: {len(e.unjudged)} run queries have no judgments and "
                f"are left out: {_listed(e.unjudged)}[/]"
            )
    table = Table(title="Mean over queries [95% interval]", title_justify="left")
    table.add_column("run", style="bold")
    for m in result.measures:
        table.add_column(escape(m), justify="right")
    for system, est in summary.estimates.items():
        table.add_row(
            escape(system),
            *(format_estimate(est[m]) for m in result.measures),  # scale 0-1
        )
    console.print(table)
    if summary.comparisons:
        console.print(terminal.summary_comparisons(summary))
    for system, rows in summary.sample_size.items():
        console.print(terminal.size_table(rows, summary.metric, escape(system)))
    console.print(terminal.interval_note(summary))
    console.print(f"Results: [bold]{escape(str(path))}[/]")
    err.print("[dim]Re-compare or plan from the results: ragmeter compare / plan.[/]")
    record_run(path, "evaluate", None, no_history)
    refresh_report(path)

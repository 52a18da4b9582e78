"""``ragmeter evaluate``: score run files against qrels, with no corpus."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.text import Text

from ragmeter.cli import search_views as terminal
from ragmeter.cli.app import (
    ADJUST_OPTION,
    BASELINE_OPTION,
    PAIRS_OPTION,
    _names,
    _progress,
    app,
    console,
    err,
    handle_errors,
    refresh_report,
)
from ragmeter.cli.history import NoHistory, record_run
from ragmeter.cli.layout import FORMAT_HELP, Grid, check_format, print_grids, render
from ragmeter.cli.rank_views import print_ranks
from ragmeter.comparison.formatting import format_estimate, level_label
from ragmeter.comparison.verdicts import parse_pairs
from ragmeter.defaults import DEFAULTS
from ragmeter.files.outputs import check_results_target, results_lock
from ragmeter.inputs.config import Config
from ragmeter.runs.score_cache import ENV as SCORE_CACHE_ENV
from ragmeter.scoring.names import family
from ragmeter.scoring.trec import COMPAT_MEASURES
from ragmeter.scoring.trec_bytes import give_back_freed_memory


def _queries(n: int, kind: str) -> str:
    """``1 judged query is`` / ``3 judged queries are`` (with ``have``/``has`` for runs)."""
    if kind == "run":
        return f"{n} run {'query has' if n == 1 else 'queries have'}"
    return f"{n} {kind} {'query is' if n == 1 else 'queries are'}"


def _score(n: int) -> str:
    return "scores" if n == 1 else "score"


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
    seed: Annotated[int, typer.Option(help="Bootstrap seed")] = DEFAULTS.seed,
    rounds: Annotated[int, typer.Option(help="Bootstrap rounds")] = DEFAULTS.rounds,
    method: Annotated[str, typer.Option(help="percentile (default) or bca")] = "percentile",
    out: Annotated[Path, typer.Option("--out", "-o", help="Results directory")] = Path(
        "ragmeter-results"
    ),
    no_history: NoHistory = False,
    format_: Annotated[str | None, typer.Option("--format", help=FORMAT_HELP)] = None,
    workers: Annotated[
        int | None,
        typer.Option(
            help="Run files scored at once, each in a worker process (default "
            "$RAGMETER_WORKERS, else 1; 0: one per CPU); the results are the same",
        ),
    ] = None,
    engine: Annotated[
        str, typer.Option(help="local (default: worker processes here) or ray (Ray tasks)")
    ] = "local",
    engine_address: Annotated[
        str,
        typer.Option(
            help='Ray cluster address: "auto" (default: the cluster this machine is in), '
            'ray://HOST:10001, or "" to start Ray here',
        ),
    ] = "auto",
    adjust: Annotated[str, ADJUST_OPTION] = "maxt",
    baseline: Annotated[str | None, BASELINE_OPTION] = None,
    pairs: Annotated[str | None, PAIRS_OPTION] = None,
    report: Annotated[
        bool,
        typer.Option(
            "--report/--no-report",
            help="Write the HTML report (default); --no-report leaves it for `ragmeter "
            "report RESULTS`",
        ),
    ] = True,
) -> None:
    """Score run files against qrels: intervals, paired comparisons, a results directory."""
    from ragmeter.cli.output import to_stderr

    chosen = check_format(format_)
    with to_stderr(chosen):
        _evaluate(
            runs, qrels, measures, metric, level, gain, ideal, trec_eval_compat, seed, rounds,
            method, out, no_history, chosen, (engine, engine_address, workers), report,
            (adjust, baseline or "", _names(pairs, "--pairs", "A:B,C:D") or ()),
        )  # fmt: skip


def _evaluate(
    runs, qrels, measures, metric, level, gain, ideal, trec_eval_compat, seed, rounds, method,
    out, no_history, chosen, where, report=True, family=("maxt", "", ()),
) -> None:  # fmt: skip
    from ragmeter.cli.output import shown_path
    from ragmeter.runs.evaluate import evaluate_files, scoring_engine

    names = _names(measures, "--measures", "map,P_10") or COMPAT_MEASURES
    adjust, baseline, pairs = family
    Config(adjust=adjust, baseline=baseline, pairs=pairs).validate()  # before any work
    if pairs:
        parse_pairs(pairs)
    inputs = [("qrels", qrels), *(("run file", r) for r in runs)]
    check_results_target(out, inputs)  # before any work
    engine = scoring_engine(*where)
    with record_run(out, "evaluate", None, no_history), _progress() as bar:
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
            engine=engine,
            adjust=adjust,
            baseline=baseline,
            pairs=pairs,
        )
        bar.update(task, description="intervals", completed=len(runs))
        summary, path = _save(result.run, out, inputs)
    _print_queries(result, level)
    _print_scores(result, summary, chosen)
    console.print(Text.assemble("Results: ", (shown_path(path), "bold")))
    err.print("[dim]Re-compare or plan from the results: ragmeter compare / plan.[/]")
    del result, summary  # the page reads the saved results: the runs in memory go first
    give_back_freed_memory()
    if report:
        refresh_report(path)
    else:
        err.print(f"[dim]No HTML report (--no-report): ragmeter report {escape(str(path))}[/]")


def _save(run, out: Path, inputs: list) -> tuple:
    """The run's summary, and the results directory it is saved in (replacing earlier
    results only, decided under the lock)."""
    from ragmeter.comparison.summary import summarize_run
    from ragmeter.runs.results import save_results

    summary = summarize_run(run)
    with results_lock(out):
        check_results_target(out, inputs)  # as it is now, under the lock
        path = save_results(run, out, summary, overwrite=True)  # earlier results only
    return summary, path


def _print_queries(result, level: int) -> None:
    """How many queries were judged, and those scored 0 or left out, with their ids."""
    run = result.run
    n_q = len(run.questions)
    console.print(
        f"[bold]{n_q}[/] judged {'query' if n_q == 1 else 'queries'}, {len(run.systems)} "
        f"run{'s' if len(run.systems) != 1 else ''}"
    )
    if result.no_relevant:
        n_none = len(result.no_relevant)
        console.print(
            f"[yellow]{n_none} judged {'query has' if n_none == 1 else 'queries have'} "
            "no relevant document "
            f"(grade >= {level}); they stay in and score 0, as in trec_eval: "
            f"{_listed(result.no_relevant)}[/]"
        )
    if result.from_cache:
        err.print(
            f"[dim]{result.from_cache} of {len(run.systems)} runs read from the score cache "
            f"({escape(result.cache)}), not scored again; {SCORE_CACHE_ENV}=off scores every run[/]"
        )
    for e in result.evaluations:
        if e.missing:
            console.print(
                f"[yellow]{escape(e.name)}: {_queries(len(e.missing), 'judged')} not in the "
                f"run and {_score(len(e.missing))} 0 (as trec_eval -c); ids: "
                f"{_listed(e.missing)}[/]"
            )
        if e.unjudged:
            console.print(
                f"[yellow]{escape(e.name)}: {_queries(len(e.unjudged), 'run')} no judgments "
                f"and {'is' if len(e.unjudged) == 1 else 'are'} left out; ids: "
                f"{_listed(e.unjudged)}[/]"
            )


def _print_scores(result, summary, chosen: str) -> None:
    """Each run's means with intervals, then (as a table) the comparisons and sample
    sizes; in another format, the means alone."""
    from ragmeter.cli.output import emit, print_comparisons

    named = summary.ndcg_label if any(family(m) == "ndcg" for m in result.measures) else ""
    level = level_label(est[m] for est in summary.estimates.values() for m in result.measures)
    grid = Grid(
        f"Mean over queries [{level} interval]" + (f" ({named})" if named else ""),
        ["run", *result.measures],
        right=set(range(1, len(result.measures) + 1)),
        key="estimates",
    )
    for system, est in summary.estimates.items():
        grid.rows.append([system, *(format_estimate(est[m]) for m in result.measures)])  # 0-1
    if chosen != "table":
        records = terminal.estimate_records(summary)
        emit(render([grid], chosen, records, summary.to_json()))
        return
    print_grids(console, grid)
    if summary.comparisons:
        print_comparisons(
            summary.comparisons,
            summary.metric,
            summary.seed,
            summary.rounds,
            summary.comparison_rule,
            ndcg=summary.ndcg_label,
        )
        print_ranks(summary.ranks, console, terminal.terminal_width())
    if summary.sample_size:  # one table, a row per run
        print_grids(console, terminal.sample_sizes_grid(summary.sample_size, summary.metric))
    console.print(terminal.interval_note(summary))

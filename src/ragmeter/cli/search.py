"""Search-route commands: search, demo, chunk, report, compare, plan."""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from ragmeter import chunking, stats
from ragmeter.cli.app import (
    _csv,
    _progress,
    app,
    console,
    err,
    example_dir,
    handle_errors,
    refresh_report,
)
from ragmeter.config import Config, load_config
from ragmeter.corpus import load_corpus
from ragmeter.errors import InputError
from ragmeter.experiment import count_words, run_search
from ragmeter.report import terminal
from ragmeter.results import Results, save_results, summarize_run


def _print_summary(summary: dict, ks: list[int], out: Path | None) -> None:
    console.print(terminal.hit_table(summary, ks))
    console.print(terminal.rank_table(summary))
    if summary["comparisons"]:
        console.print(
            terminal.comparison_table(
                summary["comparisons"], summary["metric"], summary["seed"], summary["rounds"]
            )
        )
    console.print(
        f"[dim]95% percentile bootstrap intervals, seed {summary['seed']}, "
        f"{summary['rounds']} rounds (mulberry32).[/]"
    )
    if out is not None:
        console.print(f"Results: [bold]{out}[/]")


@app.command()
@handle_errors
def search(
    config: Annotated[
        Path | None,
        typer.Argument(help="ragmeter.toml (default: ./ragmeter.toml, else the shipped example)"),
    ] = None,
    corpus: Annotated[
        str | None, typer.Option(help="Folder, .jsonl, BEIR folder or SQuAD .json")
    ] = None,
    testset: Annotated[
        str | None,
        typer.Option(help="Test set: .jsonl, Chroma .csv, SQuAD .json, BEIR folder or topics"),
    ] = None,
    qrels: Annotated[
        str | None,
        typer.Option(help="Qrels (TREC or BEIR TSV): the answer key for --testset topics"),
    ] = None,
    strategies: Annotated[str | None, typer.Option(help="Comma-separated strategy names")] = None,
    retrievers: Annotated[str | None, typer.Option(help="Comma-separated retriever kinds")] = None,
    ks: Annotated[str | None, typer.Option(help="Comma-separated k values, e.g. 1,3,5,10")] = None,
    metric: Annotated[str | None, typer.Option(help="Metric for paired comparisons")] = None,
    seed: Annotated[int | None, typer.Option(help="Bootstrap seed (default 1)")] = None,
    rounds: Annotated[int | None, typer.Option(help="Bootstrap rounds (default 10000)")] = None,
    method: Annotated[str | None, typer.Option(help="percentile (default) or bca")] = None,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Results directory")] = None,
) -> None:
    """Score every chunking strategy x retriever on the test set."""
    if config is None and Path("ragmeter.toml").is_file():
        config = Path("ragmeter.toml")
    cfg = load_config(config) if config is not None else Config()
    if not cfg.corpus and corpus is None:
        ex = example_dir()
        cfg = cfg.with_overrides(corpus=str(ex / "posts"), testset=str(ex / "questions.jsonl"))
        err.print("[dim]No config or corpus given: running the shipped example.[/]")
    cfg = cfg.with_overrides(
        corpus=corpus,
        testset=testset,
        qrels=qrels,
        strategies=_csv(strategies),
        retrievers=_csv(retrievers),
        ks=tuple(int(k) for k in _csv(ks)) if ks else None,
        metric=metric,
        seed=seed,
        rounds=rounds,
        method=method,
        output=str(out) if out else None,
    ).validate()
    with _progress() as bar:
        task = bar.add_task("search", total=1)

        def progress(label: str, done: int, total: int) -> None:
            bar.update(task, description=label, completed=done, total=total)

        run = run_search(cfg, progress=progress)
        bar.update(task, description="intervals")
        systems = [s.name for s in run.systems]
        summary = summarize_run(run)
        path = save_results(run, cfg.output, summary)
    console.print(
        f"[bold]{len(run.questions)}[/] questions, [bold]{len(run.documents)}[/] "
        f"documents, {len(systems)} systems"
    )
    for note in run.testset.notes:
        console.print(f"[yellow]{escape(note)}[/]")
    _print_summary(summary, list(cfg.ks), path)
    refresh_report(path)


@app.command()
@handle_errors
def report(
    results: Annotated[Path, typer.Argument(help="A results directory")],
    out: Annotated[Path | None, typer.Option("--out", "-o", help="HTML file to write")] = None,
    open_: Annotated[bool, typer.Option("--open", help="Open it in the browser")] = False,
) -> None:
    """Write one self-contained HTML report (opens offline) of a results directory."""
    from ragmeter.report.html import write_report

    path = write_report(results, out)
    console.print(f"Report: [bold]{path}[/]")
    if open_:
        import webbrowser

        webbrowser.open(path.resolve().as_uri())


@app.command()
@handle_errors
def demo(out: Annotated[Path, typer.Option("--out", "-o")] = Path("ragmeter-results")) -> None:
    """Run the search on the shipped example (25 blog posts, 135 reader-style questions)."""
    search(config=None, out=out)


@app.command()
@handle_errors
def chunk(
    corpus: Annotated[
        Path | None, typer.Argument(help="A file or folder (default: the example)")
    ] = None,
    strategy: Annotated[str, typer.Option("--strategy", "-s")] = "recursive",
    doc: Annotated[str | None, typer.Option(help="Show the chunks of this document id")] = None,
    show: Annotated[int, typer.Option(help="How many sample chunks to print")] = 3,
) -> None:
    """Show what a strategy makes of a corpus: counts, sizes and a sample."""
    corpus = corpus or example_dir() / "posts"
    docs = load_corpus(corpus)
    if doc is not None:
        docs = [d for d in docs if d.id == doc]
        if not docs:
            raise InputError(f"{corpus}: no document with id {doc!r}")
    strat = chunking.make_strategy(strategy)
    chunked = chunking.chunk_corpus(docs, strat)
    sizes = [count_words(c.text) for c in chunked.items]
    table = Table(title=f"{strategy}: {len(docs)} documents", title_justify="left")
    for col in ("items", "min words", "median", "max words", "total words"):
        table.add_column(col, justify="right")
    table.add_row(
        str(len(sizes)),
        str(min(sizes)),
        f"{statistics.median(sizes):.0f}",
        str(max(sizes)),
        str(sum(sizes)),
    )
    console.print(table)
    if chunked.parents is not None:
        console.print(
            f"{len(chunked.chunks)} child chunks are matched; "
            f"{len(chunked.parents)} parent sections are returned."
        )
    for c in chunked.items[:show]:
        console.rule(f"{c.doc_id} [{c.start}:{c.end}] {count_words(c.text)} words")
        console.print(
            c.text if len(c.text) < 600 else c.text[:600] + " …", highlight=False, markup=False
        )


def _run_settings(
    res: Results, metric: str | None, seed: int | None, rounds: int | None
) -> tuple[str, int, int]:
    """Metric, seed and rounds: as given, else as the saved run used them."""
    return (
        metric or res.summary.get("metric", "recall@5"),
        seed if seed is not None else res.meta.get("seed", 1),
        rounds or res.meta.get("rounds", 10_000),
    )


@app.command()
@handle_errors
def compare(
    results: Annotated[Path, typer.Argument(help="A results directory")],
    metric: Annotated[str | None, typer.Option(help="Default: the run's metric")] = None,
    a: Annotated[str | None, typer.Option("--a", help="First system (default: all pairs)")] = None,
    b: Annotated[str | None, typer.Option("--b", help="Second system")] = None,
    seed: Annotated[int | None, typer.Option()] = None,
    rounds: Annotated[int | None, typer.Option()] = None,
) -> None:
    """Paired comparisons from a saved results directory (no search is re-run)."""
    res = Results(results)
    metric, seed, rounds = _run_settings(res, metric, seed, rounds)
    if (a is None) != (b is None):
        raise InputError("give both --a and --b, or neither to compare all pairs")
    systems = [a, b] if a else res.systems
    matrix = res.matrix(metric, systems)
    comps = [c.to_dict() for c in stats.compare_all(matrix, systems, rounds=rounds, seed=seed)]
    console.print(terminal.comparison_table(comps, metric, seed, rounds))


@app.command()
@handle_errors
def plan(
    results: Annotated[Path, typer.Argument(help="A results directory")],
    metric: Annotated[str | None, typer.Option(help="Default: the run's metric")] = None,
    half_width: Annotated[float, typer.Option(help="Target ± half-width, e.g. 0.04")] = 0.04,
    difference: Annotated[float, typer.Option(help="Paired difference to separate")] = 0.05,
    system: Annotated[str | None, typer.Option(help="One system (default: all)")] = None,
    seed: Annotated[int | None, typer.Option()] = None,
    rounds: Annotated[int | None, typer.Option()] = None,
) -> None:
    """How many questions would settle it: intervals at n, 2n, 4n, 8n and targets."""
    res = Results(results)
    metric, seed, rounds = _run_settings(res, metric, seed, rounds)
    systems = [system] if system else res.systems
    need = Table(title=f"Questions needed on {metric}", title_justify="left")
    need.add_column("system")
    need.add_column(f"for ± {half_width * 100:g} points", justify="right")
    for s in systems:
        scores = res.scores(s, metric)
        console.print(
            terminal.size_table(
                [r.to_dict() for r in stats.sample_size(scores, rounds=rounds, seed=seed)],
                metric,
                s,
            )
        )
        need.add_row(s, str(stats.questions_for_half_width(scores, half_width)))
    console.print(need)
    if len(systems) > 1:
        sep = Table(
            title=f"Questions needed to separate a {difference * 100:g}-point paired "
            f"difference (95%, power 0.8)",
            title_justify="left",
        )
        for col in ("A", "B", "questions"):
            sep.add_column(col)
        for i, sa in enumerate(systems):
            for sb in systems[i + 1 :]:
                n = stats.questions_to_separate(
                    res.scores(sa, metric), res.scores(sb, metric), difference
                )
                sep.add_row(sa, sb, str(n))
        console.print(sep)

"""Search-route commands: search, demo, chunk, report, compare, plan."""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from ragmeter import checks, chunking
from ragmeter.cli import search_views as terminal
from ragmeter.cli.app import (
    REPORT_STATUS,
    AccuracyJudge,
    _csv,
    _ints,
    app,
    console,
    example_dir,
    handle_errors,
    hint,
    judge_name,
    plural,
    refresh_report,
    warn,
)
from ragmeter.cli.history import NoHistory, record_run
from ragmeter.cli.progress import status, step_bar
from ragmeter.comparison import compare_run
from ragmeter.config import Config, check_seed, load_config
from ragmeter.corpus import load_corpus
from ragmeter.errors import InputError
from ragmeter.experiment import count_words, resolve_strategies, run_search
from ragmeter.outputs import check_results_target
from ragmeter.planning import plan_questions
from ragmeter.results import Results, save_results
from ragmeter.summary import Summary, summarize_run

_ADJUST = typer.Option(
    help="holm (default): Holm over the table's pairs; maxt: step-down max-T over the "
    "same pairs (more power when pairs share questions); none: the seed's per-pair rule"
)
_BASELINE = typer.Option(help="Compare every system with this one (m - 1 pairs)")
_PAIRS = typer.Option(help="Only these planned comparisons, e.g. A:B,C:D")


def _print_summary(summary: Summary, ks: list[int], out: Path | None) -> None:
    console.print(terminal.hit_table(summary, ks))
    console.print(terminal.rank_table(summary))
    if summary.comparisons:
        console.print(terminal.summary_comparisons(summary))
    console.print(terminal.interval_note(summary))
    if out is not None:
        console.print(Text.assemble("Results: ", (str(out), "bold")))


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
    adjust: Annotated[str | None, _ADJUST] = None,
    baseline: Annotated[str | None, _BASELINE] = None,
    pairs: Annotated[str | None, _PAIRS] = None,
    engine: Annotated[
        str | None, typer.Option(help="local (default) or ray: where chunking and encoding run")
    ] = None,
    no_history: NoHistory = False,
) -> None:
    """Score every chunking strategy x retriever on the test set."""
    if config is None and Path("ragmeter.toml").is_file():
        config = Path("ragmeter.toml")
    cfg = load_config(config) if config is not None else Config()
    if not cfg.corpus and corpus is None:
        ex = example_dir()
        cfg = cfg.with_overrides(corpus=str(ex / "posts"), testset=str(ex / "questions.jsonl"))
        hint("No config or corpus given: running the shipped example.")
    cfg = cfg.with_overrides(
        corpus=corpus,
        testset=testset,
        qrels=qrels,
        strategies=_csv(strategies),
        retrievers=_csv(retrievers),
        ks=_ints(ks, "--ks"),
        metric=metric,
        seed=seed,
        rounds=rounds,
        method=method,
        output=str(out) if out else None,
        engine=engine,
        adjust=adjust,
        baseline=baseline,
        pairs=_csv(pairs),
    )
    if baseline:
        cfg = cfg.with_overrides(pairs=())
    elif pairs:
        cfg = cfg.with_overrides(baseline="")
    cfg = cfg.validate()
    # before the (slow) search: refuse an --out that is not ours, or that holds the inputs
    check_results_target(cfg.output, (("corpus", cfg.corpus), ("test set", cfg.testset)))
    with step_bar("loading corpus and questions") as progress:
        run = run_search(cfg, progress=progress)
        progress("intervals", 0, 1)
        systems = [s.name for s in run.systems]
        summary = summarize_run(run)
        # replace earlier results (decided under the lock); anything else is refused
        path = save_results(run, cfg.output, summary, overwrite=True)
    for line in checks.run_warnings(run):
        warn(line)
    console.print(
        f"[bold]{plural(len(run.questions), 'question')}[/], "
        f"[bold]{plural(len(run.documents), 'document')}[/], {plural(len(systems), 'system')}"
    )
    for note in run.testset.notes:
        console.print(f"[yellow]{escape(note)}[/]")
    _print_summary(summary, list(cfg.ks), path)
    record_run(path, "search", config, no_history)
    refresh_report(path)


@app.command()
@handle_errors
def report(
    results: Annotated[Path, typer.Argument(help="A results directory")],
    out: Annotated[Path | None, typer.Option("--out", "-o", help="HTML file to write")] = None,
    open_: Annotated[bool, typer.Option("--open", help="Open it in the browser")] = False,
    accuracy_judge: AccuracyJudge = None,
) -> None:
    """Write one self-contained HTML report (opens offline) of a results directory."""
    from ragmeter.report.html import write_report

    with status(REPORT_STATUS):
        path = write_report(results, out, accuracy_judge=judge_name(accuracy_judge))
    console.print(Text.assemble("Report: ", (str(path), "bold")))
    if open_:
        import webbrowser

        webbrowser.open(path.resolve().as_uri())


@app.command()
@handle_errors
def demo(out: Annotated[Path, typer.Option("--out", "-o")] = Path("ragmeter-results")) -> None:
    """Run the search on the shipped example (25 blog posts, 135 reader-style questions)."""
    search(config=None, out=out)


def _strategy_sizes(describe: dict) -> str:
    """``size 200 words``, ``parents 400 / children 100 words``, ``whole documents``."""
    params = {k: v for k, v in describe.items() if k not in ("name", "kind")}
    if describe.get("kind") == "whole":
        return "whole documents"
    if "parent_size" in params:
        return f"parents {params['parent_size']} / children {params['child_size']} words"
    if "size" in params and "overlap" in params:
        return f"{params['size']} words, {params['overlap']} shared"
    if "size" in params and describe.get("kind") in chunking.KINDS:
        return f"{params['size']} words"
    return ", ".join(f"{k}={v}" for k, v in params.items())


def strategy_table(cfg: Config) -> Table:
    """Every built-in strategy and every one the config defines, with its size in words."""
    table = Table(title="Chunking strategies (sizes in words)", title_justify="left")
    for col in ("name", "kind", "size", "from"):
        table.add_column(col)
    for name, strat in chunking.STRATEGIES.items():
        d = strat.describe()
        table.add_row(name, d["kind"], _strategy_sizes(d), "built in")
    for spec in cfg.custom_strategies:
        d = {k: v for k, v in spec.items()}
        table.add_row(
            escape(str(d.get("name"))),
            escape(str(d.get("kind", "?"))),
            escape(_strategy_sizes(d)),
            "ragmeter.toml",
        )
    return table


@app.command()
@handle_errors
def chunk(
    corpus: Annotated[
        Path | None,
        typer.Argument(
            help="A file or folder (default: the config's corpus, else the example)",
            show_default=False,
        ),
    ] = None,
    strategy: Annotated[
        str, typer.Option("--strategy", "-s", help="A built-in or a \\[\\[strategy]] of the config")
    ] = "recursive",
    config: Annotated[
        Path | None,
        typer.Option(
            "--config", "-c", help="ragmeter.toml (default: ./ragmeter.toml)", metavar="PATH"
        ),
    ] = None,
    doc: Annotated[
        str | None, typer.Option(help="Show the chunks of this document id", metavar="ID")
    ] = None,
    show: Annotated[int, typer.Option(help="How many sample chunks to print", metavar="N")] = 3,
    list_: Annotated[
        bool, typer.Option("--list", help="List the strategies and their sizes in words")
    ] = False,
) -> None:
    """Show what a strategy makes of a corpus: counts, sizes and a sample."""
    if config is None and Path("ragmeter.toml").is_file():
        config = Path("ragmeter.toml")
    cfg = load_config(config) if config is not None else Config()
    if list_:
        console.print(strategy_table(cfg))
        return
    corpus_format = "auto"
    if corpus is None and cfg.corpus:
        corpus, corpus_format = Path(cfg.corpus), cfg.corpus_format
    elif corpus is None:
        corpus = example_dir() / "posts"
    docs = load_corpus(corpus, corpus_format)
    if doc is not None:
        docs = [d for d in docs if d.id == doc]
        if not docs:
            raise InputError(f"{corpus}: no document with id {doc!r}")
    (strat,) = resolve_strategies(cfg.with_overrides(strategies=(strategy,)))
    chunked = chunking.chunk_corpus(docs, strat)
    sizes = [count_words(c.text) for c in chunked.items]
    if not sizes:
        raise InputError(f"{corpus}: strategy {strategy!r} makes no chunks (empty documents?)")
    table = Table(
        title=f"{escape(strategy)}: {plural(len(docs), 'document')}", title_justify="left"
    )
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
        console.rule(
            f"{escape(c.doc_id)} [{c.start}:{c.end}] {plural(count_words(c.text), 'word')}"
        )
        console.print(
            c.text if len(c.text) < 600 else c.text[:600] + " …", highlight=False, markup=False
        )


def _run_settings(
    res: Results, metric: str | None, seed: int | None, rounds: int | None
) -> tuple[str, int, int]:
    """Metric, seed and rounds: as given, else as the saved run used them."""
    if seed is not None:
        check_seed(seed, "--seed")
    if rounds is not None and rounds < 100:
        raise InputError(f"--rounds must be at least 100 (10000 is the default), got {rounds}")
    return (
        metric or res.summary.metric,
        seed if seed is not None else res.summary.seed,
        rounds or res.summary.rounds,
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
    adjust: Annotated[str | None, _ADJUST] = None,
    baseline: Annotated[str | None, _BASELINE] = None,
    pairs: Annotated[str | None, _PAIRS] = None,
) -> None:
    """Paired comparisons from a saved results directory (no search is re-run).

    One pair (--a, --b) is a family of one: its p-value is not adjusted.
    """
    res = Results(results)
    _run_settings(res, metric, seed, rounds)  # checks --seed and --rounds
    plan = res.comparison_plan.choose(
        a, b, metric=metric, seed=seed, rounds=rounds, adjust=adjust, baseline=baseline, pairs=pairs
    )
    table = compare_run(res, plan)
    metric, seed, rounds = plan.metric, plan.seed, plan.rounds
    console.print(terminal.comparison_table(table.rows, metric, seed, rounds, table.rule))


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
    found = plan_questions(
        res,
        metric,
        half_width=half_width,
        difference=difference,
        systems=[system] if system else None,
        seed=seed,
        rounds=rounds,
    )
    share = terminal._is_share(metric)
    unit = "points" if share else ""
    scale = 100 if share else 1
    need = Table(title=f"Questions needed on {metric}", title_justify="left")
    need.add_column("system")
    need.add_column(f"for ± {half_width * scale:g} {unit}".rstrip(), justify="right")
    flat: dict[str, list[str]] = {}
    for s in found.systems:
        console.print(terminal.size_table(s.sizes, metric, s.system))
        if s.needed is None:
            flat.setdefault(f"{s.constant * scale:g}{'%' if share else ''}", []).append(s.system)
            need.add_row(escape(s.system), "no spread")
        else:
            need.add_row(escape(s.system), str(s.needed))
    console.print(need)
    for shown, names in flat.items():
        warn(
            f"{', '.join(names)} {'scores' if len(names) == 1 else 'score'} {shown} on every "
            f"question: {metric} has no spread, so no number of questions narrows it "
            f"(more varied questions would)"
        )
    if found.pairs:
        sep = Table(
            title=f"Questions needed to separate a paired difference of "
            f"{difference * scale:g}{' points' if share else ''} (95%, power 0.8)",
            title_justify="left",
        )
        for col in ("A", "B", "questions"):
            sep.add_column(col)
        for pair in found.pairs:
            if pair.needed is not None:
                cell = str(pair.needed)
            else:
                cell = "identical" if pair.identical else "constant difference"
            sep.add_row(escape(pair.a), escape(pair.b), cell)
        console.print(sep)
        same = [(p.a, p.b) for p in found.pairs if p.identical]
        if same:
            pairs = ", ".join(f"{a} = {b}" for a, b in same[:6])
            more = f" and {plural(len(same) - 6, 'more pair')}" if len(same) > 6 else ""
            warn(
                f"{plural(len(same), 'pair')} of systems score the same on every question "
                f"({pairs}{more}): no number of questions separates them"
            )

"""The ``ragmeter`` command: a thin layer that parses arguments, calls the library, prints."""

from __future__ import annotations

import functools
import statistics
import sys
from importlib.resources import files
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from ragmeter import chunking, stats
from ragmeter.config import Config, load_config
from ragmeter.corpus import load_corpus
from ragmeter.errors import InputError, RagmeterError
from ragmeter.experiment import count_words, run_search
from ragmeter.report import terminal
from ragmeter.results import Results, save_results, summarize_run

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
        str | None, typer.Option(help="Test set: .jsonl, Chroma .csv or SQuAD .json")
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
    _print_summary(summary, list(cfg.ks), path)
    refresh_report(path)


def refresh_report(results: Path) -> None:
    """Rewrite the HTML report of a results directory, when the report extra is installed."""
    from ragmeter.report.html import ReportDependencyError, write_report

    try:
        path = write_report(results)
    except ReportDependencyError:
        console.print("[dim]HTML report: pip install 'ragmeter\\[report]'; then ragmeter report[/]")
        return
    console.print(f"Report: [bold]{path}[/]")


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


ModelOptions = Annotated[
    list[str] | None, typer.Option("--option", help="Backend option KEY=VALUE (repeatable)")
]
Systems = Annotated[str | None, typer.Option(help="Comma-separated systems (default: all)")]
Limit = Annotated[int | None, typer.Option(help="Only the first N questions")]
Concurrency = Annotated[int, typer.Option(help="Model calls at once")]
MaxTokens = Annotated[int, typer.Option(help="Longest reply, in tokens")]
Timeout = Annotated[float, typer.Option(help="Seconds per call")]
ReplyCachePath = Annotated[Path | None, typer.Option(help="Reply cache (default in answers/)")]


@app.command()
@handle_errors
def answer(
    results: Annotated[Path, typer.Argument(help="A results directory")],
    reader: Annotated[str, typer.Option(help="ollama:NAME, openai:NAME or gguf:PATH")],
    k: Annotated[int, typer.Option(help="Items given to the reader")] = 5,
    systems: Systems = None,
    limit: Limit = None,
    concurrency: Concurrency = 4,
    option: ModelOptions = None,
    max_tokens: MaxTokens = 256,
    timeout: Timeout = 120.0,
    cache: ReplyCachePath = None,
) -> None:
    """A reader model answers each question from its top k items (cached, resumable)."""
    from ragmeter.answers import answer_command

    answer_command(
        results,
        reader,
        k=k,
        systems=systems,
        limit=limit,
        concurrency=concurrency,
        options=option,
        max_tokens=max_tokens,
        timeout_s=timeout,
        cache=cache,
        console=console,
        progress_console=err,
    )


@app.command()
@handle_errors
def grade(
    results: Annotated[Path, typer.Argument(help="A results directory with answers")],
    judge: Annotated[
        list[str], typer.Option(help="Judge spec (repeatable; the first gives accuracy)")
    ],
    systems: Systems = None,
    limit: Limit = None,
    concurrency: Concurrency = 4,
    option: ModelOptions = None,
    max_tokens: MaxTokens = 256,
    timeout: Timeout = 120.0,
    cache: ReplyCachePath = None,
) -> None:
    """Judge models grade each answer correct / partial / wrong against the answer key."""
    from ragmeter.answers import grade_command

    grade_command(
        results,
        judge,
        systems=systems,
        limit=limit,
        concurrency=concurrency,
        options=option,
        max_tokens=max_tokens,
        timeout_s=timeout,
        cache=cache,
        console=console,
        progress_console=err,
    )
    refresh_report(results)


@app.command()
@handle_errors
def judges(
    results: Annotated[Path, typer.Argument(help="A results directory with grades")],
) -> None:
    """Agreement (percent, kappa) and leniency of every pair of judges, and of the hand grades."""
    from ragmeter.answers import judges_command

    judges_command(results, console=console)


@app.command()
@handle_errors
def handgrade(
    results: Annotated[Path, typer.Argument(help="A results directory with answers")],
    n: Annotated[int, typer.Option(help="How many answers to grade")] = 20,
    seed: Annotated[int, typer.Option(help="Seed of the random sample")] = 1,
) -> None:
    """Grade a seeded random sample of answers by hand: c / p / w, s to skip, q to stop."""
    from ragmeter.answers import handgrade_command

    handgrade_command(results, n=n, seed=seed, console=console)
    refresh_report(results)


questions_app = typer.Typer(
    help="Generate, audit and compare test questions.", no_args_is_help=True
)
app.add_typer(questions_app, name="questions")


@questions_app.command("generate")
@handle_errors
def questions_generate(
    corpus: Annotated[Path, typer.Argument(help="Corpus: folder, .jsonl, BEIR or SQuAD")],
    model: Annotated[
        str, typer.Option("--model", "-m", help="gguf:PATH, ollama:NAME or openai:NAME")
    ],
    out: Annotated[Path, typer.Option("--out", "-o")] = Path("generated.jsonl"),
    testset: Annotated[
        Path | None, typer.Option(help="Ask about this test set's answer passages")
    ] = None,
    sample: Annotated[int | None, typer.Option(help="Or sample N passages from the corpus")] = None,
    limit: Annotated[int | None, typer.Option(help="Seeded subset of N passages")] = None,
    seed: int = 0,
    cache: Annotated[
        Path | None, typer.Option(help="Reply cache (default <out>.llm-cache.sqlite)")
    ] = None,
    model_option: Annotated[
        list[str] | None,
        typer.Option("--model-option", help="KEY=VALUE, e.g. chat_format=gemma"),
    ] = None,
) -> None:
    """Write one question per passage with a chat model (cached, resumable)."""
    from ragmeter.questions import generate_command, parse_options

    with _progress() as bar:
        task = bar.add_task("questions", total=None)
        result = generate_command(
            corpus,
            out,
            model,
            testset_path=testset,
            sample=sample,
            limit=limit,
            seed=seed,
            cache_path=cache,
            backend_options=parse_options(model_option),
            progress=lambda done, total, reply: bar.update(task, completed=done, total=total),
        )
    console.print(
        f"{len(result.testset)} questions -> {out}; {result.testset.skipped} skipped "
        f"{result.skip_reasons() or ''}; {result.calls} model calls, {result.cache_hits} cached"
    )


@questions_app.command("audit")
@handle_errors
def questions_audit(
    testset: Annotated[Path, typer.Argument(help="The test set to audit")],
    corpus: Annotated[Path, typer.Option(help="The corpus the answer spans point into")],
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Folder (default: the test set's)")
    ] = None,
    results: Annotated[
        Path | None,
        typer.Option(
            help="A results directory scored on this test set: write the flags "
            "into it (audit/flags.jsonl) and refresh its report"
        ),
    ] = None,
    name: str = "audit",
    llm: Annotated[str | None, typer.Option(help="Model for misstatement/context checks")] = None,
    checks: str = "misstated,context",
    model_option: Annotated[list[str] | None, typer.Option("--model-option")] = None,
    seed: int = 1,
    rounds: int = 10_000,
) -> None:
    """Flag copied, restated, context-dependent, misstated and duplicate questions."""
    from ragmeter.questions import audit_command, audit_table, parse_options

    if results is not None:
        Results(results)  # fail early if it is not a results directory
        out, name = results / "audit", "flags"
    flagged, summary, paths = audit_command(
        testset,
        corpus,
        out,
        llm,
        name=name,
        llm_checks=_csv(checks) or (),
        backend_options=parse_options(model_option),
        seed=seed,
        rounds=rounds,
    )
    console.print(audit_table(flagged, summary))
    console.print("Written: " + ", ".join(str(p) for p in paths))
    if results is not None:
        refresh_report(results)


@questions_app.command("compare")
@handle_errors
def questions_compare(
    a: Annotated[Path, typer.Argument(help="Reader-written test set")],
    b: Annotated[Path, typer.Argument(help="Generated test set (same passages)")],
    corpus: Annotated[str | None, typer.Option()] = None,
    config: Annotated[Path | None, typer.Option()] = None,
    audit: Annotated[
        Path | None, typer.Option(help="Audit .jsonl of B (default: a rule audit now)")
    ] = None,
    metric: str | None = None,
    strategies: str | None = None,
    retrievers: str | None = None,
    seed: int | None = None,
    rounds: int | None = None,
) -> None:
    """Score both sets on the same passages: paired intervals, and B without unfit questions."""
    from ragmeter.questions import compare_command, compare_table

    result = compare_command(
        a,
        b,
        corpus,
        config,
        audit,
        metric=metric,
        strategies=_csv(strategies),
        retrievers=_csv(retrievers),
        seed=seed,
        rounds=rounds,
    )
    console.print(compare_table(result))


def main() -> None:
    """Console entry point."""
    try:
        app()
    except KeyboardInterrupt:
        err.print("interrupted")
        sys.exit(130)


if __name__ == "__main__":
    main()

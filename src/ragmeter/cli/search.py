"""Search-route commands: search, demo, chunk, report, compare, plan."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.text import Text

from ragmeter.chunking import strategies as chunking
from ragmeter.cli import search_views as terminal
from ragmeter.cli.app import ADJUST_OPTION as _ADJUST
from ragmeter.cli.app import BASELINE_OPTION as _BASELINE
from ragmeter.cli.app import FAMILY_OPTION as _FAMILY
from ragmeter.cli.app import PAIRS_OPTION as _PAIRS
from ragmeter.cli.app import (
    REPORT_STATUS,
    AccuracyJudge,
    ModelOptions,
    _ints,
    _names,
    app,
    console,
    example_dir,
    handle_errors,
    hint,
    in_points,
    judge_name,
    model_options,
    plural,
    points,
    refresh_report,
    warn,
)
from ragmeter.cli.history import NoHistory, record_run
from ragmeter.cli.layout import FORMAT_HELP, Grid, check_format, print_grids, render
from ragmeter.cli.output import (
    emit,
    print_comparisons,
    print_tables,
    shown_path,
    summary_text,
    to_stderr,
)
from ragmeter.cli.plan_views import (
    effects_family_size,
    grid_family,
    most_needed,
    pair_need_grid,
    plan_text,
    planned_pairs,
)
from ragmeter.cli.progress import status, step_bar
from ragmeter.cli.rank_views import print_ranks, ranks_grid, shows_ranks
from ragmeter.comparison.effects import averaged_scores
from ragmeter.comparison.families import check_config_family
from ragmeter.comparison.ranks import rank_run
from ragmeter.comparison.summary import Summary, summarize_run
from ragmeter.comparison.systems import compare_run
from ragmeter.defaults import DEFAULTS
from ragmeter.errors import InputError, did_you_mean
from ragmeter.files.outputs import check_results_target
from ragmeter.inputs.config import Config, check_family, check_seed, load_config, one_family
from ragmeter.runs import warnings as checks
from ragmeter.runs.pipeline import run_search
from ragmeter.runs.results import Results, save_results
from ragmeter.scoring.metrics import find_metric, is_share
from ragmeter.scoring.names import difference_scale
from ragmeter.stats.planning import Plan, cluster_sentence, plan_run

_CLUSTERS = typer.Option(
    help="Questions sharing a document: auto (default: cluster-aware when the design effect "
    "is measurably above 1 with enough documents), none (question-level, the seed's numbers), "
    "document (always, by answer document) or field (always, by the test set's cluster field)"
)
_FORMAT = typer.Option("--format", help=FORMAT_HELP, metavar="FORMAT")
_ALL = typer.Option("--all", help="Print every pair (a long table lists the decisive ones first)")


def _print_summary(summary: Summary, ks: list[int], out: Path | None, every: bool = False) -> None:
    print_grids(console, terminal.hit_grid(summary, ks), terminal.rank_grid(summary))
    if summary.comparisons:
        print_comparisons(
            summary.comparisons,
            summary.metric,
            summary.seed,
            summary.rounds,
            summary.comparison_rule,
            every=every,
            ndcg=summary.ndcg_label,
        )
        print_ranks(summary.ranks, console, terminal.terminal_width())
    console.print(terminal.interval_note(summary))
    if out is not None:
        console.print(Text.assemble("Results: ", (shown_path(out), "bold")))


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
    seed: Annotated[
        int | None, typer.Option(help=f"Bootstrap seed (default {DEFAULTS.seed})")
    ] = None,
    rounds: Annotated[
        int | None, typer.Option(help=f"Bootstrap rounds (default {DEFAULTS.rounds})")
    ] = None,
    method: Annotated[str | None, typer.Option(help="percentile (default) or bca")] = None,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Results directory")] = None,
    adjust: Annotated[str | None, _ADJUST] = None,
    baseline: Annotated[str | None, _BASELINE] = None,
    pairs: Annotated[str | None, _PAIRS] = None,
    clusters: Annotated[str | None, _CLUSTERS] = None,
    family: Annotated[str | None, _FAMILY] = None,
    engine: Annotated[
        str | None, typer.Option(help="local (default) or ray: where chunking and encoding run")
    ] = None,
    no_history: NoHistory = False,
    format_: Annotated[str | None, _FORMAT] = None,
    every: Annotated[bool, _ALL] = False,
) -> None:
    """Score every chunking strategy x retriever on the test set."""
    chosen = check_format(format_)
    if config is None and Path("ragmeter.toml").is_file():
        config = Path("ragmeter.toml")
    cfg = _base_config(config, corpus)
    cfg = cfg.with_overrides(
        corpus=corpus,
        testset=testset,
        qrels=qrels,
        strategies=_names(strategies, "--strategies", "fixed,sentence"),
        retrievers=_names(retrievers, "--retrievers", "bm25,dense"),
        ks=_ints(ks, "--ks"),
        metric=metric,
        seed=seed,
        rounds=rounds,
        method=method,
        output=str(out) if out else None,
        engine=engine,
        adjust=adjust,
        baseline=baseline,
        pairs=_names(pairs, "--pairs", "A:B,C:D"),
        clusters=clusters,
        family=family,
    )
    cfg = _chosen_family(cfg, family, baseline, pairs).validate()
    check_strategy_names(cfg)
    check_config_family(cfg)
    # before the (slow) search: refuse an --out that is not ours, or that holds the inputs
    check_results_target(cfg.output, (("corpus", cfg.corpus), ("test set", cfg.testset)))
    with to_stderr(chosen):
        path = _run_and_print(cfg, config, no_history, chosen, every)
        refresh_report(path)


def _base_config(config: Path | None, corpus: str | None) -> Config:
    """The config file's settings, or the defaults; the shipped example's corpus and
    questions when neither it nor ``--corpus`` names a corpus."""
    cfg = load_config(config) if config is not None else Config()
    if not cfg.corpus and corpus is None:
        ex = example_dir()
        cfg = cfg.with_overrides(corpus=str(ex / "posts"), testset=str(ex / "questions.jsonl"))
        hint(
            f"{shown_path(config)} names no corpus: running the shipped example."
            if config is not None
            else "No config or corpus given: running the shipped example."
        )
    return cfg


def _chosen_family(
    cfg: Config, family: str | None, baseline: str | None, pairs: str | None
) -> Config:
    """The family given on the command line (a grid family, a baseline or pairs) in
    place of the config's."""
    if family is not None:  # given, even empty: the flag is named, not the config
        check_family(family, "--family")
    one_family(family, baseline, pairs)
    if baseline:
        cfg = cfg.with_overrides(pairs=())
    elif pairs:
        cfg = cfg.with_overrides(baseline="")
    if family:  # the family chosen here replaces the config's baseline or pairs
        cfg = cfg.with_overrides(baseline="", pairs=())
    elif baseline or pairs:  # as a baseline or pairs replace the config's family
        cfg = cfg.with_overrides(family="auto")
    return cfg


def _run_and_print(cfg: Config, config: Path | None, no_history: bool, chosen: str, every: bool):
    """Run the search, save it and print its tables; the results directory."""
    with (
        record_run(cfg.output, "search", config, no_history),
        step_bar("loading corpus and questions") as progress,
    ):
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
    if chosen == "table":
        _print_summary(summary, list(cfg.ks), path, every)
    else:
        emit(summary_text(summary, list(cfg.ks), chosen))
        console.print(Text.assemble("Results: ", (shown_path(path), "bold")))
    return path


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

        try:
            opened = webbrowser.open(path.resolve().as_uri())
        except webbrowser.Error:
            opened = False
        if not opened:
            warn(f"no browser found to open the report: open {shown_path(path)} in one")


@app.command()
@handle_errors
def demo(out: Annotated[Path, typer.Option("--out", "-o")] = Path("ragmeter-results")) -> None:
    """Run the search on the shipped example (25 blog posts, 135 reader-style questions)."""
    search(config=None, out=out)


def check_strategy_names(cfg: Config) -> None:
    """An unknown strategy name is one line with the closest name and every name there
    is (built in, the config's own, the kinds), before any work."""
    from ragmeter.chunking import frameworks as chunkers

    custom = [str(s.get("name")) for s in cfg.custom_strategies]
    known = [*chunking.STRATEGIES, *custom, *chunking.KINDS, *chunkers.KINDS]
    for name in cfg.strategies:
        if name in known:
            continue
        raise InputError(
            f"unknown chunking strategy {name!r}{did_you_mean(name, known)}"
            + f"; built in: {', '.join(chunking.STRATEGIES)}"
            + (f"; in the config: {', '.join(custom)}" if custom else "")
            + f"; kinds: {', '.join(chunking.KINDS)}"
        )


def _run_settings(
    res: Results, metric: str | None, seed: int | None, rounds: int | None
) -> tuple[str, int, int]:
    """Metric, seed and rounds: as given, else as the saved run used them."""
    if seed is not None:
        check_seed(seed, "--seed")
    if rounds is not None and rounds < 100:
        raise InputError(
            f"--rounds must be at least 100 ({DEFAULTS.rounds} is the default), got {rounds}"
        )
    return (
        find_metric(metric, res.metrics) if metric else res.summary.metric,  # P_5: precision@5
        seed if seed is not None else res.summary.seed,
        rounds or res.summary.rounds,
    )


@app.command()
@handle_errors
def compare(
    results: Annotated[Path, typer.Argument(help="A results directory")],
    metric: Annotated[str | None, typer.Option(help="Default: the run's metric")] = None,
    seed: Annotated[int | None, typer.Option()] = None,
    rounds: Annotated[int | None, typer.Option()] = None,
    adjust: Annotated[str | None, _ADJUST] = None,
    baseline: Annotated[str | None, _BASELINE] = None,
    pairs: Annotated[str | None, _PAIRS] = None,
    family: Annotated[str | None, _FAMILY] = None,
    every: Annotated[bool, _ALL] = False,
    format_: Annotated[str | None, _FORMAT] = None,
    a: Annotated[str | None, typer.Option("--a", hidden=True)] = None,
    b: Annotated[str | None, typer.Option("--b", hidden=True)] = None,
) -> None:
    """Paired comparisons from a saved results directory (no search is re-run).

    One pair (--pairs A:B) is a family of one: its p-value is not adjusted.
    """
    chosen = check_format(format_)
    if a is not None or b is not None:
        warn(
            f"--a/--b are deprecated: write --pairs {a or 'A'}:{b or 'B'} "
            "(one pair is a family of one, as before)"
        )
    if family is not None:  # given, even empty: the flag is named, not the config
        check_family(family, "--family")
    res = Results(results)
    named = _run_settings(res, metric, seed, rounds)[0]  # checks --seed and --rounds too
    plan = res.comparison_plan.choose(
        a,
        b,
        metric=named if metric else None,
        seed=seed,
        rounds=rounds,
        adjust=adjust,
        baseline=baseline,
        pairs=pairs,
        family=family,
    )
    table = compare_run(res, plan)
    ranks = rank_run(res, plan, table)
    metric, seed, rounds = plan.metric, plan.seed, plan.rounds
    if chosen != "table":
        grid = terminal.comparison_grid(
            table.rows, metric, seed, rounds, table.rule, res.summary.ndcg_label
        )
        records = terminal.comparison_records(table.rows, metric)
        data = {"metric": metric, **table.to_dict(), "ranks": ranks.to_dict()}
        grids = [grid, ranks_grid(ranks)] if shows_ranks(ranks) else [grid]
        emit(render(grids, chosen, records, data))
        return
    print_comparisons(
        table.rows, metric, seed, rounds, table.rule, every=every, ndcg=res.summary.ndcg_label
    )
    print_ranks(ranks, console, terminal.terminal_width())


@app.command()
@handle_errors
def plan(
    results: Annotated[Path, typer.Argument(help="A results directory")],
    metric: Annotated[str | None, typer.Option(help="Default: the run's metric")] = None,
    half_width: Annotated[
        float, typer.Option(help="Target ± half-width in points (hundredths of the scale)")
    ] = in_points(DEFAULTS.half_width),
    difference: Annotated[
        float, typer.Option(help="Paired difference to separate, in points")
    ] = in_points(DEFAULTS.difference),
    system: Annotated[str | None, typer.Option(help="One system (default: all)")] = None,
    seed: Annotated[int | None, typer.Option()] = None,
    rounds: Annotated[int | None, typer.Option()] = None,
    baseline: Annotated[str | None, _BASELINE] = None,
    pairs: Annotated[str | None, _PAIRS] = None,
    family: Annotated[str | None, _FAMILY] = None,
    every: Annotated[bool, _ALL] = False,
    format_: Annotated[str | None, _FORMAT] = None,
    answers: Annotated[
        bool, typer.Option("--answers", help="Plan the answer accuracy: questions, reruns, spend")
    ] = False,
    reader: Annotated[str | None, typer.Option(help="--answers: the reader model spec")] = None,
    judge: Annotated[
        list[str] | None, typer.Option(help="--answers: a judge model spec (repeatable)")
    ] = None,
    option: ModelOptions = None,
    reruns: Annotated[int | None, typer.Option(help="--answers: reruns K as set")] = None,
    reruns_of: Annotated[str | None, typer.Option(help="--answers: reader, judge or both")] = None,
    limit: Annotated[int | None, typer.Option(help="--answers: only the first N questions")] = None,
    prices: Annotated[
        Path | None, typer.Option(help="--answers: a TOML file with [prices] (default: the run's)")
    ] = None,
) -> None:
    """How many questions would settle it: intervals at n, 2n, 4n, 8n and targets.

    --half-width and --difference are points, as check's --margin: hundredths of the
    metric's scale (4 is 4 points of a share, 0.04 of MRR). With --answers: the answer
    accuracy's plan (questions, reruns, model calls, tokens, money); nothing is called.
    """
    chosen = check_format(format_)
    half_width = points(half_width, "--half-width")
    difference = points(difference, "--difference")
    if answers:
        from ragmeter.cli.answer_plan_views import answer_plan_command
        from ragmeter.llm import parse_options

        flags = {"reruns": reruns, "reruns_of": reruns_of}
        text = answer_plan_command(
            results, console, chosen, reader=reader, judges=judge,
            options=parse_options(model_options(option)), systems=_names(system, "--system", "A,B"),
            limit=limit, half_width=half_width, difference=difference, prices=prices,
            **{k: v for k, v in flags.items() if v is not None},
        )  # fmt: skip
        if text is not None:
            emit(text)
        return
    res = Results(results)
    metric, seed, rounds = _run_settings(res, metric, seed, rounds)
    own, family = _own_family(res, family, baseline, pairs)
    planned = planned_pairs(res.systems, baseline, pairs, family)
    found = plan_run(
        res,
        metric,
        half_width=half_width,
        difference=difference,
        system=system,
        seed=seed,
        rounds=rounds,
        pairs=planned,
        own_table=own,
        family_size=effects_family_size(res.systems, planned, family),
        averaged=averaged_scores(res.matrix(metric), res.systems, planned),  # */R, S/*
    )
    if chosen != "table":
        emit(plan_text(found, chosen))
        return
    _print_system_needs(found)
    if found.pairs:
        _print_pair_needs(found, every)


def _own_family(
    res: Results, family: str | None, baseline: str | None, pairs: str | None
) -> tuple[bool, str | None]:
    """Whether ``plan`` plans the run's own table (no family, baseline or pairs asked
    for), and the family it plans: the run's own grid family, when it has one."""
    rule = res.summary.comparison_rule
    if family or baseline or pairs or rule is None:
        return False, family
    return True, grid_family(res.systems, rule.family)


def _print_system_needs(found: Plan) -> None:
    """Each system's intervals at more questions and the questions its half-width
    needs; a line for each system scoring the same on every question."""
    metric, share = found.metric, is_share(found.metric)
    scale = difference_scale(metric)[0]
    need = Grid(
        f"Questions needed on {metric}",
        ["system", f"for ± {found.half_width * scale:g}{' points' if share else ''} (half-width)"],
        right={1},
        key="needed",
        wrap={1},  # "no spread (exact ... interval [...])" wraps between words
    )
    flat: dict[str, list[str]] = {}
    exact: dict[str, list[str]] = {}  # 0/1 and no spread: planned on the exact interval
    detail = len(found.systems) <= 3  # more systems: one table of half-widths, below
    for s in found.systems:
        shown = f"{s.constant * scale:g}{'%' if share else ''}" if s.constant is not None else ""
        if s.needed is not None and s.exact is not None:
            exact.setdefault(shown, []).append(s.system)
        if s.needed is None:  # no spread: resampling shows none, so no size table
            flat.setdefault(shown, []).append(s.system)
            need.rows.append([s.system, "no spread"])
        else:
            if detail:
                print_grids(console, terminal.size_grid(s.sizes, metric, s.system))
            need.rows.append([s.system, str(s.needed)])
    spread = [s for s in found.systems if s.needed is not None]
    if not detail and spread:
        target = f"± {found.half_width * scale:g}{' points' if share else ''}"
        print_grids(console, terminal.sizes_grid(spread, metric, target))
    else:
        print_grids(console, need)
    for shown, names in exact.items():
        edge = next(s.edge for s in found.systems if s.system == names[0])
        target = f"{found.half_width * scale:g}{' points' if share else ''}"
        warn(
            f"{', '.join(names)} {'scores' if len(names) == 1 else 'score'} {shown} on every "
            f"question: planned on the exact {1 - found.alpha:.0%} (Clopper-Pearson) interval, "
            f"as if every further question scored {shown} too; ± {target} is half the "
            f"interval's width: its far end within {target} of {shown} takes {edge:,} questions"
        )
    for shown, names in flat.items():
        warn(
            f"{', '.join(names)} {'scores' if len(names) == 1 else 'score'} {shown} on every "
            f"question: {metric} has no spread, so no number of questions narrows it "
            f"(more varied questions would)"
        )


def _pair_caption(found: Plan) -> str:
    """The caption of the pairs' table: the level each column was planned at."""
    if found.rule == "none":
        return (
            f"The seed's per-pair rule: no adjustment, every pair at its own {1 - found.alpha:.0%}."
        )
    holm = f"{found.alpha:g}/{found.family} = {found.alpha / found.family:.3g}"
    alone = f"alone: one pair planned in advance, at {found.alpha:g}."
    if found.first is not None:
        return (
            f"In the table: max-T over {plural(found.family, 'pair')}, whose first step "
            f"tested at {found.first:.3g} on this run (Holm's: {holm}); {alone}"
        )
    if found.rule == "fdr":
        return (
            f"In the table: Benjamini-Hochberg over {plural(found.family, 'pair')} tests "
            f"its first pair at {holm} when it is the only difference (higher the more are "
            f"found); {alone}"
        )
    return (
        f"In the table: Holm over {plural(found.family, 'pair')} tests its first pair at {holm}"
        + (
            "; max-T (this run's rule) is never stricter, so its numbers are at most these"
            if found.rule == "maxt"
            else ""
        )
        + f"; {alone}"
    )


def _print_pair_needs(found: Plan, every: bool) -> None:
    """The questions each pair needs, in the family and alone, with what no number of
    questions settles: identical pairs, and the documents when questions cluster."""
    caption = _pair_caption(found)
    shown, rest = most_needed(found.pairs, None if every else terminal.LONG_FAMILY)
    sep = pair_need_grid(found, shown, caption)
    sep.narrow = pair_need_grid(found, shown, caption, narrow=True)  # A over B
    print_grids(console, sep)
    if rest:
        print_tables([], [rest])
    documents = cluster_sentence(found.pairs, found.difference, difference_scale(found.metric)[0])
    if documents:
        print_tables([], [documents])
    same = [(p.a, p.b) for p in found.pairs if p.identical]
    if same:
        named = ", ".join(f"{a} = {b}" for a, b in same[:6])
        more = f" and {plural(len(same) - 6, 'more pair')}" if len(same) > 6 else ""
        warn(
            f"{plural(len(same), 'pair')} of systems score the same on every question "
            f"({named}{more}): no number of questions separates them"
        )

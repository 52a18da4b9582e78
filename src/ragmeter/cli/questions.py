"""Question-route commands: questions generate, audit, compare."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ragmeter.cli.app import (
    MODEL_SPEC,
    CallEngine,
    CallEngineAddress,
    ModelOptions,
    OldModelOptions,
    _csv,
    _names,
    app,
    console,
    handle_errors,
    model_options,
    old_name,
    plural,
    refresh_report,
)
from ragmeter.cli.progress import calls_bar
from ragmeter.defaults import DEFAULTS
from ragmeter.inputs.config import check_seed
from ragmeter.runs.results import Results

questions_app = typer.Typer(
    help="Generate, audit and compare test questions.", no_args_is_help=True
)
app.add_typer(questions_app, name="questions")


@questions_app.command("generate")
@handle_errors
def questions_generate(
    corpus: Annotated[Path, typer.Argument(help="Corpus: folder, .jsonl, BEIR or SQuAD")],
    model: Annotated[
        str, typer.Option("--model", "-m", help=f"The model that writes questions: {MODEL_SPEC}")
    ],
    out: Annotated[Path, typer.Option("--out", "-o")] = Path("generated.jsonl"),
    testset: Annotated[
        Path | None, typer.Option(help="Ask about this test set's answer passages")
    ] = None,
    sample: Annotated[int | None, typer.Option(help="Or sample N passages from the corpus")] = None,
    limit: Annotated[int | None, typer.Option(help="Seeded subset of N passages")] = None,
    seed: Annotated[
        int, typer.Option(help="Seed of the passage sample and subset")
    ] = DEFAULTS.seed,
    cache: Annotated[
        Path | None, typer.Option(help="Reply cache (default <out>.llm-cache.sqlite)")
    ] = None,
    option: ModelOptions = None,
    model_option: OldModelOptions = None,
    engine: CallEngine = "local",
    engine_address: CallEngineAddress = "auto",
) -> None:
    """Write one question per passage with a chat model (cached, resumable)."""
    from ragmeter.llm import CallSettings
    from ragmeter.questions import generate_file

    settings = CallSettings(
        model,
        options=model_options(option, model_option),
        cache=cache,
        engine=engine,
        engine_address=engine_address,
    )
    with calls_bar() as progress:
        result = generate_file(
            corpus,
            out,
            settings,
            testset_path=testset,
            sample=sample,
            limit=limit,
            seed=seed,
            progress=lambda done, total, reply: progress("questions", done, total, reply),
        )
    console.print(
        f"{plural(len(result.testset), 'question')} -> {out}; {result.testset.skipped} skipped "
        f"{result.skip_reasons() or ''}; {result.calls} model calls, {result.cache_hits} cached",
        markup=False,
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
    model: Annotated[
        str | None,
        typer.Option(
            "--model", "-m", help=f"The model for the misstated/context checks: {MODEL_SPEC}"
        ),
    ] = None,
    llm: Annotated[str | None, typer.Option(hidden=True, help="Deprecated: use --model")] = None,
    checks: str = "misstated,context",
    cache: Annotated[
        Path | None, typer.Option(help="Reply cache (default <out>/<name>.llm-cache.sqlite)")
    ] = None,
    option: ModelOptions = None,
    model_option: OldModelOptions = None,
    seed: Annotated[
        int, typer.Option(help="Bootstrap seed of the copy-ratio interval")
    ] = DEFAULTS.seed,
    rounds: int = DEFAULTS.rounds,
    engine: CallEngine = "local",
    engine_address: CallEngineAddress = "auto",
) -> None:
    """Flag copied, restated, context-dependent, misstated and duplicate questions."""
    from ragmeter.cli.layout import print_grids
    from ragmeter.cli.question_views import audit_grid
    from ragmeter.llm import CallSettings
    from ragmeter.questions import audit_files

    check_seed(seed, "--seed")
    model = old_name(model, llm, "--model", "--llm")
    if results is not None:
        Results(results)  # fail early if it is not a results directory
        out, name = results / "audit", "flags"
    settings = None
    if model is not None:
        settings = CallSettings(
            model,
            options=model_options(option, model_option),
            engine=engine,
            engine_address=engine_address,
        )
    with calls_bar() as progress:
        flagged, summary, paths = audit_files(
            testset,
            corpus,
            out,
            settings,
            name=name,
            cache_path=cache,
            llm_checks=_csv(checks) or (),
            seed=seed,
            rounds=rounds,
            progress=lambda done, total, reply: progress("model checks", done, total, reply),
        )
    print_grids(console, audit_grid(flagged, summary))
    console.print("Written: " + ", ".join(str(p) for p in paths), markup=False)
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
    seed: Annotated[
        int | None, typer.Option(help="Bootstrap seed (default: the config's, 1)")
    ] = None,
    rounds: int | None = None,
) -> None:
    """Score both sets on the same passages: paired intervals, and B without unfit questions."""
    from ragmeter.cli.layout import print_grids
    from ragmeter.cli.question_views import compare_grid
    from ragmeter.questions import compare_files

    if seed is not None:
        check_seed(seed, "--seed")
    result = compare_files(
        a,
        b,
        corpus,
        config,
        audit,
        metric=metric,
        strategies=_names(strategies, "--strategies", "fixed,sentence"),
        retrievers=_names(retrievers, "--retrievers", "bm25,dense"),
        seed=seed,
        rounds=rounds,
    )
    print_grids(console, compare_grid(result))

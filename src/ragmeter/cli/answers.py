"""Answer-route commands: answer, grade, judges, handgrade, failures."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ragmeter.cli.app import (
    ADJUST_OPTION,
    BASELINE_OPTION,
    FAMILY_OPTION,
    MODEL_SPEC,
    PAIRS_OPTION,
    AccuracyJudge,
    CallEngine,
    CallEngineAddress,
    ModelOptions,
    app,
    console,
    err,
    handle_errors,
    judge_name,
    model_options,
    refresh_report,
)
from ragmeter.cli.history import NoHistory, record_run
from ragmeter.cli.progress import calls_bar
from ragmeter.defaults import DEFAULTS

Systems = Annotated[str | None, typer.Option(help="Comma-separated systems (default: all)")]
Limit = Annotated[int | None, typer.Option(help="Only the first N questions")]
PpiWeight = Annotated[
    str,
    typer.Option(
        help="Rectifier weight of judge-corrected numbers: tuned (PPI++, least variance) "
        "or plain (1)"
    ),
]
Concurrency = Annotated[int, typer.Option(help="Model calls at once")]
MaxTokens = Annotated[int, typer.Option(help="Longest reply, in tokens")]
Timeout = Annotated[float, typer.Option(help="Seconds per call")]
ReplyCachePath = Annotated[Path | None, typer.Option(help="Reply cache (default in answers/)")]
Reruns = Annotated[
    int | None,
    typer.Option(
        help="Ask the model of --reruns-of K times per question (default: [answers] reruns, else 1)"
    ),
]
RerunsOf = Annotated[
    str | None,
    typer.Option(help="Which model is rerun: reader, judge or both (default both)"),
]
Temperature = Annotated[
    float | None,
    typer.Option(help="Sampling temperature of the rerun model (default 0)"),
]
TopP = Annotated[
    float | None,
    typer.Option(
        "--top-p", help="Nucleus sampling of the rerun model, in (0, 1] (default: the model's)"
    ),
]
PositionCheckSize = Annotated[
    int | None,
    typer.Option(
        "--position-check",
        help="Also grade a seeded sample of N answers again with the answer before the "
        "reference (the judges' position check; `ragmeter judges` compares the two)",
        metavar="N",
    ),
]
PositionSeed = Annotated[
    int | None,
    typer.Option(help="Seed of the position check's sample (default: the run's seed)"),
]


def _reruns(reruns, reruns_of, temperature, top_p) -> dict:
    """The reruns flags, each checked (one line, exit 2) before anything runs; the command
    completes them from ``[answers]`` of the run's config (:func:`rerun_settings
    <ragmeter.answers.reruns.rerun_settings>`)."""
    from ragmeter.inputs.config import check_reruns

    flags = {"reruns": reruns, "reruns_of": reruns_of, "temperature": temperature, "top_p": top_p}
    check_reruns(**{k: v for k, v in flags.items() if v is not None}, prefix="--")
    return flags


def _settings(
    spec: str,
    option: list[str] | None,
    cache: Path | None,
    concurrency: int,
    timeout: float,
    max_tokens: int,
    engine: str,
    engine_address: str,
):
    """The reader's or a judge's :class:`ragmeter.llm.CallSettings` from the options."""
    from ragmeter.llm import CallSettings

    return CallSettings(
        spec,
        options=model_options(option),
        cache=cache,
        concurrency=concurrency,
        timeout_s=timeout,
        max_tokens=max_tokens,
        engine=engine,
        engine_address=engine_address,
    )


@app.command()
@handle_errors
def answer(
    results: Annotated[Path, typer.Argument(help="A results directory")],
    reader: Annotated[str, typer.Option(help=f"The reader model: {MODEL_SPEC}")],
    k: Annotated[int, typer.Option(help="Items given to the reader")] = DEFAULTS.reader_k,
    systems: Systems = None,
    limit: Limit = None,
    concurrency: Concurrency = 4,
    option: ModelOptions = None,
    max_tokens: MaxTokens = 256,
    timeout: Timeout = 120.0,
    cache: ReplyCachePath = None,
    engine: CallEngine = "local",
    engine_address: CallEngineAddress = "auto",
    reruns: Reruns = None,
    reruns_of: RerunsOf = None,
    temperature: Temperature = None,
    top_p: TopP = None,
    dry_run: Annotated[
        bool,
        typer.Option("--dry-run", help="Print the plan (calls, tokens, money) and call no model"),
    ] = False,
) -> None:
    """A reader model answers each question from its top k items (cached, resumable)."""
    from ragmeter.cli.answer_views import answer_command

    again = _reruns(reruns, reruns_of, temperature, top_p)
    if dry_run:  # what plan --answers prints for this run
        from ragmeter.cli.answer_plan_views import answer_plan_command
        from ragmeter.llm import parse_options

        answer_plan_command(
            results, console, reader=reader, options=parse_options(model_options(option)),
            k=k, max_tokens=max_tokens, limit=limit,
            systems=systems.split(",") if systems else None,
            **{name: v for name, v in again.items() if v is not None},
        )  # fmt: skip
        return
    settings = _settings(
        reader, option, cache, concurrency, timeout, max_tokens, engine, engine_address
    )
    answer_command(
        results,
        settings,
        k=k,
        systems=systems,
        limit=limit,
        console=console,
        progress_console=err,
        progress_bar=calls_bar,
        reruns=again,
    )


@app.command()
@handle_errors
def grade(
    results: Annotated[Path, typer.Argument(help="A results directory with answers")],
    judge: Annotated[
        list[str],
        typer.Option(help=f"A judge model (repeatable; the first gives accuracy): {MODEL_SPEC}"),
    ],
    accuracy_judge: AccuracyJudge = None,
    systems: Systems = None,
    limit: Limit = None,
    concurrency: Concurrency = 4,
    option: ModelOptions = None,
    max_tokens: MaxTokens = 256,
    timeout: Timeout = 120.0,
    cache: ReplyCachePath = None,
    engine: CallEngine = "local",
    engine_address: CallEngineAddress = "auto",
    no_history: NoHistory = False,
    adjust: Annotated[str | None, ADJUST_OPTION] = None,
    baseline: Annotated[str | None, BASELINE_OPTION] = None,
    pairs: Annotated[str | None, PAIRS_OPTION] = None,
    family: Annotated[str | None, FAMILY_OPTION] = None,
    reruns: Reruns = None,
    reruns_of: RerunsOf = None,
    temperature: Temperature = None,
    top_p: TopP = None,
    ppi: PpiWeight = "tuned",
    position_check: PositionCheckSize = None,
    position_seed: PositionSeed = None,
) -> None:
    """Judge models grade each answer correct / partial / wrong against the answer key,
    then systems are compared on their answers, pair by pair, under the run's rule."""
    from ragmeter.answers.position import check_position_size
    from ragmeter.cli.answer_views import grade_command
    from ragmeter.inputs.config import check_family, check_seed

    if family is not None:  # given, even empty: the flag is named, not the config
        check_family(family, "--family")
    if position_check is not None:
        check_position_size(position_check)
    if position_seed is not None:
        check_seed(position_seed, "--position-seed")
    again = _reruns(reruns, reruns_of, temperature, top_p)

    settings = [
        _settings(spec, option, cache, concurrency, timeout, max_tokens, engine, engine_address)
        for spec in judge
    ]
    chosen = judge_name(accuracy_judge)
    with record_run(results, "grade", None, no_history):
        grade_command(
            results,
            settings,
            accuracy_judge=chosen,
            systems=systems,
            limit=limit,
            console=console,
            progress_console=err,
            progress_bar=calls_bar,
            choice={"adjust": adjust, "baseline": baseline, "pairs": pairs, "family": family},
            reruns=again,
            ppi=ppi,
            position=None if position_check is None else (position_check, position_seed),
        )
    refresh_report(results, accuracy_judge=chosen)


@app.command()
@handle_errors
def judges(
    results: Annotated[Path, typer.Argument(help="A results directory with grades")],
    accuracy_judge: AccuracyJudge = None,
    ppi: PpiWeight = "tuned",
) -> None:
    """Agreement (percent, kappa) and leniency of every pair of judges, and of the hand grades."""
    from ragmeter.cli.answer_views import judges_command

    judges_command(results, accuracy_judge=judge_name(accuracy_judge), console=console, ppi=ppi)


@app.command()
@handle_errors
def handgrade(
    results: Annotated[Path, typer.Argument(help="A results directory with answers")],
    n: Annotated[int, typer.Option(help="How many answers to grade")] = 20,
    seed: Annotated[int, typer.Option(help="Seed of the random sample")] = DEFAULTS.seed,
    flagged_first: Annotated[
        bool,
        typer.Option(
            "--flagged-first/--random-order",
            help="Answers a judge passed with a changed or left-out number first (default), "
            "or a plain random sample",
        ),
    ] = True,
) -> None:
    """Grade a seeded random sample of answers by hand: c / p / w, s to skip, q to stop."""
    from ragmeter.cli.answer_views import handgrade_command

    handgrade_command(results, n=n, seed=seed, console=console, flagged_first=flagged_first)
    refresh_report(results)


@app.command()
@handle_errors
def failures(
    results: Annotated[Path, typer.Argument(help="A results directory with answers")],
    accuracy_judge: AccuracyJudge = None,
    refusal: Annotated[
        list[str] | None,
        typer.Option(help="Another refusal pattern, a regular expression (repeatable)"),
    ] = None,
    support: Annotated[
        float | None,
        typer.Option(help="Share of a sentence's content words a passage must hold (0.5)"),
    ] = None,
    show: Annotated[int, typer.Option(help="Answers listed per failure type (0: all)")] = 10,
    seed: Annotated[int | None, typer.Option(help="Bootstrap seed (default: the run's)")] = None,
    rounds: Annotated[
        int | None, typer.Option(help="Bootstrap rounds (default: the run's)")
    ] = None,
) -> None:
    """How answers fail, checked without a model: refusals, changed or missing numbers,
    unsupported sentences, correct without the passage; counted per system."""
    from ragmeter.cli.failure_views import check_settings, failures_command

    failures_command(
        results,
        accuracy_judge=judge_name(accuracy_judge),
        seed=seed,
        rounds=rounds,
        settings=check_settings(refusal, support),
        show=show,
        console=console,
    )

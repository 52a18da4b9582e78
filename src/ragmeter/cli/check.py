"""``ragmeter check``: a regression gate for continuous integration (non-inferiority)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ragmeter.cli.app import app, console, handle_errors, points, warn
from ragmeter.cli.history import HistoryDir, history_baseline
from ragmeter.cli.layout import wrap_words
from ragmeter.errors import InputError
from ragmeter.files.outputs import check_output_file, results_inputs, write_output
from ragmeter.history.gate import check_answers_noninferior, check_noninferior, checked_margin
from ragmeter.inputs.config import check_rounds, check_seed

_Baseline = Annotated[
    Path,
    typer.Argument(
        help="Results directory of the baseline run; with --baseline-from-history, "
        "the candidate's (the baseline then comes from the history)",
        metavar="RESULTS",
    ),
]
_System = Annotated[
    str,
    typer.Option(help="The system to check: its name in the candidate (or in the baseline)"),
]
_Candidate = Annotated[
    Path | None,
    typer.Argument(
        help="Results directory of the candidate run (none with --baseline-from-history)",
        metavar="CANDIDATE",
    ),
]
_Margin = Annotated[
    float,
    typer.Option(
        help="Points the candidate may lose (non-inferiority margin); a value below 1 "
        "is read as a fraction (0.03 is 3 points), with a warning"
    ),
]
_FromHistory = Annotated[
    str | None,
    typer.Option(
        help="Baseline: a recorded run (an id, a commit, latest or latest:BRANCH: the newest "
        "run where this commit's history left BRANCH); then give only the candidate",
        metavar="REF",
    ),
]
_BaselineSystem = Annotated[
    str | None,
    typer.Option(
        help="The system's name in the baseline run, when it was renamed (default: "
        "--system, or the baseline's system with the same strategy and retriever)",
        metavar="NAME",
    ),
]


@app.command()
@handle_errors
def check(
    baseline: _Baseline,
    system: _System,
    candidate: _Candidate = None,
    metric: Annotated[
        str | None,
        typer.Option(
            help="Default: the baseline run's metric; correct or correct_or_partial checks "
            "the graded answers of both runs"
        ),
    ] = None,
    margin: _Margin = 2.0,
    markdown: Annotated[
        Path | None, typer.Option(help="Also write a summary for a pull-request comment")
    ] = None,
    seed: Annotated[int | None, typer.Option(help="Default: the baseline run's")] = None,
    rounds: Annotated[int | None, typer.Option(help="Default: the baseline run's")] = None,
    baseline_from_history: _FromHistory = None,
    history: HistoryDir = None,
    baseline_system: _BaselineSystem = None,
) -> None:
    """Exit 0 when the candidate is no worse than the baseline by more than --margin points.

    Two runs: check BASELINE CANDIDATE.
    A run against a recorded baseline: check --baseline-from-history REF CANDIDATE.

    The lower end of the 95% paired interval of candidate - baseline (questions
    paired by id) must lie above -margin; exit 1 when it does not, 2 on bad input.
    With --metric correct (or correct_or_partial) the answers are checked: each run's
    answers as its accuracy judge graded them, reruns averaged per question.
    """
    from ragmeter.answers.paired import answer_measure
    from ragmeter.runs.results import Results

    on_answers = bool(metric) and answer_measure(metric) is not None
    if on_answers and baseline_from_history is not None:
        raise InputError(
            f"--metric {metric}: the history keeps search scores, not answers; give the "
            "baseline's results directory (with its answers/) instead of "
            "--baseline-from-history"
        )
    if baseline_from_history is not None:
        baseline, candidate, system = history_baseline(
            baseline_from_history, baseline, candidate, system, metric, history, baseline_system
        )
    elif candidate is None:
        raise InputError("give the baseline's and the candidate's results directories")
    margin_fraction = points(margin, "--margin")  # points typed, the library's fraction
    wide = checked_margin(margin_fraction, f"--margin {margin:g}")  # before any work
    if wide is not None:
        warn(f"--margin {margin:g}: {wide}")
    if seed is not None:
        check_seed(seed, "--seed")
    if rounds is not None:
        check_rounds(rounds, "--rounds")
    base = Results(baseline)
    cand = Results(candidate)
    inputs = [*results_inputs(base.path, base.meta), *results_inputs(cand.path, cand.meta)]
    if markdown is not None:  # before any work, and again when writing
        check_output_file(markdown, "Markdown summary", inputs, "--markdown")
    gate = check_answers_noninferior if on_answers else check_noninferior
    result = gate(
        base,
        cand,
        system,
        metric or base.summary.metric,
        margin_fraction,
        confidence=base.summary.confidence,
        rounds=rounds,
        seed=seed,
        baseline_system=baseline_system,
    )
    if markdown is not None:
        write_output(markdown, result.markdown(), "Markdown summary", inputs, "--markdown")
    # wrapped between words at the terminal's width, never inside a number or interval
    for part in wrap_words(result.line, console.width):
        console.print(part, markup=False, highlight=False, soft_wrap=True)
    if not result.passed:
        raise typer.Exit(1)

"""``ragmeter check``: a regression gate for continuous integration (non-inferiority)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ragmeter.cli.app import app, console, handle_errors
from ragmeter.io import atomic_write_text
from ragmeter.verdicts import check_noninferior


@app.command()
@handle_errors
def check(
    baseline: Annotated[Path, typer.Argument(help="Results directory of the baseline run")],
    candidate: Annotated[Path, typer.Argument(help="Results directory of the candidate run")],
    system: Annotated[str, typer.Option(help="The system to check (in both runs)")],
    metric: Annotated[str | None, typer.Option(help="Default: the baseline run's metric")] = None,
    margin: Annotated[
        float, typer.Option(help="Points the candidate may lose (non-inferiority margin)")
    ] = 2.0,
    markdown: Annotated[
        Path | None, typer.Option(help="Also write a summary for a pull-request comment")
    ] = None,
    seed: Annotated[int | None, typer.Option(help="Default: the baseline run's")] = None,
    rounds: Annotated[int | None, typer.Option(help="Default: the baseline run's")] = None,
) -> None:
    """Exit 0 when the candidate is no worse than the baseline by more than --margin points.

    The lower end of the 95% paired interval of candidate - baseline (questions
    paired by id) must lie above -margin; exit 1 when it does not, 2 on bad input.
    """
    from ragmeter.results import Results

    base = Results(baseline)
    result = check_noninferior(
        base,
        Results(candidate),
        system,
        metric or base.summary.metric,
        margin,
        confidence=base.summary.confidence,
        rounds=rounds,
        seed=seed,
    )
    if markdown is not None:
        atomic_write_text(markdown, result.markdown())
    console.print(result.line, markup=False, highlight=False, soft_wrap=True)
    if not result.passed:
        raise typer.Exit(1)

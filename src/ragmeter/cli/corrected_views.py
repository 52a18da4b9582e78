"""The judge-corrected tables ``ragmeter grade`` and ``judges`` print: the paired verdicts
corrected by the hand grades (:mod:`ragmeter.answers.corrected`), and what the hand
grades bought (:class:`ragmeter.answers.analysis.Corrected`: the rectifier weight, the
hand grades the corrected interval is worth, the published bound, and a warning where
hand grades alone are as tight). The cells and lines are those the report shows
(:func:`ragmeter.answers.corrected.corrected_cells`, ``saving_cells``)."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.text import Text

from ragmeter.answers.analysis import Corrected
from ragmeter.answers.corrected import (
    CORRECTED_HEAD,
    SAVING_CAPTION,
    SAVING_HEAD,
    CorrectedVerdicts,
    corrected_cells,
    corrected_lines,
    corrected_title,
    saving_cells,
    saving_lines,
)
from ragmeter.cli.layout import Grid, print_grids

__all__ = ["print_corrected_verdicts", "print_saving"]


def print_corrected_verdicts(v: CorrectedVerdicts, console: Console) -> None:
    """One row per pair: the judge's difference, the corrected one with its interval,
    the hand grades behind it and the verdict, all marked judge-corrected."""
    grid = Grid(
        corrected_title(v),
        list(CORRECTED_HEAD),
        right={1, 2, 3, 4},
        wrap={5},
        key="judge_corrected",
        labels=False,
    )
    grid.rows.extend(corrected_cells(v))
    print_grids(console, grid)
    for line in corrected_lines(v):
        console.print(Text(line, style="dim"))


def print_saving(rows: Sequence[Corrected], console: Console, scope: str) -> None:
    """Per row: the rectifier weight, the hand grades used and what the corrected
    interval is worth in hand grades alone, the saving, and the bound beside it."""
    grid = Grid(
        f"What the judge saved, {scope}",
        list(SAVING_HEAD),
        right={1, 2, 3, 4, 5, 6},
        caption=SAVING_CAPTION,
        key="saving",
    )
    grid.rows.extend(saving_cells(rows))
    print_grids(console, grid)
    for line in saving_lines(rows):
        console.print(Text(line, style="yellow"))

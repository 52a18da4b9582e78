"""The judge-corrected tables ``ragmeter grade`` and ``judges`` print: the paired verdicts
corrected by the hand grades (:mod:`ragmeter.answers.corrected`), and what the hand
grades bought (:class:`ragmeter.answers.analysis.Corrected`: the rectifier weight, the
hand grades the corrected interval is worth, the published bound, and a warning where
hand grades alone are as tight)."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.text import Text

from ragmeter.answers.analysis import SAVING_BOUND, Corrected
from ragmeter.answers.corrected import CorrectedVerdicts, corrected_lines
from ragmeter.cli.layout import Grid, print_grids
from ragmeter.comparison.formatting import format_difference

__all__ = ["print_corrected_verdicts", "print_saving", "saving_lines"]


def _points(x: float) -> str:
    return f"{x * 100:+.1f}"


def print_corrected_verdicts(v: CorrectedVerdicts, console: Console) -> None:
    """One row per pair: the judge's difference, the corrected one with its interval,
    the hand grades behind it and the verdict, all marked judge-corrected."""
    grid = Grid(
        f"Paired verdicts on {v.measure}, judge-corrected by hand grades (A - B, points)",
        ["pair", "judge", "corrected", "p", "hand", "verdict"],
        right={1, 2, 3, 4},
        wrap={5},
        key="judge_corrected",
        labels=False,
    )
    for r in v.rows:
        grid.rows.append(
            [
                f"{r.a} - {r.b}",
                _points(r.judge),
                format_difference(r.difference),
                f"{r.p:.3f}",
                f"{r.hand_a}/{r.hand_b}/{r.hand_both}",
                r.verdict,
            ]
        )
    print_grids(console, grid)
    for line in corrected_lines(v):
        console.print(Text(line, style="dim"))


def saving_lines(rows: Sequence[Corrected]) -> list[str]:
    """The warnings under the saving table: where hand grades alone are as tight."""
    out = []
    for c in rows:
        if c.hand_as_tight:
            where = c.system or "all systems"
            out.append(
                f"Warning: {where}: hand grades alone are as tight as the judge-corrected "
                f"accuracy (the judge agrees on {c.agreement:.0%}); read the hand-only "
                "accuracy, or grade more by hand."
            )
    return out


def print_saving(rows: Sequence[Corrected], console: Console, scope: str) -> None:
    """Per row: the rectifier weight, the hand grades used and what the corrected
    interval is worth in hand grades alone, the saving, and the bound beside it."""
    grid = Grid(
        f"What the judge saved, {scope}",
        ["", "weight", "agree", "by hand", "worth", "saved", "bound"],
        right={1, 2, 3, 4, 5, 6},
        caption=(
            "worth: hand grades alone for the same interval width (by hand x hand-only "
            "variance / corrected variance); bound: at most x"
            f"{SAVING_BOUND:g} when the judge agrees no more often than answers are "
            "correct (Dorner, Nastl and Hardt, ICLR 2025)"
        ),
        key="saving",
    )
    for c in rows:
        bound = f"x{c.bound:g}" if c.bound is not None else "-"
        grid.rows.append(
            [
                c.system or f"all ({c.judge})",
                f"{c.weight:.2f} {c.weight_rule}",
                f"{c.agreement:.0%}",
                str(c.n_hand),
                f"{c.effective_hand:.0f}",
                f"{c.saved:+.0f} (x{c.effective_hand / c.n_hand:.2f})",
                bound,
            ]
        )
    print_grids(console, grid)
    for line in saving_lines(rows):
        console.print(Text(line, style="yellow"))

"""Where each system ranks, as ``search``, ``compare``, ``evaluate`` and ``grade`` print
it from three systems on (two systems' ranks are their one verdict): the headline
sentence (who shares the top, who is below all), then a table of each system's mean,
simultaneous rank range and tie-group letters, and the line saying what the ranges and
groups mean. Everything shown is read off :class:`ragmeter.comparison.ranks.Ranks`;
nothing is computed here."""

from __future__ import annotations

from rich.console import RenderableType
from rich.text import Text

from ragmeter.cli.layout import Grid, fit
from ragmeter.comparison.ranks import Ranks
from ragmeter.scoring.names import metric_label

__all__ = ["print_ranks", "rank_views", "ranks_grid", "shows_ranks"]


def shows_ranks(ranks: Ranks | None) -> bool:
    """Whether the terminal prints ``ranks``: from three systems on (with two, the
    comparison table's one verdict says it all; the data keep the ranks anyway)."""
    return ranks is not None and len(ranks.order) > 2


def ranks_grid(ranks: Ranks, title: str = "") -> Grid:
    """Each system, best mean first: its mean, its rank range and its group letters."""
    level = f"{ranks.confidence * 100:g}%"
    grid = Grid(
        title or f"Ranks on {metric_label(ranks.metric)}: {ranks.sentence}",
        ["system", ranks.column, f"rank ({level})", "group"],
        right={1, 2},
        key="ranks",
    )
    for r in ranks.ranges:
        grid.rows.append([r.system, ranks.shown_mean(r.system), r.shown, ranks.letters(r.system)])
    return grid


def rank_views(ranks: Ranks | None, width: int | None) -> tuple[list[RenderableType], list[str]]:
    """The ranks table fitted to ``width`` and the line under it (nothing without ranks)."""
    if ranks is None or not shows_ranks(ranks):
        return [], []
    return fit(ranks_grid(ranks), width), [ranks.ranges_note]


def print_ranks(ranks: Ranks | None, console, width: int | None = None) -> None:
    """:func:`rank_views` printed on ``console``."""
    shown, notes = rank_views(ranks, width or console.width)
    for part in shown:
        console.print(part, width=width or console.width)
    for line in notes:
        console.print(Text(line, style="dim"), width=width or console.width)

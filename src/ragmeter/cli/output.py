"""Printing for the search-route commands: tables fitted to the terminal, or
Markdown, CSV or JSON alone on stdout (everything else then goes to stderr)."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path

from rich.text import Text

from ragmeter.cli import search_views as terminal
from ragmeter.cli.app import console
from ragmeter.cli.layout import render
from ragmeter.cli.rank_views import ranks_grid, shows_ranks
from ragmeter.comparison.summary import Summary


@contextlib.contextmanager
def to_stderr(chosen: str) -> Iterator[None]:
    """For markdown, csv and json: everything else the command prints goes to stderr,
    so stdout holds only the table."""
    if chosen == "table":
        yield
        return
    before = console._file  # rich has no public way to redirect and restore
    console.file = sys.stderr
    try:
        yield
    finally:
        console._file = before


def emit(text: str) -> None:
    """Markdown, CSV or JSON to stdout, as it is (no wrapping, no markup)."""
    sys.stdout.write(text)
    sys.stdout.flush()


def shown_path(path: Path) -> str:
    """A path as the user would type it: relative under the working folder, else absolute."""
    full = Path(path).resolve()
    try:
        return str(full.relative_to(Path.cwd().resolve())) or "."
    except ValueError:
        return str(full)


def print_tables(renderables: list, notes: list[str] = ()) -> None:
    """Tables (fitted already) and dim notes, wrapped at the width they were fitted to."""
    width = terminal.terminal_width()
    for r in renderables:
        console.print(r, width=width)
    for line in notes:
        console.print(Text(line, style="dim"), width=width)


def print_comparisons(
    rows: list, metric: str, seed: int, rounds: int, rule, *, every: bool = False, ndcg: str = ""
) -> None:
    """The comparison table fitted to the terminal, long families summarised."""
    tables, notes = terminal.comparison_views(
        rows,
        metric,
        seed,
        rounds,
        rule,
        terminal.terminal_width(),
        limit=None if every else terminal.LONG_FAMILY,
        ndcg=ndcg,
    )
    print_tables(tables, notes)


def summary_text(summary: Summary, ks: list[int], chosen: str) -> str:
    """The summary's tables as markdown, csv (one row per system and metric) or json
    (the saved ``summary.json``)."""
    grids = [terminal.hit_grid(summary, ks), terminal.rank_grid(summary)]
    if summary.comparisons:
        grids.append(
            terminal.comparison_grid(
                summary.comparisons,
                summary.metric,
                summary.seed,
                summary.rounds,
                summary.comparison_rule,
                summary.ndcg_label,
            )
        )
    if shows_ranks(summary.ranks):
        grids.append(ranks_grid(summary.ranks))
    return render(grids, chosen, terminal.estimate_records(summary), summary.to_json())

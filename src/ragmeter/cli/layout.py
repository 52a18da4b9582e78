"""Tables that fit the terminal, and the same tables as Markdown, CSV or JSON.

A :class:`Grid` is a table as plain cells. :func:`fit` renders it with rich at the
console's width: whole when it fits, else in its narrow form (a pair on two lines),
else its value columns split over several tables (the name column repeated), else
with the names replaced by short labels and a legend, else as lines of
``header: value``. No cell is ever cut to ``…``; only a column marked to wrap (a
verdict, a question) wraps, between words. :func:`print_grids` prints grids that
way: every command's tables go through it. :func:`terminal_width` is the width they
fit: ``COLUMNS``, else the terminal the command runs in (piped output too), else
:data:`DEFAULT_WIDTH`. :func:`wrap_words` breaks a long line (a verdict) at that
width between words only, a difference and its interval kept whole. :func:`render`
writes grids as ``markdown``, ``csv`` or ``json`` for pipes and files.
"""

from __future__ import annotations

import io
import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rich.cells import cell_len
from rich.console import Console, RenderableType
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from ragmeter.errors import InputError
from ragmeter.files.safe_text import csv_text

FORMATS = ("table", "markdown", "csv", "json")
#: the width of output with no terminal anywhere (a log, CI): wide, so few tables split
DEFAULT_WIDTH = 160
FORMAT_HELP = "table (default), markdown, csv or json (markdown, csv and json go to stdout)"


@dataclass
class Grid:
    """One table as plain cells (``str`` or rich ``Text`` for colour).

    ``right`` holds the right-aligned columns; ``groups`` the value columns that stay
    together when the table is split (default: each column after the first alone).
    ``key`` names the table in JSON output.
    """

    title: str
    header: list[str]
    rows: list[list[Any]] = field(default_factory=list)
    right: set[int] = field(default_factory=set)
    groups: list[list[int]] | None = None
    caption: str | None = None
    key: str = "table"
    dim: set[int] = field(default_factory=set)
    #: columns that wrap (long verdicts); the others keep each line of a cell whole
    wrap: set[int] = field(default_factory=set)
    #: the same table in fewer columns (a pair's names on two lines), tried before splitting
    narrow: Grid | None = None
    #: whether long names in the first column may become short labels with a legend
    #: (not when a row is named by more than its first cell, as a pair is)
    labels: bool = True
    #: a rule between rows (rows of several lines)
    lines: bool = False

    def plain_rows(self) -> list[list[str]]:
        return [[_plain(c) for c in r] for r in self.rows]


def _plain(cell: Any) -> str:
    return cell.plain if isinstance(cell, Text) else str(cell)


def check_format(value: str | None) -> str:
    """``table`` when not given; one line naming the choices otherwise."""
    chosen = (value or "table").lower()
    if chosen not in FORMATS:
        raise InputError(f"--format must be one of {', '.join(FORMATS)}, got {value!r}")
    return chosen


def _rich(
    grid: Grid, cols: Sequence[int], title: str | None, first: list[Any], caption: bool = True
) -> Table:
    table = Table(
        title=Text(title) if title else None,
        title_justify="left",
        caption=Text(grid.caption) if grid.caption and caption else None,
        caption_justify="left",
        show_lines=grid.lines,
    )
    for i in cols:
        table.add_column(
            Text(grid.header[i]),
            justify="right" if i in grid.right else "left",
            style="bold" if i == 0 else ("dim" if i in grid.dim else None),
            no_wrap=i not in grid.wrap,
            overflow="fold",
        )
    for label, row in zip(first, grid.rows, strict=True):
        cells = [label if i == 0 else row[i] for i in cols]
        table.add_row(*(c if isinstance(c, Text) else Text(str(c)) for c in cells))
    return table


def as_table(grid: Grid) -> Table:
    """``grid`` as one rich table with its title, whatever its width."""
    return _rich(grid, range(len(grid.header)), grid.title, [r[0] for r in grid.rows])


WRAP_AT = 16  # a wrapping column is never narrower than this, or than its longest word


def natural_width(renderable: RenderableType, least: bool = False) -> int:
    """The width a renderable takes when nothing limits it (``least``, for a table: the
    narrowest it can be with its other columns whole and its wrapping columns wrapped
    between words, each at least :data:`WRAP_AT` wide and never narrower than its
    longest word, so no word, a name in a verdict, is folded; rich's own minimum would
    fold every column, names and intervals too)."""
    wide = Console(width=100_000, file=io.StringIO())
    if not (least and isinstance(renderable, Table)):
        found = wide.measure(renderable)
        return found.minimum if least else found.maximum
    options = wide.options
    total = 0
    for column in renderable.columns:
        cells = [column.header, *column.cells]
        sizes = [Measurement.get(wide, options, c) for c in cells]
        widest = max(m.maximum for m in sizes)
        if column.no_wrap:
            total += widest
        else:
            total += min(widest, max(WRAP_AT, *(m.minimum for m in sizes)))
    pad = renderable.padding[1] + renderable.padding[3]  # left and right of each cell
    edges = len(renderable.columns) + 1 if renderable.box and renderable.show_edge else 0
    return total + pad * len(renderable.columns) + edges


def terminal_width() -> int:
    """The width tables are fitted to: ``COLUMNS`` when set; else the width of the
    terminal on stdout, stderr or stdin, so ``ragmeter compare r | cat`` prints what the
    terminal it runs in shows; else that of the process's terminal (``/dev/tty``, with
    every stream redirected); else :data:`DEFAULT_WIDTH` (no terminal: a log, CI)."""
    columns = os.environ.get("COLUMNS", "").strip()
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    for fd in (1, 2, 0):
        try:
            found = os.get_terminal_size(fd).columns
        except (OSError, ValueError):
            continue
        if found > 0:
            return found
    try:
        fd = os.open("/dev/tty", os.O_RDONLY | getattr(os, "O_NOCTTY", 0))
    except OSError:
        return DEFAULT_WIDTH
    try:
        found = os.get_terminal_size(fd).columns
    except OSError:
        found = 0
    finally:
        os.close(fd)
    return found or DEFAULT_WIDTH


#: a word: a difference with its interval (``+0.0 [-4.0, +4.0]``), an interval alone, or
#: anything between spaces
_WORD = re.compile(r"(?:[+-]?\d[\d.e+-]*\*? )?\[[^\]\n]*\]|[^ ]+")


def wrap_words(line: str, width: int) -> list[str]:
    """``line`` as lines of at most ``width`` terminal columns, broken only at spaces
    between words: a difference and its interval (``+0.0 [-4.0, +4.0]``) stay whole on
    one line. A word wider than ``width`` stands alone on its line, unbroken."""
    out: list[str] = []
    for word in _WORD.findall(line):
        if out and cell_len(out[-1]) + 1 + cell_len(word) <= width:
            out[-1] += " " + word
        else:
            out.append(word)
    return out or [""]


def fit(grid: Grid, width: int | None) -> list[RenderableType]:
    """``grid`` as rich renderables no wider than ``width`` (``None``: no limit): one
    table when it fits (its wrapping columns wrapped between words); else its narrow
    form when it has one and that fits; else the title, then tables of as many value
    columns as fit (the name column repeated); else the same with short labels and a
    legend; else lines of ``header: value`` (:func:`stacked`)."""
    # the title and the footnote as lines of their own, wrapped at the terminal's width
    # (a table's own wrap at the table's width, a narrow column's in a narrow table)
    head: list[RenderableType] = [Text(grid.title, style="italic")] if grid.title else []
    foot: list[RenderableType] = [Text(grid.caption, style="dim")] if grid.caption else []
    names = [r[0] for r in grid.rows]
    whole = _rich(grid, range(len(grid.header)), None, names, caption=False)
    if width is None or natural_width(whole, least=True) <= width:
        return [*head, whole, *foot]
    if grid.narrow is not None:
        narrow = fit(grid.narrow, None)
        table = next(r for r in narrow if isinstance(r, Table))
        if natural_width(table, least=True) <= width:
            return narrow
    groups = grid.groups or [[i] for i in range(1, len(grid.header))]
    tries = [(names, None), _legend(grid)] if grid.labels else [(names, None)]
    for labels, legend in tries:
        tables = _pack(grid, groups, labels, width)
        if tables is not None:
            return [*head, *([legend] if legend is not None else []), *tables, *foot]
    return stacked(grid, width)


def print_grids(console: Console, *grids: Grid, width: int | None = None) -> None:
    """Print ``grids`` fitted to ``width`` (default: the console's; the command's console
    is as wide as :func:`terminal_width`), each line wrapped at that width. Every
    table of every command is printed through here."""
    width = width or console.width
    for grid in grids:
        for part in fit(grid, width):
            console.print(part, width=width)


def stacked(grid: Grid, width: int | None = None) -> list[RenderableType]:
    """The last resort of a very narrow terminal: each row as lines of ``header: value``
    (no table); a value that would not fit beside its header goes on a line of its own."""
    out: list[RenderableType] = [Text(grid.title, style="italic")]
    for row in grid.rows:
        lines = Text(_plain(row[0]).replace("\n", " "), style="bold")
        for head, cell in zip(grid.header[1:], row[1:], strict=True):
            value = cell.copy() if isinstance(cell, Text) else Text(str(cell))
            label = head.replace("\n", " / ")
            text = value.plain.replace("\n", " / ")
            long = width is not None and len(label) + len(text) + 4 > width
            lines.append(f"\n  {label}:" + ("\n    " if long else " "))
            lines.append_text(Text(text, style=value.style))
        out.append(lines)
    if grid.caption:
        out.append(Text(grid.caption))
    return out


def _pack(
    grid: Grid, groups: list[list[int]], labels: list[Any], width: int | None
) -> list[Table] | None:
    """Tables of as many groups as fit in ``width`` (None: one group each); None when
    one group alone is too wide."""
    tables: list[Table] = []
    chunk: list[list[int]] = []

    def build(part: list[list[int]]) -> Table:
        return _rich(grid, [0, *(c for g in part for c in g)], None, labels, caption=False)

    for g in groups:
        if width is None:
            tables.append(build([g]))
            continue
        if chunk and natural_width(build([*chunk, g]), least=True) <= width:
            chunk.append(g)
            continue
        if chunk:
            tables.append(build(chunk))
        if natural_width(build([g]), least=True) > width:
            return None
        chunk = [g]
    if chunk:
        tables.append(build(chunk))
    return tables


def _legend(grid: Grid) -> tuple[list[Any], Table]:
    """Short labels (``S1``, ``S2`` ... for systems, ``R1`` ... for runs: the first
    letter of the name column's header) for long names, and the table that maps them."""
    names = [r[0] for r in grid.rows]
    head = grid.header[0].replace("\n", " ") if grid.header else ""
    letter = (head[:1] or "S").upper()
    labels = [f"{letter}{i}" for i in range(1, len(names) + 1)]
    title = "Systems" if head in ("", "system") else f"{head[:1].upper()}{head[1:]} labels"
    legend = Table(title=title, title_justify="left", show_header=False, box=None)
    legend.add_column(style="bold", no_wrap=True)
    legend.add_column(overflow="fold")
    for label, name in zip(labels, names, strict=True):
        legend.add_row(label, name if isinstance(name, Text) else Text(str(name)))
    return labels, legend


def markdown(grid: Grid) -> str:
    """The grid as a GitHub Markdown table under its title."""
    from ragmeter.comparison.tables import markdown_table

    first, _, rest = grid.title.partition("\n")
    head = f"**{first}**\n\n" + (f"{rest}\n\n" if rest else "") if grid.title else ""
    body = markdown_table(
        [h.replace("\n", " ") for h in grid.header],
        [[c.replace("\n", " ") for c in r] for r in grid.plain_rows()],
        grid.right,
    )
    foot = f"\n\n{grid.caption}" if grid.caption else ""
    return head + body + foot + "\n"


def render(grids: Sequence[Grid], chosen: str, records: Sequence[dict], data: Any = None) -> str:
    """``markdown``: every grid as shown; ``csv``: ``records``, one row each, with
    numbers rather than formatted text (shares as fractions, as saved); ``json``:
    ``data`` when given, else ``records``."""
    if chosen == "markdown":
        return "\n".join(markdown(g) for g in grids)
    if chosen == "csv":
        columns: dict[str, None] = {}
        for rec in records:
            columns.update(dict.fromkeys(rec))
        return csv_text(list(columns), records)  # no cell runs as a formula
    return json.dumps(records if data is None else data, indent=2, allow_nan=False) + "\n"

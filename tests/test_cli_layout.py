"""``ragmeter.cli.layout``: column styles, the stacked last resort at its exact width, the
footnote once under the last of several tables (on a line of its own), names and headers
on one line in Markdown, and JSON output kept strict."""

from __future__ import annotations

import math

import pytest
from rich.table import Table

from ragmeter.cli.layout import Grid, _pack, as_table, fit, markdown, render, stacked


def test_the_name_column_is_bold_and_dim_columns_dim():
    grid = Grid("t", ["system", "a", "b"], [["x", "1", "2"]], dim={2})
    columns = as_table(grid).columns
    assert [c.style or None for c in columns] == ["bold", None, "dim"]


def test_stacked_keeps_a_value_beside_its_label_while_it_fits():
    grid = Grid("t", ["name", "recall"], [["bm25\nlong", "80.5"]])
    label, text = "recall", "80.5"
    exact = len(label) + len(text) + 4  # "  recall: 80.5"
    same_line = stacked(grid, exact)[1].plain
    assert same_line == "bm25 long\n  recall: 80.5"  # the name on one line
    own_line = stacked(grid, exact - 1)[1].plain
    assert own_line == "bm25 long\n  recall:\n    80.5"


def test_the_footnote_goes_once_under_the_last_table():
    grid = Grid("t", ["name", "a", "b", "c"], [["x", "1", "2", "3"]], caption="note")
    tables = _pack(grid, [[1], [2], [3]], ["x"], None)
    assert [t.caption for t in tables] == [None, None, None]  # in no table: below them
    for width in (None, 12):  # whole; split over three tables
        parts = fit(grid, width)
        assert [isinstance(p, Table) for p in parts] == [False, *[True] * (len(parts) - 2), False]
        assert parts[-1].plain == "note" and len(parts) == (3 if width is None else 5)


def test_markdown_puts_multi_line_headers_and_cells_on_one_line():
    grid = Grid("Title\nsecond line", ["system", "recall\n@5"], [["a\nb", "1\n2"]], right={1})
    text = markdown(grid)
    assert text.startswith("**Title**\n\nsecond line\n\n")
    assert "| system | recall @5 |" in text and "| a b    |       1 2 |" in text


def test_json_output_stays_strict():
    assert render([], "json", [{"a": 1.5}]) == '[\n  {\n    "a": 1.5\n  }\n]\n'
    with pytest.raises(ValueError):
        render([], "json", [{"a": math.nan}])
    with pytest.raises(ValueError):
        render([], "json", [], {"a": math.inf})

"""``ragmeter.cli.output``: paths as the user would type them, stdout kept for the table
alone, tables and notes wrapped at the fitted width, and the summary as markdown, CSV or
JSON with and without comparisons."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest
from rich.table import Table

from ragmeter.cli import output
from ragmeter.cli import search_views as terminal
from ragmeter.cli.app import console
from ragmeter.comparison.summary import summarize


def test_shown_path_is_relative_under_the_working_folder(tmp_path, monkeypatch):
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path)
    assert output.shown_path(tmp_path / "sub" / "x.json") == "sub/x.json"
    assert output.shown_path(tmp_path) == "."
    elsewhere = tmp_path.parent / "elsewhere"
    assert output.shown_path(elsewhere) == str(elsewhere.resolve())


@pytest.mark.parametrize("chosen", ["markdown", "csv", "json"])
def test_only_the_table_format_keeps_the_console_on_stdout(chosen):
    before = console.file
    with output.to_stderr("table"):
        assert console.file is before
    with output.to_stderr(chosen):
        assert console.file is sys.stderr
    assert console.file is before


def test_tables_and_notes_wrap_at_the_fitted_width(monkeypatch):
    monkeypatch.setattr(terminal, "terminal_width", lambda: 24)
    table = Table("system", "a long column heading here")
    table.add_row("bm25", "0.5")
    note = "a note that is longer than twenty-four characters"
    with console.capture() as cap:
        output.print_tables([table], [note])
    lines = cap.get().splitlines()
    assert lines and max(len(x) for x in lines) <= 24
    assert "twenty-four" in cap.get()


def _summary(systems):
    rng = np.random.default_rng(4)
    m = {
        "recall@5": (rng.random((len(systems), 30)) < 0.6).astype(float),
        "words@5": rng.integers(50, 400, (len(systems), 30)).astype(float),
        "mrr@10": rng.random((len(systems), 30)),
    }
    return summarize(m, systems, "recall@5", seed=2, rounds=200)


def test_summary_text_in_each_format():
    two = _summary(["a", "b"])
    md = output.summary_text(two, [5], "markdown")
    assert "recall@5" in md and "mrr@10" in md and "Paired comparisons on recall@5" in md
    one = _summary(["a"])
    assert "Paired comparisons" not in output.summary_text(one, [5], "markdown")
    rows = output.summary_text(two, [5], "csv").splitlines()
    assert rows[0].startswith("system,metric,mean,low,high")
    assert {r.split(",")[0] for r in rows[1:]} == {"a", "b"}
    assert json.loads(output.summary_text(two, [5], "json")) == two.to_json()


def test_comparisons_are_summarised_past_a_long_family_unless_every(monkeypatch):
    monkeypatch.setattr(terminal, "terminal_width", lambda: 200)
    systems = [f"s{i}" for i in range(9)]  # 36 pairs: more than LONG_FAMILY
    s = _summary(systems)
    assert len(s.comparisons) > terminal.LONG_FAMILY
    args = (s.comparisons, s.metric, s.seed, s.rounds, s.comparison_rule)
    with console.capture() as short:
        output.print_comparisons(*args)
    with console.capture() as every:
        output.print_comparisons(*args, every=True)
    assert len(every.get().splitlines()) > len(short.get().splitlines())
    assert "seed 2, 200 rounds" in every.get()

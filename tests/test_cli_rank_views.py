"""``ragmeter.cli.rank_views``: where each system ranks, readable at 80 columns, with the
headline's sentence over it and the line saying what the ranges mean under it; ``compare``
prints it for the family it was asked for, saying when the ranges needed every pair; two
systems print none (their one verdict says it)."""

from __future__ import annotations

import io

import numpy as np
from rich.console import Console
from typer.testing import CliRunner

from ragmeter.cli import app
from ragmeter.cli.rank_views import print_ranks, rank_views, ranks_grid
from ragmeter.comparison.summary import plan_of, summarize

runner = CliRunner()
LONG = [f"parent-child-{i}00/hybrid-rrf-dense-minilm" for i in range(1, 7)]


def _ranks(names, means=(0.8, 0.78, 0.77, 0.6, 0.55, 0.3)):
    rng = np.random.default_rng(3)
    m = (rng.random((len(names), 150)) < np.asarray(means[: len(names)])[:, None]) + 0.0
    return summarize({"recall@5": m}, list(names), plan_of("recall@5", 1, 500)).ranks


def test_the_ranks_print_within_80_columns_with_long_names():
    ranks = _ranks(LONG)
    out = io.StringIO()
    console = Console(file=out, width=80, force_terminal=False)
    print_ranks(ranks, console)
    lines = out.getvalue().splitlines()
    assert max(len(line) for line in lines) <= 80
    text = " ".join(out.getvalue().split())
    assert "share the top" in text and "rank (95%)" in text
    assert "(Mogstad et al. 2024)" in text


def test_the_table_lists_every_system_best_first_with_its_range_and_letters():
    ranks = _ranks(["a", "b", "c", "d", "e", "f"])
    grid = ranks_grid(ranks)
    assert grid.header == ["system", "recall@5 (%)", "rank (95%)", "group"]
    assert [row[0] for row in grid.rows] == ranks.order
    assert [row[2] for row in grid.rows] == [r.shown for r in ranks.ranges]
    assert all(row[3] for row in grid.rows)
    assert grid.title.startswith("Ranks on recall@5: ") and ranks.sentence in grid.title
    assert rank_views(None, 80) == ([], [])


def test_two_systems_print_no_ranks_their_one_verdict_says_it():
    two = _ranks(["a", "b"])
    assert two is not None and two.sentence  # the data keep them
    assert rank_views(two, 80) == ([], [])
    assert rank_views(_ranks(["a", "b", "c"]), 80)[0]


def test_compare_prints_the_ranks_and_says_when_they_needed_every_pair(example_results):
    env = {"COLUMNS": "80"}
    own = runner.invoke(app, ["compare", str(example_results), "--rounds", "500"], env=env)
    assert own.exit_code == 0, own.output
    shown = " ".join(own.stdout.split())
    assert "Ranks on recall@5:" in shown and "pairs of the table above" in shown
    based = runner.invoke(
        app, ["compare", str(example_results), "--rounds", "500", "--baseline", "whole"], env=env
    )
    assert based.exit_code == 0, based.output
    shown = " ".join(based.stdout.split())
    assert "compared again for the ranks under max-T" in shown
    assert max(len(line) for line in based.stdout.splitlines()) <= 80

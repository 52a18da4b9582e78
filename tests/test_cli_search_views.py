"""``ragmeter.cli.search_views``: numbers right-aligned and names left in every table, the
words columns dim, only the verdict wrapping, a narrow hit table keeping each recall beside
its words, the rank-aware metrics at the ks there are, the narrow comparison table kept
while it fits, a family longer than 30 pairs summarised with its decisive pairs first, and
the sample-size tables."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from rich.table import Table

from ragmeter.cli import search_views as terminal
from ragmeter.cli.layout import as_table, fit, natural_width
from ragmeter.comparison.summary import summarize
from ragmeter.stats import SizeRow
from ragmeter.stats.planning import SystemNeed


def _summary(systems, n=30, seed=4):
    rng = np.random.default_rng(seed)
    m = {
        "recall@5": (rng.random((len(systems), n)) < 0.6).astype(float),
        "words@5": rng.integers(50, 400, (len(systems), n)).astype(float),
        "mrr@10": rng.random((len(systems), n)),
    }
    return summarize(m, systems, "recall@5", seed=2, rounds=200)


def _justify(grid):
    return [c.justify for c in as_table(grid).columns]


def test_the_hit_table_right_aligns_its_numbers_and_dims_the_words():
    grid = terminal.hit_grid(_summary(["a", "b"]), [5])
    assert _justify(grid) == ["left", "right", "right"]
    assert [c.style or None for c in as_table(grid).columns] == ["bold", None, "dim"]


def test_comparison_tables_right_align_the_numbers_and_leave_the_verdict_left():
    s = _summary(["a", "b"])
    args = (s.comparisons, s.metric, s.seed, s.rounds, s.comparison_rule)
    wide = terminal.comparison_grid(*args)
    assert wide.header[:2] == ["A", "B"] and wide.header[-1] == "verdict"
    assert _justify(wide) == ["left", "left", "right", "right", "right", "left"]
    narrow = terminal.narrow_comparison_grid(*args)  # the p-value under the difference
    assert _justify(narrow) == ["left", "right", "left"]
    assert narrow.header[1].splitlines()[-1] == terminal.column_labels(s.comparison_rule)[1]
    assert len(narrow.rows[0][1].splitlines()) == 3
    # the per-pair rule has no p-value: two lines of numbers
    none = terminal.narrow_comparison_grid(*args[:4], replace(s.comparison_rule, adjust="none"))
    assert len(none.header[1].splitlines()) == 2 and _justify(none) == ["left", "right", "left"]


@pytest.mark.parametrize(
    "ks, wanted",
    [
        ([1, 3, 5, 10], ["mrr@10", "ndcg@10", "precision@5", "coverage@5"]),
        ([1, 3, 5], ["mrr@5", "ndcg@5", "precision@5", "coverage@5"]),
        ([1, 3, 20], ["mrr@20", "ndcg@20", "precision@3", "coverage@3"]),
        ([10, 20], ["mrr@10", "ndcg@10", "precision@10", "coverage@10"]),
    ],
)
def test_rank_aware_metrics_at_10_and_5_else_the_nearest_k(ks, wanted):
    available = {f"{m}@{k}": None for k in ks for m in ("mrr", "ndcg", "precision", "coverage")}
    available["recall"] = None  # a metric without a k is not a rank-aware column
    assert terminal._rank_metrics(available) == wanted
    assert terminal._rank_metrics({"map": None}) == []


def test_thirty_pairs_are_all_shown_and_thirty_one_are_summarised():
    s = _summary([f"s{i}" for i in range(9)])  # 36 pairs
    rows = s.comparisons
    assert terminal.LONG_FAMILY == 30
    shown, line = terminal.decisive_first(rows[:30])
    assert shown == rows[:30] and line == ""
    shown, line = terminal.decisive_first(rows[:31])
    assert len(shown) == 30 and line.startswith("1 more pairs not shown (")


def test_the_line_under_a_long_family_counts_each_kind_left_out():
    row = _summary(["a", "b"]).comparisons[0]
    better = replace(row, verdict="a better", winner="a", identical=False)
    tie = replace(row, verdict="no difference found", winner=None, identical=False)
    same = replace(tie, identical=True)
    rows = [tie, better, same, tie, better, better]
    shown, line = terminal.decisive_first(rows, limit=2)
    assert shown == [better, better]  # the pairs found different first
    assert line.startswith("4 more pairs not shown (1 with a better system, 2 ties, 1 identical);")
    assert terminal.decisive_first(rows, limit=None) == (rows, "")


def test_a_narrow_hit_table_keeps_each_recall_beside_its_words_once():
    s = summarize(
        {f"{m}@{k}": np.ones((2, 10)) for m in ("recall", "words") for k in (1, 3, 5, 10)},
        ["a", "b"],
        "recall@5",
        seed=2,
        rounds=200,
    )
    tables = fit(terminal.hit_grid(s, [1, 3, 5, 10]), 60)[1:]
    assert len(tables) > 1  # split: too wide for 60 columns
    headers = [[str(c.header) for c in t.columns][1:] for t in tables]
    flat = [h for part in headers for h in part]
    assert flat == [x for k in (1, 3, 5, 10) for x in (f"recall@{k}", f"words@{k}")]
    for part in headers:
        assert len(part) % 2 == 0 and all(
            w == r.replace("recall", "words") for r, w in zip(part[::2], part[1::2], strict=True)
        )


def test_size_tables_right_align_every_number():
    rows = [SizeRow(n, 0.5, 0.4, 0.6, 0.1, 200, 1, "mulberry32", 0.9) for n in (10, 20)]
    grid = terminal.size_grid(rows, "recall@5", "bm25")
    assert grid.header[2] == "90% interval"
    assert _justify(grid) == ["right"] * 4
    assert terminal.size_grid([], "mrr@10", "bm25").header[2] == "95% interval"


def test_only_the_verdict_wraps_and_the_narrow_table_is_kept_while_it_fits():
    s = _summary(["alpha-system", "beta-system"])
    args = (s.comparisons, s.metric, s.seed, s.rounds, s.comparison_rule)
    for grid in (terminal.comparison_grid(*args), terminal.narrow_comparison_grid(*args)):
        assert [c.no_wrap for c in as_table(grid).columns][-1] is False  # the verdict wraps
        assert all(c.no_wrap for c in as_table(grid).columns[:-1])  # names, numbers whole
    narrow = fit(terminal.narrow_comparison_grid(*args), None)[-1]
    least = natural_width(narrow, least=True)
    tables, _ = terminal.comparison_views(*args, least)
    assert [str(c.header) for c in tables[-1].columns][0] == "A\n- B"  # two lines a pair
    lines, _ = terminal.comparison_views(*args, least - 1)
    assert not any(isinstance(t, Table) for t in lines)  # too narrow: lines, no table


def test_one_table_of_half_widths_for_every_system():
    rows = [SizeRow(n, 0.5, 0.4, 0.6, 10 / n, 200, 1, "mulberry32") for n in (50, 100)]
    one = terminal.sizes_grid([SystemNeed("bm25", rows, 120)], "recall@5", "± 4 points")
    assert one.header == ["system", "± at 50", "± at 100", "questions\nfor ± 4 points"]
    assert one.rows == [["bm25", "20.0", "10.0", "120"]]
    flat = terminal.sizes_grid([SystemNeed("x", rows, None, 1.0)], "mrr@10", "± 0.04")
    assert flat.rows == [["x", "0.200", "0.100", "no spread"]]
    assert terminal.sizes_grid([], "mrr@10", "± 0.04").header == ["system", "questions\nfor ± 0.04"]

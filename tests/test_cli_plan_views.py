"""``ragmeter.cli.plan_views``: --half-width and --difference in points (an old fraction
read with a note), the family --baseline or --pairs choose, the pairs' table (numbers
right-aligned, its caption, identical and constant pairs named), the plan as Markdown, CSV
and JSON, and a long list of pairs cut to those needing the most questions."""

from __future__ import annotations

import csv
import io
import json

import pytest

from ragmeter.cli import plan_views
from ragmeter.cli.app import points
from ragmeter.cli.layout import as_table
from ragmeter.errors import InputError
from ragmeter.stats import SizeRow
from ragmeter.stats.planning import PairNeed, Plan, SystemNeed


def test_points_are_hundredths_and_a_fraction_is_read_with_a_note(capsys):
    assert points(4, "--half-width") == pytest.approx(0.04)
    assert points(1, "--half-width") == pytest.approx(0.01)
    assert points(0, "--half-width") == 0.0
    assert capsys.readouterr().err == ""  # points: no note
    assert points(0.04, "--difference") == pytest.approx(0.04)
    err = " ".join(capsys.readouterr().err.split())
    assert "--difference 0.04 is read as a fraction (4 points)" in err


def test_baseline_and_pairs_choose_the_family():
    systems = ["a", "b", "c"]
    assert plan_views.planned_pairs(systems, None, None) is None
    assert plan_views.planned_pairs(systems, "b", None) == [("a", "b"), ("c", "b")]
    assert plan_views.planned_pairs(systems, None, "a:c") == [("a", "c")]
    with pytest.raises(InputError, match="give --baseline or --pairs, not both"):
        plan_views.planned_pairs(systems, "a", "a:c")
    with pytest.raises(InputError, match="unknown system 'x'"):
        plan_views.planned_pairs(systems, "x", None)
    with pytest.raises(InputError, match="unknown system 'x'"):
        plan_views.planned_pairs(systems, None, "a:x")


def _rows(n):
    return [SizeRow(n * m, 0.5, 0.4, 0.6, 0.1 / m, 200, 1, "mulberry32") for m in (1, 2, 4, 8)]


PLAN = Plan(
    "recall@5",
    0.04,
    0.05,
    1,
    200,
    systems=[SystemNeed("a", _rows(50), 120), SystemNeed("b", _rows(50), None, 1.0)],
    pairs=[
        PairNeed("a", "b", 300, in_family=400),
        PairNeed("a", "c", None, identical=True),
        PairNeed("b", "c", None),
    ],
    family=3,
)


def test_the_pairs_table_names_each_pair_and_its_questions():
    grid = plan_views.pair_need_grid(PLAN, PLAN.pairs, "the caption")
    assert grid.title.startswith(
        "Questions needed to separate the planned difference of 5 points (power 0.8), "
        "at design effect 1"
    )
    assert grid.header == ["A", "B", "in this table (3 pairs)", "alone"]
    assert grid.rows == [
        ["a", "b", "400", "300"],
        ["a", "c", "identical", ""],
        ["b", "c", "constant difference", ""],
    ]
    assert grid.caption == "the caption"
    assert [c.justify for c in as_table(grid).columns] == ["left", "left", "right", "right"]
    narrow = plan_views.pair_need_grid(PLAN, PLAN.pairs[:1], narrow=True)
    assert narrow.rows == [["a\n- b", "400", "300"]]
    assert [c.justify for c in as_table(narrow).columns] == ["left", "right", "right"]
    mrr = plan_views.pair_need_grid(Plan("mrr@10", 0.04, 0.05, 1, 200), [])
    assert "separate the planned difference of 0.05 (power 0.8)" in mrr.title


def test_the_plan_as_csv_markdown_and_json():
    rows = list(csv.DictReader(io.StringIO(plan_views.plan_text(PLAN, "csv"))))
    assert [(r["kind"], r["a"], r["b"], r["questions"], r["alone"]) for r in rows] == [
        ("system", "a", "", "120", ""),
        ("system", "b", "", "", ""),
        ("pair", "a", "b", "400", "300"),
        ("pair", "a", "c", "", ""),
        ("pair", "b", "c", "", ""),
    ]
    md = plan_views.plan_text(PLAN, "markdown")
    assert "± 4 points" in md and "| a " in md and "constant difference" in md
    data = json.loads(plan_views.plan_text(PLAN, "json"))
    assert data["family"] == 3 and data["pairs"][0]["in_family"] == 400


def test_a_long_list_of_pairs_keeps_those_needing_most():
    needs = [PairNeed("a", f"s{i}", i * 10, in_family=i * 20) for i in range(1, 6)]
    needs.append(PairNeed("a", "same", None, identical=True))
    assert plan_views.most_needed(needs, None) == (needs, "")
    assert plan_views.most_needed(needs, 6) == (needs, "")
    shown, line = plan_views.most_needed(needs, 2)
    assert [p.b for p in shown] == ["s5", "s4"]
    assert line.startswith("4 more pairs not shown, each needing at most 60 questions")
    alone = [PairNeed("a", "x", 7), PairNeed("a", "y", 9), PairNeed("a", "z", 8)]
    shown, line = plan_views.most_needed(alone, 1)
    assert [p.b for p in shown] == ["y"]
    assert "each needing at most 8 questions" in line


def test_pairs_left_out_without_a_question_count_are_not_said_to_need_zero():
    needs = [PairNeed("a", "b", 40, in_family=90)]
    needs += [PairNeed("a", f"same{i}", None, identical=True) for i in range(3)]
    shown, line = plan_views.most_needed(needs, 1)
    assert [p.b for p in shown] == ["b"]
    assert line.startswith("3 more pairs not shown, each identical or with a constant difference")
    assert "at most" not in line


def test_the_json_plan_gives_the_half_width_the_tables_print():
    from ragmeter.stats.exact import clopper_pearson

    low, high = clopper_pearson(45, 45)
    flat = [SizeRow(45, 1.0, 1.0, 1.0, 0.0, 200, 1, "mulberry32", exact=(low, high))]
    plan = Plan("recall@5", 0.04, 0.05, 1, 200, systems=[SystemNeed("all", flat, 45, 1.0)])
    row = json.loads(plan_views.plan_text(plan, "json"))["systems"][0]["sizes"][0]
    assert row["half_width"] == pytest.approx((high - low) / 2) and row["half_width"] > 0.03
    assert row["bootstrap_half_width"] == 0.0 and row["interval"] == "exact"
    record = next(csv.DictReader(io.StringIO(plan_views.plan_text(plan, "csv"))))
    assert float(record["half_width"]) == pytest.approx((high - low) / 2)


def test_separated_pairs_are_marked_and_listed_after_the_undecided():
    needs = [
        PairNeed("a", "b", 900, in_family=2141, separated="b better"),
        PairNeed("a", "c", 40, in_family=90),
        PairNeed("b", "c", 30, in_family=60),
    ]
    shown, line = plan_views.most_needed(needs, None)
    assert [(p.a, p.b) for p in shown] == [("a", "c"), ("b", "c"), ("a", "b")] and line == ""
    shown, line = plan_views.most_needed(needs, 1)
    assert [(p.a, p.b) for p in shown] == [("a", "c")]
    assert "each needing at most 60 questions" in line
    assert "and 1 the run's table already separated" in line
    plan = Plan("recall@5", 0.04, 0.05, 1, 200, pairs=needs, family=3)
    grid = plan_views.pair_need_grid(plan, shown + [needs[0]])
    assert grid.rows[-1] == ["a", "b", "separated (2141)", "900"]


def test_a_clustered_plan_names_each_pairs_design_effect():
    needs = [PairNeed("a", "b", 300, in_family=400, deff=1.84), PairNeed("a", "c", None)]
    plan = Plan("recall@5", 0.04, 0.05, 1, 200, pairs=needs, family=2)
    grid = plan_views.pair_need_grid(plan, needs)
    assert "at each pair's design effect" in grid.title
    assert grid.header[-1] == "design effect"
    assert grid.rows == [
        ["a", "b", "400", "300", "1.84"],
        ["a", "c", "constant difference", "", ""],
    ]


def test_a_plan_table_exactly_as_wide_as_the_terminal_stays_one_table():
    from rich.table import Table

    from ragmeter.cli.layout import fit, natural_width

    grid = plan_views.pair_need_grid(PLAN, PLAN.pairs, "the caption")
    grid.narrow = plan_views.pair_need_grid(PLAN, PLAN.pairs, "the caption", narrow=True)
    whole = next(r for r in fit(grid, None) if isinstance(r, Table))
    width = natural_width(whole, least=True)
    at = [r for r in fit(grid, width) if isinstance(r, Table)]
    assert len(at) == 1 and len(at[0].columns) == 4  # as wide as the terminal: it fits
    under = [r for r in fit(grid, width - 1) if isinstance(r, Table)]
    assert len(under[0].columns) == 3  # one column narrower: A over B

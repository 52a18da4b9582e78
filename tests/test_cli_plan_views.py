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

"""The main effects of a strategy x retriever grid (``--family main-effects``): each
retriever over all strategies and each strategy over all retrievers, decided as
contrasts in the grid's one family beside its cell-by-cell pairs, shown as the last
row and column of the grid views, and reached by every view and rule."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import EXAMPLE
from typer.testing import CliRunner

import ragmeter
from ragmeter.cli import app
from ragmeter.comparison.effects import main_effect_names, with_main_effects
from ragmeter.comparison.families import GRID_LABELS, grid_pairs, grid_views, short_verdict
from ragmeter.comparison.verdicts import ADJUSTMENTS, compare_family
from ragmeter.errors import InputError
from ragmeter.inputs.config import Config
from ragmeter.report.data import report_data
from ragmeter.runs.results import Results

runner = CliRunner()
MAIN = GRID_LABELS["main-effects"]


def _names(s: int, r: int) -> list[str]:
    return [f"c{i}/r{j}" for i in range(s) for j in range(r)]


def pooled_grid(s: int = 6, n: int = 200, wins: int = 8, losses: int = 3) -> np.ndarray:
    """An s x 2 grid of 0/1 hits where r1 beats r0 with every strategy on ``wins``
    questions and loses on ``losses`` (each strategy on questions of its own): no
    single strategy's pair separates (McNemar's p for 8 against 3 is 0.23), the
    pooled gain does."""
    rng = np.random.default_rng(5)
    base = (rng.random(n) < 0.6).astype(float)
    x = np.tile(base, (2 * s, 1))
    at = 0
    for i in range(s):
        x[2 * i : 2 * i + 2, at : at + 10] = 1 - x[2 * i, at : at + 10]  # the strategy's own
        at += 10
        x[2 * i + 1, at : at + wins] = 1.0
        x[2 * i, at : at + wins] = 0.0
        at += wins
        x[2 * i + 1, at : at + losses] = 0.0
        x[2 * i, at : at + losses] = 1.0
        at += losses
    return x


# --------------------------------------------------------------------------- the contrasts


def test_a_main_effect_is_the_per_question_difference_averaged_over_the_other_factor():
    names = _names(3, 2)
    x = np.random.default_rng(1).random((6, 40))
    rows, every, pairs = with_main_effects(x, names)
    assert every[6:] == ["*/r0", "*/r1", "c0/*", "c1/*", "c2/*"]
    assert [(every[i], every[j]) for i, j in pairs] == main_effect_names(names)
    assert main_effect_names(names) == [
        ("*/r0", "*/r1"), ("c0/*", "c1/*"), ("c0/*", "c2/*"), ("c1/*", "c2/*"),
    ]  # fmt: skip
    retriever = rows[every.index("*/r0")] - rows[every.index("*/r1")]
    by_strategy = [x[names.index(f"c{i}/r0")] - x[names.index(f"c{i}/r1")] for i in range(3)]
    np.testing.assert_allclose(retriever, np.mean(by_strategy, axis=0))
    strategy = rows[every.index("c0/*")] - rows[every.index("c2/*")]
    by_retriever = [x[names.index(f"c0/r{j}")] - x[names.index(f"c2/r{j}")] for j in range(2)]
    np.testing.assert_allclose(strategy, np.mean(by_retriever, axis=0))


def test_main_effects_join_the_grid_s_pairs_as_one_family_under_each_rule():
    names = _names(6, 2)
    x = pooled_grid()
    for adjust in ADJUSTMENTS:
        table = compare_family(x, names, family="main-effects", adjust=adjust, rounds=2000)
        grid = len(grid_pairs(names, "grid"))
        assert grid == 36 and table.rule.pairs == 36 + 1 + 15
        assert table.rule.family == MAIN and f"({MAIN})" in table.rule.header
        got = [(r.a, r.b) for r in table.rows]
        assert got[36:] == main_effect_names(names)
        for r in table.rows:
            apart = r.difference.low > 0 or r.difference.high < 0
            assert ("better" in r.verdict) == apart == r.separated, (adjust, r)
            if adjust != "none":
                assert (r.p < table.rule.alpha) == apart


@pytest.mark.parametrize("adjust", ["maxt", "holm", "fdr"])
def test_a_pooled_gain_no_single_strategy_separates_is_found_by_the_main_effect(adjust):
    names = _names(6, 2)
    table = compare_family(pooled_grid(), names, family="main-effects", adjust=adjust, rounds=4000)
    cells = [r for r in table.rows if r.a[0] == "c" and r.a.endswith("/r0") and r.b.endswith("/r1")]
    assert len(cells) == 6 and all("tie" in r.verdict for r in cells)
    effect = next(r for r in table.rows if (r.a, r.b) == ("*/r0", "*/r1"))
    assert effect.verdict == "*/r1 better" and effect.difference.high < 0
    assert effect.difference.mean == pytest.approx(-5 / 200)  # (8 - 3) of 200, each strategy
    alone = compare_family(pooled_grid(), names, pairs=[("c0/r1", "c0/r0")])
    assert "tie" in alone.rows[0].verdict  # even planned alone, one strategy cannot tell


def test_grid_views_show_the_main_effects_as_the_last_row_and_column():
    names = _names(3, 2)
    table = compare_family(pooled_grid(3), names, family="main-effects", rounds=2000)
    by_retriever, by_strategy = grid_views(table.rows, "main-effects")
    assert by_retriever.rows == ["c0", "c1", "c2", "all strategies"]
    assert by_retriever.columns == ["r0 − r1"]
    assert by_strategy.columns == ["r0", "r1", "all retrievers"]
    assert by_strategy.rows == ["c0 − c1", "c0 − c2", "c1 − c2"]
    effect = table.rows[by_retriever.cells[3][0]]
    assert (effect.a, effect.b) == ("*/r0", "*/r1")
    assert short_verdict(effect) in ("r1 better", "tie")
    assert short_verdict(table.rows[by_strategy.cells[1][2]]) in ("tie", "c0 better", "c2 better")
    # the grid family's views are unchanged: no effect row or column
    plain = compare_family(pooled_grid(3), names, family="grid", rounds=2000)
    assert [v.rows[-1] for v in grid_views(plain.rows, "grid")] == ["c2", "c1 − c2"]


def test_identical_cells_fold_and_the_main_effects_are_still_decided():
    names = _names(2, 2)
    x = pooled_grid(2)
    x[1] = x[0]  # c0/r1 scores as c0/r0 on every question
    table = compare_family(x, names, family="main-effects", rounds=500)
    assert [(r.a, r.b) for r in table.rows if r.identical] == [("c0/r0", "c0/r1")]
    assert table.rule.pairs == 3 + 2  # the grid's 4 pairs, one identical, and 2 effects
    assert {("*/r0", "*/r1"), ("c0/*", "c1/*")} <= {(r.a, r.b) for r in table.rows}


def test_clustered_questions_flip_whole_documents_for_the_main_effects_too():
    names = _names(3, 2)
    codes = np.repeat(np.arange(20), 10)
    table = compare_family(
        pooled_grid(3), names, family="main-effects", rounds=1000, clusters=codes
    )
    assert table.rule.clusters == 20 and "whole clusters" in table.rule.test
    none = compare_family(
        pooled_grid(3), names, family="main-effects", adjust="none", rounds=500, clusters=codes
    )
    assert "cluster bootstrap" in none.rule.interval and len(none.rows) == 13


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"baseline": "c0/r0"}, "chooses its own pairs"),
        ({"pairs": [("c0/r0", "c0/r1")]}, "chooses its own pairs"),
    ],
)
def test_main_effects_choose_their_own_pairs(kwargs, message):
    with pytest.raises(InputError, match=message):
        compare_family(pooled_grid(2), _names(2, 2), family="main-effects", **kwargs)


def test_main_effects_need_a_grid_and_a_free_wildcard_name():
    with pytest.raises(InputError, match="main-effects.*needs a strategy x retriever grid"):
        compare_family(np.eye(3), ["a", "b", "c"], family="main-effects")
    names = ["*/r0", "*/r1", "c1/r0", "c1/r1"]
    with pytest.raises(InputError, match="leaves no name for the main effects"):
        compare_family(pooled_grid(2), names, family="main-effects")


# --------------------------------------------------------------------------- a grid run


@pytest.fixture(scope="module")
def grid_run(tmp_path_factory):
    """3 strategies x 2 BM25 settings on the example, its family main-effects, saved."""
    cfg = Config(
        corpus=str(EXAMPLE / "posts"),
        testset=str(EXAMPLE / "questions.jsonl"),
        strategies=("fixed", "sentence", "parent-400"),
        retrievers=("bm25", {"name": "b03", "kind": "bm25", "b": 0.3}),
        rounds=300,
        family="main-effects",
    )
    run = ragmeter.search(cfg)
    return run, Results(run.save(tmp_path_factory.mktemp("effects") / "res"))


def test_a_run_whose_family_is_main_effects_keeps_it_in_every_view(grid_run):
    run, saved = grid_run
    rule = run.summary.comparison_rule
    assert rule.family == MAIN
    key = [(r.a, r.b, r.p, r.verdict) for r in run.summary.comparisons]
    assert ("*/bm25", "*/b03") in [k[:2] for k in key]
    assert [(r.a, r.b, r.p, r.verdict) for r in saved.summary.comparisons] == key
    assert [(r.a, r.b, r.p, r.verdict) for r in ragmeter.compare(saved)] == key
    grids = report_data(saved)["comparison_grids"]
    assert grids[0]["rows"][-1] == "all strategies"
    assert grids[1]["columns"][-1] == "all retrievers"


def test_compare_takes_main_effects_with_each_rule_and_shows_them_in_the_grids(grid_run):
    _, saved = grid_run
    for adjust in ADJUSTMENTS:
        got = runner.invoke(
            app,
            ["compare", str(saved.path), "--family", "main-effects", "--adjust", adjust],
            env={"COLUMNS": "80"},
        )
        assert got.exit_code == 0, got.output
        assert max(len(line) for line in got.stdout.splitlines()) <= 80
        out = " ".join(got.stdout.split())
        assert "all strategies" in out and "all retrievers" in out
    data = json.loads(
        runner.invoke(
            app, ["compare", str(saved.path), "--family", "main-effects", "--format", "json"]
        ).stdout
    )
    assert data["rule"]["family"] == MAIN
    assert ("*/bm25", "*/b03") in [(r["a"], r["b"]) for r in data["rows"]]
    refused = runner.invoke(
        app, ["compare", str(saved.path), "--family", "main-effects", "--baseline", "fixed/bm25"]
    )
    assert refused.exit_code == 2 and "not more than one" in refused.stderr


def test_plan_plans_the_cells_of_a_main_effects_family_at_its_whole_size(grid_run):
    _, saved = grid_run
    plans = {}
    for family in ("grid", "main-effects"):
        got = runner.invoke(app, ["plan", str(saved.path), "--family", family, "--format", "json"])
        assert got.exit_code == 0, got.output
        plans[family] = json.loads(got.stdout)
    grid, effects = plans["grid"], plans["main-effects"]
    assert grid["family"] == 9 and effects["family"] == 9 + 1 + 3  # 3 x 2: 9 pairs, 4 effects
    assert [(p["a"], p["b"]) for p in effects["pairs"]] == [(p["a"], p["b"]) for p in grid["pairs"]]


# --------------------------------------------------------------------------- answers


def _graded_grid(path):
    """A 2 x 2 grid of 8 questions whose answers are graded, each system differently."""
    from conftest import save_example
    from test_answers_paired import write_grades

    results = save_example(
        path,
        8,
        strategies=("sentence", "fixed-40"),
        custom_strategies=({"name": "fixed-40", "kind": "fixed", "size": 40},),
        retrievers=("bm25", {"name": "b03", "kind": "bm25", "b": 0.3}),
        ks=(1, 5),
        rounds=200,
    )
    names = Results(results).systems
    write_grades(results, {s: "ccccwwww"[i:] + "cccc"[:i] for i, s in enumerate(names)})
    return results


def test_answer_verdicts_take_main_effects_and_fdr_on_a_grid(tmp_path):
    from ragmeter.answers.paired import answer_verdicts

    results = _graded_grid(tmp_path / "res")
    for adjust in ADJUSTMENTS:
        v = answer_verdicts(results, family="main-effects", adjust=adjust)
        table = v.tables["correct"]
        assert table.rule.family == MAIN and table.rule.adjust == adjust
        assert ("*/bm25", "*/b03") in [(r.a, r.b) for r in table.rows]
        assert table.rule.pairs + sum(r.identical for r in table.rows) == 4 + 2


def test_a_main_effect_planned_alone_is_a_family_of_one_at_the_full_level():
    names = _names(6, 2)
    one = compare_family(pooled_grid(), names, pairs=[("*/r1", "*/r0")], rounds=4000)
    assert one.rule.pairs == 1 and "a family of one pair" in one.rule.header
    row = one.rows[0]
    assert row.verdict == "*/r1 better" and row.p == row.p_value
    family = compare_family(pooled_grid(), names, family="main-effects", rounds=4000)
    effect = next(r for r in family.rows if (r.a, r.b) == ("*/r0", "*/r1"))
    assert row.p_value == effect.p_value and row.p < effect.p  # the family's adjustment
    mixed = compare_family(pooled_grid(), names, pairs=[("*/r1", "*/r0"), ("c0/r1", "c0/r0")])
    assert [(r.a, r.b) for r in mixed.rows] == [("*/r1", "*/r0"), ("c0/r1", "c0/r0")]
    with pytest.raises(InputError, match=r"unknown system '\*/r9'"):
        compare_family(pooled_grid(), names, pairs=[("*/r9", "*/r0")])
    with pytest.raises(InputError, match="needs a strategy x retriever grid"):
        compare_family(np.eye(3), ["a", "b", "c"], pairs=[("*/b", "a")])


def test_compare_takes_a_planned_main_effect(grid_run):
    _, saved = grid_run
    got = runner.invoke(
        app, ["compare", str(saved.path), "--pairs", "*/b03:*/bm25", "--format", "json"]
    )
    assert got.exit_code == 0, got.output
    data = json.loads(got.stdout)
    assert data["rule"]["pairs"] == 1 and [(r["a"], r["b"]) for r in data["rows"]] == [
        ("*/b03", "*/bm25")
    ]


def test_plan_takes_the_planned_main_effect_compare_takes_and_plans_its_averaged_rows(grid_run):
    from ragmeter.comparison.effects import averaged_scores
    from ragmeter.stats.planning import pair_needs

    _, saved = grid_run
    got = runner.invoke(
        app, ["plan", str(saved.path), "--pairs", "*/b03:*/bm25", "--format", "json"]
    )
    assert got.exit_code == 0, got.output
    data = json.loads(got.stdout)
    assert data["family"] == 1 and [(p["a"], p["b"]) for p in data["pairs"]] == [
        ("*/b03", "*/bm25")
    ]
    # planned on the averaged rows compare compares, not on any one cell
    metric = saved.summary.metric
    rows = averaged_scores(saved.matrix(metric), saved.systems, [("*/b03", "*/bm25")])
    assert sorted(rows) == ["*/b03", "*/bm25", "fixed/*", "parent-400/*", "sentence/*"]
    cells = [saved.scores(s, metric) for s in saved.systems if s.endswith("/b03")]
    assert np.array_equal(rows["*/b03"], np.mean(cells, axis=0))
    [need] = pair_needs(rows, ["*/b03", "*/bm25"], data["difference"], 1, data["alpha"])
    assert data["pairs"][0]["needed"] == need.needed
    table = runner.invoke(app, ["plan", str(saved.path), "--pairs", "*/b03:*/bm25"])
    assert table.exit_code == 0 and "*/b03" in table.stdout
    # a misspelt averaged row: one line naming the names there are, as compare says it
    for command in ("plan", "compare"):
        refused = runner.invoke(app, [command, str(saved.path), "--pairs", "*/b3:*/bm25"])
        assert refused.exit_code == 2, refused.output
        assert "unknown system '*/b3'" in refused.stderr and "*/b03" in refused.stderr


def test_answer_verdicts_take_a_planned_main_effect_and_check_its_name_first(tmp_path):
    from ragmeter.answers.paired import answer_verdicts, check_choice

    results = _graded_grid(tmp_path / "res")
    table = answer_verdicts(results, pairs="*/b03:*/bm25").tables["correct"]
    assert table.rule.pairs == 1 and [(r.a, r.b) for r in table.rows] == [("*/b03", "*/bm25")]
    assert check_choice(results, pairs="*/b03:*/bm25").pairs == (("*/b03", "*/bm25"),)
    with pytest.raises(InputError, match=r"unknown system '\*/b3'.*\*/b03"):
        check_choice(results, pairs="*/b3:*/bm25")


def test_a_run_that_planned_a_main_effect_keeps_it_for_its_answers(tmp_path):
    from conftest import save_example
    from test_answers_paired import write_grades

    from ragmeter.answers.paired import answer_verdicts

    results = save_example(
        tmp_path / "res",
        8,
        strategies=("sentence", "fixed-40"),
        custom_strategies=({"name": "fixed-40", "kind": "fixed", "size": 40},),
        retrievers=("bm25", {"name": "b03", "kind": "bm25", "b": 0.3}),
        ks=(1, 5),
        rounds=200,
        pairs=("*/b03:*/bm25",),
    )
    saved = Results(results)
    assert [(r.a, r.b) for r in saved.summary.comparisons] == [("*/b03", "*/bm25")]
    names = saved.systems
    write_grades(results, {s: "ccccwwww"[i:] + "cccc"[:i] for i, s in enumerate(names)})
    v = answer_verdicts(results)
    assert not v.notes
    assert [(r.a, r.b) for r in v.tables["correct"].rows] == [("*/b03", "*/bm25")]

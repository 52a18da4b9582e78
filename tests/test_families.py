"""The questions a strategy x retriever grid asks: retrievers within each strategy and
strategies within each retriever, one family under the run's rule, the default of a
grid run, shown as grids in the terminal and the report and reached by every view."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import EXAMPLE
from typer.testing import CliRunner

import ragmeter
from ragmeter.cli import app
from ragmeter.comparison.families import (
    GRID_LABELS,
    grid_cells,
    grid_pairs,
    grid_views,
    short_verdict,
)
from ragmeter.comparison.systems import ComparisonPlan, compare_run, compare_systems
from ragmeter.comparison.verdicts import compare_family
from ragmeter.errors import InputError
from ragmeter.inputs.config import Config
from ragmeter.report.data import report_data
from ragmeter.runs.results import Results

runner = CliRunner()
BOTH = GRID_LABELS["grid"]


def _names(s: int, r: int) -> list[str]:
    return [f"c{i}/r{j}" for i in range(s) for j in range(r)]


def _scores(m: int, n: int = 60, seed: int = 3, binary: bool = True) -> np.ndarray:
    rng = np.random.default_rng(seed)
    base = rng.random(n) < 0.6
    x = base[None, :] ^ (rng.random((m, n)) < 0.15)
    x[0] |= rng.random(n) < 0.5  # the first system is truly better
    x = x.astype(float)
    return x if binary else x * rng.choice([1.0, 0.5, 1 / 3], size=n)[None, :]


# --------------------------------------------------------------------------- the families


@pytest.mark.parametrize(
    ("s", "r", "within_strategy", "within_retriever"),
    [(2, 2, 2, 2), (3, 3, 9, 9), (6, 3, 18, 45)],
)
def test_grid_families_hold_exactly_the_pairs_within_a_strategy_or_a_retriever(
    s, r, within_strategy, within_retriever
):
    names = _names(s, r)
    cells = grid_cells(names)
    retrievers = grid_pairs(names, "retrievers")
    strategies = grid_pairs(names, "strategies")
    both = grid_pairs(names, "grid")
    assert len(retrievers) == within_strategy and len(strategies) == within_retriever
    assert both == retrievers + strategies  # the retrievers' pairs first
    assert all(cells[names[i]][0] == cells[names[j]][0] for i, j in retrievers)
    assert all(cells[names[i]][1] == cells[names[j]][1] for i, j in strategies)
    assert all(i < j for i, j in both)  # A before B in the run's order
    every = {(i, j) for i in range(s * r) for j in range(i + 1, s * r)}
    crossed = every - set(both)  # another strategy with another retriever: not asked
    assert all(
        cells[names[i]][0] != cells[names[j]][0] and cells[names[i]][1] != cells[names[j]][1]
        for i, j in crossed
    )


@pytest.mark.parametrize(
    ("names", "found"),
    [
        (
            ["fixed", "sentence", "recursive"],
            "systems fixed, sentence, recursive name no retriever",
        ),
        (["fixed/bm25", "fixed/dense"], "this run has 1 strategy and 2 retrievers"),
        (["fixed/bm25", "sentence/bm25"], "this run has 2 strategies and 1 retriever"),
        (["a/x", "a/y", "b/x"], "not every strategy with every retriever"),
        (["a/x", "a/y", "b/x", "b/y", "mine"], "systems mine name no retriever"),
    ],
)
def test_a_grid_family_on_a_run_that_is_no_grid_says_so_in_one_line(names, found):
    assert grid_cells(names) is None
    x = _scores(len(names))
    for family in ("grid", "retrievers", "strategies"):
        with pytest.raises(InputError) as err:
            compare_family(x, names, family=family, rounds=200)
        text = str(err.value)
        assert "\n" not in text and found in text
        assert f"family {family!r}" in text and "needs a strategy x retriever grid" in text


def test_the_grid_is_one_family_adjusted_jointly_under_each_rule():
    names = _names(3, 3)
    x = _scores(9)
    for adjust in ("maxt", "holm"):
        grid = compare_family(x, names, family="grid", adjust=adjust, rounds=500, seed=2)
        same = [(names[i], names[j]) for i, j in grid_pairs(names, "grid")]
        planned = compare_family(x, names, pairs=same, adjust=adjust, rounds=500, seed=2)
        assert grid.rule.pairs == 18 and grid.rule.family == BOTH
        assert f"over 18 pairs ({BOTH})" in grid.rule.header
        # the same decision as those 18 pairs planned together: one family, not two
        assert [(r.a, r.b, r.p, r.difference.low, r.verdict) for r in grid.rows] == [
            (r.a, r.b, r.p, r.difference.low, r.verdict) for r in planned.rows
        ]


def test_one_of_the_two_families_alone_pays_for_fewer_pairs():
    names = _names(3, 3)
    x = _scores(9)
    grid = compare_family(x, names, family="grid", adjust="holm", rounds=500)
    alone = compare_family(x, names, family="retrievers", adjust="holm", rounds=500)
    assert alone.rule.pairs == 9 and alone.rule.family == "retrievers within each strategy"
    p_grid = {(r.a, r.b): r.p for r in grid.rows}
    assert all(r.p <= p_grid[(r.a, r.b)] for r in alone.rows)
    assert any(r.p < p_grid[(r.a, r.b)] for r in alone.rows)
    strategies = compare_family(x, names, family="strategies", adjust="holm", rounds=500)
    assert strategies.rule.pairs == 9
    assert {(r.a, r.b) for r in strategies.rows}.isdisjoint({(r.a, r.b) for r in alone.rows})


@pytest.mark.parametrize("binary", [True, False])
@pytest.mark.parametrize("adjust", ["maxt", "holm", "none"])
def test_every_grid_row_s_verdict_interval_and_p_agree(adjust, binary):
    names = _names(3, 3)
    table = compare_family(
        _scores(9, binary=binary), names, family="grid", adjust=adjust, rounds=2000
    )
    assert any("better" in r.verdict for r in table.rows)
    for r in table.rows:
        apart = r.difference.low > 0 or r.difference.high < 0
        assert ("better" in r.verdict) == apart == r.separated
        if adjust != "none":
            assert (r.p < table.rule.alpha) == apart


def test_identical_systems_in_a_grid_family_are_reported_once_as_identical():
    names = _names(2, 2)
    x = _scores(4)
    x[1] = x[0]  # c0/r1 scores as c0/r0 on every question
    table = compare_family(x, names, family="grid", rounds=200)
    same = [r for r in table.rows if r.identical]
    assert [(r.a, r.b) for r in same] == [("c0/r0", "c0/r1")]
    assert table.rule.pairs == 3
    assert short_verdict(same[0]) == "identical"


# --------------------------------------------------------------------------- the plan


def test_the_plan_takes_a_family_alone_or_with_metric_and_rule_never_with_pairs():
    run = ComparisonPlan("recall@5", 1, 200, family="auto")
    assert run.choose(family="retrievers").family == "retrievers"
    chosen = run.choose(family="grid", metric="mrr@10", adjust="holm")
    assert (chosen.family, chosen.metric, chosen.adjust) == ("grid", "mrr@10", "holm")
    assert run.choose(baseline="c0/r0").family == "all"  # a baseline replaces the grid
    assert run.choose(pairs="c0/r0:c0/r1").family == "all"
    assert run.choose(metric="mrr@10").family == "auto"  # not chosen: the run's
    for bad in ({"baseline": "c0/r0"}, {"pairs": "c0/r0:c0/r1"}):
        with pytest.raises(InputError, match="not more than one"):
            run.choose(family="grid", **bad)
    with pytest.raises(InputError, match="family of its own"):
        run.choose("c0/r0", "c0/r1", family="grid")
    with pytest.raises(InputError, match="family must be one of auto, all, grid"):
        run.choose(family="grids")


def test_auto_compares_a_grid_by_its_families_and_anything_else_by_every_pair():
    auto = ComparisonPlan("m", 1, 200, family="auto")
    grid = compare_systems({"m": _scores(9)}, _names(3, 3), auto)
    assert grid.rule.family == BOTH and grid.rule.pairs == 18
    flat = compare_systems({"m": _scores(4)}, ["a", "b", "c", "d"], auto)
    assert flat.rule.family == "all pairs" and flat.rule.pairs == 6
    base = compare_systems({"m": _scores(9)}, _names(3, 3), auto.choose(baseline="c0/r0"))
    assert base.rule.family == "every system against c0/r0"
    every = compare_systems({"m": _scores(9)}, _names(3, 3), auto.choose(family="all"))
    assert every.rule.pairs == 36


def test_a_saved_run_that_names_no_family_is_read_as_every_pair():
    settings = {"metric": "m", "seed": 1, "rounds": 200}
    assert ComparisonPlan.from_settings(settings).family == "all"
    assert ComparisonPlan.from_settings({**settings, "family": "auto"}).family == "auto"


def test_config_checks_the_family_and_refuses_it_with_a_baseline():
    assert Config().family == "auto"
    with pytest.raises(InputError, match=r"\[stats\] family must be one of"):
        Config(strategies=("fixed",), family="pairs").validate()
    with pytest.raises(InputError, match="not more than one"):
        Config(strategies=("fixed",), family="grid", baseline="fixed").validate()
    assert Config(strategies=("fixed",), family="all", baseline="fixed").validate().baseline


# --------------------------------------------------------------------------- a grid run


@pytest.fixture(scope="module")
def grid_run(tmp_path_factory):
    """3 strategies x 3 BM25 settings on the example: a 3 x 3 grid, saved."""
    cfg = Config(
        corpus=str(EXAMPLE / "posts"),
        testset=str(EXAMPLE / "questions.jsonl"),
        strategies=("fixed", "sentence", "parent-400"),
        retrievers=(
            "bm25",
            {"name": "k09", "kind": "bm25", "k1": 0.9},
            {"name": "b03", "kind": "bm25", "b": 0.3},
        ),
        rounds=300,
    )
    run = ragmeter.search(cfg)
    return run, Results(run.save(tmp_path_factory.mktemp("grid") / "res"))


def test_a_grid_run_compares_by_its_families_in_every_view(grid_run):
    run, saved = grid_run
    rows = run.summary.comparisons
    assert run.summary.comparison_rule.family == BOTH
    assert run.summary.comparison_rule.pairs + sum(r.identical for r in rows) == 18
    key = [(r.a, r.b, r.p, r.difference.low, r.verdict) for r in rows]
    assert [(r.a, r.b, r.p, r.difference.low, r.verdict) for r in saved.summary.comparisons] == key
    assert [(r.a, r.b, r.p, r.difference.low, r.verdict) for r in ragmeter.compare(saved)] == key
    assert [
        (r.a, r.b, r.p, r.difference.low, r.verdict)
        for r in compare_run(saved, saved.comparison_plan).rows
    ] == key
    data = json.loads(runner.invoke(app, ["compare", str(saved.path), "--format", "json"]).stdout)
    assert data["rule"]["family"] == BOTH
    assert [(r["a"], r["b"]) for r in data["rows"]] == [(r.a, r.b) for r in rows]


def test_the_notebook_and_compare_take_the_family_with_metric_and_rule(grid_run):
    _, saved = grid_run
    nb = ragmeter.compare(saved, family="retrievers", metric="recall@1", adjust="holm")
    assert nb.rule.family == "retrievers within each strategy" and nb.rule.adjust == "holm"
    got = runner.invoke(
        app,
        [
            "compare",
            str(saved.path),
            "--family",
            "retrievers",
            "--metric",
            "recall@1",
            "--adjust",
            "holm",
            "--format",
            "json",
        ],
    )
    assert got.exit_code == 0, got.output
    data = json.loads(got.stdout)
    assert data["metric"] == "recall@1" and data["rule"]["family"] == nb.rule.family
    assert [(r["a"], r["b"], r["p"]) for r in data["rows"]] == [(r.a, r.b, r.p) for r in nb]
    every = json.loads(
        runner.invoke(
            app, ["compare", str(saved.path), "--family", "all", "--format", "json"]
        ).stdout
    )
    assert every["rule"]["family"] == "all pairs"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--family", "grid", "--baseline", "fixed/bm25"], "not more than one"),
        (["--family", "strategies", "--pairs", "fixed/bm25:fixed/k09"], "not more than one"),
        (["--family", "rows"], "--family must be one of auto, all, grid"),
    ],
)
def test_compare_refuses_a_family_with_pairs_or_a_name_it_does_not_know(grid_run, args, message):
    _, saved = grid_run
    got = runner.invoke(app, ["compare", str(saved.path), *args])
    assert got.exit_code == 2
    lines = [line for line in got.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and message in lines[0], got.stderr


def test_compare_shows_a_grid_family_as_two_grids(grid_run):
    _, saved = grid_run
    got = runner.invoke(app, ["compare", str(saved.path)], env={"COLUMNS": "120"})
    assert got.exit_code == 0, got.output
    out = " ".join(got.stdout.split())
    assert "Retrievers within each strategy on recall@5" in out
    assert "Strategies within each retriever on recall@5" in out
    assert out.count(f"({BOTH})") == 2  # the rule and family head each grid
    assert "bm25 − k09" in out and "fixed − sentence" in out  # columns, then rows
    assert "│ A " not in out  # no list of pairs without --all
    assert "--all also lists every pair" in " ".join(out.split())
    every = runner.invoke(app, ["compare", str(saved.path), "--all"], env={"COLUMNS": "200"})
    assert "Retrievers within each strategy" in every.stdout and "win/tie/loss" in every.stdout
    narrow = runner.invoke(app, ["compare", str(saved.path)], env={"COLUMNS": "80"})
    assert "…" not in narrow.stdout
    assert max(len(line) for line in narrow.stdout.splitlines()) <= 80


def test_every_pair_on_a_grid_says_the_grid_family_exists(grid_run):
    _, saved = grid_run
    got = runner.invoke(
        app, ["compare", str(saved.path), "--family", "all"], env={"COLUMNS": "200"}
    )
    assert "--family grid compares only" in " ".join(got.stdout.split())


def test_grid_views_place_each_row_under_its_strategy_and_retriever_pair(grid_run):
    run, _ = grid_run
    rows = run.summary.comparisons
    by_retriever, by_strategy = grid_views(rows, "grid")
    assert by_retriever.rows == ["fixed", "sentence", "parent-400"]
    assert by_retriever.columns == ["bm25 − k09", "bm25 − b03", "k09 − b03"]
    assert by_strategy.rows == ["fixed − sentence", "fixed − parent-400", "sentence − parent-400"]
    assert by_strategy.columns == ["bm25", "k09", "b03"]
    i = by_retriever.cells[2][1]
    assert (rows[i].a, rows[i].b) == ("parent-400/bm25", "parent-400/b03")
    j = by_strategy.cells[0][2]
    assert (rows[j].a, rows[j].b) == ("fixed/b03", "sentence/b03")
    assert grid_views(rows, "all") == []


def test_the_report_lays_a_grid_family_out_as_grids(grid_run):
    _, saved = grid_run
    data = report_data(saved)
    grids = data["comparison_grids"]
    assert [g["axis"] for g in grids] == ["retrievers", "strategies"]
    for g in grids:
        for cells, verdicts in zip(g["cells"], g["verdicts"], strict=True):
            for i, v in zip(cells, verdicts, strict=True):
                row = data["comparisons"][i]
                if not row["separated"]:
                    assert v in ("tie", "identical")
                    continue
                strategy, _, retriever = row["verdict"].removesuffix(" better").rpartition("/")
                assert v == f"{retriever if g['axis'] == 'retrievers' else strategy} better"


def test_plan_plans_the_grid_family_s_pairs(grid_run):
    _, saved = grid_run
    args = ["plan", str(saved.path), "--rounds", "200", "--format", "json"]
    own = json.loads(runner.invoke(app, args).stdout)
    assert len(own["pairs"]) == 18
    alone = json.loads(runner.invoke(app, [*args, "--family", "retrievers"]).stdout)
    assert alone["family"] == 9 and len(alone["pairs"]) == 9
    assert all(p["a"].split("/")[0] == p["b"].split("/")[0] for p in alone["pairs"])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--strategies", "fixed,sentence", "--family", "grid"], "2 strategies and 1 retriever"),
        (["--retrievers", "bm25,dense", "--family", "retrievers"], "1 strategy and 2 retrievers"),
        (["--family", "grid", "--baseline", "fixed"], "not more than one"),
        (["--family", "everything"], "--family must be one of auto, all, grid"),
    ],
)
def test_search_refuses_a_family_it_cannot_compare_before_any_work(tmp_path, args, message):
    out = tmp_path / "res"
    got = runner.invoke(
        app,
        [
            "search",
            "--corpus",
            str(EXAMPLE / "posts"),
            "--testset",
            str(EXAMPLE / "questions.jsonl"),
            "--out",
            str(out),
            "--no-history",
            *(["--strategies", "fixed"] if "--strategies" not in args else []),
            *args,
        ],
    )
    assert got.exit_code == 2
    lines = [line for line in got.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and message in lines[0], got.stderr
    assert not out.exists()


@pytest.fixture(scope="module")
def flat(tmp_path_factory) -> Results:
    """Three strategies with one retriever: no grid."""
    cfg = Config(
        corpus=str(EXAMPLE / "posts"),
        testset=str(EXAMPLE / "questions.jsonl"),
        strategies=("fixed", "sentence", "parent-400"),
        rounds=200,
    )
    return Results(ragmeter.search(cfg).save(tmp_path_factory.mktemp("flat") / "res"))


def test_a_run_that_is_no_grid_keeps_every_pair_and_refuses_a_grid_family(flat):
    assert flat.summary.comparison_rule.family == "all pairs"
    for command in (["compare"], ["plan", "--rounds", "200"]):
        got = runner.invoke(app, [command[0], str(flat.path), *command[1:], "--family", "grid"])
        assert got.exit_code == 2
        lines = [line for line in got.stderr.splitlines() if line.strip()]
        assert len(lines) == 1, got.stderr
        assert "needs a strategy x retriever grid" in lines[0]
        assert "systems fixed, sentence, parent-400 name no retriever" in lines[0]
    with pytest.raises(InputError, match="needs a strategy x retriever grid"):
        ragmeter.compare(flat, family="strategies")
    every = runner.invoke(app, ["compare", str(flat.path), "--family", "all"])
    assert every.exit_code == 0 and "(all pairs)" in " ".join(every.stdout.split())


def test_grid_names_holding_the_separator_split_at_their_last_slash():
    names = ["docs/v2/bm25", "docs/v2/dense", "notes/bm25", "notes/dense"]
    assert grid_cells(names)["docs/v2/dense"] == ("docs/v2", "dense")
    pairs = grid_pairs(names, "grid")
    assert [(names[i], names[j]) for i, j in pairs] == [
        ("docs/v2/bm25", "docs/v2/dense"),
        ("notes/bm25", "notes/dense"),
        ("docs/v2/bm25", "notes/bm25"),
        ("docs/v2/dense", "notes/dense"),
    ]
    # a strategy whose name ends in the separator leaves no strategy: not a grid
    assert grid_cells(["a/", "b/", "a/x", "b/x"]) is None
    with pytest.raises(InputError, match="name no retriever"):
        grid_pairs(["fixed", "sentence/bm25"], "grid")

"""``--adjust fdr``: Benjamini-Hochberg over a table's family, named as the different
guarantee it is (the expected share of false "better" among the "better" verdicts,
not the chance of any), with each row's verdict, interval and p agreeing, and with
every documented option value alone and combined (a baseline, planned pairs, each
family, clustered questions)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from ragmeter import stats
from ragmeter.cli import app
from ragmeter.comparison.formatting import column_labels
from ragmeter.comparison.systems import ComparisonPlan, compare_systems
from ragmeter.comparison.verdicts import ADJUSTMENTS, FDR_GUARANTEE, compare_family
from ragmeter.errors import InputError
from ragmeter.inputs.config import FAMILY_CHOICES, Config

runner = CliRunner()


def _scores(m: int, n: int = 80, seed: int = 3, binary: bool = True, better: int = 3):
    """m systems on n questions; the first ``better`` systems truly better, by steps."""
    rng = np.random.default_rng(seed)
    base = rng.random(n) < 0.5
    x = base[None, :] ^ (rng.random((m, n)) < 0.15)
    for i in range(better):
        x[i] |= rng.random(n) < 0.15 * (better - i)
    x = x.astype(float)
    return x if binary else x * rng.choice([1.0, 0.5, 1 / 3], size=n)[None, :]


def _grid(s: int = 3, r: int = 2) -> list[str]:
    return [f"c{i}/r{j}" for i in range(s) for j in range(r)]


# --------------------------------------------------------------------------- the procedure


def test_bh_adjusts_as_the_step_up_written_out():
    p = [0.001, 0.04, 0.03, 0.2, 0.012, 0.04]
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    written = [0.0] * m
    for rank, i in enumerate(order):
        written[i] = min(1.0, min(m * p[j] / (r + 1) for r, j in enumerate(order) if r >= rank))
    assert stats.benjamini_hochberg(p) == pytest.approx(written)
    assert stats.benjamini_hochberg(p) == pytest.approx([0.006, 0.048, 0.048, 0.2, 0.036, 0.048])
    with pytest.raises(InputError, match=r"p-values must lie in \[0, 1\]"):
        stats.benjamini_hochberg([0.5, 1.5])


def test_bh_agrees_with_scipy():
    scipy_stats = pytest.importorskip("scipy.stats")
    p = np.random.default_rng(4).random(30) ** 3
    np.testing.assert_allclose(
        stats.benjamini_hochberg(p.tolist()), scipy_stats.false_discovery_control(p)
    )


@pytest.mark.parametrize("binary", [True, False])
def test_fdr_calls_better_at_least_where_holm_does_and_its_rows_agree(binary):
    x = _scores(7, binary=binary, better=4)
    names = [f"s{i}" for i in range(7)]
    fdr = compare_family(x, names, adjust="fdr", rounds=2000)
    holm = compare_family(x, names, adjust="holm", rounds=2000)
    said = {(r.a, r.b) for r in fdr.rows if "better" in r.verdict}
    assert {(r.a, r.b) for r in holm.rows if "better" in r.verdict} <= said
    assert len(said) > sum("better" in r.verdict for r in holm.rows)  # more found here
    for r in fdr.rows:
        apart = r.difference.low > 0 or r.difference.high < 0
        assert ("better" in r.verdict) == apart == r.separated == (r.p < 0.05)
        assert r.p >= r.p_value  # the adjusted p is never below the pair's own
    assert [r.p for r in fdr.rows] == pytest.approx(
        stats.benjamini_hochberg([r.p_value for r in fdr.rows])
    )


def test_each_fdr_interval_is_built_at_the_level_bh_used():
    x = _scores(6, better=3)
    table = compare_family(x, [f"s{i}" for i in range(6)], adjust="fdr", rounds=2000)
    m, found = table.rule.pairs, sum(r.separated for r in table.rows)
    assert 0 < found < m
    for r in table.rows:  # R alpha / m for the "better" rows (false coverage-rate intervals)
        want = found * 0.05 / m if r.separated else min(0.05, (found + 1) * 0.05 / m)
        assert r.level == pytest.approx(want)
        assert r.difference.confidence == pytest.approx(1 - want)


def test_the_header_names_the_false_discovery_guarantee_not_a_family_wise_one():
    table = compare_family(_scores(4), ["a", "b", "c", "d"], adjust="fdr", rounds=500)
    header = table.rule.header
    assert header.startswith("Rule: Benjamini-Hochberg over 6 pairs (all pairs)")
    assert FDR_GUARANTEE in header and "family-wise" not in header
    assert "expected share of false 'better' among the 'better' verdicts" in header
    assert column_labels(table.rule) == ("A - B [BH-level CI]", "p (BH)")
    assert table.rule.p_label == "p (BH)"
    saved = json.loads(json.dumps(table.to_dict()))
    assert saved["rule"]["adjust"] == "fdr" and saved["rule"]["header"] == header


def test_a_family_of_one_under_fdr_is_its_own_test():
    x = _scores(3)
    one = compare_family(x, ["a", "b", "c"], adjust="fdr", pairs=[("a", "c")])
    assert one.rule.pairs == 1 and one.rows[0].p == one.rows[0].p_value
    assert "a family of one pair" in one.rule.header
    holm = compare_family(x, ["a", "b", "c"], adjust="holm", pairs=[("a", "c")])
    assert (one.rows[0].p, one.rows[0].difference) == (holm.rows[0].p, holm.rows[0].difference)


# --------------------------------------------------------------------------- combinations

CHOICES = [
    ({}, "all pairs", 15),
    ({"baseline": "c0/r0"}, "every system against c0/r0", 5),
    ({"pairs": [("c0/r0", "c0/r1"), ("c1/r0", "c2/r0")]}, "planned pairs", 2),
    ({"family": "grid"}, "retrievers within each strategy and", 9),
    ({"family": "retrievers"}, "retrievers within each strategy", 3),
    ({"family": "strategies"}, "strategies within each retriever", 6),
    ({"family": "main-effects"}, "the grid's pairs, each retriever", 13),
]


@pytest.mark.parametrize("clustered", [False, True])
@pytest.mark.parametrize("adjust", ADJUSTMENTS)
@pytest.mark.parametrize(("choice", "family", "pairs"), CHOICES)
def test_every_rule_works_with_every_family_and_clustered_questions(
    adjust, choice, family, pairs, clustered
):
    x = _scores(6, binary=not clustered)
    codes = np.repeat(np.arange(16), 5) if clustered else None
    table = compare_family(x, _grid(), adjust=adjust, rounds=1000, clusters=codes, **choice)
    rule = table.rule
    assert rule.adjust == adjust and rule.family.startswith(family) and rule.pairs == pairs
    assert rule.clusters == (16 if clustered else 0)
    assert len(table.rows) == pairs
    for r in table.rows:
        apart = r.difference.low > 0 or r.difference.high < 0
        assert ("better" in r.verdict) == apart == r.separated
        assert (r.p is None) == (adjust == "none")
    if adjust == "fdr" and pairs > 1:
        assert FDR_GUARANTEE in rule.header
    again = compare_family(x, _grid(), adjust=adjust, rounds=1000, clusters=codes, **choice)
    assert again.to_dict() == table.to_dict()  # the same inputs and seed: the same table


def test_every_family_name_is_documented_in_the_choices():
    assert set(FAMILY_CHOICES) == {"auto", "all", "grid", "retrievers", "strategies",
                                   "main-effects"}  # fmt: skip
    assert ADJUSTMENTS == ("holm", "maxt", "fdr", "none")


def test_the_plan_and_config_take_fdr_and_refuse_what_they_do_not_know():
    plan = ComparisonPlan("recall@5", 1, 500, family="auto").choose(adjust="fdr")
    table = compare_systems({"recall@5": _scores(6)}, _grid(), plan)
    assert table.rule.adjust == "fdr" and table.rule.family.startswith("retrievers within")
    assert Config(corpus="c", testset="t", adjust="fdr").validate().adjust == "fdr"
    with pytest.raises(InputError, match="adjust must be one of holm, maxt, fdr, none"):
        Config(corpus="c", testset="t", adjust="bh").validate()
    with pytest.raises(InputError, match="adjust must be one of"):
        compare_family(_scores(3), ["a", "b", "c"], adjust="BH")  # type: ignore[arg-type]


def test_compare_prints_the_fdr_rule_with_each_choice(example_results):
    path = str(example_results)
    for extra in ([], ["--baseline", "whole"], ["--pairs", "whole:sentence"], ["--all"]):
        got = runner.invoke(
            app, ["compare", path, "--adjust", "fdr", *extra], env={"COLUMNS": "80"}
        )
        assert got.exit_code == 0, got.output
        out = " ".join(got.stdout.split())
        assert ("Benjamini-Hochberg" in out) or ("a family of one pair" in out)
        assert max(len(line) for line in got.stdout.splitlines()) <= 80
    data = json.loads(
        runner.invoke(app, ["compare", path, "--adjust", "fdr", "--format", "json"]).stdout
    )
    assert data["rule"]["adjust"] == "fdr" and FDR_GUARANTEE in data["rule"]["header"]
    bad = runner.invoke(app, ["compare", path, "--adjust", "bh"])
    assert bad.exit_code == 2 and "adjust must be one of" in bad.stderr


def test_a_run_decided_under_fdr_keeps_its_rule_and_plans_under_it(tmp_path):
    from conftest import save_example

    from ragmeter.runs.results import Results

    path = save_example(tmp_path / "res", 8, adjust="fdr", rounds=200)
    res = Results(path)
    assert res.summary.comparison_rule.adjust == "fdr"
    assert res.comparison_plan.adjust == "fdr"
    got = runner.invoke(app, ["plan", str(path), "--difference", "20"], env={"COLUMNS": "200"})
    assert got.exit_code == 0, got.output
    out = " ".join(got.stdout.split())
    assert "Benjamini-Hochberg over" in out and "Holm over" not in out

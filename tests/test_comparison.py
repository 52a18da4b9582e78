"""The one comparison (ragmeter.comparison.systems): plans, the caller's choices, and which
systems are folded as identical."""

from __future__ import annotations

from types import SimpleNamespace as S

import numpy as np
import pytest

from ragmeter.comparison.systems import ComparisonPlan, compare_run, compare_systems
from ragmeter.errors import InputError

RNG = np.random.default_rng(3)
N = 50
R = (RNG.random((3, N)) < [[0.4], [0.6], [0.8]]).astype(float)


def test_the_level_is_one_minus_confidence_exactly():
    assert ComparisonPlan("m", 1, 10).alpha == 0.05
    assert ComparisonPlan("m", 1, 10, confidence=0.9).alpha == 0.1
    assert ComparisonPlan("m", 1, 10).adjust == "maxt"


def test_from_settings_reads_every_setting_and_defaults_to_holm():
    plan = ComparisonPlan.from_settings(
        {"metric": "mrr@10", "seed": "4", "rounds": "300", "confidence": 0.9, "pairs": "b:a"}
    )
    assert plan == ComparisonPlan("mrr@10", 4, 300, 0.9, "holm", None, (("b", "a"),))
    old = ComparisonPlan.from_settings({"metric": "m", "seed": 1, "rounds": 9, "baseline": "x"})
    assert (old.confidence, old.adjust, old.baseline, old.pairs) == (0.95, "holm", "x", None)
    assert ComparisonPlan.from_settings({"metric": "m", "seed": 1, "rounds": 9, "baseline": ""})
    assert ComparisonPlan.from_settings(
        {"metric": "m", "seed": 1, "rounds": 9, "adjust": "none"}
    ).adjust == ("none")


def test_choose_replaces_only_what_was_chosen():
    run = ComparisonPlan("m", 1, 100, 0.9, "holm", baseline="a")
    assert run.choose() == run
    one = run.choose("c", "b")
    assert (one.pairs, one.baseline) == ((("c", "b"),), None)
    assert one.confidence == 0.9 and one.adjust == "holm"
    other = run.choose(metric="n", seed=0, rounds=5, adjust="maxt")
    assert (other.metric, other.seed, other.rounds, other.adjust) == ("n", 0, 5, "maxt")
    assert other.baseline == "a"  # the family stays when none is chosen
    planned = ComparisonPlan("m", 1, 100, pairs=(("b", "a"),))
    assert planned.choose(baseline="c").pairs is None
    assert planned.choose(baseline="c").baseline == "c"
    assert planned.choose(pairs="c:a").pairs == (("c", "a"),)
    assert planned.choose(seed=7).pairs == (("b", "a"),)
    with pytest.raises(InputError, match="give both A and B"):
        run.choose("a")
    with pytest.raises(InputError, match="give both A and B"):
        run.choose(b="a")
    with pytest.raises(InputError, match="family of its own"):
        run.choose("a", "b", baseline="c")
    with pytest.raises(InputError, match="family of its own"):
        run.choose("a", "b", pairs="b:c")
    with pytest.raises(InputError, match="a baseline or planned pairs, not both"):
        run.choose(baseline="a", pairs="b:c")


def test_identical_means_every_metric_not_just_one():
    recall = np.stack([R[0], R[1], R[1]])
    mrr = np.stack([R[0], R[1], R[1] * 0.5])  # c equals b on recall only
    plan = ComparisonPlan("recall@5", 1, 200, adjust="holm")
    table = compare_systems({"recall@5": recall, "mrr@10": mrr}, ["a", "b", "c"], plan)
    assert not any(r.identical for r in table.rows)
    assert table.rule.identical == []
    same = compare_systems({"recall@5": recall, "mrr@10": recall}, ["a", "b", "c"], plan)
    folded = [(r.a, r.b) for r in same.rows if r.identical]
    assert len(folded) == 1 and set(folded[0]) == {"b", "c"}
    assert same.rule.identical == [["b", "c"]]
    kept = compare_systems(
        {"recall@5": recall, "mrr@10": recall}, ["a", "b", "c"], plan, fold_identical=False
    )
    assert not any(r.identical for r in kept.rows)


def test_the_plan_reaches_the_table():
    plan = ComparisonPlan("mrr@10", 5, 300, 0.9, "none", baseline="a")
    table = compare_systems({"recall@5": R, "mrr@10": R[::-1].copy()}, ["a", "b", "c"], plan)
    assert {(r.a, r.b) for r in table.rows} == {("b", "a"), ("c", "a")}
    rule = table.rule
    assert (rule.adjust, rule.alpha, rule.seed, rule.rounds) == ("none", 0.1, 5, 300)
    row = next(r for r in table.rows if r.a == "c")
    # the comparison metric's rows: c is R[0] reversed into place, a is R[2]
    assert row.difference.mean == pytest.approx(R[0].mean() - R[2].mean())
    with pytest.raises(InputError, match="metric 'ndcg' was not computed"):
        compare_systems({"mrr@10": R}, ["a", "b", "c"], ComparisonPlan("ndcg", 1, 9))
    with pytest.raises(InputError, match="at least two systems"):
        compare_systems({"m": R[:1]}, ["a"], ComparisonPlan("m", 1, 9))


def test_compare_run_reads_the_run_in_its_system_order():
    matrices = {"recall@5": R, "mrr@10": R * 0.5}

    def matrix(metric, systems):
        assert systems == ["a", "b", "c"]
        return matrices[metric]

    run = S(systems=["a", "b", "c"], metrics=list(matrices), matrix=matrix)
    plan = ComparisonPlan("mrr@10", 1, 200, pairs=(("c", "a"),))
    table = compare_run(run, plan)
    want = compare_systems(matrices, ["a", "b", "c"], plan)
    assert [(r.a, r.b, r.difference.mean, r.p_value) for r in table.rows] == [
        (r.a, r.b, r.difference.mean, r.p_value) for r in want.rows
    ]
    assert table.rows[0].difference.mean == pytest.approx(0.5 * (R[2].mean() - R[0].mean()))


def test_rows_of_an_older_summary_read_back_with_their_p_value():
    from ragmeter.comparison.verdicts import Row, compare_family

    table = compare_family(R, ["a", "b", "c"], adjust="holm", rounds=200)
    assert table.rule.rounds == 200
    row = table.rows[0]
    data = row.to_dict()
    assert data["p"] == row.p and "p_holm" not in data  # the rule's p, under its own name
    assert Row.from_dict(data) == row
    old = {k: v for k, v in data.items() if k not in ("p", "level", "differ", "needed")}
    old["p_value"] = 0.03
    # a Holm table of an earlier version: p_holm is the rule's p
    assert Row.from_dict(old | {"p_holm": 0.04}).p == 0.04
    assert Row.from_dict(old | {"p_holm": 0.04}, ruled=False).p == 0.04
    # before any rule: no p_holm, the pair's own p_value
    assert Row.from_dict(old | {"p_holm": None}, ruled=False).p == 0.03
    assert Row.from_dict(old | {"p_holm": None}).p is None
    back = Row.from_dict(old | {"p_holm": None})
    assert back.differ == row.wins + row.losses and back.needed == 0
    assert back.level == pytest.approx(1 - row.difference.confidence)


def test_a_rule_defaults_to_no_identical_groups_and_ten_thousand_rounds():
    from ragmeter.comparison.verdicts import Rule, compare_family

    rule = Rule("holm", 0.05, "all pairs", 3, "t", "i", 1, 100, "mulberry32")
    assert rule.identical == []
    assert compare_family(R[:2], ["a", "b"]).rule.rounds == 10_000


def test_the_rule_names_its_test_and_counts_per_question():
    from ragmeter.comparison.verdicts import compare_family

    m = np.stack([R[0], R[1], R[1]])
    none = compare_family(m, ["a", "b", "c"], adjust="none", alpha=0.1, rounds=200)
    assert none.rule.test == "no test (the interval decides)"
    assert none.rule.interval == "90% paired percentile bootstrap"
    binary = compare_family(m, ["a", "b", "c"], adjust="holm", rounds=200)
    assert binary.rule.test == "McNemar's exact test (0/1 scores)"
    graded = compare_family(m * 0.5 + 0.1 * np.arange(N) / N, ["a", "b", "c"], rounds=200)
    assert graded.rule.test == "sign-flip test (200 rounds)"
    for row in binary.rows:
        if row.identical:
            assert (row.difference.n, row.ties, row.wins, row.losses) == (N, N, 0, 0)
            continue
        x, y = m[["abc".index(row.a)]][0], m[["abc".index(row.b)]][0]
        assert (row.wins, row.ties, row.losses) == (
            int((x > y).sum()),
            int((x == y).sum()),
            int((x < y).sum()),
        )
    with pytest.raises(InputError, match="^alpha must lie strictly between 0 and 1, got 0.0"):
        compare_family(m, ["a", "b", "c"], alpha=0.0)


def test_holm_levels_step_down_and_stop_where_holm_stopped():
    from ragmeter import stats
    from ragmeter.comparison.verdicts import compare_family
    from ragmeter.stats.adjust import holm_levels as _levels

    raw = [0.04, 0.001, 0.03]
    adj = stats.holm(raw)
    assert adj == pytest.approx([0.06, 0.003, 0.06])
    # step 1 rejects at 0.05/3; step 2 (p 0.03, adjusted 0.06) stops: it and the rest
    # are compared at 0.05/2
    assert _levels(adj, raw, 0.05) == pytest.approx([0.025, 0.05 / 3, 0.025])
    assert _levels([0.003, 0.02, 0.04], [0.001, 0.01, 0.04], 0.05) == pytest.approx(
        [0.05 / 3, 0.025, 0.05]
    )
    # every Holm row's interval is at 1 - its level
    m = (np.random.default_rng(9).random((4, 300)) < [[0.3], [0.5], [0.52], [0.7]]) * 1.0
    table = compare_family(m, ["a", "b", "c", "d"], adjust="holm", rounds=200)
    for row in table.rows:
        assert row.difference.confidence == pytest.approx(1 - row.level)
    levels = sorted(row.level for row in table.rows)
    assert levels[0] == pytest.approx(0.05 / 6)


def test_a_holm_table_gives_pairs_after_the_stop_the_stopping_level():
    from ragmeter.comparison.verdicts import compare_family

    n = 40
    a = np.zeros(n)
    a[36:] = 1
    b, c, d = np.zeros(n), np.zeros(n), np.zeros(n)
    b[:12], b[36:39] = 1, 1  # 12 better, 1 worse: p 0.0034
    c[:10], c[36:38] = 1, 1  # 10 better, 2 worse: p 0.039 (< 0.05, Holm's 0.077 is not)
    d[:3], d[36:37] = 1, 1  # 3 and 3: p 1
    table = compare_family(np.stack([a, b, c, d]), list("abcd"), adjust="holm", baseline="a")
    got = {r.a: (round(r.p_value, 4), r.level) for r in table.rows}
    assert got["b"] == (0.0034, pytest.approx(0.05 / 3))
    assert got["c"] == (0.0386, pytest.approx(0.025))
    assert got["d"] == (1.0, pytest.approx(0.025))  # where Holm stopped, not 0.05

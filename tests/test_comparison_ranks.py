"""Rank resolution (ragmeter.comparison.ranks): tie groups read off a table's verdicts and
simultaneous rank ranges from an all-pairs family-wise rule."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ragmeter import stats
from ragmeter.comparison.ranks import (
    Ranks,
    ahead_pairs,
    rank_ranges,
    ranks_of,
    resolve_ranks,
    tie_groups,
)
from ragmeter.comparison.summary import Summary, plan_of, summarize
from ragmeter.comparison.systems import ComparisonPlan, compare_systems
from ragmeter.comparison.verdicts import Row, Rule, Verdicts

NAMES = ["sentence", "recursive", "parent-400", "overlap", "fixed"]


def _row(a: str, b: str, mean: float, separated: bool, identical: bool = False) -> Row:
    est = stats.Estimate(mean, mean - 0.1, mean + 0.1, 100, 1000, 1, "x", "mulberry32")
    winner = stats.winner_of(a, b, est, separated)
    return Row(a, b, est, 0.5, 0.5, 0.05, 1, 1, 1, 2, 1, separated, identical, "", winner)


def _rule(**kw) -> Rule:
    base = dict(
        adjust="maxt",
        alpha=0.05,
        family="all pairs",
        pairs=3,
        test="t",
        interval="i",
        seed=1,
        rounds=1000,
        rng="mulberry32",
    )
    return Rule(**{**base, **kw})


def _scores(means, n=150, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.random((len(means), n)) < np.asarray(means)[:, None]).astype(np.float64)


def _tied(ranks_groups, a, b):
    return any(a in g and b in g for g in ranks_groups)


def test_a_tie_that_is_not_transitive_gives_overlapping_groups():
    # A ties B, B ties C, but A is ahead of C: no partition can say that; two groups can.
    rows = [_row("A", "B", 0.02, False), _row("B", "C", 0.02, False), _row("A", "C", 0.05, True)]
    ahead = ahead_pairs(rows)
    assert ahead == {("A", "C")}
    assert tie_groups(["A", "B", "C"], ahead) == [["A", "B"], ["B", "C"]]


def test_a_lower_is_better_measure_puts_the_smaller_score_ahead():
    rows = [_row("A", "B", 120.0, True)]  # A sends 120 more words than B
    assert ahead_pairs(rows, lower_better=True) == {("B", "A")}
    assert ahead_pairs(rows, lower_better=False) == {("A", "B")}
    table = Verdicts(_rule(pairs=1), rows)
    ranks = ranks_of(table, table, {"A": 900.0, "B": 780.0}, "words@5", own=True)
    assert ranks.order == ["B", "A"]
    assert ranks.sentence == "B ahead of A"
    assert [(r.system, r.low, r.high) for r in ranks.ranges] == [("B", 1, 1), ("A", 2, 2)]


def test_identical_systems_take_their_first_members_verdicts():
    rows = [_row("A", "C", 0.2, True), _row("A", "B", 0.0, False, identical=True)]
    ahead = ahead_pairs(rows, [["A", "B"]])
    assert ahead == {("A", "C"), ("B", "C")}
    got = rank_ranges(["A", "B", "C"], {"A": 0.8, "B": 0.8, "C": 0.6}, ahead)
    assert [(r.low, r.high) for r in got] == [(1, 2), (1, 2), (3, 3)]


@pytest.mark.parametrize("seed", range(6))
def test_tie_groups_never_separate_a_pair_the_table_calls_a_tie(seed):
    rng = np.random.default_rng(seed)
    means = rng.uniform(0.55, 0.8, 6)
    names = [f"s{i}" for i in range(6)]
    m = _scores(means, 120, seed)
    plan = ComparisonPlan("recall@5", seed, 500)
    table = compare_systems({"recall@5": m}, names, plan)
    ranks = resolve_ranks({"recall@5": m}, names, plan, table)
    for r in table.rows:
        assert _tied(ranks.groups, r.a, r.b) == (r.winner is None), (r.a, r.b, r.verdict)
    # every system is in a group, and the highest mean is at the top
    assert all(ranks.letters(s) for s in names)
    assert ranks.order[0] in ranks.top


def test_the_ranges_of_an_all_pairs_max_t_table_are_its_own_verdicts():
    m = _scores([0.85, 0.83, 0.8, 0.6, 0.3], 200)
    plan = ComparisonPlan("recall@5", 1, 1000)
    table = compare_systems({"recall@5": m}, NAMES, plan)
    ranks = resolve_ranks({"recall@5": m}, NAMES, plan, table)
    assert ranks.own and ranks.rule == table.rule
    ahead = ahead_pairs(table.rows, table.rule.identical)
    for r in ranks.ranges:
        assert r.low == 1 + sum((t, r.system) in ahead for t in NAMES)
        assert r.high == 5 - sum((r.system, t) in ahead for t in NAMES)
    assert set(ranks.top) == {"sentence", "recursive", "parent-400"}
    top = ", ".join(ranks.top[:2]) + " and " + ranks.top[2]
    assert ranks.sentence == f"{top} share the top; fixed below all"


def test_a_baseline_table_gets_its_ranges_from_every_pair_under_max_t():
    m = _scores([0.85, 0.83, 0.8, 0.6, 0.3], 200)
    plan = ComparisonPlan("recall@5", 1, 1000, adjust="holm", baseline="fixed")
    table = compare_systems({"recall@5": m}, NAMES, plan)
    ranks = resolve_ranks({"recall@5": m}, NAMES, plan, table)
    every = compare_systems(
        {"recall@5": m}, NAMES, ComparisonPlan("recall@5", 1, 1000, adjust="maxt")
    )
    assert not ranks.own
    assert ranks.rule == every.rule and ranks.rule.pairs == 10
    assert ranks.ranges == ranks_of(every, every, _means(m), "recall@5").ranges
    # the groups read the baseline table: pairs it does not compare are not separated
    assert [set(g) for g in ranks.groups] == [set(NAMES[:4]), {"fixed"}]
    assert "compared again for the ranks under max-T" in ranks.ranges_note


def _means(m):
    return {s: stats.seq_mean(m[i]) for i, s in enumerate(NAMES)}


def test_the_sentence_names_a_tie_of_all_and_a_leader():
    rows = [_row("A", "B", 0.01, False), _row("A", "C", 0.01, False), _row("B", "C", 0.0, False)]
    table = Verdicts(_rule(), rows)
    means = {"A": 0.7, "B": 0.69, "C": 0.69}
    assert ranks_of(table, table, means, "recall@5").sentence == (
        "A, B and C share the top: no verdict separates any two"
    )
    rows = [_row("A", "B", 0.2, True), _row("A", "C", 0.3, True), _row("B", "C", 0.01, False)]
    table = Verdicts(_rule(), rows)
    ranks = ranks_of(table, table, {"A": 0.9, "B": 0.7, "C": 0.6}, "recall@5")
    assert ranks.sentence == "A ahead of every other system"
    assert [r.shown for r in ranks.ranges] == ["1", "2-3", "2-3"]
    assert [ranks.letters(s) for s in "ABC"] == ["a", "b", "b"]


def test_ranks_read_back_from_json_are_the_same():
    m = _scores([0.8, 0.7, 0.5], 100)
    names = ["a", "b", "c"]
    plan = ComparisonPlan("recall@5", 3, 500)
    table = compare_systems({"recall@5": m}, names, plan)
    ranks = resolve_ranks({"recall@5": m}, names, plan, table)
    again = Ranks.from_dict(json.loads(json.dumps(ranks.to_dict())))
    assert again == ranks
    assert again.to_dict()["sentence"] == ranks.sentence


def test_summary_json_keeps_the_ranks_and_the_same_seed_gives_the_same_bytes():
    m = _scores([0.8, 0.78, 0.5], 100)
    names = ["a", "b", "c"]
    plan = plan_of("recall@5", 2, 500, baseline="c")
    first = summarize({"recall@5": m}, names, plan)
    second = summarize({"recall@5": m}, names, plan)
    assert json.dumps(first.to_json()) == json.dumps(second.to_json())
    data = first.to_json()["ranks"]
    assert data["own"] is False and data["rule"]["family"] == "all pairs"
    assert Summary.from_json(first.to_json()).ranks == first.ranks
    # a summary written before ranks were kept reads back without them
    old = {k: v for k, v in first.to_json().items() if k != "ranks"}
    assert Summary.from_json(old).ranks is None


def test_a_tangle_of_ties_falls_back_to_each_system_with_those_not_separated_from_it():
    # 6 triples, each separated within, tied across: 3**6 = 729 largest tied sets
    order = [f"s{i}" for i in range(18)]
    ahead = {
        (order[i], order[j]) for i in range(18) for j in range(18) if i < j and i // 3 == j // 3
    }
    groups = tie_groups(order, ahead)
    assert len(groups) == 18
    for i, a in enumerate(order):
        for b in order[i + 1 :]:
            if (a, b) not in ahead:
                assert _tied(groups, a, b)


def test_compare_and_the_saved_summary_give_the_same_ranks(example_results):
    from ragmeter.comparison.ranks import rank_run
    from ragmeter.comparison.systems import compare_run
    from ragmeter.runs.results import Results

    res = Results(example_results)
    plan = res.comparison_plan
    assert rank_run(res, plan, compare_run(res, plan)) == res.summary.ranks


def test_the_notebook_s_comparisons_carry_the_ranks(example_results):
    import ragmeter
    from ragmeter.runs.results import Results

    got = ragmeter.compare(example_results)
    assert got.ranks == Results(example_results).summary.ranks
    based = ragmeter.compare(example_results, baseline="whole", rounds=500)
    assert not based.ranks.own and based.ranks.rule.family == "all pairs"

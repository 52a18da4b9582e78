"""``ragmeter plan``'s arithmetic (ragmeter.planning) against the stats it stands on."""

from __future__ import annotations

from types import SimpleNamespace as S

import numpy as np
import pytest

from ragmeter.errors import InputError
from ragmeter.planning import (
    PairNeed,
    Plan,
    family_level,
    family_sentence,
    first_level,
    pair_needs,
    plan_questions,
)
from ragmeter.stats import questions_for_half_width, questions_to_separate, sample_size
from ragmeter.stats_exact import exact_interval, questions_for_exact_half_width

RNG = np.random.default_rng(11)
N = 80
SCORES = {
    "recall@5": {
        "a": (RNG.random(N) < 0.5).astype(float),
        "b": (RNG.random(N) < 0.7).astype(float),
        "c": np.ones(N),
    },
    "recall@1": {s: np.zeros(N) for s in "abc"},  # never the metric asked for
}


class Run:
    systems = ["a", "b", "c"]

    def scores(self, system, metric):
        return SCORES[metric][system]


def test_levels():
    assert family_level(1) == 0.05 and family_level(21) == 0.05 / 21
    assert family_level(4, alpha=0.1) == 0.1 / 4
    with pytest.raises(InputError, match="at least one pair, got 0"):
        family_level(0)
    rows = [S(level=0.03, identical=False), S(level=0.01, identical=True)]
    rows.append(S(level=0.02, identical=False))
    assert first_level(S(adjust="maxt", pairs=3), rows) == 0.02
    assert first_level(S(adjust="holm", pairs=3), rows) is None
    assert first_level(S(adjust="maxt", pairs=1), rows) is None
    assert first_level(None, rows) is None
    assert first_level(S(adjust="maxt", pairs=2), rows[1:2]) is None


def test_plan_reads_the_metric_asked_for_with_every_setting():
    plan = plan_questions(Run(), "recall@5", half_width=0.05, difference=0.1, seed=3, rounds=400)
    assert (plan.metric, plan.half_width, plan.difference, plan.seed, plan.rounds) == (
        "recall@5",
        0.05,
        0.1,
        3,
        400,
    )
    assert plan.family == 3 and plan.level == 0.05 / 3
    default = plan_questions(Run(), "recall@5", systems=["a"])
    assert (default.seed, default.rounds, default.half_width, default.difference) == (
        1,
        10_000,
        0.04,
        0.05,
    )
    assert default.rule == "maxt" and default.alpha == 0.05
    a, b, c = plan.systems
    x = SCORES["recall@5"]["a"]
    want = sample_size(x, rounds=400, seed=3)
    assert [(r.n, r.low, r.high) for r in a.sizes] == [(r.n, r.low, r.high) for r in want]
    assert a.needed == questions_for_half_width(x, 0.05) and a.constant is None
    assert a.exact is None
    # c scores 1 on every question: planned on its exact interval
    assert c.needed == questions_for_exact_half_width(N, N, 0.05) and c.constant == 1.0
    assert c.exact == exact_interval(np.ones(N), 0.0, 0.0, 0.95)
    ab = plan.pairs[0]
    ya, yb = SCORES["recall@5"]["a"], SCORES["recall@5"]["b"]
    assert (ab.a, ab.b) == ("a", "b")
    assert ab.needed == questions_to_separate(ya, yb, 0.1, 0.95)
    assert ab.in_family == questions_to_separate(ya, yb, 0.1, 1 - 0.05 / 3)
    assert ab.in_family > ab.needed


def test_family_rule_alpha_and_first_level_pass_through():
    plan = plan_questions(
        Run(), "recall@5", systems=["a", "b"], family=6, rule="holm", alpha=0.1, first=0.02
    )
    assert (plan.family, plan.rule, plan.alpha, plan.first, plan.level) == (
        6,
        "holm",
        0.1,
        0.02,
        0.02,
    )
    assert [s.system for s in plan.systems] == ["a", "b"]
    ya, yb = SCORES["recall@5"]["a"], SCORES["recall@5"]["b"]
    (ab,) = plan.pairs
    assert ab.needed == questions_to_separate(ya, yb, 0.05, 0.9)
    assert ab.in_family == questions_to_separate(ya, yb, 0.05, 0.98)
    one = plan_questions(Run(), "recall@5", systems=["b"], alpha=0.1)
    assert one.family == 1 and one.pairs == []
    assert one.systems[0].sizes[0].n == N
    for bad in (0, -0.1, float("nan"), "0.1"):
        with pytest.raises(InputError, match="half-width must be a positive number"):
            plan_questions(Run(), "recall@5", half_width=bad)
        with pytest.raises(InputError, match="difference must be a positive number"):
            plan_questions(Run(), "recall@5", difference=bad)


def test_pairs_that_never_differ_are_named():
    same = {"a": np.ones(4), "b": np.ones(4), "c": np.zeros(4)}
    needs = pair_needs(same, ["a", "b", "c"], 0.1, family=3)
    assert [(p.a, p.b, p.needed, p.identical, p.in_family) for p in needs] == [
        ("a", "b", None, True, None),
        ("a", "c", None, False, None),
        ("b", "c", None, False, None),
    ]


def test_medians_over_the_pairs():
    pairs = [PairNeed("a", "b", 10, in_family=40), PairNeed("a", "c", 30, in_family=20)]
    pairs += [PairNeed("b", "c", 20, in_family=90), PairNeed("c", "d", None)]
    plan = Plan("m", 0.04, 0.05, 1, 10, pairs=pairs)
    assert plan.single_needed() == 20 and plan.family_needed() == 40
    # four pairs: the upper median (index 2 of 4)
    pairs.append(PairNeed("d", "e", 50, in_family=10))
    plan = Plan("m", 0.04, 0.05, 1, 10, pairs=pairs)
    assert plan.single_needed() == 30 and plan.family_needed() == 40
    pairs.append(PairNeed("e", "f", 60, in_family=100))
    pairs.append(PairNeed("f", "g", 70, in_family=110))
    plan = Plan("m", 0.04, 0.05, 1, 10, pairs=pairs)  # six: index 3
    assert plan.single_needed() == 50 and plan.family_needed() == 90
    # a plan's defaults: a family of one at 0.05, under max-T
    bare = Plan("m", 0.04, 0.05, 1, 10)
    assert (bare.family, bare.alpha, bare.rule, bare.level) == (1, 0.05, "maxt", 0.05)
    assert Plan("m", 0.04, 0.05, 1, 10).family_needed() is None
    assert Plan("m", 0.04, 0.05, 1, 10).single_needed() is None


def test_the_family_sentence_under_each_rule():
    needs = [PairNeed("a", "b", 100, in_family=300), PairNeed("a", "c", 200, in_family=500)]
    needs.append(PairNeed("b", "c", 150, in_family=400))
    holm = family_sentence(needs, 0.05, 3, "holm")
    assert holm == (
        "Separating a difference of 5 points at power 0.8 takes about 400 questions per "
        "pair in this table of 3 pairs (Holm over 3 pairs tests the first at 0.05/3), "
        "against 150 for one pair planned in advance (median over the pairs)."
    )
    assert "max-T's first step tested at 0.0123 on this run, where Holm's tests at 0.05/3" in (
        family_sentence(needs, 0.05, 3, "maxt", first=0.0123)
    )
    assert "planned at Holm's first level, 0.1/3; max-T's is never lower" in (
        family_sentence(needs, 0.05, 3, "maxt", alpha=0.1)
    )
    none = family_sentence(needs, 0.05, 3, "none", scale=1.0)
    assert none.startswith("Separating a difference of 0.05 takes about 150 questions per")
    assert "for the 3 pairs, so its tables show false differences" in none
    assert family_sentence([PairNeed("a", "b", None, identical=True)], 0.05, 1, "holm") is None

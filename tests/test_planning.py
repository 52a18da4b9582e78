"""The sample-size view as a library call: what ``ragmeter plan`` prints, computed once."""

from __future__ import annotations

from types import SimpleNamespace as S

import numpy as np
import pytest

from ragmeter.errors import InputError
from ragmeter.stats import questions_for_half_width, questions_to_separate, sample_size
from ragmeter.stats.exact import clopper_pearson, exact_interval, questions_for_exact_half_width
from ragmeter.stats.planning import (
    PairNeed,
    Plan,
    family_level,
    family_sentence,
    first_level,
    pair_needs,
    plan_questions,
)


class RecordedRun:
    """Just enough of a run: systems and their scores on one metric."""

    def __init__(self, scores: dict[str, np.ndarray]) -> None:
        self._scores = scores
        self.systems = list(scores)

    def scores(self, system: str, metric: str) -> np.ndarray:
        assert metric == "recall@5"
        return self._scores[system]


def _run() -> RecordedRun:
    rng = np.random.default_rng(5)
    a = (rng.random(60) < 0.7).astype(float)
    b = (rng.random(60) < 0.5).astype(float)
    return RecordedRun({"a": a, "b": b, "a2": a.copy(), "flat": np.ones(60), "shift": np.zeros(60)})


def test_plan_matches_the_statistics_it_is_made_of():
    run = _run()
    plan = plan_questions(run, "recall@5", half_width=0.05, difference=0.1, seed=3, rounds=300)
    by = {s.system: s for s in plan.systems}
    assert by["a"].sizes == sample_size(run.scores("a", "recall@5"), rounds=300, seed=3)
    assert by["a"].needed == questions_for_half_width(run.scores("a", "recall@5"), 0.05)
    # 1 on every question: planned on the exact interval, which more questions narrow
    assert by["flat"].needed == questions_for_exact_half_width(60, 60, 0.05)
    assert by["flat"].constant == 1.0 and by["flat"].exact == clopper_pearson(60, 60)
    pairs = {(p.a, p.b): p for p in plan.pairs}
    assert len(pairs) == 10  # every pair of 5 systems, each once
    assert pairs[("a", "b")].needed == questions_to_separate(
        run.scores("a", "recall@5"), run.scores("b", "recall@5"), 0.1
    )
    assert pairs[("a", "a2")].identical and pairs[("a", "a2")].needed is None
    # 1 - 0 on every question: a constant difference, not identical
    assert not pairs[("flat", "shift")].identical and pairs[("flat", "shift")].needed is None


def test_one_system_has_no_pairs():
    plan = plan_questions(_run(), "recall@5", systems=["b"], rounds=200)
    assert [s.system for s in plan.systems] == ["b"] and plan.pairs == []


@pytest.mark.parametrize("bad", [0, -0.04, float("nan"), float("inf")])
def test_a_target_that_is_not_positive_is_refused_before_any_table(bad):
    with pytest.raises(InputError, match="half-width must be a positive number"):
        plan_questions(_run(), "recall@5", half_width=bad)
    with pytest.raises(InputError, match="difference must be a positive number"):
        plan_questions(_run(), "recall@5", difference=bad)


def test_plan_in_documents_counts_documents_and_says_what_more_questions_would_buy():
    from ragmeter.stats.planning import cluster_sentence

    rng = np.random.default_rng(8)
    doc = np.repeat(rng.normal(0, 0.6, 20), 6)  # documents differ a lot between systems
    a = (doc + rng.normal(0, 0.5, 120) > 0).astype(float)
    b = (rng.normal(0, 1.0, 120) > 0.3).astype(float)
    run = RecordedRun({"a": a, "b": b})
    run.clusters = tuple(f"d{i // 6}" for i in range(120))
    plan = plan_questions(run, "recall@5", difference=0.05, rounds=200)
    need = plan.pairs[0].clusters
    assert (need.clusters, need.per_document) == (20, 6.0)
    assert need.documents > 20 and need.more_documents == need.documents - 20
    line = cluster_sentence(plan.pairs, 0.05)
    assert line.startswith(
        "Questions share documents (6.0 each): separating the planned difference of 5 points"
    )
    assert f"about {need.questions:,} questions at the pair's design effect {need.deff:.2f}" in line
    assert f"{need.documents:,} documents ({need.more_documents:,} more than the 20" in line
    if need.more_questions is None:
        assert "no number of questions on the same 20 documents would" in line
    else:
        assert f"{need.more_questions:,} more questions" in line
    plain = plan_questions(RecordedRun({"a": a, "b": b}), "recall@5", difference=0.05, rounds=200)
    assert plain.pairs[0].clusters is None and cluster_sentence(plain.pairs, 0.05) is None


def test_documents_cannot_settle_it_when_their_own_spread_is_larger_than_the_difference():
    from ragmeter.stats.planning import cluster_sentence

    codes = np.repeat(np.arange(10), 5)
    a = (np.repeat(np.arange(10) % 2, 5)).astype(float)  # whole documents won or lost
    b = np.zeros(50)
    run = RecordedRun({"a": a, "b": b})
    run.clusters = tuple(str(c) for c in codes)
    plan = plan_questions(run, "recall@5", difference=0.05, rounds=200)
    assert plan.pairs[0].clusters.more_questions is None
    assert "no number of questions on the same 10 documents would" in cluster_sentence(
        plan.pairs, 0.05
    )


# ``ragmeter plan``'s arithmetic (ragmeter.stats.planning) against the stats it stands on.

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


# ------------------------------------------------------ one planner, one wording


def _clustered_run(used: bool, verdicts: tuple = ()) -> RecordedRun:
    rng = np.random.default_rng(8)
    doc = np.repeat(rng.normal(0, 0.6, 20), 6)
    a = (doc + rng.normal(0, 0.5, 120) > 0).astype(float)
    b = (rng.normal(0, 1.0, 120) > 0.3).astype(float)
    c = (rng.normal(0, 1.0, 120) > 1.5).astype(float)
    run = RecordedRun({"a": a, "b": b, "c": c})
    run.clusters = tuple(f"d{i // 6}" for i in range(120))
    rows = [
        S(a=x, b=y, verdict=f"{x} better", separated=True, identical=False) for x, y in verdicts
    ]
    run.summary = S(clusters=S(used=used), comparisons=rows)
    return run


def test_a_cluster_aware_run_plans_its_table_its_documents_and_its_report_at_one_design_effect():
    from ragmeter.stats.clusters import pair_design_effect

    run = _clustered_run(used=True)
    plan = plan_questions(run, "recall@5", difference=0.05, rounds=200)
    codes = np.repeat(np.arange(20), 6)
    for p in plan.pairs:
        diff = run.scores(p.a, "recall@5") - run.scores(p.b, "recall@5")
        deff = pair_design_effect(diff, codes)
        assert p.deff == deff
        alone = questions_to_separate(
            run.scores(p.a, "recall@5"), run.scores(p.b, "recall@5"), 0.05, 0.95
        )
        assert p.needed == int(np.ceil(round(alone * deff, 9)))
        # the table's number in the family is the documents line's, in questions
        assert p.in_family == p.clusters.questions
        assert p.clusters.documents == max(2, int(np.ceil(p.in_family / 6)))
    ab = next(p for p in plan.pairs if (p.a, p.b) == ("a", "b"))
    assert ab.deff > 1.5  # a's documents move its score together
    # the same run planned question-level (auto decided against documents): design effect 1,
    # and the documents line says the table planned at 1
    flat = plan_questions(_clustered_run(used=False), "recall@5", difference=0.05, rounds=200)
    assert {p.deff for p in flat.pairs} == {1.0}
    from ragmeter.stats.planning import cluster_sentence

    assert "the table above plans at design effect 1" in cluster_sentence(flat.pairs, 0.05)
    assert "the table above" not in cluster_sentence(plan.pairs, 0.05)


def test_a_cluster_aware_run_plans_each_systems_half_width_at_its_design_effect():
    from ragmeter.cli.layout import markdown
    from ragmeter.cli.search_views import sizes_grid
    from ragmeter.stats.clusters import pair_design_effect

    codes = np.repeat(np.arange(20), 6)
    plan = plan_questions(_clustered_run(used=True), "recall@5", half_width=0.04, rounds=200)
    flat = plan_questions(_clustered_run(used=False), "recall@5", half_width=0.04, rounds=200)
    for s, alone in zip(plan.systems, flat.systems, strict=True):
        x = _clustered_run(used=True).scores(s.system, "recall@5")
        deff = pair_design_effect(x, codes)
        assert s.deff == deff and alone.deff == 1.0
        assert alone.needed == questions_for_half_width(x, 0.04, 0.95)
        assert s.needed == int(np.ceil(round(alone.needed * deff, 9)))
    a = next(s for s in plan.systems if s.system == "a")
    assert a.deff > 1.5 and a.needed > next(s for s in flat.systems if s.system == "a").needed
    # the table says what the number is planned at, and only when questions share documents
    text = markdown(sizes_grid(plan.systems, "recall@5", "± 4 points"))
    assert "(design effect)" in text and f"{a.needed} ({a.deff:.2f})" in text
    assert "design effect" not in markdown(sizes_grid(flat.systems, "recall@5", "± 4 points"))


def test_pairs_the_run_already_separated_are_marked_and_listed_after_the_undecided():
    from ragmeter.stats.planning import family_sentence, undecided_first

    run = _clustered_run(used=False, verdicts=(("a", "c"),))
    plan = plan_questions(run, "recall@5", difference=0.05, rounds=200)
    sep = {(p.a, p.b): p.separated for p in plan.pairs}
    assert sep == {("a", "b"): None, ("a", "c"): "a better", ("b", "c"): None}
    ordered = undecided_first(plan.pairs)
    assert [(p.a, p.b) for p in ordered] == [("a", "b"), ("b", "c"), ("a", "c")]
    # the family's median is over the pairs still open
    open_ = sorted(p.in_family for p in plan.pairs if not p.separated)
    line = family_sentence(plan.pairs, 0.05, 3, "holm")
    assert f"about {open_[len(open_) // 2]:,} questions per pair" in line
    assert "(median over the pairs not yet separated)." in line
    assert "design effect" not in line  # planned question by question: said in the table
    clustered = plan_questions(_clustered_run(used=True), "recall@5", difference=0.05, rounds=200)
    assert family_sentence(clustered.pairs, 0.05, 3, "holm").endswith(
        "Each pair is planned at its design effect, as the questions share documents."
    )


def test_a_system_with_no_miss_says_half_width_and_far_end_apart():
    plan = plan_questions(_run(), "recall@5", half_width=0.04, rounds=200)
    flat = next(s for s in plan.systems if s.system == "flat")
    assert flat.needed == questions_for_exact_half_width(60, 60, 0.04) == 45
    # the lower end within 4 points of 100%: the whole width within 4, half-width 2
    assert flat.edge == questions_for_exact_half_width(60, 60, 0.02) == 91
    assert next(s for s in plan.systems if s.system == "a").edge is None

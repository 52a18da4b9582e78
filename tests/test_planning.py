"""The sample-size view as a library call: what ``ragmeter plan`` prints, computed once."""

from __future__ import annotations

import numpy as np
import pytest

from ragmeter.errors import InputError
from ragmeter.planning import plan_questions
from ragmeter.stats import questions_for_half_width, questions_to_separate, sample_size
from ragmeter.stats_exact import clopper_pearson, questions_for_exact_half_width


class _Run:
    """Just enough of a run: systems and their scores on one metric."""

    def __init__(self, scores: dict[str, np.ndarray]) -> None:
        self._scores = scores
        self.systems = list(scores)

    def scores(self, system: str, metric: str) -> np.ndarray:
        assert metric == "recall@5"
        return self._scores[system]


def _run() -> _Run:
    rng = np.random.default_rng(5)
    a = (rng.random(60) < 0.7).astype(float)
    b = (rng.random(60) < 0.5).astype(float)
    return _Run({"a": a, "b": b, "a2": a.copy(), "flat": np.ones(60), "shift": np.zeros(60)})


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
    from ragmeter.planning import cluster_sentence

    rng = np.random.default_rng(8)
    doc = np.repeat(rng.normal(0, 0.6, 20), 6)  # documents differ a lot between systems
    a = (doc + rng.normal(0, 0.5, 120) > 0).astype(float)
    b = (rng.normal(0, 1.0, 120) > 0.3).astype(float)
    run = _Run({"a": a, "b": b})
    run.clusters = tuple(f"d{i // 6}" for i in range(120))
    plan = plan_questions(run, "recall@5", difference=0.05, rounds=200)
    need = plan.pairs[0].clusters
    assert (need.clusters, need.per_document) == (20, 6.0)
    assert need.documents > 20 and need.more_documents == need.documents - 20
    line = cluster_sentence(plan.pairs, 0.05)
    assert line.startswith("Questions share documents (6.0 each): separating 5 points")
    assert f"about {need.documents:,} documents ({need.more_documents:,} more than the 20" in line
    if need.more_questions is None:
        assert "no number of questions on the same 20 documents would" in line
    else:
        assert f"{need.more_questions:,} more questions" in line
    plain = plan_questions(_Run({"a": a, "b": b}), "recall@5", difference=0.05, rounds=200)
    assert plain.pairs[0].clusters is None and cluster_sentence(plain.pairs, 0.05) is None


def test_documents_cannot_settle_it_when_their_own_spread_is_larger_than_the_difference():
    from ragmeter.planning import cluster_sentence

    codes = np.repeat(np.arange(10), 5)
    a = (np.repeat(np.arange(10) % 2, 5)).astype(float)  # whole documents won or lost
    b = np.zeros(50)
    run = _Run({"a": a, "b": b})
    run.clusters = tuple(str(c) for c in codes)
    plan = plan_questions(run, "recall@5", difference=0.05, rounds=200)
    assert plan.pairs[0].clusters.more_questions is None
    assert "no number of questions on the same 10 documents would" in cluster_sentence(
        plan.pairs, 0.05
    )

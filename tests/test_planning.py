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

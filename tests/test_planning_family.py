"""Planning for a family of pairs: a table of K pairs tests its first pair at alpha / K,
so one true difference needs more questions there than as one planned pair."""

from __future__ import annotations

import numpy as np
import pytest

from ragmeter.errors import InputError
from ragmeter.stats import questions_to_separate
from ragmeter.stats.exact import clopper_pearson, questions_for_exact_half_width
from ragmeter.stats.planning import family_level, family_sentence, pair_needs, plan_questions


class RecordedRun:
    def __init__(self, scores: dict[str, np.ndarray]) -> None:
        self._scores = scores
        self.systems = list(scores)

    def scores(self, system: str, metric: str) -> np.ndarray:
        return self._scores[system]


def _run(m: int = 5) -> RecordedRun:
    rng = np.random.default_rng(9)
    base = rng.random(80) < 0.6
    out = {f"s{i}": (base ^ (rng.random(80) < 0.15)).astype(float) for i in range(m - 1)}
    out["all"] = np.ones(80)
    return RecordedRun(out)


def test_family_level_is_holms_first_step():
    assert family_level(1) == 0.05
    assert family_level(21) == 0.05 / 21
    assert family_level(10, alpha=0.1) == pytest.approx(0.01)
    with pytest.raises(InputError):
        family_level(0)


def test_each_pair_is_planned_alone_and_in_the_family():
    run = _run()
    plan = plan_questions(run, "recall@5", difference=0.05, rounds=200)
    assert plan.family == 10 and plan.level == 0.005  # 5 systems, every pair
    for p in plan.pairs:
        if p.needed is None:
            continue
        a, b = run.scores(p.a, ""), run.scores(p.b, "")
        assert p.needed == questions_to_separate(a, b, 0.05, 0.95)
        assert p.in_family == questions_to_separate(a, b, 0.05, 1 - 0.005)
        assert p.in_family > p.needed
    assert plan.family_needed() >= plan.single_needed()


def test_the_runs_family_and_rule_are_used():
    run = _run()
    base = plan_questions(run, "recall@5", rounds=200, family=4, rule="holm")
    assert base.family == 4 and base.rule == "holm" and base.level == 0.05 / 4
    assert plan_questions(run, "recall@5", rounds=200).rule == "maxt"  # the default rule
    p = next(p for p in base.pairs if p.needed is not None)
    a, b = run.scores(p.a, ""), run.scores(p.b, "")
    assert p.in_family == questions_to_separate(a, b, 0.05, 1 - 0.05 / 4)


def test_a_flat_share_gets_its_exact_interval():
    plan = plan_questions(_run(), "recall@5", rounds=200)
    flat = next(s for s in plan.systems if s.system == "all")
    assert flat.exact == clopper_pearson(80, 80)
    assert flat.needed == questions_for_exact_half_width(80, 80, 0.04)  # it narrows


def test_the_sentence_names_the_family_and_both_numbers():
    run = _run()
    names = run.systems
    scores = {s: run.scores(s, "") for s in names}
    needs = pair_needs(scores, names, 0.05, 10)
    text = family_sentence(needs, 0.05, 10, "holm")
    wide = sorted(p.in_family for p in needs if p.in_family)[
        len([p for p in needs if p.in_family]) // 2
    ]
    assert f"{wide:,} questions per pair in this table of 10 pairs (Holm over 10 pairs" in text
    assert "0.05/10" in text and "planned in advance" in text
    assert "upper bound" in family_sentence(needs, 0.05, 10, "maxt")
    assert "no adjustment" in family_sentence(needs, 0.05, 10, "none")
    assert family_sentence([], 0.05, 10, "holm") is None


def test_max_t_plans_at_the_level_its_first_step_used():
    from ragmeter.comparison.verdicts import compare_family
    from ragmeter.stats.planning import first_level

    run = _run()
    names = run.systems
    m = np.stack([run.scores(s, "") for s in names])
    table = compare_family(m, names, rounds=2000, seed=1)  # max-T, the default
    first = first_level(table.rule, table.rows)
    smallest = min((r for r in table.rows if not r.identical), key=lambda r: r.p_value)
    assert first == smallest.level >= family_level(table.rule.pairs)
    holm = compare_family(m, names, adjust="holm", rounds=2000, seed=1)
    assert first_level(holm.rule, holm.rows) is None and first_level(None, []) is None
    plan = plan_questions(run, "recall@5", rounds=200, first=first)
    assert plan.level == first
    p = next(p for p in plan.pairs if p.needed is not None)
    a, b = run.scores(p.a, ""), run.scores(p.b, "")
    assert p.in_family == questions_to_separate(a, b, 0.05, 1 - first)
    text = family_sentence(plan.pairs, 0.05, plan.family, "maxt", first=first)
    assert f"max-T's first step tested at {first:.3g} on this run" in text

"""One home for what a run says about planning (``stats.planning.planning_inputs``) and
``ragmeter plan`` as a library call (``stats.planning.plan_run``): the rule, the level
and the family come from the run, never from a literal 95%."""

from __future__ import annotations

from types import SimpleNamespace as S

import numpy as np
import pytest
from conftest import EXAMPLE

from ragmeter.stats.planning import Plan, plan_run, planning_inputs


def _run(adjust: str | None, alpha: float = 0.1, pairs: int = 3) -> S:
    """A run of three systems whose saved table decided ``pairs`` pairs under ``adjust``
    at ``alpha``; its rows' max-T levels are 0.02 and 0.03 (an identical pair at 0.001)."""
    rng = np.random.default_rng(4)
    base = rng.random(60)
    scores = {"a": base, "b": base + rng.normal(0, 0.1, 60), "c": base + 0.02}
    rows = [
        S(level=0.02, identical=False),
        S(level=0.03, identical=False),
        S(level=0.001, identical=True),
    ]
    rule = None if adjust is None else S(adjust=adjust, pairs=pairs)
    summary = S(
        comparison_rule=rule,
        alpha=alpha,
        comparisons=rows,
        metric="mrr@10",
        seed=3,
        rounds=200,
    )
    return S(
        summary=summary,
        systems=list(scores),
        scores=lambda s, m: scores[s],
        clusters=None,
    )


def test_planning_inputs_are_the_runs_rule_level_and_first_max_t_level():
    given = planning_inputs(_run("maxt", alpha=0.1, pairs=3))
    assert (given.pairs, given.rule, given.alpha, given.first) == (3, "maxt", 0.1, 0.02)
    assert given.family == 3


def test_the_per_pair_rule_plans_each_pair_as_a_family_of_one():
    given = planning_inputs(_run("none", pairs=3))
    assert (given.pairs, given.family, given.first) == (3, 1, None)


def test_a_run_saved_without_a_rule_plans_every_pair_under_holm():
    given = planning_inputs(_run(None, alpha=0.05))
    assert (given.pairs, given.rule, given.alpha, given.first) == (3, "holm", 0.05, None)


def test_plan_run_plans_at_the_runs_level_and_settings():
    found = plan_run(_run("maxt", alpha=0.1), half_width=0.05, difference=0.1)
    assert isinstance(found, Plan)
    assert (found.metric, found.seed, found.rounds) == ("mrr@10", 3, 200)
    assert (found.alpha, found.rule, found.family, found.first) == (0.1, "maxt", 3, 0.02)
    at_95 = plan_run(_run("maxt", alpha=0.05), half_width=0.05, difference=0.1)
    assert found.systems[0].needed < at_95.systems[0].needed  # 90% needs fewer questions


def test_plan_run_for_one_system_plans_it_alone():
    found = plan_run(_run("maxt"), system="b")
    assert [s.system for s in found.systems] == ["b"]
    assert (found.family, found.first, found.pairs) == (1, None, [])


def test_chosen_pairs_are_planned_as_their_own_family():
    chosen = [("a", "b"), ("a", "c")]
    other = plan_run(_run("maxt"), difference=0.1, pairs=chosen)
    assert [(p.a, p.b) for p in other.pairs] == chosen
    assert (other.family, other.first) == (2, None)  # another family: Holm's level
    own = plan_run(_run("maxt"), difference=0.1, pairs=chosen, own_table=True)
    assert own.first == 0.02  # the run's own table: its max-T first level
    alone = plan_run(_run("none"), difference=0.1, pairs=chosen)
    assert alone.family == 1


def test_the_plan_caption_names_the_runs_confidence_under_the_per_pair_rule():
    from ragmeter.cli.search import _pair_caption

    plan = Plan("mrr@10", 0.04, 0.05, 1, 200, rule="none", alpha=0.1)
    assert _pair_caption(plan).endswith("every pair at its own 90%.")
    plan = Plan("mrr@10", 0.04, 0.05, 1, 200, rule="none", alpha=0.05)
    assert _pair_caption(plan).endswith("every pair at its own 95%.")


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    from ragmeter.inputs.config import Config
    from ragmeter.runs.pipeline import run_search
    from ragmeter.runs.results import Results

    cfg = Config(
        corpus=str(EXAMPLE / "posts"),
        testset=str(EXAMPLE / "questions.jsonl"),
        strategies=("fixed", "sentence", "recursive"),
        retrievers=("bm25",),
        rounds=200,
        confidence=0.9,
    )
    return Results(run_search(cfg).save(tmp_path_factory.mktemp("plan") / "res"))


def test_plan_and_the_report_read_one_set_of_planning_inputs(saved):
    from ragmeter.report.data import report_data

    given = planning_inputs(saved)
    assert given.alpha == pytest.approx(0.1)  # the run's confidence, 0.9
    found = plan_run(saved)
    assert (found.alpha, found.family, found.first) == (given.alpha, given.family, given.first)
    sentence = report_data(saved)["sample_size"]["family"]
    assert sentence is not None and f"{given.pairs} pairs" in sentence


def _members(protocol: type) -> set[str]:
    """The members a planning protocol declares: its fields and its methods/properties."""
    declared = set(getattr(protocol, "__annotations__", {}))
    return declared | {n for n in vars(protocol) if not n.startswith("_")}


def test_a_saved_run_and_its_summary_have_every_member_planning_reads(saved):
    from ragmeter.stats import plan_inputs as p

    summary = saved.summary
    rows = [r for r in summary.comparisons if not r.identical]
    assert rows and summary.comparison_rule is not None and summary.clusters is not None
    for protocol, value in (
        (p.PlannedRun, saved),
        (p.PlannedSummary, summary),
        (p.PlannedRule, summary.comparison_rule),
        (p.PlannedRow, rows[0]),
        (p.PlannedClusters, summary.clusters),
    ):
        members = _members(protocol)
        assert members, protocol
        missing = sorted(m for m in members if not hasattr(value, m))
        assert missing == [], (protocol.__name__, missing)


def test_planning_takes_its_inputs_typed_by_its_own_layer_not_as_any():
    from pathlib import Path

    import ragmeter.stats.planning as planning

    text = Path(planning.__file__).read_text(encoding="utf-8")
    assert ": Any" not in text and "[Any]" not in text

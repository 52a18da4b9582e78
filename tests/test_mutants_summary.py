"""summarize(): every setting a run was given reaches the numbers it prints."""

from __future__ import annotations

import numpy as np
import pytest

from ragmeter import stats
from ragmeter.errors import InputError
from ragmeter.summary import Summary, summarize

RNG = np.random.default_rng(7)
N = 60
SYSTEMS = ["a", "b", "c"]
RECALL = (RNG.random((3, N)) < [[0.5], [0.7], [0.9]]).astype(float)
MRR = RNG.random((3, N))
MATRICES = {"recall@5": RECALL, "mrr@10": MRR}


def test_confidence_seed_rounds_and_method_reach_every_interval():
    s = summarize(
        MATRICES, SYSTEMS, "mrr@10", seed=3, rounds=500, confidence=0.9, method="bca", adjust="holm"
    )
    assert (s.metric, s.seed, s.rounds, s.confidence, s.method) == ("mrr@10", 3, 500, 0.9, "bca")
    for i, name in enumerate(SYSTEMS):
        for metric, matrix in MATRICES.items():
            est = s.estimate(name, metric)
            want = stats.bootstrap(matrix[i], rounds=500, seed=3, confidence=0.9, method="bca")
            assert (est.low, est.high, est.confidence) == (want.low, want.high, 0.9)
    # the comparisons are at the run's level, not a fixed 0.05
    assert s.alpha == pytest.approx(0.1)
    assert s.comparison_rule.alpha == pytest.approx(0.1)
    assert s.comparison_rule.seed == 3 and s.comparison_rule.rounds == 500
    # Holm over 3 pairs: each difference interval at 1 - 0.1 / 3 (simultaneous)
    assert s.comparison_rule.adjust == "holm" and s.comparison_rule.pairs == 3
    assert all(r.difference.confidence == pytest.approx(1 - 0.1 / 3) for r in s.comparisons)


def test_the_default_rule_is_the_runs_default():
    """Called directly, summarize() decides as a run does by default: step-down max-T."""
    from ragmeter.config import Config

    s = summarize(MATRICES, SYSTEMS, "recall@5", seed=3, rounds=300)
    assert s.comparison_rule.adjust == Config().adjust == "maxt"


def test_sample_sizes_are_of_the_comparison_metric_at_the_runs_level():
    s = summarize(MATRICES, SYSTEMS, "mrr@10", seed=2, rounds=300, confidence=0.8)
    for i, name in enumerate(SYSTEMS):
        want = stats.sample_size(MRR[i], rounds=300, seed=2, confidence=0.8)
        assert [(r.n, r.low, r.high, r.confidence) for r in s.sample_size[name]] == [
            (r.n, r.low, r.high, 0.8) for r in want
        ]


def test_family_rule_and_capped_systems_pass_through():
    base = summarize(MATRICES, SYSTEMS, "recall@5", 1, 200, adjust="none", baseline="a")
    assert base.comparison_rule.adjust == "none"
    assert {(r.a, r.b) for r in base.comparisons} == {("b", "a"), ("c", "a")}
    planned = summarize(
        MATRICES, SYSTEMS, "recall@5", 1, 200, pairs=[("c", "b")], k_capped={"a": 3}
    )
    assert [(r.a, r.b) for r in planned.comparisons] == [("c", "b")]
    assert planned.k_capped == {"a": 3} and planned.to_json()["k_capped"] == {"a": 3}
    assert "k_capped" not in base.to_json()
    alone = summarize({"recall@5": RECALL[:1]}, ["a"], "recall@5", 1, 200, confidence=0.8)
    assert alone.comparisons == [] and alone.comparison_rule is None
    assert alone.alpha == pytest.approx(0.2)
    with pytest.raises(InputError, match="metric 'ndcg@10' was not computed"):
        summarize(MATRICES, SYSTEMS, "ndcg@10", 1, 200)


def test_summary_json_round_trip_keeps_every_setting():
    s = summarize(MATRICES, SYSTEMS, "recall@5", 4, 200, confidence=0.9, k_capped={"b": 2})
    back = Summary.from_json(s.to_json())
    assert back.to_json() == s.to_json()
    assert back.rng == s.rng == "mulberry32"
    assert Summary().rng is None
    assert Summary().confidence == 0.95 and Summary().alpha == 0.05  # an empty summary
    with pytest.raises(InputError, match="where.json"):
        Summary.from_json({"estimates": {"a": 3}}, where="where.json")


def _run(**cfg):
    from types import SimpleNamespace as S

    base = dict(metric="recall@5", seed=2, rounds=200, confidence=0.9, method="percentile")
    base |= dict(adjust="none", baseline="", pairs="", family="auto")
    base |= dict(adjust="none", baseline="", pairs="")
    base |= dict(ideal="returned", gain="exponential", trec_eval_compat=False)
    return S(
        config=S(**(base | cfg)),
        metric_names=list(MATRICES),
        matrix=lambda m: MATRICES[m],
        systems=[S(name="a", k_cap=None), S(name="b", k_cap=2), S(name="c", k_cap=None)],
    )


def test_summarize_run_uses_the_runs_own_settings():
    from ragmeter.summary import summarize_run

    s = summarize_run(_run())
    assert (s.seed, s.rounds, s.confidence) == (2, 200, 0.9)
    assert s.comparison_rule.adjust == "none" and s.comparison_rule.family == "all pairs"
    assert s.k_capped == {"b": 2}
    based = summarize_run(_run(baseline="a", adjust="holm"))
    assert based.comparison_rule.adjust == "holm"
    assert {(r.a, r.b) for r in based.comparisons} == {("b", "a"), ("c", "a")}
    planned = summarize_run(_run(pairs="c:b"))
    assert [(r.a, r.b) for r in planned.comparisons] == [("c", "b")]

"""``ragmeter.questions.compare``: every interval with the configured seed and
confidence, the differences decided by the one comparison (compare_systems) under the
run's rule, every system's difference one family, a metric that was not computed, the
saved form, and ``compare_files`` honouring its config and rounds."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import EXAMPLE

from ragmeter import stats
from ragmeter.comparison.systems import ComparisonPlan, compare_systems
from ragmeter.errors import InputError
from ragmeter.inputs.config import Config
from ragmeter.inputs.corpus import load_corpus
from ragmeter.inputs.testset import Question, TestSet, load_testset
from ragmeter.questions.compare import compare_files, compare_testsets
from ragmeter.runs.pipeline import run_search


@pytest.fixture(scope="module")
def sets():
    docs = load_corpus(f"{EXAMPLE}/posts")
    reader = TestSet(load_testset(f"{EXAMPLE}/questions.jsonl", docs).questions[:16])
    # the "generated" set asks each passage itself; its last four are dropped
    generated = TestSet(
        [Question(f"{q.id}-gen", q.answers[0].text, q.answers) for q in reader.questions]
    )
    return docs, reader, generated


def test_every_interval_uses_the_configured_seed_and_confidence(sets):
    docs, reader, generated = sets
    cfg = Config(strategies=("sentence",), ks=(5,), rounds=200, seed=7, confidence=0.9)
    drop = [q.id for q in generated.questions[-4:]]
    result = compare_testsets(cfg, reader, generated, docs, drop=drop)
    [s] = result.systems
    metric = result.metric
    a = np.asarray(run_search(cfg, docs, reader).systems[0].scores[metric], dtype=float)
    b = np.asarray(run_search(cfg, docs, generated).systems[0].scores[metric], dtype=float)
    same = {"rounds": 200, "seed": 7, "confidence": 0.9}
    assert s.a == stats.bootstrap(a, **same) and s.b == stats.bootstrap(b, **same)
    # A - B is the comparison every view makes (compare_systems), at the run's level
    plan = ComparisonPlan(metric, 7, 200, 0.9, adjust=cfg.adjust)
    names = ["reader (sentence)", "generated (sentence)"]
    table = compare_systems({metric: np.stack([a, b])}, names, plan.choose(*names))
    assert s.diff == table.rows[0] and result.rule == table.rule
    keep = np.arange(16) < 12
    assert s.b_clean == stats.bootstrap(b[keep], **same)
    names = ["reader (sentence)", "generated, unflagged (sentence)"]
    clean = compare_systems({metric: np.stack([a[keep], b[keep]])}, names, plan.choose(*names))
    assert s.clean_diff == clean.rows[0]
    saved = result.to_dict()
    assert (saved["metric"], saved["pairs"], saved["seed"], saved["rounds"]) == (metric, 16, 7, 200)
    assert saved["rule"] == result.rule.to_dict()
    assert saved["unpaired"] == {"reader": 0, "generated": 0} and saved["dropped"] == drop
    [row] = saved["systems"]
    assert row["system"] == s.system and row["diff"] == s.diff.to_dict()
    assert row["b_clean"] == s.b_clean.to_dict() and row["clean_diff"] == s.clean_diff.to_dict()
    json.dumps(saved)  # plain JSON


def test_a_metric_that_was_not_computed_is_refused(sets):
    docs, reader, generated = sets
    cfg = Config(strategies=("sentence",), ks=(5,), rounds=200)
    with pytest.raises(
        InputError,
        match=r"metric 'recall@50' was not computed \(did you mean 'recall@5'\?\); choose one of",
    ):
        compare_testsets(cfg, reader, generated, docs, metric="recall@50")


def test_compare_files_reads_its_config_and_rounds(tmp_path):
    config = tmp_path / "ragmeter.toml"
    config.write_text('[search]\nstrategies = ["overlap"]\nks = [1, 3]\n')
    qs = f"{EXAMPLE}/questions.jsonl"
    result = compare_files(qs, qs, f"{EXAMPLE}/posts", config, rounds=300, seed=5)
    assert [s.system for s in result.systems] == ["overlap"]
    assert (result.rounds, result.seed) == (300, 5)
    assert result.systems[0].a.rounds == 300


@pytest.mark.parametrize("adjust", ["maxt", "holm", "none"])
def test_every_system_s_difference_is_one_family_under_the_run_s_rule(sets, adjust):
    docs, reader, generated = sets
    cfg = Config(strategies=("sentence", "fixed"), ks=(5,), rounds=200, seed=3, adjust=adjust)
    result = compare_testsets(cfg, reader, generated, docs)
    assert [s.system for s in result.systems] == ["sentence", "fixed"]
    assert (result.rule.adjust, result.rule.pairs) == (adjust, 2)
    metric = result.metric
    rows = [f"{n} ({s})" for s in ("sentence", "fixed") for n in ("reader", "generated")]
    matrix = np.stack(
        [
            np.asarray(run.systems[i].scores[metric], dtype=float)
            for i in range(2)
            for run in (run_search(cfg, docs, reader), run_search(cfg, docs, generated))
        ]
    )
    plan = ComparisonPlan(metric, 3, 200, 0.95, adjust=adjust)
    table = compare_systems(
        {metric: matrix}, rows, plan.choose(pairs=[tuple(rows[:2]), tuple(rows[2:])])
    )
    assert [s.diff for s in result.systems] == table.rows
    if adjust == "none":  # the seed's per-pair rule: the paired percentile bootstrap, as before
        for i, s in enumerate(result.systems):
            before = stats.paired(matrix[2 * i], matrix[2 * i + 1], rounds=200, seed=3)
            assert s.diff.difference == before.difference

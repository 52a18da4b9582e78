"""Every view shows the comparison the run made: summary.json, the terminal, the report,
the notebook and ``ragmeter check`` all get their rows from ``comparison.compare_systems``.

The run is made at ``confidence = 0.90`` (not the default) and holds two systems that
score the same on the comparison metric but not on every metric, so a view that took
its level from anywhere else, or found identical systems from one metric, disagrees.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from conftest import EXAMPLE
from typer.testing import CliRunner

import ragmeter
from ragmeter.cli import app
from ragmeter.comparison.formatting import shown_difference, shown_p
from ragmeter.comparison.systems import ComparisonPlan, compare_run
from ragmeter.history.gate import check_noninferior
from ragmeter.inputs.config import Config
from ragmeter.report.data import _comparisons
from ragmeter.runs.results import Results
from ragmeter.runs.search_run import SearchRun


def _key(row) -> tuple:
    d = row.difference
    return (row.a, row.b, d.mean, d.low, d.high, d.confidence, row.p, row.verdict, row.identical)


@pytest.fixture(scope="module")
def run() -> SearchRun:
    cfg = Config(
        corpus=f"{EXAMPLE}/posts",
        testset=f"{EXAMPLE}/questions.jsonl",
        strategies=("fixed", "sentence", "parent-400"),
        confidence=0.90,
        rounds=400,
        seed=7,
    )
    base = ragmeter.search(cfg)
    # "twin" scores as "sentence" on recall@5 (the comparison metric) and differs on
    # mrr@10: it is not identical, so it must be compared, not folded.
    sentence = base.system("sentence")
    scores = dict(sentence.scores)
    scores["mrr@10"] = np.roll(scores["mrr@10"], 1)
    assert not np.array_equal(scores["mrr@10"], sentence.scores["mrr@10"])
    twin = dataclasses.replace(sentence, name="twin", scores=scores)
    return dataclasses.replace(base, systems=[*base.systems, twin])


@pytest.fixture(scope="module")
def saved(run, tmp_path_factory) -> Results:
    return Results(run.save(tmp_path_factory.mktemp("one") / "res"))


def test_the_plan_is_the_run_s_own(run, saved):
    # each question's cluster is the document of its answer, as the run and its results say
    documents = tuple(q.answers[0].doc for q in run.questions)
    plan = ComparisonPlan("recall@5", 7, 400, 0.90, clusters=documents, family="auto")
    assert run.comparison_plan == plan == saved.comparison_plan
    assert plan.alpha == 0.1


def test_every_view_shows_the_same_rows_at_confidence_090(run, saved):
    summary_rows = [_key(r) for r in run.summary.comparisons]
    assert len(summary_rows) == 6  # 4 systems, all pairs: the twin is compared, not folded
    assert not any(r.identical for r in run.summary.comparisons)
    assert {r.difference.confidence for r in run.summary.comparisons} != {0.95}
    assert run.summary.comparison_rule.alpha == pytest.approx(0.10)
    # summary.json read back
    assert [_key(r) for r in saved.summary.comparisons] == summary_rows
    # the notebook, in memory and on disk
    assert [_key(r) for r in ragmeter.compare(run)] == summary_rows
    assert [_key(r) for r in ragmeter.compare(saved)] == summary_rows
    assert [_key(r) for r in compare_run(saved, saved.comparison_plan).rows] == summary_rows
    # the report prints the terminal's texts of those rows
    page = _comparisons(saved, saved.summary, "recall@5")
    for row, shown in zip(saved.summary.comparisons, page, strict=True):
        assert shown["shown"]["difference"] == shown_difference(row, "recall@5")
        assert shown["shown"]["p"] == shown_p(row, 0.1)
    # the terminal
    out = CliRunner().invoke(app, ["compare", str(saved.path)], env={"COLUMNS": "240"})
    assert out.exit_code == 0, out.output
    lines = out.stdout.splitlines()
    for row in saved.summary.comparisons:
        text = shown_difference(row, "recall@5")
        assert any(row.a in ln and row.b in ln and text in ln for ln in lines), (row, out.stdout)


def test_one_pair_is_the_same_row_in_the_notebook_and_the_terminal(saved):
    [row] = ragmeter.compare(saved, "twin", "fixed")
    assert row.difference.confidence < 0.95  # a family of one at the run's level, 0.90
    out = CliRunner().invoke(
        app, ["compare", str(saved.path), "--a", "twin", "--b", "fixed"], env={"COLUMNS": "240"}
    )
    assert out.exit_code == 0, out.output
    assert shown_difference(row, "recall@5") in out.stdout


def test_check_compares_at_the_baseline_s_confidence(saved):
    result = check_noninferior(
        saved, saved, "sentence", "recall@5", 0.02, confidence=saved.summary.confidence
    )
    assert result.difference.confidence == pytest.approx(0.90)
    assert result.difference.mean == 0.0 and result.ties == len(saved.question_ids)

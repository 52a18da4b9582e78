"""``ragmeter.runs.search_run.SearchRun`` built by hand and by ``evaluate_files``: its defaults, the
type of the scores it hands out, rankings that do not match the questions, and ``save``
refusing to replace a folder unless asked."""

from __future__ import annotations

import numpy as np
import pytest

from ragmeter.errors import RagmeterError
from ragmeter.runs.evaluate import evaluate_files
from ragmeter.runs.search_run import SearchRun, SystemRun


@pytest.fixture()
def run(tmp_path):
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\nq2 0 d2 1\nq3 0 d3 1\n")
    (tmp_path / "a.run").write_text("q1 Q0 d1 1 2.0 a\nq2 Q0 d9 1 1.0 a\n")
    return evaluate_files(tmp_path / "qrels.txt", [tmp_path / "a.run"], ["recall@1"]).run


def test_a_run_built_without_timings_has_none(run):
    again = SearchRun(run.config, run.documents, run.testset, run.systems)
    assert again.timings == {} and again.chunk_keys == {}
    assert again.timings is not SearchRun(run.config, [], run.testset, []).timings


def test_scores_are_float64_whatever_a_system_holds(run):
    s = run.systems[0]
    ints = SystemRun(s.name, s.strategy, s.retriever, 0, s.items, {"hits": [1, 0, 1]})
    by_hand = SearchRun(run.config, run.documents, run.testset, [ints])
    got = by_hand.scores(ints.name, "hits")
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, [1.0, 0.0, 1.0])


def test_rankings_must_match_the_questions_one_to_one(run):
    s = run.systems[0]
    short = SystemRun(s.name, s.strategy, s.retriever, 0, s.items[:-1], s.scores)
    with pytest.raises(ValueError):
        _ = SearchRun(run.config, run.documents, run.testset, [short]).runs


def test_save_refuses_to_replace_results_unless_asked(run, tmp_path):
    where = tmp_path / "out"
    assert run.save(where) == where
    with pytest.raises(RagmeterError):
        run.save(where)
    assert run.save(where, overwrite=True) == where
    assert (where / "summary.json").is_file()

"""The qrels route (ragmeter.qrels*): per-query means and what a run file holds."""

from __future__ import annotations

import numpy as np

from ragmeter.qrels import Evaluation


def test_evaluation_means_are_per_measure_and_zero_without_queries():
    ev = Evaluation("run", ["1", "2"], {"map": np.array([0.5, 1.0]), "p@5": np.array([0.2, 0])})
    assert ev.means() == {"map": 0.75, "p@5": 0.1}
    assert Evaluation("run", [], {"map": np.zeros(0)}).means() == {"map": 0.0}
    assert (ev.missing, ev.unjudged, ev.depth, ev.top) == ([], [], 0, None)


def test_a_repeated_document_in_a_later_query_is_named(tmp_path):
    import pytest

    from ragmeter.errors import InputError
    from ragmeter.qrels import run_matrix
    from ragmeter.qrels_read import Qrels, read_run

    rp = tmp_path / "r.txt"
    rp.write_text("1 Q0 a 1 3 t\n2 Q0 b 1 2 t\n2 Q0 c 2 1 t\n2 Q0 b 3 0 t\n")
    q = Qrels.from_dict({"1": {"a": 1}, "2": {"b": 1}})
    with pytest.raises(InputError, match=r"r.txt:4: 'b' already listed for query '2' on line 2"):
        run_matrix(read_run(rp), q)


def test_an_empty_run_misses_every_judged_query(tmp_path):
    import pytest

    from ragmeter.errors import InputError
    from ragmeter.qrels import evaluate_run
    from ragmeter.qrels_read import Qrels, Run, read_run

    rp = tmp_path / "empty.txt"
    rp.write_text("")
    with pytest.raises(InputError, match="empty.txt: no lines; the run file is empty"):
        read_run(rp)
    # a run built in Python may hold no lines: every judged query is missing
    none = np.zeros(0, dtype="S1")
    run = Run(none, none, np.zeros(0), np.zeros(0, np.int64), np.zeros(0, np.int64), "r", "")
    q = Qrels.from_dict({"1": {"a": 1}, "2": {"b": 2}})
    ev = evaluate_run(run, q, ["map", "P_5"])
    assert ev.missing == ["1", "2"]
    assert {m: v.tolist() for m, v in ev.scores.items()} == {
        "map": [0.0, 0.0],
        "precision@5": [0.0, 0.0],
    }

"""A run's lines are ordered in one place, scoring.trec.run_order: by query, score highest
first, then the tie order (rank, then file order; or trec_eval's document id, descending,
on scores held as 32-bit floats). The TREC run reader of retrieval/trec.py orders by it."""

from __future__ import annotations

import numpy as np
import pytest

from ragmeter.retrieval import trec as retrieval_trec
from ragmeter.scoring import trec as scoring_trec
from ragmeter.scoring.trec import Qrels, Run, run_matrix, run_order

Q = np.array([1, 0, 0, 0, 1, 0])
SCORE = np.array([0.5, 2.0, 1.0, 2.0, 0.7, 1.0])
RANK = np.array([2, 3, 4, 1, 1, 5])
DOC = np.array([b"a", b"b", b"c", b"d", b"e", b"f"])


def test_lines_go_by_query_then_score_then_rank():
    assert run_order(Q, SCORE, RANK).tolist() == [3, 1, 2, 5, 4, 0]


def test_without_ranks_equal_scores_keep_file_order():
    assert run_order(Q, SCORE).tolist() == [1, 3, 2, 5, 4, 0]


def test_trec_eval_breaks_ties_by_document_id_descending_in_single_precision():
    score = SCORE.copy()
    score[2] = 1.0000000001  # one score with 1.0 as a 32-bit float
    assert run_order(Q, score, RANK, DOC, trec_eval_compat=True).tolist() == [3, 1, 5, 2, 4, 0]
    assert run_order(Q, score, None, DOC, trec_eval_compat=True).tolist() == [3, 1, 5, 2, 4, 0]
    assert run_order(Q, score, RANK).tolist() == [3, 1, 2, 5, 4, 0]


def test_trec_eval_s_order_needs_the_documents():
    with pytest.raises(ValueError, match="document ids"):
        run_order(Q, SCORE, trec_eval_compat=True)


@pytest.mark.parametrize("compat", [False, True])
def test_run_order_is_the_order_a_run_is_scored_in(compat):
    rng = np.random.default_rng(5)
    n = 60
    q = rng.integers(0, 4, n)
    docs = np.array([f"d{i:02d}".encode() for i in rng.permutation(n)])
    score = np.round(rng.random(n), 1)
    rank = rng.integers(1, 9, n)
    qids = np.array([f"q{i}".encode() for i in q])
    run = Run(qids, docs, score, rank, np.arange(1, n + 1), "r", "r.txt")
    qrels = Qrels.from_dict({f"q{i}": {"d00": 1} for i in range(4)})
    m = run_matrix(run, qrels, trec_eval_compat=compat, keep=n)
    order = run_order(q, score, rank, docs, trec_eval_compat=compat)
    for row in range(4):
        assert [d for d in m.docs[row] if d] == [d for d in docs[order] if d in docs[q == row]]


def test_the_run_reader_orders_lines_through_run_order(tmp_path, monkeypatch):
    path = tmp_path / "run.txt"
    path.write_text(
        "q2 Q0 a 2 0.5 t\nq1 Q0 b 3 2.0 t\nq1 Q0 c 4 1.0 t\n"
        "q1 Q0 d 1 2.0 t\nq2 Q0 e 1 0.7 t\nq1 Q0 f 5 1.0 t\n"
    )
    got = retrieval_trec.read_run(path)
    assert list(got) == ["q2", "q1"]  # questions in the order they first appear
    assert [i for i, _ in got["q1"]] == ["d", "b", "c", "f"]
    assert [i for i, _ in got["q2"]] == ["e", "a"]
    calls = []
    real = scoring_trec.run_order

    def spy(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(retrieval_trec, "run_order", spy)
    assert retrieval_trec.read_run(path) == got
    assert len(calls) == 1

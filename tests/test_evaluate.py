"""``ragmeter.runs.evaluate.evaluate_files``: run files against qrels, checked setting by setting
against ``qrels.evaluate_run`` and field by field in the drill-down it keeps."""

from __future__ import annotations

import numpy as np
import pytest

from ragmeter.runs.evaluate import TOP, evaluate_files, means_table, per_query_nonzero
from ragmeter.scoring.trec import Evaluation, evaluate_run, read_qrels, read_run

QRELS = """\
q1 0 d1 2
q1 0 d2 0
q1 0 d3 1
q1 0 d4 2
q1 0 d8 2
q2 0 d5 1
q2 0 d6 2
q3 0 d7 0
"""
# q1: eight documents (more than the drill-down keeps), one unjudged, one relevant
# document not returned (d8); q2: one document;
# q3: judged, nothing relevant, not in the run
RUN = """\
q1 Q0 d3 1 9.5 sys
q1 Q0 d9 2 9.0 sys
q1 Q0 d1 3 8.5 sys
q1 Q0 d2 4 8.0 sys
q1 Q0 d4 5 7.5 sys
q1 Q0 d10 6 7.0 sys
q1 Q0 d11 7 6.5 sys
q1 Q0 d12 8 6.0 sys
q2 Q0 d6 1 3.25 sys
"""


@pytest.fixture()
def files(tmp_path):
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "a.run").write_text(RUN)
    return tmp_path


def test_settings_reach_the_run_config(files):
    out = evaluate_files(files / "qrels.txt", [files / "a.run"], ["ndcg@3"])
    c = out.run.config
    assert (c.rounds, c.seed, c.method) == (10_000, 1, "percentile")
    out = evaluate_files(
        files / "qrels.txt", [files / "a.run"], ["ndcg@3"], rounds=300, seed=4, method="bca"
    )
    c = out.run.config
    assert (c.rounds, c.seed, c.method) == (300, 4, "bca")


@pytest.mark.parametrize(
    ("gain", "ideal"), [("linear", "judged"), ("exponential", "returned"), (None, "judged")]
)
def test_gain_and_ideal_reach_the_scores(files, gain, ideal):
    out = evaluate_files(files / "qrels.txt", [files / "a.run"], ["ndcg@3"], gain=gain, ideal=ideal)
    want = evaluate_run(
        read_run(files / "a.run"),
        read_qrels(files / "qrels.txt"),
        ["ndcg@3"],
        gain=gain,
        ideal=ideal,
    )
    np.testing.assert_array_equal(out.evaluations[0].scores["ndcg@3"], want.scores["ndcg@3"])


def test_gain_and_ideal_change_ndcg_here(files):
    q, r = files / "qrels.txt", [files / "a.run"]

    def ndcg(**kw):
        return evaluate_files(q, r, ["ndcg@3"], **kw).evaluations[0].scores["ndcg@3"][0]

    assert ndcg(gain="linear") != ndcg(gain="exponential")
    assert ndcg(ideal="returned") != ndcg(ideal="judged")


def test_drill_down_keeps_the_top_documents_as_ranked(files):
    out = evaluate_files(files / "qrels.txt", [files / "a.run"], ["ndcg@3"])
    system = out.run.systems[0]
    q1, q2, q3 = system.items
    assert [it.doc for it in q1] == ["d3", "d9", "d1", "d2", "d4"][:TOP]
    assert [it.rank for it in q1] == list(range(1, TOP + 1))
    assert [it.grade for it in q1] == [1, 0, 2, 0, 2]
    assert [it.score for it in q1] == [9.5, 9.0, 8.5, 8.0, 7.5]
    assert [(it.start, it.end) for it in q1] == [(0, 0)] * TOP
    assert [(it.rank, it.doc, it.score, it.grade) for it in q2] == [(1, "d6", 3.25, 2)]
    assert q3 == []  # not in the run: nothing kept, no padding
    docs = out.run.documents
    assert [d.id for d in docs] == sorted(["d1", "d2", "d3", "d4", "d6", "d9"])
    assert all(d.text == "" for d in docs)
    assert out.no_relevant == ["q3"]


def test_drill_down_rows_read_like_a_list_of_rows(files):
    system = evaluate_files(files / "qrels.txt", [files / "a.run"], ["ndcg@3"]).run.systems[0]
    rows = system.items
    whole = list(rows)
    assert len(rows) == 3 and len(whole) == 3
    assert rows[-3] == whole[0] and rows[-1] == whole[2] == []
    assert rows[1:] == whole[1:] and rows[::2] == [whole[0], whole[2]]
    assert rows[0] == rows[0] and rows[0] is not rows[0]  # made when read, held by none
    for bad in (3, -4):
        with pytest.raises(IndexError):
            rows[bad]


def test_per_query_nonzero_counts_queries_above_zero_on_any_measure():
    scores = {"a": np.array([0.0, 0.5, 0.0, 0.25]), "b": np.array([0.0, 0.0, 1.0, 0.0])}
    e = Evaluation("s", ["q1", "q2", "q3", "q4"], scores)
    assert per_query_nonzero(e) == 3  # q2, q3, q4 (of two measures)
    empty = per_query_nonzero(Evaluation("s", [], {}))
    assert empty == 0 and isinstance(empty, int)
    assert means_table([e]) == {"s": {"a": 0.1875, "b": 0.25}}

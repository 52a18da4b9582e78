"""Scoring one system (ragmeter.runs.scoring): ranks, document-level keys, alternatives,
ideal rankings and capped k, against numbers worked out by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ragmeter.chunking.types import Chunk
from ragmeter.inputs.config import Config
from ragmeter.inputs.testset import AnswerSpan, Question
from ragmeter.runs import scoring

TEXT = "x" * 100
LENGTHS = {"d1": 100, "d2": 50}
QRELS = Question("q", "?", (), qrels=(("d1", 2), ("d2", 1), ("d3", 0)))
FOUND = [("d2", 0, 10, 0.9, 2), ("d1", 0, 50, 0.5, 8)]


def test_items_are_ranked_from_one_and_graded_by_document():
    (row,) = scoring.grade_rankings([FOUND], [QRELS])
    assert [(it.rank, it.doc, it.grade, it.words, it.score) for it in row] == [
        (1, "d2", 1, 2, 0.9),
        (2, "d1", 2, 8, 0.5),
    ]


def test_a_document_key_counts_every_relevant_document_from_grade_one():
    rows = scoring.grade_rankings([FOUND], [QRELS])
    out = scoring.score_system(rows, [QRELS], Config(ks=(1, 2), depth=4), doc_lengths=LENGTHS)
    # two relevant documents (grade >= 1, trec_eval's level for qrels), 150 characters
    assert out["recall@1"].tolist() == [0.5] and out["recall@2"].tolist() == [1.0]
    assert out["coverage@1"].tolist() == pytest.approx([10 / 150])
    assert out["coverage@2"].tolist() == pytest.approx([60 / 150])
    assert out["words@2"].tolist() == [10.0]
    assert out["coverage@1"].dtype == np.float64


def test_the_judged_ideal_is_the_grades_best_first():
    rows = scoring.grade_rankings([FOUND], [QRELS])
    cfg = Config(ks=(1, 2), depth=4, ideal="judged")
    out = scoring.score_system(rows, [QRELS], cfg, doc_lengths=LENGTHS)
    dcg = (2**1 - 1) / math.log2(2) + (2**2 - 1) / math.log2(3)
    idcg = (2**2 - 1) / math.log2(2) + (2**1 - 1) / math.log2(3)
    assert out["ndcg@2"].tolist() == pytest.approx([dcg / idcg])
    assert out["ndcg@1"].tolist() == pytest.approx([1 / 3])
    # a passage key under the judged ideal: one unit of grade 2
    span = Question("p", "?", (AnswerSpan("d1", 0, 10, TEXT[:10]),))
    prow = scoring.grade_rankings([[("d1", 50, 60, 1.0, 2), ("d1", 0, 10, 0.5, 2)]], [span])
    got = scoring.score_system(prow, [span], cfg, doc_lengths=LENGTHS)
    assert got["ndcg@2"].tolist() == pytest.approx([(3 / math.log2(3)) / 3])


def test_any_of_alternatives_take_the_best_one():
    a1 = AnswerSpan("d1", 0, 10, TEXT[:10])
    a2 = AnswerSpan("d1", 50, 60, TEXT[50:60])
    q = Question("a", "?", (a1,), any_of=(a1, a2))
    rows = scoring.grade_rankings([[("d1", 50, 55, 1.0, 1)]], [q])
    out = scoring.score_system(rows, [q], Config(ks=(1, 2), depth=4))
    assert out["coverage@1"].tolist() == pytest.approx([0.5])  # half of the second one
    none = scoring.grade_rankings([[("d2", 0, 5, 1.0, 1)]], [q])
    assert scoring.score_system(none, [q], Config(ks=(1,), depth=4))["coverage@1"].tolist() == [0.0]


def test_the_index_ideal_keeps_each_chunks_best_grade_over_the_alternatives():
    chunks = [Chunk.span("d1", TEXT, 0, 30), Chunk.span("d1", TEXT, 30, 70)]
    chunks.append(Chunk.span("d1", TEXT, 70, 100))
    a1 = AnswerSpan("d1", 0, 10, TEXT[:10])  # whole in chunk 0: grade 2 there
    a2 = AnswerSpan("d1", 25, 40, TEXT[25:40])  # split over chunks 0 and 1: grade 1 each
    q = Question("a", "?", (a1,), any_of=(a1, a2))
    rows = scoring.grade_rankings([[("d1", 30, 70, 1.0, 1), ("d1", 0, 30, 0.5, 1)]], [q])
    assert [it.grade for it in rows[0]] == [1, 2]
    cfg = Config(ks=(2,), depth=4, ideal="index")
    out = scoring.score_system(rows, [q], cfg, index_items=chunks)
    # ideal [2, 1] (chunk 0's best is 2, chunk 1's is 1), not [2, 1, 1]
    dcg = 1 / math.log2(2) + 3 / math.log2(3)
    idcg = 3 / math.log2(2) + 1 / math.log2(3)
    assert out["ndcg@2"].tolist() == pytest.approx([dcg / idcg])
    # a document key under the index ideal: each chunk of a relevant document
    dq = Question("d", "?", (), qrels=(("d1", 1),))
    drows = scoring.grade_rankings([[("d1", 0, 30, 1.0, 1)]], [dq])
    dout = scoring.score_system(
        drows, [dq], Config(ks=(1, 3), depth=4, ideal="index"), index_items=chunks
    )
    assert dout["ndcg@3"].tolist() == pytest.approx([1 / (1 + 1 / math.log2(3) + 0.5)])


def test_a_capped_system_is_scored_at_its_item_count_under_the_asked_names():
    rows = scoring.grade_rankings([FOUND], [QRELS])
    cfg = Config(ks=(1, 2), depth=4)
    full = scoring.score_system(rows, [QRELS], cfg, doc_lengths=LENGTHS)
    capped = scoring.score_system(rows, [QRELS], cfg, k_cap=1, doc_lengths=LENGTHS)
    assert list(capped) == list(full)
    for name in full:
        if name.endswith("@2"):
            assert capped[name].tolist() == full[name.replace("@2", "@1")].tolist(), name
        else:
            assert capped[name].tolist() == full[name].tolist(), name
    assert capped["recall@2"].tolist() == [0.5]
    same = scoring.score_system(rows, [QRELS], cfg, k_cap=2, doc_lengths=LENGTHS)
    assert {k: v.tolist() for k, v in same.items()} == {k: v.tolist() for k, v in full.items()}

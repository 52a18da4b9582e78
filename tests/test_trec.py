"""TREC export: files round-trip, and trec_eval (pytrec_eval) agrees with ragmeter."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import require
from hypothesis import given, settings
from hypothesis import strategies as st

from ragmeter.errors import InputError
from ragmeter.retrieval.base import Ranking
from ragmeter.retrieval.bm25 import BM25Retriever
from ragmeter.retrieval.trec import (
    ranking_to_run,
    read_qrels,
    read_run,
    write_qrels,
    write_run,
)

PYTREC_HINT = "pip install pytrec-eval-terrier"

VOCAB = (
    "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november "
    "oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu amber "
    "basalt cobalt dune ember fjord glacier harbor island jungle kelp lagoon mesa nebula"
).split()


def make_collection(seed: int = 3, n_docs: int = 40, n_questions: int = 25):
    """Random documents; each question shares words with 1-3 'relevant' documents."""
    rng = np.random.default_rng(seed)
    docs = {
        f"doc{i:02d}": " ".join(rng.choice(VOCAB, size=int(rng.integers(20, 60))))
        for i in range(n_docs)
    }
    doc_ids = list(docs)
    questions, qrels = {}, {}
    for q in range(n_questions):
        rel = rng.choice(doc_ids, size=int(rng.integers(1, 4)), replace=False).tolist()
        words = []
        for d in rel:
            words += rng.choice(docs[d].split(), size=3).tolist()
        words += rng.choice(VOCAB, size=2).tolist()  # noise
        questions[f"q{q:02d}"] = " ".join(words)
        qrels[f"q{q:02d}"] = {d: 1 for d in rel}
    return docs, questions, qrels


def direct_metrics(ranked: list[str], relevant: set[str]) -> dict[str, float]:
    """recall@5 (any relevant in top 5), P@5, MRR, nDCG@10 with linear gains."""
    rels = [1 if d in relevant else 0 for d in ranked]
    first = next((i for i, r in enumerate(rels) if r), None)
    dcg = sum(r / math.log2(i + 2) for i, r in enumerate(rels[:10]))
    idcg = sum(1 / math.log2(i + 2) for i in range(min(len(relevant), 10)))
    return {
        "success_5": float(any(rels[:5])),
        "P_5": sum(rels[:5]) / 5,
        "recip_rank": 0.0 if first is None else 1 / (first + 1),
        "ndcg_cut_10": dcg / idcg,
    }


def test_bm25_document_run_scores_like_trec_eval(tmp_path):
    pytrec_eval = require("pytrec_eval", PYTREC_HINT)
    docs, questions, qrels = make_collection()
    doc_ids = list(docs)
    bm25 = BM25Retriever()
    bm25.index([docs[d] for d in doc_ids])
    qids = list(questions)
    ranking = bm25.rank([questions[q] for q in qids], 20)
    run = ranking_to_run(ranking, qids, doc_ids)

    write_qrels(tmp_path / "qrels.txt", qrels)
    # scores="rank": tied BM25 scores keep ragmeter's order in every tool.
    write_run(tmp_path / "run.txt", run, tag="bm25", scores="rank")
    qrels_back = read_qrels(tmp_path / "qrels.txt")
    run_back = read_run(tmp_path / "run.txt")
    assert qrels_back == qrels
    assert {q: [d for d, _ in rows] for q, rows in run_back.items()} == {
        q: [d for d, _ in rows] for q, rows in run.items()
    }

    measures = {"recip_rank", "ndcg_cut.10", "success.5", "P.5"}
    evaluator = pytrec_eval.RelevanceEvaluator(qrels_back, measures)
    trec = evaluator.evaluate({q: {d: s for d, s in rows} for q, rows in run_back.items()})
    assert set(trec) == set(qids)

    for q in qids:
        mine = direct_metrics([d for d, _ in run[q]], set(qrels[q]))
        for name, value in mine.items():
            assert trec[q][name] == pytest.approx(value, abs=1e-9), (q, name)

    # The metrics are not all trivial on this collection.
    for name in ("success_5", "recip_rank", "ndcg_cut_10"):
        values = [trec[q][name] for q in qids]
        assert 0 < np.mean(values) < 1, name

    # ragmeter's own metrics module on the same ranking, binary grades.
    from ragmeter.scoring.metrics import score_questions

    grades = np.array([[1 if d in qrels[q] else 0 for d, _ in run[q]] for q in qids])
    ideal = [np.ones(len(qrels[q]), dtype=np.int64) for q in qids]
    ours = score_questions(grades, None, ks=[5, 10, 20], ideal=ideal, relevant_grade=1)
    for i, q in enumerate(qids):
        assert ours["recall@5"][i] == pytest.approx(trec[q]["success_5"])
        assert ours["precision@5"][i] == pytest.approx(trec[q]["P_5"])
        assert ours["mrr@20"][i] == pytest.approx(trec[q]["recip_rank"])
        assert ours["ndcg@10"][i] == pytest.approx(trec[q]["ndcg_cut_10"])


def test_given_scores_round_trip_exactly(tmp_path):
    run = {"q1": [("d1", 12.345678901234567), ("d2", 3.0), ("d3", -0.5)], "q2": [("d9", 1e-300)]}
    write_run(tmp_path / "r.txt", run)
    assert read_run(tmp_path / "r.txt") == run
    lines = (tmp_path / "r.txt").read_text().splitlines()
    assert lines[0] == "q1 Q0 d1 1 12.345678901234567 ragmeter"
    assert lines[2].split()[3] == "3"


def test_rank_scores_preserve_order_under_ties(tmp_path):
    pytrec_eval = require("pytrec_eval", PYTREC_HINT)
    run = {"q": [("b", 1.0), ("a", 1.0), ("c", 1.0)]}
    write_run(tmp_path / "r.txt", run, scores="rank")
    assert [d for d, _ in read_run(tmp_path / "r.txt")["q"]] == ["b", "a", "c"]
    evaluator = pytrec_eval.RelevanceEvaluator({"q": {"b": 1}}, {"recip_rank"})
    res = evaluator.evaluate({"q": dict(read_run(tmp_path / "r.txt")["q"])})
    assert res["q"]["recip_rank"] == 1.0


def test_ranking_to_run_dedupes_chunks_into_documents():
    ranking = Ranking(
        ids=np.array([[2, 0, 1, 3, -1]]), scores=np.array([[9.0, 8.0, 7.0, 6.0, -np.inf]])
    )
    chunk_doc = ["a", "b", "a", "c"]  # chunk index -> document id
    assert ranking_to_run(ranking, ["q"], chunk_doc) == {"q": [("a", 9.0), ("b", 7.0), ("c", 6.0)]}
    assert len(ranking_to_run(ranking, ["q"], chunk_doc, dedupe=False)["q"]) == 4


def test_reading_ties_uses_rank_then_file_order(tmp_path):
    path = tmp_path / "r.txt"
    path.write_text("q Q0 x 2 5.0 t\nq Q0 y 1 5.0 t\nq Q0 z 3 7.0 t\n")
    assert [d for d, _ in read_run(path)["q"]] == ["z", "y", "x"]


@pytest.mark.parametrize(
    ("content", "line", "message"),
    [
        ("q Q0 d 1 1.0 t\nq Q0 d2 2 1.0\n", 2, "6 fields"),
        ("q Q0 d 1 1.0 t\n\nq Q0 e x 1.0 t\n", 3, "rank"),
        ("q Q0 d 1 abc t\n", 1, "score"),
        ("q Q0 d 1 nan t\n", 1, "finite"),
        ("q Q0 d 1 1.0 t\nq Q0 d 2 0.5 t\n", 2, "already listed"),
        (b"q Q0 a 1 2.0 t\nq Q0 \xff 2 1.0 t\n", 2, "not valid UTF-8 .*re-save the run file"),
        (b"\xfeq Q0 a 1 2.0 t\n", 1, "not valid UTF-8"),
        ("q Q0 a 1 2.0 t\nq Q0 b 2 high t\n", 2, "score 'high' is not a number"),
        ("q Q0 a 1 2.0 t\nq Q0 b 2 inf t\n", 2, "score 'inf' is not a finite number"),
        ("q Q0 a 1 2.0 t\r\nq Q0 b 2.5 1.0 t\r\n", 2, "rank '2.5' is not an integer"),
        ("q Q0 a 1 2.0 t\rq Q0 b 2 1.0\r", 2, "expected 6 fields"),
    ],
)
def test_bad_run_lines_name_file_and_line(tmp_path, content, line, message):
    path = tmp_path / "bad.run"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(InputError, match=rf"bad\.run:{line}: .*{message}"):
        read_run(path)


def test_bad_qrels_and_unwritable_ids(tmp_path):
    path = tmp_path / "q.txt"
    path.write_text("q 0 d 1\nq 0 e high\n")
    with pytest.raises(InputError, match=r"q\.txt:2: grade"):
        read_qrels(path)
    with pytest.raises(InputError, match="whitespace"):
        write_run(tmp_path / "r.txt", {"q": [("doc with space", 1.0)]})
    with pytest.raises(InputError, match="integer"):
        write_qrels(tmp_path / "q2.txt", {"q": {"d": 0.5}})
    with pytest.raises(InputError, match="twice"):
        write_run(tmp_path / "r.txt", {"q": [("d", 2.0), ("d", 1.0)]})


def test_run_lines_with_more_than_six_fields_are_read(tmp_path):
    # trec_eval ignores fields after the sixth; so does read_run.
    path = tmp_path / "r.txt"
    path.write_text("q Q0 x 1 5.0 t extra 1\nq Q0 y 2 4.0 t\n")
    assert read_run(path) == {"q": [("x", 5.0), ("y", 4.0)]}


# --- one reader: the run and qrels files go through ragmeter.scoring.trec -------------------------


def test_an_empty_run_file_is_an_error(tmp_path):
    path = tmp_path / "empty.run"
    path.write_text("\n  \n")
    with pytest.raises(InputError, match=r"empty\.run: no lines; the run file is empty"):
        read_run(path)


@pytest.mark.parametrize("end", ["\n", "\r\n", "\r"])
def test_run_and_qrels_read_alike_whatever_the_line_ends(tmp_path, end):
    run_text = end.join(["q1 Q0 a 1 2.0 t", "q1 Q0 b 2 3.0 t", "q2 Q0 c 1 1.0 t"]) + end
    (tmp_path / "r.txt").write_bytes(run_text.encode())
    assert read_run(tmp_path / "r.txt") == {"q1": [("b", 3.0), ("a", 2.0)], "q2": [("c", 1.0)]}
    qrels_text = end.join(["q1 0 a 1", "q1 0 b 2", "q2 0 c 0"]) + end
    (tmp_path / "q.txt").write_bytes(qrels_text.encode())
    assert read_qrels(tmp_path / "q.txt") == {"q1": {"a": 1, "b": 2}, "q2": {"c": 0}}


def test_gzipped_run_files_are_read(tmp_path):
    import gzip

    with gzip.open(tmp_path / "r.txt.gz", "wt") as fh:
        fh.write("q Q0 a 1 2.0 t\nq Q0 b 2 3.0 t\n")
    assert read_run(tmp_path / "r.txt.gz") == {"q": [("b", 3.0), ("a", 2.0)]}


def test_bad_qrels_bytes_name_file_and_line(tmp_path):
    path = tmp_path / "q.txt"
    path.write_bytes(b"q 0 a 1\nq 0 \xfe 2\n")
    with pytest.raises(InputError, match=r"q\.txt:2: not valid UTF-8 .*qrels file"):
        read_qrels(path)
    path.write_text("q 0 a 1\nq 0 b 1 x\n")
    with pytest.raises(InputError, match=r"q\.txt:2: expected 4 fields"):
        read_qrels(path)
    path.write_text("q 0 a 1\nq 0 a 2\n")  # given twice: the last judgment counts
    assert read_qrels(path) == {"q": {"a": 2}}


_ids = st.text(alphabet="abcdéü_-.:/0123456789", min_size=1, max_size=6)


@settings(max_examples=60, deadline=None)
@given(
    st.dictionaries(
        _ids,
        st.lists(
            st.tuples(_ids, st.sampled_from([1.0, 0.5, -2.25, 3.0, 1e-300, 123456.789])),
            min_size=1,
            max_size=6,
            unique_by=lambda t: t[0],
        ),
        min_size=1,
        max_size=5,
    ),
    st.sampled_from(["given", "rank"]),
)
def test_what_write_run_writes_read_run_reads_back_in_ragmeter_order(run, scores):
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "r.txt"
        write_run(path, run, scores=scores)
        back = read_run(path)
    assert list(back) == list(run)  # questions in file order
    for qid, items in run.items():
        # highest score first; equal scores keep the written (rank) order
        order = sorted(range(len(items)), key=lambda i: -items[i][1])
        expected = [items[i] for i in order] if scores == "given" else items
        assert [d for d, _ in back[qid]] == [d for d, _ in expected]
        if scores == "given":
            assert back[qid] == expected


# ``ragmeter.retrieval.trec``: run files written with rank scores (``n - rank + 1``, so every
# tool that sorts by score keeps the list order).


def test_rank_scores_count_down_to_one(tmp_path):
    path = tmp_path / "r.trec"
    write_run(path, {"q1": [("a", 0.5), ("b", 0.5), ("c", 0.1)], "q2": [("d", 9.0)]}, "t", "rank")
    assert path.read_text().splitlines() == [
        "q1 Q0 a 1 3.0 t",
        "q1 Q0 b 2 2.0 t",
        "q1 Q0 c 3 1.0 t",
        "q2 Q0 d 1 1.0 t",
    ]
    write_run(path, {"q1": [("a", 0.5), ("b", 0.25)]})
    assert path.read_text().splitlines() == ["q1 Q0 a 1 0.5 ragmeter", "q1 Q0 b 2 0.25 ragmeter"]

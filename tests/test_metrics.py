"""Per-question metrics: hand-computed cases, the reference transcriptions, and
cross-checks against trec_eval (pytrec_eval), ir_measures and ranx."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from conftest import require
from hypothesis import given, settings
from hypothesis import strategies as st

from ragmeter.errors import InputError
from ragmeter.scoring.grading import coverage_curve, grade_ranking, ideal_grades
from ragmeter.scoring.metrics import (
    DEFAULT_KS,
    METRIC_NAMES,
    NEEDS_K,
    NO_K,
    Metric,
    check_ks,
    find_metric,
    metric_names,
    mrr_at_k,
    ndcg_at_k,
    precision_at_k,
    recall_at_k,
    score_questions,
)

L2, L3, L6 = math.log2(3), 2.0, math.log2(6)  # discounts log2(i + 2) at 0-based i = 1, 2, 4


def _one(grades, words=None, **kw):
    """Scores of a single question, as plain floats."""
    out = score_questions(np.array([grades]), None if words is None else np.array([words]), **kw)
    return {name: float(v[0]) for name, v in out.items()}


# ---------------------------------------------------------------------------
# hand-computed cases

# Ranks 1..5 hold grades 0, 1, 2, 0, 2 and 100, 50, 80, 20, 30 words.
ROW = [0, 1, 2, 0, 2]
WORDS = [100, 50, 80, 20, 30]


def test_binary_metrics_whole_passage():
    s = _one(ROW, WORDS)
    # relevant (grade >= 2) at ranks 3 and 5
    assert [s[f"recall@{k}"] for k in DEFAULT_KS] == [0.0, 1.0, 1.0, 1.0]
    # 0/1, 1/3, 2/5, and 2/10: precision divides by k though only 5 were returned
    assert [s[f"precision@{k}"] for k in DEFAULT_KS] == [0.0, 1 / 3, 2 / 5, 2 / 10]
    # first relevant rank is 3
    assert [s[f"mrr@{k}"] for k in DEFAULT_KS] == [0.0, 1 / 3, 1 / 3, 1 / 3]
    # 100; 100 + 50 + 80 = 230; + 20 + 30 = 280; no more items after rank 5
    assert [s[f"words@{k}"] for k in DEFAULT_KS] == [100.0, 230.0, 280.0, 280.0]


def test_binary_metrics_lenient():
    s = _one(ROW, WORDS, relevant_grade=1)
    # relevant (grade >= 1) at ranks 2, 3 and 5
    assert [s[f"recall@{k}"] for k in DEFAULT_KS] == [0.0, 1.0, 1.0, 1.0]
    assert [s[f"precision@{k}"] for k in DEFAULT_KS] == [0.0, 2 / 3, 3 / 5, 3 / 10]
    assert [s[f"mrr@{k}"] for k in DEFAULT_KS] == [0.0, 1 / 2, 1 / 2, 1 / 2]


def test_ndcg_hand_computed():
    s = _one(ROW)
    # gains 2**g - 1: 0, 1, 3, 0, 3; discounts log2(2..6) = 1, log2 3, 2, log2 5, log2 6
    dcg3 = 0 + 1 / L2 + 3 / L3
    dcg5 = dcg3 + 0 + 3 / L6
    # ideal = the returned grades sorted: 2, 2, 1, 0, 0 -> gains 3, 3, 1, 0, 0
    idcg3 = 3 + 3 / L2 + 1 / L3
    assert s["ndcg@1"] == 0.0  # rank 1 has grade 0
    assert s["ndcg@3"] == pytest.approx(dcg3 / idcg3, abs=1e-15)  # 0.39514...
    assert s["ndcg@5"] == pytest.approx(dcg5 / idcg3, abs=1e-15)  # 0.61035...
    assert s["ndcg@10"] == s["ndcg@5"]


def test_ndcg_ideal_is_the_whole_returned_list():
    # Grades 1, 2. At k = 1 the ideal is the best order of *all* returned items
    # (2 first: gain 3), not of the top 1 alone (which would give 1 / 1 = 1).
    s = _one([1, 2])
    assert s["ndcg@1"] == pytest.approx(1 / 3, abs=1e-15)
    assert ndcg_at_k([1, 2], 1) == pytest.approx(1 / 3, abs=1e-15)


def test_ndcg_ideal_over_the_index():
    # Returned: grades 1, 0, 0. The index also holds a grade-2 and another grade-1
    # item: ideal 2, 1, 1 -> gains 3, 1, 1.
    g = np.array([[1, 0, 0]])
    idx = score_questions(g, None, ks=[1, 3], ideal=[np.array([2, 1, 1], dtype=np.int8)])
    own = score_questions(g, None, ks=[1, 3])
    assert idx["ndcg@1"][0] == pytest.approx(1 / 3, abs=1e-15)  # 1 / 3
    assert idx["ndcg@3"][0] == pytest.approx(1 / (3 + 1 / L2 + 1 / L3), abs=1e-15)
    assert own["ndcg@3"][0] == 1.0  # best order of what came back: already best
    # An empty ideal (nothing in the index shares the answer): 0, not a division by 0.
    assert score_questions(g * 0, None, ks=[3], ideal=[[]])["ndcg@3"][0] == 0.0


def test_padding_counts_as_zero_and_is_ignored_for_words():
    # Only one item came back; ranks 2 and 3 are padding (-1) with junk words.
    s = _one([2, -1, -1], [10, 99, 99], ks=[1, 3])
    assert s == {
        "recall@1": 1.0,
        "recall@3": 1.0,
        "hit@1": 1.0,
        "hit@3": 1.0,
        "precision@1": 1.0,
        "precision@3": 1 / 3,  # one relevant item, divided by k = 3
        "mrr@1": 1.0,
        "mrr@3": 1.0,
        "ndcg@1": 1.0,
        "ndcg@3": 1.0,
        "map@1": 1.0,
        "map@3": 1.0,
        "map": 1.0,
        "rprec": 1.0,
        "words@1": 10.0,
        "words@3": 10.0,  # the padded ranks add nothing
    }
    empty = _one([-1, -1, -1], [0, 0, 0], ks=[3])
    assert all(v == 0.0 for v in empty.values())


def test_coverage_passes_through_in_cutoff_order():
    # Answer [10, 30) in d (20 chars). Items: [0, 12) covers 2; [25, 40) covers 5.
    items = [("d", 0, 12), ("d", 25, 40)]
    spans = [("d", 10, 30)]
    ks = [1, 3]
    cov = np.stack([coverage_curve(items, spans, ks)])
    s = score_questions(np.array([grade_ranking(items, spans)]), None, ks=ks, coverage=cov)
    assert s["coverage@1"][0] == 2 / 20
    assert s["coverage@3"][0] == 7 / 20  # both items, nothing at rank 3


def test_output_is_per_question_float64_in_name_order():
    g = np.array([[2, 0], [0, 1], [1, 1]])
    out = score_questions(g, np.ones_like(g), coverage=np.zeros((3, 4)))
    assert list(out) == metric_names()
    for v in out.values():
        assert v.dtype == np.float64 and v.shape == (3,)
    assert out["recall@1"].tolist() == [1.0, 0.0, 0.0]
    assert list(score_questions(g, None)) == metric_names(coverage=False, words=False)


# ---------------------------------------------------------------------------
# the seed's points about when each measure misleads


@st.composite
def chunked_collection(draw):
    """Documents cut into non-overlapping chunks, and one question per draw."""
    n_docs = draw(st.integers(1, 4))
    chunks = []
    for d in range(n_docs):
        length = draw(st.integers(20, 300))
        cuts = sorted(draw(st.sets(st.integers(1, length - 1), max_size=12)))
        edges = [0, *cuts, length]
        chunks += [(f"doc{d}", a, b) for a, b in zip(edges, edges[1:], strict=False)]
    ranking = draw(st.permutations(chunks))[:10]
    questions = []
    for _ in range(draw(st.integers(1, 5))):
        doc, a, b = draw(st.sampled_from(chunks))
        start = draw(st.integers(0, 280))
        questions.append([(doc, start, start + draw(st.integers(1, 40)))])
    return chunks, ranking, questions


@settings(max_examples=200, deadline=None)
@given(data=chunked_collection())
def test_precision_at_5_cannot_pass_one_fifth_with_one_passage(data):
    # Chunks do not overlap, so at most one can hold the whole (non-empty) passage:
    # at most one relevant item per list, precision@k <= 1 / k.
    _, ranking, questions = data
    grades = np.stack([grade_ranking(ranking, q) for q in questions])
    s = score_questions(grades, None)
    assert np.all(s["precision@5"] <= 0.2)
    for k in DEFAULT_KS:
        assert np.all(s[f"precision@{k}"] <= 1 / k)
    assert np.all((grades == 2).sum(axis=1) <= 1)


def test_precision_ceiling_reached_and_lenient_reading_passes_it():
    # Doc d cut at 100: the passage [90, 110) sits across the cut in one question,
    # inside [0, 100) in the other.
    ranking = [("d", 0, 100), ("d", 100, 200), ("e", 0, 100), ("e", 100, 200), ("f", 0, 50)]
    grades = np.stack(
        [grade_ranking(ranking, [("d", 90, 110)]), grade_ranking(ranking, [("d", 10, 20)])]
    )
    assert grades.tolist() == [[1, 1, 0, 0, 0], [2, 0, 0, 0, 0]]
    assert score_questions(grades, None)["precision@5"].tolist() == [0.0, 0.2]  # 0/5, 1/5
    # Counting halves as relevant: the split passage scores 2/5 = 0.4 > 0.2.
    lenient = score_questions(grades, None, relevant_grade=1)
    assert lenient["precision@5"].tolist() == [0.4, 0.2]


@st.composite
def small_collection(draw):
    n_docs = draw(st.integers(1, 10))
    lengths = [draw(st.integers(5, 500)) for _ in range(n_docs)]
    whole = [(f"post{d}", 0, n) for d, n in enumerate(lengths)]
    questions = []
    for _ in range(draw(st.integers(1, 8))):
        d = draw(st.integers(0, n_docs - 1))
        key = []
        for _ in range(draw(st.integers(1, 5))):  # up to 5 spans, all in one post
            a = draw(st.integers(0, lengths[d] - 1))
            key.append((f"post{d}", a, draw(st.integers(a + 1, lengths[d]))))
        questions.append(key)
    return whole, draw(st.permutations(whole)), questions


@settings(max_examples=100, deadline=None)
@given(data=small_collection())
def test_recall_at_10_of_whole_documents_is_one_on_ten_or_fewer(data):
    # Ten results from at most ten whole posts return every post, so the post that
    # holds each answer is always there, wholly: recall@10 = 1.0 whatever the order.
    _, ranking, questions = data
    grades = np.stack([grade_ranking(ranking[:10], q) for q in questions])
    s = score_questions(grades, None)
    assert np.all(s["recall@10"] == 1.0)


def test_ndcg_gives_credit_for_halves():
    # d is cut into [0, 200) and [200, 400); the passage [150, 250) falls across
    # the cut. Both halves come back, after an unrelated chunk.
    chunks = [("d", 0, 200), ("d", 200, 400), ("e", 0, 200), ("e", 200, 400)]
    ranking = [("e", 0, 200), ("d", 200, 400), ("d", 0, 200), ("e", 200, 400)]
    key = [("d", 150, 250)]
    grades = np.array([grade_ranking(ranking, key)])
    assert grades.tolist() == [[0, 1, 1, 0]]
    cov = np.array([coverage_curve(ranking, key, DEFAULT_KS)])
    s = score_questions(grades, None, coverage=cov)
    # No chunk holds the whole passage: recall@k is 0 at every k.
    assert all(s[f"recall@{k}"][0] == 0.0 for k in DEFAULT_KS)
    # nDCG@3 = (0 + 1/log2 3 + 1/2) / (1 + 1/log2 3 + 0) = 1.1309 / 1.6309 = 0.6934
    assert s["ndcg@3"][0] == pytest.approx((1 / L2 + 1 / L3) / (1 + 1 / L2), abs=1e-15)
    assert s["ndcg@3"][0] > 0.69
    # The same with the ideal over the index: only the two halves share the passage.
    ideal = [ideal_grades(chunks, key)]
    assert ideal[0].tolist() == [1, 1]
    assert score_questions(grades, None, ideal=ideal)["ndcg@3"][0] == s["ndcg@3"][0]
    # Coverage sees the halves too: 50 + 50 of 100 characters by rank 3.
    assert s["coverage@1"][0] == 0.0 and s["coverage@3"][0] == 1.0


# ---------------------------------------------------------------------------
# vectorised == scalar transcriptions


@st.composite
def graded_runs(draw):
    n = draw(st.integers(1, 15))
    depth = draw(st.integers(0, 12))
    cells = st.integers(-1, 2)
    grades = np.array(
        [[draw(cells) for _ in range(depth)] for _ in range(n)], dtype=np.int64
    ).reshape(n, depth)
    words = np.array(
        [[draw(st.integers(0, 400)) for _ in range(depth)] for _ in range(n)], dtype=np.int64
    ).reshape(n, depth)
    ks = draw(st.lists(st.integers(1, 15), min_size=1, max_size=5, unique=True))
    ideals = [
        np.array(draw(st.lists(st.integers(1, 2), max_size=14)), dtype=np.int8) for _ in range(n)
    ]
    return grades, words, ks, ideals, draw(st.sampled_from([1, 2]))


@settings(max_examples=120, deadline=None)
@given(run=graded_runs())
def test_vectorised_equals_scalar_transcriptions(run):
    grades, words, ks, ideals, level = run
    s = score_questions(grades, words, ks=ks, relevant_grade=level)
    si = score_questions(grades, None, ks=ks, ideal=ideals, relevant_grade=level)
    for q, row in enumerate(grades):
        g = np.maximum(row, 0).tolist()  # padding is grade 0
        rel = [int(x >= level) for x in g]  # relevant items for the binary measures
        for k in ks:
            assert s[f"recall@{k}"][q] == recall_at_k(rel, k)
            assert s[f"precision@{k}"][q] == pytest.approx(precision_at_k(rel, k), abs=1e-15)
            assert s[f"mrr@{k}"][q] == pytest.approx(mrr_at_k(rel, k), abs=1e-15)
            assert s[f"ndcg@{k}"][q] == pytest.approx(ndcg_at_k(g, k), abs=1e-12)
            assert si[f"ndcg@{k}"][q] == pytest.approx(
                ndcg_at_k(g, k, ideal=ideals[q].tolist()), abs=1e-12
            )
            assert s[f"words@{k}"][q] == sum(
                w for w, x in zip(words[q][:k], row[:k], strict=True) if x >= 0
            )


@settings(max_examples=60, deadline=None)
@given(run=graded_runs())
def test_padding_at_the_tail_equals_a_shorter_list(run):
    # A question with m returned items, padded with -1 to the depth, scores as
    # the seed would score the m-item list.
    grades, _, ks, _, level = run
    for row in grades:
        m = int(np.argmax(row < 0)) if np.any(row < 0) else row.size
        padded = row.copy()
        padded[m:] = -1
        s = score_questions(padded[None, :], None, ks=ks, relevant_grade=level)
        short = padded[:m].tolist()
        rel = [int(x >= level) for x in short]
        for k in ks:
            assert s[f"precision@{k}"][0] == pytest.approx(precision_at_k(rel, k), abs=1e-15)
            assert s[f"ndcg@{k}"][0] == pytest.approx(ndcg_at_k(short, k), abs=1e-12)


def test_scalar_transcriptions_hand_computed():
    assert recall_at_k([0, 0, 1], 2) == 0.0 and recall_at_k([0, 0, 1], 3) == 1.0
    assert precision_at_k([1, 0], 5) == 1 / 5  # divides by k, not by the list length
    assert mrr_at_k([0, 0, 3], 3) == 1 / 3 and mrr_at_k([0, 0, 3], 2) == 0.0
    assert ndcg_at_k([0, 0], 5) == 0.0  # best == 0 -> 0
    # relevance 2 at rank 2 only: 3 / log2 3 over ideal 3 / 1
    assert ndcg_at_k([0, 2], 2) == pytest.approx(1 / L2, abs=1e-15)
    with pytest.raises(InputError):
        precision_at_k([1], 0)


# ---------------------------------------------------------------------------
# cross-checks against independent implementations

N_Q, DEPTH, CUTS = 200, 10, (1, 3, 5, 10)


def _random_run(seed: int, levels=(0, 1, 2), p=(0.6, 0.25, 0.15)):
    """Graded run of 200 questions x 10 ranks, distinct scores 10, 9, ..., 1, and
    0 to 3 more graded items per question that the index holds but the run missed."""
    rng = np.random.default_rng(seed)
    grades = rng.choice(levels, size=(N_Q, DEPTH), p=p).astype(np.int64)
    run, returned, index = {}, {}, {}
    for q in range(N_Q):
        qid = f"q{q:03d}"
        docs = [f"{qid}_r{r}" for r in range(DEPTH)]
        run[qid] = {d: float(DEPTH - r) for r, d in enumerate(docs)}
        returned[qid] = {d: int(g) for d, g in zip(docs, grades[q], strict=True)}
        extra = {f"{qid}_x{j}": int(rng.choice(levels[1:])) for j in range(rng.integers(0, 4))}
        index[qid] = {**returned[qid], **extra}
    ideal = [np.array([g for g in index[f"q{q:03d}"].values() if g > 0]) for q in range(N_Q)]
    return grades, run, returned, index, ideal


def _column(results: dict, measure: str) -> np.ndarray:
    return np.array([results[f"q{q:03d}"][measure] for q in range(N_Q)])


def _exp_gain(qrels: dict) -> dict:
    """Grade g -> 2**g - 1 (0, 1, 3): trec_eval's linear gain on these labels is
    exactly our exponential gain on the grades."""
    return {q: {d: 2**g - 1 for d, g in docs.items()} for q, docs in qrels.items()}


@pytest.mark.parametrize("qrels_kind", ["returned", "index"])
def test_ndcg_matches_trec_eval(qrels_kind):
    # trec_eval's ndcg_cut_k: gain = the qrels label (linear), discount log2(i + 2),
    # ideal = all qrels labels sorted, cut at k. Two alignments make it ours:
    # * labels mapped g -> 2**g - 1, so its linear gain is our 2**g - 1;
    # * qrels holding only the returned items give the seed's ideal (best order of
    #   the returned list); qrels holding the extra unreturned items too give
    #   ideal="index" (the ideal grades over every graded item).
    pytrec_eval = require("pytrec_eval", "pip install pytrec-eval-terrier")
    grades, run, returned, index, ideal = _random_run(1)
    qrels = returned if qrels_kind == "returned" else index
    ev = pytrec_eval.RelevanceEvaluator(_exp_gain(qrels), {"ndcg_cut.1,3,5,10"})
    res = ev.evaluate(run)
    ours = score_questions(grades, None, ideal=None if qrels_kind == "returned" else ideal)
    for k in CUTS:
        np.testing.assert_allclose(ours[f"ndcg@{k}"], _column(res, f"ndcg_cut_{k}"), atol=1e-9)
    assert 0 < ours["ndcg@10"].mean() < 1  # the run is neither all-perfect nor all-zero


def test_ndcg_matches_trec_eval_on_binary_runs_without_mapping():
    # With grades 0/1 only, 2**g - 1 == g, so trec_eval's linear gain needs no mapping.
    pytrec_eval = require("pytrec_eval", "pip install pytrec-eval-terrier")
    grades, run, _, index, ideal = _random_run(2, levels=(0, 1), p=(0.7, 0.3))
    res = pytrec_eval.RelevanceEvaluator(index, {"ndcg_cut.1,3,5,10"}).evaluate(run)
    ours = score_questions(grades, None, ideal=ideal)
    for k in CUTS:
        np.testing.assert_allclose(ours[f"ndcg@{k}"], _column(res, f"ndcg_cut_{k}"), atol=1e-9)


@pytest.mark.parametrize("level", [1, 2])
def test_binary_metrics_match_trec_eval(level):
    # relevance_level = the lowest label trec_eval counts as relevant; on the mapped
    # labels (0, 1, 3) grade >= 2 is label >= 3 and grade >= 1 is label >= 1.
    # P_k divides by k like precisionAtK; success_k is recallAtK; recip_rank has no
    # cutoff, so MRR@k is recip_rank when the first relevant rank 1/rr is <= k.
    pytrec_eval = require("pytrec_eval", "pip install pytrec-eval-terrier")
    grades, run, _, index, _ = _random_run(3)
    ev = pytrec_eval.RelevanceEvaluator(
        _exp_gain(index),
        {"P.1,3,5,10", "success.1,3,5,10", "recip_rank"},
        relevance_level=2**level - 1,
    )
    res = ev.evaluate(run)
    ours = score_questions(grades, None, relevant_grade=level)
    rr = _column(res, "recip_rank")
    for k in CUTS:
        np.testing.assert_allclose(ours[f"precision@{k}"], _column(res, f"P_{k}"), atol=1e-9)
        np.testing.assert_allclose(ours[f"recall@{k}"], _column(res, f"success_{k}"), atol=1e-9)
        rr_k = np.where(rr >= 1 / k - 1e-12, rr, 0.0)
        np.testing.assert_allclose(ours[f"mrr@{k}"], rr_k, atol=1e-9)
    assert 0 < ours["recall@10"].mean() < 1


def test_metrics_match_ir_measures():
    # ir_measures states the gain mapping itself (nDCG(gains=...)) and cuts RR at k.
    ir_measures = require("ir_measures", "pip install ir-measures")
    from ir_measures import RR, P, Success, nDCG

    grades, run, returned, index, ideal = _random_run(4)
    gains = {0: 0, 1: 1, 2: 3}
    ms = [m @ k for k in CUTS for m in (nDCG(gains=gains), P(rel=2), RR(rel=2), Success(rel=2))]
    got: dict[str, dict[str, float]] = {}
    for r in ir_measures.iter_calc(ms, index, run):
        got.setdefault(r.query_id, {})[str(r.measure)] = r.value
    ours = score_questions(grades, None, ideal=ideal)
    for k in CUTS:
        for ours_name, theirs in [
            ("ndcg", nDCG(gains=gains) @ k),
            ("precision", P(rel=2) @ k),
            ("mrr", RR(rel=2) @ k),
            ("recall", Success(rel=2) @ k),
        ]:
            np.testing.assert_allclose(
                ours[f"{ours_name}@{k}"], _column(got, str(theirs)), atol=1e-9
            )


def test_metrics_match_ranx():
    # ranx's ndcg_burges uses gain 2**r - 1 (ours) with the ideal over the qrels;
    # "-l2" sets the lowest relevant label to 2 for precision, hit rate and MRR.
    ranx = require("ranx", "pip install ranx")
    grades, run, returned, index, ideal = _random_run(5)
    ndcg_names = [f"ndcg_burges@{k}" for k in CUTS]
    binary_names = [f"{m}@{k}-l2" for k in CUTS for m in ("precision", "hit_rate", "mrr")]
    results = {}
    for kind, qrels, names in (
        ("returned", returned, ndcg_names),
        ("index", index, ndcg_names + binary_names),
    ):
        r = ranx.Run.from_dict(run)
        ranx.evaluate(ranx.Qrels.from_dict(qrels), r, names)
        results[kind] = {m: {q: float(v) for q, v in r.scores[m].items()} for m in names}
    own = score_questions(grades, None)
    idx = score_questions(grades, None, ideal=ideal)
    for k in CUTS:
        np.testing.assert_allclose(
            own[f"ndcg@{k}"], _column(_by_query(results["returned"]), f"ndcg_burges@{k}"), atol=1e-9
        )
        res = _by_query(results["index"])
        np.testing.assert_allclose(idx[f"ndcg@{k}"], _column(res, f"ndcg_burges@{k}"), atol=1e-9)
        np.testing.assert_allclose(idx[f"precision@{k}"], _column(res, f"precision@{k}-l2"))
        np.testing.assert_allclose(idx[f"recall@{k}"], _column(res, f"hit_rate@{k}-l2"))
        np.testing.assert_allclose(idx[f"mrr@{k}"], _column(res, f"mrr@{k}-l2"), atol=1e-9)


def _by_query(by_metric: dict) -> dict:
    out: dict[str, dict[str, float]] = {}
    for m, per_q in by_metric.items():
        for q, v in per_q.items():
            out.setdefault(q, {})[m] = v
    return out


# ---------------------------------------------------------------------------
# names


@pytest.mark.parametrize("name", [n for n in METRIC_NAMES if n not in NO_K])
@pytest.mark.parametrize("k", [1, 5, 10, 100])
def test_metric_name_round_trip(name, k):
    m = Metric(name, k)
    assert str(m) == f"{name}@{k}"
    assert Metric.parse(str(m)) == m


@pytest.mark.parametrize("name", [n for n in METRIC_NAMES if n not in NEEDS_K])
def test_whole_list_names_round_trip(name):
    m = Metric(name)
    assert str(m) == name and m.k is None
    assert Metric.parse(name) == m


@pytest.mark.parametrize(
    "trec, ours",
    [
        ("P_10", "precision@10"),
        ("recall_100", "recall@100"),
        ("success_5", "hit@5"),
        ("ndcg_cut_10", "ndcg@10"),
        ("map_cut_20", "map@20"),
        ("map", "map"),
        ("recip_rank", "mrr"),
        ("Rprec", "rprec"),
        ("ndcg", "ndcg"),
    ],
)
def test_trec_eval_names_parse_and_print(trec, ours):
    assert str(Metric.parse(trec)) == ours
    assert Metric.parse(ours).trec_name == trec


def trec_eval_names(ks=(1, 3, 5, 10)) -> list[str]:
    """Every trec_eval name ragmeter knows at the cutoffs ``ks``, read off the code's own
    table (:attr:`ragmeter.scoring.metrics.Metric.trec_name` of every measure), not hand-picked."""
    every = [Metric(f, k) for f in METRIC_NAMES if f not in NO_K for k in ks]
    every += [Metric(f) for f in METRIC_NAMES if f not in NEEDS_K]
    return [m.trec_name for m in every if m.trec_name]


def test_the_trec_eval_names_are_the_documented_ones():
    names = trec_eval_names((5,))
    assert sorted(names) == sorted(
        ["recall_5", "success_5", "P_5", "ndcg_cut_5", "map_cut_5", "map", "recip_rank",
         "ndcg", "Rprec"]
    )  # fmt: skip


@pytest.mark.parametrize("trec", trec_eval_names((1, 10)))
def test_every_trec_eval_name_parses_in_both_spellings_and_finds_its_twin(trec):
    m = Metric.parse(trec)
    assert m.trec_name == trec
    ours = str(m)
    if m.k is not None:  # trec_eval -m's spelling: P.10
        assert Metric.parse(trec[::-1].replace("_", ".", 1)[::-1]) == m
    # the one matcher of a name to a run's: either vocabulary finds the other
    assert find_metric(trec, ["words@5", ours]) == ours
    assert find_metric(ours, ["words@5", trec]) == trec
    assert find_metric(ours.upper(), [trec]) == trec


def test_find_metric_names_what_was_computed():
    with pytest.raises(InputError, match=r"metric 'P_3' was not computed.*; choose one of"):
        find_metric("P_3", ["P_5", "map"])
    with pytest.raises(InputError, match="unknown metric 'nope'"):
        find_metric("nope", ["P_5"])
    assert find_metric("P_5", ["P_5", "junk name", "precision@5"]) == "P_5"  # exact first


def test_metric_parse_is_forgiving_about_case_and_spaces():
    assert Metric.parse(" NDCG@10 ") == Metric("ndcg", 10)
    assert all(str(Metric.parse(n)) == n for n in metric_names())


@pytest.mark.parametrize(
    "text",
    [
        "rprec@10",
        "recall",
        "hit",
        "ndcg@",
        "ndcg@0",
        "P_x",
        "p_10",
        "ndcg@-1",
        "ndcg@x",
        "recall@3.5",
        "@5",
        "",
    ],
)
def test_metric_parse_rejects_unknown(text):
    with pytest.raises(InputError) as e:
        Metric.parse(text)
    msg = str(e.value)
    assert "\n" not in msg
    assert all(n in msg for n in METRIC_NAMES)


def test_metric_rejects_bad_fields():
    for name, k in [("rprec", 10), ("recall", None), ("ndcg", 0), ("ndcg", True), ("ndcg", 2.5)]:
        with pytest.raises(InputError):
            Metric(name, k)


# ---------------------------------------------------------------------------
# input errors


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"grades": np.zeros(3, dtype=int)}, "2-D"),
        ({"grades": np.full((2, 3), 0.5)}, "whole numbers"),
        ({"words": np.zeros((2, 4))}, "words"),
        ({"coverage": np.zeros((2, 3))}, "coverage"),
        ({"ideal": [[1]]}, "ideal"),
        ({"ks": [3, 3]}, "repeat"),
        ({"ks": [0]}, ">= 1"),
        ({"relevant_grade": 0}, "relevant_grade"),
    ],
)
def test_score_questions_rejects_bad_input(kwargs, fragment):
    args = {"grades": np.zeros((2, 3), dtype=int), "words": np.zeros((2, 3))} | kwargs
    with pytest.raises(InputError, match=fragment):
        score_questions(**args)


# ---------------------------------------------------------------------------
# nDCG stays within [0, 1] under every ideal, gain and key type

_DOCS = {"d1": 60, "d2": 40}


@st.composite
def _spans(draw, min_len: int = 1):
    doc = draw(st.sampled_from(sorted(_DOCS)))
    start = draw(st.integers(0, _DOCS[doc] - min_len))
    end = draw(st.integers(start + min_len, _DOCS[doc]))
    return doc, start, end


@st.composite
def _ndcg_case(draw):
    from ragmeter.chunking.types import Chunk
    from ragmeter.inputs.testset import AnswerSpan, Question

    index = draw(st.lists(_spans(), min_size=1, max_size=10))
    picked = draw(st.lists(st.integers(0, len(index) - 1), max_size=8))
    extra = draw(st.lists(_spans(), max_size=3))  # spans the index does not hold
    ranking = [index[i] for i in picked] + extra
    ranking = draw(st.permutations(ranking))[:8]
    kind = draw(st.sampled_from(["spans", "any_of", "qrels"]))
    keys = draw(st.lists(_spans(), min_size=1, max_size=3))
    answers = tuple(AnswerSpan(d, s, e, "x" * (e - s)) for d, s, e in keys)
    if kind == "spans":
        q = Question("q", "?", answers)
    elif kind == "any_of":
        q = Question("q", "?", answers[:1], any_of=answers)
    else:
        grades = draw(st.lists(st.integers(0, 3), min_size=2, max_size=2))
        q = Question("q", "?", (), qrels=tuple(zip(sorted(_DOCS), grades, strict=True)))
    chunks = [Chunk(d, s, e, "x" * (e - s)) for d, s, e in index]
    return q, chunks, [(d, s, e, 1.0, 1) for d, s, e in ranking]


@settings(max_examples=300, deadline=None)
@given(case=_ndcg_case())
@pytest.mark.parametrize("gain", ["exponential", "linear"])
@pytest.mark.parametrize("ideal", ["returned", "index", "judged"])
def test_ndcg_never_passes_one_under_any_ideal_gain_or_key(case, ideal, gain):
    from ragmeter.inputs.config import Config
    from ragmeter.runs import scoring

    q, chunks, found = case
    rows = scoring.grade_rankings([found], [q])
    cfg = Config(ks=(1, 3, 5, 10), depth=10, ideal=ideal, gain=gain)
    out = scoring.score_system(rows, [q], cfg, index_items=chunks, doc_lengths=_DOCS)
    for name, v in out.items():
        if name.startswith("ndcg"):
            assert 0.0 <= v[0] <= 1.0 + 1e-12, (name, v[0], [it.grade for it in rows[0]])


def test_an_answer_in_several_overlapping_items_earns_its_gain_once_under_the_judged_ideal():
    from ragmeter.inputs.config import Config
    from ragmeter.inputs.testset import AnswerSpan, Question
    from ragmeter.runs import scoring

    q = Question("q", "?", (AnswerSpan("d1", 10, 20, "x" * 10),))
    # three overlapping chunks each hold the whole passage; a partial one first
    found = [("d1", 15, 40, 1.0, 1), ("d1", 0, 30, 1.0, 1), ("d1", 5, 25, 1.0, 1)]
    rows = scoring.grade_rankings([found], [q])
    assert [it.grade for it in rows[0]] == [1, 2, 2]
    for gain, g1, g2 in (("exponential", 1.0, 3.0), ("linear", 1.0, 2.0)):
        cfg = Config(ks=(1, 3), depth=4, ideal="judged", gain=gain)
        out = scoring.score_system(rows, [q], cfg)
        assert out["ndcg@1"].tolist() == pytest.approx([g1 / g2])
        # the best of the passage's items: rank 2's whole passage, counted once
        assert out["ndcg@3"].tolist() == pytest.approx([max(g1, g2 / L2) / g2])


def test_the_index_ideal_counts_a_returned_item_the_index_does_not_hold():
    from ragmeter.chunking.types import Chunk
    from ragmeter.inputs.config import Config
    from ragmeter.inputs.testset import AnswerSpan, Question
    from ragmeter.runs import scoring

    q = Question("q", "?", (AnswerSpan("d1", 10, 20, "x" * 10),))
    index = [Chunk("d1", 0, 30, "x" * 30)]
    found = [("d1", 0, 30, 1.0, 1), ("d1", 5, 25, 1.0, 1)]  # the second: not in the index
    rows = scoring.grade_rankings([found], [q])
    out = scoring.score_system(rows, [q], Config(ks=(2,), depth=4, ideal="index"), index)
    assert out["ndcg@2"].tolist() == [1.0]  # ideal [2, 2]: both items hold the passage


# Metrics from grades (ragmeter.scoring.metrics): MAP per question, cutoff and shape checks.


def test_average_precision_is_computed_within_each_question():
    grades = np.array([[2, 2, 0], [0, 2, 0]])
    out = score_questions(grades, None, ks=[3], n_relevant=[2, 1], measures=["map"])
    # q0: (1/1 + 2/2) / 2; q1: (1/2) / 1 -- not counting q0's hits at q1's ranks
    assert out["map"].tolist() == pytest.approx([1.0, 0.5])


def test_cutoffs_and_found_are_checked():
    with pytest.raises(InputError, match="must be positive whole numbers"):
        check_ks([])
    with pytest.raises(InputError, match="must be positive whole numbers"):
        check_ks([0, 5])
    assert check_ks([1, 5]) == [1, 5]
    grades = np.array([[2, 0], [0, 2]])
    with pytest.raises(InputError, match="found must have the shape of grades"):
        score_questions(grades, None, ks=[1], n_relevant=[1, 1], found=np.zeros((2, 1)))


def test_ndcg_over_the_whole_list_and_with_nothing_to_find():
    import math

    grades = np.array([[0, 2], [0, 0]])
    out = score_questions(grades, None, ks=[2], measures=["ndcg"], ideal=[[2], []])
    assert out["ndcg"].tolist() == pytest.approx([(3 / math.log2(3)) / 3, 0.0])
    none = score_questions(grades, None, ks=[2], measures=["ndcg"], ideal=[[], []])
    assert none["ndcg"].tolist() == [0.0, 0.0]


# --- find_metric at its boundaries: the separator, non-ASCII, trec_eval's names ------------


@pytest.mark.parametrize(
    "text", ["recall@5@5", "recall@@5", "recall@", "@5", "P_5_5", "P__5", "P_", "recall@+5"]
)
def test_a_name_holding_the_separator_twice_or_alone_is_refused_with_the_nearest(text):
    with pytest.raises(InputError, match=rf"unknown metric {re.escape(repr(text))}") as err:
        find_metric(text, ["recall@5", "P_5", "ndcg@10"])
    assert "did you mean" in str(err.value) or text == "@5"
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("text", ["récall@5", "recall@５", "recall@٥", "ｒecall@5"])
def test_non_ascii_lookalikes_are_no_measure(text):
    # int("５") is 5 in Python: a full-width or Arabic-Indic digit must not pass for one
    with pytest.raises(InputError, match="unknown metric"):
        find_metric(text, ["recall@5"])


def test_a_runs_own_odd_names_neither_match_nor_break_the_search():
    odd = ["x@y@z", "récall@5", "@", "P_", "recall@5"]
    assert find_metric("recall@5", odd) == "recall@5"
    assert find_metric("récall@5", odd) == "récall@5"  # an exact name is always found
    assert find_metric("recall_5", odd) == "recall@5"  # trec_eval's spelling finds ours
    assert find_metric("P.5", ["precision@5"]) == "precision@5"
    assert find_metric("precision@5", ["P_5"]) == "P_5"
    with pytest.raises(InputError, match="was not computed"):
        find_metric("P_5", odd)

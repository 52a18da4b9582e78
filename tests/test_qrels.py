"""Qrels and run files: parsing, errors, and agreement with trec_eval (pytrec_eval),
ir_measures and ranx on random collections."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragmeter.errors import InputError
from ragmeter.scoring.trec import (
    Evaluation,
    Qrels,
    Run,
    evaluate_run,
    read_qrels,
    read_run,
    run_matrix,
)

TREC_MEASURES = [
    "map",
    "map_cut_5",
    "ndcg",
    "ndcg_cut_3",
    "ndcg_cut_10",
    "P_1",
    "P_5",
    "P_10",
    "recall_5",
    "recall_100",
    "recip_rank",
    "success_1",
    "success_10",
    "Rprec",
]


def _write_qrels(path, qrels):
    path.write_text("".join(f"{q} 0 {d} {g}\n" for q, per in qrels.items() for d, g in per.items()))


def _write_run(path, run, tag="sys", extra=""):
    lines = []
    for q, per in run.items():
        for r, (d, s) in enumerate(per.items(), start=1):
            lines.append(f"{q} Q0 {d} {r} {s!r} {tag}{extra}\n")
    path.write_text("".join(lines))


# ---------------------------------------------------------------------------
# parsing


def test_read_trec_qrels_and_run(tmp_path):
    qp, rp = tmp_path / "q.txt", tmp_path / "r.txt"
    qp.write_text("1 0 a 2\n1 0 b 0\n\n2 0 c 1\n")
    rp.write_text("1 Q0 b 1 3.5 bm25\n1 Q0 a 2 1.25 bm25 extra fields\n2 Q0 x 1 -2e-3 bm25\n")
    q = read_qrels(qp)
    assert q.to_dict() == {"1": {"a": 2, "b": 0}, "2": {"c": 1}}
    r = read_run(rp)
    assert r.name == "bm25"
    assert r.score.tolist() == [3.5, 1.25, -0.002]
    assert r.rank.tolist() == [1, 2, 1]
    assert r.line.tolist() == [1, 2, 3]


def test_read_beir_tsv_and_json(tmp_path):
    bp = tmp_path / "test.tsv"
    bp.write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t2\nq2\td1\t1\n")
    assert read_qrels(bp).to_dict() == {"q1": {"d1": 1, "d2": 2}, "q2": {"d1": 1}}
    jp = tmp_path / "qrels.json"
    jp.write_text(json.dumps({"q1": {"d1": 1}}))
    assert read_qrels(jp).to_dict() == {"q1": {"d1": 1}}
    rj = tmp_path / "mine.json"
    rj.write_text(json.dumps({"q1": {"d1": 0.5, "d2": 0.25}}))
    run = read_run(rj)
    assert run.name == "mine" and run.score.tolist() == [0.5, 0.25]


def test_reading_in_blocks_changes_nothing(tmp_path, monkeypatch):
    from ragmeter.scoring import trec_bytes as module

    rp = tmp_path / "r.txt"
    rp.write_text("".join(f"q{i % 7} Q0 d{i} {i} {i / 3:.5f} run\n" for i in range(300)) + "\n\n")
    whole = read_run(rp)
    monkeypatch.setattr(module, "BLOCK", 64)  # a few lines per block
    small = read_run(rp)
    for field in ("qid", "doc", "score", "rank", "line"):
        assert getattr(small, field).tolist() == getattr(whole, field).tolist()
    assert small.name == "run" and len(small) == 300
    rp.write_text("".join(f"q Q0 d{i} {i} 1.0 run\n" for i in range(40)) + "q Q0 x 1\n")
    with pytest.raises(InputError, match=r"r.txt:41: expected 6 fields"):
        read_run(rp)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    lines=st.lists(st.text("ab \t", min_size=0, max_size=9), min_size=0, max_size=12),
    ends=st.lists(st.sampled_from([b"\n", b"\r\n", b"\r"]), min_size=1, max_size=3),
    size=st.integers(1, 12),
    gz=st.booleans(),
)
def test_file_read_block_by_block_is_the_whole_file_with_lone_cr_as_lf(
    tmp_path, lines, ends, size, gz
):
    """A run is read from disk a block at a time, never whole; a CR LF cut by a block's
    end is still one line end, and a lone CR one too: the pieces are exactly the whole
    file's (lone CRs read as LF), each ends after a newline, and each says how many
    lines came before it."""
    import gzip

    from ragmeter.scoring.trec_bytes import _file_blocks, _lone_cr

    data = b"".join(line.encode() + ends[i % len(ends)] for i, line in enumerate(lines))
    path = tmp_path / ("r.txt.gz" if gz else "r.txt")
    path.write_bytes(gzip.compress(data) if gz else data)
    pieces = list(_file_blocks(path, "run", size))
    assert b"".join(block for _, block in pieces) == _lone_cr(data)
    seen = 0
    for before, block in pieces:
        assert before == seen and block
        seen += block.count(b"\n")
    assert all(block.endswith(b"\n") for _, block in pieces[:-1])


def test_a_run_file_that_cannot_be_read_is_one_line_naming_it(tmp_path):
    (tmp_path / "cut.txt.gz").write_bytes(b"\x1f\x8b\x08\x00not gzip at all")
    with pytest.raises(InputError, match=r"cannot read run file .*cut\.txt\.gz"):
        read_run(tmp_path / "cut.txt.gz")
    with pytest.raises(InputError, match=r"cannot read run file .*missing\.txt"):
        read_run(tmp_path / "missing.txt")


@pytest.mark.parametrize("threads", [1, 3])
def test_blocks_read_on_threads_give_the_same_run_and_the_first_bad_line(
    tmp_path, monkeypatch, threads
):
    from ragmeter import engine
    from ragmeter.scoring import trec_bytes as module

    rp = tmp_path / "r.txt"
    rp.write_text("".join(f"q{i % 7} Q0 d{i} {i} {i / 3:.5f} run\n" for i in range(500)))
    whole = read_run(rp)
    monkeypatch.setattr(module, "BLOCK", 64)
    monkeypatch.setattr(engine, "THREADS", threads)
    small = read_run(rp)
    for field in ("qid", "doc", "score", "rank", "line"):
        assert getattr(small, field).tolist() == getattr(whole, field).tolist()
    assert small.name == "run"
    lines = [f"q Q0 d{i} {i} 1.0 {'run' if i != 300 else 'other'}\n" for i in range(400)]
    rp.write_text("".join(lines))
    assert read_run(rp).name == "r"  # one line's tag differs, deep in the file
    lines[120], lines[350] = "q Q0 x 1 oops run\n", "q Q0 y\n"
    rp.write_text("".join(lines))
    with pytest.raises(InputError, match=r"r\.txt:121: score 'oops'"):
        read_run(rp)


def test_run_named_by_file_when_tags_differ(tmp_path):
    rp = tmp_path / "fused.run"
    rp.write_text("1 Q0 a 1 2 x\n1 Q0 b 2 1 y\n")
    assert read_run(rp).name == "fused"


@pytest.mark.parametrize(
    "text, message",
    [
        ("1 Q0 a 1 2.0 t\n1 Q0 b 2\n", "r.txt:2: expected 6 fields"),
        ("1 Q0 a 1 2.0 t\n1 Q0 b 2 high t\n", "r.txt:2: score 'high' is not a number"),
        ("1 Q0 a 1 2.0 t\n\n1 Q0 b x 1 t\n", "r.txt:3: rank 'x' is not an integer"),
        ("1 Q0 a 1 nan t\n", "r.txt:1: score 'nan'"),
    ],
)
def test_run_errors_name_file_and_line(tmp_path, text, message):
    rp = tmp_path / "r.txt"
    rp.write_text(text)
    with pytest.raises(InputError) as e:
        read_run(rp)
    assert message in str(e.value)


@pytest.mark.parametrize("end", [b"\n", b"\r\n", b"\r"])
def test_lines_ending_in_cr_alone_are_lines(tmp_path, end):
    """A run whose lines end in CR alone is not one line of which six fields count."""
    rp, qp = tmp_path / "r.txt", tmp_path / "q.txt"
    rp.write_bytes(end.join([b"1 Q0 a 1 2 t", b"1 Q0 b 2 1 t", b"2 Q0 c 1 5 t", b""]))
    r = read_run(rp)
    assert r.doc.tolist() == [b"a", b"b", b"c"] and r.line.tolist() == [1, 2, 3]
    qp.write_bytes(end.join([b"1 0 a 1", b"2 0 c 2", b""]))
    assert read_qrels(qp).to_dict() == {"1": {"a": 1}, "2": {"c": 2}}
    rp.write_bytes(end.join([b"1 Q0 a 1 2 t", b"1 Q0 b 2 x t", b""]))
    with pytest.raises(InputError, match=r"r\.txt:2: score 'x' is not a number"):
        read_run(rp)


@pytest.mark.parametrize("end", [b"\n", b"\r\n", b"\r"])
def test_ids_that_are_not_utf8_name_their_line(tmp_path, end):
    qp = tmp_path / "q.txt"
    qp.write_bytes(end.join([b"1 0 a 1", b"1 0 b 1", b"2 0 \xe9t\xe9 2", b""]))
    judged = read_qrels(qp)  # ids stay bytes for scoring; as text they must be UTF-8
    assert len(judged) == 3
    with pytest.raises(InputError, match=r"q\.txt:3: not valid UTF-8 .*re-save the qrels file"):
        judged.to_dict()


def test_duplicate_run_line_is_an_error(tmp_path):
    rp = tmp_path / "r.txt"
    rp.write_text("1 Q0 a 1 2 t\n1 Q0 b 2 1 t\n1 Q0 a 3 0 t\n")
    q = Qrels.from_dict({"1": {"a": 1}})
    with pytest.raises(InputError, match=r"r.txt:3: 'a' already listed for query '1' on line 1"):
        run_matrix(read_run(rp), q)


def test_qrels_errors(tmp_path):
    qp = tmp_path / "q.txt"
    qp.write_text("1 0 a 1\n1 0 b\n")
    with pytest.raises(InputError, match=r"q.txt:2: expected 4 fields"):
        read_qrels(qp)
    qp.write_text("1 0 a one\n")
    with pytest.raises(InputError, match=r"q.txt:1: grade 'one' is not an integer"):
        read_qrels(qp)


@settings(max_examples=200, deadline=None)
@given(st.floats(min_value=-1e300, max_value=1e300, allow_nan=False))
def test_scores_parse_exactly_as_python(x):
    # Short decimals take the vectorised path, long ones Python's float: both exact.
    from ragmeter.scoring.trec import _numbers, _tokenize

    for text in (repr(x), f"{x:.4f}", f"{x:.6g}", f"{x:.9e}"):
        lines = _tokenize(f"q Q0 d 1 {text} t\n".encode())
        vals, ok = _numbers(lines.buf, *lines.field(4), integer=False)
        assert ok.all() and vals[0] == float(text)
        assert math.copysign(1, vals[0]) == math.copysign(1, float(text))


# ---------------------------------------------------------------------------
# the evaluator, by hand


def test_evaluate_by_hand():
    qrels = Qrels.from_dict({"1": {"a": 2, "b": 1, "c": 0, "z": 1}, "2": {"x": 1}, "3": {"y": 0}})
    run = Run.from_dict({"1": {"c": 3.0, "a": 2.0, "b": 1.0}, "3": {"y": 1.0}, "9": {"q": 1}})
    ev = evaluate_run(run, qrels, ["recall@3", "hit@1", "precision@3", "map", "rprec", "mrr"])
    assert ev.query_ids == ["1", "2", "3"]
    assert ev.missing == ["2"] and ev.unjudged == ["9"]
    # query 1: relevant a, b, z (R = 3); ranking c(0) a(2) b(1)
    assert ev.scores["recall@3"].tolist() == [2 / 3, 0.0, 0.0]
    assert ev.scores["hit@1"].tolist() == [0.0, 0.0, 0.0]
    assert ev.scores["precision@3"].tolist() == [2 / 3, 0.0, 0.0]
    assert ev.scores["map"][0] == pytest.approx((1 / 2 + 2 / 3) / 3, abs=1e-15)
    assert ev.scores["rprec"][0] == pytest.approx(2 / 3, abs=1e-15)
    assert ev.scores["mrr"].tolist() == [0.5, 0.0, 0.0]


def test_ties_trec_eval_order_versus_file_order():
    qrels = Qrels.from_dict({"1": {"a": 1}})
    run = Run.from_dict({"1": {"a": 1.0, "b": 1.0}})
    # file order: a first; trec_eval: equal scores go by docid descending, b first
    assert evaluate_run(run, qrels, ["mrr"]).scores["mrr"].tolist() == [1.0]
    compat = evaluate_run(run, qrels, ["mrr"], trec_eval_compat=True)
    assert compat.scores["recip_rank"].tolist() == [0.5]


# ---------------------------------------------------------------------------
# agreement with trec_eval through pytrec_eval


@st.composite
def collections(draw):
    n_q = draw(st.integers(1, 8))
    n_docs = draw(st.integers(1, 25))
    docs = [f"d{i:02d}" for i in range(n_docs)]
    qrels, run = {}, {}
    for q in range(n_q):
        qid = f"q{q}"
        judged = draw(st.lists(st.sampled_from(docs), unique=True, max_size=n_docs))
        if judged:
            qrels[qid] = {d: draw(st.integers(0, 3)) for d in judged}
        if draw(st.booleans()) or not judged:
            ret = draw(st.lists(st.sampled_from(docs), unique=True, max_size=n_docs))
            # few distinct scores, so ties are common
            run[qid] = {d: float(draw(st.integers(0, 4))) / 2 for d in ret}
    if not qrels:
        qrels["q0"] = {"d00": 1}
    return qrels, run


def _pytrec(qrels, run, measures, level=1):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    ev = pytrec_eval.RelevanceEvaluator(qrels, set(measures), relevance_level=level)
    return ev.evaluate(run)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=collections(), level=st.sampled_from([1, 2]))
def test_compat_mode_equals_trec_eval(data, level):
    qrels, run = data
    ours = evaluate_run(
        Run.from_dict(run),
        Qrels.from_dict(qrels),
        TREC_MEASURES,
        level=level,
        trec_eval_compat=True,
    )
    theirs = _pytrec(
        qrels,
        {q: r for q, r in run.items() if r},
        {
            "map",
            "map_cut.5",
            "ndcg",
            "ndcg_cut.3,10",
            "P.1,5,10",
            "recall.5,100",
            "recip_rank",
            "success.1,10",
            "Rprec",
        },
        level,
    )
    for i, qid in enumerate(ours.query_ids):
        for m in TREC_MEASURES:
            # trec_eval -c: a judged query the run lacks scores 0
            expected = theirs[qid][m] if qid in theirs else 0.0
            assert ours.scores[m][i] == pytest.approx(expected, abs=1e-9), (qid, m)


def test_compat_mode_equals_trec_eval_from_files(tmp_path):
    # Parse + evaluate from files (scores with many digits, ties, extra fields).
    rng = np.random.default_rng(7)
    qrels, run = {}, {}
    for q in range(60):
        docs = [f"doc{j}" for j in rng.choice(400, size=60, replace=False)]
        qrels[f"{q}"] = {d: int(rng.integers(0, 4)) for d in docs[:20]}
        scores = np.round(rng.normal(size=50), rng.integers(1, 17))
        run[f"{q}"] = {d: float(s) for d, s in zip(docs[10:], scores, strict=True)}
    _write_qrels(tmp_path / "qrels", qrels)
    _write_run(tmp_path / "run", run, extra=" ignored")
    ours = evaluate_run(
        read_run(tmp_path / "run"),
        read_qrels(tmp_path / "qrels"),
        TREC_MEASURES,
        trec_eval_compat=True,
    )
    theirs = _pytrec(
        qrels,
        run,
        {
            "map",
            "map_cut.5",
            "ndcg",
            "ndcg_cut.3,10",
            "P.1,5,10",
            "recall.5,100",
            "recip_rank",
            "success.1,10",
            "Rprec",
        },
    )
    for m in TREC_MEASURES:
        col = np.array([theirs[q][m] for q in ours.query_ids])
        np.testing.assert_allclose(ours.scores[m], col, atol=1e-9, rtol=0)
    assert 0 < ours.scores["map"].mean() < 1


def test_agrees_with_ir_measures_and_ranx():
    ir_measures = pytest.importorskip("ir_measures")
    ranx = pytest.importorskip("ranx")
    from ir_measures import AP, RR, P, R, Rprec, nDCG

    rng = np.random.default_rng(3)
    qrels, run = {}, {}
    for q in range(40):
        docs = [f"d{j}" for j in rng.choice(200, size=40, replace=False)]
        qrels[f"q{q}"] = {d: int(rng.integers(0, 3)) for d in docs[:15]}
        run[f"q{q}"] = {d: float(40 - i) for i, d in enumerate(docs[5:])}  # no ties
    ours = evaluate_run(
        Run.from_dict(run),
        Qrels.from_dict(qrels),
        ["map", "ndcg@10", "precision@5", "recall@20", "mrr", "rprec"],
        gain="linear",
    )
    ms = [AP, nDCG @ 10, P @ 5, R @ 20, RR, Rprec]
    got: dict[str, dict[str, float]] = {}
    for r in ir_measures.iter_calc(ms, qrels, run):
        got.setdefault(str(r.measure), {})[r.query_id] = r.value
    for ours_name, theirs in zip(
        ["map", "ndcg@10", "precision@5", "recall@20", "mrr", "rprec"], ms, strict=True
    ):
        col = np.array([got[str(theirs)][q] for q in ours.query_ids])
        np.testing.assert_allclose(ours.scores[ours_name], col, atol=1e-9)
    # ranx: exponential gain (ndcg_burges), MAP, recall
    rr = ranx.Run.from_dict(run)
    pairs = (
        ("map", "map"),
        ("map@5", "map@5"),
        ("ndcg@10", "ndcg_burges@10"),
        ("recall@20", "recall@20"),
        ("hit@5", "hit_rate@5"),
        ("rprec", "r-precision"),
    )
    ranx.evaluate(ranx.Qrels.from_dict(qrels), rr, [t for _, t in pairs])
    exp = evaluate_run(Run.from_dict(run), Qrels.from_dict(qrels), [o for o, _ in pairs])
    for ours_name, theirs in pairs:
        col = np.array([rr.scores[theirs][q] for q in exp.query_ids])
        np.testing.assert_allclose(exp.scores[ours_name], col, atol=1e-9)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=collections(), compat=st.booleans())
def test_presorted_files_score_as_shuffled_ones(data, compat):
    # Lines already in the wanted order take a shortcut (no sort); the result must
    # equal that of the same lines in any other order.
    qrels, run = data
    q = Qrels.from_dict(qrels)
    ms = ["map", "ndcg@10", "precision@5", "mrr"]
    if compat:
        ordered = {
            k: dict(sorted(v.items(), key=lambda x: (x[1], x[0]), reverse=True))
            for k, v in run.items()
        }
    else:
        ordered = {k: dict(sorted(v.items(), key=lambda x: -x[1])) for k, v in run.items()}
    shuffled = {k: dict(reversed(list(v.items()))) for k, v in ordered.items()}
    a = evaluate_run(Run.from_dict(ordered), q, ms, trec_eval_compat=compat)
    if compat:  # trec_eval's order does not depend on the file's order
        # by score, but ties in ascending document order: only the ties are re-sorted
        ties_up = {k: dict(sorted(v.items(), key=lambda x: (-x[1], x[0]))) for k, v in run.items()}
        for other in (shuffled, ties_up):
            b = evaluate_run(Run.from_dict(other), q, ms, trec_eval_compat=True)
            for m in a.scores:
                np.testing.assert_allclose(a.scores[m], b.scores[m], atol=1e-12)
    else:  # file order breaks ties: the sorted dict's order is the ranking
        from ragmeter.scoring.metrics import score_questions

        assert a.scores["mrr"].shape == (len(a.query_ids),)
        for i, qid in enumerate(a.query_ids):
            docs = list(ordered.get(qid, {}))
            g = [max(qrels[qid].get(d, 0), 0) for d in docs]
            ref = score_questions(
                np.array([g or [-1]]), None, ks=[5], relevant_grade=1, measures=["mrr"]
            )
            assert a.scores["mrr"][i] == ref["mrr"][0]


def test_hash_collisions_fall_back_to_exact_matching(monkeypatch):
    # Every document hashing alike must change nothing: the exact paths take over.
    from ragmeter.scoring import trec as module

    rng = np.random.default_rng(5)
    judged, run = {}, {}
    for q in range(20):
        docs = [f"doc-{j}" for j in rng.choice(300, size=30, replace=False)]
        judged[f"q{q}"] = {d: int(rng.integers(0, 3)) for d in docs[:12]}
        run[f"q{q}"] = {d: float(rng.integers(0, 5)) for d in docs[6:]}
    ms = ["map", "ndcg@10", "precision@5", "recall@20"]
    a = evaluate_run(Run.from_dict(run), Qrels.from_dict(judged), ms, trec_eval_compat=True)
    monkeypatch.setattr(module, "_hash", lambda w: np.zeros(w.shape[0], dtype=np.uint64))
    b = evaluate_run(Run.from_dict(run), Qrels.from_dict(judged), ms, trec_eval_compat=True)
    for m in a.scores:
        np.testing.assert_array_equal(a.scores[m], b.scores[m])
    assert a.scores["map"].mean() > 0
    dup = Run.from_dict({"q1": {"doc-1": 1.0}})
    dup.qid, dup.doc = np.array([b"q1", b"q1"]), np.array([b"doc-1", b"doc-1"])
    dup.score, dup.rank, dup.line = np.array([1.0, 0.5]), np.array([1, 2]), np.array([1, 2])
    with pytest.raises(InputError, match="already listed"):
        run_matrix(dup, Qrels.from_dict(judged))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=collections(), compat=st.booleans())
def test_chunks_of_queries_change_nothing(data, compat):
    # Lines are graded and ordered a chunk of queries at a time; tiny chunks must
    # give what one chunk gives (sorted and shuffled files alike).
    from ragmeter import engine
    from ragmeter.scoring import trec as module

    qrels, run = data
    q = Qrels.from_dict(qrels)
    ms = ["map", "ndcg@10", "precision@5", "recall@5", "mrr"]
    ordered = {k: dict(sorted(v.items(), key=lambda x: -x[1])) for k, v in run.items()}
    for r in (run, ordered):
        whole = evaluate_run(Run.from_dict(r), q, ms, trec_eval_compat=compat, keep=3)
        for threads in (1, 3):  # tiny chunks graded on one thread, and on several
            with pytest.MonkeyPatch.context() as mp:
                mp.setattr(module, "CHUNK", 3)
                mp.setattr(engine, "THREADS", threads)
                small = evaluate_run(Run.from_dict(r), q, ms, trec_eval_compat=compat, keep=3)
            for m in whole.scores:
                np.testing.assert_array_equal(whole.scores[m], small.scores[m])
            np.testing.assert_array_equal(whole.top.docs, small.top.docs)
            np.testing.assert_array_equal(whole.top.scores, small.top.scores)


@pytest.mark.parametrize("threads", [1, 3])
def test_the_first_document_listed_twice_is_named_whatever_the_chunks_and_threads(
    tmp_path, monkeypatch, threads
):
    from ragmeter import engine
    from ragmeter.scoring import trec as module

    lines = [f"q{i // 10} Q0 d{i % 10} {i % 10 + 1} {10 - i % 10} run\n" for i in range(200)]
    lines[57] = "q5 Q0 d3 8 3 run\n"  # q5's d3 again (first at line 54)
    lines[163] = "q16 Q0 d0 4 7 run\n"  # a later duplicate, in a later chunk
    (tmp_path / "r.txt").write_text("".join(lines))
    judged = Qrels.from_dict({f"q{i}": {"d1": 1} for i in range(20)})
    monkeypatch.setattr(module, "CHUNK", 12)
    monkeypatch.setattr(engine, "THREADS", threads)
    said = r"r\.txt:58: 'd3' already listed for query 'q5' on line 54"
    with pytest.raises(InputError, match=said):
        evaluate_run(read_run(tmp_path / "r.txt"), judged, ["map"])


def test_compat_mode_ties_scores_equal_in_single_precision():
    # trec_eval keeps a score as a C float: 0.100000001 and 0.1 are one score there, and
    # the tie goes to the larger document id, so the relevant "a" ranks second
    run = Run.from_dict({"q1": {"a": 0.100000001, "b": 0.1}})
    qrels = Qrels.from_dict({"q1": {"a": 1}})
    compat = evaluate_run(run, qrels, ["mrr"], trec_eval_compat=True)
    assert compat.scores["recip_rank"].tolist() == [0.5]
    assert _pytrec({"q1": {"a": 1}}, {"q1": {"a": 0.100000001, "b": 0.1}}, {"recip_rank"}) == {
        "q1": {"recip_rank": 0.5}
    }
    # ragmeter's own order keeps every digit of the score
    assert evaluate_run(run, qrels, ["mrr@10"]).scores["mrr@10"].tolist() == [1.0]


def test_compat_mode_equals_trec_eval_on_full_precision_scores():
    # random scores of full precision: some pairs collide in 32 bits (as in real runs)
    rng = np.random.default_rng(11)
    docs = [f"d{i:03d}" for i in range(400)]
    qrels, run = {}, {}
    for q in range(40):
        qid = f"q{q}"
        qrels[qid] = {d: int(rng.integers(0, 3)) for d in rng.choice(docs, 30, replace=False)}
        base = rng.random(150)
        # 50 documents score a hair above or below another's: equal once in float32
        near = np.concatenate([base, base[:50] + rng.choice([-2e-9, 1e-9, 3e-9], size=50)])
        picked = rng.choice(docs, 200, replace=False)
        run[qid] = {d: float(s) for d, s in zip(picked, near, strict=True)}
    collide = sum(len(set(np.float32(list(r.values())))) < len(r) for r in run.values())
    assert collide > 10  # the case is really exercised
    ours = evaluate_run(
        Run.from_dict(run), Qrels.from_dict(qrels), ["map", "mrr", "ndcg@10"], trec_eval_compat=True
    )
    theirs = _pytrec(qrels, run, {"map", "recip_rank", "ndcg_cut.10"})
    for i, qid in enumerate(ours.query_ids):
        for ours_name, theirs_name in (("map", "map"), ("recip_rank", "recip_rank")):
            assert ours.scores[ours_name][i] == pytest.approx(theirs[qid][theirs_name], abs=1e-12)
        assert ours.scores["ndcg_cut_10"][i] == pytest.approx(theirs[qid]["ndcg_cut_10"], abs=1e-12)


# The qrels route (ragmeter.scoring.trec*): per-query means and what a run file holds.


def test_evaluation_means_are_per_measure_and_zero_without_queries():
    ev = Evaluation("run", ["1", "2"], {"map": np.array([0.5, 1.0]), "p@5": np.array([0.2, 0])})
    assert ev.means() == {"map": 0.75, "p@5": 0.1}
    assert Evaluation("run", [], {"map": np.zeros(0)}).means() == {"map": 0.0}
    assert (ev.missing, ev.unjudged, ev.depth, ev.top) == ([], [], 0, None)


def test_a_repeated_document_in_a_later_query_is_named(tmp_path):
    import pytest

    from ragmeter.errors import InputError
    from ragmeter.scoring.trec import run_matrix
    from ragmeter.scoring.trec_read import Qrels, read_run

    rp = tmp_path / "r.txt"
    rp.write_text("1 Q0 a 1 3 t\n2 Q0 b 1 2 t\n2 Q0 c 2 1 t\n2 Q0 b 3 0 t\n")
    q = Qrels.from_dict({"1": {"a": 1}, "2": {"b": 1}})
    with pytest.raises(InputError, match=r"r.txt:4: 'b' already listed for query '2' on line 2"):
        run_matrix(read_run(rp), q)


def test_an_empty_run_misses_every_judged_query(tmp_path):
    import pytest

    from ragmeter.errors import InputError
    from ragmeter.scoring.trec import evaluate_run
    from ragmeter.scoring.trec_read import Qrels, Run, read_run

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


def test_the_judged_ideal_holds_only_grades_above_zero():
    from ragmeter.scoring.trec_read import Qrels

    q = Qrels.from_dict({"1": {"a": 2, "b": -1, "c": 0, "d": 1}, "2": {"e": 0}})
    assert q.ideal().tolist() == [[2, 1], [0, 0]]
    assert q.ideal(width=3).tolist() == [[2, 1, 0], [0, 0, 0]]
    assert q.n_relevant().tolist() == [2, 0] and q.n_relevant(2).tolist() == [1, 0]
    assert Qrels.from_dict({"1": {"c": 0}}).ideal().shape == (1, 0)


def test_no_judgments_is_an_empty_qrels():
    from ragmeter.scoring.trec_read import Qrels

    empty = Qrels.from_dict({})
    assert len(empty) == 0 and empty.to_dict() == {} and empty.ideal().shape == (0, 0)


def test_qrels_files_read_gzipped_unterminated_and_spaced(tmp_path):
    import gzip

    from ragmeter.scoring.trec_read import read_qrels

    text = "1 0 a 1\n1 0 bbbbbb 2\n2 0 c 0"  # no newline at the end, a short last token
    plain = tmp_path / "q.txt"
    plain.write_text(text)
    want = {"1": {"a": 1, "bbbbbb": 2}, "2": {"c": 0}}
    assert read_qrels(plain).to_dict() == want
    packed = tmp_path / "q.txt.gz"
    packed.write_bytes(gzip.compress(text.encode()))
    assert read_qrels(packed).to_dict() == want
    from ragmeter.scoring.trec_read import read_run

    run = "1 Q0 a 1 2.5 t\n1 Q0 bb 2 1 t\n"
    (tmp_path / "r.txt.gz").write_bytes(gzip.compress(run.encode()))
    (tmp_path / "r.txt").write_text(run)
    packed_run, plain_run = read_run(tmp_path / "r.txt.gz"), read_run(tmp_path / "r.txt")
    assert packed_run.doc.tolist() == plain_run.doc.tolist() == [b"a", b"bb"]
    assert packed_run.score.tolist() == [2.5, 1.0]


def test_errors_name_the_right_line_after_blank_lines_and_wide_gaps(tmp_path):
    import pytest

    from ragmeter.errors import InputError
    from ragmeter.scoring.trec_read import read_qrels

    path = tmp_path / "q.txt"
    path.write_text("1   0\t\ta  1\n\n\n1 0 b 1\n   \n2 0 c x\n")
    with pytest.raises(InputError, match=r"q.txt:6:"):
        read_qrels(path)
    path.write_text("1 0 a 1\n1 0 b 1-2\n")
    with pytest.raises(InputError, match=r"q.txt:2:"):
        read_qrels(path)
    path.write_text("1 0 a -2\n1 0 b +3\n")
    assert read_qrels(path).to_dict() == {"1": {"a": -2, "b": 3}}


def test_keep_returns_the_top_documents_graded(tmp_path):
    from ragmeter.scoring.trec import evaluate_run
    from ragmeter.scoring.trec_read import Qrels, read_run

    rp = tmp_path / "r.txt"
    rp.write_text("1 Q0 a 1 3 t\n1 Q0 x 2 2 t\n1 Q0 b 3 1 t\n")
    q = Qrels.from_dict({"1": {"a": 2, "b": 1}, "2": {"c": 1}})
    ev = evaluate_run(read_run(rp), q, ["map"], keep=2)
    assert ev.top.grades.tolist() == [[2, 0], [-1, -1]]
    assert ev.top.missing.tolist() == [False, True]
    assert ev.top.docs.tolist() == [[b"a", b"x"], [b"", b""]]
    assert evaluate_run(read_run(rp), q, ["map"]).top is None


def test_grades_up_to_32767_are_scored_and_higher_ones_refused():
    run = Run.from_dict({"1": {"a": 2.0, "b": 1.0}})
    top = Qrels.from_dict({"1": {"a": 32767, "b": 1}})
    ev = evaluate_run(run, top, ["ndcg@2"], gain="linear")
    assert ev.scores["ndcg@2"].tolist() == [1.0]
    assert run_matrix(run, top).grades.tolist() == [[32767, 1]]
    with pytest.raises(InputError, match="grades above 32767 are not supported"):
        run_matrix(run, Qrels.from_dict({"1": {"a": 32768}}))


def test_a_run_scored_against_no_judgments_has_every_query_unjudged():
    run = Run.from_dict({"1": {"a": 1.0}, "2": {"b": 2.0}})
    ev = evaluate_run(run, Qrels.from_dict({}), ["map", "ndcg@3"])
    assert (ev.query_ids, ev.unjudged, ev.missing, ev.depth) == ([], ["1", "2"], [], 0)
    assert {m: v.tolist() for m, v in ev.scores.items()} == {"map": [], "ndcg@3": []}


def test_scores_one_step_apart_in_the_last_bit_rank_the_higher_first():
    from ragmeter.scoring.trec import run_order

    q = np.zeros(4, dtype=np.int64)
    above = np.nextafter(2.0, 3.0)  # 2.0's bits are even: the two differ in bit 0 only
    below = np.nextafter(-1.0, 0.0)
    assert run_order(q, np.array([2.0, above, -1.0, below])).tolist() == [1, 0, 3, 2]
    run = Run.from_dict({"1": {"a": 2.0, "b": float(above)}})
    ev = evaluate_run(run, Qrels.from_dict({"1": {"b": 1}}), ["mrr"])
    assert ev.scores["mrr"].tolist() == [1.0]


def test_run_order_breaks_trec_eval_ties_by_document_id_and_needs_the_ids():
    from ragmeter.scoring.trec import run_order

    q, score = np.zeros(3, dtype=np.int64), np.array([1.0, 1.0, 1.0])
    doc = np.array([b"b", b"c", b"a"])
    assert run_order(q, score, None, doc, trec_eval_compat=True).tolist() == [1, 0, 2]
    assert run_order(q, score, None, doc).tolist() == [0, 1, 2]  # file order
    with pytest.raises(ValueError, match="needs the document ids"):
        run_order(q, score, trec_eval_compat=True)

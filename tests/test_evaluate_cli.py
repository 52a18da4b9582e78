"""``ragmeter evaluate``: run files against qrels from the command line."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from ragmeter.cli import app
from ragmeter.results import Results

runner = CliRunner()


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("trec")
    rng = np.random.default_rng(11)
    qrels, runs = {}, {"bm25": {}, "dense": {}}
    for q in range(40):
        docs = [f"FT{j:04d}" for j in rng.choice(900, size=70, replace=False)]
        qrels[str(q)] = {d: int(rng.integers(0, 3)) for d in docs[:12]}
        runs["bm25"][str(q)] = {
            d: round(float(40 - i + rng.random()), 4) for i, d in enumerate(docs[4:44])
        }
        if q != 7:  # dense lacks query 7
            order = rng.permutation(docs)[:40]
            runs["dense"][str(q)] = {d: float(40 - i // 2) for i, d in enumerate(order)}  # ties
    runs["dense"]["x1"] = {"FT0001": 1.0}  # a query without judgments
    (root / "qrels.txt").write_text(
        "".join(f"{q} 0 {d} {g}\n" for q, per in qrels.items() for d, g in per.items())
    )
    for name, run in runs.items():
        (root / f"{name}.run").write_text(
            "".join(
                f"{q} Q0 {d} {r} {s} {name}\n"
                for q, per in run.items()
                for r, (d, s) in enumerate(per.items(), start=1)
            )
        )
    return root, qrels, runs


def test_evaluate_writes_results_that_compare_and_plan_read(files, tmp_path):
    root, _, _ = files
    out = tmp_path / "res"
    r = runner.invoke(
        app,
        [
            "evaluate",
            "--qrels",
            str(root / "qrels.txt"),
            str(root / "bm25.run"),
            str(root / "dense.run"),
            "--rounds",
            "500",
            "--out",
            str(out),
        ],
    )
    assert r.exit_code == 0, r.output
    assert "40 judged queries, 2 runs" in r.stdout
    # one id after a count reads as ids, not as a second count
    assert "dense: 1 judged query is not in the run and scores 0 (as trec_eval -c); ids: 7" in (
        r.stdout
    )
    assert "1 run query has no judgments and is left out; ids: x1" in r.stdout
    res = Results(out)
    assert res.systems == ["bm25", "dense"]
    assert res.metrics == ["map", "ndcg@10", "precision@10", "recall@100", "mrr", "hit@10", "rprec"]
    summary = json.loads((out / "summary.json").read_text())
    est = summary["estimates"]["bm25"]["map"]
    assert est["low"] <= est["mean"] <= est["high"] and summary["rounds"] == 500
    assert est["mean"] == pytest.approx(res.scores("bm25", "map").mean(), abs=1e-12)
    assert summary["metric"] == "map" and len(summary["comparisons"]) == 1
    assert res.scores("dense", "map")[res.question_ids.index("7")] == 0.0  # missing: 0
    assert runner.invoke(app, ["compare", str(out)]).exit_code == 0
    plan = runner.invoke(app, ["plan", str(out), "--metric", "ndcg@10"])
    assert plan.exit_code == 0 and "Questions needed on" in plan.stdout
    assert "Sample size: bm25 on ndcg@10" in plan.stdout


def test_compat_mode_writes_trec_eval_names_and_values(files, tmp_path):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    root, qrels, runs = files
    out = tmp_path / "compat"
    r = runner.invoke(
        app,
        [
            "evaluate",
            "--qrels",
            str(root / "qrels.txt"),
            str(root / "dense.run"),
            "--trec-eval-compat",
            "--measures",
            "map,P_10,ndcg_cut_10,recip_rank,Rprec",
            "--rounds",
            "200",
            "--out",
            str(out),
        ],
    )
    assert r.exit_code == 0, r.output
    res = Results(out)
    assert res.metrics == ["map", "P_10", "ndcg_cut_10", "recip_rank", "Rprec"]
    run = {q: per for q, per in runs["dense"].items() if q in qrels}
    theirs = pytrec_eval.RelevanceEvaluator(
        qrels, {"map", "P.10", "ndcg_cut.10", "recip_rank", "Rprec"}
    ).evaluate(run)
    for m in res.metrics:
        col = [theirs[q][m] if q in theirs else 0.0 for q in res.question_ids]
        np.testing.assert_allclose(res.scores("dense", m), col, atol=1e-9, rtol=0)


def test_bad_input_is_one_line_and_exit_2(files, tmp_path):
    root, _, _ = files
    bad = tmp_path / "bad.run"
    bad.write_text("1 Q0 a 1 2.0 t\n1 Q0 b 2\n")
    r = runner.invoke(
        app,
        ["evaluate", "--qrels", str(root / "qrels.txt"), str(bad), "--out", str(tmp_path / "x")],
    )
    assert r.exit_code == 2
    assert "bad.run:2: expected 6 fields" in r.output
    assert not (tmp_path / "x").exists()
    r = runner.invoke(
        app,
        [
            "evaluate",
            "--qrels",
            str(root / "qrels.txt"),
            str(root / "bm25.run"),
            "--measures",
            "ndcg@x",
            "--out",
            str(tmp_path / "y"),
        ],
    )
    assert r.exit_code == 2 and "unknown metric" in r.output


def test_evaluate_names_the_exact_intervals_it_prints(tmp_path):
    """Ten queries all answered at rank 1: a share with no spread prints its exact
    interval, and the table's footnote says so, as `search` does."""
    from ragmeter.formatting import EXACT_NOTE

    qrels = "".join(f"q{i} 0 d{i} 1\n" for i in range(10))
    run = "".join(f"q{i} Q0 d{i} 1 2.0 r\nq{i} Q0 x{i} 2 1.0 r\n" for i in range(10))
    (tmp_path / "qrels.txt").write_text(qrels)
    (tmp_path / "r.run").write_text(run)
    args = ["evaluate", "--qrels", str(tmp_path / "qrels.txt"), str(tmp_path / "r.run")]
    r = runner.invoke(app, [*args, "--rounds", "300", "--out", str(tmp_path / "res")])
    assert r.exit_code == 0, r.output
    flat = " ".join(r.output.split())
    assert "exact" in flat and " ".join(EXACT_NOTE.split()) in flat

"""``ragmeter evaluate``: run files against qrels from the command line."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest
from test_metrics import trec_eval_names  # every name the code's own table knows
from typer.testing import CliRunner

from ragmeter.cli import app
from ragmeter.errors import InputError
from ragmeter.runs.results import Results
from ragmeter.scoring.metrics import Metric

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
    from ragmeter.comparison.formatting import EXACT_NOTE

    qrels = "".join(f"q{i} 0 d{i} 1\n" for i in range(10))
    run = "".join(f"q{i} Q0 d{i} 1 2.0 r\nq{i} Q0 x{i} 2 1.0 r\n" for i in range(10))
    (tmp_path / "qrels.txt").write_text(qrels)
    (tmp_path / "r.run").write_text(run)
    args = ["evaluate", "--qrels", str(tmp_path / "qrels.txt"), str(tmp_path / "r.run")]
    r = runner.invoke(app, [*args, "--rounds", "300", "--out", str(tmp_path / "res")])
    assert r.exit_code == 0, r.output
    flat = " ".join(r.output.split())
    assert "exact" in flat and " ".join(EXACT_NOTE.split()) in flat


# ---------------------------------------------------------------------------
# trec_eval's names anywhere: every name ragmeter documents, in either mode, alone or
# first in a list, as --measures and as --metric (evaluate, compare, plan)

TREC_KS = (5, 10)
TREC_NAMES = trec_eval_names(TREC_KS)  # the code's own name table, not a hand-picked list
DOTTED = [n[::-1].replace("_", ".", 1)[::-1] for n in TREC_NAMES if Metric.parse(n).k]
MODES = [pytest.param(False, id="ragmeter"), pytest.param(True, id="trec-eval-compat")]


def test_the_generated_names_are_every_documented_trec_eval_name():
    from pathlib import Path

    doc = (Path(__file__).parents[1] / "docs" / "metrics.md").read_text()
    for name in TREC_NAMES:
        generic = name.replace("_5", "_k").replace("_10", "_k")
        assert f"`{generic}`" in doc, name
    assert {Metric.parse(n).family for n in TREC_NAMES} >= {
        "recall", "hit", "precision", "mrr", "ndcg", "map", "rprec",
    }  # fmt: skip


@pytest.fixture(scope="module")
def no_report():
    """The name sweeps run evaluate some 200 times: without the HTML report each takes
    a fifth of the time (the report has tests of its own)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("ragmeter.cli.evaluate.refresh_report", lambda *a, **k: None)
        yield


@pytest.fixture(scope="module")
def judged(tmp_path_factory, no_report):
    """12 judged queries (grades -1 to 3) and two runs without tied scores."""
    root = tmp_path_factory.mktemp("names")
    rng = np.random.default_rng(5)
    qrels, runs = {}, {"alpha": {}, "beta": {}}
    for q in range(12):
        docs = [f"D{j}" for j in rng.choice(60, size=25, replace=False)]
        qrels[f"q{q}"] = {d: int(rng.integers(-1, 4)) for d in docs[:10]}
        for name in runs:
            order = rng.permutation(docs)[:15]
            runs[name][f"q{q}"] = {d: float(100 - i) for i, d in enumerate(order)}
    qrels["q0"][next(iter(qrels["q0"]))] = 3  # at least one relevant document
    (root / "qrels.txt").write_text(
        "".join(f"{q} 0 {d} {g}\n" for q, per in qrels.items() for d, g in per.items())
    )
    for name, run in runs.items():
        (root / f"{name}.run").write_text(
            "".join(
                f"{q} Q0 {d} {r} {s:g} {name}\n"
                for q, per in run.items()
                for r, (d, s) in enumerate(per.items(), start=1)
            )
        )
    return root, qrels, runs


def _evaluate(root, out, *extra):
    return runner.invoke(
        app,
        [
            "evaluate",
            "--qrels",
            str(root / "qrels.txt"),
            str(root / "alpha.run"),
            str(root / "beta.run"),
            "--rounds",
            "200",
            "--no-history",
            "--out",
            str(out),
            *extra,
        ],
    )


def _stored(name: str, compat: bool) -> str:
    """The name a run scored in this mode keeps for ``name``."""
    m = Metric.parse(name)
    return m.trec_name if compat else str(m)


def _other(name: str) -> str:
    """A second measure for the list, not ``name`` itself."""
    return "recip_rank" if Metric.parse(name) == Metric("map") else "map"


def _pytrec_name(name: str) -> str:
    """pytrec_eval's request for a trec_eval name: ``P.5`` for ``P_5``."""
    return name[::-1].replace("_", ".", 1)[::-1] if Metric.parse(name).k else name


@pytest.mark.parametrize("compat", MODES)
@pytest.mark.parametrize("name", TREC_NAMES + DOTTED)
@pytest.mark.parametrize("listed", ["alone", "first"])
def test_every_trec_eval_name_works_alone_or_first_in_either_mode(
    judged, tmp_path, name, compat, listed
):
    root, qrels, runs = judged
    measures = name if listed == "alone" else f"{name},{_other(name)}"
    mode = ["--trec-eval-compat"] * compat
    r = _evaluate(root, tmp_path / "res", "--measures", measures, *mode)
    assert r.exit_code == 0, r.output
    res = Results(tmp_path / "res")
    names = [_stored(m, compat) for m in measures.split(",")]
    assert res.metrics == names
    summary = json.loads((tmp_path / "res" / "summary.json").read_text())
    assert summary["metric"] == names[0]  # the first measure is the comparisons' metric
    assert len(summary["comparisons"]) == 1 and set(summary["sample_size"]) == set(runs)
    if compat:  # trec_eval's own numbers, through pytrec_eval
        pytrec_eval = pytest.importorskip("pytrec_eval")
        theirs = pytrec_eval.RelevanceEvaluator(qrels, {_pytrec_name(names[0])}).evaluate(
            runs["alpha"]
        )
        col = [theirs[q][names[0]] for q in res.question_ids]
        np.testing.assert_allclose(res.scores("alpha", names[0]), col, atol=1e-9, rtol=0)


@pytest.mark.parametrize("compat", MODES)
@pytest.mark.parametrize("name", TREC_NAMES)
def test_metric_takes_either_vocabulary_in_either_mode(judged, tmp_path, name, compat):
    root, _, _ = judged
    ours = str(Metric.parse(name))
    mode = ["--trec-eval-compat"] * compat
    for i, asked in enumerate(dict.fromkeys([name, ours])):
        out = tmp_path / f"res{i}"
        r = _evaluate(root, out, "--measures", f"{_other(name)},{name}", "--metric", asked, *mode)
        assert r.exit_code == 0, r.output
        summary = json.loads((out / "summary.json").read_text())
        assert summary["metric"] == _stored(name, compat), asked


@pytest.fixture(scope="module", params=[False, True], ids=["ragmeter", "trec-eval-compat"])
def every_name(judged, tmp_path_factory, request):
    """Saved results holding every trec_eval measure, in either mode."""
    root, _, _ = judged
    out = tmp_path_factory.mktemp("every") / "res"
    mode = ["--trec-eval-compat"] * request.param
    r = _evaluate(root, out, "--measures", ",".join(TREC_NAMES), *mode)
    assert r.exit_code == 0, r.output
    return out, request.param


@pytest.mark.parametrize("name", TREC_NAMES)
def test_compare_and_plan_take_either_vocabulary(every_name, name):
    out, compat = every_name
    stored = _stored(name, compat)
    for asked in dict.fromkeys([name, str(Metric.parse(name))]):
        r = runner.invoke(app, ["compare", str(out), "--metric", asked, "--format", "json"])
        assert r.exit_code == 0, (asked, r.output)
        assert json.loads(r.stdout)["metric"] == stored
        r = runner.invoke(app, ["plan", str(out), "--metric", asked, "--format", "json"])
        assert r.exit_code == 0, (asked, r.output)
        assert json.loads(r.stdout)["metric"] == stored


def test_trec_eval_names_keep_their_case_and_others_are_one_line(every_name, tmp_path):
    out, _ = every_name
    r = runner.invoke(app, ["compare", str(out), "--metric", "p_5"])
    assert r.exit_code == 2 and "unknown metric 'p_5'" in r.output  # P_5, as trec_eval
    r = runner.invoke(app, ["compare", str(out), "--metric", "P_3"])
    assert r.exit_code == 2 and "'P_3' was not computed" in r.output
    assert len([x for x in r.output.splitlines() if x.strip()]) == 1


@pytest.mark.parametrize("measures", [" , ", ",", " ", ",,"])
def test_an_empty_measure_list_is_one_line_and_exit_2(judged, tmp_path, measures):
    root, _, _ = judged
    r = _evaluate(root, tmp_path / "res", "--measures", measures)
    assert r.exit_code == 2
    lines = [x for x in r.output.splitlines() if x.strip()]
    assert len(lines) == 1 and "--measures" in lines[0] and "names nothing" in lines[0], r.output
    assert not (tmp_path / "res").exists()


def test_a_measure_named_twice_is_one_line_and_exit_2(judged, tmp_path):
    root, _, _ = judged
    r = _evaluate(root, tmp_path / "res", "--measures", "P_5,map,precision@5")
    assert r.exit_code == 2 and "name precision@5 twice ('P_5' and 'precision@5')" in r.output
    assert not (tmp_path / "res").exists()


# ---------------------------------------------------------------------------
# trec_eval mode crossed with every gain, ideal and relevance level, on qrels with
# negative grades: trec_eval's numbers where it has the setting, the definitions else

GAINS = [None, "exponential", "linear"]
IDEALS = ["judged", "returned"]


def _ndcg(ranked, judged_grades, k, gain, ideal):
    """nDCG@k by its definition: ``gain`` of each grade (negatives as 0) over
    log2(rank + 1), divided by the same sum over the ideal order."""
    g = (lambda x: 2.0**x - 1.0) if gain == "exponential" else float

    def dcg(grades):
        return sum(g(max(x, 0)) / np.log2(i + 2) for i, x in enumerate(grades[:k]))

    source = ranked if ideal == "returned" else [x for x in judged_grades if x > 0]
    best = dcg(sorted((max(x, 0) for x in source), reverse=True))
    return dcg(ranked) / best if best else 0.0


@pytest.mark.parametrize("compat", MODES)
@pytest.mark.parametrize("gain", GAINS)
@pytest.mark.parametrize("ideal", IDEALS)
@pytest.mark.parametrize("level", [1, 2, 3])
def test_every_gain_ideal_and_level_in_either_mode(judged, compat, gain, ideal, level):
    from ragmeter.scoring.trec import Qrels, Run, evaluate_run

    _, qrels, runs = judged
    measures = [*TREC_NAMES]
    args = {"level": level, "gain": gain, "ideal": ideal, "trec_eval_compat": compat}
    if compat and (gain == "exponential" or ideal == "returned"):
        with pytest.raises(InputError, match="trec_eval compatibility uses"):
            evaluate_run(Run.from_dict(runs["alpha"]), Qrels.from_dict(qrels), measures, **args)
        return
    ours = evaluate_run(Run.from_dict(runs["alpha"]), Qrels.from_dict(qrels), measures, **args)
    used_gain = gain or ("linear" if compat else "exponential")
    pytrec_eval = pytest.importorskip("pytrec_eval")
    theirs = pytrec_eval.RelevanceEvaluator(
        qrels, {_pytrec_name(n) for n in TREC_NAMES}, relevance_level=level
    ).evaluate(runs["alpha"])
    for name in TREC_NAMES:
        m = Metric.parse(name)
        got = ours.scores[_stored(name, compat)]
        for i, q in enumerate(ours.query_ids):
            if m.family != "ndcg":  # binary measures: trec_eval's at this level
                want = theirs[q][name]
            elif used_gain == "linear" and ideal == "judged":  # trec_eval's nDCG
                want = theirs[q][name]
            else:
                ranked = [qrels[q].get(d, 0) for d in runs["alpha"][q]]
                want = _ndcg(ranked, list(qrels[q].values()), m.k or 10**6, used_gain, ideal)
            assert got[i] == pytest.approx(want, abs=1e-9), (q, name)


def test_compat_mode_refuses_another_gain_or_ideal_in_one_line(judged, tmp_path):
    root, _, _ = judged
    for extra in (["--gain", "exponential"], ["--ideal", "returned"]):
        r = _evaluate(root, tmp_path / "res", "--trec-eval-compat", *extra)
        assert r.exit_code == 2 and "trec_eval compatibility uses" in r.output, extra
        assert len([x for x in r.output.splitlines() if x.strip()]) == 1
        assert not (tmp_path / "res").exists()
    r = _evaluate(root, tmp_path / "res", "--trec-eval-compat", "--gain", "linear")
    assert r.exit_code == 0, r.output


# ---------------------------------------------------------------------------
# the exact interval travels: every view shows the interval the terminal shows


def _hits(tmp_path, n: int, misses: dict[str, int]) -> list[str]:
    """``n`` queries with one relevant document; run ``name`` misses the first
    ``misses[name]`` of them at rank 1 (and finds it at rank 2)."""
    (tmp_path / "qrels.txt").write_text("".join(f"q{i} 0 d{i} 1\n" for i in range(n)))
    files = []
    for name, miss in misses.items():
        lines = []
        for i in range(n):
            order = ["x", "d"] if i < miss else ["d", "x"]
            lines += [f"q{i} Q0 {x}{i} {r} {3 - r} {name}\n" for r, x in enumerate(order, 1)]
        (tmp_path / f"{name}.run").write_text("".join(lines))
        files.append(str(tmp_path / f"{name}.run"))
    return ["evaluate", "--qrels", str(tmp_path / "qrels.txt"), *files, "--rounds", "300"]


def test_csv_json_and_markdown_carry_the_exact_interval(tmp_path):
    from ragmeter.stats.exact import clopper_pearson

    args = _hits(tmp_path, 30, {"all": 0, "most": 10})
    low, high = clopper_pearson(30, 30)
    shown = {}
    for fmt in ("table", "csv", "json", "markdown"):
        r = runner.invoke(
            app, [*args, "--measures", "hit@1,map", "--no-history", "--out", str(tmp_path / fmt),
                  "--format", fmt],
        )  # fmt: skip
        assert r.exit_code == 0, r.output
        shown[fmt] = r.stdout
    assert f"1.000 [{low:.3f}, 1.000] exact" in shown["table"]  # evaluate prints 0-1
    assert f"1.000 [{low:.3f}, 1.000] exact" in shown["markdown"]
    rows = {(x["system"], x["metric"]): x for x in csv.DictReader(io.StringIO(shown["csv"]))}
    row = rows[("all", "hit@1")]
    assert (float(row["low"]), float(row["high"]), row["interval"]) == (low, high, "exact")
    assert rows[("most", "hit@1")]["interval"] == "bootstrap"
    est = json.loads(shown["json"])["estimates"]["all"]["hit@1"]
    assert est["exact"] == [low, high] and est["exact_method"] == "clopper-pearson"
    res = Results(tmp_path / "csv")
    boot = res.summary.estimates["most"]["hit@1"]
    assert float(rows[("most", "hit@1")]["low"]) == boot.low  # the bootstrap where shown


def test_the_sample_size_table_shows_the_exact_interval_on_two_questions(tmp_path):
    from ragmeter.stats.exact import clopper_pearson

    args = _hits(tmp_path, 2, {"all": 0})
    r = runner.invoke(app, [*args, "--no-history", "--out", str(tmp_path / "res")])
    assert r.exit_code == 0, r.output
    assert "[1.000, 1.000]" not in r.stdout and "± 0.000" not in r.stdout
    for n in (2, 4, 8, 16):  # every projected size: half the exact interval of n hits of n
        low = clopper_pearson(n, n)[0]
        assert f"{(1.0 - low) / 2:.3f} exact" in r.stdout, n
    rows = Results(tmp_path / "res").summary.sample_size["all"]
    assert [r.exact for r in rows] == [clopper_pearson(n, n) for n in (2, 4, 8, 16)]


def test_search_csv_carries_the_exact_interval(tmp_path, monkeypatch):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    from test_small_corpora import write_case

    from ragmeter.stats.exact import clopper_pearson

    write_case(tmp_path, 9)  # every system finds every answer
    monkeypatch.chdir(tmp_path)
    r = runner.invoke(
        app, ["search", "--strategies", "fixed", "--rounds", "200", "--no-history",
              "--format", "csv"],
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    row = next(x for x in csv.DictReader(io.StringIO(r.stdout)) if x["metric"] == "recall@5")
    assert float(row["low"]) == clopper_pearson(9, 9)[0] and row["interval"] == "exact"


def test_history_export_and_plan_carry_the_exact_interval(tmp_path, monkeypatch):
    from ragmeter.stats.exact import clopper_pearson, questions_for_exact_half_width

    monkeypatch.setenv("RAGMETER_HISTORY", str(tmp_path / "hist"))
    args = _hits(tmp_path, 30, {"all": 0, "most": 10})
    out = tmp_path / "res"
    r = runner.invoke(app, [*args, "--measures", "hit@1,map", "--out", str(out)])
    assert r.exit_code == 0, r.output
    low, high = clopper_pearson(30, 30)
    r = runner.invoke(app, ["history", "export"])
    assert r.exit_code == 0, r.output
    rows = {(x["system"], x["metric"]): x for x in csv.DictReader(io.StringIO(r.stdout))}
    row = rows[("all", "hit@1")]
    assert (float(row["low"]), float(row["high"]), row["interval"]) == (low, high, "exact")
    # plan: more questions narrow the exact interval, and the tables say by how much
    r = runner.invoke(app, ["plan", str(out), "--metric", "hit@1", "--rounds", "300"])
    assert r.exit_code == 0, r.output
    assert "no number of questions narrows it" not in r.output
    assert "planned on the exact 95% (Clopper-Pearson) interval" in " ".join(r.stderr.split())
    needed = questions_for_exact_half_width(30, 30, 0.04)
    need_row = next(x for x in r.stdout.splitlines() if x.startswith("│ all ") and "[" not in x)
    assert need_row.split("│")[2].strip() == str(needed)
    assert f"[{low * 100:.1f}, 100.0] exact" in r.stdout
    md = runner.invoke(app, ["plan", str(out), "--metric", "hit@1", "--format", "markdown"])
    assert md.exit_code == 0, md.output
    line = next(x for x in md.stdout.splitlines() if x.startswith("| all "))
    assert " 0.0 " not in line and f"{(high - low) / 2 * 100:.1f}" in line and str(needed) in line
    r = runner.invoke(app, ["plan", str(out), "--metric", "hit@1", "--format", "csv"])
    row = next(x for x in csv.DictReader(io.StringIO(r.stdout)) if x["a"] == "all")
    assert (float(row["low"]), row["interval"], row["questions"]) == (low, "exact", str(needed))


def test_the_report_history_band_is_the_exact_interval(tmp_path, monkeypatch):
    from ragmeter.report.history import load_history
    from ragmeter.stats.exact import clopper_pearson

    monkeypatch.setenv("RAGMETER_HISTORY", str(tmp_path / "hist"))
    args = _hits(tmp_path, 30, {"all": 0, "most": 10})
    for out in ("e1", "e2"):
        r = runner.invoke(app, [*args, "--measures", "hit@1,map", "--out", str(tmp_path / out)])
        assert r.exit_code == 0, r.output
    data = load_history(Results(tmp_path / "e2"), tmp_path / "hist")
    assert data is not None and data["metric"] == "hit@1"
    low = clopper_pearson(30, 30)[0]
    for point in data["series"]["all"]:
        assert point["low"] == pytest.approx(low * 100) and point["high"] == 100.0
        assert point["interval"] == "exact" and point["shown"].endswith("exact")


def test_history_export_scores_as_csv_carries_every_score(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGMETER_HISTORY", str(tmp_path / "hist"))
    args = _hits(tmp_path, 6, {"all": 0, "most": 2})
    out = tmp_path / "res"
    r = runner.invoke(app, [*args, "--measures", "hit@1,map", "--out", str(out)])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["history", "export", "--scores"])
    assert r.exit_code == 0, r.output
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    res = Results(out)
    want = {
        (s, m, q): v
        for s in res.systems
        for m in res.metrics
        for q, v in zip(res.question_ids, res.scores(s, m).tolist(), strict=True)
    }
    got = {
        (x["system"], x["metric"], x["question"]): float(x["score"]) for x in rows if x["question"]
    }
    assert got == want and len(want) == 2 * 2 * 6
    estimates = [x for x in rows if not x["question"]]  # one per system and metric, as before
    assert len(estimates) == 4 and all(x["mean"] and not x["score"] for x in estimates)


def test_the_report_sample_size_plans_a_flat_share_as_plan_does(tmp_path):
    from ragmeter.report.data import report_data
    from ragmeter.stats.exact import clopper_pearson, questions_for_exact_half_width

    args = _hits(tmp_path, 30, {"all": 0, "most": 10})
    out = tmp_path / "res"
    r = runner.invoke(app, [*args, "--measures", "hit@1,map", "--no-history", "--out", str(out)])
    assert r.exit_code == 0, r.output
    data = report_data(Results(out), target_half_width=0.04)["sample_size"]
    flat = next(s for s in data["systems"] if s["system"] == "all")
    assert flat["needed"] == questions_for_exact_half_width(30, 30, 0.04)  # was 1
    assert flat["rows"][0]["low"] == pytest.approx(clopper_pearson(30, 30)[0], abs=1e-3)
    assert flat["rows"][0]["half_width"] > 0  # never ± 0


def test_compat_mode_prints_trec_eval_shares_in_percent(files, tmp_path):
    """``P_10`` is precision@10 under trec_eval's name: a share, so its comparisons print
    in points (evaluate's and compare's) and an estimate of it in percent, as for
    ``precision@10`` (evaluate's own table of means keeps trec_eval's 0-1)."""
    from ragmeter.comparison.formatting import format_estimate, shown_difference

    root, _, _ = files
    out = tmp_path / "compat"
    r = runner.invoke(
        app,
        [
            "evaluate",
            "--qrels",
            str(root / "qrels.txt"),
            str(root / "bm25.run"),
            str(root / "dense.run"),
            "--trec-eval-compat",
            "--measures",
            "P_10,map",
            "--metric",
            "P_10",
            "--rounds",
            "200",
            "--out",
            str(out),
        ],
    )
    assert r.exit_code == 0, r.output
    summary = Results(out).summary
    assert "Paired comparisons on P_10 (A - B, points;" in r.stdout, r.stdout
    assert shown_difference(summary.comparisons[0], "precision@10") in r.stdout, r.stdout
    shown = runner.invoke(app, ["compare", str(out)])
    assert shown.exit_code == 0, shown.output
    assert shown_difference(summary.comparisons[0], "precision@10") in shown.stdout
    est = summary.estimates["dense"]["P_10"]
    assert format_estimate(est, "P_10") == format_estimate(est, "precision@10")
    assert format_estimate(est, "P_10").startswith(f"{est.mean * 100:.1f} [")


def test_no_report_leaves_the_page_for_ragmeter_report_and_changes_no_result(
    files, tmp_path, monkeypatch
):
    import importlib

    # the module's name sweeps turn the page off (fixture no_report): here it is on
    real = importlib.import_module("ragmeter.cli.app").refresh_report
    monkeypatch.setattr("ragmeter.cli.evaluate.refresh_report", real)
    root, _, _ = files
    base = ["evaluate", "--qrels", str(root / "qrels.txt"), str(root / "bm25.run")]
    base += [str(root / "dense.run"), "--rounds", "300", "--no-history"]
    with_page, without = tmp_path / "with", tmp_path / "without"
    assert runner.invoke(app, [*base, "--out", str(with_page)]).exit_code == 0
    r = runner.invoke(app, [*base, "--out", str(without), "--no-report"])
    assert r.exit_code == 0, r.output
    assert (with_page / "report.html").exists() and not (without / "report.html").exists()
    assert f"ragmeter report {without}" in " ".join(r.stderr.split())
    for name in ("summary.json", "scores.json"):  # the same results, page or not
        assert (without / name).read_bytes() == (with_page / name).read_bytes()
    assert runner.invoke(app, ["report", str(without)]).exit_code == 0
    assert (without / "report.html").exists()

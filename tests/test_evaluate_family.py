"""``ragmeter evaluate --baseline / --pairs / --adjust``: many submissions compared with one
run or in planned pairs, under any rule, alone and with the other run options."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from ragmeter.cli import app
from ragmeter.runs.results import Results

runner = CliRunner()
RUNS = ("a", "b", "c", "d")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("family")
    rng = np.random.default_rng(3)
    lines = []
    for q in range(60):
        lines += [f"{q} 0 D{q}-{j} {int(rng.integers(0, 3))}\n" for j in range(8)]
    (root / "qrels.txt").write_text("".join(lines))
    for shift, name in enumerate(RUNS):  # run d ranks the judged documents first
        rows = []
        for q in range(60):
            docs = [f"D{q}-{j}" for j in rng.permutation(12)]
            if name == "d":
                docs.sort(key=lambda d: int(d.split("-")[1]) >= 8)
            rows += [f"{q} Q0 {d} {r} {30 - r + shift} {name}\n" for r, d in enumerate(docs, 1)]
        (root / f"{name}.run").write_text("".join(rows))
    return root


def _evaluate(root, out, *flags):
    args = ["evaluate", "--qrels", str(root / "qrels.txt"), *(str(root / f"{n}.run") for n in RUNS)]
    args += ["--measures", "ndcg@10,recall@5", "--rounds", "200", "--no-history", "-o", str(out)]
    return runner.invoke(app, [*args, *flags])


def _table(out):
    summary = Results(out).summary
    return summary.comparison_rule, [(r.a, r.b) for r in summary.comparisons]


FAMILIES = [
    # flags, the family the rule names, the pairs compared (as the table orders them)
    (["--baseline", "a"], "every system against a", [("b", "a"), ("c", "a"), ("d", "a")]),
    (["--pairs", "d:a,b:c"], "planned pairs", [("d", "a"), ("b", "c")]),
    ([], "all pairs", [("a", "b"), ("a", "c"), ("a", "d"), ("b", "c"), ("b", "d"), ("c", "d")]),
]


@pytest.mark.parametrize("adjust", ["maxt", "holm", "fdr", "none"])
@pytest.mark.parametrize(("flags", "family", "pairs"), FAMILIES, ids=["baseline", "pairs", "all"])
def test_each_family_compares_its_pairs_under_each_rule(
    files, tmp_path, flags, family, pairs, adjust
):
    r = _evaluate(files, tmp_path / "res", *flags, "--adjust", adjust)
    assert r.exit_code == 0, r.output
    rule, compared = _table(tmp_path / "res")
    assert rule.adjust == adjust and rule.family == family
    assert compared == pairs
    assert family in " ".join(r.stdout.split())


def test_compare_reads_the_baseline_evaluate_chose(files, tmp_path):
    out = tmp_path / "res"
    assert _evaluate(files, out, "--baseline", "b", "--adjust", "holm").exit_code == 0
    r = runner.invoke(app, ["compare", str(out), "--format", "json"])
    assert r.exit_code == 0, r.output
    table = json.loads(r.stdout)
    assert table["rule"]["family"] == "every system against b"
    assert table["rule"]["adjust"] == "holm"
    assert sorted((x["a"], x["b"]) for x in table["rows"]) == [("a", "b"), ("c", "b"), ("d", "b")]


def test_a_baseline_with_workers_no_report_and_json_gives_the_same_results(files, tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    assert _evaluate(files, one, "--baseline", "c").exit_code == 0
    r = _evaluate(
        files, two, "--baseline", "c", "--workers", "2", "--no-report", "--format", "json"
    )
    assert r.exit_code == 0, r.output
    assert not (two / "report.html").exists()
    for name in ("summary.json", "scores.json"):
        assert (two / name).read_bytes() == (one / name).read_bytes()
    printed = json.loads(r.stdout)
    assert {(x["a"], x["b"]) for x in printed["comparisons"]} == {
        ("a", "c"),
        ("b", "c"),
        ("d", "c"),
    }


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--baseline", "bb"], "unknown system 'bb'"),
        (["--pairs", "a:zz"], "unknown system 'zz'"),
        (["--baseline", "a", "--pairs", "b:c"], "give a baseline or planned pairs, not both"),
        (["--adjust", "bonferroni"], "adjust must be one of"),
        (["--pairs", "ab"], "a planned pair is written A:B, got 'ab'"),
        (["--pairs", "a:b,b:a"], "planned pair b:a is given twice"),
    ],
)
def test_a_bad_family_is_one_line_exit_2_and_nothing_written(files, tmp_path, flags, message):
    r = _evaluate(files, tmp_path / "res", *flags)
    assert r.exit_code == 2, r.output
    errors = [x for x in r.stderr.splitlines() if x.startswith("error:")]
    assert len(errors) == 1 and message in " ".join(r.stderr.split()), r.stderr
    assert "Traceback" not in r.output
    assert not (tmp_path / "res").exists()

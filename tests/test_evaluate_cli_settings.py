"""``ragmeter evaluate`` from the command line: the defaults it records (seed 1, the
run kept in the history), the settings it passes on (ideal, method), the notes on
queries missing from a run or without judgments (counted, listed up to ten), the
table's right-aligned measures, the sample-size tables of the first three runs, and
where the results went."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from ragmeter.cli import app
from ragmeter.history.store import HistoryStore
from ragmeter.runs.results import Results

runner = CliRunner()
RUNS = ("a", "b", "c", "d")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """30 judged queries q0..q29, each with three relevant documents of grade 1 or 2;
    four runs: a ranks the three first, b, c and d five of the eight documents in a
    random order; c misses q0 and q1, d misses q0..q11 and ranks two unjudged queries."""
    root = tmp_path_factory.mktemp("ev")
    rng = np.random.default_rng(5)
    qids = [f"q{i}" for i in range(30)]
    (root / "qrels.txt").write_text(
        "".join(f"{q} 0 {q}-r{j} {1 + (j + i) % 2}\n" for i, q in enumerate(qids) for j in range(3))
    )
    for run in RUNS:
        lines = []
        for q in qids:
            if (run == "c" and q in ("q0", "q1")) or (run == "d" and int(q[1:]) < 12):
                continue
            docs = [f"{q}-r{j}" for j in range(3)] + [f"{q}-x{j}" for j in range(5)]
            order = docs if run == "a" else list(rng.permutation(docs))[:5]
            lines += [f"{q} Q0 {d} {r} {20.0 - r} {run}\n" for r, d in enumerate(order, 1)]
        if run == "d":
            lines += ["u1 Q0 z 1 1.0 d\n", "u2 Q0 z 1 1.0 d\n"]
        (root / f"{run}.run").write_text("".join(lines))
    return root


def _evaluate(root, out, *flags, runs=RUNS):
    args = ["evaluate", "--qrels", str(root / "qrels.txt"), *(str(root / f"{r}.run") for r in runs)]
    result = runner.invoke(app, [*args, "--rounds", "200", "--out", str(out), *flags])
    assert result.exit_code == 0, result.output
    return result


def test_the_notes_count_and_list_the_queries(files, tmp_path):
    result = _evaluate(files, tmp_path / "res")
    out = " ".join(result.stdout.split())
    assert "30 judged queries, 4 runs" in out
    assert (
        "c: 2 judged queries are not in the run and score 0 (as trec_eval -c); ids: q0, q1" in out
    )
    # twelve missing: the first ten listed, the rest counted
    listed = ", ".join(sorted(f"q{i}" for i in range(12))[:10])  # q0, q1, q10, q11, q2...
    assert (
        "d: 12 judged queries are not in the run and score 0 (as trec_eval -c); "
        f"ids: {listed} and 2 more"
    ) in out
    assert "d: 2 run queries have no judgments and are left out; ids: u1, u2" in out
    # one sample-size table, a row for each of the four runs
    assert out.count("Sample size on") == 1 and "Sample sizes of the other" not in out
    assert f"Results: {tmp_path / 'res'}" in result.stdout


def test_three_runs_share_one_sample_size_table(files, tmp_path):
    result = _evaluate(files, tmp_path / "res", runs=RUNS[:3])
    out = " ".join(result.stdout.split())
    assert out.count("Sample size on") == 1 and "Sample size:" not in out


def test_the_measures_are_right_aligned_in_the_table(files, tmp_path):
    result = _evaluate(files, tmp_path / "res", "--measures", "map,ndcg@10", runs=["a", "b"])
    lines = result.stdout.splitlines()
    heading = next(line for line in lines if "ndcg@10" in line and "┃" in line)
    row = next(line for line in lines if line.startswith("│ b "))
    for line, bar in ((heading, "┃"), (row, "│")):
        run, *measures = line.split(bar)[1:-1]
        assert run.startswith(" ") and run[1] != " "  # the run's name: left-aligned
        assert all(cell.endswith(" ") and cell[-2] != " " for cell in measures), line


def test_defaults_seed_1_and_the_run_kept_in_the_history(files, tmp_path, monkeypatch):
    monkeypatch.setenv("RAGMETER_HISTORY", str(tmp_path / "history"))
    _evaluate(files, tmp_path / "res", runs=["a", "b"])
    summary = json.loads((tmp_path / "res" / "summary.json").read_text())
    assert summary["seed"] == 1
    with HistoryStore(tmp_path / "history", create=False) as store:
        (run,) = store.runs()
    assert run.command == "evaluate"
    _evaluate(files, tmp_path / "again", "--no-history", runs=["a", "b"])
    with HistoryStore(tmp_path / "history", create=False) as store:
        assert len(store.runs()) == 1


def test_the_ideal_and_the_interval_method_are_passed_on(files, tmp_path):
    _evaluate(files, tmp_path / "judged", runs=["b"])
    _evaluate(files, tmp_path / "returned", "--ideal", "returned", "--method", "bca", runs=["b"])
    judged, res = Results(tmp_path / "judged"), Results(tmp_path / "returned")
    assert res.meta["measurement"]["ideal"] == "returned"
    assert not np.allclose(res.scores("b", "ndcg@10"), judged.scores("b", "ndcg@10"))
    summary = json.loads((tmp_path / "returned" / "summary.json").read_text())
    assert summary["method"] == "bca"


def test_markdown_and_csv_go_to_stdout_alone(files, tmp_path):
    md = _evaluate(files, tmp_path / "md", "--format", "markdown", "--measures", "map", runs=["a"])
    assert [" ".join(line.split()) for line in md.stdout.splitlines()[:3]] == [
        "**Mean over queries [95% interval]**",
        "",
        "| run | map |",
    ]
    assert "Results:" in md.stderr and "Results:" not in md.stdout
    rows = _evaluate(files, tmp_path / "csv", "--format", "csv", "--measures", "map", runs=["a"])
    header, row = rows.stdout.splitlines()
    assert header.startswith("system,metric,mean,low,high") and row.startswith("a,map,1.0,")


def test_the_relevance_level_is_passed_on(files, tmp_path):
    _evaluate(files, tmp_path / "res", "--level", "2", runs=["a"])
    assert Results(tmp_path / "res").meta["measurement"]["relevant_grade"] == 2


def test_the_bar_names_each_run_file_as_it_is_read(files, tmp_path, monkeypatch):
    from rich.progress import Progress

    from ragmeter.cli import evaluate

    seen = []

    class Recording(Progress):
        def update(self, task, **fields):
            seen.append(fields.get("description"))
            super().update(task, **fields)

    monkeypatch.setattr(evaluate, "_progress", lambda: Recording(disable=True))
    _evaluate(files, tmp_path / "res", runs=["a", "b"])
    assert seen == ["read a.run", "read b.run", "intervals"]

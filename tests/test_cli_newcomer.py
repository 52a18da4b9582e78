"""The command line as a newcomer meets it: chunk reads the config, plan warns, --version,
plurals, metavars, units, the export command."""

import subprocess
import sys

from typer.testing import CliRunner

from ragmeter.cli import app

runner = CliRunner()

CONFIG = """
[corpus]
path = "docs"
[[strategy]]
name = "fixed-7"
kind = "fixed"
size = 7
"""


def write_corpus(root):
    (root / "docs").mkdir()
    (root / "docs" / "a.md").write_text(" ".join(f"alpha{i}" for i in range(20)))
    (root / "docs" / "b.md").write_text(" ".join(f"beta{i}" for i in range(5)))
    (root / "ragmeter.toml").write_text(CONFIG)


def test_chunk_reads_the_config_in_the_current_folder(tmp_path, monkeypatch):
    write_corpus(tmp_path)
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["chunk", "-s", "fixed-7", "--show", "1"])
    assert result.exit_code == 0, result.output
    # The config's corpus (2 documents), cut by the config's strategy: 20 words -> 7+7+6, 5 -> 5.
    assert "fixed-7: 2 documents" in result.stdout
    row = next(line for line in result.stdout.splitlines() if line.startswith("│"))
    assert [cell.strip() for cell in row.split("│")[1:6]] == ["4", "5", "6", "7", "25"]


def test_chunk_takes_an_explicit_config(tmp_path, monkeypatch):
    write_corpus(tmp_path)
    monkeypatch.chdir(tmp_path.parent)
    result = runner.invoke(
        app, ["chunk", "--config", str(tmp_path / "ragmeter.toml"), "-s", "fixed-7", "--show", "0"]
    )
    assert result.exit_code == 0, result.output
    assert "fixed-7: 2 documents" in result.stdout


def test_chunk_without_the_strategy_in_a_config_is_one_line_exit_2(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["chunk", "-s", "fixed-7"])
    assert result.exit_code == 2
    assert "unknown chunking strategy 'fixed-7'" in result.stderr


def test_strategy_list_gives_every_builtin_with_its_size_in_words(tmp_path, monkeypatch):
    write_corpus(tmp_path)
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["chunk", "--list"])
    assert result.exit_code == 0, result.output
    lines = {line.split("│")[1].strip(): line for line in result.stdout.splitlines() if "│" in line}
    from ragmeter.chunking.strategies import STRATEGIES

    for name in STRATEGIES:
        assert name in lines
    assert "200 words" in lines["fixed"] and "200 words, 100 shared" in lines["overlap"]
    assert "parents 400 / children 100 words" in lines["parent-400"]
    assert "7 words" in lines["fixed-7"] and "ragmeter.toml" in lines["fixed-7"]


def small_results(tmp_path, monkeypatch):
    """A search on 9 short documents: every system finds every answer at once."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    from test_small_corpora import write_case

    write_case(tmp_path, 9)
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["search", "--strategies", "fixed,sentence", "--rounds", "200"])
    assert result.exit_code == 0, result.output
    return tmp_path / "ragmeter-results"


def test_plan_warns_instead_of_answering_one_question(tmp_path, monkeypatch):
    out = small_results(tmp_path, monkeypatch)
    result = runner.invoke(app, ["plan", str(out), "--rounds", "200"])
    assert result.exit_code == 0, result.output
    # 9 of 9: planned on the exact interval, which more questions narrow
    assert "fixed, sentence score 100% on every question: planned on the exact 95%" in (
        " ".join(result.stderr.split())
    )
    assert "no spread" not in result.stderr
    assert "1 pair of systems score the same on every question (fixed = sentence)" in (
        result.stderr
    )
    rows = [line for line in result.stdout.splitlines() if line.startswith("│")]
    assert any("exact" in r for r in rows) and any("identical" in r for r in rows)
    # No row claims that one question would do.
    last_cells = [[c.strip() for c in r.split("│")][-2] for r in rows]
    assert "1" not in last_cells


def test_plan_speaks_in_points_only_for_shares(tmp_path, monkeypatch):
    out = small_results(tmp_path, monkeypatch)
    shares = runner.invoke(app, ["plan", str(out), "--rounds", "200"])
    assert "for ± 4 points" in shares.stdout and "difference of 5 points" in shares.stdout
    mrr = runner.invoke(app, ["plan", str(out), "--metric", "mrr@10", "--rounds", "200"])
    assert mrr.exit_code == 0, mrr.output
    assert "points" not in mrr.stdout and "for ± 0.04" in mrr.stdout


def test_export_writes_trec_files_that_trec_eval_scores_as_ragmeter_does(tmp_path, monkeypatch):
    pytrec_eval = __import__("pytest").importorskip("pytrec_eval")
    import json

    from ragmeter.retrieval.trec import read_qrels, read_run

    monkeypatch.chdir(tmp_path)
    out = tmp_path / "res"
    result = runner.invoke(
        app, ["search", "--strategies", "overlap,parent-400", "--rounds", "200", "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["export", str(out), "--run", "run.txt", "--qrels", "qrels.txt"])
    assert result.exit_code == 0, result.output
    assert "Wrote 4 files" in result.stdout  # a run and its judgments per system
    scores = json.loads((out / "scores.json").read_text())
    for system in ("overlap", "parent-400"):
        qrels = read_qrels(f"qrels.{system}.txt")
        run = {q: dict(items) for q, items in read_run(f"run.{system}.txt").items()}
        evaluator = pytrec_eval.RelevanceEvaluator(
            qrels, {"success_1", "success_5", "recip_rank"}, relevance_level=2
        )
        measured = evaluator.evaluate(run)
        values = scores["values"][system]
        for i, qid in enumerate(scores["questions"]):
            m = measured.get(qid, {"success_1": 0.0, "success_5": 0.0, "recip_rank": 0.0})
            assert m["success_1"] == values["recall@1"][i]
            assert m["success_5"] == values["recall@5"][i]
            assert abs(m["recip_rank"] - values["mrr@10"][i]) < 1e-9


def test_export_needs_something_to_write(tmp_path):
    result = runner.invoke(app, ["export", str(tmp_path)])
    assert result.exit_code == 2 and "give --run PATH, --qrels PATH or both" in result.stderr


def test_help_shows_values_not_types():
    result = runner.invoke(app, ["report", "--help"], env={"COLUMNS": "100"})
    text = result.stdout
    assert "report [OPTIONS] RESULTS" in text and "{results}" not in text
    assert "<bool>" not in text and "<path>" not in text
    open_row = next(line for line in text.splitlines() if "--open" in line)
    assert open_row.split("--open")[1].split()[0] == "Open"  # a flag: no value shown
    out_row = next(line for line in text.splitlines() if "--out" in line)
    assert "PATH" in out_row
    text = runner.invoke(app, ["plan", "--help"], env={"COLUMNS": "100"}).stdout
    assert "--seed" in text and "INT" in text and "<int>" not in text


def test_the_missing_report_extra_hint_is_a_command_that_works(tmp_path, monkeypatch):
    from ragmeter.report import html

    def missing(*a, **k):
        raise html.ReportDependencyError("no altair")

    monkeypatch.setattr(html, "write_report", missing)
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["search", "--strategies", "whole", "--rounds", "200", "-o", "r"])
    assert result.exit_code == 0, result.output
    assert "then: ragmeter report r" in " ".join(result.stderr.split())


def test_rank_table_uses_the_largest_k_when_ks_lack_10():
    from rich.console import Console

    from ragmeter.cli import search_views as terminal
    from ragmeter.comparison.summary import Summary
    from ragmeter.stats import Estimate

    est = Estimate(0.5, 0.4, 0.6, n=10, rounds=100, seed=1, method="percentile", rng="mulberry32")
    names = [f"{m}@{k}" for m in ("recall", "precision", "mrr", "ndcg", "coverage") for k in (1, 3)]
    summary = Summary(estimates={"a": dict.fromkeys(names, est)})
    console = Console(width=200, record=True)
    console.print(terminal.rank_table(summary))
    text = console.export_text()
    assert "mrr@3" in text and "ndcg@3" in text and "precision@3" in text


def test_comparison_titles_say_points_only_for_shares():
    from rich.console import Console

    from ragmeter.cli import search_views as terminal

    console = Console(width=200, record=True)
    console.print(terminal.comparison_table([], "mrr@10", 1, 1000))
    console.print(terminal.comparison_table([], "recall@5", 1, 1000))
    text = console.export_text()
    assert "on mrr@10 (A - B; seed 1" in text and "on recall@5 (A - B, points; seed 1" in text


def test_python_dash_m_ragmeter_is_the_command():
    import ragmeter

    for module in ("ragmeter", "ragmeter.cli"):
        done = subprocess.run(
            [sys.executable, "-m", module, "--version"], capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        assert ragmeter.__version__ in done.stdout
    bad = subprocess.run(
        [sys.executable, "-m", "ragmeter", "evaluate", "--qrels", "no-such-qrels.txt", "x.run"],
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 2 and "no-such-qrels.txt" in bad.stdout + bad.stderr

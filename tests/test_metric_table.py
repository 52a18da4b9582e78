"""A metric family added as one row of the metric table (``scoring.names.FAMILIES``) and
nothing else: ``success``, computed as ``hit``, is scored by a search, stored in
scores.csv and summary.json, shown by ``compare``, gated by ``check`` and described to
the report's page, each with hit@k's values and a share's scale."""

from __future__ import annotations

import csv
import dataclasses
import json
from pathlib import Path

import pytest
from conftest import SMALL_EXAMPLE_QUESTIONS
from typer.testing import CliRunner

from ragmeter.cli import app
from ragmeter.cli.app import example_dir
from ragmeter.scoring import names

runner = CliRunner()

SUCCESS = dataclasses.replace(
    names.FAMILY["hit"], name="success", trec_cut=None, title="success@k (%)", order=9,
    computed_as="hit",
)  # fmt: skip
"""trec_eval's ``success_5`` stays hit@5's name; the row is only an alias family."""


@pytest.fixture
def with_success(monkeypatch):
    monkeypatch.setattr(names, "FAMILIES", (*names.FAMILIES, SUCCESS))


@pytest.fixture
def searched(with_success, tmp_path, monkeypatch):
    """``ragmeter search`` on the shipped example's first 8 questions at success@5: the
    results folder and what the search printed (recorded in a history of its own)."""
    blog = Path(example_dir())
    lines = (blog / "questions.jsonl").read_text().splitlines(keepends=True)
    (tmp_path / "q.jsonl").write_text("".join(lines[:SMALL_EXAMPLE_QUESTIONS]))
    monkeypatch.setenv("RAGMETER_HISTORY", str(tmp_path / "history"))
    out = tmp_path / "results"
    args = ["search", "--corpus", str(blog / "posts"), "--testset", str(tmp_path / "q.jsonl"),
            "--strategies", "sentence,recursive", "--ks", "1,5", "--metric", "success@5",
            "--rounds", "200", "-o", str(out)]  # fmt: skip
    got = runner.invoke(app, args, env={"COLUMNS": "200"})
    assert got.exit_code == 0, got.output
    return out, got.output


def test_an_alias_row_is_a_metric_name_while_the_table_holds_it(with_success):
    m = names.Metric.parse("success@5")
    assert (m.name, m.k, m.share, names.metric_scale("success@5")) == ("success", 5, True, (100, 1))
    assert names.find_metric("success@5", ["hit@5", "success@5"]) == "success@5"


def test_a_row_removed_from_the_table_is_no_name():
    with pytest.raises(names.InputError):
        names.Metric.parse("success@5")


def test_the_alias_is_scored_as_hit_at_every_cutoff(with_success):
    from ragmeter.scoring.metrics import score_questions

    grades = [[0, 2, 0], [2, 0, 0], [0, 0, 0], [1, 0, 2]]
    got = score_questions(grades, None, ks=(1, 2, 3))
    assert [m for m in got if m.startswith("success")] == ["success@1", "success@2", "success@3"]
    for k in (1, 2, 3):
        assert got[f"success@{k}"].tolist() == got[f"hit@{k}"].tolist()


def _invoke(*args):
    got = runner.invoke(app, [str(a) for a in args], env={"COLUMNS": "200"})
    assert got.exit_code == 0, got.output
    return got.output


def test_the_search_compares_systems_on_the_alias_in_points(searched):
    _, printed = searched
    assert "Paired comparisons on success@5 (A - B, points;" in printed
    assert "-12.5 [-47.1, +24.0]" in printed  # hit@5's difference, in points


def test_scores_csv_and_summary_json_hold_the_alias_with_hits_values(searched):
    out, _ = searched
    with (out / "scores.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert rows and all(r["success@5"] == r["hit@5"] for r in rows)
    assert {r["success@5"] for r in rows} == {"0.0", "1.0"}
    summary = json.loads((out / "summary.json").read_text())
    assert summary["metric"] == "success@5"
    for system, est in summary["estimates"].items():
        assert est["success@5"] == est["hit@5"], system


def test_compare_on_the_alias_prints_what_compare_on_hit_prints(searched):
    out, _ = searched
    alias = _invoke("compare", out)
    assert "success@5" in alias
    assert alias.replace("success@5", "hit@5") == _invoke("compare", out, "--metric", "hit@5")


def test_check_gates_the_alias_in_points(searched):
    out, _ = searched
    gate = _invoke("check", out, out, "--metric", "success@5", "--system", "sentence")
    assert "PASS success@5 sentence: candidate - baseline = +0.0 points" in gate
    hit = _invoke("check", out, out, "--metric", "hit@5", "--system", "sentence")
    assert gate.replace("success@5", "hit@5") == hit


def test_the_history_shows_the_recorded_alias_in_percent(searched):
    assert "success@5" in _invoke("history", "list")
    shown = _invoke("history", "show", "1")
    assert "75.0 [34.9, 96.8]" in shown and "87.5 [47.3, 99.7]" in shown


def test_the_report_page_is_told_the_alias_is_a_share(searched):
    from ragmeter.report.data import report_data
    from ragmeter.runs.results import Results

    out, _ = searched
    data = report_data(Results(out))
    info = data["metric_info"]["success@5"]
    assert (info["family"], info["k"], info["share"], info["cost"]) == ("success", 5, True, False)
    assert (info["scale"], info["digits"]) == (100, 1)
    # and what its differences print in: the page reads it, with no share list of its own
    assert (info["difference_scale"], info["difference_digits"]) == (100, 1)
    assert info["difference_unit"] == "points"
    assert data["families"][-1] == "success"  # its row's order: after words sent
    assert data["family_titles"]["success"] == "success@k (%)"
    assert '"success@5"' in (out / "report.html").read_text()

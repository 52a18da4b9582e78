"""A metric family added as one row of the metric table (``scoring.names.FAMILIES``) and
nothing else: ``success``, computed as ``hit``, is scored by a search, stored in
scores.csv and summary.json, shown by ``compare``, gated by ``check`` and described to
the report's page, each with hit@k's values and a share's scale."""

from __future__ import annotations

import csv
import dataclasses
import json

import pytest
from conftest import SMALL_EXAMPLE_QUESTIONS, SMALL_EXAMPLE_SETTINGS, save_example
from typer.testing import CliRunner

from ragmeter.cli import app
from ragmeter.scoring import names

runner = CliRunner()

SUCCESS = dataclasses.replace(
    names.FAMILY["hit"], name="success", trec_cut=None, title="success@k (%)", order=None,
    computed_as="hit",
)  # fmt: skip
"""trec_eval's ``success_5`` stays hit@5's name; the row is only an alias family."""


@pytest.fixture
def with_success(monkeypatch):
    monkeypatch.setattr(names, "FAMILIES", (*names.FAMILIES, SUCCESS))


@pytest.fixture
def success_results(with_success, tmp_path):
    settings = SMALL_EXAMPLE_SETTINGS | {"metric": "success@5"}
    return save_example(tmp_path / "results", SMALL_EXAMPLE_QUESTIONS, **settings)


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


def test_a_search_stores_the_alias_in_scores_csv_and_summary_json(success_results):
    with (success_results / "scores.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert rows and all(r["success@5"] == r["hit@5"] for r in rows)
    assert any(float(r["success@5"]) > 0 for r in rows)
    summary = json.loads((success_results / "summary.json").read_text())
    assert summary["metric"] == "success@5"
    assert "success@5" in json.dumps(summary)


def test_compare_and_check_show_and_gate_the_alias(success_results):
    shown = runner.invoke(app, ["compare", str(success_results)], env={"COLUMNS": "200"})
    assert shown.exit_code == 0, shown.output
    assert "success@5" in shown.output
    gate = runner.invoke(
        app,
        ["check", str(success_results), str(success_results), "--metric", "success@5",
         "--system", "sentence", "--rounds", "200"],
        env={"COLUMNS": "200"},
    )  # fmt: skip
    assert gate.exit_code == 0, gate.output
    assert "success@5" in gate.output
    assert "%" in gate.output or "point" in gate.output  # a share: in points, not 0.xxx


def test_the_report_page_is_told_the_alias_is_a_share(success_results):
    from ragmeter.report.data import report_data
    from ragmeter.runs.results import Results

    data = report_data(Results(success_results))
    info = data["metric_info"]["success@5"]
    assert (info["family"], info["k"], info["share"], info["cost"]) == ("success", 5, True, False)
    assert (info["scale"], info["digits"]) == (100, 1)

"""The report's charts draw and print what the tables print: an estimate's bar is the
interval its label shows (the exact one where there is one, comparison.formatting's
shown_interval), and a comparison's tooltip is the table's difference text
(shown_difference), not numbers formatted again."""

from __future__ import annotations

import copy

import pytest
from conftest import require
from report_systems import example_results


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    require("altair", "the HTML report needs the 'report' extra")
    from ragmeter.report.data import report_data
    from ragmeter.runs.results import Results

    return report_data(Results(example_results(tmp_path_factory.mktemp("shown"), 3)))


def _specs(data):
    from ragmeter.report.charts import chart_specs

    return chart_specs(data)


def _values(spec: dict) -> list[dict]:
    layers = spec.get("spec", spec).get("layer", [spec])
    for layer in [spec, *layers]:
        values = (layer.get("data") or {}).get("values")
        if values and "label" in values[0]:
            return values
    raise AssertionError("no labelled data")


def test_an_exact_interval_is_drawn_where_its_label_prints_it(data):
    data = copy.deepcopy(data)
    k = data["main_k"]
    system = data["systems"][0]["name"]
    est = data["estimates"][system][f"recall@{k}"]
    est["exact"] = [est["mean"] - 0.3, min(1.0, est["mean"] + 0.01)]
    specs = _specs(data)
    [forest] = [
        r
        for r in _values(specs["chart-forest"])
        if r["system"] == system and r["metric"] == f"recall@{k}"
    ]
    [words] = [r for r in _values(specs["chart-words"]) if r["system"] == system]
    for row in (forest, words):
        assert row["label"].endswith(" exact")
        assert row["low"] == pytest.approx(est["exact"][0] * 100)
        assert row["high"] == pytest.approx(est["exact"][1] * 100)
    assert words["hit"] == pytest.approx(est["mean"] * 100)


def test_a_comparison_tooltip_prints_the_tables_difference(data):
    if not data["comparisons"]:
        pytest.skip("the example compares no systems")
    spec = _specs(data)["chart-compare"]
    rows = _values(spec)
    assert [r["label"] for r in rows] == [c["shown"]["difference"] for c in data["comparisons"]]
    fields = [t["field"] for t in spec["layer"][1]["encoding"]["tooltip"]]
    assert fields == ["pair", "label", "verdict"]

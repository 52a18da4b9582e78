"""The report's run-history section: shown only for runs the history can compare with
this one; its data is the trend's (:mod:`ragmeter.history.trend`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import EXAMPLE, require, save_example
from typer.testing import CliRunner

from ragmeter.cli import app, example_dir
from ragmeter.history.store import HistoryStore, read_results_files
from ragmeter.report.history import DIRECTION_COLORS, history_chart, load_history
from ragmeter.runs.results import Results


def search(out: Path, size: int, questions: Path | None = None) -> Path:
    """The shipped example with a fixed-size strategy ``mine`` beside ``sentence``."""
    return save_example(
        out,
        strategies=("mine", "sentence"),
        custom_strategies=({"name": "mine", "kind": "fixed", "size": size},),
        rounds=1000,
        testset=str(questions or EXAMPLE / "questions.jsonl"),
    )


def keep(folder: Path, results: Path, commit: str) -> None:
    with HistoryStore(folder) as store:
        git = {"commit": commit * 10, "branch": "main", "dirty": False}
        store.add(
            read_results_files(results), command="search", results=str(results.resolve()), git=git
        )


def build_recorded(base: Path) -> tuple[Path, list[Path]]:
    """Three runs of one measurement at three commits, one on another test set."""
    folder = base / "history"
    runs = [search(base / f"r{i}", size) for i, size in enumerate((60, 200, 30))]
    subset = base / "subset.jsonl"
    lines = (example_dir() / "questions.jsonl").read_text().splitlines()[:30]
    subset.write_text("\n".join(lines) + "\n")
    other = search(base / "r_subset", 200, subset)
    for results, commit in zip([runs[0], runs[1], other, runs[2]], "abcd", strict=True):
        keep(folder, results, commit)
    return folder, runs


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> tuple[Path, list[Path]]:
    return build_recorded(tmp_path_factory.mktemp("history-report"))


def test_the_section_holds_the_comparable_runs_and_marks_this_one(recorded):
    folder, runs = recorded
    h = load_history(Results(runs[2]), folder)
    assert h is not None and h["metric"] == "recall@5"
    assert h["runs"] == 3 and h["other"] == 1  # the run on the subset is left out
    mine = h["series"]["mine"]
    assert [p["run"] for p in mine] == [1, 2, 4]
    assert [p["direction"] for p in mine] == ["first", "better", "worse"]
    assert [p["current"] for p in mine] == [False, False, True]
    assert mine[2]["change"]["earlier"] == 2 and mine[2]["change"]["shown"].startswith("-")
    assert [p["direction"] for p in h["series"]["sentence"]] == ["first", "no change", "no change"]


def test_no_section_without_comparable_runs(recorded, tmp_path):
    folder, runs = recorded
    assert load_history(Results(runs[0]), tmp_path / "none") is None  # no history file
    lone = tmp_path / "lone"
    keep(lone, runs[0], "e")
    assert load_history(Results(runs[0]), lone) is None  # one run: nothing to trend
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "history.sqlite").write_text("not a database")
    assert load_history(Results(runs[0]), bad) is None  # the report still renders


def test_a_rename_keeps_each_systems_runs_as_the_trend_does_and_lists_every_system(tmp_path):
    one = save_example(tmp_path / "one", strategies=("whole", "sentence", "recursive"))
    b03 = {"name": "bm25-b03", "kind": "bm25", "b": 0.3}
    more = ("whole", "sentence", "recursive", "parent-400", "parent-200")
    two = save_example(tmp_path / "two", strategies=more, retrievers=("bm25", b03))
    folder = tmp_path / "history"
    for results, commit in ((one, "a"), (two, "b"), (two, "c")):
        keep(folder, results, commit)
    h = load_history(Results(two), folder)
    assert h is not None and sorted(h["systems"]) == sorted(Results(two).systems)  # all 10
    for name in ("whole", "sentence", "recursive"):  # adding a retriever renamed them
        points = h["series"][f"{name}/bm25"]
        assert [p["run"] for p in points] == [1, 2, 3]
        assert [p["renamed_from"] for p in points] == [None, name, None]
        assert [p["direction"] for p in points] == ["first", "no change", "no change"]
        args = ["history", "trend", "--system", f"{name}/bm25", "--json"]
        shown = CliRunner().invoke(app, [*args, "--history", str(folder)])
        assert shown.exit_code == 0, shown.output
        assert [p["run"]["id"] for p in json.loads(shown.output)["points"]] == [1, 2, 3]
    assert [p["run"] for p in h["series"]["whole/bm25-b03"]] == [2, 3]


# The report's run-history section, pinned: the newest 20 comparable runs per system, only runs
# that measured the report's metric, the systems best first, the default system the best at the
# newest run, shares in percent and other measures as they are; and the trend chart's
# specification (band, line and coloured points over one data set, the system picked by a
# select, the tooltip's titles).


def search_ndcg(out: Path) -> Path:
    """The example measured at k = 10 only, by ndcg@10 (not a share)."""
    return save_example(
        out,
        strategies=("mine", "sentence"),
        custom_strategies=({"name": "mine", "kind": "fixed", "size": 500},),
        ks=(10,),
        metric="ndcg@10",
        rounds=1000,
    )


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    """``small``: ``mine`` (60 characters) well below ``sentence``; ``big``: ``mine`` (500)
    above it; ``ndcg``: another measure, without recall@5."""
    base = tmp_path_factory.mktemp("history-pins")
    return {
        "small": search(base / "small", 60),
        "big": search(base / "big", 500),
        "ndcg": search_ndcg(base / "ndcg"),
    }


def mean(results: Path, system: str, metric: str) -> float:
    return float(Results(results).scores(system, metric).mean())


def test_the_newest_twenty_runs_best_system_first(runs, tmp_path):
    small, big = runs["small"], runs["big"]
    assert mean(big, "mine", "recall@5") > mean(big, "sentence", "recall@5")
    folder = tmp_path / "history"
    keep(folder, small, "a")  # run 1: left out, 21 runs are comparable
    keep(folder, runs["ndcg"], "b")  # run 2: no recall@5, not a run of this metric
    for i in range(20):  # runs 3..22
        keep(folder, big, f"{i:x}")
    h = load_history(Results(big), folder)
    assert h is not None
    assert h["runs"] == 21 and h["other"] == 0
    assert h["systems"] == ["mine", "sentence"]  # the best by this run's mean first
    assert h["default"] == "mine"
    for system in ("mine", "sentence"):
        points = h["series"][system]
        assert [p["run"] for p in points] == list(range(3, 23))
        assert points[-1]["mean"] == pytest.approx(100 * mean(big, system, "recall@5"))
        assert points[-1]["low"] <= points[-1]["mean"] <= points[-1]["high"] <= 100


def test_the_default_system_is_the_best_at_the_newest_run(runs, tmp_path):
    small, big = runs["small"], runs["big"]
    folder = tmp_path / "history"
    keep(folder, big, "a")  # mine best here
    keep(folder, small, "b")  # sentence best here, the newest
    h = load_history(Results(small), folder)
    assert h is not None and h["default"] == "sentence"
    assert h["systems"] == ["sentence", "mine"]
    assert [p["direction"] for p in h["series"]["mine"]] == ["first", "worse"]


def test_a_measure_that_is_not_a_share_is_shown_as_it_is(runs, tmp_path):
    folder = tmp_path / "history"
    keep(folder, runs["ndcg"], "a")
    keep(folder, runs["ndcg"], "b")
    h = load_history(Results(runs["ndcg"]), folder)
    assert h is not None and h["metric"] == "ndcg@10" and h["share"] is False
    for system in ("mine", "sentence"):
        p = h["series"][system][-1]
        assert p["mean"] == pytest.approx(mean(runs["ndcg"], system, "ndcg@10"))
        assert 0 < p["low"] <= p["mean"] <= p["high"] <= 1


def history(share: bool = True) -> dict:
    def point(label: str, mean: float, current: bool, change: dict | None) -> dict:
        return {
            "label": label,
            "mean": mean,
            "low": mean - 5,
            "high": mean + 5,
            "shown": f"{mean:.1f}%",
            "current": current,
            "direction": change["direction"] if change else "first",
            "change": change,
        }

    better = {"direction": "better", "shown": "+20.0", "earlier": 1, "verdict": "B better"}
    return {
        "metric": "recall@5",
        "confidence": 0.9,
        "share": share,
        "systems": ["b", "a"],
        "default": "b",
        "series": {
            "b": [point("1 (abc)", 50.0, False, None), point("2 (def)", 70.0, True, better)],
            "a": [point("1 (abc)", 40.0, False, None)],
        },
    }


@pytest.fixture(scope="module")
def alt():
    require("altair", "the HTML report needs the 'report' extra")
    import altair

    return altair


def test_no_history_no_chart(alt):
    assert history_chart(alt, {"optional": {}}) is None
    assert history_chart(alt, {}) is None


def test_the_chart_specification(alt):
    spec = history_chart(alt, {"optional": {"history": history()}})
    assert isinstance(spec, dict)
    assert spec["width"] == 640 and spec["height"] == 240
    assert spec["data"]["values"] == [
        {
            "system": "b",
            "order": 0,
            "run": "1 (abc)",
            "mean": 50.0,
            "low": 45.0,
            "high": 55.0,
            "shown": "50.0%",
            "change": "first run",
            "direction": "first",
        },
        {
            "system": "b",
            "order": 1,
            "run": "2 (def) (this run)",
            "mean": 70.0,
            "low": 65.0,
            "high": 75.0,
            "shown": "70.0%",
            "change": "+20.0 from run 1: B better",
            "direction": "better",
        },
        {
            "system": "a",
            "order": 0,
            "run": "1 (abc)",
            "mean": 40.0,
            "low": 35.0,
            "high": 45.0,
            "shown": "40.0%",
            "change": "first run",
            "direction": "first",
        },
    ]
    (param,) = spec["params"]
    assert param["name"] == "history_system" and param["value"] == "b"
    assert "bind" not in param  # no select of its own: the section's one select sets it
    band, line, point = spec["layer"]
    assert band["mark"] == {"type": "area", "opacity": 0.25, "color": "#4c78a8"}
    assert line["mark"] == {"type": "line", "color": "#1d3f6e"}
    assert point["mark"] == {"type": "point", "filled": True, "size": 90}
    for layer in (band, line, point):
        assert layer["transform"] == [{"filter": "datum.system == history_system"}]
        x = layer["encoding"]["x"]
        assert x["field"] == "run" and x["sort"] == {"field": "order"}
    assert band["encoding"]["y"]["field"] == "low" and band["encoding"]["y"]["title"] == (
        "recall@5 (%)"
    )
    assert band["encoding"]["y2"]["field"] == "high"
    assert line["encoding"]["y"]["field"] == "mean" and point["encoding"]["y"]["field"] == "mean"
    color = point["encoding"]["color"]
    assert color["field"] == "direction"
    assert color["scale"]["domain"] == ["better", "worse", "no change", "first"]
    assert color["scale"]["range"] == [DIRECTION_COLORS[d] for d in color["scale"]["domain"]]
    titles = [t.get("title") for t in point["encoding"]["tooltip"]]
    assert titles == [None, "recall@5 [90% interval]", "paired change"]


def test_a_measure_that_is_not_a_share_has_no_percent_sign(alt):
    spec = history_chart(alt, {"optional": {"history": history(share=False)}})
    assert spec is not None
    assert spec["layer"][0]["encoding"]["y"]["title"] == "recall@5"

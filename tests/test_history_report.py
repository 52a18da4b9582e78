"""The report's run-history section: shown only for runs the history can compare with
this one; its data is the trend's (:mod:`ragmeter.history_trend`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragmeter.cli import example_dir
from ragmeter.config import Config
from ragmeter.experiment import run_search
from ragmeter.history import HistoryStore, read_results_files
from ragmeter.report.history import load_history
from ragmeter.results import Results, save_results


def search(out: Path, size: int, questions: Path | None = None) -> Path:
    """The shipped example with a fixed-size strategy ``mine`` beside ``sentence``."""
    ex = example_dir()
    cfg = Config(
        corpus=str(ex / "posts"),
        testset=str(questions or ex / "questions.jsonl"),
        strategies=("mine", "sentence"),
        custom_strategies=({"name": "mine", "kind": "fixed", "size": size},),
        rounds=1000,
    ).validate()
    return save_results(run_search(cfg), out)


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

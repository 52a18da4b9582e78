"""A header names the level its intervals were made at: a run searched at 90% reads
"90%" in `history trend` and `history show`, and a trend over runs made at two levels
says each row keeps its own."""

from __future__ import annotations

from conftest import EXAMPLE
from typer.testing import CliRunner

from ragmeter.cli import app
from ragmeter.comparison.formatting import level_label
from ragmeter.stats import bootstrap


def _search(tmp_path, name: str, confidence: float) -> None:
    config = tmp_path / f"{name}.toml"
    config.write_text(
        f'[output]\ndir = "{name}"\n[corpus]\npath = "{EXAMPLE / "posts"}"\n'
        f'[testset]\npath = "{EXAMPLE / "questions.jsonl"}"\n'
        f"[stats]\nconfidence = {confidence}\nrounds = 200\n",
        encoding="utf-8",
    )
    result = CliRunner().invoke(app, ["-q", "search", str(config), "--strategies", "fixed"])
    assert result.exit_code == 0, result.output


def _shown(*args: str) -> str:
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": "160"})
    assert result.exit_code == 0, result.output
    return result.output


def test_the_history_names_the_level_a_run_was_made_at(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _search(tmp_path, "at90", 0.9)
    trend = _shown("history", "trend", "--system", "fixed")
    assert "recall@5 [90% CI]" in trend and "95%" not in trend
    assert "recall@5 [90% interval]" in _shown("history", "show", "1")


def test_a_trend_over_two_levels_names_neither(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _search(tmp_path, "at90", 0.9)
    _search(tmp_path, "at95", 0.95)
    trend = _shown("history", "trend", "--system", "fixed")
    assert "recall@5 [CI, each run's level]" in trend
    assert "[90% CI]" not in trend and "[95% CI]" not in trend


def test_the_level_label_is_the_one_level_estimates_share():
    scores = [1, 0, 1, 1, 0, 1, 1, 1]
    at90, at95 = (bootstrap(scores, rounds=200, confidence=c) for c in (0.9, 0.95))
    assert level_label([at90, at90.to_dict()]) == "90%"
    assert level_label([at90, at95]) == ""
    assert level_label([]) == ""
    assert level_label([{"mean": 0.5, "low": 0.4, "high": 0.6}]) == "95%"  # saved before levels

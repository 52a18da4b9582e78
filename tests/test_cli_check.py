"""``ragmeter check`` from the command line: the default margin of 2 points, the
baseline's confidence level, seed and rounds checked before any work, the Markdown
summary, and the verdict printed as one plain line (a system's name as written)."""

from __future__ import annotations

import json
import shutil

import pytest
from typer.testing import CliRunner

from ragmeter.cli import app
from ragmeter.runs.evaluate import evaluate_files

runner = CliRunner()
N = 400
NAME = "my[b]system"  # a run's tag: the system's name, with what reads as markup


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """400 queries, one relevant document each. The baseline ranks every one first; the
    candidate ranks it second in 6: 1.5 points worse on hit@1, the interval's lower end
    about -2.7 points."""
    root = tmp_path_factory.mktemp("check")
    (root / "qrels.txt").write_text("".join(f"q{i} 0 d{i} 1\n" for i in range(N)))
    out = {}
    for name, missed in (("base", 0), ("cand", 6)):
        lines = []
        for i in range(N):
            first, second = (f"x{i}", f"d{i}") if i < missed else (f"d{i}", f"x{i}")
            lines += [
                f"q{i} Q0 {first} 1 2.0 {NAME}\n",
                f"q{i} Q0 {second} 2 1.0 {NAME}\n",
            ]
        (root / f"{name}.run").write_text("".join(lines))
        result = evaluate_files(root / "qrels.txt", [root / f"{name}.run"], ["hit@1"], rounds=300)
        out[name] = result.run.save(root / name)
    return out


def _check(runs, *flags):
    args = ["check", str(runs["base"]), str(runs["cand"]), "--system", NAME, *flags]
    return runner.invoke(app, args)


def test_the_default_margin_is_2_points(runs):
    failed = _check(runs)
    assert failed.exit_code == 1, failed.output
    assert "lower end <= -2 (margin)" in failed.stdout
    passed = _check(runs, "--margin", "4")
    assert passed.exit_code == 0, passed.output
    assert "lower end > -4 (margin)" in passed.stdout


def test_the_verdict_is_one_plain_line_with_the_name_as_written(runs, monkeypatch):
    from rich.color import ColorSystem

    from ragmeter.cli.app import console

    # on a colour terminal too: no markup read in it, nothing highlighted, never folded
    monkeypatch.setattr(console, "_color_system", ColorSystem.TRUECOLOR)
    monkeypatch.setattr(console, "_width", 60)
    result = _check(runs, "--margin", "4")
    assert result.exit_code == 0, result.output
    (line,) = result.stdout.splitlines()
    assert line.startswith("PASS hit@1 my[b]system: candidate - baseline = -1.5 [")
    assert "\x1b[" not in line and line.endswith("lower end > -4 (margin)")


def test_the_baseline_confidence_level_is_the_checks(runs, tmp_path):
    base = tmp_path / "base"
    shutil.copytree(runs["base"], base)
    summary = json.loads((base / "summary.json").read_text())
    (base / "summary.json").write_text(json.dumps(summary | {"confidence": 0.8}))
    result = runner.invoke(
        app, ["check", str(base), str(runs["cand"]), "--system", NAME, "--margin", "4"]
    )
    assert "(80% " in result.stdout and "(95% " not in result.stdout


def test_seed_and_rounds_are_checked_and_passed_on(runs):
    result = _check(runs, "--margin", "4", "--seed", "7", "--rounds", "200")
    assert result.exit_code == 0 and "seed 7, 200 rounds" in result.stdout
    for flag, bad in (("--seed", "-1"), ("--rounds", "0")):
        result = _check(runs, flag, bad)
        assert result.exit_code == 2 and flag in result.output, result.output


def test_the_markdown_summary_is_written(runs, tmp_path):
    md = tmp_path / "check.md"
    result = _check(runs, "--markdown", str(md))
    assert result.exit_code == 1
    text = md.read_text()
    assert text.startswith("### ragmeter check failed: hit@1, my[b]system")
    assert "| margin | -2 |" in text
    # the markdown may not overwrite a run's own files
    target = runs["base"] / "summary.json"
    result = _check(runs, "--markdown", str(target))
    assert result.exit_code == 2 and json.loads(target.read_text())["metric"] == "hit@1"


def test_two_results_directories_are_needed_without_a_history_baseline(runs):
    result = runner.invoke(app, ["check", str(runs["base"]), "--system", NAME])
    assert result.exit_code == 2
    assert "give the baseline's and the candidate's results directories" in result.output


def test_a_refused_markdown_target_is_named_before_any_comparison(runs):
    """The output rule comes first: the run's own file as --markdown is the error shown,
    not the comparison's (here a system neither run holds)."""
    target = runs["base"] / "summary.json"
    args = ["check", str(runs["base"]), str(runs["cand"]), "--system", "nowhere"]
    result = runner.invoke(app, [*args, "--markdown", str(target)])
    assert result.exit_code == 2 and "--markdown" in result.output, result.output
    assert "nowhere" not in result.output

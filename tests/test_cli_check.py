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


def _check(runs, *flags, columns="1000"):
    """The check on a terminal of ``columns`` (wide enough for the verdict's one line)."""
    args = ["check", str(runs["base"]), str(runs["cand"]), "--system", NAME, *flags]
    return runner.invoke(app, args, env={"COLUMNS": columns})


def test_the_default_margin_is_2_points(runs):
    failed = _check(runs)
    assert failed.exit_code == 1, failed.output
    assert "lower end <= -2 (margin)" in failed.stdout
    passed = _check(runs, "--margin", "4")
    assert passed.exit_code == 0, passed.output
    assert "lower end > -4 (margin)" in passed.stdout


def test_the_verdict_is_plain_text_wrapped_between_words_with_intervals_whole(runs, monkeypatch):
    import re

    from rich.color import ColorSystem

    from ragmeter.cli.app import console

    # on a colour terminal of 60 columns: no markup read in it, nothing highlighted, and
    # broken only between words, never inside a number or an interval
    monkeypatch.setattr(console, "_color_system", ColorSystem.TRUECOLOR)
    for flags, code in ((["--margin", "4"], 0), ([], 1)):
        result = _check(runs, *flags, columns="60")
        assert result.exit_code == code, result.output
        lines = result.stdout.splitlines()
        assert len(lines) > 2 and all(len(line) <= 60 for line in lines), lines
        assert "\x1b[" not in result.stdout
        assert lines[0].startswith("PASS hit@1 my[b]system:" if code == 0 else "FAIL hit@1")
        whole = re.compile(r"[+-]\d+\.\d+ \[[+-]\d+\.\d+, [+-]\d+\.\d+\]")
        assert len([line for line in lines if whole.search(line)]) == 1, lines
        joined = " ".join(lines)
        assert "candidate - baseline = -1.5 [" in joined
        assert joined.endswith("lower end > -4 (margin)" if code == 0 else "pass one)")


@pytest.mark.parametrize("typed", ["100", "101"])
def test_a_margin_of_100_points_or_more_is_refused_in_one_line_in_points(runs, typed):
    result = _check(runs, "--margin", typed)
    assert result.exit_code == 2 and result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"error: --margin {typed} is the whole scale or more")
    assert line.endswith("give less than 100 points")  # points, as typed: no fraction


def test_a_margin_above_20_points_warns_and_20_does_not(runs):
    wide = _check(runs, "--margin", "25")
    assert wide.exit_code == 0, wide.output
    said = " ".join(wide.stderr.split())
    assert said.startswith("warning: --margin 25: a margin of 25 points passes a candidate up")
    assert "above 20 the gate lets large regressions through" in said
    at_20 = _check(runs, "--margin", "20")
    assert at_20.exit_code == 0 and at_20.stderr == "", at_20.stderr


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

"""docs/history.md: the worked example runs as written, and says what it shows."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

DOC = Path(__file__).resolve().parents[1] / "docs" / "history.md"


def blocks(text: str, language: str) -> list[str]:
    """The code blocks of the worked example (from its marker on), in order."""
    start = text.index("<!-- example: history -->")
    return re.findall(rf"```{language}\n(.*?)```", text[start:], re.S)


def test_the_worked_example_runs_as_written(tmp_path):
    text = DOC.read_text(encoding="utf-8")
    shell, python = blocks(text, "bash"), blocks(text, "python")
    assert len(shell) == 3 and len(python) == 2  # the second Python block: MLflow, not run
    env = {k: v for k, v in os.environ.items() if k != "RAGMETER_HISTORY"}
    env.update(
        PATH=os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")]),
        GIT_AUTHOR_NAME="A",
        GIT_AUTHOR_EMAIL="a@example.org",
        GIT_COMMITTER_NAME="A",
        GIT_COMMITTER_EMAIL="a@example.org",
        COLUMNS="200",
    )
    script = "set -euo pipefail\n" + "\n".join(shell)
    done = subprocess.run(
        ["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
    )
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert (tmp_path / "demo" / ".ragmeter" / "history.sqlite").is_file()
    assert out.count("│ search  │") == 4  # history list: four runs recorded
    assert "#2 better" in out  # 200-word chunks beat 60-word ones, paired by question
    assert "tie: too few differing questions (0 of 135 differ" in out
    assert "break: relevant_grade: 2 vs 1 changed since run 3" in out
    assert "Baseline: history run 3 (commit" in out
    assert "FAIL recall@5 mine: candidate - baseline = -" in out
    flat = " ".join(out.split())  # a verdict longer than the terminal wraps between words
    assert "; observed loss 61.5 points: only a margin above 69.3 points would pass it" in flat
    assert "check failed with exit code 1" in out
    # a second retriever renames the system: the trend and the gate go on
    assert "named mine/bm25 here (was mine)" in out
    assert "Baseline: history run 5 (commit" in out
    assert "PASS recall@5 mine/bm25 (baseline: mine): candidate - baseline = +0.0" in out
    assert "identical on all 135 questions" in flat  # nothing changed for mine: no interval
    done = subprocess.run(
        [sys.executable, "-c", python[0]], cwd=tmp_path / "demo", capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    lines = [line.split() for line in done.stdout.splitlines()]
    # the sixth run: mine/bm25 after the second retriever, followed across the rename
    assert [line[-1] for line in lines] == ["-", "better", "change", "break", "break", "change"]
    assert lines[4][-2] == "worse" and lines[2][-2:] == ["no", "change"]
    assert lines[5][-2:] == ["no", "change"]

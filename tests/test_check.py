"""``ragmeter check``: the non-inferiority gate, driven from a shell script as CI would."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ragmeter.errors import InputError
from ragmeter.history.gate import check_noninferior
from ragmeter.runs.results import Results
from ragmeter.stats.paired_tests import tango_interval


def _results(
    path: Path, scores: dict[str, list[float]], ids: list[str], texts=None, metric="recall@5"
) -> Path:
    """A minimal results directory: per-question scores of some systems on one metric
    (recall@5 unless named)."""
    path.mkdir(parents=True)
    systems = list(scores)
    (path / "scores.json").write_text(
        json.dumps(
            {
                "systems": systems,
                "questions": ids,
                "metrics": [metric],
                "values": {s: {metric: scores[s]} for s in systems},
            }
        )
    )
    (path / "meta.json").write_text(json.dumps({"seed": 1, "rounds": 1000}))
    (path / "summary.json").write_text(
        json.dumps({"metric": metric, "seed": 1, "rounds": 1000, "confidence": 0.95})
    )
    texts = texts or {q: f"question {q}?" for q in ids}
    with (path / "questions.jsonl").open("w") as fh:
        for q in ids:
            fh.write(json.dumps({"id": q, "question": texts[q], "answers": []}) + "\n")
    return path


N = 200
IDS = [f"q{i}" for i in range(N)]
RNG = np.random.default_rng(1)
BASE = (RNG.random(N) < 0.7).astype(float)


@pytest.fixture()
def runs(tmp_path):
    better = BASE.copy()
    better[np.flatnonzero(BASE == 0)[:6]] = 1.0  # 6 wins, no losses
    worse = BASE.copy()
    worse[np.flatnonzero(BASE == 1)[:20]] = 0.0  # 20 losses: -10 points
    order = RNG.permutation(N)  # the candidate lists its questions in another order
    return {
        "base": _results(tmp_path / "base", {"sentence": BASE.tolist()}, IDS),
        "better": _results(
            tmp_path / "better",
            {"sentence": better[order].tolist()},
            [IDS[i] for i in order],
        ),
        "worse": _results(tmp_path / "worse", {"sentence": worse.tolist()}, IDS),
        "other": _results(tmp_path / "other", {"sentence": BASE[:-1].tolist()}, IDS[:-1]),
        "reworded": _results(
            tmp_path / "reworded",
            {"sentence": BASE.tolist()},
            IDS,
            {**{q: f"question {q}?" for q in IDS}, "q3": "something else?"},
        ),
        "dir": tmp_path,
    }


def test_gate_exit_codes_from_a_shell_script(runs):
    py = shlex.quote(sys.executable)
    d = runs["dir"]
    script = d / "gate.sh"
    script.write_text(
        f"""
set -u
check() {{ {py} -m ragmeter.cli check "$@" >>"{d}/out.txt" 2>>"{d}/err.txt"; echo $?; }}
check {d}/base {d}/better --system sentence --metric recall@5 --margin 2 --markdown {d}/pr.md
check {d}/base {d}/worse --system sentence --metric recall@5 --margin 2
check {d}/base {d}/other --system sentence --metric recall@5 --margin 2
check {d}/base {d}/better --system nope --metric recall@5 --margin 2
check {d}/base {d}/better --system sentence --metric mrr@10 --margin 2
check {d}/base {d}/reworded --system sentence --margin 2
"""
    )
    # a terminal wide enough for each verdict's line (a narrower one wraps it between words)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "COLUMNS": "1000"}
    done = subprocess.run(["bash", str(script)], capture_output=True, text=True, env=env)
    assert done.stdout.split() == ["0", "1", "2", "2", "2", "2"], done.stderr
    out = (d / "out.txt").read_text().splitlines()
    assert len(out) == 2  # one line per check on stdout, nothing for bad input
    assert out[0].startswith("PASS recall@5 sentence: candidate - baseline = +3.0 [")
    assert out[1].startswith("FAIL recall@5 sentence: candidate - baseline = -10.0 [")
    err = (d / "err.txt").read_text()
    assert "different test sets" in err and "'q199' is only in the baseline" in err
    assert "no system 'nope'" in err and "no metric 'mrr@10'" in err
    assert "question 'q3' reads differently" in err
    md = (d / "pr.md").read_text()
    assert "ragmeter check passed" in md and "| margin | -2 |" in md


def test_gate_pairs_by_id_and_uses_the_exact_interval(runs):
    res = check_noninferior(runs["base"], runs["better"], "sentence", "recall@5", 0.02)
    assert (res.wins, res.ties, res.losses) == (6, N - 6, 0)
    low, high = tango_interval(6, 0, N, 0.05, reject_zero=True)
    assert res.difference.low == pytest.approx(low) and res.difference.high == pytest.approx(high)
    assert res.passed
    # The margin is what decides: the same runs fail a margin below the lower end.
    strict = check_noninferior(runs["base"], runs["worse"], "sentence", "recall@5", 0)
    assert not strict.passed and strict.difference.high < 0
    lenient = check_noninferior(runs["base"], runs["worse"], "sentence", "recall@5", 0.2)
    assert lenient.passed and lenient.difference.low > -0.2


def test_gate_rejects_a_negative_margin(runs):
    with pytest.raises(InputError, match="margin"):
        check_noninferior(Results(runs["base"]), runs["base"], "sentence", "recall@5", -0.01)


def test_the_library_gate_takes_its_margin_as_a_fraction_of_the_scale(runs):
    # 0.02 is 2 points, as every difference the library holds: the worse run (-10 points)
    # fails it, and passes 0.2 (20 points); the margin prints in points
    strict = check_noninferior(runs["base"], runs["worse"], "sentence", "recall@5", 0.02)
    assert not strict.passed and strict.margin == 0.02 and "lower end <= -2 (margin)" in strict.line
    lenient = check_noninferior(runs["base"], runs["worse"], "sentence", "recall@5", 0.2)
    assert lenient.passed and "lower end > -20 (margin)" in lenient.line
    assert "| margin | -20 |" in lenient.markdown() and lenient.to_dict()["margin"] == 0.2


@pytest.mark.parametrize("old", [1, 2, 3.0, 20, 100])
def test_a_margin_in_points_is_refused_naming_the_fraction(runs, old):
    # a margin of 1 or more is the whole scale or more as a fraction: points written the
    # old way (2 for 2 points) are refused in one line, never read as 200 points
    with pytest.raises(InputError) as raised:
        check_noninferior(runs["base"], runs["worse"], "sentence", "recall@5", old)
    (line,) = str(raised.value).splitlines()
    assert line.startswith(f"margin {old:g} ({old * 100:g} points) is the whole scale or more")
    assert line.endswith("margins are fractions now: 0.02 for 2 points")
    assert check_noninferior(runs["base"], runs["worse"], "sentence", "recall@5", 0.99).passed


def test_a_margin_below_one_is_read_as_a_fraction_with_plans_warning(runs):
    from typer.testing import CliRunner

    from ragmeter.cli import app

    d = runs["dir"]
    base = ["check", str(d / "base"), str(d / "worse"), "--system", "sentence"]
    points = CliRunner().invoke(app, [*base, "--margin", "20"])
    fraction = CliRunner().invoke(app, [*base, "--margin", "0.2"])
    assert points.exit_code == fraction.exit_code == 0, fraction.output  # -10 points passes 20
    assert points.stdout == fraction.stdout  # the same margin, 20 points
    said = " ".join(fraction.stderr.split())
    assert "--margin 0.2 is read as a fraction (20 points)" in said
    assert "write --margin 20" in said and "warning" in said and points.stderr == ""
    plan = CliRunner().invoke(app, ["plan", str(d / "base"), "--half-width", "0.04"])
    assert "--half-width 0.04 is read as a fraction (4 points)" in " ".join(plan.stderr.split())


def test_checks_usage_names_the_one_directory_for_either_run():
    from typer.testing import CliRunner

    from ragmeter.cli import app

    help_text = CliRunner().invoke(app, ["check", "--help"]).stdout
    text = " ".join(help_text.replace("│", " ").split())
    assert "RESULTS [CANDIDATE]" in text and "BASELINE [CANDIDATE]" not in text
    assert "with --baseline-from-history, the candidate's" in text
    assert "check --baseline-from-history REF CANDIDATE" in text


def test_the_markdown_heading_shows_a_system_name_as_text(tmp_path):
    # regression: a system named <script>... went raw into the Markdown summary's heading
    name = "<script>alert(1)</script>*x*"
    base = _results(tmp_path / "b", {name: BASE.tolist()}, IDS)
    cand = _results(tmp_path / "c", {name: BASE.tolist()}, IDS)
    heading = check_noninferior(base, cand, name, "recall@5", 0.02).markdown().splitlines()[0]
    assert "<script>" not in heading and "&lt;script&gt;alert(1)&lt;/script&gt;\\*x\\*" in heading


def test_a_margin_of_minus_zero_is_a_margin_of_zero(runs):
    # regression: --margin -0.0 passed the check and printed "--0"
    res = check_noninferior(runs["base"], runs["better"], "sentence", "recall@5", -0.0)
    assert "--0" not in res.line and "--0" not in res.markdown()
    assert "-0 (margin)" in res.line and "| margin | -0 |" in res.markdown()

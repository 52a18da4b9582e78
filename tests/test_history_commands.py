"""``evaluate`` and ``grade`` record their runs too (``search``: tests/test_history.py)."""

from __future__ import annotations

import json
import shutil

import pytest
from test_answers_one_view import FixedJudge, run_dir  # noqa: F401  (run_dir: a fixture)
from typer.testing import CliRunner

from ragmeter.cli import app
from ragmeter.history.store import HistoryStore
from ragmeter.runs.evaluate import evaluate_files


def _invoke(*args: str):
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result


def test_evaluate_records_its_run_unless_told_not_to(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the results folders e1 and e2 are written here
    monkeypatch.setenv("RAGMETER_HISTORY", str(tmp_path / "hist"))
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 d{q} 1\n{q} 0 e{q} 0\n" for q in range(12)))
    run = tmp_path / "bm25.run"
    run.write_text(
        "".join(f"{q} Q0 {d}{q} {r} {9 - r} bm25\n" for q in range(12) for r, d in enumerate("ed"))
    )
    _invoke("-q", "evaluate", str(run), "--qrels", str(qrels), "--rounds", "200", "-o", "e1")
    _invoke(
        "-q", "evaluate", str(run), "--qrels", str(qrels), "--rounds", "200", "-o", "e2",
        "--no-history",
    )  # fmt: skip
    with HistoryStore(tmp_path / "hist", create=False) as store:
        (kept,) = store.runs()
    assert kept.command == "evaluate" and kept.systems == ("bm25",) and kept.questions == 12
    assert kept.results.endswith("e1")


def test_grade_records_the_graded_run(run_dir, tmp_path, monkeypatch):  # noqa: F811
    from ragmeter.llm import backends

    monkeypatch.setitem(backends.KINDS, "test", FixedJudge)
    monkeypatch.setenv("RAGMETER_HISTORY", str(tmp_path / "hist"))
    results = tmp_path / "results"
    shutil.copytree(run_dir, results)
    _invoke("-q", "grade", str(results), "--judge", "test:c")
    with HistoryStore(tmp_path / "hist", create=False) as store:
        (kept,) = store.runs()
        files = store.files(kept.id)
    assert kept.command == "grade" and kept.systems == ("sentence", "fixed-40")
    assert "test:c" in files["answers/meta.json"].decode()


# ``ragmeter history`` from the command line on a history written directly: the list's columns
# (commit, test set digest) and its note when no run matches, ``show``'s branch line, ``trend
# --branch`` following one branch only, and ``check --baseline-from-history`` taking the newest
# run that holds the system checked.

runner = CliRunner()
MEASURED = {"corpus": "c0ffee00aa", "testset": "feedbeef1234", "relevant_grade": 2}
IDS = [f"q{i}" for i in range(40)]


def _add(store, values, git, systems=("s",), measured=MEASURED):
    scores = {
        "systems": list(systems),
        "questions": IDS,
        "metrics": ["recall@5"],
        "values": {s: {"recall@5": list(values)} for s in systems},
    }
    files = {
        "scores.json": json.dumps(scores).encode(),
        "summary.json": json.dumps({"metric": "recall@5", "seed": 1, "rounds": 300}).encode(),
        "meta.json": json.dumps({"measurement": measured}).encode(),
    }
    return store.add(files, command="search", results="r", git=git)


@pytest.fixture()
def history(tmp_path):
    """Run 1 outside git, run 2 on main, run 3 on a feature branch (dirty), run 4 on main."""
    folder = tmp_path / "h"
    half = [1.0] * 20 + [0.0] * 20
    with HistoryStore(folder) as store:
        _add(store, half, {})
        _add(store, half, {"commit": "a" * 40, "branch": "main", "dirty": False})
        _add(store, [1.0] * 40, {"commit": "b" * 40, "branch": "feature", "dirty": True})
        _add(store, [0.0] * 40, {"commit": "c" * 40, "branch": "main", "dirty": False})
    return folder


def _ok(*args):
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.stdout


def test_list_shows_commits_and_the_test_set_digest(history):
    rows = [line for line in _ok("history", "list", "--history", str(history)).splitlines()]
    by_run = {line.split()[1]: line for line in rows if line.startswith("│ ")}
    assert "aaaaaaa " in by_run["2"] and "bbbbbbb (dirty)" in by_run["3"]
    assert "feedbeef" in by_run["1"] and "feedbeef1" not in by_run["1"]
    assert "None" not in by_run["1"]  # no git: an empty commit cell
    empty = _ok("history", "list", "--branch", "nowhere", "--history", str(history))
    assert "No recorded run matches." in empty
    assert "No recorded run matches." not in _ok("history", "list", "--history", str(history))


def test_show_names_the_branch_or_a_dash(history):
    assert "branch: feature" in _ok("history", "show", "3", "--history", str(history))
    shown = _ok("history", "show", "1", "--history", str(history))
    assert "branch: -" in shown and "commit: no git" in shown


def test_trend_follows_one_branch(history):
    out = _ok("history", "trend", "--system", "s", "--branch", "main", "--history", str(history))
    runs = [line.split()[1] for line in out.splitlines() if line.startswith("│ ")]
    assert runs == ["2", "4"]
    assert "from run" in out and "#2 better" in out  # run 4 compared with run 2


def test_check_from_history_takes_the_newest_run_holding_the_system(tmp_path):
    """``latest`` passes over a newer run that does not hold the system checked."""
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 d{q} 1\n" for q in IDS))
    run = tmp_path / "mine.run"
    run.write_text("".join(f"{q} Q0 d{q} 1 1.0 mine\n" for q in IDS))
    cand = evaluate_files(qrels, [run], ["hit@1"], rounds=200).run.save(tmp_path / "cand")
    files = {n: (cand / n).read_bytes() for n in ("scores.json", "summary.json", "meta.json")}
    with HistoryStore(tmp_path / "h") as store:
        store.add(files, command="evaluate", results="old", git={})  # run 1: mine
        other = json.loads(files["scores.json"])
        other["systems"] = ["theirs"]
        other["values"] = {"theirs": other["values"]["mine"]}
        store.add(  # run 2, newer: another system only
            files | {"scores.json": json.dumps(other).encode()},
            command="evaluate",
            results="other",
            git={},
        )
    args = [
        "check",
        str(cand),
        "--baseline-from-history",
        "latest",
        "--system",
        "mine",
        "--margin",
        "10",
    ]
    result = runner.invoke(app, [*args, "--history", str(tmp_path / "h")])
    assert result.exit_code == 0, result.output
    assert "Baseline: history run 1" in result.output and "PASS hit@1 mine" in result.stdout


def test_trend_verdicts_are_coloured_by_direction(history, monkeypatch):
    from rich.color import ColorSystem

    from ragmeter.cli.app import console

    monkeypatch.setattr(console, "_color_system", ColorSystem.TRUECOLOR)
    out = _ok("history", "trend", "--system", "s", "--history", str(history))
    # run 3 (all found) over run 2: green; run 4 (none found) under run 3: "#3 better" in red
    assert "\x1b[32m#3 better" in out and "\x1b[31m#3 better" in out

"""Run history from the command line: searches at three commits, a run on another test set
(a break), the trend with paired changes, and ``check --baseline-from-history``."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragmeter.cli import app
from ragmeter.cli.app import example_dir
from ragmeter.history.gate import check_noninferior
from ragmeter.history.store import HistoryStore
from ragmeter.history.trend import trend

runner = CliRunner()

CONFIG = """\
[corpus]
path = "{posts}"
[testset]
path = "{questions}"
[search]
strategies = ["mine"]
[stats]
rounds = 1000
[[strategy]]
name = "mine"
kind = "fixed"
size = {size}
"""


def _git(repo: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.org",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.org",
    }
    done = subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def _commit(repo: Path, size: int, message: str) -> str:
    ex = example_dir()
    (repo / "ragmeter.toml").write_text(
        CONFIG.format(posts=ex / "posts", questions=ex / "questions.jsonl", size=size)
    )
    (repo / "NOTES.md").write_text(message + "\n")
    _git(repo, "add", "ragmeter.toml", "NOTES.md")
    _git(repo, "commit", "-q", "-m", message)
    return _git(repo, "rev-parse", "HEAD")


def _ragmeter(*args: str, code: int = 0):
    result = runner.invoke(app, list(args))
    assert result.exit_code == code, result.output
    return result


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """Four searches at four commits and one on another test set, recorded by the CLI."""
    repo = tmp_path_factory.mktemp("project")
    old_cwd, old_env = Path.cwd(), os.environ.pop("RAGMETER_HISTORY", None)
    os.chdir(repo)
    try:
        _git(repo, "init", "-q", "-b", "main")
        commits = [_commit(repo, 60, "small chunks")]
        _ragmeter("-q", "search", "-o", "r1")
        commits.append(_commit(repo, 200, "bigger chunks"))
        _ragmeter("-q", "search", "-o", "r2")
        commits.append(_commit(repo, 200, "docs only"))
        _ragmeter("-q", "search", "-o", "r3")
        subset = repo / "subset.jsonl"
        lines = (example_dir() / "questions.jsonl").read_text().splitlines()[:40]
        subset.write_text("\n".join(lines) + "\n")  # untracked: the tree stays clean
        _ragmeter("-q", "search", "--testset", str(subset), "-o", "r_subset")
        commits.append(_commit(repo, 30, "tiny chunks"))
        _ragmeter("-q", "search", "-o", "r4")
        _ragmeter("-q", "search", "--no-history", "-o", "r_unrecorded")
        yield repo, commits
    finally:
        os.chdir(old_cwd)
        if old_env is not None:
            os.environ["RAGMETER_HISTORY"] = old_env


def test_every_run_is_recorded_with_its_commit(project):
    repo, commits = project
    with HistoryStore(repo / ".ragmeter", create=False) as store:
        runs = store.runs()
    assert [Path(r.results).name for r in runs] == ["r1", "r2", "r3", "r_subset", "r4"]
    assert [r.commit for r in runs] == [commits[0], commits[1], commits[2], commits[2], commits[3]]
    assert {r.branch for r in runs} == {"main"} and not any(r.dirty for r in runs)
    assert all(r.command == "search" and r.systems == ("mine",) for r in runs)
    assert runs[3].questions == 40 and runs[0].questions == 135
    out = _ragmeter("history", "list", "--history", str(repo / ".ragmeter")).output
    for c in commits:
        assert c[:7] in out
    assert "r_unrecorded" not in out


def test_the_trend_pairs_consecutive_runs_and_breaks_at_another_test_set(project):
    repo, _ = project
    with HistoryStore(repo / ".ragmeter", create=False) as store:
        found = trend(store, "mine", "recall@5")
    p = found.points
    assert [x.run.id for x in p] == [1, 2, 3, 4, 5]
    assert p[0].change is None and p[0].gap is None
    # bigger chunks find more: the paired change is the gate's, under the same rule
    assert p[1].change.direction == "better"
    gate = check_noninferior(repo / "r1", repo / "r2", "mine", "recall@5", 0)
    assert p[1].change.row.difference == gate.difference
    assert (p[1].change.row.wins, p[1].change.row.losses) == (gate.wins, gate.losses)
    # an unchanged system: nothing differs
    assert p[2].change.row.difference.mean == 0 and p[2].change.direction == "no change"
    # another test set: a break, never compared
    assert p[3].change is None and p[3].gap is not None
    assert "test set" in p[3].gap.reasons[0] and p[3].series != p[2].series
    # back on the first test set: compared with run 3, across the break
    assert p[4].gap.earlier == 4 and p[4].change.earlier == 3
    assert p[4].change.direction == "worse" and p[4].series == p[2].series
    out = _ragmeter("history", "trend", "--system", "mine", "--history", ".ragmeter").output
    assert "break: the test set" in out and "mine better" not in out
    assert "#2 better" in out and "#3 better" in out  # run 2 over 1, run 3 over run 5
    cost = runner.invoke(
        app,
        ["history", "trend", "--system", "mine", "--metric", "words@5", "--history", ".ragmeter"],
    )
    assert cost.exit_code == 2 and "words@5 is a cost" in cost.output
    data = json.loads(
        _ragmeter(
            "history", "trend", "--system", "mine", "--json", "--history", str(repo / ".ragmeter")
        ).output
    )
    assert [pt["change"] and pt["change"]["direction"] for pt in data["points"]] == [
        None,
        "better",
        "no change",
        None,
        "worse",
    ]


def test_check_takes_its_baseline_from_the_history(project):
    repo, commits = project
    where = ("--history", str(repo / ".ragmeter"))
    # the fourth system (tiny chunks) against the run at the third commit: worse, exit 1
    fail = _ragmeter(
        "check",
        str(repo / "r4"),
        "--baseline-from-history",
        commits[2][:8],
        "--system",
        "mine",
        *where,
        code=1,
    )
    assert fail.output.count("FAIL recall@5 mine") == 1
    assert "Baseline: history run 3" in fail.output
    # bigger chunks against run 1: passes
    ok = _ragmeter(
        "check", str(repo / "r2"), "--baseline-from-history", "1", "--system", "mine", *where
    )
    assert "PASS recall@5 mine" in ok.output
    # latest, leaving out the candidate's own record: the newest run that measured the
    # same thing (run 4, on the other test set, is passed over)
    latest = _ragmeter(
        "check",
        str(repo / "r4"),
        "--baseline-from-history",
        "latest:main",
        "--system",
        "mine",
        *where,
        code=1,
    )
    assert "Baseline: history run 3" in latest.output
    # no recorded run measured what the subset run did: the newest is taken and refused
    refused = _ragmeter(
        "check",
        str(repo / "r_subset"),
        "--baseline-from-history",
        "latest:main",
        "--system",
        "mine",
        *where,
        code=2,
    )
    assert (
        "Baseline: history run 5" in refused.output
        and "measured different things" in refused.output
    )
    _ragmeter(
        "check",
        str(repo / "r1"),
        str(repo / "r2"),
        "--baseline-from-history",
        "1",
        "--system",
        "mine",
        *where,
        code=2,
    )


def test_show_and_export(project):
    repo, commits = project
    where = ("--history", str(repo / ".ragmeter"))
    shown = _ragmeter("history", "show", "2", *where).output
    assert commits[1] in shown and "recall@5" in shown and "testset" in shown
    kept = _ragmeter("history", "show", "2", "--config", *where).output
    assert "size = 200" in kept and 'name = "mine"' in kept
    rows = list(csv.DictReader(io.StringIO(_ragmeter("history", "export", *where).output)))
    mine = [r for r in rows if r["metric"] == "recall@5"]
    assert [r["commit"] for r in mine] == [
        commits[0],
        commits[1],
        commits[2],
        commits[2],
        commits[3],
    ]
    out = repo / "runs.json"
    _ragmeter("history", "export", "--format", "json", "--scores", "--out", str(out), *where)
    runs = json.loads(out.read_text())
    assert len(runs) == 5 and runs[0]["scores"]["values"]["mine"]["recall@5"]
    assert (
        runs[1]["estimates"]["mine"]["recall@5"]["mean"]
        > runs[0]["estimates"]["mine"]["recall@5"]["mean"]
    )
    _ragmeter("history", "export", "--format", "xml", *where, code=2)


@pytest.mark.parametrize(
    ("ref", "code", "says"),
    [
        ("5", 2, "history run 5 is the candidate's own record"),
        ("#5", 2, "history run 5 is the candidate's own record"),
        ("COMMIT", 2, "other than the candidate's own"),
        ("latest", 1, "Baseline: history run 3"),
        ("latest:main", 1, "Baseline: history run 3"),
        ("latest:nope", 2, "no recorded run holding system 'mine' on branch 'nope'"),
    ],
)
def test_the_gate_never_takes_the_candidate_as_its_own_baseline(project, ref, code, says):
    """r4 is run 5: named by its id it is refused (it would pass against itself), at its
    commit it is the only run, and latest passes over it."""
    repo, commits = project
    ref = commits[3][:8] if ref == "COMMIT" else ref
    args = ["check", str(repo / "r4"), "--baseline-from-history", ref, "--system", "mine"]
    result = _ragmeter(*args, "--history", str(repo / ".ragmeter"), code=code)
    assert says in " ".join(result.output.split())
    if code == 2:
        assert "PASS" not in result.output and "FAIL" not in result.output


def test_a_folder_with_the_same_scores_elsewhere_is_not_the_candidates_own(project):
    # r_unrecorded holds r4's scores but was never recorded: run 5 is another folder's run
    repo, _ = project
    args = ["check", str(repo / "r_unrecorded"), "--baseline-from-history", "5"]
    args += ["--system", "mine", "--margin", "3"]
    out = _ragmeter(*args, "--history", str(repo / ".ragmeter"))
    assert "Baseline: history run 5" in out.output and "PASS recall@5 mine" in out.output

"""``ragmeter.history.trend``: series of comparable runs, the break where the measurement
changes and the change when it changes back, the direction of a change, each run's own
interval (saved, or computed with its method and confidence), and the exports."""

from __future__ import annotations

import json
import math
import subprocess

import numpy as np
import pytest
from typer.testing import CliRunner

from ragmeter import stats
from ragmeter.cli import app
from ragmeter.errors import InputError
from ragmeter.history.ancestry import Ancestry
from ragmeter.history.store import HistoryStore
from ragmeter.history.trend import RecordedRun, _finite, comparable, export_json, trend

A = {"corpus": "c1", "testset": "t1", "relevant_grade": 2}
B = dict(A, relevant_grade=1)
IDS = [f"q{i}" for i in range(60)]


def _add(store, values, measured=A, summary=None, ids=IDS, metrics=("recall@5",), git=None):
    scores = {
        "systems": ["s"],
        "questions": ids,
        "metrics": list(metrics),
        "values": {"s": {m: list(values) for m in metrics}},
    }
    summary = {"metric": metrics[0], "seed": 1, "rounds": 300} | (summary or {})
    files = {
        "scores.json": json.dumps(scores).encode(),
        "summary.json": json.dumps(summary).encode(),
        "meta.json": json.dumps({"measurement": measured}).encode(),
    }
    return store.add(files, command="search", results="r", git=git or {})


@pytest.fixture()
def store(tmp_path):
    with HistoryStore(tmp_path / "h") as s:
        yield s


def test_a_break_then_the_change_within_the_series(store):
    high = [1.0] * 50 + [0.0] * 10
    low = [1.0] * 10 + [0.0] * 50
    _add(store, high)  # 1: series 0
    _add(store, low, measured=B)  # 2: another measurement, series 1
    _add(store, low)  # 3: series 0 again, compared with run 1
    t = trend(store, "s")
    assert [p.series for p in t.points] == [0, 1, 0]
    p1, p2, p3 = t.points
    assert p1.gap is None and p1.change is None
    assert p2.change is None and (p2.gap.earlier, p2.gap.later) == (1, 2)
    assert len(p2.gap.reasons) == 1  # the relevance level
    assert (p3.gap.earlier, p3.gap.later) == (2, 3)  # just before it: run 2
    assert (p3.change.earlier, p3.change.later) == (1, 3)
    assert p3.change.row.difference.mean == pytest.approx(np.mean(low) - np.mean(high))
    assert p3.change.direction == "worse"
    _add(store, high)  # 4: compared with run 3
    assert trend(store, "s").points[-1].change.direction == "better"
    assert [c.earlier for c in trend(store, "s").changes] == [1, 3]


def test_runs_given_need_a_metric_and_a_cost_is_refused(store):
    r1 = _add(store, [1.0] * 60, metrics=("recall@5", "words@5"))
    with pytest.raises(InputError, match="give the metric of the trend"):
        trend(store, "s", runs=[r1])
    assert trend(store, "s", "recall@5", runs=[r1]).metric == "recall@5"
    with pytest.raises(InputError, match="is a cost"):
        trend(store, "s", "words@5")


def test_only_runs_holding_the_metric_count(store):
    _add(store, [1.0] * 60, metrics=("mrr@10",))
    _add(store, [0.5] * 60, metrics=("recall@5",))
    t = trend(store, "s")  # the newest run's metric
    assert t.metric == "recall@5" and [p.run.id for p in t.points] == [2]
    assert [p.run.id for p in trend(store, "s", "mrr@10").points] == [1]
    with pytest.raises(InputError, match="has metric 'ndcg@10'"):
        trend(store, "s", "ndcg@10")
    with pytest.raises(InputError, match="no recorded run holds system 'z'"):
        trend(store, "z")


def test_each_run_shows_its_own_interval(store):
    values = [1.0] * 20 + [0.0] * 40
    saved = stats.bootstrap(np.array(values), rounds=300, seed=1).to_dict() | {"mean": 0.123}
    _add(store, values, summary={"estimates": {"s": {"recall@5": saved}}})
    _add(store, values, summary={"method": "bca", "confidence": 0.9})
    _add(store, values)
    p1, p2, p3 = trend(store, "s").points
    assert p1.estimate.mean == 0.123
    assert (p2.estimate.method, p2.estimate.confidence) == ("bca", 0.9)
    want = stats.bootstrap(np.array(values), 300, 1, "percentile", 0.95)
    assert (p3.estimate.method, p3.estimate.confidence) == ("percentile", 0.95)
    assert (p3.estimate.low, p3.estimate.high) == (want.low, want.high)
    assert RecordedRun(store, store.get(3)).confidence == 0.95


def test_comparable_names_the_questions_when_only_they_differ(store):
    r1 = _add(store, [1.0] * 60)
    r2 = _add(store, [1.0] * 60, measured=B)
    assert comparable(r1, r1, "recall@5", IDS, list(reversed(IDS))) == []
    assert comparable(r1, r1, "recall@5", IDS, IDS[:-1]) == ["the questions (their ids)"]
    assert comparable(r1, r1, "recall@5", ["q1", "q1"], ["q1", "q1"]) == [
        "the questions (their ids)"
    ]
    assert comparable(r1, r2, "recall@5", IDS, IDS) != []


def test_exports_keep_estimates_and_scores_as_strict_json(store):
    values = [1.0] * 30 + [0.0] * 30
    saved = stats.bootstrap(np.array(values), rounds=300, seed=1).to_dict()
    _add(store, values, summary={"estimates": {"s": {"recall@5": saved}}})
    _add(store, values)
    records = store.runs()
    rows = export_json(records, store, scores=True)
    assert rows[0]["estimates"]["s"]["recall@5"]["mean"] == saved["mean"]
    assert rows[1]["estimates"] == {}
    assert rows[0]["scores"] == {"questions": IDS, "values": {"s": {"recall@5": values}}}
    assert "scores" not in export_json(records, store)[0]
    got = _finite({"a": math.nan, "b": [math.inf, 1.5, {"c": -math.inf}], "d": "x", "e": 2})
    assert got == {"a": None, "b": [None, 1.5, {"c": None}], "d": "x", "e": 2}


# --- runs of branches beside each other ---------------------------------------------------------


def _git(repo, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def _commit(repo, branch: str, message: str) -> str:
    """A new commit on ``branch`` (made from the checked-out commit when new); its sha."""
    if branch != _git(repo, "symbolic-ref", "--short", "HEAD"):
        known = _git(repo, "branch", "--list", branch)
        _git(repo, "checkout", "-q", *(() if known else ("-b",)), branch)
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty",
         "-m", message)  # fmt: skip
    return _git(repo, "rev-parse", "HEAD")


def test_a_branchs_run_is_compared_with_its_history_never_with_a_branch_beside_it(
    tmp_path, monkeypatch
):
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    high = [1.0] * 50 + [0.0] * 10
    low = [1.0] * 10 + [0.0] * 50
    with HistoryStore(tmp_path / "h") as store:
        for branch, values in (("main", high), ("regression", low), ("docs", high)):
            if branch == "docs":
                _git(repo, "checkout", "-q", "main")
            sha = _commit(repo, branch, branch)
            git = {"commit": sha, "branch": branch, "dirty": False}
            _add(store, values, git=git)
        t = trend(store, "s", ancestry=Ancestry(repo))  # checked out: docs
        assert [p.change.earlier if p.change else None for p in t.points] == [None, 1, 1]
        assert [c.direction for c in t.changes] == ["worse", "no change"]
        assert [p.other_branch for p in t.points] == [False, True, False]
        assert [p.series for p in t.points] == [0, 0, 0] and not t.breaks
    monkeypatch.chdir(repo)  # the command asks git where it runs
    shown = CliRunner().invoke(
        app, ["history", "trend", "--system", "s", "--json", "--history", str(tmp_path / "h")]
    )
    assert shown.exit_code == 0, shown.output
    points = json.loads(shown.output)["points"]
    assert [p["change"] and p["change"]["earlier"] for p in points] == [None, 1, 1]
    assert [p["other_branch"] for p in points] == [False, True, False]
    table = CliRunner().invoke(
        app, ["history", "trend", "--system", "s", "--history", str(tmp_path / "h")],
        env={"COLUMNS": "300"},
    )  # fmt: skip
    assert "on branch regression, not in the checked-out commit's history" in table.output

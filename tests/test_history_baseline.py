"""``ragmeter.history.baseline``: every kind of reference (run id, ``latest``,
``latest:BRANCH``, a commit) over a store of several runs, the candidate's own record left
out, the measurement preferred, and a recorded run written back as a folder."""

from __future__ import annotations

import json
import subprocess
from hashlib import blake2b

import pytest
from typer.testing import CliRunner

from ragmeter.cli import app
from ragmeter.errors import InputError
from ragmeter.history.ancestry import Ancestry
from ragmeter.history.baseline import materialise, recorded_baseline, resolve_ref, scores_digest
from ragmeter.history.store import HistoryStore

MEASURED = {"corpus": "c1", "testset": "t1", "relevant_grade": 2, "depth": 10}


def _files(systems, metrics, values=0.5, measured=MEASURED, extra=None):
    scores = {
        "systems": systems,
        "questions": ["q1", "q2"],
        "metrics": metrics,
        "values": {s: {m: [values, 1.0] for m in metrics} for s in systems},
    }
    out = {
        "scores.json": json.dumps(scores).encode(),
        "summary.json": json.dumps({"metric": metrics[0], "seed": 1, "rounds": 100}).encode(),
        "meta.json": json.dumps({"measurement": measured}).encode(),
    }
    return out | (extra or {})


@pytest.fixture()
def store(tmp_path):
    """Five runs: (results, commit, branch, systems, metrics, measurement)."""
    other = dict(MEASURED, testset="t2")
    rows = [
        ("r/a", "aaaa1111", "main", ["s", "t"], ["recall@5", "mrr@10"], 0.1, MEASURED),
        ("r/b", "bbbb2222", "main", ["s"], ["recall@5"], 0.2, MEASURED),
        ("r/a", "cccc3333", "feature", ["s", "t"], ["recall@5", "mrr@10"], 0.1, other),
        ("r/c", "ABCD4444", "feature", ["s"], ["recall@5"], 0.3, other),
    ]
    with HistoryStore(tmp_path / "hist") as s:
        for results, commit, branch, systems, metrics, v, m in rows:
            git = {"commit": commit.lower(), "branch": branch, "dirty": False}
            s.add(_files(systems, metrics, v, m), command="search", results=results, git=git)
        yield s


def test_a_run_id_with_or_without_hash_and_what_it_must_hold(store):
    assert resolve_ref(store, " #2 ").id == 2 == resolve_ref(store, "2").id
    assert resolve_ref(store, "1", system="t", metric="mrr@10").id == 1
    assert resolve_ref(store, "latest:").id == 4  # no branch named: any
    with pytest.raises(InputError, match="no metric 'mrr@10'"):
        resolve_ref(store, "2", metric="mrr@10")
    with pytest.raises(InputError, match="no system 't'"):
        resolve_ref(store, "2", system="t")


def test_latest_is_the_newest_holding_the_system_and_metric(store):
    assert resolve_ref(store, "latest").id == 4
    assert resolve_ref(store, "latest", system="t").id == 3
    assert resolve_ref(store, "latest", metric="mrr@10").id == 3
    assert resolve_ref(store, "latest:main", system="t").id == 1
    assert resolve_ref(store, "latest:main").id == 2
    assert resolve_ref(store, "latest:feature").id == 4
    with pytest.raises(InputError, match="no recorded run holding system 'u'"):
        resolve_ref(store, "latest", system="u")


def test_the_candidates_own_newest_record_is_left_out(store):
    own = ("r/a", store.get(3).scores_digest)
    assert store.get(1).scores_digest == own[1]  # #1 and #3: the same folder and scores
    assert resolve_ref(store, "latest", exclude=own).id == 4
    assert resolve_ref(store, "latest:feature", exclude=own).id == 4
    with pytest.raises(InputError, match="no recorded run"):
        resolve_ref(store, "cccc", exclude=own)
    assert resolve_ref(store, "aaaa", exclude=own).id == 1  # only the newest is its own
    assert resolve_ref(store, "latest", exclude=("r/zz", "0" * 32)).id == 4


def test_a_commit_by_four_hex_digits_or_more_in_either_case(store):
    assert resolve_ref(store, "bbbb").id == 2
    assert resolve_ref(store, "ABCD").id == 4 == resolve_ref(store, "abcd4").id
    for bad in ("bbb", "bbbz", "main"):
        with pytest.raises(InputError):
            resolve_ref(store, bad)
    with pytest.raises(InputError, match="at commit dddd"):
        resolve_ref(store, "dddd")


def test_the_newest_run_that_measured_the_same_is_preferred(store):
    assert resolve_ref(store, "latest", like=MEASURED).id == 2
    assert resolve_ref(store, "latest", like=MEASURED, metric="recall@5").id == 2
    assert resolve_ref(store, "latest:feature", like=MEASURED).id == 4  # none did: newest
    assert resolve_ref(store, "latest", like=dict(MEASURED, testset="t2")).id == 4


def test_a_run_is_written_back_with_its_folders(store, tmp_path):
    files = _files(["s"], ["recall@5"], extra={"answers/deep/hand.jsonl": b"typed\n"})
    rec = store.add(files, command="search", results="r/d", git={})
    (tmp_path / "empty").mkdir()
    back = materialise(store, rec.id, tmp_path / "empty")
    assert back == tmp_path / "empty"
    assert (back / "answers" / "deep" / "hand.jsonl").read_bytes() == b"typed\n"
    assert (back / "scores.json").read_bytes() == files["scores.json"]
    with pytest.raises(InputError, match="not empty"):
        materialise(store, rec.id, back)
    assert scores_digest(back) == rec.scores_digest
    want = blake2b(files["scores.json"], digest_size=16).hexdigest()
    assert scores_digest(back) == want and len(want) == 32


def _git(repo, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def _commit(repo, branch: str) -> str:
    """A new commit on ``branch`` (made from the checked-out commit when new); its sha."""
    if branch != _git(repo, "symbolic-ref", "--short", "HEAD"):
        known = _git(repo, "branch", "--list", branch)
        _git(repo, "checkout", "-q", *(() if known else ("-b",)), branch)
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty",
         "-m", branch)  # fmt: skip
    return _git(repo, "rev-parse", "HEAD")


def test_latest_of_a_branch_follows_git_to_where_the_candidate_left_it(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    with HistoryStore(tmp_path / "hist") as store:

        def run(branch: str, recorded_as: str | None = None) -> int:
            git = {"commit": _commit(repo, branch), "branch": recorded_as or branch}
            return store.add(_files(["s"], ["recall@5"]), command="search", results="r",
                             git=git).id  # fmt: skip

        forked = run("main")  # 1: where the candidate's branch leaves main
        run("docs")  # 2: a branch beside it, from main
        _git(repo, "checkout", "-q", "main")
        later = run("main")  # 3: main after the fork
        run("docs", recorded_as="main")  # 4: a CI job that named its branch main
        _git(repo, "checkout", "-q", "-b", "feature", store.get(forked).commit)
        own = run("feature")  # 5: the candidate's own record
        line = Ancestry(repo)
        exclude = ("r", store.get(own).scores_digest)
        assert resolve_ref(store, "latest:main", ancestry=line, exclude=exclude).id == forked
        assert resolve_ref(store, "latest:docs", ancestry=line, exclude=exclude).id == forked
        _git(repo, "checkout", "-q", "main")  # on main: its newest run, not the docs job's
        assert resolve_ref(store, "latest:main", ancestry=Ancestry(repo)).id == later
        # where git does not know the branch (or there is no git): the branch's name
        bare = Ancestry(tmp_path)
        assert resolve_ref(store, "latest:main", ancestry=bare).id == 4
        with pytest.raises(InputError, match="in the history of main"):
            resolve_ref(store, "latest:main", ancestry=line, system="t")


def test_a_baseline_of_another_branch_is_named_as_such(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    questions = b"".join(
        json.dumps({"id": q, "question": f"{q}?", "answers": []}).encode() + b"\n"
        for q in ("q1", "q2")
    )
    kept = {"config.toml": b"[stats]\nseed = 1\n", "questions.jsonl": questions}
    with HistoryStore(tmp_path / "hist") as store:
        for branch in ("main", "docs"):
            git = {"commit": _commit(repo, branch), "branch": branch}
            store.add(_files(["s"], ["recall@5"], extra=kept), command="search",
                      results=f"r/{branch}", git=git)  # fmt: skip
        candidate = materialise(store, 1, tmp_path / "candidate")
    _git(repo, "checkout", "-q", "main")
    monkeypatch.chdir(repo)
    args = ["check", str(candidate), "--system", "s", "--history", str(tmp_path / "hist")]
    for ref, elsewhere in (("#2", True), ("latest:main", False)):
        done = CliRunner().invoke(app, [*args, "--baseline-from-history", ref])
        line = next(x for x in done.output.splitlines() if x.startswith("Baseline:"))
        assert ("not in the checked-out commit's history" in line) is elsewhere, line


def test_the_recorded_baseline_is_found_written_back_and_placed_by_the_library(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    questions = b"".join(
        json.dumps({"id": q, "question": f"{q}?", "answers": []}).encode() + b"\n"
        for q in ("q1", "q2")
    )
    kept = {"config.toml": b"[stats]\nseed = 1\n", "questions.jsonl": questions}
    with HistoryStore(tmp_path / "hist") as store:
        for branch in ("main", "docs"):
            git = {"commit": _commit(repo, branch), "branch": branch}
            store.add(_files(["s"], ["recall@5"], extra=kept), command="search",
                      results=f"r/{branch}", git=git)  # fmt: skip
        candidate = materialise(store, 1, tmp_path / "candidate")
        _git(repo, "checkout", "-q", "main")
        for n, (ref, elsewhere) in enumerate((("#2", True), ("latest:main", False))):
            (tmp_path / f"b{n}").mkdir()
            found = recorded_baseline(
                store, ref, candidate, tmp_path / f"b{n}", system="s", ancestry=Ancestry(repo)
            )
            assert found.elsewhere is elsewhere and found.system == "s"
            assert found.path == tmp_path / f"b{n}" / f"run-{found.run.id}"
            assert (found.path / "scores.json").read_bytes() == store.files(found.run.id)[
                "scores.json"
            ]

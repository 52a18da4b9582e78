"""The run history store: records survive concurrent writers and a writer killed with
SIGKILL mid-record; a file that is not a run history is refused, never changed."""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import ragmeter
from ragmeter.cli import app
from ragmeter.errors import InputError
from ragmeter.history import store as history
from ragmeter.history.baseline import materialise, resolve_ref
from ragmeter.history.store import (
    APPLICATION_ID,
    DEFAULT_DIR,
    ENV,
    SCHEMA_VERSION,
    HistoryStore,
    locate,
    open_history,
    record,
)
from ragmeter.inputs.config import load_config
from ragmeter.runs.results import Results


def results_dir(
    path: Path, values: list[float], ids: list[str] | None = None, testset: str = "t1"
) -> Path:
    """A small results directory: recall@5 of system ``s`` on each question."""
    ids = ids or [f"q{i}" for i in range(len(values))]
    path.mkdir(parents=True)
    (path / "scores.json").write_text(
        json.dumps(
            {
                "systems": ["s"],
                "questions": ids,
                "metrics": ["recall@5"],
                "values": {"s": {"recall@5": values}},
            }
        )
    )
    measured = {"corpus": "c1", "testset": testset, "relevant_grade": 2, "depth": 10}
    (path / "meta.json").write_text(
        json.dumps({"seed": 1, "rounds": 1000, "measurement": measured})
    )
    (path / "summary.json").write_text(
        json.dumps({"metric": "recall@5", "seed": 1, "rounds": 1000, "confidence": 0.95})
    )
    (path / "config.toml").write_text("[stats]\nseed = 1\nrounds = 1000\n")
    (path / "questions.jsonl").write_text(
        "".join(json.dumps({"id": q, "question": f"{q}?", "answers": []}) + "\n" for q in ids)
    )
    return path


def _writer(folder: str, results: str, start, n: int, tag: str) -> None:
    start.wait(30)
    for _ in range(n):
        record(results, command=tag, history=folder)


def test_concurrent_writers_lose_no_record(tmp_path):
    res = results_dir(tmp_path / "r", [1.0, 0.0, 1.0, 1.0])
    folder = tmp_path / "hist"
    ctx = multiprocessing.get_context("spawn")
    start = ctx.Event()
    workers, each = 4, 6
    procs = [
        ctx.Process(target=_writer, args=(str(folder), str(res), start, each, f"w{i}"))
        for i in range(workers)
    ]
    for p in procs:
        p.start()
    start.set()  # all at once
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    with HistoryStore(folder, create=False) as store:
        runs = store.runs()
        assert len(runs) == workers * each
        assert sorted(r.command for r in runs) == sorted(
            f"w{i}" for i in range(workers) for _ in range(each)
        )
        assert len({r.uid for r in runs}) == len(runs)
        for r in runs:  # every record whole: all its files
            assert sorted(store.files(r.id)) == sorted(history.RESULT_FILES)
        assert store.store.query("PRAGMA integrity_check") == [("ok",)]


_KILLED = """
import sys, time
from pathlib import Path
from ragmeter.history import store as history
folder, results, flag = sys.argv[1:4]
history.record(results, command="whole", history=folder)
history.record(results, command="whole", history=folder)
real = history._pack
calls = []
def pack(data):
    calls.append(1)
    if len(calls) == 2:  # inside the transaction: the run's row and one file written
        Path(flag).write_text("inside")
        time.sleep(600)
    return real(data)
history._pack = pack
history.record(results, command="killed", history=folder)
"""


def test_a_writer_killed_mid_record_leaves_no_half_record(tmp_path):
    res = results_dir(tmp_path / "r", [1.0, 0.0, 1.0])
    folder, flag = tmp_path / "hist", tmp_path / "inside.flag"
    child = subprocess.Popen([sys.executable, "-c", _KILLED, str(folder), str(res), str(flag)])
    try:
        deadline = time.monotonic() + 120
        while not flag.exists():  # wait for the child to be inside its transaction
            assert child.poll() is None, "the writer ended before the kill"
            assert time.monotonic() < deadline, "the writer never reached the transaction"
            time.sleep(0.02)
        os.kill(child.pid, signal.SIGKILL)
        assert child.wait(30) == -signal.SIGKILL
    finally:
        if child.poll() is None:
            child.kill()
    with HistoryStore(folder, create=False) as store:
        runs = store.runs()
        assert [r.command for r in runs] == ["whole", "whole"]
        orphans = store.store.query(
            "SELECT count(*) FROM run_files WHERE run NOT IN (SELECT id FROM runs)"
        )
        assert orphans == [(0,)]
        assert store.store.query("PRAGMA integrity_check") == [("ok",)]
    # the lock died with the writer: the next record goes through
    after = record(res, command="after", history=folder)
    assert after.id > runs[-1].id


def test_a_file_that_is_not_a_run_history_is_refused_and_left_as_it_is(tmp_path):
    res = results_dir(tmp_path / "r", [1.0, 0.0])
    text = tmp_path / "text" / "history.sqlite"
    text.parent.mkdir()
    text.write_text("not a database at all, " * 10)
    other = tmp_path / "other" / "history.sqlite"
    other.parent.mkdir()
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE users (name TEXT)")
    marked = tmp_path / "marked" / "history.sqlite"
    marked.parent.mkdir()
    with sqlite3.connect(marked) as conn:
        conn.execute("PRAGMA application_id = 1234")
        conn.execute("CREATE TABLE runs (id INTEGER)")
    newer = tmp_path / "newer"
    record(res, history=newer)
    with sqlite3.connect(newer / "history.sqlite") as conn:
        conn.execute(f"PRAGMA user_version = {history.SCHEMA_VERSION + 1}")
    for folder, why in (
        (text, "not an SQLite file"),
        (other, "table users"),
        (marked, "application_id 0x4d2"),
        (newer, "newer ragmeter"),
    ):
        before = (folder if folder.suffix else folder / "history.sqlite").read_bytes()
        with pytest.raises(InputError, match=why):
            record(res, history=folder.parent if folder.suffix else folder)
        assert (folder if folder.suffix else folder / "history.sqlite").read_bytes() == before


def test_where_the_history_lives(tmp_path, monkeypatch):
    monkeypatch.delenv("RAGMETER_HISTORY", raising=False)
    assert locate(cwd=tmp_path) == tmp_path / ".ragmeter"
    cfg = tmp_path / "proj" / "ragmeter.toml"
    cfg.parent.mkdir()
    cfg.write_text('[history]\npath = "runs"\n')
    assert locate(cfg) == tmp_path / "proj" / "runs"
    assert locate(cwd=cfg.parent) == cfg.parent / "runs"  # ./ragmeter.toml is read
    assert load_config(cfg).extra["history"] == {"path": "runs"}  # a section of the config
    cfg.write_text('[history]\npth = "runs"\n')
    with pytest.raises(InputError, match="unknown key \\[history\\] pth .*did you mean 'path'"):
        load_config(cfg)
    cfg.write_text("[history]\nenabled = false\n")
    assert locate(cfg, recording=True) is None
    assert locate(cfg) == cfg.parent / ".ragmeter"  # reading still finds it
    cfg.write_text('[history]\nenabled = "no"\n')
    with pytest.raises(InputError, match=r"\[history\] enabled must be true or false"):
        locate(cfg)
    monkeypatch.setenv("RAGMETER_HISTORY", str(tmp_path / "env"))
    cfg.write_text("")
    assert locate(cfg, recording=True) == tmp_path / "env"
    monkeypatch.setenv("RAGMETER_HISTORY", "off")
    assert locate(cfg, recording=True) is None


def test_record_from_a_notebook_uses_the_current_folder(tmp_path, monkeypatch):
    monkeypatch.delenv("RAGMETER_HISTORY", raising=False)
    monkeypatch.chdir(tmp_path)
    res = results_dir(tmp_path / "r", [1.0, 0.0, 1.0])
    kept = history.record(res)
    assert kept.id == 1 and kept.results == str(res.resolve())
    assert (tmp_path / ".ragmeter" / "history.sqlite").is_file()
    assert (tmp_path / ".ragmeter" / ".gitignore").read_text() == "*\n"
    assert kept.commit == "" and kept.dirty is None  # no git here


def _git(repo: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@e",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@e",
    }
    return subprocess.run(
        ["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True
    ).stdout.strip()


def test_git_state_commit_branch_and_dirty(tmp_path):
    assert history.git_state(tmp_path) == {"commit": "", "branch": "", "dirty": None}
    _git(tmp_path, "init", "-q", "-b", "trunk")
    (tmp_path / "code.py").write_text("x = 1\n")
    _git(tmp_path, "add", "code.py")
    _git(tmp_path, "commit", "-q", "-m", "one")
    head = _git(tmp_path, "rev-parse", "HEAD")
    (tmp_path / "results.json").write_text("{}")  # untracked: still clean
    assert history.git_state(tmp_path) == {"commit": head, "branch": "trunk", "dirty": False}
    (tmp_path / "code.py").write_text("x = 2\n")
    assert history.git_state(tmp_path)["dirty"] is True


def test_refs_and_the_baseline_written_back(tmp_path):
    rng = np.random.default_rng(3)
    folder = tmp_path / "hist"
    kept = []
    for i, branch in enumerate(["main", "main", "feature"]):
        res = results_dir(
            tmp_path / f"r{i}", (rng.random(50) < 0.5 + 0.1 * i).astype(float).tolist()
        )
        with HistoryStore(folder) as store:
            files = history.read_results_files(res)
            git = {"commit": f"{i}abc{i}" * 5, "branch": branch, "dirty": False}
            kept.append(store.add(files, command="search", results=str(res), git=git))
    with HistoryStore(folder, create=False) as store:
        assert resolve_ref(store, "2").id == 2 == resolve_ref(store, "#2").id
        assert resolve_ref(store, "latest").id == 3
        assert resolve_ref(store, "latest:main").id == 2
        assert resolve_ref(store, "1abc").id == 2
        own = (kept[2].results, kept[2].scores_digest)
        assert resolve_ref(store, "latest", exclude=own).id == 2
        for bad, why in (
            ("latest:nope", "no recorded run"),
            ("x!", "give a run id"),
            ("9", "no run 9"),
        ):
            with pytest.raises(InputError, match=why):
                resolve_ref(store, bad)
        with pytest.raises(InputError, match="no system 'z'"):
            resolve_ref(store, "1", system="z")
        back = materialise(store, 2, tmp_path / "back")
    original, copy = Results(tmp_path / "r1"), Results(back)
    assert copy.question_ids == original.question_ids
    assert np.array_equal(copy.scores("s", "recall@5"), original.scores("s", "recall@5"))
    assert copy.meta == original.meta


def test_recording_off_and_a_foreign_history(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RAGMETER_HISTORY", raising=False)
    res = tmp_path / "r"
    (tmp_path / "ragmeter.toml").write_text("[history]\nenabled = false\n")
    results_dir(res, [1.0, 0.0, 1.0])
    assert history.record_if_enabled(res, "search", tmp_path / "ragmeter.toml") is None
    assert not (tmp_path / ".ragmeter").exists()
    (tmp_path / "ragmeter.toml").write_text('[history]\npath = "elsewhere"\n')
    kept = history.record_if_enabled(res, "search", tmp_path / "ragmeter.toml")
    assert kept is not None and (tmp_path / "elsewhere" / "history.sqlite").is_file()
    # a file that is not a history: commands refuse it on one line, exit 2
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "history.sqlite").write_text("hello")
    result = CliRunner().invoke(app, ["history", "list", "--history", str(bad)])
    assert result.exit_code == 2 and "not a ragmeter run history" in result.output


# --- a damaged history, a history path that is not one, and what a ref names ------------------


def _damaged_history(tmp_path) -> Path:
    """A run history of four runs whose pages after the first are overwritten."""
    folder = tmp_path / "hist"
    rng = np.random.default_rng(5)
    for i in range(4):
        res = results_dir(tmp_path / f"d{i}", (rng.random(400) < 0.5).astype(float).tolist())
        record(res, command="search", history=folder)
    path = folder / "history.sqlite"
    data = bytearray(path.read_bytes())
    assert len(data) > 3 * 4096
    for at in range(4096, len(data), 4096):  # every page but the first: its header and cells
        data[at : at + 600] = bytes(range(256)) * 2 + bytes(88)
    path.write_bytes(bytes(data))
    return folder


@pytest.mark.parametrize(
    "args",
    [
        ["history", "list"],
        ["history", "trend", "--system", "s"],
        ["history", "show", "2"],
        ["history", "export"],
        ["check", "CANDIDATE", "--baseline-from-history", "latest", "--system", "s"],
        ["check", "CANDIDATE", "--baseline-from-history", "1", "--system", "s"],
    ],
)
def test_a_damaged_history_is_one_line_naming_the_file(tmp_path, args):
    folder = _damaged_history(tmp_path)
    args = [str(tmp_path / "d3") if a == "CANDIDATE" else a for a in args]
    result = CliRunner().invoke(app, [*args, "--history", str(folder)])
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "the run history is damaged" in lines[0], result.output
    assert str(folder / "history.sqlite") in " ".join(result.output.split())
    assert "move the file away" in result.output


def test_a_search_keeps_its_results_and_report_when_the_history_is_damaged(tmp_path, monkeypatch):
    folder = _damaged_history(tmp_path)
    monkeypatch.setenv("RAGMETER_HISTORY", str(folder))
    monkeypatch.chdir(tmp_path)
    before = (folder / "history.sqlite").read_bytes()
    result = CliRunner().invoke(app, ["-q", "search", "--rounds", "200", "-o", "res"])
    assert result.exit_code == 0, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "run not recorded in the history" in result.output
    assert "the run history is damaged" in result.output
    assert (tmp_path / "res" / "scores.json").is_file()
    assert (tmp_path / "res" / "report.html").is_file()
    assert (folder / "history.sqlite").read_bytes() == before  # left as it was


def test_a_file_given_as_the_history_folder_says_so(tmp_path):
    questions = tmp_path / "questions.jsonl"
    questions.write_text('{"id": "q1"}\n')
    for args in (["history", "list"], ["history", "trend", "--system", "s"]):
        result = CliRunner().invoke(app, [*args, "--history", str(questions)])
        assert result.exit_code == 2, result.output
        assert "is a file, not a run history folder" in result.output
        assert "no run history here yet" not in result.output
    res = results_dir(tmp_path / "r", [1.0, 0.0])
    with pytest.raises(InputError, match="is a file, not a run history folder"):
        record(res, history=questions)
    assert questions.read_text() == '{"id": "q1"}\n'


def _store_with_ids(tmp_path, commits: list[str], first_id: int = 1) -> Path:
    folder = tmp_path / "hist"
    for i, commit in enumerate(commits):
        res = results_dir(tmp_path / f"c{i}", [1.0, 0.0, float(i % 2)])
        with HistoryStore(folder) as store:
            if i == 0 and first_id > 1:
                store.store.query(
                    "INSERT INTO sqlite_sequence (name, seq) VALUES ('runs', ?)", (first_id - 1,)
                )
            files = history.read_results_files(res)
            git = {"commit": commit, "branch": "main", "dirty": False}
            store.add(files, command="search", results=str(res), git=git)
    return folder


def test_an_all_digit_commit_prefix_is_a_commit_or_a_run_id_or_named_ambiguous(tmp_path):
    commits = ["3003" + "a" * 36, "4004" + "b" * 36]
    folder = _store_with_ids(tmp_path, commits)
    with HistoryStore(folder, create=False) as store:
        assert resolve_ref(store, "3003").commit == commits[0]  # no run 3003: the commit
        assert resolve_ref(store, "4004").commit == commits[1]
        assert resolve_ref(store, "2").id == 2  # under 4 digits: a run id
        with pytest.raises(InputError, match="no run 5005") as err:
            resolve_ref(store, "5005")
        assert "and no recorded commit starting 5005" in str(err.value)
    both = _store_with_ids(tmp_path / "both", ["3003" + "c" * 36, "dddd" + "d" * 36], 3002)
    with HistoryStore(both, create=False) as store:
        assert [r.id for r in store.runs()] == [3002, 3003]
        with pytest.raises(InputError, match=r"names both run 3003 and commit 3003c") as err:
            resolve_ref(store, "3003")
        assert "give #3003 for the run, or more digits of the commit" in str(err.value)
        assert resolve_ref(store, "#3003").id == 3003
        assert resolve_ref(store, "3003cc").id == 3002


def test_a_read_only_history_folder_is_named_as_read_only(tmp_path):
    """Run as an unprivileged user (root writes anywhere): the history's folder is
    read-only, so SQLite cannot write its journal; the message says that."""
    res = results_dir(tmp_path / "r", [1.0, 0.0, 1.0])
    folder = tmp_path / "hist"
    record(res, history=folder)
    (folder / "history.sqlite-wal").unlink(missing_ok=True)
    (folder / "history.sqlite-shm").unlink(missing_ok=True)
    tmp_path.chmod(0o755)
    folder.chmod(0o555)
    (folder / "history.sqlite").chmod(0o444)
    src = Path(ragmeter.__file__).resolve().parents[1]  # the src folder these tests run
    code = (
        "import sys; from ragmeter.cli import app; "
        "sys.argv = ['ragmeter', 'history', 'list', '--history', sys.argv[1]]; app()"
    )
    cmd = [sys.executable, "-c", code, str(folder)]
    if os.geteuid() == 0 and shutil.which("setpriv") is None:
        pytest.skip("root writes anywhere, and setpriv is not here to run as another user")
    if os.geteuid() == 0:
        cmd = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", *cmd]
    parents = [p for p in tmp_path.parents if p != Path("/")]
    modes = {p: p.stat().st_mode for p in parents}
    try:
        for p in parents:  # the way down to the history, for that user
            p.chmod(p.stat().st_mode | 0o011)
        done = subprocess.run(
            cmd, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(src)}
        )
    finally:
        for p, mode in modes.items():
            p.chmod(mode)
        folder.chmod(0o755)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "not a run history" not in done.stderr
    assert "is read-only" in done.stderr and "make the folder writable" in done.stderr


def test_a_run_whose_kept_scores_are_lost_is_one_line_not_a_key_error(tmp_path):
    folder = tmp_path / "hist"
    for i in range(2):
        record(results_dir(tmp_path / f"k{i}", [1.0, 0.0, 1.0, float(i)]), history=folder)
    with sqlite3.connect(folder / "history.sqlite") as conn:
        conn.execute("DELETE FROM run_files WHERE run = 2 AND name = 'scores.json'")
    for args in (["history", "show", "2"], ["history", "trend", "--system", "s"]):
        result = CliRunner().invoke(app, [*args, "--history", str(folder)])
        assert result.exit_code == 2, result.output
        assert result.exception is None or isinstance(result.exception, SystemExit)
        assert "the run history is damaged" in result.output
        assert "run 2 has no kept scores of 's', recall@5" in " ".join(result.output.split())
        assert "measured:" not in result.output  # nothing printed before the error


# ``ragmeter.history.store``: where the history lives (environment, config, working folder),
# what a record keeps (its time, git state, measurement, command), the files read back, and a
# newer history refused.


def _files(measured=None):
    scores = {"systems": ["s"], "questions": ["q1"], "metrics": ["recall@5"], "values": {}}
    meta = {} if measured is None else {"measurement": measured}
    return {
        "scores.json": json.dumps(scores).encode(),
        "summary.json": json.dumps({"metric": "recall@5", "seed": 3}).encode(),
        "meta.json": json.dumps(meta).encode(),
    }


def test_a_record_keeps_its_time_git_state_and_measurement(tmp_path):
    with HistoryStore(tmp_path / "h") as store:
        git = {"commit": "abc", "branch": "main", "dirty": None}
        first = store.add(_files(), command="search", results="r", git=git)
        assert first.id == 1 and first.dirty is None and first.measurement == {}
        second = store.add(
            _files({"corpus": "c"}),
            command="evaluate",
            results="r",
            git=dict(git, dirty=False),
            recorded_at="2020-01-02T03:04:05+00:00",
        )
        assert second.id == 2 and second.dirty is False
        assert second.recorded_at == "2020-01-02T03:04:05+00:00"
        assert second.measurement == {"corpus": "c"}
        third = store.add(_files(), command="x", results="r", git=dict(git, dirty=True))
        assert third.dirty is True
        assert store.get(2).to_dict()["recorded_at"] == "2020-01-02T03:04:05+00:00"
        assert store.get(2).to_dict()["command"] == "evaluate"
        assert store.file_json(2, "summary.json") == {"metric": "recall@5", "seed": 3}
        assert store.file_json(2, "nothing.json") == {}


def test_a_new_default_folder_keeps_itself_out_of_git(tmp_path):
    HistoryStore(tmp_path / DEFAULT_DIR).close()
    assert (tmp_path / DEFAULT_DIR / ".gitignore").read_text() == "*\n"
    HistoryStore(tmp_path / "other").close()
    assert not (tmp_path / "other" / ".gitignore").exists()
    (tmp_path / "b" / DEFAULT_DIR).mkdir(parents=True)  # the user's own folder: left as is
    HistoryStore(tmp_path / "b" / DEFAULT_DIR).close()
    assert not (tmp_path / "b" / DEFAULT_DIR / ".gitignore").exists()


def test_a_missing_history_is_made_unless_refused(tmp_path):
    with pytest.raises(InputError, match="no run history here yet"):
        HistoryStore(tmp_path / "none", create=False)
    HistoryStore(tmp_path / "made").close()
    assert (tmp_path / "made").is_dir()  # made by default (the file on the first record)


def test_a_history_of_a_newer_schema_is_refused(tmp_path):
    path = tmp_path / "h" / "history.sqlite"
    path.parent.mkdir()
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.execute("CREATE TABLE t (x)")
    conn.commit()
    conn.close()
    with pytest.raises(InputError, match="newer ragmeter"):
        HistoryStore(tmp_path / "h")


def test_config_sections_are_type_checked(tmp_path):
    config = tmp_path / "ragmeter.toml"
    config.write_text("[history]\npath = 3\n")
    with pytest.raises(InputError, match="path must be a string"):
        locate(config)
    config.write_text('[history]\nenabled = "no"\n')
    with pytest.raises(InputError, match="enabled must be true or false"):
        locate(config)


def test_where_the_history_is(tmp_path, monkeypatch):
    monkeypatch.delenv(ENV, raising=False)
    assert locate(cwd=tmp_path) == tmp_path / DEFAULT_DIR
    (tmp_path / "ragmeter.toml").write_text('[history]\npath = "runs"\n')
    assert locate(cwd=tmp_path) == tmp_path.resolve() / "runs"  # the folder's own config
    off = tmp_path / "off.toml"
    off.write_text("[history]\nenabled = false\n")
    assert locate(off, recording=True) is None
    assert locate(off) == tmp_path.resolve() / DEFAULT_DIR  # reading still finds it
    monkeypatch.setenv(ENV, str(tmp_path / "env"))
    assert locate(off) == tmp_path / "env"
    assert locate(cwd=tmp_path, recording=True) == tmp_path / "env"
    monkeypatch.setenv(ENV, "off")
    assert locate(cwd=tmp_path, recording=True) is None
    assert locate(cwd=tmp_path) == tmp_path.resolve() / "runs"
    monkeypatch.delenv(ENV)
    monkeypatch.chdir(tmp_path)
    with open_history(config=tmp_path / "ragmeter.toml", create=True) as store:
        assert store.path == tmp_path.resolve() / "runs" / "history.sqlite"


def test_record_keeps_the_command(tmp_path, monkeypatch):
    res = tmp_path / "res"
    res.mkdir()
    for name, data in _files({"corpus": "c"}).items():
        (res / name).write_bytes(data)
    monkeypatch.setattr(history, "read_results_files", lambda _: _files({"corpus": "c"}))
    rec = history.record(res, command="check", history=tmp_path / "h")
    assert rec.command == "check" and rec.results == str(res.resolve())


# --- a command killed between its results and its record ---------------------------------------

_KILLED_BEFORE_RECORD = """
import os, signal, sys
from ragmeter.history.store import HistoryStore
def killed(*args, **kwargs):  # the results are written; the kill comes before the record
    os.kill(os.getpid(), signal.SIGKILL)
HistoryStore.add = killed
from ragmeter.cli import app
sys.argv = ["ragmeter", *sys.argv[1:]]
app()
"""


def _runs(folder: Path) -> list:
    with HistoryStore(folder, create=False) as store:
        return store.runs()


def test_a_search_killed_after_its_results_is_recorded_once_by_the_next_command(
    tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RAGMETER_HISTORY", raising=False)
    args = ["-q", "search", "--rounds", "200", "-o", "res"]
    done = subprocess.run([sys.executable, "-c", _KILLED_BEFORE_RECORD, *args], timeout=300)
    assert done.returncode == -signal.SIGKILL
    assert Results(tmp_path / "res").systems  # complete results, and no record yet
    if (tmp_path / DEFAULT_DIR / "history.sqlite").exists():
        assert _runs(DEFAULT_DIR) == []
    first = CliRunner().invoke(app, ["history", "list"])
    assert first.exit_code == 0, first.output
    said = [line for line in first.output.splitlines() if "stopped before recording" in line]
    assert said == [f"History: run 1 recorded from {tmp_path / 'res'} (its `ragmeter search` "
                    f"stopped before recording it)"]  # fmt: skip
    assert [(r.command, r.results) for r in _runs(DEFAULT_DIR)] == [
        ("search", str(tmp_path / "res"))
    ]
    again = CliRunner().invoke(app, ["history", "list"])  # recorded once, said once
    assert "stopped before recording" not in again.output
    assert len(_runs(DEFAULT_DIR)) == 1
    assert list((tmp_path / DEFAULT_DIR / "history.sqlite-unrecorded").iterdir()) == []
    later = CliRunner().invoke(app, args)  # the next search records its own run only
    assert later.exit_code == 0, later.output
    assert [r.id for r in _runs(DEFAULT_DIR)] == [1, 2]


def test_a_run_recorded_again_is_kept_once_and_never_waits(tmp_path):
    from ragmeter.files.outputs import results_lock
    from ragmeter.history import pending

    folder = tmp_path / "hist"
    res = tmp_path / "r"
    note = pending.begin(res, "search", folder)  # left before the results exist
    results_dir(res, [1.0, 0.0, 1.0])
    with results_lock(res):  # another command writes the results: left for later, at once
        started = time.monotonic()
        with ThreadPoolExecutor(1) as pool:
            assert pool.submit(pending.recover, folder).result(30) == []
        assert time.monotonic() - started < 10
    assert note.note.is_file()
    kept = pending.finish(note)
    assert pending.finish(note).id == kept.id  # recorded again: the same record
    with HistoryStore(folder) as store:  # the note, recovered after its record: nothing new
        assert store.add(history.read_results_files(res), command="x", results="r", git={},
                         uid=note.uid).id == kept.id  # fmt: skip
    assert pending.recover(folder) == []
    assert [r.uid for r in _runs(folder)] == [note.uid]


def test_a_note_of_a_run_killed_before_its_results_records_nothing(tmp_path):
    from ragmeter.history import pending

    folder = tmp_path / "hist"
    res = results_dir(tmp_path / "r", [1.0, 0.0, 1.0])
    record(res, command="search", history=folder)
    stale = pending.begin(res, "search", folder)  # then killed while it searched
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        running = pending.begin(tmp_path / "r2", "search", folder)
        Path(running.note).write_text(
            json.dumps({**json.loads(running.note.read_text()), "pid": live.pid})
        )
        results_dir(tmp_path / "r2", [0.0, 0.0, 1.0])
        assert pending.recover(folder) == []  # the old results are not this run's
        assert not stale.note.exists()
        assert running.note.exists()  # its command still runs: it records its run itself
    finally:
        live.kill()
        live.wait(30)
    assert [r.command for r in _runs(folder)] == ["search"]
    assert [r.results for r in pending.recover(folder)] == [str((tmp_path / "r2").resolve())]

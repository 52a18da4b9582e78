"""``ragmeter.history``: where the history lives (environment, config, working folder),
what a record keeps (its time, git state, measurement, command), the files read back, and
a newer history refused."""

from __future__ import annotations

import json
import sqlite3

import pytest

from ragmeter import history
from ragmeter.errors import InputError
from ragmeter.history import (
    APPLICATION_ID,
    DEFAULT_DIR,
    ENV,
    SCHEMA_VERSION,
    HistoryStore,
    locate,
    open_history,
)


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

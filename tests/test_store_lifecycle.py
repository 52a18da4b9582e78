"""``ragmeter.files.sqlite.SQLiteStore``: an empty file it made is removed on close (and only
that), parents made, a foreign database refused, the default busy timeout, and the
retry of a locked open (no sleeps in the test: the step says when it is done)."""

from __future__ import annotations

import sqlite3

import pytest

from ragmeter.errors import InputError
from ragmeter.files.sqlite import SQLiteStore, _retry_locked

SCHEMA = ["CREATE TABLE IF NOT EXISTS items (k TEXT PRIMARY KEY, v TEXT)"]


def test_an_empty_file_it_made_is_removed_on_close(tmp_path):
    path = tmp_path / "deep" / "er" / "c.sqlite"
    store = SQLiteStore(path, SCHEMA)
    assert path.parent.is_dir()
    store.close()
    assert not path.exists() and list(path.parent.iterdir()) == []


def test_a_file_with_rows_or_made_by_someone_else_stays(tmp_path):
    kept = tmp_path / "kept.sqlite"
    with SQLiteStore(kept, SCHEMA) as store:
        with store.lock:
            store.conn.execute("INSERT INTO items VALUES ('a', 'b')")
    assert kept.is_file()
    theirs = tmp_path / "theirs.sqlite"
    sqlite3.connect(theirs).close()  # an empty file that was there before
    SQLiteStore(theirs, SCHEMA).close()
    assert theirs.is_file()


def test_a_foreign_database_is_refused_and_ours_reopens(tmp_path):
    path = tmp_path / "user.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE notes (x)")
    conn.commit()
    conn.close()
    with pytest.raises(InputError, match="not a ragmeter cache"):
        SQLiteStore(path, SCHEMA)
    SQLiteStore(path).close()  # no schema: nothing to check, nothing changed
    ours = tmp_path / "ours.sqlite"
    with SQLiteStore(ours, SCHEMA) as store:
        with store.lock:
            store.conn.execute("INSERT INTO items VALUES ('a', 'b')")
    with SQLiteStore(ours, SCHEMA) as store:
        assert store.query("SELECT v FROM items") == [("b",)]


def test_the_default_busy_timeout_is_thirty_seconds(tmp_path):
    with SQLiteStore(tmp_path / "c.sqlite", SCHEMA) as store:
        assert store.query("PRAGMA busy_timeout") == [(30_000,)]


def test_a_locked_step_is_retried_until_done_and_other_errors_raise_at_once():
    calls = []

    def step():
        calls.append(1)
        if len(calls) < 3:
            raise sqlite3.OperationalError("database is locked")
        return "opened"

    assert _retry_locked(step, timeout_s=60) == "opened" and len(calls) == 3

    def broken():
        calls.append(2)
        raise sqlite3.OperationalError("no such table: x")

    with pytest.raises(sqlite3.OperationalError, match="no such table"):
        _retry_locked(broken, timeout_s=60)
    assert calls.count(2) == 1

    def always_locked():
        raise sqlite3.OperationalError("database is locked")

    with pytest.raises(sqlite3.OperationalError, match="locked"):
        _retry_locked(always_locked, timeout_s=0)


def test_a_store_it_cannot_read_back_is_kept(tmp_path):
    path = tmp_path / "c.sqlite"
    store = SQLiteStore(path, SCHEMA)
    with store.lock:
        store.conn.execute("INSERT INTO items VALUES ('a', 'b')")
        store.conn.execute("DELETE FROM items")
    store.conn.close()  # whatever fails while looking inside: keep the file
    assert store._holds_nothing() is False
    store.close()
    assert path.is_file()

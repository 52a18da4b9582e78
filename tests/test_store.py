"""The SQLite-WAL store under both caches, and the one k-cutoff validator."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest
from conftest import EXAMPLE
from hypothesis import given
from hypothesis import strategies as st

from ragmeter.errors import CacheError, InputError
from ragmeter.files.sqlite import SQLiteStore
from ragmeter.inputs.config import Config
from ragmeter.llm import ChatReply, ReplyCache
from ragmeter.retrieval.embedcache import EmbeddingCache
from ragmeter.scoring.grading import coverage_curve
from ragmeter.scoring.metrics import check_k, check_ks, metric_names, score_questions

SCHEMA = ["CREATE TABLE IF NOT EXISTS t (k TEXT PRIMARY KEY, v INTEGER)"]


def other_connection(path) -> sqlite3.Connection:
    return sqlite3.connect(path, timeout=5)


def test_store_is_wal_and_commits_each_batch(tmp_path):
    path = tmp_path / "sub" / "s.sqlite"
    with SQLiteStore(path, SCHEMA, timeout_s=2.5) as store:
        assert store.journal_mode == "wal"
        assert store.query("PRAGMA busy_timeout") == [(2500,)]
        with store.batch() as conn:
            conn.executemany("INSERT INTO t VALUES (?, ?)", [("a", 1), ("b", 2)])
        # committed: another connection (another process, in effect) sees the batch
        assert other_connection(path).execute("SELECT COUNT(*) FROM t").fetchone() == (2,)
        with pytest.raises(RuntimeError), store.batch() as conn:
            conn.execute("INSERT INTO t VALUES ('c', 3)")
            raise RuntimeError("killed mid-batch")
        assert store.query("SELECT k FROM t ORDER BY k") == [("a",), ("b",)]
        with pytest.raises(CacheError, match="cannot write cache"), store.batch() as conn:
            conn.execute("INSERT INTO t VALUES ('a', 9)")  # primary key taken
        assert store.query("SELECT v FROM t WHERE k = 'a'") == [(1,)]


def test_store_that_cannot_open_is_a_cache_error(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(CacheError, match="cannot open reply cache"):
        SQLiteStore(tmp_path / "file" / "c.sqlite", SCHEMA, what="reply cache")
    with pytest.raises(CacheError, match="cannot open embedding cache"):
        EmbeddingCache(tmp_path / "file" / "e.sqlite3")
    with pytest.raises(CacheError, match="cannot open reply cache"):
        ReplyCache(tmp_path / "file" / "r.sqlite")


def test_both_caches_sit_on_the_store(tmp_path):
    with ReplyCache(tmp_path / "r.sqlite") as replies, EmbeddingCache(tmp_path / "e") as vectors:
        assert isinstance(replies._store, SQLiteStore) and isinstance(vectors._store, SQLiteStore)
        replies.put("k", ChatReply(text="hi"))
        vectors.put("m", [b"x" * 32, b"y" * 32], np.eye(2, dtype=np.float32))
        for path, table, n in ((replies.path, "replies", 1), (vectors.path, "vectors", 2)):
            conn = other_connection(path)
            assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
            assert conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone() == (n,)


# --- k cutoffs ----------------------------------------------------------------------------


@given(st.lists(st.integers(1, 1000), min_size=1, max_size=8, unique=True))
def test_valid_cutoffs_pass_unchanged(ks):
    assert check_ks(ks) == ks
    assert check_ks(ks, depth=max(ks)) == ks
    with pytest.raises(InputError, match="past the depth"):
        check_ks(ks, depth=max(ks) - 1)


@pytest.mark.parametrize(
    ("ks", "message"),
    [
        ([], "positive"),
        ([0, 5], "positive"),
        ([-1], "positive"),
        ([1.5], "whole numbers"),
        (["5"], "whole numbers"),
        ([5, 5], "repeat a value"),
    ],
)
def test_bad_cutoffs_are_input_errors(ks, message):
    with pytest.raises(InputError, match=message):
        check_ks(ks)


def test_one_k():
    assert check_k(3, depth=3) == 3
    for bad in (0, -2, 2.5, True + 0.5):
        with pytest.raises(InputError):
            check_k(bad)
    with pytest.raises(InputError, match=r"--k=11 is past the depth 10"):
        check_k(11, depth=10, what="--k")


def test_every_place_that_takes_cutoffs_uses_the_validator():
    with pytest.raises(InputError, match="ks .* repeat a value"):
        Config(corpus="c", testset="t", ks=(5, 5)).validate()
    with pytest.raises(InputError, match="repeat a value"):
        coverage_curve([("d", 0, 5)], [("d", 0, 3)], [1, 1])
    with pytest.raises(InputError, match="repeat a value"):
        score_questions(np.zeros((1, 3), dtype=np.int64), None, [1, 1])
    with pytest.raises(InputError, match="repeat a value"):
        metric_names([2, 2])


def test_the_reader_cannot_read_past_the_depth(tmp_path):

    from ragmeter.answers import answer_questions
    from ragmeter.runs.pipeline import run_search
    from ragmeter.runs.results import save_results

    example = EXAMPLE
    config = Config(
        corpus=str(example / "posts"),
        testset=str(example / "questions.jsonl"),
        strategies=("sentence",),
        ks=(1, 3),
        depth=4,
        rounds=200,
    )
    results = save_results(run_search(config), tmp_path / "r")

    class Never:
        kind, model, base_url, max_concurrency = "never", "m", None, None

        def complete(self, request, timeout_s):
            raise AssertionError("no call may be made")

        def close(self):
            pass

    with pytest.raises(InputError, match="--k=5 is past the depth 4"):
        answer_questions(results, Never(), k=5)
    assert not (tmp_path / "r" / "answers").exists()

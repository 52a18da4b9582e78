"""The score cache: ``evaluate`` never scores an unchanged run twice, a killed one keeps
every run it finished, and cached and fresh results are the same bit for bit."""

from __future__ import annotations

import os
import pickle
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from ragmeter.cli import app
from ragmeter.engine import LocalEngine
from ragmeter.errors import CacheError, InputError
from ragmeter.runs import evaluate as ev
from ragmeter.runs.evaluate import evaluate_files
from ragmeter.runs.score_cache import (
    DB_NAME,
    ENV,
    FORMAT,
    ScoreCache,
    configured_path,
    open_cache,
    pack,
    unpack,
)
from ragmeter.scoring.trec import Evaluation, Matrix

runner = CliRunner()
MEASURES = ["map", "ndcg@10", "precision@5", "mrr"]


@pytest.fixture
def files(tmp_path) -> tuple[Path, list[Path]]:
    """Qrels and 4 small runs (a query one run lacks, a query without judgments)."""
    rng = np.random.default_rng(5)
    pools = {q: [f"D{j}" for j in rng.choice(300, 40, replace=False)] for q in range(20)}
    judged = [(q, d) for q, ds in pools.items() for d in ds[:8]]
    (tmp_path / "qrels.txt").write_text(
        "".join(f"{q} 0 {d} {int(rng.integers(0, 3))}\n" for q, d in judged)
    )
    runs = []
    for r in range(4):
        lines = [f"x{r} Q0 D1 1 1.0 sys{r}\n"]
        for q, ds in pools.items():
            if r == 1 and q == 3:
                continue
            for i, d in enumerate(rng.permutation(ds)[:20]):
                lines.append(f"{q} Q0 {d} {i + 1} {round(20 - i + rng.random(), 3)} sys{r}\n")
        runs.append(tmp_path / f"r{r}.run")
        runs[-1].write_text("".join(lines))
    return tmp_path, runs


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv(ENV, str(folder))
    return folder / DB_NAME


@pytest.fixture
def scored(monkeypatch) -> list[str]:
    """The run files scored (not read from the cache), in order."""
    seen: list[str] = []
    real = ev.score_file

    def counting(task):
        seen.append(Path(task[0]).name)
        return real(task)

    monkeypatch.setattr(ev, "score_file", counting)
    return seen


def _bytes(result) -> list[bytes]:
    out = []
    for e in result.evaluations:
        out.append(pickle.dumps((e.name, e.query_ids, e.missing, e.unjudged, e.depth)))
        out.extend(e.scores[m].tobytes() for m in sorted(e.scores))
        out.extend(a.tobytes() for a in (e.top.docs, e.top.scores, e.top.grades, e.top.missing))
        out.append(pickle.dumps(e.top.unjudged))
    return out


def _fresh(files, monkeypatch, measures=MEASURES):
    root, runs = files
    with monkeypatch.context() as m:
        m.setenv(ENV, "off")
        return evaluate_files(root / "qrels.txt", runs, measures, rounds=200)


def _count(path: Path) -> int:
    with ScoreCache(path) as c:
        return c.count()


def test_a_second_evaluate_scores_no_run_and_gives_the_same_bytes(
    files, cache, scored, monkeypatch
):
    root, runs = files
    first = evaluate_files(root / "qrels.txt", runs, MEASURES, rounds=200)
    assert scored == ["r0.run", "r1.run", "r2.run", "r3.run"] and _count(cache) == 4
    again = evaluate_files(root / "qrels.txt", runs, MEASURES, rounds=300, seed=9)
    assert scored == ["r0.run", "r1.run", "r2.run", "r3.run"]  # other statistics: none scored
    assert _bytes(again) == _bytes(first) == _bytes(_fresh(files, monkeypatch))


def test_a_killed_evaluate_keeps_every_run_it_finished(files, cache, monkeypatch):
    root, runs = files
    real, seen = ev.score_file, []

    def killed_at_the_third(task):
        seen.append(Path(task[0]).name)
        if len(seen) == 3:
            raise KeyboardInterrupt
        return real(task)

    monkeypatch.setattr(ev, "score_file", killed_at_the_third)
    with pytest.raises(KeyboardInterrupt):
        evaluate_files(root / "qrels.txt", runs, MEASURES, rounds=200)
    assert _count(cache) == 2
    seen.clear()
    monkeypatch.setattr(
        ev, "score_file", lambda task: (seen.append(Path(task[0]).name), real(task))[1]
    )
    resumed = evaluate_files(root / "qrels.txt", runs, MEASURES, rounds=200)
    assert seen == ["r2.run", "r3.run"]
    assert _bytes(resumed) == _bytes(_fresh(files, monkeypatch))


def test_a_changed_run_file_qrels_file_or_measure_is_scored_again(
    files, cache, scored, monkeypatch
):
    root, runs = files
    evaluate_files(root / "qrels.txt", runs, MEASURES, rounds=200)
    scored.clear()
    text = runs[1].read_text()
    runs[1].write_text(text.replace(" sys1\n", " sys1 \n", 1))  # one byte more
    evaluate_files(root / "qrels.txt", runs, MEASURES, rounds=200)
    assert scored == ["r1.run"]
    scored.clear()
    stat = runs[2].stat()
    os.utime(runs[2], ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))  # touched
    evaluate_files(root / "qrels.txt", runs, MEASURES, rounds=200)
    assert scored == ["r2.run"]
    scored.clear()
    evaluate_files(root / "qrels.txt", runs, [*MEASURES, "recall@10"], rounds=200)
    assert len(scored) == 4  # another measure: every run
    scored.clear()
    evaluate_files(root / "qrels.txt", runs, MEASURES, rounds=200, trec_eval_compat=True)
    assert len(scored) == 4
    scored.clear()
    with (root / "qrels.txt").open("a") as fh:
        fh.write("19 0 D-new 1\n")
    changed = evaluate_files(root / "qrels.txt", runs, MEASURES, rounds=200)
    assert len(scored) == 4
    assert _bytes(changed) == _bytes(_fresh(files, monkeypatch))


def test_workers_store_each_run_and_a_second_run_scores_none(files, cache, monkeypatch):
    root, runs = files
    first = evaluate_files(root / "qrels.txt", runs, MEASURES, rounds=200, engine=LocalEngine(2))
    assert _count(cache) == 4

    def never(task):
        raise AssertionError(f"{task[0]} scored again")

    monkeypatch.setattr(ev, "score_file", never)  # forked workers would inherit it too
    again = evaluate_files(root / "qrels.txt", runs, MEASURES, rounds=200, engine=LocalEngine(2))
    assert _bytes(again) == _bytes(first)


def test_a_damaged_entry_is_scored_again_and_replaced(files, cache, scored, monkeypatch):
    root, runs = files
    evaluate_files(root / "qrels.txt", runs[:2], MEASURES, rounds=200)
    with sqlite3.connect(cache) as conn:
        conn.execute("UPDATE run_scores SET evaluation = ? WHERE rowid = 1", (b"not an npz",))
    scored.clear()
    again = evaluate_files(root / "qrels.txt", runs[:2], MEASURES, rounds=200)
    assert len(scored) == 1 and _count(cache) == 2
    root2 = _fresh(files, monkeypatch)
    assert _bytes(again) == _bytes(root2)[: len(_bytes(again))]


def test_off_keeps_no_file_and_every_run_is_scored(files, tmp_path, scored, monkeypatch):
    root, runs = files
    monkeypatch.setenv(ENV, "off")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    evaluate_files(root / "qrels.txt", runs[:2], MEASURES, rounds=200)
    evaluate_files(root / "qrels.txt", runs[:2], MEASURES, rounds=200)
    assert len(scored) == 4 and not (tmp_path / "xdg").exists()


def test_by_default_the_cache_lives_in_the_users_cache_folder(files, tmp_path, monkeypatch):
    root, runs = files
    monkeypatch.delenv(ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    evaluate_files(root / "qrels.txt", runs[:2], MEASURES, rounds=200)
    assert _count(tmp_path / "xdg" / "ragmeter" / "scores" / DB_NAME) == 2


def test_a_default_folder_that_cannot_be_made_runs_without_the_cache(files, tmp_path, monkeypatch):
    root, runs = files
    monkeypatch.delenv(ENV)
    (tmp_path / "xdg").write_text("a file where the cache folder would go")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    result = evaluate_files(root / "qrels.txt", runs[:2], MEASURES, rounds=200)
    assert len(result.evaluations) == 2
    assert (tmp_path / "xdg").read_text() == "a file where the cache folder would go"


def test_a_file_that_is_not_the_cache_is_refused_in_one_line_and_left_alone(files, tmp_path):
    root, runs = files
    theirs = tmp_path / "mine.sqlite3"
    theirs.write_text("my notes, not a database\n")
    args = ["evaluate", "--qrels", str(root / "qrels.txt"), *map(str, runs[:2])]
    args += ["--rounds", "200", "-o", str(tmp_path / "res"), "--no-history"]
    r = runner.invoke(app, args, env={ENV: str(theirs)})
    assert r.exit_code == 2
    assert str(theirs) in r.output and f"{ENV}=off" in r.output
    assert len(r.output.strip().splitlines()) == 1
    assert theirs.read_text() == "my notes, not a database\n"
    assert not (tmp_path / "res").exists()


def test_an_entry_keeps_every_field_of_the_scores_it_holds():
    grades = np.array([[2, 0, -1], [1, 1, 0]], dtype=np.int8)
    top = Matrix(grades, np.array([False, True]), ["q9"], np.array([[b"d1", b"d2", b""]] * 2),
                 np.array([[3.5, 2.25, 0.0]] * 2))  # fmt: skip
    full = Evaluation("run é", ["1", "2"], {"map": np.array([0.5, 1 / 3])}, ["2"], ["q9"], 3, top)
    back = unpack(pack(full))
    assert (back.name, back.query_ids, back.missing, back.unjudged, back.depth) == (
        "run é", ["1", "2"], ["2"], ["q9"], 3
    )  # fmt: skip
    assert back.scores["map"].tobytes() == full.scores["map"].tobytes()
    assert back.top.grades.dtype == np.int8 and back.top.grades.tobytes() == grades.tobytes()
    assert back.top.docs.tolist() == top.docs.tolist() and back.top.unjudged == ["q9"]
    assert back.top.scores.tobytes() == top.scores.tobytes()
    assert back.top.missing.tolist() == [False, True]
    bare = unpack(pack(Evaluation("r", ["1"], {"mrr": np.array([1.0])})))
    assert bare.top is None and bare.scores["mrr"].tolist() == [1.0]
    no_docs = unpack(pack(Evaluation("r", ["1"], {}, top=Matrix(grades, grades[:, 0] < 0, []))))
    assert no_docs.top.docs is None and no_docs.top.scores is None
    assert unpack(b"not an npz") is None and unpack(pack(full)[:-10]) is None


def _cli(root: Path, runs: list[Path], where: Path, monkeypatch) -> tuple[dict, str]:
    where.mkdir()
    args = ["evaluate", "--qrels", str(root / "qrels.txt"), *map(str, runs)]
    args += ["--rounds", "200", "-o", "res", "--no-history"]
    with monkeypatch.context() as m:
        m.chdir(where)  # the same results path, so the saved files can be compared whole
        r = runner.invoke(app, args)
    assert r.exit_code == 0, r.output
    saved = sorted(p for p in (where / "res").rglob("*") if p.is_file())
    return {str(p.relative_to(where)): p.read_bytes() for p in saved}, r.output


def test_the_command_says_which_runs_came_from_the_cache_and_saves_the_same_bytes(
    files, cache, tmp_path, monkeypatch
):
    root, runs = files
    first, said = _cli(root, runs, tmp_path / "one", monkeypatch)
    assert "score cache" not in said
    runs[3].write_text(runs[3].read_text() + "19 Q0 D-late 99 0.5 sys3\n")  # one run changed
    again, said = _cli(root, runs, tmp_path / "two", monkeypatch)
    flat = "".join(said.split())  # the terminal may wrap the path anywhere
    said_line = f"4 runs 3 of 4 runs read from the score cache ({cache})"
    assert "".join(said_line.split()) in flat
    assert f"{ENV}=offscoreseveryrun" in flat
    monkeypatch.setenv(ENV, "off")
    fresh, said = _cli(root, runs, tmp_path / "three", monkeypatch)
    assert "score cache" not in said
    assert again == fresh and set(again) == set(first)


def test_where_the_cache_lives(tmp_path, monkeypatch):
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv(ENV, "")
    assert configured_path() == (tmp_path / "home/.cache/ragmeter/scores" / DB_NAME, False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert configured_path() == (tmp_path / "xdg/ragmeter/scores" / DB_NAME, False)
    for off in ("off", "OFF", "0", "false", "no", "none"):
        monkeypatch.setenv(ENV, off)
        assert configured_path() == (None, True)
    monkeypatch.setenv(ENV, str(tmp_path / "mine.sqlite3"))
    assert configured_path() == (tmp_path / "mine.sqlite3", True)
    monkeypatch.setenv(ENV, str(tmp_path / "folder"))
    assert configured_path() == (tmp_path / "folder" / DB_NAME, True)
    (tmp_path / "notes.txt").write_text("mine")
    monkeypatch.setenv(ENV, str(tmp_path / "notes.txt"))
    with pytest.raises(InputError, match=f"points at a file .*{ENV}=off"):
        configured_path()


def test_a_place_named_that_cannot_be_used_is_an_error_the_default_is_skipped(
    tmp_path, monkeypatch
):
    (tmp_path / "file").write_text("not a folder")
    monkeypatch.setenv(ENV, str(tmp_path / "file" / "scores.sqlite3"))
    with pytest.raises(CacheError, match="score cache"):
        open_cache()
    monkeypatch.setenv(ENV, "")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "file"))
    assert open_cache() is None


def _cache_of_format(path: Path, fmt: str) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE run_scores (key BLOB PRIMARY KEY, evaluation BLOB NOT NULL)")
        conn.execute("CREATE TABLE score_cache_meta (name TEXT PRIMARY KEY, value TEXT)")
        conn.execute("INSERT INTO score_cache_meta VALUES ('format', ?)", (fmt,))
    conn.close()


def test_a_cache_of_another_format_is_left_alone(tmp_path, monkeypatch):
    ours = tmp_path / "ours.sqlite3"
    _cache_of_format(ours, "1")
    assert FORMAT == 1
    with ScoreCache(ours) as c:  # this format: read and written
        c.put(b"k", Evaluation("r", ["1"], {"mrr": np.array([1.0])}))
        assert c.get(b"k").scores["mrr"].tolist() == [1.0] and c.hits == 1
    later = tmp_path / "later.sqlite3"
    _cache_of_format(later, "2")
    with pytest.raises(CacheError, match=f"in format 2, this ragmeter reads 1; set {ENV}=off"):
        ScoreCache(later)  # named by the user: an error
    quiet = ScoreCache(later, required=False)  # the default place: the run goes on without
    assert "in format 2" in quiet.broken and quiet.get(b"k") is None and quiet.count() == 0
    quiet.put(b"k", Evaluation("r", ["1"], {}))
    with sqlite3.connect(later) as conn:  # nothing written into the later format's file
        assert conn.execute("SELECT COUNT(*) FROM run_scores").fetchone() == (0,)
        assert conn.execute("SELECT value FROM score_cache_meta").fetchall() == [("2",)]
    conn.close()


def test_a_key_of_a_file_that_cannot_be_looked_at_is_never_stored(tmp_path):
    from ragmeter.runs.score_cache import run_key

    (tmp_path / "q").write_text("1 0 d 1\n")
    assert run_key(tmp_path / "missing.run", tmp_path / "q", []) is None
    assert run_key(tmp_path / "q", tmp_path / "missing.qrels", []) is None
    with ScoreCache(tmp_path / "c.sqlite3") as c:
        c.put(None, Evaluation("r", ["1"], {}))
        assert c.count() == 0 and c.get(None) is None and c.hits == 0
        assert repr(c) == f"ScoreCache({str(tmp_path / 'c.sqlite3')!r})"
    c.close()  # closing twice is harmless
    assert c.count() == 0 and c.get(b"k") is None


def test_a_write_that_fails_turns_the_default_cache_off_and_stops_a_named_one(
    tmp_path, monkeypatch
):
    def full(*a, **k):
        raise CacheError(f"cannot write score cache {tmp_path}: database or disk is full")

    entry = Evaluation("r", ["1"], {"mrr": np.array([1.0])})
    monkeypatch.setenv(ENV, "")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    default = open_cache()
    monkeypatch.setattr(default._store, "batch", full)
    default.put(b"k", entry)  # the run goes on without the cache
    assert "cannot be written (database or disk is full)" in default.broken
    assert default.get(b"k") is None
    monkeypatch.setenv(ENV, str(tmp_path / "named"))
    named = open_cache()
    monkeypatch.setattr(named._store, "batch", full)
    with pytest.raises(CacheError, match=f"cannot be written .*{ENV}=off"):
        named.put(b"k", entry)

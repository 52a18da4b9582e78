"""The segmentation cache on disk: a second run over an unchanged corpus segments nothing.

The segmenter is counted through a wrapper of ``_segment.paragraph_sentences`` (every
paragraph ICU, syntok or blingfire segments goes through it when the run segments in this process,
as it does for the shipped example, below the worker threshold).
"""

from __future__ import annotations

import multiprocessing
import sqlite3
import tempfile
from pathlib import Path

import numpy as np
import pytest
from conftest import EXAMPLE
from hypothesis import given, settings
from hypothesis import strategies as st

from ragmeter import engine
from ragmeter.chunking import segment as _segment
from ragmeter.chunking import segment_cache as _segment_cache
from ragmeter.chunking import strategies as chunking
from ragmeter.chunking.segment_cache import SegmentCache, segmenter_key, text_key
from ragmeter.chunking.strategies import prepare_sentences
from ragmeter.errors import CacheError, InputError
from ragmeter.inputs.config import Config
from ragmeter.inputs.corpus import Document, load_corpus
from ragmeter.inputs.testset import load_testset
from ragmeter.runs.pipeline import run_search


def _config(segmenter: str = "syntok") -> Config:
    """Strategies sentence and parent-200 (with ``segmenter``'s sentences), and fixed."""
    custom = tuple(
        {**chunking.make_strategy(name).describe(), "segmenter": segmenter}
        for name in ("sentence", "parent-200")
    )
    return Config(
        strategies=("sentence", "parent-200", "fixed"), custom_strategies=custom, rounds=100
    )


CONFIG = _config()


@pytest.fixture
def cache_file(tmp_path, monkeypatch):
    """The segmentation cache of this test's runs, in a folder of its own."""
    monkeypatch.setenv("RAGMETER_SEGMENT_CACHE", str(tmp_path / "segments"))
    chunking._CACHE.clear()
    yield tmp_path / "segments" / _segment_cache.DB_NAME
    chunking._CACHE.clear()


@pytest.fixture
def calls(monkeypatch):
    """The paragraphs segmented (text, segmenter), in order."""
    seen: list[tuple[str, str]] = []
    real = _segment.paragraph_sentences

    def counting(paragraph: str, segmenter_name: str = "syntok"):
        seen.append((paragraph, segmenter_name))
        return real(paragraph, segmenter_name)

    monkeypatch.setattr(_segment, "paragraph_sentences", counting)
    return seen


def _example():
    docs = load_corpus(EXAMPLE / "posts")
    return docs, load_testset(EXAMPLE / "questions.jsonl", docs)


def _run(docs, testset, config=CONFIG):
    chunking._CACHE.clear()  # nothing kept in memory from an earlier run
    return run_search(config, docs, testset)


def _same_systems(a, b) -> None:
    assert [s.name for s in a.systems] == [s.name for s in b.systems]
    for x, y in zip(a.systems, b.systems, strict=True):
        assert x.items == y.items and x.n_items == y.n_items
        for metric in x.scores:
            assert (x.scores[metric] == y.scores[metric]).all()


@pytest.mark.parametrize("segmenter", ["icu", "syntok"])
def test_a_second_run_segments_nothing_and_gives_the_same_results(
    cache_file, calls, monkeypatch, segmenter
):
    docs, testset = _example()
    config = _config(segmenter)
    first = _run(docs, testset, config)
    assert len(calls) > 50 and cache_file.is_file()
    with SegmentCache(cache_file) as c:
        assert c.count(segmenter) == c.count() == len({d.text for d in docs})
    calls.clear()
    second = _run(docs, testset, config)
    assert calls == []  # every document's sentences came from the cache
    _same_systems(first, second)
    monkeypatch.setenv("RAGMETER_SEGMENT_CACHE", "off")
    _same_systems(first, _run(docs, testset, config))  # and equal the run without a cache
    assert len(calls) > 50


@pytest.mark.parametrize("segmenter", ["icu", "syntok"])
def test_a_changed_document_is_segmented_again_alone(cache_file, calls, segmenter):
    docs, testset = _example()
    _run(docs, testset, _config(segmenter))
    changed = Document(docs[2].id, docs[2].text + "\n\nA new closing paragraph. It has two.")
    docs = [*docs[:2], changed, *docs[3:]]
    calls.clear()
    _run(docs, testset, _config(segmenter))
    own = {p for _, p in _segment.paragraphs(changed.text)}
    assert calls and {p for p, _ in calls} <= own
    assert ("A new closing paragraph. It has two.", segmenter) in calls


def test_another_segmenter_version_or_format_reuses_no_entry(cache_file, calls, monkeypatch):
    texts = [d.text for d in _example()[0]]
    with SegmentCache(cache_file) as c:
        prepare_sentences(texts, segmenter="syntok", cache=c)
        n = len(calls)
        chunking._CACHE.clear()
        assert prepare_sentences(texts, segmenter="syntok", cache=c) == 0
        assert len(calls) == n
        chunking._CACHE.clear()
        assert prepare_sentences(texts, segmenter="blingfire", cache=c) > 0
        assert {s for _, s in calls[n:]} == {"blingfire"} and len(calls) > n
        # syntok splits the paragraphs for both; blingfire's version is blingfire's alone
        for version, redone in (({"syntok": "0.0.1"}, (1, 1)), ({"blingfire": "0.0.1"}, (0, 1))):
            with pytest.MonkeyPatch.context() as m:
                m.setattr(_segment_cache, "_VERSIONS", {**_segment_cache._VERSIONS, **version})
                for seg, again in zip(("syntok", "blingfire"), redone, strict=True):
                    chunking._CACHE.clear()
                    assert (prepare_sentences(texts, segmenter=seg, cache=c) > 0) == bool(again)
        chunking._CACHE.clear()
        monkeypatch.setattr(_segment_cache, "FORMAT", _segment_cache.FORMAT + 1)
        assert prepare_sentences(texts, segmenter="syntok", cache=c) > 0
    assert "syntok" in segmenter_key("blingfire") and "blingfire" in segmenter_key("blingfire")


@pytest.mark.parametrize("content", ["sqlite", "bytes"])
def test_a_foreign_or_corrupt_cache_file_is_refused_with_one_line(tmp_path, monkeypatch, content):
    from typer.testing import CliRunner

    from ragmeter.cli import app

    path = tmp_path / "mine.sqlite3"
    if content == "sqlite":
        with sqlite3.connect(path) as conn:
            conn.execute("CREATE TABLE accounts (name TEXT)")
    else:
        path.write_bytes(b"not a database at all\n" * 100)
    before = path.read_bytes()
    monkeypatch.setenv("RAGMETER_SEGMENT_CACHE", str(path))
    monkeypatch.chdir(tmp_path)
    chunking._CACHE.clear()
    result = CliRunner().invoke(app, ["search", "--out", "out", "--rounds", "200"])
    assert result.exit_code == 2
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and str(path) in errors[0] and "segmentation cache" in errors[0]
    assert "RAGMETER_SEGMENT_CACHE=off" in errors[0]
    assert path.read_bytes() == before  # never changed
    assert not (tmp_path / "out").exists()
    chunking._CACHE.clear()


def test_a_later_format_is_left_alone(tmp_path):
    path = tmp_path / "s.sqlite3"
    with SegmentCache(path) as c:
        c.put([("One. Two.", _starts("One. Two."))], "syntok")
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE segment_cache_meta SET value = '99' WHERE name = 'format'")
    with pytest.raises(CacheError, match=r"format 99.*RAGMETER_SEGMENT_CACHE=off"):
        SegmentCache(path)
    quiet = SegmentCache(path, required=False)  # the default folder: the run goes on without
    assert quiet.broken and quiet.get(["One. Two."], "syntok") == {}
    quiet.put([("One. Two.", _starts("One. Two."))], "syntok")  # nothing written
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT value FROM segment_cache_meta").fetchall() == [("99",)]


def _starts(text: str):
    import numpy as np

    return np.array([s for s, _ in chunking.sentence_spans(text)], dtype=np.int64)


def test_a_damaged_entry_is_a_miss_and_is_replaced(cache_file, calls):
    docs, testset = _example()
    first = _run(docs, testset)
    damaged = docs[0].text
    with sqlite3.connect(cache_file) as conn:
        conn.execute(
            "UPDATE sentence_starts SET starts = ? WHERE key = ?",
            (b"\x01\x02\x03", text_key(damaged)),
        )
        conn.execute(  # an offset past the end of its text
            "UPDATE sentence_starts SET starts = ? WHERE key = ?",
            ((10**9).to_bytes(8, "little"), text_key(docs[1].text)),
        )
    calls.clear()
    _same_systems(first, _run(docs, testset))
    own = {p for d in docs[:2] for _, p in _segment.paragraphs(d.text)}
    assert calls and {p for p, _ in calls} <= own
    calls.clear()
    _run(docs, testset)
    assert calls == []  # replaced by good entries


def test_a_killed_run_keeps_the_rounds_it_finished(cache_file, calls, monkeypatch):
    docs, testset = _example()
    monkeypatch.setattr(chunking, "ROUND_CHARS", 1)  # one document a round
    counting = _segment.paragraph_sentences  # the fixture's wrapper

    def dies(paragraph, segmenter_name="syntok"):
        if len(calls) >= 120:
            raise KeyboardInterrupt  # killed in the middle of a round
        return counting(paragraph, segmenter_name)

    monkeypatch.setattr(_segment, "paragraph_sentences", dies)
    with pytest.raises(KeyboardInterrupt):
        _run(docs, testset)
    monkeypatch.setattr(_segment, "paragraph_sentences", counting)
    with SegmentCache(cache_file) as c:
        kept = c.count("syntok")
    assert 0 < kept < len(docs)  # the rounds before the kill, committed
    calls.clear()
    _run(docs, testset)
    assert {p for p, _ in calls} == _rest(docs, kept)  # only the documents not stored
    with SegmentCache(cache_file) as c:
        assert c.count("syntok") == len({d.text for d in docs})


def _rest(docs, kept):
    return {p for d in docs[kept:] for _, p in _segment.paragraphs(d.text)}


def test_workers_and_other_processes_share_one_file(cache_file, monkeypatch):
    docs = _example()[0]
    texts = [d.text for d in docs]
    monkeypatch.setattr(chunking, "PARALLEL_MIN_CHARS", 0)
    monkeypatch.setattr(chunking, "BATCH_CHARS", 2000)
    expected = {}
    for t in texts:
        chunking._CACHE.clear()
        expected[t] = chunking._CACHE.sentence_breaks(t, segmenter="syntok").tolist()
    cache_file.parent.mkdir(parents=True)
    ctx = multiprocessing.get_context("fork")
    halves = [texts[::2], texts[1::2]]
    procs = [ctx.Process(target=_prepare_in_child, args=(cache_file, h)) for h in halves]
    for p in procs:
        p.start()
    with SegmentCache(cache_file) as c:  # and this process, with two workers, at once
        chunking._CACHE.clear()
        prepare_sentences(texts[:3], engine.LocalEngine(workers=2), segmenter="syntok", cache=c)
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    with SegmentCache(cache_file) as c:
        assert c.count("syntok") == len(set(texts))
        chunking._CACHE.clear()
        assert prepare_sentences(texts, segmenter="syntok", cache=c) == 0
    got = {t: chunking._CACHE.get(t, "syntok").sentence_breaks.tolist() for t in texts}
    assert got == expected


def _prepare_in_child(path: Path, texts: list[str]) -> None:
    chunking._CACHE.clear()
    with SegmentCache(path) as c:
        prepare_sentences(texts, engine.LocalEngine(workers=2), segmenter="syntok", cache=c)


def test_no_file_when_off_outside_a_run_or_without_sentences(tmp_path, monkeypatch, calls):
    docs, testset = _example()
    folder = tmp_path / "segments"
    monkeypatch.setenv("RAGMETER_SEGMENT_CACHE", str(folder))
    chunking._CACHE.clear()
    prepare_sentences([d.text for d in docs])  # outside a run: no cache
    _run(docs, testset, Config(strategies=("fixed",), rounds=100))  # a run without sentences
    assert not folder.exists()
    monkeypatch.setenv("RAGMETER_SEGMENT_CACHE", "off")
    _run(docs, testset)
    assert not folder.exists()
    chunking._CACHE.clear()


def test_an_unusable_default_folder_runs_without_cache_a_named_one_is_an_error(
    tmp_path, monkeypatch
):
    docs, testset = _example()
    blocker = tmp_path / "a-file"
    blocker.write_text("x", encoding="utf-8")
    monkeypatch.delenv("RAGMETER_SEGMENT_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))  # the default folder cannot be made
    assert _segment_cache.configured_path() == (
        blocker / "ragmeter" / "segments" / _segment_cache.DB_NAME,
        False,
    )
    _same_systems(_run(docs, testset), _run(docs, testset))
    monkeypatch.setenv("RAGMETER_SEGMENT_CACHE", str(blocker / "segments"))
    with pytest.raises(CacheError, match="segmentation cache"):
        _run(docs, testset)
    chunking._CACHE.clear()


def test_configured_path():
    with pytest.MonkeyPatch.context() as m:
        m.setenv("RAGMETER_SEGMENT_CACHE", "/x/y/file.db")
        assert _segment_cache.configured_path() == (Path("/x/y/file.db"), True)
        m.setenv("RAGMETER_SEGMENT_CACHE", "/x/y")
        assert _segment_cache.configured_path() == (Path("/x/y/segments.sqlite3"), True)
        for off in ("off", "OFF", "0", "none"):
            m.setenv("RAGMETER_SEGMENT_CACHE", off)
            assert _segment_cache.configured_path() == (None, True)


def test_an_sqlite_file_of_another_ragmeter_cache_is_refused(tmp_path):
    from ragmeter.retrieval.embedcache import EmbeddingCache

    path = tmp_path / "embeddings.sqlite3"
    EmbeddingCache(path).close()
    with sqlite3.connect(path) as conn:
        conn.execute("INSERT INTO vectors VALUES ('m', x'00', 1, x'00000000')")
    with pytest.raises(InputError, match="not a ragmeter segmentation cache"):
        SegmentCache(path)


_PIECES = st.sampled_from(
    [" ", "\n", "\n\n", "\r", "\r\n\r\n", "\t", "\u00a0", "\u2028", ". ", "! ", "? ", "Mr. ",
     "U.S. ", "3.14", "é", "日本語。", "😀", "e\u0301", "Hello", "world", "The", "cat", '"']
)  # fmt: skip
_TEXTS = st.lists(st.lists(_PIECES, max_size=25).map("".join), min_size=1, max_size=5)


@settings(max_examples=40, deadline=None)
@given(_TEXTS, st.sampled_from(["syntok", "blingfire"]))
def test_cached_and_fresh_sentence_breaks_are_identical(texts, segmenter):
    expected = {}
    for t in texts:
        chunking._CACHE.clear()
        expected[t] = chunking._CACHE.sentence_breaks(t, segmenter=segmenter).tolist()
    with tempfile.TemporaryDirectory() as folder, SegmentCache(Path(folder) / "s.db") as c:
        chunking._CACHE.clear()
        prepare_sentences(texts, segmenter=segmenter, cache=c)
        chunking._CACHE.clear()
        assert prepare_sentences(texts, segmenter=segmenter, cache=c) == 0  # all from disk
        got = {t: chunking._CACHE.get(t, segmenter).sentence_breaks.tolist() for t in texts}
    chunking._CACHE.clear()
    assert got == expected


def test_a_cache_variable_naming_a_plain_file_says_so_in_one_line(tmp_path, monkeypatch):
    plain = tmp_path / "notes.txt"
    plain.write_text("mine", encoding="utf-8")
    monkeypatch.setenv("RAGMETER_SEGMENT_CACHE", str(plain))
    with pytest.raises(InputError) as err:
        _segment_cache.configured_path()
    text = str(err.value)
    assert "\n" not in text and "points at a file" in text and "File exists" not in text
    assert "RAGMETER_SEGMENT_CACHE=off" in text and str(plain) in text
    assert plain.read_text(encoding="utf-8") == "mine"  # left alone


# ``ragmeter.chunking.segment_cache``: a cache names its file when printed.


def test_a_cache_shows_its_file(tmp_path):
    path = tmp_path / "s.sqlite3"
    with SegmentCache(path) as c:
        assert repr(c) == f"SegmentCache({str(path)!r})"


# --- what a cache that cannot be opened is called --------------------------------------------


def _cache_file(folder: Path) -> Path:
    path = folder / "segments.sqlite3"
    with SegmentCache(path) as cache:
        cache.put([("One. Two.", np.array([0, 5], dtype=np.int64))], "syntok")
    return path


def test_a_cache_sqlite_cannot_open_is_not_called_another_file(tmp_path):
    # regression: a read-only cache (SQLite cannot open its journal) was called "not a
    # segmentation cache" and the user was told to move it away
    path = _cache_file(tmp_path)
    (tmp_path / "segments.sqlite3-wal").mkdir()  # a journal SQLite cannot open
    with pytest.raises(CacheError) as err:
        SegmentCache(path)
    assert "cannot open segmentation cache" in str(err.value)
    assert "not a segmentation cache" not in str(err.value)
    (tmp_path / "segments.sqlite3-wal").rmdir()
    other = tmp_path / "other.sqlite3"
    other.write_bytes(b"not sqlite at all, but long enough to be read as a header" * 20)
    with pytest.raises(InputError, match="is not a segmentation cache"):
        SegmentCache(other)  # a file of another kind is still named so


def test_a_read_only_cache_file_is_named_as_read_only(tmp_path, monkeypatch):
    from ragmeter.files import sqlite as store

    path = _cache_file(tmp_path)
    real = store.os.access
    monkeypatch.setattr(
        store.os, "access", lambda p, mode: False if Path(p) == path else real(p, mode)
    )
    assert "the file is read-only" in store._cannot_open(str(path), "segmentation cache", OSError())
    assert (
        str(tmp_path)
        not in store._cannot_open(str(path), "segmentation cache", OSError()).split(": ", 1)[1]
    )


def test_a_symbolic_link_loop_as_the_cache_path_is_named(tmp_path, monkeypatch):
    # regression: the loop was reported as "File exists"
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    monkeypatch.setenv("RAGMETER_SEGMENT_CACHE", str(loop))
    path, named = _segment_cache.configured_path()
    with pytest.raises(InputError) as err:
        SegmentCache(path)
    message = str(err.value)
    assert f"{loop}: is a symbolic link that loops" in message and "File exists" not in message
    assert "RAGMETER_SEGMENT_CACHE" in message

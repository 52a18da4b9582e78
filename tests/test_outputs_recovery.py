"""The output rule (ragmeter.files.outputs): inputs reached through links, recovery of a
replaced folder, the age of stale temporaries, and which folders are ours."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from ragmeter.errors import InputError
from ragmeter.files.manifest import MANIFEST, updated_manifest
from ragmeter.files.outputs import (
    TMP_PREFIX,
    check_not_inputs,
    check_output_file,
    check_results_target,
    clean_stale_temporaries,
    is_results_dir,
    results_inputs,
)


def _dead_pid():
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _age(path, hours):
    t = time.time() - hours * 3600
    os.utime(path, (t, t), follow_symlinks=False)


def test_an_input_reached_through_a_link_is_still_the_input(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.txt").write_text("a")
    link = tmp_path / "link"
    link.symlink_to(corpus)
    with pytest.raises(InputError, match="is the corpus"):
        check_not_inputs(link, [("corpus", corpus)], folder=True)
    with pytest.raises(InputError, match="is inside the corpus"):
        check_not_inputs(link / "out", [("corpus", corpus)], folder=True)
    with pytest.raises(InputError, match="contains the corpus"):
        check_not_inputs(tmp_path, [("corpus", link / "a.txt")], folder=True)
    # a file output may sit beside its input's folder; only a folder output contains it
    check_not_inputs(tmp_path / "report.html", [("corpus", corpus)], folder=False)
    check_not_inputs(tmp_path, [("corpus", corpus / "a.txt")], folder=False)
    check_not_inputs(tmp_path / "other", [("corpus", corpus), ("test set", None)], folder=True)


def test_results_inputs_name_the_corpus_and_test_set_of_meta():
    meta = {"corpus": {"path": "c"}, "testset": {"path": "t.jsonl"}}
    assert results_inputs("r", meta) == [
        ("results directory", "r"),
        ("corpus", "c"),
        ("test set", "t.jsonl"),
    ]
    assert results_inputs("r", {"corpus": {"path": 3}, "testset": "t"}) == [
        ("results directory", "r")
    ]
    assert results_inputs("r", None) == [("results directory", "r")]


def test_which_folders_are_results(tmp_path):
    def folder(name, meta, scores=False):
        path = tmp_path / name
        path.mkdir()
        if meta is not None:
            (path / "meta.json").write_text(meta if isinstance(meta, str) else json.dumps(meta))
        if scores:
            (path / "scores.json").write_text("{}")
        return path

    assert is_results_dir(folder("marked", {"format": "ragmeter-results"}))
    assert is_results_dir(folder("legacy", {"versions": {"ragmeter": "0.1"}}, scores=True))
    assert not is_results_dir(folder("no-scores", {"versions": {"ragmeter": "0.1"}}))
    assert not is_results_dir(folder("other-tool", {"versions": {"x": "1"}}, scores=True))
    assert not is_results_dir(folder("list", [1, 2], scores=True))
    assert not is_results_dir(folder("broken", "{", scores=True))
    assert not is_results_dir(folder("none", None, scores=True))
    assert not is_results_dir(tmp_path / "missing")
    with pytest.raises(InputError, match="already holds ragmeter results"):
        check_results_target(tmp_path / "marked", overwrite=False)
    with pytest.raises(InputError, match="does not hold ragmeter results"):
        check_results_target(tmp_path / "no-scores")
    with pytest.raises(InputError, match="is a file"):
        check_results_target(tmp_path / "no-scores" / "meta.json")
    (tmp_path / "empty").mkdir()
    check_results_target(tmp_path / "empty", overwrite=False)
    check_results_target(tmp_path / "new", overwrite=False)


def test_a_dangling_link_is_never_a_free_name(tmp_path):
    link = tmp_path / "out"
    link.symlink_to(tmp_path / "nowhere")
    with pytest.raises(InputError, match="is a symbolic link"):
        check_results_target(link)
    with pytest.raises(InputError, match="is not a file written by ragmeter"):
        check_output_file(link)
    with pytest.raises(InputError, match="is a folder"):
        check_output_file(tmp_path)
    (tmp_path / "empty.html").write_text("")
    check_output_file(tmp_path / "empty.html")


def _recorded(target, role, pid):
    """A temporary of ``target`` as a process ``pid`` records it before making it."""
    name = f"{TMP_PREFIX}{target.name}.{pid}.{'a1' * 8}.{role}-{os.urandom(4).hex()}"
    with updated_manifest(target.parent) as state:
        state["temporaries"][name] = {"pid": pid, "since": 0}
    return target.parent / name


def test_recovery_never_puts_a_lost_folder_back_over_an_existing_one(tmp_path):
    dead = _dead_pid()
    out = tmp_path / "r"
    out.mkdir()
    (out / "new.txt").write_text("the newer results")
    old = _recorded(out, "old", dead)
    old.mkdir()
    (old / "old.txt").write_text("older")
    removed = clean_stale_temporaries(out)
    assert removed == [old] and not old.exists()
    assert sorted(p.name for p in out.iterdir()) == ["new.txt"]
    assert not (tmp_path / MANIFEST).exists()  # its last record gone: no manifest left


def test_recovery_puts_back_the_newest_of_two_lost_folders(tmp_path):
    out = tmp_path / "r"
    first = _recorded(out, "old", _dead_pid())
    second = _recorded(out, "old", _dead_pid())
    for path, name in ((first, "first"), (second, "second")):
        path.mkdir()
        (path / name).write_text(name)
    _age(first, 2)
    clean_stale_temporaries(out)
    assert [p.name for p in out.iterdir()] == ["second"]
    assert not first.exists() and not second.exists()


def test_a_live_writers_temporary_is_kept_for_a_day_then_removed(tmp_path):
    out = tmp_path / "report.html"
    young = _recorded(out, "new", os.getpid())
    old = _recorded(out, "new", os.getpid())
    young.write_text("")
    old.write_text("")
    _age(young, 23)
    _age(old, 25)  # a pid reused a day later is not the writer
    assert clean_stale_temporaries(out) == [old]
    assert young.exists()
    assert clean_stale_temporaries(tmp_path / "missing" / "x") == []


def test_names_a_person_can_write_are_never_cleaned(tmp_path):
    # regression: `.NAME.tmp-*` and `.NAME.old-*` (an older release's temporaries) were
    # deleted after a day, and `.NAME.old-*` moved into place when NAME was missing
    out = tmp_path / "report.html"
    dead = _dead_pid()
    theirs = [
        tmp_path / ".report.html.tmp-123",
        tmp_path / f".report.html.old-{dead}",
        tmp_path / ".report.html.old-notes",
        tmp_path / f"{TMP_PREFIX}report.html.{dead}.new-abc",  # like ours, never recorded
        tmp_path / f"{TMP_PREFIX}report.html.{dead}.old",
    ]
    for path in theirs:
        path.write_text("mine")
        _age(path, 48)
    # a record naming something else than a temporary of ours is no licence either
    with updated_manifest(tmp_path) as state:
        state["temporaries"][theirs[2].name] = {"pid": dead, "since": 0}
    assert clean_stale_temporaries(out) == []
    assert not out.exists()
    assert all(path.read_text() == "mine" for path in theirs)


def test_a_written_file_is_an_ordinary_file_not_a_private_or_executable_one(tmp_path):
    from ragmeter.files.outputs import atomic_write

    umask = os.umask(0o022)
    try:
        atomic_write(tmp_path / "a.txt", "x")
    finally:
        os.umask(umask)
    assert (tmp_path / "a.txt").stat().st_mode & 0o777 == 0o644


def test_another_targets_temporaries_are_never_touched(tmp_path):
    # regression: cleaning "r" deleted the lost folder of "r.x" (or "r.5") after a day
    out = tmp_path / "r"
    dead = _dead_pid()
    theirs = [
        _recorded(tmp_path / "r.x", "old", dead),  # the only copy of "r.x"
        _recorded(tmp_path / "r.5", "old", dead),
        _recorded(tmp_path / "r.5", "new", dead),
    ]
    for path in theirs:
        path.mkdir()
        _age(path, 25)
    ours = _recorded(out, "new", dead)
    ours.mkdir()
    assert clean_stale_temporaries(out) == [ours]
    assert not out.exists()  # never put back here
    assert all(path.is_dir() for path in theirs)
    assert clean_stale_temporaries(tmp_path / "r.x") == []
    assert (tmp_path / "r.x").is_dir()  # put back where it belongs


def test_the_lock_holder_is_named_by_its_command_without_secrets(monkeypatch):
    from ragmeter.files.outputs import _command

    monkeypatch.setattr(sys, "argv", ["/usr/local/bin/ragmeter", "search", "api_key=sk-1"])
    assert _command() == "ragmeter search api_key=***"
    monkeypatch.setattr(sys, "argv", ["/x/ragmeter", "search", "y" * 200])
    assert len(_command()) == 160 and _command().endswith("...")
    monkeypatch.setattr(sys, "argv", [])
    assert _command() == "python"


# --- two live processes writing one target --------------------------------------------------

_HOLDER = """
import os, sys
from pathlib import Path
from ragmeter.files.outputs import forget_temporary, new_temporary
target = Path(sys.argv[1])
tmp = new_temporary(target)
tmp.write_text("from the first writer")
print(tmp.name, flush=True)
if sys.stdin.readline().strip() == "finish":
    os.replace(tmp, target)
    forget_temporary(tmp)
"""


def _holder(target):
    proc = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(target)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    name = proc.stdout.readline().strip()
    assert name, "the first writer did not start"
    return proc, target.parent / name


def _finish(proc, line):
    try:
        proc.communicate(line, timeout=60)  # a hang fails the test instead of the suite
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail("the first writer did not finish within 60 s")


def test_a_second_writer_leaves_a_live_writers_temporary_alone(tmp_path):
    from ragmeter.files.manifest import recorded_temporaries
    from ragmeter.files.outputs import atomic_write

    target = tmp_path / "report.html"
    proc, theirs = _holder(target)
    try:
        atomic_write(target, "from the second writer")  # cleans stale temporaries first
        assert theirs.read_text() == "from the first writer"
        assert theirs.name in recorded_temporaries(tmp_path)
        assert target.read_text() == "from the second writer"
    finally:
        _finish(proc, "finish\n")
    assert proc.returncode == 0
    assert target.read_text() == "from the first writer"  # the last rename wins, whole
    assert recorded_temporaries(tmp_path) == {} and not theirs.exists()
    assert clean_stale_temporaries(target) == []


def test_a_killed_writers_temporary_is_removed_by_the_next_writer(tmp_path):
    from ragmeter.files.manifest import recorded_temporaries
    from ragmeter.files.outputs import atomic_write

    target = tmp_path / "report.html"
    proc, theirs = _holder(target)
    proc.kill()
    _finish(proc, None)
    assert theirs.exists() and theirs.name in recorded_temporaries(tmp_path)
    atomic_write(target, "mine")
    assert not theirs.exists() and recorded_temporaries(tmp_path) == {}
    assert target.read_text() == "mine"

"""The manifest of what ragmeter wrote (ragmeter.files.manifest): a file counts as ours
only while it is unchanged, and a folder is replaced only when all of it is ours."""

from __future__ import annotations

import hmac
import json
import os
import shutil
import subprocess
import sys

import pytest

from ragmeter.errors import InputError
from ragmeter.files import manifest as mf


def test_a_recorded_file_is_ours_until_it_changes(tmp_path):
    f = tmp_path / "report.html"
    f.write_text("abc")
    assert not mf.is_recorded(f)
    mf.record_written(f)
    assert mf.is_recorded(f)
    assert mf.read_manifest(tmp_path)["report.html"][0] == 3
    f.write_text("abd")  # same size, other bytes
    assert not mf.is_recorded(f)
    f.write_text("abcd")
    assert not mf.is_recorded(f)
    f.write_text("abc")  # the same bytes again: a copy without its times is still ours
    assert mf.is_recorded(f)


def test_large_files_are_hashed_whole_at_any_size(tmp_path):
    # regression: files over 16 MiB were hashed by their size, first and last MiB only,
    # so an edit in the middle went unseen and the edited file was overwritten
    for name, n in (("16 MiB", 16 << 20), ("over 16 MiB", (16 << 20) + 1), ("40 MiB", 40 << 20)):
        f = tmp_path / name
        data = bytearray(n)
        f.write_bytes(data)
        mf.record_written(f)
        assert mf.is_recorded(f)
        data[n // 2] = 1  # a change in the middle
        f.write_bytes(data)
        assert not mf.is_recorded(f), name
        data[n // 2] = 0
        data[-1] = 1  # a change in the last MiB is always seen
        f.write_bytes(data)
        assert not mf.is_recorded(f)
        data[-1] = 0
        data[0] = 1
        f.write_bytes(data)
        assert not mf.is_recorded(f)


def test_the_manifest_drops_gone_files_and_leaves_a_foreign_file_alone(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_text("1")
    b.write_text("2")
    mf.record_written(a)
    mf.record_written(b)
    assert sorted(mf.read_manifest(tmp_path)) == ["a", "b"]
    a.unlink()
    b.write_text("22")
    mf.record_written(b)
    assert sorted(mf.read_manifest(tmp_path)) == ["b"]
    text = (tmp_path / mf.MANIFEST).read_text()
    assert json.loads(text)["format"] == "ragmeter-manifest"
    other = tmp_path / "other"
    other.mkdir()
    (other / mf.MANIFEST).write_text('{"format": "something else"}')
    (other / "c").write_text("3")
    mf.record_written(other / "c")
    assert (other / mf.MANIFEST).read_text() == '{"format": "something else"}'
    assert mf.read_manifest(other) == {}
    mf.record_written(other / mf.MANIFEST)  # never records itself
    mf.record_written(other / "missing")
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / mf.MANIFEST).symlink_to(tmp_path / mf.MANIFEST)
    (linked / "d").write_text("4")
    mf.record_written(linked / "d")
    assert sorted(mf.read_manifest(tmp_path)) == ["b"]  # not written through the link


def test_manifest_parsing():
    empty = {"files": {}, "temporaries": {}}
    assert mf._parse_manifest(b"  \n") == empty
    assert mf._parse_manifest(b"\xff") is None
    assert mf._parse_manifest(b"[]") is None
    assert mf._parse_manifest(b'{"format": "ragmeter-manifest", "files": []}') is None
    raw = b'{"format": "ragmeter-manifest", "files": {"a": [1, "x"], "b": 3}}'
    assert mf._parse_manifest(raw) == {"files": {"a": [1, "x"]}, "temporaries": {}}
    # names that lead elsewhere are no entry of this folder
    raw = (
        b'{"format": "ragmeter-manifest", "files": {"../a": [1, "x"], "d/a": [1, "x"], '
        b'"..": [1, "x"], "ok": [1, "x"]}, "temporaries": {"t": {"pid": 1}, "../t": {}}}'
    )
    assert mf._parse_manifest(raw) == {"files": {"ok": [1, "x"]}, "temporaries": {"t": {"pid": 1}}}


def _results(tmp_path):
    out = tmp_path / "r"
    out.mkdir(parents=True)
    (out / "meta.json").write_text('{"format": "ragmeter-results"}')
    (out / "scores.json").write_text("{}")
    (out / "sub").mkdir()
    mf.write_manifest(out)
    return out


def test_write_manifest_records_files_not_folders_links_or_itself(tmp_path):
    out = _results(tmp_path)
    assert sorted(mf.read_manifest(out)) == ["meta.json", "scores.json"]
    (out / "link.json").symlink_to(out / "scores.json")
    mf.write_manifest(out)
    assert sorted(mf.read_manifest(out)) == ["meta.json", "scores.json"]
    mf.record_written(out / "link.json")
    assert not mf.is_recorded(out / "link.json")
    (out / "link.json").unlink()
    mf.write_manifest(out)
    assert sorted(mf.read_manifest(out)) == ["meta.json", "scores.json"]


def test_a_folder_is_replaceable_only_when_all_of_it_is_ours(tmp_path):
    out = _results(tmp_path)
    (out / "sub").rmdir()
    mf.check_replaceable(out)
    (out / "answers").mkdir()  # carried into the new directory
    (out / "answers" / "x.json").write_text("{}")
    (out / "audit").mkdir()
    mf.check_replaceable(out)
    for name in ("n1", "n2", "n3", "n4", "n5"):
        (out / name).write_text("mine")
    with pytest.raises(InputError, match=r"holds n1, n2, n3 and 2 more, which ragmeter did not"):
        mf.check_replaceable(out, "--out")
    (out / "n5").unlink()
    with pytest.raises(InputError, match=r"holds n1, n2, n3 and 1 more, which"):
        mf.check_replaceable(out)
    (out / "n4").unlink()
    with pytest.raises(InputError, match=r"holds n1, n2, n3, which"):
        mf.check_replaceable(out)
    for name in ("n2", "n3"):
        (out / name).unlink()
    with pytest.raises(InputError, match=r"holds n1, which") as err:
        mf.check_replaceable(out, "--into")
    assert "give another --into" in str(err.value) and "more" not in str(err.value)
    (out / "n1").unlink()
    (out / "scores.json").write_text('{"edited": 1}')
    with pytest.raises(InputError, match="holds scores.json, which"):
        mf.check_replaceable(out)


def test_a_hand_made_folder_or_a_linked_carried_folder_is_not_replaceable(tmp_path):
    out = _results(tmp_path)
    (out / "sub").rmdir()
    (out / "meta.json").write_text('{"format": "ragmeter-results", "x": 1}')
    with pytest.raises(InputError, match="has a meta.json but no record"):
        mf.check_replaceable(out)
    out2 = _results(tmp_path / "two")
    (out2 / "sub").rmdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (out2 / "answers").symlink_to(elsewhere)
    with pytest.raises(InputError, match="holds answers, which"):
        mf.check_replaceable(out2)


def test_the_manifest_text_is_fixed_and_never_records_itself(tmp_path):
    f = tmp_path / "a.txt"
    f.write_text("abc")
    mf.record_written(f)
    digest = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    seal = hmac.new(mf.manifest_key(), b"a.txt\x003\x00" + digest.encode(), "sha256").hexdigest()
    assert (tmp_path / mf.MANIFEST).read_text() == (
        '{\n "files": {\n  "a.txt": [\n   3,\n   "' + digest + '",\n   "' + seal + '"\n  ]\n },\n'
        ' "format": "ragmeter-manifest"\n}\n'
    )
    mf.record_written(tmp_path / mf.MANIFEST)
    assert list(mf.read_manifest(tmp_path)) == ["a.txt"]


def test_a_folder_at_the_manifests_name_is_left_alone(tmp_path):
    (tmp_path / mf.MANIFEST).mkdir()
    f = tmp_path / "a.txt"
    f.write_text("abc")
    mf.record_written(f)  # nothing recorded, nothing raised
    assert mf.read_manifest(tmp_path) == {} and not mf.is_recorded(f)


def _record_many(folder, start):
    from pathlib import Path

    for i in range(start, start + 40):
        path = Path(folder) / f"f{i}.txt"
        path.write_text(str(i))
        mf.record_written(path)


def test_writers_at_once_lose_no_entry(tmp_path):
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_record_many, args=(tmp_path, 40 * j)) for j in range(4)]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join()
    assert len(mf.read_manifest(tmp_path)) == 160


# --- sealed entries: a manifest written by hand or copied never makes a file ours ----------


def test_a_handwritten_entry_with_the_files_size_and_digest_is_not_ours(tmp_path):
    # regression: an entry recording a user's notes.html (size and SHA-256, both easy to
    # compute) let `report --out notes.html` overwrite it
    notes = tmp_path / "notes.html"
    notes.write_text("my notes")
    entry = mf._entry(notes)
    (tmp_path / mf.MANIFEST).write_text(
        json.dumps({"format": "ragmeter-manifest", "files": {"notes.html": entry}})
    )
    assert not mf.is_recorded(notes)
    # nor with a seal made up, nor with the seal of another name
    forged = {"notes.html": [*entry, "0" * 64], "b": [*entry, mf._seal("other", *entry)]}
    (tmp_path / mf.MANIFEST).write_text(
        json.dumps({"format": "ragmeter-manifest", "files": forged})
    )
    assert not mf.is_recorded(notes)
    (tmp_path / "b").write_text("my notes")
    assert not mf.is_recorded(tmp_path / "b")


def test_an_entry_sealed_under_another_users_key_is_not_ours(tmp_path, monkeypatch):
    f = tmp_path / "report.html"
    f.write_text("abc")
    mf.record_written(f)
    assert mf.is_recorded(f)
    monkeypatch.setenv("RAGMETER_STATE_DIR", str(tmp_path / "another-user"))
    assert not mf.is_recorded(f)  # a manifest copied from someone else's folder
    mf.record_written(f)  # ragmeter writing it again makes it ours again
    assert mf.is_recorded(f)


def test_a_copied_folder_keeps_its_files_ours(tmp_path):
    out = _results(tmp_path)
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)  # cp -r: new inodes and times, the same bytes
    assert mf.is_recorded(copy / "meta.json")
    (copy / "sub").rmdir()
    mf.check_replaceable(copy)


def test_the_key_is_made_once_private_and_shared_by_processes(tmp_path, monkeypatch):
    state = tmp_path / "state"
    monkeypatch.setenv("RAGMETER_STATE_DIR", str(state))
    code = "from ragmeter.files.manifest import manifest_key; print(manifest_key().hex())"
    keys = {
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
        ).stdout.strip()
        for _ in range(2)
    }
    assert len(keys) == 1 and mf.manifest_key().hex() in keys
    assert (state / mf.KEY_FILE).stat().st_mode & 0o077 == 0
    assert sorted(p.name for p in state.iterdir()) == [mf.KEY_FILE]  # no temporary left


def test_without_a_writable_state_folder_only_this_process_recognises_its_files(
    tmp_path, monkeypatch
):
    blocked = tmp_path / "file"
    blocked.write_text("")
    monkeypatch.setenv("RAGMETER_STATE_DIR", str(blocked / "state"))  # under a file
    f = tmp_path / "report.html"
    f.write_text("abc")
    mf.record_written(f)
    assert mf.is_recorded(f)
    assert not (blocked / "state").exists()
    code = f"from ragmeter.files.manifest import is_recorded; print(is_recorded({str(f)!r}))"
    env = {**os.environ, "RAGMETER_STATE_DIR": str(blocked / "state")}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60
    )
    assert out.stdout.strip() == "False"


_LOOPED = """
import sys
from pathlib import Path
from ragmeter.files.io import atomic_write_text
from ragmeter.files.manifest import is_recorded, read_manifest, record_written
folder = Path(sys.argv[1])
atomic_write_text(folder / "a.txt", "x")  # records nothing through the link
record_written(folder / "a.txt")
print(is_recorded(folder / "a.txt"), read_manifest(folder))
"""


@pytest.mark.parametrize("kind", ["loop", "chain", "fifo"])
def test_a_symlinked_manifest_loop_or_fifo_is_no_manifest_and_never_hangs(tmp_path, kind):
    manifest = tmp_path / mf.MANIFEST
    if kind == "loop":
        manifest.symlink_to(manifest)
    elif kind == "chain":  # a -> b -> a, beside the folder
        (tmp_path / "b").symlink_to(manifest)
        manifest.symlink_to(tmp_path / "b")
    else:  # a link to a fifo: following it would block on open
        os.mkfifo(tmp_path / "fifo")
        manifest.symlink_to(tmp_path / "fifo")
    try:
        done = subprocess.run(
            [sys.executable, "-c", _LOOPED, str(tmp_path)],
            capture_output=True,
            text=True,
            timeout=60,  # a hang fails here instead of stopping the suite
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"writing beside a {kind} at the manifest's name hung")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False {}"  # nothing counts, nothing recorded
    assert (tmp_path / "a.txt").read_text() == "x" and manifest.is_symlink()

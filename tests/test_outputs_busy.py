"""A results directory another writer is busy with, or that a killed writer left a
temporary in: a new run into it is neither refused wrongly nor let through wrongly."""

from __future__ import annotations

import threading

import pytest
from test_outputs import killed_temporary, small_run

from ragmeter.errors import InputError
from ragmeter.files.manifest import recorded_temporaries, updated_manifest
from ragmeter.files.outputs import (
    ResultsInUse,
    check_results_target,
    results_lock,
    write_output,
)
from ragmeter.runs.results import save_results


@pytest.fixture
def saved(tmp_path):
    run = small_run(tmp_path)
    out = tmp_path / "r"
    save_results(run, out)
    return run, out


def test_a_report_temporary_a_killed_writer_left_does_not_block_a_new_run(saved):
    run, out = saved
    left = killed_temporary(out / "report.html")  # recorded, then the writer was killed
    left.write_text("<html>half")
    assert left.name in recorded_temporaries(out)
    check_results_target(out)
    save_results(run, out, overwrite=True)  # the whole directory is replaced
    assert not left.exists()


def test_a_file_named_like_a_temporary_but_not_recorded_is_the_users(saved):
    run, out = saved
    left = killed_temporary(out / "report.html")
    mine = out / (left.name[:-8] + "0badf00d")  # same shape, another name: no record
    mine.write_text("mine")
    with pytest.raises(InputError, match="which ragmeter did not write"):
        check_results_target(out)
    with pytest.raises(InputError, match="which ragmeter did not write"):
        save_results(run, out, overwrite=True)
    assert mine.read_text() == "mine"


def test_a_manifest_naming_a_users_file_a_temporary_never_makes_it_ragmeters(saved):
    run, out = saved
    (out / "notes.txt").write_text("mine")
    (out / "report.html.bak").write_text("mine too")
    with updated_manifest(out) as state:  # an entry a person (or a copied manifest) wrote
        state["temporaries"]["notes.txt"] = {"pid": 1, "since": 0}
    left = killed_temporary(out / "notes.txt")  # temporary-shaped, of a file not ours there
    left.write_text("mine as well")
    for name in ("notes.txt", left.name):
        assert name in recorded_temporaries(out)
    with pytest.raises(InputError, match="which ragmeter did not write") as refused:
        save_results(run, out, overwrite=True)
    for name in ("notes.txt", left.name, "report.html.bak"):
        assert name in str(refused.value)
        assert (out / name).exists()


class Holder:
    """Another writer holding the lock of ``out`` (a thread: its own flock)."""

    def __init__(self, out):
        self.out, self.taken, self.release = out, threading.Event(), threading.Event()
        self.thread = threading.Thread(target=self._hold)

    def _hold(self):
        with results_lock(self.out):
            self.taken.set()
            self.release.wait(30)

    def __enter__(self):
        self.thread.start()
        assert self.taken.wait(30)
        return self

    def __exit__(self, *exc):
        self.release.set()
        self.thread.join(30)


def test_the_check_before_work_leaves_a_directory_being_written_to_its_writer(saved):
    run, out = saved
    report = out / "report.html"
    write_output(report, "<html>one", "report", flag=None)
    with Holder(out):
        # the writer renamed a new report into place and has not recorded it yet
        report.write_text("<html>two, not yet recorded")
        check_results_target(out)  # busy: not refused on what is changing
        with pytest.raises(ResultsInUse, match="in use by"):
            with results_lock(out, wait_s=0):
                pass
    # the writer is gone and the file stays as it is: now it is not ragmeter's
    with pytest.raises(InputError, match="report.html, which ragmeter did not write"):
        check_results_target(out)
    with pytest.raises(InputError, match="report.html, which ragmeter did not write"):
        save_results(run, out, overwrite=True)
    assert report.read_text() == "<html>two, not yet recorded"


def test_a_busy_directory_still_refuses_what_a_writer_never_changes(saved, tmp_path):
    run, out = saved
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "thesis.tex").write_text("keep")
    with Holder(out), Holder(mine):
        with pytest.raises(InputError, match="is the corpus"):
            check_results_target(out, [("corpus", out)])
        with pytest.raises(InputError, match="already holds ragmeter results"):
            check_results_target(out, overwrite=False)  # results stay results
        with pytest.raises(InputError, match="does not hold ragmeter results"):
            check_results_target(mine)
    assert (mine / "thesis.tex").read_text() == "keep"


def test_a_second_writer_waits_for_the_lock_and_takes_it_when_freed(tmp_path):
    results = tmp_path / "r"
    taken, release = threading.Event(), threading.Event()

    def hold() -> None:
        with results_lock(results):
            taken.set()
            release.wait(10)

    holder = threading.Thread(target=hold)
    holder.start()
    assert taken.wait(10)
    with pytest.raises(ResultsInUse, match="in use by"):  # told at once when not waiting
        with results_lock(results, wait_s=0):
            pass
    threading.Timer(0.3, release.set).start()
    with results_lock(results, wait_s=30):  # waits for the holder, then holds it itself
        assert release.is_set()
    holder.join(10)

"""The output rule: ragmeter writes only where nothing of the user's can be lost."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

import ragmeter
from ragmeter.cli import app
from ragmeter.errors import InputError
from ragmeter.files.io import atomic_write_text
from ragmeter.files.manifest import MANIFEST, is_recorded, read_manifest, recorded_temporaries
from ragmeter.files.outputs import (
    TMP_PREFIX,
    check_output_file,
    check_results_target,
    clean_stale_temporaries,
    forget_temporary,
    is_results_dir,
    lock_path,
    new_temporary,
    results_lock,
    write_output,
)
from ragmeter.inputs.config import Config
from ragmeter.runs.pipeline import run_search
from ragmeter.runs.results import Results, save_results

runner = CliRunner()

CATS = "Cats sleep for sixteen hours a day. Cats purr when content."
DOGS = "Dogs bark at strangers. A dog's nose has 300 million receptors."
FISH = "Fish breathe through gills. Goldfish remember for months."


def project(root):
    """A tiny corpus and test set on disk: root/docs/*.md and root/q.jsonl."""
    docs = root / "docs"
    docs.mkdir(parents=True)
    (docs / "cats.md").write_text(CATS)
    (docs / "dogs.md").write_text(DOGS)
    (docs / "fish.md").write_text(FISH)
    rows = [
        {"id": "q1", "question": "how long do cats sleep", "answers": [{"text": CATS[:35]}]},
        {"id": "q2", "question": "dog nose receptors", "answers": [{"text": DOGS[24:]}]},
        {"id": "q3", "question": "goldfish memory", "answers": [{"text": FISH[28:]}]},
    ]
    (root / "q.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return docs, root / "q.jsonl"


def search(root, out, *extra):
    docs, q = root / "docs", root / "q.jsonl"
    args = ["search", "--corpus", str(docs), "--testset", str(q), "--strategies", "whole"]
    return runner.invoke(app, [*args, "--ks", "1", "--rounds", "200", "--out", str(out), *extra])


def one_line_error(result, *needles):
    assert result.exit_code == 2, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.output
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def snapshot(root):
    return {
        p.relative_to(root).as_posix(): p.read_bytes() if p.is_file() else None
        for p in sorted(root.rglob("*"))
    }


@pytest.fixture
def tiny(tmp_path):
    project(tmp_path)
    return tmp_path


def test_search_into_a_folder_of_the_users_refuses_and_keeps_the_file(tiny):
    d = tiny / "d"
    d.mkdir()
    (d / "thesis.tex").write_text("keep")
    line = one_line_error(search(tiny, d), "not hold ragmeter results", "--out")
    assert "move" in line
    assert (d / "thesis.tex").read_text() == "keep"
    assert sorted(p.name for p in d.iterdir()) == ["thesis.tex"]


def test_search_over_the_corpus_is_refused(tiny):
    before = snapshot(tiny)
    one_line_error(search(tiny, tiny / "docs"), "is the corpus")
    one_line_error(search(tiny, tiny / "docs" / "cats.md"), "inside the corpus")
    one_line_error(search(tiny, tiny / "docs" / "new"), "inside the corpus")
    one_line_error(search(tiny, tiny), "contains the corpus")
    one_line_error(search(tiny, tiny / "q.jsonl"), "is the test set")
    assert snapshot(tiny) == before  # nothing renamed, nothing left behind


def test_search_to_a_file_is_refused(tiny):
    (tiny / "notes.md").write_text("mine")
    one_line_error(search(tiny, tiny / "notes.md"), "is a file")
    assert (tiny / "notes.md").read_text() == "mine"


def test_search_reruns_into_its_own_results(tiny):
    out = tiny / "results"
    assert search(tiny, out).exit_code == 0
    assert is_results_dir(out)
    meta = json.loads((out / "meta.json").read_text())
    assert meta["format"] == "ragmeter-results" and meta["format_version"] == 1
    result = search(tiny, out)
    assert result.exit_code == 0, result.output
    assert Results(out).systems == ["whole"]
    # no lock file or temporary is left beside it
    assert sorted(p.name for p in tiny.iterdir()) == ["docs", "q.jsonl", "results"]


def test_an_empty_folder_is_accepted(tiny):
    (tiny / "empty").mkdir()
    assert search(tiny, tiny / "empty").exit_code == 0
    assert is_results_dir(tiny / "empty")


def small_run(root):
    docs, q = project(root)
    cfg = Config(corpus=str(docs), testset=str(q), strategies=("whole",), ks=(1,), rounds=200)
    return run_search(cfg)


def test_save_results_refuses_to_replace_results_unless_told(tmp_path):
    run = small_run(tmp_path)
    out = tmp_path / "ragmeter-results"
    save_results(run, out)
    stamp = (out / "meta.json").read_bytes()
    with pytest.raises(InputError, match="already holds ragmeter results; pass overwrite=True"):
        save_results(run, out)
    assert (out / "meta.json").read_bytes() == stamp
    save_results(run, out, overwrite=True)
    assert is_results_dir(out)


def test_save_results_refuses_the_inputs_and_foreign_folders(tmp_path):
    run = small_run(tmp_path)
    for bad, message in (
        (tmp_path / "docs", "is the corpus"),
        (tmp_path / "docs" / "cats.md", "inside the corpus"),
        (tmp_path, "contains the corpus"),
    ):
        with pytest.raises(InputError, match=message):
            save_results(run, bad, overwrite=True)
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "thesis.tex").write_text("keep")
    with pytest.raises(InputError, match="does not hold ragmeter results"):
        save_results(run, tmp_path / "mine", overwrite=True)
    assert (tmp_path / "mine" / "thesis.tex").read_text() == "keep"


def killed_temporary(target, role="new"):
    """The temporary a process records for ``target`` before it is killed: the name
    (made by a child process that then exits, so its pid no longer runs)."""
    code = (
        "import sys; from pathlib import Path; from ragmeter.files.outputs import new_temporary; "
        "print(new_temporary(Path(sys.argv[1]), sys.argv[2]).name)"
    )
    src = str(Path(ragmeter.__file__).parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, "-c", code, str(target), role],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    return target.parent / done.stdout.strip()


def test_stale_temporaries_are_removed_and_a_lost_directory_put_back(tmp_path):
    out = tmp_path / "r"
    out.mkdir()
    (out / "meta.json").write_text(json.dumps({"format": "ragmeter-results"}))
    # a run killed between its two renames: the old directory is only in the temporary
    old = killed_temporary(out, "old")
    os.replace(out, old)
    new = killed_temporary(out)
    new.mkdir()
    assert TMP_PREFIX in new.name and new.name.startswith(f"{TMP_PREFIX}r.")
    live = new_temporary(out)  # this process's own: not stale
    live.mkdir()
    other = killed_temporary(tmp_path / "other")
    other.mkdir()  # another target's: not ours to touch here
    removed = clean_stale_temporaries(out)
    assert removed == [new]
    assert is_results_dir(out)
    assert live.exists() and other.exists()


def test_a_save_cleans_what_a_killed_save_left(tmp_path):
    run = small_run(tmp_path)
    out = tmp_path / "r"
    save_results(run, out)
    leftover = killed_temporary(out)
    leftover.mkdir()
    (leftover / "runs.jsonl").write_text("{")
    save_results(run, out, overwrite=True)
    assert not leftover.exists()
    assert not (tmp_path / MANIFEST).exists()  # records of temporaries only: none is left


def test_temporaries_carry_an_unguessable_marker_and_are_recorded_first(tmp_path):
    target = tmp_path / "report.html"
    one, two = new_temporary(target), new_temporary(target)
    assert not one.exists()  # recorded before anything is made at the name
    assert set(recorded_temporaries(tmp_path)) == {one.name, two.name}
    pid, mark, role = one.name.removeprefix(f"{TMP_PREFIX}report.html.").split(".")
    assert pid == str(os.getpid()) and len(mark) == 16 and role.startswith("new-")
    assert two.name.split(".")[-2] == mark and one != two
    other = killed_temporary(target)
    assert other.name.split(".")[-2] != mark  # another process: another marker
    forget_temporary(one)
    forget_temporary(two)
    assert set(recorded_temporaries(tmp_path)) == {other.name}


def test_cleanup_never_touches_a_users_dot_files_beside_the_results(tiny):
    # regression: `.res.old-notes` and `.res.tmp-draft`, 2 days old, were deleted by the
    # next search
    out = tiny / "res"
    assert search(tiny, out).exit_code == 0
    mine = [tiny / ".res.old-notes", tiny / ".res.tmp-draft", tiny / f"{TMP_PREFIX}res.1.old"]
    for path in mine:
        path.write_text("my words")
        two_days = time.time() - 2 * 86400
        os.utime(path, (two_days, two_days))
    assert search(tiny, out).exit_code == 0
    assert all(path.read_text() == "my words" for path in mine)


def test_a_users_old_folder_is_never_moved_into_place(tiny):
    # regression: `.res.old-2024/` with no `res` beside it was moved into place as `res`
    # (a "lost" results directory), then replaced by the search: the thesis was gone
    old = tiny / ".res.old-2024"
    old.mkdir()
    (old / "thesis.txt").write_text("four years")
    two_days = time.time() - 2 * 86400
    os.utime(old, (two_days, two_days))
    assert search(tiny, tiny / "res").exit_code == 0
    assert (old / "thesis.txt").read_text() == "four years"
    assert is_results_dir(tiny / "res") and not (tiny / "res" / "thesis.txt").exists()


def _dead_pid():
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_failed_answer_leaves_no_answers_folder(tiny):
    out = tiny / "results"
    assert search(tiny, out).exit_code == 0
    for bad in (
        ["--reader", "nope:model"],
        ["--reader", "ollama:x", "--concurrency", "0"],
        ["--reader", "ollama:x", "--max-tokens", "0"],
        ["--reader", "ollama:x", "--timeout", "-1"],
        ["--reader", "ollama:x", "--k", "11"],  # ranked to depth 10 only
    ):
        one_line_error(runner.invoke(app, ["answer", str(out), *bad]))
        assert not (out / "answers").exists(), bad
    line = one_line_error(
        runner.invoke(app, ["answer", str(out), "--reader", "ollama:x", "--k", "11"])
    )
    assert "past the depth 10" in line
    # and a later search into the same directory still works
    assert search(tiny, out).exit_code == 0


def test_report_out_is_checked(tiny):
    out = tiny / "results"
    assert search(tiny, out).exit_code == 0
    (tiny / "page.html").write_text("<html>mine</html>")
    for target, needle in (
        (tiny / "page.html", "not a ragmeter report"),
        (tiny / "docs" / "report.html", "inside the corpus"),
        (tiny / "docs", "is a directory"),
    ):
        result = runner.invoke(app, ["report", str(out), "--out", str(target)])
        one_line_error(result, needle)
    assert (tiny / "page.html").read_text() == "<html>mine</html>"
    assert not (tiny / "docs" / "report.html").exists()


def test_generate_and_audit_refuse_the_inputs(tiny):
    from ragmeter.questions.audit import check_audit_targets
    from ragmeter.questions.generate import check_generate_targets

    docs, q = tiny / "docs", tiny / "q.jsonl"
    with pytest.raises(InputError, match="is the test set"):
        check_generate_targets(q, docs, q)
    with pytest.raises(InputError, match="inside the corpus"):
        check_generate_targets(docs / "gen.jsonl", docs, None)
    (tiny / "notes.jsonl").write_text('{"mine": 1}\n')
    with pytest.raises(InputError, match="not a generated test set written by ragmeter"):
        check_generate_targets(tiny / "notes.jsonl", docs, None)
    # a file that looks generated but that ragmeter did not record writing is the user's
    (tiny / "gen.jsonl").write_text('{"source": "generated", "id": "q"}\n')
    with pytest.raises(InputError, match="not a generated test set written by ragmeter"):
        check_generate_targets(tiny / "gen.jsonl", docs, None)
    atomic_write_text(tiny / "gen.jsonl", '{"source": "generated", "id": "q"}\n')
    check_generate_targets(tiny / "gen.jsonl", docs, None)  # our own: may be rewritten
    with pytest.raises(InputError, match="inside the corpus"):
        check_audit_targets(docs, "audit", docs, q)
    with pytest.raises(InputError, match="plain file name"):
        check_audit_targets(tiny, "../x", docs, q)
    (tiny / "audit.csv").write_text("my,own,table\n")
    with pytest.raises(InputError, match="audit.csv: exists and is not a question audit"):
        check_audit_targets(tiny, "audit", docs, q)


def test_check_results_target_accepts_a_new_path(tmp_path):
    check_results_target(tmp_path / "new" / "deeper")
    assert not (tmp_path / "new").exists()


def test_lock_names_its_holder_and_a_dead_holder_is_taken_over(tmp_path):
    out = tmp_path / "r"
    lock = lock_path(out)
    # a lock file left by a process that died: nobody holds the flock, so it is taken over
    lock.write_text(json.dumps({"pid": _dead_pid(), "host": "h", "command": "c", "since": "s"}))
    with results_lock(out, command="ragmeter test"):
        info = json.loads(lock.read_text())
        assert info["pid"] == os.getpid() and info["command"] == "ragmeter test"
        with results_lock(out):  # re-entrant in one thread
            pass
        code = (
            "import sys; from ragmeter.files.outputs import results_lock\n"
            "from ragmeter.errors import InputError\n"
            "try:\n"
            f"    with results_lock({str(out)!r}, wait_s=0.3): print('got it')\n"
            "except InputError as exc: print(exc)\n"
        )
        other = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=os.environ
        )
        assert f"in use by pid {os.getpid()}" in other.stdout, other.stdout + other.stderr
        assert "ragmeter test" in other.stdout
    assert not lock.exists()


def test_a_file_write_cleans_what_a_killed_write_left(tmp_path):
    from ragmeter.files.io import atomic_write_text

    leftover = killed_temporary(tmp_path / "reader.jsonl")
    leftover.write_text("{half")
    mine = new_temporary(tmp_path / "reader.jsonl")
    mine.write_text("in flight")
    atomic_write_text(tmp_path / "reader.jsonl", "{}\n")
    assert not leftover.exists() and mine.exists()
    assert (tmp_path / "reader.jsonl").read_text() == "{}\n"


# --- every writer: nothing of the user's is overwritten, renamed over, or deleted ------------


def test_export_refuses_the_test_set_the_corpus_and_user_files(tiny):
    out = tiny / "results"
    assert search(tiny, out).exit_code == 0
    (tiny / "mine.whole.txt").write_text("keep")  # --run mine.txt writes mine.whole.txt
    before = snapshot(tiny / "docs") | {"q": (tiny / "q.jsonl").read_bytes()}
    for flag, target, needle in (
        ("--qrels", tiny / "q.jsonl", "is the test set"),
        ("--run", tiny / "docs" / "cats.md", "inside the corpus"),
        ("--run", tiny / "mine.txt", "not a TREC file written by ragmeter"),
        ("--qrels", out / "qrels.txt", "inside the results directory"),
    ):
        one_line_error(runner.invoke(app, ["export", str(out), flag, str(target)]), needle)
    assert snapshot(tiny / "docs") | {"q": (tiny / "q.jsonl").read_bytes()} == before
    assert (tiny / "mine.whole.txt").read_text() == "keep"
    # its own files it may rewrite; a user file named like a temporary is never touched
    (tiny / "run.whole.txt.tmp").write_text("mine too")  # --run run.txt writes run.whole.txt
    for _ in range(2):
        result = runner.invoke(app, ["export", str(out), "--run", str(tiny / "run.txt")])
        assert result.exit_code == 0, result.output
    assert (tiny / "run.whole.txt.tmp").read_text() == "mine too"
    (tiny / "run.whole.txt").write_text("edited by hand")  # now it is the user's
    one_line_error(runner.invoke(app, ["export", str(out), "--run", str(tiny / "run.txt")]))
    assert (tiny / "run.whole.txt").read_text() == "edited by hand"


def test_check_markdown_refuses_user_files_and_the_results(tiny):
    out = tiny / "results"
    assert search(tiny, out).exit_code == 0
    (tiny / "notes.md").write_text("keep")
    args = ["check", str(out), str(out), "--system", "whole", "--rounds", "200", "--margin", "5"]
    for target, needle in (
        (tiny / "notes.md", "not a Markdown summary written by ragmeter"),
        (tiny / "q.jsonl", "is the test set"),
        (out / "scores.json", "inside the results directory"),
    ):
        one_line_error(runner.invoke(app, [*args, "--markdown", str(target)]), needle)
    assert (tiny / "notes.md").read_text() == "keep"
    assert runner.invoke(app, [*args, "--markdown", str(tiny / "pr.md")]).exit_code == 0
    assert runner.invoke(app, [*args, "--markdown", str(tiny / "pr.md")]).exit_code == 0


def trec_files(root, runs=None):
    runs = runs or root
    (root / "qrels.txt").write_text("1 0 d1 1\n2 0 d2 1\n3 0 d3 1\n")
    (runs / "a.run").write_text("1 Q0 d1 1 3 a\n2 Q0 d9 1 3 a\n3 Q0 d3 1 3 a\n")
    return root / "qrels.txt", runs / "a.run"


def test_evaluate_refuses_an_out_holding_its_run_file(tmp_path):
    res = tmp_path / "res"
    res.mkdir()
    qrels, run = trec_files(tmp_path, res)
    args = ["evaluate", str(run), "--qrels", str(qrels), "--rounds", "200", "--out", str(res)]
    one_line_error(runner.invoke(app, args), "contains the run file")
    assert run.read_text().startswith("1 Q0 d1") and qrels.exists()
    # an earlier results directory with the run file moved in later is refused too
    qrels, run = trec_files(tmp_path)
    out = tmp_path / "out"
    args = ["evaluate", str(run), "--qrels", str(qrels), "--rounds", "200", "--out", str(out)]
    assert runner.invoke(app, args).exit_code == 0
    (out / "a.run").write_text(run.read_text())
    one_line_error(runner.invoke(app, args), "a.run", "did not write")
    assert (out / "a.run").exists()


def test_replacing_results_keeps_what_the_user_put_inside(tiny):
    out = tiny / "results"
    assert search(tiny, out).exit_code == 0
    (out / "notes.txt").write_text("my notes")
    one_line_error(search(tiny, out), "notes.txt", "did not write")
    assert (out / "notes.txt").read_text() == "my notes"
    (out / "notes.txt").unlink()
    (out / "summary.json").write_text("{}")  # a file of ours, changed by hand
    one_line_error(search(tiny, out), "summary.json")
    assert (out / "summary.json").read_text() == "{}"


@pytest.mark.parametrize(
    "files",
    [
        {"meta.json": json.dumps({"format": "ragmeter-results", "format_version": 1})},
        {"meta.json": json.dumps({"versions": {"ragmeter": "0.1"}}), "scores.json": "{}"},
    ],
    ids=["marker", "legacy pair"],
)
def test_a_hand_made_marker_does_not_let_a_folder_be_replaced(tiny, files):
    mine = tiny / "mine"
    mine.mkdir()
    for name, text in files.items():
        (mine / name).write_text(text)
    (mine / "thesis.tex").write_text("keep")
    before = snapshot(mine)
    one_line_error(search(tiny, mine), "no record that ragmeter wrote the folder")
    assert snapshot(mine) == before


def test_report_keeps_a_user_file_at_report_html(tiny):
    out = tiny / "results"
    assert search(tiny, out).exit_code == 0
    (out / "report.html").write_text("<html>mine</html>")
    one_line_error(runner.invoke(app, ["report", str(out)]), "not a ragmeter report")
    assert (out / "report.html").read_text() == "<html>mine</html>"


def test_a_cache_that_is_the_users_own_database_is_refused(tiny):
    import sqlite3

    from ragmeter.llm import ReplyCache

    db = tiny / "my.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE people (name TEXT)")
        conn.execute("INSERT INTO people VALUES ('ada')")
    conn.close()
    before = db.read_bytes()
    with pytest.raises(InputError, match="not a ragmeter reply cache"):
        ReplyCache(db)
    (tiny / "text.db").write_text("not a database at all")
    with pytest.raises(InputError, match="is not a reply cache"):
        ReplyCache(tiny / "text.db")
    out = tiny / "results"
    assert search(tiny, out).exit_code == 0
    result = runner.invoke(app, ["answer", str(out), "--reader", "ollama:x", "--cache", str(db)])
    one_line_error(result, "my.db", "not a ragmeter reply cache")
    assert db.read_bytes() == before
    assert sorted(p.name for p in tiny.iterdir() if p.name.startswith("my.db")) == ["my.db"]
    with ReplyCache(tiny / "fresh.sqlite"):  # a new file, and then its own, are fine
        pass
    with ReplyCache(tiny / "fresh.sqlite"):
        pass


def test_a_cache_created_and_left_empty_is_removed(tmp_path):
    from ragmeter.llm import ChatReply, ReplyCache

    with ReplyCache(tmp_path / "new.sqlite"):
        pass  # a run that failed before its first reply
    assert list(tmp_path.iterdir()) == []
    with ReplyCache(tmp_path / "used.sqlite") as cache:
        cache.put("k", ChatReply("hello"))
    with ReplyCache(tmp_path / "used.sqlite"):
        pass
    assert (tmp_path / "used.sqlite").is_file()
    (tmp_path / "mine.sqlite").write_bytes(b"")  # an empty file of the user's stays
    with ReplyCache(tmp_path / "mine.sqlite"):
        pass
    assert (tmp_path / "mine.sqlite").exists()


def test_a_failed_audit_leaves_no_empty_cache(tiny):
    args = ["questions", "audit", str(tiny / "q.jsonl"), "--corpus", str(tiny / "docs")]
    args += ["--model", "openai:x", "--option", "base_url=http://127.0.0.1:9"]
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert "unreachable" in result.stderr
    assert not [p.name for p in tiny.iterdir() if "sqlite" in p.name]


def test_a_copy_that_lost_its_times_is_still_ours_but_an_edit_is_not(tiny):
    out = tiny / "results"
    assert search(tiny, out).exit_code == 0
    for p in out.iterdir():
        if p.is_file():
            os.utime(p, ns=(1, 1))  # as after `cp -r` or a checkout
    assert search(tiny, out).exit_code == 0
    summary = out / "summary.json"
    text = summary.read_text()
    summary.write_text(text.replace("0", "1", 1))  # same size, other content
    one_line_error(search(tiny, out), "summary.json", "did not write")


# --- the sweep: a user's file wherever a writer writes or cleans -----------------------------

BIG = (17 << 20) // 64  # lines of 64 bytes: a file over 16 MiB


def _big_text():
    return "".join(f"{i:063d}\n" for i in range(BIG))


def _aged(path, days=2):
    t = time.time() - days * 86400
    os.utime(path, (t, t), follow_symlinks=False)


def _check_args(res, md):
    return ["check", str(res), str(res), "--system", "whole", "--rounds", "200",
            "--margin", "5", "--markdown", str(md)]  # fmt: skip


def _evaluate(t):
    """``evaluate`` of the search's own run file into ``ev`` (exported once)."""
    run, qrels = t / "run.whole.txt", t / "qrels.whole.txt"
    if not run.exists():
        args = ["export", str(t / "res"), "--run", str(t / "run.txt")]
        assert runner.invoke(app, [*args, "--qrels", str(t / "qrels.txt")]).exit_code == 0
    args = ["evaluate", str(run), "--qrels", str(qrels), "--rounds", "200", "--out", str(t / "ev")]
    return runner.invoke(app, args)


def _evaluated(t):
    if not (t / "ev").exists():
        assert _evaluate(t).exit_code == 0
    return t / "ev"


# writer: (the path it writes, the command); ``res`` is a results directory already there
WRITERS = {
    "search --out": (lambda t: t / "res", lambda t: search(t, t / "res")),
    "evaluate --out": (_evaluated, _evaluate),
    "report": (
        lambda t: t / "res" / "report.html",
        lambda t: runner.invoke(app, ["report", str(t / "res")]),
    ),
    "report --out": (
        lambda t: t / "page.html",
        lambda t: runner.invoke(app, ["report", str(t / "res"), "--out", str(t / "page.html")]),
    ),
    "export --run": (
        lambda t: t / "run.whole.txt",
        lambda t: runner.invoke(app, ["export", str(t / "res"), "--run", str(t / "run.txt")]),
    ),
    "check --markdown": (
        lambda t: t / "check.md",
        lambda t: runner.invoke(app, _check_args(t / "res", t / "check.md")),
    ),
}


def _report_extra():
    try:
        from ragmeter.report.charts import _altair

        _altair()
    except Exception:  # noqa: BLE001 - any missing piece of the extra
        return False
    return True


def _writer(tiny, which):
    if which.startswith("report") and not _report_extra():
        pytest.skip("the report extra is not installed")
    assert search(tiny, tiny / "res").exit_code == 0
    target, run = WRITERS[which]
    return target(tiny), lambda: run(tiny)


def _mine(target):
    """A file of the user's where the writer writes (inside the folder, for a folder)."""
    return target / "notes.txt" if target.is_dir() else target


@pytest.mark.parametrize("which", sorted(WRITERS))
def test_a_user_file_at_the_name_is_kept_and_refused(tiny, which):
    target, run = _writer(tiny, which)
    mine = _mine(target)
    mine.write_text("mine, by hand")
    one_line_error(run(), mine.name if mine.name == "notes.txt" else "")
    assert mine.read_text() == "mine, by hand"


@pytest.mark.parametrize("which", sorted(WRITERS))
def test_dot_name_siblings_of_a_users_are_never_cleaned(tiny, which):
    target, run = _writer(tiny, which)
    siblings = [target.with_name(f".{target.name}.{end}") for end in ("old-notes", "tmp-draft")]
    for path in siblings:
        path.write_text("mine")
        _aged(path)
    folder = target.with_name(f".{target.name}.old-2024")
    folder.mkdir()
    (folder / "thesis.txt").write_text("mine")
    _aged(folder)
    before = snapshot(tiny)
    result = run()
    assert result.exit_code == 0, result.output
    after = snapshot(tiny)
    for path in [*siblings, folder / "thesis.txt"]:
        key = path.relative_to(tiny).as_posix()
        assert after[key] == before[key], key


@pytest.mark.parametrize("which", sorted(WRITERS))
def test_a_manifest_linked_from_another_folder_is_no_manifest(tiny, which):
    # regression: a manifest that is a symlink to another folder's made that folder's
    # records count here, so a user's copy of a recorded file was overwritten or deleted
    target, run = _writer(tiny, which)
    mine = _mine(target)
    mine.write_text("mine, a copy")
    elsewhere = tiny / "elsewhere"
    atomic_write_text(elsewhere / mine.name, "mine, a copy")
    if target.is_dir():  # every file of the folder recorded over there, as it is here
        for path in target.iterdir():
            if path.is_file() and path.name != MANIFEST:
                atomic_write_text(elsewhere / path.name, path.read_text())
    manifest = mine.parent / MANIFEST
    manifest.unlink(missing_ok=True)
    manifest.symlink_to(elsewhere / MANIFEST)
    before = snapshot(tiny)
    one_line_error(run())
    assert snapshot(tiny) == before


@pytest.mark.parametrize("which", sorted(WRITERS))
def test_a_manifest_hard_linked_from_another_folder_is_no_manifest(tiny, which):
    target, run = _writer(tiny, which)
    mine = _mine(target)
    mine.write_text("mine, a copy")
    elsewhere = tiny / "elsewhere"
    atomic_write_text(elsewhere / mine.name, "mine, a copy")
    if target.is_dir():
        for path in target.iterdir():
            if path.is_file() and path.name != MANIFEST:
                atomic_write_text(elsewhere / path.name, path.read_text())
    manifest = mine.parent / MANIFEST
    manifest.unlink(missing_ok=True)
    os.link(elsewhere / MANIFEST, manifest)
    before = snapshot(tiny)
    one_line_error(run())
    assert snapshot(tiny) == before


@pytest.mark.parametrize("which", sorted(WRITERS))
def test_an_edited_big_file_is_never_overwritten(tiny, which):
    # regression: over 16 MiB only the size and the first and last MiB were hashed, so a
    # file ragmeter wrote and a person then edited in the middle was overwritten
    target, run = _writer(tiny, which)
    big = target / "scores.csv" if target.is_dir() else target
    text = _big_text()
    atomic_write_text(big, text)  # written (and recorded) by ragmeter
    middle = len(text) // 2
    big.write_text(text[:middle] + "X" + text[middle + 1 :])  # then edited by hand
    before = snapshot(tiny)
    one_line_error(run(), big.name)
    assert snapshot(tiny) == before


def test_a_forged_entry_never_makes_a_users_file_ours(tiny):
    # regression: an entry with the size and SHA-256 of a user's file in a results
    # directory made `search --out` delete it and `report --out` overwrite it
    out = tiny / "res"
    assert search(tiny, out).exit_code == 0
    notes = out / "notes.txt"
    notes.write_text("my notes")
    manifest = json.loads((out / MANIFEST).read_text())
    manifest["files"]["notes.txt"] = [notes.stat().st_size, sha256(notes.read_bytes())]
    manifest["files"]["../q.jsonl"] = manifest["files"]["notes.txt"]
    (out / MANIFEST).write_text(json.dumps(manifest))
    before = snapshot(tiny)
    one_line_error(search(tiny, out), "notes.txt", "did not write")
    if _report_extra():
        result = runner.invoke(app, ["report", str(out), "--out", str(notes)])
        one_line_error(result, "notes.txt")
    assert snapshot(tiny) == before


def test_a_report_under_another_name_inside_the_results_is_refused(tiny):
    out = tiny / "res"
    assert search(tiny, out).exit_code == 0
    before = snapshot(tiny)
    for bad in (out / "other.html", out / "notes.txt"):
        with pytest.raises(InputError, match="writes only its own files directly"):
            check_output_file(bad, "ragmeter report")
    assert snapshot(tiny) == before
    check_output_file(out / "report.html", "ragmeter report")  # its own name: fine


def test_a_fifo_at_the_manifests_name_is_no_manifest_and_never_blocks(tmp_path):
    os.mkfifo(tmp_path / MANIFEST)
    atomic_write_text(tmp_path / "a.txt", "x")  # neither blocks nor records
    assert (tmp_path / "a.txt").read_text() == "x"
    assert not is_recorded(tmp_path / "a.txt")
    assert read_manifest(tmp_path) == {}


def test_a_symlinked_out_folder_is_refused(tiny):
    assert search(tiny, tiny / "real").exit_code == 0
    (tiny / "link").symlink_to(tiny / "real")
    before = snapshot(tiny)
    one_line_error(search(tiny, tiny / "link"), "symbolic link")
    assert snapshot(tiny) == before


def sha256(data):
    import hashlib

    return hashlib.sha256(data).hexdigest()


# --- a full disk, a file-size limit ----------------------------------------------------------


def test_a_full_disk_while_saving_is_one_line_and_leaves_nothing(tiny, monkeypatch):
    import errno

    from ragmeter.runs import saving

    def full(path, rows):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(saving, "_write_lines", full)
    before = snapshot(tiny)
    line = one_line_error(search(tiny, tiny / "res"), "res", "No space left on device")
    assert "Traceback" not in line
    assert snapshot(tiny) == before  # no results, no temporary, no manifest left


def test_a_full_disk_while_writing_a_file_keeps_the_old_one(tiny, monkeypatch):
    import errno

    from ragmeter.files import outputs

    out = tiny / "res"
    assert search(tiny, out).exit_code == 0
    runner.invoke(app, ["export", str(out), "--run", str(tiny / "run.txt")])
    before = snapshot(tiny)

    def full(tmp, text):
        tmp.write_text(text[:10])  # half of it, then the disk is full
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(outputs, "_write_new", full)
    result = runner.invoke(app, ["export", str(out), "--run", str(tiny / "run.txt")])
    one_line_error(result, "run.whole.txt", "No space left on device")
    assert snapshot(tiny) == before


FSIZE_SEARCH = """
import resource, sys
from ragmeter.cli import app
resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[1]), resource.RLIM_INFINITY))
sys.argv = ["ragmeter", *sys.argv[2:]]
app()
"""


def _search_under_limit(tiny, limit, out):
    args = ["search", "--corpus", str(tiny / "docs"), "--testset", str(tiny / "q.jsonl")]
    args += ["--strategies", "whole", "--ks", "1", "--rounds", "200", "--out", str(out)]
    src = str(Path(ragmeter.__file__).parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
    env.update(RAGMETER_HISTORY="off", COLUMNS="200")
    return subprocess.run(
        [sys.executable, "-c", FSIZE_SEARCH, str(limit), *args],
        capture_output=True, text=True, env=env, cwd=tiny,
    )  # fmt: skip


def test_a_file_size_limit_keeps_the_results_and_warns_about_the_report(tiny):
    # regression: under `ulimit -f` the report's write raised OSError [Errno 27] File too
    # large with a traceback and exit 1, after the results were written
    if not _report_extra():
        pytest.skip("the report extra is not installed")
    done = _search_under_limit(tiny, 256 << 10, tiny / "res")
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    warnings = [line for line in done.stderr.splitlines() if "warning" in line]
    assert len(warnings) == 1, done.stderr
    assert "report.html" in warnings[0] and "File too large" in warnings[0]
    assert is_results_dir(tiny / "res") and Results(tiny / "res").systems == ["whole"]
    assert not (tiny / "res" / "report.html").exists()
    assert not [p for p in (tiny / "res").iterdir() if p.name.startswith(TMP_PREFIX)]


def test_a_file_size_limit_on_the_results_is_one_line_and_leaves_nothing(tiny):
    before = snapshot(tiny)
    done = _search_under_limit(tiny, 1000, tiny / "res")
    assert done.returncode == 2, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "res" in lines[0] and "File too large" in lines[0], done.stderr
    assert snapshot(tiny) == before


# --- the one folder writer: a run written back from the history ------------------------------


def test_a_history_run_is_written_back_through_the_folder_writer(tmp_path):
    from ragmeter.history.baseline import materialise
    from ragmeter.history.store import HistoryStore

    files = {
        "scores.json": b'{"systems": ["s"], "questions": ["q"], "metrics": ["m"]}',
        "meta.json": b"{}",
        "summary.json": b'{"metric": "m", "seed": 1, "rounds": 100}',
        "answers/meta.json": b"{}",
    }
    with HistoryStore(tmp_path / "hist") as store:
        good = store.add(files, command="search", results="r", git={})
        back = materialise(store, good.id, tmp_path / "back")
        assert (back / "answers" / "meta.json").read_bytes() == b"{}"
        assert is_recorded(back / "scores.json") and is_recorded(back / "answers" / "meta.json")
        assert sorted(p.name for p in tmp_path.iterdir()) == ["back", "hist"]  # no temporary
        # regression: a recorded name was joined to the folder as it was, so `../x` (or an
        # absolute path) wrote outside it
        for name in ("../outside.txt", "/tmp/outside.txt", "answers/../../outside.txt"):
            bad = store.add(files | {name: b"x"}, command="search", results="r", git={})
            with pytest.raises(InputError, match="not a file name inside a run"):
                materialise(store, bad.id, tmp_path / f"run{bad.id}")
            assert not (tmp_path / f"run{bad.id}").exists()
        assert not (tmp_path / "outside.txt").exists()


def test_a_handwritten_manifest_beside_a_users_file_never_licenses_overwriting_it(tiny):
    # regression: a regular ./.ragmeter-manifest.json recording notes.html's size and
    # SHA-256 let `report res --out notes.html` overwrite the user's file
    if not _report_extra():
        pytest.skip("the report extra is not installed")
    out = tiny / "res"
    assert search(tiny, out).exit_code == 0
    notes = tiny / "notes.html"
    notes.write_text("<p>my notes</p>")
    stamp = [notes.stat().st_size, sha256(notes.read_bytes())]
    for entry in (stamp, [*stamp, "0" * 64]):  # unsealed, or with a seal made up
        (tiny / MANIFEST).write_text(
            json.dumps({"format": "ragmeter-manifest", "files": {"notes.html": entry}})
        )
        before = snapshot(tiny)
        result = runner.invoke(app, ["report", str(out), "--out", str(notes)])
        one_line_error(result, "notes.html")
        assert snapshot(tiny) == before
    # ragmeter's own report there is re-written, run after run
    (tiny / MANIFEST).unlink()
    mine = tiny / "mine.html"
    for _ in range(2):
        result = runner.invoke(app, ["report", str(out), "--out", str(mine)])
        assert result.exit_code == 0, result.output
    assert notes.read_text() == "<p>my notes</p>"


def test_write_output_refuses_a_users_file_and_replaces_only_its_own(tmp_path):
    mine = tmp_path / "notes.md"
    mine.write_text("the user's notes")
    with pytest.raises(InputError, match=r"notes\.md"):
        write_output(mine, "a table", "table")
    assert mine.read_text() == "the user's notes"
    table = write_output(tmp_path / "table.md", "a table", "table")  # a free name
    assert table.read_text() == "a table" and is_recorded(table)
    write_output(table, "a new table", "table")  # ragmeter's own, as it wrote it
    assert table.read_text() == "a new table"
    table.write_text("edited by hand")  # no longer as recorded: the user's now
    with pytest.raises(InputError, match=r"table\.md"):
        write_output(table, "a third table", "table")
    assert table.read_text() == "edited by hand"

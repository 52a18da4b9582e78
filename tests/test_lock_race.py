"""Two writers on one results directory at once: nothing is lost, nothing crashes."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from ragmeter.inputs.config import Config
from ragmeter.runs.pipeline import run_search
from ragmeter.runs.results import Results, save_results

CHILD = textwrap.dedent(
    """
    import fcntl, sys, time
    from pathlib import Path
    import ragmeter.answers.run as run
    from ragmeter.llm.client import Completion

    results, system, other, go = sys.argv[1], sys.argv[2], sys.argv[3], Path(sys.argv[4])
    events = go.parent

    class Echo:
        kind, model, base_url, max_concurrency = "test", "echo", None, None
        def complete(self, request, timeout_s):
            return Completion("an answer", tokens_in=1, tokens_out=1)
        def close(self):
            pass

    # Events, not timing: a run that finds the lock taken says so ("blocked-NAME").
    flock = fcntl.flock
    def watched_flock(fd, op):
        try:
            return flock(fd, op)
        except BlockingIOError:
            (events / f"blocked-{system}").touch()
            raise
    fcntl.flock = watched_flock

    # Between reading reader.jsonl and writing it back, wait until the other run has
    # met the lock (or has finished). With the lock, it is waiting for us; without it,
    # both runs sit here at once and overwrite each other's answers.
    write = run.write_answers
    def held_write(folder, answers):
        deadline = time.monotonic() + 120  # only a broken lock waits this long
        while not any((events / f"{e}-{other}").exists() for e in ("blocked", "done")):
            if time.monotonic() > deadline:
                break
            time.sleep(0.01)
        write(folder, answers)
    run.write_answers = held_write

    while not go.exists():
        time.sleep(0.01)
    try:
        run.answer_questions(results, Echo(), k=1, systems=system, cache=":memory:")
    finally:
        (events / f"done-{system}").touch()
    print("done", system)
    """
)


def make_results(root: Path) -> Path:
    docs = root / "docs"
    docs.mkdir()
    texts = {
        "cats.md": "Cats sleep for sixteen hours a day. Cats purr when content.",
        "dogs.md": "Dogs bark at strangers. A dog's nose has 300 million receptors.",
    }
    for name, text in texts.items():
        (docs / name).write_text(text)
    rows = [
        {"id": "q1", "question": "cats sleep", "answers": [{"text": "Cats sleep for sixteen"}]},
        {"id": "q2", "question": "dog nose", "answers": [{"text": "300 million receptors"}]},
    ]
    (root / "q.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    cfg = Config(
        corpus=str(docs),
        testset=str(root / "q.jsonl"),
        strategies=("whole", "sentence"),
        ks=(1,),
        rounds=200,
    )
    return save_results(run_search(cfg), root / "results")


def env() -> dict[str, str]:
    src = str(Path(__file__).resolve().parents[1] / "src")
    return {**os.environ, "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}


def test_two_answer_runs_at_once_keep_both_answers(tmp_path):
    results = make_results(tmp_path)
    for attempt in range(2):
        events = tmp_path / f"events-{attempt}"
        events.mkdir()
        go = events / "go"
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", CHILD, str(results), system, other, str(go)],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=env(),
            )
            for system, other in (("whole", "sentence"), ("sentence", "whole"))
        ]
        go.touch()
        outs = [p.communicate(timeout=120) for p in procs]
        for p, (_out, err) in zip(procs, outs, strict=True):
            assert p.returncode == 0, err
        reader = [
            json.loads(line)
            for line in (results / "answers" / "reader.jsonl").read_text().splitlines()
        ]
        keys = {(r["system"], r["question"]) for r in reader}
        assert keys == {(s, q) for s in ("whole", "sentence") for q in ("q1", "q2")}
        merged = (results / "answers" / "answers.jsonl").read_text().splitlines()
        assert len(merged) == 4
        assert any(events.glob("blocked-*"))  # the runs did meet at the lock
        (results / "answers" / "reader.jsonl").unlink()  # the next attempt starts afresh


def test_two_searches_into_one_out_both_finish(tmp_path):
    make_results(tmp_path)
    out = tmp_path / "shared-out"
    args = [
        sys.executable,
        "-m",
        "ragmeter.cli",
        "search",
        "--corpus",
        str(tmp_path / "docs"),
        "--testset",
        str(tmp_path / "q.jsonl"),
        "--ks",
        "1",
        "--rounds",
        "200",
        "--out",
        str(out),
    ]
    procs = [
        subprocess.Popen(
            [*args, "--strategies", s],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env(),
        )
        for s in ("whole", "sentence")
    ]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        assert "Traceback" not in err
    assert Results(out).systems in (["whole"], ["sentence"])
    leftovers = [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]
    assert leftovers == []

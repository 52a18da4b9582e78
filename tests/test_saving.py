"""``ragmeter.runs.saving.save_results``: every file of a small run, written and read back; the
summary it is given; later stages kept only for the same systems and questions; the
config written without empty settings."""

from __future__ import annotations

import csv
import dataclasses
import json
import tomllib

import pytest

from ragmeter.comparison.summary import summarize
from ragmeter.errors import InputError
from ragmeter.runs.evaluate import evaluate_files
from ragmeter.runs.results import Results
from ragmeter.runs.saving import _toml_safe, save_results


@pytest.fixture()
def run(tmp_path):
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\nq2 0 d2 1\nq3 0 d3 1\n")
    (tmp_path / "a.run").write_text("q1 Q0 d1 1 2.0 a\nq2 Q0 d9 1 1.0 a\nq3 Q0 d3 1 1.0 a\n")
    (tmp_path / "b.run").write_text("q1 Q0 d4 1 2.0 b\nq2 Q0 d2 1 1.0 b\n")
    files = [tmp_path / "a.run", tmp_path / "b.run"]
    out = evaluate_files(tmp_path / "qrels.txt", files, ["recall@1"], rounds=200)
    return out.run


def test_every_file_holds_the_run(run, tmp_path):
    capped = dataclasses.replace(run.systems[1], k_cap=1)
    run.systems[1] = capped
    where = save_results(run, tmp_path / "out")
    meta = json.loads((where / "meta.json").read_text())
    assert {"ragmeter", "python", "numpy"} <= set(meta["versions"])
    assert [s.get("k_cap") for s in meta["systems"]] == [None, 1]
    assert "k_cap" not in meta["systems"][0]
    assert (meta["seed"], meta["rounds"], meta["metrics"]) == (1, 200, ["recall@1"])
    questions = [json.loads(x) for x in (where / "questions.jsonl").read_text().splitlines()]
    assert [q["id"] for q in questions] == ["q1", "q2", "q3"]
    rows = [json.loads(x) for x in (where / "runs.jsonl").read_text().splitlines()]
    assert [(r["system"], r["question"], [i["doc"] for i in r["items"]]) for r in rows] == [
        ("a", "q1", ["d1"]),
        ("a", "q2", ["d9"]),
        ("a", "q3", ["d3"]),
        ("b", "q1", ["d4"]),
        ("b", "q2", ["d2"]),
        ("b", "q3", []),
    ]
    scores = json.loads((where / "scores.json").read_text())
    assert scores["values"] == {
        "a": {"recall@1": [1.0, 0.0, 1.0]},
        "b": {"recall@1": [0.0, 1.0, 0.0]},
    }
    with (where / "scores.csv").open(newline="") as fh:
        table = list(csv.reader(fh))
    assert table[0] == ["system", "question", "recall@1"] and table[1] == ["a", "q1", "1.0"]
    back = Results(where)
    assert back.systems == ["a", "b"] and back.runs["b"]["q2"][0].doc == "d2"


def test_the_summary_given_is_the_one_saved(run, tmp_path):
    other = summarize({m: run.matrix(m) for m in run.metric_names}, ["a", "b"], "recall@1", 5, 300)
    where = save_results(run, tmp_path / "out", other)
    saved = json.loads((where / "summary.json").read_text())
    assert (saved["seed"], saved["rounds"]) == (5, 300)
    again = save_results(run, tmp_path / "own")
    mine = json.loads((again / "summary.json").read_text())
    assert (mine["seed"], mine["rounds"]) == (1, 200)


def test_later_stages_are_kept_for_the_same_systems_and_questions(run, tmp_path):
    where = save_results(run, tmp_path / "out")
    (where / "answers").mkdir()
    (where / "answers" / "hand.jsonl").write_text("typed by hand\n")
    save_results(run, where, overwrite=True)
    assert (where / "answers" / "hand.jsonl").read_text() == "typed by hand\n"
    fewer = dataclasses.replace(run, systems=run.systems[:1])
    with pytest.raises(InputError, match="holds answers from a run with other systems"):
        save_results(fewer, where, overwrite=True)
    testset = dataclasses.replace(run.testset, questions=run.testset.questions[:2])
    other_questions = dataclasses.replace(
        run,
        testset=testset,
        systems=[
            dataclasses.replace(
                s, items=s.items[:2], scores={m: v[:2] for m, v in s.scores.items()}
            )
            for s in run.systems
        ],
    )
    with pytest.raises(InputError, match="holds answers from a run with other systems"):
        save_results(other_questions, where, overwrite=True)
    assert (where / "answers" / "hand.jsonl").is_file()


def test_config_is_written_without_empty_settings(run, tmp_path):
    assert _toml_safe({"a": None, "b": [], "c": {}, "d": {"e": None, "f": 1}, "i": 0, "j": ""}) == {
        "d": {"f": 1},
        "i": 0,
        "j": "",
    }
    where = save_results(run, tmp_path / "out")
    config = tomllib.loads((where / "config.toml").read_text())
    assert config["stats"]["rounds"] == 200 and "corpus" in config


def test_overwrite_must_be_asked_for(run, tmp_path):
    where = save_results(run, tmp_path / "out")
    with pytest.raises(InputError):
        save_results(run, where)
    assert save_results(run, where, overwrite=True) == where


def test_existing_results_are_refused_before_waiting_for_the_lock(run, tmp_path):
    import threading

    from ragmeter.files.outputs import results_lock

    where = save_results(run, tmp_path / "out")
    held, done = threading.Event(), threading.Event()

    def hold() -> None:
        with results_lock(where):
            held.set()
            done.wait(120)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert held.wait(120)
        with pytest.raises(InputError, match="already holds ragmeter results"):
            save_results(run, where)  # at once: no overwrite asked, whoever holds the lock
    finally:
        done.set()
        holder.join()

"""A system is its strategy and retriever, not its display name: adding a retriever to a
config renames every system (``sent-60`` becomes ``sent-60/bm25``), and the run history's
trend, ``ragmeter check`` and ``--baseline-from-history`` still find it; ``--baseline-system``
covers a real rename."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from ragmeter.cli import app
from ragmeter.cli.app import example_dir
from ragmeter.errors import InputError
from ragmeter.history.gate import check_noninferior
from ragmeter.history.store import HistoryStore, record
from ragmeter.history.systems import match_system, pair_systems, system_identity
from ragmeter.history.trend import trend

runner = CliRunner()

FIXED60 = {"name": "sent-60", "kind": "fixed", "size": 60, "overlap": 0}
BM25 = {"name": "bm25", "kind": "bm25", "k1": 1.5, "b": 0.75, "library": "bm25s 0.2.1"}
B03 = {"name": "bm25-b03", "kind": "bm25", "k1": 1.5, "b": 0.3, "library": "bm25s 0.2.1"}
MEASURED = {"corpus": "c1", "testset": "t1", "relevant_grade": 2, "depth": 10}
N = 60
IDS = [f"q{i}" for i in range(N)]
BASE = (np.arange(N) % 3 != 0).astype(float)


def _entry(name: str, strategy: dict, retriever: dict) -> dict:
    return {"name": name, "strategy": strategy, "retriever": retriever, "items": 10}


def _results(path: Path, systems: dict[str, tuple[dict, dict, np.ndarray]]) -> Path:
    """A results directory whose meta.json records each system's strategy and retriever."""
    path.mkdir(parents=True)
    (path / "scores.json").write_text(
        json.dumps(
            {
                "systems": list(systems),
                "questions": IDS,
                "metrics": ["recall@5"],
                "values": {s: {"recall@5": v[2].tolist()} for s, v in systems.items()},
            }
        )
    )
    meta = {
        "seed": 1,
        "rounds": 1000,
        "measurement": MEASURED,
        "systems": [_entry(s, st, r) for s, (st, r, _) in systems.items()],
    }
    (path / "meta.json").write_text(json.dumps(meta))
    (path / "summary.json").write_text(
        json.dumps({"metric": "recall@5", "seed": 1, "rounds": 1000, "confidence": 0.95})
    )
    (path / "config.toml").write_text("[stats]\nrounds = 1000\n")
    (path / "questions.jsonl").write_text(
        "".join(json.dumps({"id": q, "question": f"{q}?", "answers": []}) + "\n" for q in IDS)
    )
    return path


def _worse(by: int) -> np.ndarray:
    out = BASE.copy()
    out[np.flatnonzero(BASE == 1)[:by]] = 0.0
    return out


# --- the one identity rule ---------------------------------------------------------------


def test_identity_is_the_settings_not_the_names_nor_the_library_version():
    a = _entry("sent-60", FIXED60, BM25)
    renamed = _entry("sent-60/bm25", {**FIXED60, "name": "x"}, {**BM25, "library": "bm25s 9"})
    assert system_identity(a) == system_identity(renamed)
    assert system_identity(a) != system_identity(_entry("sent-60/bm25-b03", FIXED60, B03))
    assert system_identity(a) != system_identity(_entry("s", {**FIXED60, "size": 80}, BM25))
    assert system_identity({"name": "old"}) is None  # not recorded: matched by name only
    dense = {"name": "d", "kind": "dense", "model": "m", "cache": "/a", "device": "cpu"}
    moved = {**dense, "cache": "/b", "device": "cuda", "hnsw": {"M": 16, "recall_vs_exact": 0.9}}
    assert system_identity(_entry("x", FIXED60, {**dense, "hnsw": {"M": 16}})) == (
        system_identity(_entry("y", FIXED60, moved))
    )
    assert system_identity(_entry("x", FIXED60, dense)) != system_identity(
        _entry("x", FIXED60, {**dense, "model": "other"})
    )


def test_a_system_is_found_by_name_first_then_by_identity():
    old = {"systems": [_entry("sent-60", FIXED60, BM25)]}
    new = {
        "systems": [
            _entry("sent-60/bm25", FIXED60, BM25),
            _entry("sent-60/bm25-b03", FIXED60, B03),
        ]
    }
    held = ["sent-60/bm25", "sent-60/bm25-b03"]
    assert match_system("sent-60", old, new, held) == "sent-60/bm25"
    assert match_system("sent-60/bm25", new, old, ["sent-60"]) == "sent-60"
    assert match_system("sent-60/bm25-b03", new, old, ["sent-60"]) is None
    # two systems with the same settings: the one made of the same-named parts
    twin = {**BM25, "name": "bm25-copy"}
    both = {"systems": [new["systems"][0], _entry("sent-60/bm25-copy", FIXED60, twin)]}
    assert match_system("sent-60", old, both, ["sent-60/bm25", "sent-60/bm25-copy"]) == (
        "sent-60/bm25"
    )
    neither = {"systems": [_entry("a", FIXED60, {**BM25, "name": "x"}), _entry("b", FIXED60, twin)]}
    assert match_system("sent-60", old, neither, ["a", "b"]) is None  # ambiguous: none


def test_pairing_names_what_to_give_when_no_system_matches():
    b = ({"systems": [_entry("sent-60", FIXED60, BM25)]}, ["sent-60"], "base")
    c = ({"systems": [_entry("sent-60/bm25-b03", FIXED60, B03)]}, ["sent-60/bm25-b03"], "cand")
    with pytest.raises(InputError, match=r"give --baseline-system NAME"):
        pair_systems("sent-60/bm25-b03", b, c)
    with pytest.raises(InputError, match=r"--baseline-system sent-60"):
        pair_systems("sent-60", b, c)
    assert pair_systems("sent-60/bm25-b03", b, c, "sent-60") == ("sent-60", "sent-60/bm25-b03")
    with pytest.raises(InputError, match=r"no system 'nope' in the baseline run"):
        pair_systems("sent-60/bm25-b03", b, c, "nope")


# --- the gate on two results directories ------------------------------------------------------


@pytest.fixture()
def renamed(tmp_path):
    """A baseline with one retriever; a candidate with a second retriever added (so every
    system is renamed), its bm25 system 10 questions worse."""
    base = _results(tmp_path / "base", {"sent-60": (FIXED60, BM25, BASE)})
    cand = _results(
        tmp_path / "cand",
        {
            "sent-60/bm25": (FIXED60, BM25, _worse(10)),
            "sent-60/bm25-b03": (FIXED60, B03, BASE),
        },
    )
    return base, cand


@pytest.mark.parametrize("name", ["sent-60", "sent-60/bm25"])
def test_check_pairs_a_system_renamed_by_an_added_retriever(renamed, name):
    base, cand = renamed
    res = check_noninferior(base, cand, name, "recall@5", margin=0.02)
    assert not res.passed and res.losses == 10 and res.wins == 0
    assert res.system == "sent-60/bm25" and res.baseline_system == "sent-60"
    assert res.line.startswith("FAIL recall@5 sent-60/bm25 (baseline: sent-60): ")
    out = runner.invoke(app, ["check", str(base), str(cand), "--system", name, "--margin", "2"])
    assert out.exit_code == 1, out.output
    assert "FAIL recall@5 sent-60/bm25 (baseline: sent-60)" in out.output


def test_baseline_system_covers_a_real_rename(renamed):
    base, cand = renamed
    # b03 has other settings: not the same system, so never paired on its own
    refused = runner.invoke(app, ["check", str(base), str(cand), "--system", "sent-60/bm25-b03"])
    assert refused.exit_code == 2 and "--baseline-system" in refused.output
    told = runner.invoke(
        app,
        ["check", str(base), str(cand), "--system", "sent-60/bm25-b03"]
        + ["--baseline-system", "sent-60", "--margin", "7"],
    )
    assert told.exit_code == 0, told.output
    assert "PASS recall@5 sent-60/bm25-b03 (baseline: sent-60)" in told.output


# --- the history: trend and --baseline-from-history --------------------------------------


def _git(repo: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.org",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.org",
    }
    done = subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.fixture()
def history(tmp_path, renamed):
    """Two recorded runs on main: one retriever, then a second added (the candidate)."""
    base, cand = renamed
    repo = tmp_path
    _git(repo, "init", "-q", "-b", "main")
    (repo / "NOTES").write_text("1\n")
    _git(repo, "add", "NOTES")
    _git(repo, "commit", "-q", "-m", "one retriever")
    first = _git(repo, "rev-parse", "HEAD")
    record(base, history=tmp_path / "hist", git_folder=repo)
    (repo / "NOTES").write_text("2\n")
    _git(repo, "commit", "-q", "-am", "a second retriever")
    record(cand, history=tmp_path / "hist", git_folder=repo)
    return tmp_path / "hist", base, cand, first


@pytest.mark.parametrize("name", ["sent-60", "sent-60/bm25"])
def test_the_trend_goes_on_across_the_rename(history, name):
    folder, *_ = history
    with HistoryStore(folder, create=False) as store:
        found = trend(store, name, "recall@5")
    first, second = found.points
    assert (first.name, second.name) == ("sent-60", "sent-60/bm25")
    assert second.renamed_from == "sent-60" and first.renamed_from is None
    assert second.change is not None and second.change.direction == "worse"
    assert second.change.row.losses == 10
    points = found.to_dict()["points"]
    assert [(p["system"], p["renamed_from"]) for p in points] == [
        ("sent-60", None),
        ("sent-60/bm25", "sent-60"),
    ]
    out = runner.invoke(app, ["history", "trend", "--system", name, "--history", str(folder)])
    assert out.exit_code == 0, out.output
    assert "named sent-60/bm25 here (was sent-60)" in " ".join(out.output.split())
    assert "first run of this measurement" not in out.output
    listed = runner.invoke(app, ["history", "list", "--system", name, "--history", str(folder)])
    assert listed.exit_code == 0 and "No recorded run matches" not in listed.output
    rows = [line.split()[1] for line in listed.output.splitlines() if "│ record" in line]
    assert rows == ["1", "2"], listed.output


@pytest.mark.parametrize("ref", ["1", "#1", "latest", "latest:main", "COMMIT"])
@pytest.mark.parametrize("name", ["sent-60", "sent-60/bm25"])
def test_the_gate_finds_its_baseline_across_the_rename(history, ref, name):
    folder, base, cand, first = history
    ref = first[:8] if ref == "COMMIT" else ref
    args = ["check", str(cand), "--baseline-from-history", ref, "--system", name]
    out = runner.invoke(app, [*args, "--history", str(folder), "--margin", "2"])
    assert out.exit_code == 1, out.output  # 10 questions worse: a real comparison, not exit 2
    assert "Baseline: history run 1" in out.output
    assert "FAIL recall@5 sent-60/bm25 (baseline: sent-60)" in out.output


def test_the_gate_with_baseline_system_from_history(history):
    folder, base, cand, _ = history
    args = ["check", str(cand), "--baseline-from-history", "latest:main"]
    args += ["--system", "sent-60/bm25-b03", "--history", str(folder), "--margin", "7"]
    refused = runner.invoke(app, args)
    assert refused.exit_code == 2 and "--baseline-system" in refused.output
    told = runner.invoke(app, [*args, "--baseline-system", "sent-60"])
    assert told.exit_code == 0, told.output
    assert "PASS recall@5 sent-60/bm25-b03 (baseline: sent-60)" in told.output


# --- a real config: adding a retriever ------------------------------------------------------

CONFIG = """\
[corpus]
path = "{posts}"
[testset]
path = "{questions}"
[search]
strategies = ["sent-60"]
retrievers = {retrievers}
[stats]
rounds = 300
[[strategy]]
name = "sent-60"
kind = "fixed"
size = 60
{more}"""
MORE = """\
[[retriever]]
name = "bm25-b03"
kind = "bm25"
b = 0.3
"""


def test_adding_a_retriever_keeps_the_trend_and_the_gate(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RAGMETER_HISTORY", raising=False)
    ex = example_dir()
    config = tmp_path / "ragmeter.toml"

    def search(retrievers: str, out: str) -> None:
        more = MORE if "b03" in retrievers else ""
        paths = {"posts": ex / "posts", "questions": ex / "questions.jsonl"}
        config.write_text(CONFIG.format(**paths, retrievers=retrievers, more=more))
        done = runner.invoke(app, ["-q", "search", "-o", out])
        assert done.exit_code == 0, done.output

    search('["bm25"]', "r1")
    search('["bm25", "bm25-b03"]', "r2")
    with HistoryStore(tmp_path / ".ragmeter", create=False) as store:
        assert [r.systems for r in store.runs()] == [
            ("sent-60",),
            ("sent-60/bm25", "sent-60/bm25-b03"),
        ]
    for name in ("sent-60", "sent-60/bm25"):
        out = runner.invoke(app, ["history", "trend", "--system", name])
        assert out.exit_code == 0, out.output
        assert "named sent-60/bm25 here (was sent-60)" in " ".join(out.output.split())
        gate = runner.invoke(
            app,
            ["check", "r2", "--baseline-from-history", "latest:", "--system", name]
            + ["--margin", "3"],
        )
        assert gate.exit_code == 0, gate.output  # the same system, unchanged
        assert "Baseline: history run 1" in gate.output
        assert "PASS recall@5 sent-60/bm25 (baseline: sent-60)" in gate.output


def test_two_baseline_systems_matching_a_renamed_system_are_ambiguous_not_missing():
    # regression: two baseline systems with the renamed system's settings said "no system"
    twin = {**BM25, "name": "bm25-copy"}
    b_meta = {"systems": [_entry("a", FIXED60, {**BM25, "name": "x"}), _entry("b", FIXED60, twin)]}
    c_meta = {"systems": [_entry("sent-60/bm25", FIXED60, BM25)]}
    b, c = (b_meta, ["a", "b"], "base"), (c_meta, ["sent-60/bm25"], "cand")
    with pytest.raises(InputError) as err:
        pair_systems("sent-60/bm25", b, c)
    message = str(err.value)
    assert "ambiguous" in message and "a, b" in message and "--baseline-system" in message
    assert "no system" not in message
    assert pair_systems("sent-60/bm25", b, c, "b") == ("b", "sent-60/bm25")


def test_a_read_only_history_file_in_a_writable_folder_blames_the_file(tmp_path, monkeypatch):
    # regression: the message said the (writable) folder was read-only
    from ragmeter.errors import CacheError
    from ragmeter.history import integrity

    path = tmp_path / "history.sqlite"
    path.write_bytes(b"")
    real = os.access
    monkeypatch.setattr(
        integrity.os, "access", lambda p, mode: False if Path(p) == path else real(p, mode)
    )
    message = str(integrity._open_error(path, CacheError("attempt to write a readonly database")))
    assert "the file is read-only" in message and f"{tmp_path} is read-only" not in message
    monkeypatch.setattr(integrity.os, "access", lambda p, mode: False)  # the folder too
    message = str(integrity._open_error(path, CacheError("attempt to write a readonly database")))
    assert f"{tmp_path} is read-only" in message

"""``ragmeter.cli.questions``: every option of ``questions generate``, ``audit`` and
``compare`` reaches the library as given (model settings, passages, seed, the results
directory's audit folder), and what they print is the user's text, not markup."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import ragmeter.questions
from ragmeter.cli import app, question_views
from ragmeter.cli.layout import Grid

runner = CliRunner()


@pytest.fixture()
def calls(monkeypatch):
    """The library functions the commands call, recording their arguments."""
    seen: dict[str, tuple] = {}

    def generate_file(*args, **kw):
        seen["generate"] = (args, kw)
        kw["progress"](1, 2, None)
        return _Generation()

    def audit_files(*args, **kw):
        seen["audit"] = (args, kw)
        kw["progress"](1, 1, None)
        from ragmeter.questions.audit import summarize_audit

        return [], summarize_audit([], rounds=100), [Path("[red]x[/red].jsonl")]

    def compare_files(*args, **kw):
        seen["compare"] = (args, kw)
        return "the comparison"

    monkeypatch.setattr(ragmeter.questions, "generate_file", generate_file)
    monkeypatch.setattr(ragmeter.questions, "audit_files", audit_files)
    monkeypatch.setattr(ragmeter.questions, "compare_files", compare_files)
    monkeypatch.setattr(question_views, "compare_grid", lambda result: Grid(result, ["-"]))
    return seen


class _Sized(list):
    skipped = 1


class _Generation:
    def __init__(self):
        self.testset = _Sized([0] * 4)
        self.calls, self.cache_hits = 3, 2

    def skip_reasons(self):
        return "([bold]too short[/bold] 1)"


def test_generate_passes_every_option_through(calls, tmp_path):
    got = runner.invoke(
        app,
        [
            "questions",
            "generate",
            "corpus",
            "-m",
            "ollama:x",
            "-o",
            str(tmp_path / "g.jsonl"),
            "--testset",
            "t.jsonl",
            "--sample",
            "7",
            "--limit",
            "5",
            "--cache",
            "c.sqlite",
            "--option",
            "temperature=0",
            "--engine",
            "ray",
            "--engine-address",
            "10.0.0.1:6379",
        ],
    )
    assert got.exit_code == 0, got.output
    assert "deprecated" not in got.stderr
    (corpus, out, settings), kw = calls["generate"]
    assert str(corpus) == "corpus" and out == tmp_path / "g.jsonl"
    assert (settings.spec, dict(settings.options), str(settings.cache)) == (
        "ollama:x",
        {"temperature": 0},
        "c.sqlite",
    )
    assert (settings.engine, settings.engine_address) == ("ray", "10.0.0.1:6379")
    assert (str(kw["testset_path"]), kw["sample"], kw["limit"], kw["seed"]) == ("t.jsonl", 7, 5, 1)
    # what it prints is text: a reason in brackets stays as it is
    line = " ".join(got.stdout.split())
    assert "4 questions -> " in line
    assert "1 skipped ([bold]too short[/bold] 1); 3 model calls, 2 cached" in line


def test_the_old_option_flag_still_works_after_the_new_one(calls):
    got = runner.invoke(
        app,
        [
            "questions",
            "generate",
            "corpus",
            "-m",
            "ollama:x",
            "--option",
            "a=1",
            "--model-option",
            "b=2",
        ],
    )
    assert got.exit_code == 0, got.output
    assert "--model-option is deprecated" in got.stderr
    assert list(calls["generate"][0][2].options.items()) == [("a", 1), ("b", 2)]


def test_audit_passes_the_model_checks_and_the_results_folder(calls, tmp_path):
    from ragmeter.inputs.config import Config
    from ragmeter.inputs.corpus import Document
    from ragmeter.inputs.testset import AnswerSpan, Question, TestSet
    from ragmeter.runs.pipeline import run_search
    from ragmeter.runs.results import save_results

    docs = [Document("d", "alpha beta")]
    qs = TestSet([Question("q", "alpha", (AnswerSpan("d", 0, 5, "alpha"),))])
    results = save_results(
        run_search(Config(strategies=("whole",), ks=(1,), rounds=100), docs, qs), tmp_path / "r"
    )
    got = runner.invoke(
        app,
        [
            "questions",
            "audit",
            "t.jsonl",
            "--corpus",
            "c",
            "--results",
            str(results),
            "-m",
            "ollama:x",
            "--engine",
            "ray",
            "--engine-address",
            "h:1",
            "--cache",
            "k.sqlite",
            "--checks",
            "context",
            "--seed",
            "3",
            "--rounds",
            "500",
        ],
    )
    assert got.exit_code == 0, got.output
    (testset, corpus, out, settings), kw = calls["audit"]
    assert (str(testset), str(corpus), out) == ("t.jsonl", "c", results / "audit")
    assert kw["name"] == "flags" and str(kw["cache_path"]) == "k.sqlite"
    assert (settings.spec, settings.engine, settings.engine_address) == ("ollama:x", "ray", "h:1")
    assert (kw["llm_checks"], kw["seed"], kw["rounds"]) == (("context",), 3, 500)
    assert "[red]x[/red].jsonl" in got.stdout  # a path is printed as it is
    assert "deprecated" not in got.stderr


def test_audit_without_a_model_or_checks_calls_no_model(calls):
    got = runner.invoke(app, ["questions", "audit", "t.jsonl", "--corpus", "c", "--checks", ""])
    assert got.exit_code == 0, got.output
    (_, _, out, settings), kw = calls["audit"]
    assert out is None and settings is None
    assert (kw["name"], kw["llm_checks"], kw["rounds"]) == ("audit", (), 10_000)


def test_compare_takes_a_then_b_and_the_seed(calls):
    got = runner.invoke(app, ["questions", "compare", "a.jsonl", "b.jsonl", "--seed", "4"])
    assert got.exit_code == 0, got.output
    (a, b, *_), kw = calls["compare"]
    assert (str(a), str(b), kw["seed"]) == ("a.jsonl", "b.jsonl", 4)
    bad = runner.invoke(app, ["questions", "compare", "a.jsonl", "b.jsonl", "--seed", "-1"])
    assert bad.exit_code == 2 and "--seed" in bad.stderr

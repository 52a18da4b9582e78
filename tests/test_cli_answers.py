"""``ragmeter.cli.answers``: what the answer-route commands pass on. ``answer`` and
``grade`` build each model's call settings from every option (cache, concurrency,
timeout, longest reply, engine and its address; defaults 4 calls, 120 s, 256 tokens),
``answer`` gives the reader the top 5 items by default, each command hands on its
limit, consoles and progress bar, ``grade`` records the run in the history,
``handgrade`` grades 20 answers, seed 1, flagged answers first by default, and
``judges`` and ``failures`` print on the command line's console."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragmeter.cli import answer_views, app, failure_views
from ragmeter.cli import answers as answers_cli
from ragmeter.cli.progress import calls_bar


@pytest.fixture
def seen(monkeypatch):
    """Every view the commands call, replaced by one that records its arguments."""
    calls: dict[str, tuple] = {}

    def record(name):
        def view(*args, **kwargs):
            calls[name] = (args, kwargs)

        return view

    for name in ("answer_command", "grade_command", "judges_command", "handgrade_command"):
        monkeypatch.setattr(answer_views, name, record(name))
    monkeypatch.setattr(failure_views, "failures_command", record("failures_command"))

    def record_run(*args, **kwargs):
        calls["record_run"] = (args, kwargs)
        return contextlib.nullcontext()

    monkeypatch.setattr(answers_cli, "record_run", record_run)
    monkeypatch.setattr(answers_cli, "refresh_report", record("refresh_report"))
    return calls


def _run(*argv: str) -> None:
    done = CliRunner().invoke(app, list(argv))
    assert done.exit_code == 0, done.output


def test_answer_defaults(seen, tmp_path):
    _run("answer", str(tmp_path), "--reader", "ollama:reader")
    (results, settings), kw = seen["answer_command"]
    assert results == tmp_path
    assert settings.spec == "ollama:reader" and settings.options == {}
    assert (settings.concurrency, settings.timeout_s, settings.max_tokens) == (4, 120.0, 256)
    assert (settings.cache, settings.engine, settings.engine_address) == (None, "local", "auto")
    assert kw["k"] == 5 and kw["limit"] is None and kw["systems"] is None
    assert kw["console"] is answers_cli.console and kw["progress_console"] is answers_cli.err
    assert kw["progress_bar"] is calls_bar


def test_answer_passes_every_option_on(seen, tmp_path):
    cache = tmp_path / "replies.sqlite"
    _run(
        "answer", str(tmp_path), "--reader", "ollama:reader", "--k", "3", "--limit", "2",
        "--systems", "a,b", "--concurrency", "2", "--timeout", "9.5", "--max-tokens", "99",
        "--cache", str(cache), "--option", "temperature=0.5", "--engine", "ray",
        "--engine-address", "head:6379",
    )  # fmt: skip
    (_, settings), kw = seen["answer_command"]
    assert settings.options == {"temperature": 0.5}
    assert (settings.concurrency, settings.timeout_s, settings.max_tokens) == (2, 9.5, 99)
    assert Path(settings.cache) == cache
    assert (settings.engine, settings.engine_address) == ("ray", "head:6379")
    assert (kw["k"], kw["limit"], kw["systems"]) == (3, 2, "a,b")


def test_grade_defaults_and_every_judge(seen, tmp_path):
    _run("grade", str(tmp_path), "--judge", "ollama:a", "--judge", "openai:b")
    (results, judges), kw = seen["grade_command"]
    assert results == tmp_path
    assert [j.spec for j in judges] == ["ollama:a", "openai:b"]
    for j in judges:
        assert j.options == {} and j.cache is None
        assert (j.concurrency, j.timeout_s, j.max_tokens) == (4, 120.0, 256)
    assert kw["accuracy_judge"] is None and kw["limit"] is None and kw["systems"] is None
    assert kw["console"] is answers_cli.console and kw["progress_console"] is answers_cli.err
    assert kw["progress_bar"] is calls_bar
    assert seen["record_run"] == ((tmp_path, "grade", None, False), {})
    assert seen["refresh_report"] == ((tmp_path,), {"accuracy_judge": None})


def test_grade_passes_every_option_on(seen, tmp_path):
    _run(
        "grade", str(tmp_path), "--judge", "ollama:a", "--accuracy-judge", "ollama:a",
        "--limit", "3", "--systems", "x", "--concurrency", "7", "--timeout", "3",
        "--max-tokens", "40", "--engine", "ray", "--engine-address", "h:1",
        "--option", "seed=4", "--no-history",
    )  # fmt: skip
    (_, [judge]), kw = seen["grade_command"]
    assert (judge.concurrency, judge.timeout_s, judge.max_tokens) == (7, 3.0, 40)
    assert (judge.engine, judge.engine_address, judge.options) == ("ray", "h:1", {"seed": 4})
    assert (kw["accuracy_judge"], kw["limit"], kw["systems"]) == ("ollama:a", 3, "x")
    assert seen["record_run"] == ((tmp_path, "grade", None, True), {})
    assert seen["refresh_report"][1] == {"accuracy_judge": "ollama:a"}


def test_grade_passes_the_comparison_s_rule_and_family_on(seen, tmp_path):
    _run("grade", str(tmp_path), "--judge", "ollama:a")
    none = {"adjust": None, "baseline": None, "pairs": None, "family": None}
    assert seen["grade_command"][1]["choice"] == none  # the run's own rule and family
    assert seen["grade_command"][1]["ppi"] == "tuned"  # PPI++ unless --ppi plain
    _run("grade", str(tmp_path), "--judge", "ollama:a", "--ppi", "plain")
    assert seen["grade_command"][1]["ppi"] == "plain"
    _run(
        "grade", str(tmp_path), "--judge", "ollama:a", "--adjust", "holm",
        "--pairs", "a:b,b:c",
    )  # fmt: skip
    assert seen["grade_command"][1]["choice"] == none | {"adjust": "holm", "pairs": "a:b,b:c"}
    _run("grade", str(tmp_path), "--judge", "ollama:a", "--baseline", "a")
    assert seen["grade_command"][1]["choice"] == none | {"baseline": "a"}
    _run("grade", str(tmp_path), "--judge", "ollama:a", "--family", "retrievers")
    assert seen["grade_command"][1]["choice"] == none | {"family": "retrievers"}
    done = CliRunner().invoke(app, ["grade", str(tmp_path), "--judge", "j", "--family", "rows"])
    assert done.exit_code == 2 and "--family" in done.output


def test_judges_and_failures_print_on_the_console(seen, tmp_path):
    _run("judges", str(tmp_path), "--accuracy-judge", "ollama:j")
    (results,), kw = seen["judges_command"]
    assert results == tmp_path
    assert kw == {"accuracy_judge": "ollama:j", "console": answers_cli.console, "ppi": "tuned"}
    _run("judges", str(tmp_path), "--ppi", "plain")
    assert seen["judges_command"][1]["ppi"] == "plain"

    _run("failures", str(tmp_path))
    (results,), kw = seen["failures_command"]
    assert results == tmp_path and kw["console"] is answers_cli.console
    assert (kw["accuracy_judge"], kw["seed"], kw["rounds"], kw["show"]) == (None, None, None, 10)


def test_handgrade_defaults_and_options(seen, tmp_path):
    _run("handgrade", str(tmp_path))
    (results,), kw = seen["handgrade_command"]
    assert results == tmp_path
    assert kw == {"n": 20, "seed": 1, "console": answers_cli.console, "flagged_first": True}
    assert seen["refresh_report"] == ((tmp_path,), {})

    _run("handgrade", str(tmp_path), "--n", "4", "--seed", "9", "--random-order")
    _, kw = seen["handgrade_command"]
    assert (kw["n"], kw["seed"], kw["flagged_first"]) == (4, 9, False)

"""What every ``ragmeter`` command shares (cli/app.py): the help reads as values
(``BASELINE [CANDIDATE]``, ``--seed INT``, flags with no value, no shell-completion
options), ``--metric`` is case-insensitive in both spellings, an aborted command exits 1
and says so, embedding callers (``standalone_mode=False``) get the exceptions, a
``sys.exit`` in user code is named by its file and line, hints stay on one line, piped
output is 160 columns wide, ``-v`` holds for one command, and an ``--accuracy-judge`` is
named as grades are saved."""

from __future__ import annotations

import importlib
import json
import sys

import pytest
import typer
from typer.testing import CliRunner

from ragmeter.cli import app
from ragmeter.cli.app import console, hint, judge_name
from ragmeter.evaluate import evaluate_files

runner = CliRunner()
IDS = [f"q{i}" for i in range(20)]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """20 judged queries, one relevant document each; run a finds 15 of them first (its
    results directory saved as ``results``, scored on hit@1 and map)."""
    root = tmp_path_factory.mktemp("app")
    (root / "qrels.txt").write_text("".join(f"{q} 0 d{q} 1\n" for q in IDS))
    lines = [f"{q} Q0 {'d' if i < 15 else 'x'}{q} 1 1.0 a\n" for i, q in enumerate(IDS)]
    (root / "a.run").write_text("".join(lines))
    run = evaluate_files(root / "qrels.txt", [root / "a.run"], ["hit@1", "map"], rounds=100).run
    run.save(root / "results")
    return root


def _evaluate_args(files, out, *flags):
    return [
        "evaluate", str(files / "a.run"), "--qrels", str(files / "qrels.txt"),
        "--rounds", "100", "--no-history", "--out", str(out), *flags,
    ]  # fmt: skip


def _help(*args: str) -> str:
    result = runner.invoke(app, [*args, "--help"])
    assert result.exit_code == 0, result.output
    return " ".join(result.output.split())


def test_the_usage_line_names_the_arguments_as_values():
    assert "check [OPTIONS] BASELINE [CANDIDATE]" in _help("check")
    assert "{baseline}" not in _help("check") and "BASELINE..." not in _help("check")
    assert "evaluate [OPTIONS] RUNS..." in _help("evaluate")


def test_options_show_their_values_and_flags_none():
    text = _help("check")
    assert "--seed INT" in text and "--margin NUMBER" in text and "--history FOLDER" in text
    top = _help()
    assert "--quiet -q No progress bars" in top and "BOOL" not in top


def test_no_shell_completion_options():
    assert "--install-completion" not in _help() and "--show-completion" not in _help()


@pytest.mark.parametrize("spelling", [["--metric", "HIT@1"], ["--metric=HIT@1"]])
def test_metric_names_are_case_insensitive_in_both_spellings(files, spelling):
    """Results keep metric names in lower case; ``check`` reads them as given."""
    results = str(files / "results")
    args = ["check", results, results, "--system", "a", "--margin", "50", *spelling]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("PASS hit@1 a: candidate - baseline = +0.0 [")


def test_only_measures_given_are_scored(files, tmp_path):
    out = tmp_path / "res"
    result = runner.invoke(app, _evaluate_args(files, out, "--measures", "map, ,hit@1"))
    assert result.exit_code == 0, result.output
    assert json.loads((out / "scores.json").read_text())["metrics"] == ["map", "hit@1"]


def _end_of_input(*args, **kwargs):
    raise EOFError


def test_an_aborted_command_says_so_and_exits_1(files, tmp_path, monkeypatch):
    evaluate = importlib.import_module("ragmeter.cli.evaluate")
    monkeypatch.setattr(evaluate, "_evaluate", _end_of_input)
    result = runner.invoke(app, _evaluate_args(files, tmp_path / "res"))
    assert result.exit_code == 1
    assert result.stderr.strip().endswith("aborted")


def test_embedding_callers_get_the_exceptions(files, tmp_path, monkeypatch):
    """``standalone_mode=False``: a bad flag and an abort are raised, not printed and
    exited on."""
    command = typer.main.get_command(app)
    with pytest.raises(Exception) as bad:
        command.main(
            [*_evaluate_args(files, tmp_path / "res"), "--seed", "x"], standalone_mode=False
        )
    assert not isinstance(bad.value, SystemExit) and "--seed" in str(bad.value.format_message())
    evaluate = importlib.import_module("ragmeter.cli.evaluate")
    monkeypatch.setattr(evaluate, "_evaluate", _end_of_input)
    with pytest.raises(Exception) as aborted:
        command.main(_evaluate_args(files, tmp_path / "res"), standalone_mode=False)
    assert type(aborted.value).__name__ == "Abort"


def _users_helper():
    sys.exit(3)  # the line the message names


def _users_code(*args, **kwargs):
    _users_helper()


def test_a_sys_exit_in_user_code_is_named_by_its_file_and_line(files, tmp_path, monkeypatch):
    evaluate = importlib.import_module("ragmeter.cli.evaluate")
    monkeypatch.setattr(evaluate, "_evaluate", _users_code)
    result = runner.invoke(app, _evaluate_args(files, tmp_path / "res"))
    assert result.exit_code == 2, result.output
    line = _users_helper.__code__.co_firstlineno + 1
    message = " ".join(result.stderr.split())
    assert f"{__file__}:{line} called sys.exit(3) while ragmeter ran it" in message


def test_a_long_hint_stays_on_one_line(capsys):
    from ragmeter.cli import progress

    if progress.settings.quiet:
        pytest.skip("hints are off under --quiet")
    hint("word " * 40 + "end")
    assert capsys.readouterr().err.strip() == ("word " * 40 + "end").strip()


def test_verbose_holds_for_one_command_only(monkeypatch):
    """``-v`` reaches the llama.cpp backend's default; the next command without it turns
    the backend's logs off again (one process, as under a test runner or a notebook)."""
    from ragmeter.llm import backends

    monkeypatch.setattr(backends, "LLAMA_VERBOSE", backends.LLAMA_VERBOSE)  # restored after
    assert runner.invoke(app, ["--verbose", "chunk", "--list"]).exit_code == 0
    assert backends.LLAMA_VERBOSE is True
    assert runner.invoke(app, ["chunk", "--list"]).exit_code == 0
    assert backends.LLAMA_VERBOSE is False


def test_piped_output_is_160_columns_wide():
    """Logs and CI get a wide console so tables do not wrap (in this process: the
    console as imported; tests/test_terminal_fit.py checks fresh interpreters)."""
    if console._width is None:
        pytest.skip("imported on a terminal or with COLUMNS set: their width wins")
    assert console.width == 160


def test_the_accuracy_judge_is_named_as_grades_are_saved():
    assert judge_name(None) is None and judge_name("  ") is None
    assert judge_name("gguf:/models/judge-7b.gguf") == "gguf:judge-7b.gguf"
    assert judge_name(" ollama:qwen ") == "ollama:qwen"

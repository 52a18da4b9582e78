"""What every ``ragmeter`` command shares (cli/app.py): the help reads as values
(``RESULTS [CANDIDATE]``, ``--seed INT``, a choice option's values, flags with no value,
no shell-completion options), ``ragmeter`` alone shows the help, a bad flag value is one
line naming the command's help, ``--metric`` is case-insensitive in both spellings, an
aborted command exits 1 and says so, a crash prints Python's plain traceback, embedding
callers (``standalone_mode=False``) get the exceptions and a program embedding the command
gets completion under its own variable, a ``sys.exit`` in user code is named by the file
and line of the call (however deep), hints stay on one line, piped output is 160 columns
wide, ``-v`` holds for one command, and an ``--accuracy-judge`` is named as grades are
saved."""

from __future__ import annotations

import enum
import importlib
import json
import sys
from typing import Annotated

import pytest
import typer
from typer.testing import CliRunner

from ragmeter.cli import app
from ragmeter.cli.app import console, hint, judge_name
from ragmeter.runs.evaluate import evaluate_files

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
    assert "check [OPTIONS] RESULTS [CANDIDATE]" in _help("check")
    assert "{baseline}" not in _help("check") and "BASELINE..." not in _help("check")
    assert "evaluate [OPTIONS] RUNS..." in _help("evaluate")


def test_options_show_their_values_and_flags_none():
    text = _help("check")
    assert "--seed INT" in text and "--margin NUMBER" in text and "--history FOLDER" in text
    top = _help()
    assert "--quiet -q No progress bars" in top and "BOOL" not in top


def test_no_shell_completion_options():
    assert "--install-completion" not in _help() and "--show-completion" not in _help()


class _Engine(enum.StrEnum):
    local = "local"
    ray = "ray"


def test_a_choice_option_shows_its_values():
    """An option taking one of fixed values lists them (``--engine local|ray``), in any
    typer app of the process once ragmeter's command line is imported."""
    choices = typer.Typer(add_completion=False)

    @choices.command()
    def run(engine: Annotated[_Engine, typer.Option()] = _Engine.local) -> None:
        """Run somewhere."""

    result = runner.invoke(choices, ["--help"])
    assert result.exit_code == 0, result.output
    assert "--engine local|ray" in " ".join(result.output.replace("│", " ").split())


def test_ragmeter_alone_shows_the_help():
    result = runner.invoke(app, [], prog_name="ragmeter")
    assert "Usage: ragmeter [OPTIONS] COMMAND [ARGS]..." in result.stdout
    assert "evaluate" in result.stdout and "error" not in result.output


def test_a_bad_flag_value_is_one_line_naming_the_commands_help():
    result = runner.invoke(app, ["search", "--seed", "x"], prog_name="ragmeter")
    assert result.exit_code == 2 and result.stdout == ""
    line = result.stderr.removesuffix("\n")
    assert "\n" not in line and line.startswith("error: Invalid value for '--seed'")
    assert line.endswith("(see `ragmeter search --help`)")


@pytest.mark.parametrize("spelling", [["--metric", "HIT@1"], ["--metric=HIT@1"]])
def test_metric_names_are_case_insensitive_in_both_spellings(files, spelling):
    """Results keep metric names in lower case; ``check`` reads them as given."""
    results = str(files / "results")
    args = ["check", results, results, "--system", "a", "--margin", "50", *spelling]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("PASS hit@1 a: candidate - baseline = +0.0 points, identical")


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


def test_a_program_embedding_the_command_completes_under_its_own_variable(monkeypatch, capsys):
    """``main(prog_name=..., complete_var=...)``, as click documents for a program that
    runs the command under another name: a completion request in that program's variable
    is answered (here: ``eva`` -> ``evaluate``), and ragmeter's own variable is not
    consulted."""
    mytool = typer.Typer()  # the embedding program's own app, with shell completion
    mytool.command()(_crash)
    typer.main.get_command(mytool)
    monkeypatch.delenv("_RAGMETER_COMPLETE", raising=False)
    monkeypatch.setenv("_MYTOOL_COMPLETE", "complete_bash")
    monkeypatch.setenv("COMP_WORDS", "ragmeter eva")
    monkeypatch.setenv("COMP_CWORD", "1")
    command = typer.main.get_command(app)
    with pytest.raises(SystemExit) as done:
        command.main([], prog_name="ragmeter", complete_var="_MYTOOL_COMPLETE")
    assert done.value.code == 0
    assert capsys.readouterr().out.split() == ["evaluate"]


def _crash(*args, **kwargs):
    raise RuntimeError("boom")


def test_a_crash_prints_the_plain_python_traceback(files, tmp_path, monkeypatch, capsys):
    """An unexpected error (a bug, not bad input) ends with Python's own traceback, as
    logs and bug reports expect it, not typer's boxed rich traceback with the source
    around every frame."""
    evaluate = importlib.import_module("ragmeter.cli.evaluate")
    monkeypatch.setattr(evaluate, "_evaluate", _crash)
    monkeypatch.setattr(sys, "excepthook", sys.excepthook)  # app() installs typer's hook
    for name in ("TYPER_STANDARD_TRACEBACK", "_TYPER_STANDARD_TRACEBACK"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(RuntimeError) as crash:
        app(_evaluate_args(files, tmp_path / "res"))
    capsys.readouterr()
    sys.excepthook(crash.type, crash.value, crash.tb)  # what the interpreter does on exit
    printed = capsys.readouterr().err
    assert printed.startswith("Traceback (most recent call last):\n")
    assert f'File "{__file__}", line {_crash.__code__.co_firstlineno + 1}, in _crash' in printed
    assert printed.rstrip().splitlines()[-1] == "RuntimeError: boom"
    assert "╭" not in printed and "│" not in printed


def _users_helper():
    sys.exit(3)  # the line the message names


def _users_code(*args, **kwargs):
    _users_helper()


def _users_middle():
    _users_helper()


def _users_deeper_code(*args, **kwargs):
    _users_middle()


@pytest.mark.parametrize("users_code", [_users_code, _users_deeper_code], ids=["2", "3"])
def test_a_sys_exit_in_user_code_is_named_by_its_file_and_line(
    files, tmp_path, monkeypatch, users_code
):
    """The line named is the ``sys.exit`` call, however many of the user's functions
    lie between ragmeter and it (two, three frames deep)."""
    evaluate = importlib.import_module("ragmeter.cli.evaluate")
    monkeypatch.setattr(evaluate, "_evaluate", users_code)
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


def test_piped_output_is_160_columns_wide(monkeypatch):
    """Logs and CI (no COLUMNS, no terminal on any stream, no /dev/tty) get a wide
    console so tables do not wrap; tests/test_terminal_fit.py checks fresh interpreters."""
    import os

    def no_terminal(*args):
        raise OSError("not a terminal")

    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.setattr(os, "get_terminal_size", no_terminal)
    monkeypatch.setattr(os, "open", no_terminal)
    assert console.width == 160
    monkeypatch.setenv("COLUMNS", "93")  # read at each print, not once at import
    assert console.width == 93


def test_the_accuracy_judge_is_named_as_grades_are_saved():
    assert judge_name(None) is None and judge_name("  ") is None
    assert judge_name("gguf:/models/judge-7b.gguf") == "gguf:judge-7b.gguf"
    assert judge_name(" ollama:qwen ") == "ollama:qwen"


@pytest.mark.parametrize("given", [1.0, 2.0, 3.0, 7.0, 29.0, 57.0, 100.0])
def test_points_typed_reach_the_library_as_its_fraction_by_one_division(given):
    from ragmeter.cli.app import points

    # the gate's margin and the planner's difference alike: one division, no round trip
    assert points(given, "--margin") == given / 100.0
    assert points(given, "--difference") == given / 100.0


def test_an_old_fraction_reads_as_points_with_one_warning_either_way(capsys):
    from ragmeter.cli.app import points

    assert points(0.03, "--margin") == 0.03  # kept as typed, not via points
    assert points(0.04, "--difference") == 0.04
    said = " ".join(capsys.readouterr().err.split())
    assert said.count("is read as a fraction") == 2

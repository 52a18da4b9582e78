"""One option name per concept across the commands, old names kept working, one seed default."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from conftest import EXAMPLE
from typer.testing import CliRunner

from ragmeter.cli import app
from ragmeter.cli.app import MODEL_SPEC

runner = CliRunner()

# the model each command calls, and the flag that names its role
MODEL_FLAGS = {
    ("answer",): "--reader",
    ("grade",): "--judge",
    ("questions", "generate"): "--model",
    ("questions", "audit"): "--model",
}


def _commands(group, path: tuple[str, ...] = ()):
    for name, command in group.commands.items():
        if hasattr(command, "commands"):  # a group (typer's own click, not the package)
            yield from _commands(command, (*path, name))
        else:
            yield (*path, name), command


def _all_commands() -> dict:
    return dict(_commands(typer.main.get_command(app)))


def _flags(command) -> dict:
    return {opt: p for p in command.params for opt in getattr(p, "opts", [])}


def test_every_model_calling_command_names_the_model_by_role_with_one_spec_help():
    commands = _all_commands()
    for path, flag in MODEL_FLAGS.items():
        param = _flags(commands[path])[flag]
        assert MODEL_SPEC in param.help, (path, flag)
        assert "--option" in _flags(commands[path]), path  # backend options: one name
    # the old names still parse but stay out of the help
    audit = _flags(commands[("questions", "audit")])
    assert audit["--llm"].hidden and audit["--model-option"].hidden
    assert "-m" in audit  # the same short flag as questions generate
    result = runner.invoke(app, ["questions", "audit", "--help"])
    assert "--model" in result.output and "--llm" not in result.output
    # the top-level help maps the roles to their flags
    top = " ".join(runner.invoke(app, ["--help"], terminal_width=200).output.split())
    for flag in MODEL_FLAGS.values():
        assert flag in top
    assert "-m, old name --llm" in top and "Every --seed defaults to 1, or to the seed" in top


def test_every_seed_defaults_to_one_or_to_the_run_it_reads():
    seeds = {}
    for path, command in _all_commands().items():
        param = _flags(command).get("--seed")
        if param is not None:
            seeds[path] = param.default
    assert {("questions", "generate"), ("questions", "audit"), ("handgrade",)} <= set(seeds)
    assert ("search",) in seeds and ("evaluate",) in seeds
    # None: taken from the config or the saved run, whose own default is 1
    assert set(seeds.values()) <= {1, None}, seeds


def _one_question_set(tmp_path: Path) -> Path:
    lines = (EXAMPLE / "questions.jsonl").read_text(encoding="utf-8").splitlines()[:3]
    path = tmp_path / "q.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_audit_llm_is_the_old_name_of_model(tmp_path):
    testset = _one_question_set(tmp_path)
    args = ["questions", "audit", str(testset), "--corpus", str(EXAMPLE / "posts")]
    # --checks "" runs no model call, but the model is still named in the summary
    result = runner.invoke(app, [*args, "--llm", "ollama:old", "--checks", "", "--rounds", "100"])
    assert result.exit_code == 0, result.output
    assert "--llm is deprecated; use --model" in result.stderr
    assert json.loads((tmp_path / "audit-summary.json").read_text())["llm"] == "ollama:old"

    result = runner.invoke(app, [*args, "-m", "ollama:new", "--checks", "", "--rounds", "100"])
    assert result.exit_code == 0, result.output
    assert "deprecated" not in result.stderr
    assert json.loads((tmp_path / "audit-summary.json").read_text())["llm"] == "ollama:new"

    result = runner.invoke(app, [*args, "--model", "ollama:a", "--llm", "ollama:b"])
    assert result.exit_code == 2
    assert "give --model only (--llm is its old name)" in result.stderr


@pytest.mark.parametrize("flag", ["--strategies", "--retrievers", "--pairs"])
@pytest.mark.parametrize("value", [" , ", ",", " "])
def test_a_list_flag_that_names_nothing_is_one_line_not_the_default(
    tmp_path, monkeypatch, flag, value
):
    """``--strategies ' , '`` used to fall back to the default strategies in silence."""
    from ragmeter.cli import example_dir

    monkeypatch.chdir(tmp_path)
    out, ex = tmp_path / "out", example_dir()
    data = ["--corpus", str(ex / "posts"), "--testset", str(ex / "questions.jsonl")]
    r = runner.invoke(app, ["search", *data, flag, value, "--out", str(out), "--no-history"])
    assert r.exit_code == 2
    lines = [x for x in r.output.splitlines() if x.strip()]
    assert len(lines) == 1 and f"{flag} {value!r} names nothing" in lines[0], r.output
    assert not out.exists()

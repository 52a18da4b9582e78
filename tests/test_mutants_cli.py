"""``ragmeter`` interrupted (Ctrl-C): exit status 130, the shell's for SIGINT, whether the
interrupt comes while the command line is read or while a command runs."""

from __future__ import annotations

import importlib
import sys

import pytest

import ragmeter.cli as cli


def _interrupt(*args, **kwargs):
    raise KeyboardInterrupt


def _main(monkeypatch, *argv: str) -> int:
    monkeypatch.setattr(sys, "argv", ["ragmeter", *argv])
    with pytest.raises(SystemExit) as exited:
        cli.main()
    return exited.value.code


def test_an_interrupt_while_the_command_line_is_read_exits_130(monkeypatch, capsys):
    app_module = importlib.import_module("ragmeter.cli.app")
    monkeypatch.setattr(app_module, "_metric_names", _interrupt)
    assert _main(monkeypatch, "evaluate", "a.run", "--qrels", "q.txt") == 130
    assert capsys.readouterr().err.strip() == "interrupted"


def test_an_interrupt_before_the_app_starts_exits_130(monkeypatch, capsys):
    monkeypatch.setattr(cli, "app", _interrupt)
    assert _main(monkeypatch, "--help") == 130
    assert "interrupted" in capsys.readouterr().err


def test_an_interrupt_while_a_command_runs_exits_130(monkeypatch, tmp_path, capsys):
    evaluate = importlib.import_module("ragmeter.cli.evaluate")
    monkeypatch.setattr(evaluate, "_evaluate", _interrupt)
    monkeypatch.chdir(tmp_path)
    assert _main(monkeypatch, "evaluate", "a.run", "--qrels", "q.txt") == 130
    assert not (tmp_path / "ragmeter-results").exists()
    assert capsys.readouterr().err.strip() == "interrupted"  # once, not silently

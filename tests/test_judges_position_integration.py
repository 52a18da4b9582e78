"""The position check and the gate on answers with a real model: gemma-3 270M from the
command line, as docs/answers.md and docs/ci.md show them. The tiny model is a poor
judge; these tests check the plumbing: every reordered grade parses, a repeated check
costs no call, ``judges`` prints the check, and ``check --metric correct`` reads real
answer runs. Skipped, with the reason, when llama-cpp-python or the model is missing."""

from __future__ import annotations

import shutil

from llm_fixtures import gguf_model_path
from test_answers_integration import (  # noqa: F401  (fixtures)
    GGUF_OPTIONS,
    JUDGE_TOKENS,
    QUESTIONS,
    answered,
    answered_once,
    cache_size,
    clean_results,
    gguf_backend,
    needs_llama,
)
from typer.testing import CliRunner

from ragmeter.answers import GRADES
from ragmeter.answers.position import position_checks, read_position
from ragmeter.answers.store import answers_dir, read_meta
from ragmeter.cli import app

SYSTEM = "sentence-60"


def _model_flags() -> list[str]:
    flags = [f"gguf:{gguf_model_path()}", "--max-tokens", str(JUDGE_TOKENS)]
    for key, value in GGUF_OPTIONS.items():
        flags += ["--option", f"{key}={value}"]
    return flags


def _grade(path, *extra):
    args = ["grade", str(path), "--judge", *_model_flags(), "--no-history", *extra]
    return CliRunner().invoke(app, args, env={"COLUMNS": "200"})


@needs_llama
def test_gguf_position_check_from_the_cli_parses_costs_nothing_again_and_gates(
    answered,  # noqa: F811
    tmp_path,
):
    path, _ = answered
    before = cache_size(path)
    done = _grade(path, "--position-check", "3", "--position-seed", "4")
    assert done.exit_code == 0, done.output
    assert "Position check: 3 sampled answers (seed 4) graded again with the answer" in done.output
    saved = read_position(answers_dir(path))
    assert len(saved) == 3
    assert all(g.grade in GRADES for g in saved.values()), saved  # grammar-constrained
    assert read_meta(answers_dir(path))["position_check"]["seed"] == 4
    asked = cache_size(path)
    assert asked - before <= QUESTIONS + 3  # the grades, then the 3 reordered ones
    assert asked - before >= 3

    again = _grade(path, "--position-check", "3", "--position-seed", "4")
    assert again.exit_code == 0, again.output
    assert cache_size(path) == asked  # a repeated check costs no call
    resumed = read_position(answers_dir(path))
    assert {k: g.grade for k, g in resumed.items()} == {k: g.grade for k, g in saved.items()}
    assert all(g.cached for g in resumed.values())

    [check] = position_checks(path)
    assert check.pair.n == 3 and 0 <= check.changed <= 3
    judged = CliRunner().invoke(app, ["judges", str(path)], env={"COLUMNS": "200"})
    assert judged.exit_code == 0, judged.output
    assert "Position check: 3 sampled answers" in judged.output

    # the graded run and a copy of it (the same answers and grades) through the gate
    cand = shutil.copytree(path, tmp_path / "candidate")
    args = ["check", str(path), str(cand), "--system", SYSTEM, "--metric", "correct"]
    passed = CliRunner().invoke(app, args, env={"COLUMNS": "1000"})
    assert passed.exit_code == 0, passed.output
    assert passed.stdout.startswith(f"PASS correct {SYSTEM}: candidate - baseline = +0.0")
    assert f"identical on all {QUESTIONS} questions" in passed.stdout
    assert "answers graded by gguf:" in passed.stdout

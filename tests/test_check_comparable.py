"""``ragmeter check`` compares two runs only when they measured the same thing.

The system under test may change (strategy, retriever); the corpus, the questions
and their answer keys, and the measurement settings may not. Each case below was
compared without a word before: a candidate scored leniently (relevant_grade 1)
turned a FAIL into a PASS.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import EXAMPLE
from typer.testing import CliRunner

import ragmeter
from ragmeter.cli import app
from ragmeter.errors import InputError
from ragmeter.history.gate import check_noninferior
from ragmeter.inputs.config import Config


def _save(tmp: Path, name: str, corpus: Path, testset: Path, **settings) -> Path:
    cfg = Config(
        corpus=str(corpus),
        testset=str(testset),
        strategies=("fixed",),
        rounds=200,
        **settings,
    )
    return ragmeter.search(cfg).save(tmp / name)


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("check")
    return _save(tmp, "base", EXAMPLE / "posts", EXAMPLE / "questions.jsonl")


def test_the_same_measurement_is_compared(base, tmp_path):
    again = _save(tmp_path, "again", EXAMPLE / "posts", EXAMPLE / "questions.jsonl")
    # no question differs; on 135 questions the interval's lower end is about -2.8 points
    result = check_noninferior(base, again, "fixed", "recall@5", 0.03)
    assert result.passed and result.difference.mean == 0.0
    meta = json.loads((base / "meta.json").read_text())
    assert set(meta["measurement"]) >= {"corpus", "testset", "relevant_grade", "ideal", "gain"}


def test_a_lenient_relevant_grade_is_refused(base, tmp_path):
    lenient = _save(
        tmp_path, "lenient", EXAMPLE / "posts", EXAMPLE / "questions.jsonl", relevant_grade=1
    )
    with pytest.raises(InputError, match=r"measured different things \(relevant_grade: 2 vs 1\)"):
        check_noninferior(base, lenient, "fixed", "recall@5", 0.02)


def test_another_corpus_is_refused(base, tmp_path):
    posts = tmp_path / "posts"
    shutil.copytree(EXAMPLE / "posts", posts)
    (posts / "extra.md").write_text("A post that the baseline never saw.\n", encoding="utf-8")
    other = _save(tmp_path, "other", posts, EXAMPLE / "questions.jsonl")
    with pytest.raises(InputError, match=r"the corpus \(document ids or texts\)"):
        check_noninferior(base, other, "fixed", "recall@5", 0.02)


def test_another_answer_key_is_refused(base, tmp_path):
    lines = (EXAMPLE / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    span = first["answers"][0]
    span.pop("text", None)
    span["end"] = span["start"] + max(1, (span["end"] - span["start"]) // 2)  # half the passage
    lines[0] = json.dumps(first)
    questions = tmp_path / "questions.jsonl"
    questions.write_text("\n".join(lines) + "\n", encoding="utf-8")
    other = _save(tmp_path, "key", EXAMPLE / "posts", questions)
    with pytest.raises(InputError, match=r"the test set \(questions or answer keys\)"):
        check_noninferior(base, other, "fixed", "recall@5", 0.02)


def test_a_cost_is_not_checked_as_a_score(base):
    with pytest.raises(InputError, match="words@5 is a cost"):
        check_noninferior(base, base, "fixed", "words@5", 0.02)
    out = CliRunner().invoke(
        app, ["check", str(base), str(base), "--system", "fixed", "--metric", "words@5"]
    )
    assert out.exit_code == 2 and "lower is better" in out.output

"""``evaluate`` and ``grade`` record their runs too (``search``: tests/test_history.py)."""

from __future__ import annotations

import shutil

from test_answers_one_view import FixedJudge, run_dir  # noqa: F401  (run_dir: a fixture)
from typer.testing import CliRunner

from ragmeter.cli import app
from ragmeter.history import HistoryStore


def _invoke(*args: str):
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result


def test_evaluate_records_its_run_unless_told_not_to(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the results folders e1 and e2 are written here
    monkeypatch.setenv("RAGMETER_HISTORY", str(tmp_path / "hist"))
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 d{q} 1\n{q} 0 e{q} 0\n" for q in range(12)))
    run = tmp_path / "bm25.run"
    run.write_text(
        "".join(f"{q} Q0 {d}{q} {r} {9 - r} bm25\n" for q in range(12) for r, d in enumerate("ed"))
    )
    _invoke("-q", "evaluate", str(run), "--qrels", str(qrels), "--rounds", "200", "-o", "e1")
    _invoke(
        "-q", "evaluate", str(run), "--qrels", str(qrels), "--rounds", "200", "-o", "e2",
        "--no-history",
    )  # fmt: skip
    with HistoryStore(tmp_path / "hist", create=False) as store:
        (kept,) = store.runs()
    assert kept.command == "evaluate" and kept.systems == ("bm25",) and kept.questions == 12
    assert kept.results.endswith("e1")


def test_grade_records_the_graded_run(run_dir, tmp_path, monkeypatch):  # noqa: F811
    from ragmeter.llm import backends

    monkeypatch.setitem(backends.KINDS, "test", FixedJudge)
    monkeypatch.setenv("RAGMETER_HISTORY", str(tmp_path / "hist"))
    results = tmp_path / "results"
    shutil.copytree(run_dir, results)
    _invoke("-q", "grade", str(results), "--judge", "test:c")
    with HistoryStore(tmp_path / "hist", create=False) as store:
        (kept,) = store.runs()
        files = store.files(kept.id)
    assert kept.command == "grade" and kept.systems == ("sentence", "fixed-40")
    assert "test:c" in files["answers/meta.json"].decode()

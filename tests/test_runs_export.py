"""``ragmeter.runs.export``: the TREC export as a library call. A notebook scores the
round trip without writing a file, reads the search's own relevance level back, and the
command line's names are these same objects."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import EXAMPLE

from ragmeter import runs
from ragmeter.inputs.config import Config
from ragmeter.retrieval.trec import read_qrels
from ragmeter.runs.export import Export, export_files, merged_judgments
from ragmeter.runs.pipeline import run_search
from ragmeter.runs.results import Results


@pytest.fixture(scope="module")
def lenient(tmp_path_factory) -> Results:
    """Two systems of the shipped example, graded 1 relevant (the level is read back)."""
    cfg = Config(
        corpus=str(EXAMPLE / "posts"),
        testset=str(EXAMPLE / "questions.jsonl"),
        strategies=("fixed", "sentence"),
        retrievers=("bm25",),
        rounds=200,
        relevant_grade=1,
    )
    return Results(run_search(cfg).save(tmp_path_factory.mktemp("export") / "res"))


def test_the_round_trip_is_scored_without_writing_a_file(lenient, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    ex = export_files(lenient.path, None, None)
    assert isinstance(ex, Export)
    assert ex.paths == [] and list(tmp_path.iterdir()) == []
    assert ex.level == 1  # the search's own level, from its measurement
    assert set(ex.differs) == {"fixed", "sentence"}
    assert "recall@5" in ex.measures and not any(m.startswith("words") for m in ex.measures)
    assert ex.evaluate_command() == "ragmeter evaluate RUN --qrels QRELS"


def test_one_system_is_exported_with_its_own_judgments(lenient, tmp_path):
    ex = export_files(lenient.path, tmp_path / "run.txt", tmp_path / "qrels.txt", ["sentence"])
    assert ex.paths == [tmp_path / "run.sentence.txt", tmp_path / "qrels.sentence.txt"]
    judged = read_qrels(tmp_path / "qrels.sentence.txt")
    merged = merged_judgments(lenient, ["sentence"])
    assert judged == merged  # one system: the merged judgments are its own
    assert ex.evaluate_command().startswith(f"ragmeter evaluate {tmp_path / 'run.sentence.txt'}")


def test_the_command_lines_names_are_the_librarys():
    from ragmeter.cli import export as cli

    assert cli.export_files is export_files is runs.export_files
    assert cli.Export is Export is runs.Export
    assert cli.merged_judgments is merged_judgments is runs.merged_judgments
    assert isinstance(cli.system_path(Path("run.txt"), "a b"), Path)


# --- run paths that collide ------------------------------------------------------------------


def test_system_names_that_make_one_file_name_are_refused_before_any_write(
    small_example_results, tmp_path
):
    from ragmeter.errors import InputError
    from ragmeter.runs.export import _check_targets, run_paths
    from ragmeter.runs.results import Results

    run = tmp_path / "run.txt"
    paths = run_paths(run, ["sent/bm25", "sent_bm25", "sent bm25", "sent.bm25"])
    assert len(set(paths.values())) == 2  # "/", "_" and " " all become "_"
    res = Results(small_example_results)
    targets = [(p, "--run") for p in paths.values()]
    with pytest.raises(InputError, match=r"run\.sent_bm25\.txt: would be written twice"):
        _check_targets(res, targets, [(run, "--run")])
    assert list(tmp_path.iterdir()) == []


def test_run_and_qrels_at_one_path_are_refused_and_nothing_is_written(
    small_example_results, tmp_path
):
    from typer.testing import CliRunner

    from ragmeter.cli import app

    same = str(tmp_path / "x.txt")
    got = CliRunner().invoke(
        app, ["export", str(small_example_results), "--run", same, "--qrels", same]
    )
    assert got.exit_code == 2 and "would be written twice" in got.stderr
    assert len(got.stderr.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == []

"""``ragmeter.cli.search``: a search is recorded in the history unless --no-history and
reports its steps to the progress bar; ``chunk --list`` names each strategy's size in its
own unit, ``chunk --doc`` shows one document, a long sample chunk is cut at 600 characters;
``compare`` and ``plan`` take ``--rounds`` from 100 up; ``plan`` gives the exact interval of
a system with no spread and the run's own level, and counts the pairs it leaves out in a
dim note."""

from __future__ import annotations

import contextlib

import pytest
from typer.testing import CliRunner

from ragmeter.cli import app
from ragmeter.inputs.config import Config
from ragmeter.inputs.corpus import Document
from ragmeter.inputs.testset import AnswerSpan, Question, TestSet
from ragmeter.runs.pipeline import run_search
from ragmeter.runs.results import save_results

runner = CliRunner()


def _rows(stdout: str) -> dict[str, str]:
    return {line.split("│")[1].strip(): line for line in stdout.splitlines() if "│" in line}


def test_chunk_list_says_whole_documents_and_a_functions_own_unit(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ragmeter.toml").write_text(
        '[[strategy]]\nname = "mine"\nkind = "python"\nfunction = "my_mod:split"\nsize = 50\n'
    )
    got = runner.invoke(app, ["chunk", "--list"], env={"COLUMNS": "200"})
    assert got.exit_code == 0, got.output
    rows = _rows(got.stdout)
    assert "whole documents" in rows["whole"]
    # a function's size is in the function's unit, not words
    assert "function=my_mod:split, size=50 (your function's unit)" in rows["mine"]
    assert "50 words" not in rows["mine"]


def _corpus(root):
    (root / "docs").mkdir()
    (root / "docs" / "a.md").write_text(" ".join(f"word{i:05d}" for i in range(100)))
    (root / "docs" / "b.md").write_text("a short one")


def test_chunk_doc_shows_that_document_only(tmp_path):
    _corpus(tmp_path)
    got = runner.invoke(app, ["chunk", str(tmp_path / "docs"), "-s", "whole", "--doc", "b.md"])
    assert got.exit_code == 0, got.output
    assert "whole: 1 document" in got.stdout
    assert "a short one" in got.stdout and "word00000" not in got.stdout
    missing = runner.invoke(app, ["chunk", str(tmp_path / "docs"), "--doc", "nope"])
    assert missing.exit_code == 2 and "no document with id 'nope'" in missing.stderr


def test_a_long_sample_chunk_is_cut_at_600_characters(tmp_path):
    _corpus(tmp_path)
    got = runner.invoke(
        app,
        ["chunk", str(tmp_path / "docs"), "-s", "whole", "--doc", "a.md"],
        env={"COLUMNS": "200"},
    )
    assert got.exit_code == 0, got.output
    shown = " ".join(got.stdout.split())
    # 10 characters a word: the first 600 characters are the first 60 words
    first_60 = " ".join(f"word{i:05d}" for i in range(60))
    assert f"{first_60} …" in shown
    assert "word00060" not in shown


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    docs = [Document(f"d{i}", f"topic{i} words about topic{i} here") for i in range(4)]
    qs = TestSet(
        [
            Question(f"q{i}", f"topic{i}", (AnswerSpan(f"d{i}", 0, 6, f"topic{i}"),))
            for i in range(4)
        ]
    )
    cfg = Config(
        strategies=("whole", "fixed"), retrievers=("bm25",), ks=(1,), rounds=200, confidence=0.9
    )
    return save_results(run_search(cfg, docs, qs), tmp_path_factory.mktemp("r") / "r")


@pytest.mark.parametrize("command", ["compare", "plan"])
def test_rounds_from_100_up(results, command):
    ok = runner.invoke(app, [command, str(results), "--rounds", "100", "--format", "json"])
    assert ok.exit_code == 0, ok.output
    low = runner.invoke(app, [command, str(results), "--rounds", "99"])
    assert low.exit_code == 2
    assert "--rounds must be at least 100 (10000 is the default), got 99" in low.stderr


def _search_case(root):
    (root / "docs").mkdir()
    lines = []
    for i, (topic, fact) in enumerate([("cats", "Cats sleep all day."), ("owls", "Owls hunt.")]):
        (root / "docs" / f"{topic}.md").write_text(f"About {topic}. {fact}\n")
        lines.append(f'{{"id": "q{i}", "question": "{topic}?", "answers": [{{"text": "{fact}"}}]}}')
    (root / "q.jsonl").write_text("\n".join(lines) + "\n")
    return ["search", "--corpus", "docs", "--testset", "q.jsonl", "--strategies", "whole"]


def test_a_search_is_recorded_in_the_history_unless_no_history(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RAGMETER_HISTORY", str(tmp_path / "hist"))
    args = [*_search_case(tmp_path), "--rounds", "100"]
    off = runner.invoke(app, [*args, "-o", "r0", "--no-history"])
    assert off.exit_code == 0, off.output
    assert not (tmp_path / "hist").exists()
    on = runner.invoke(app, [*args, "-o", "r1"])
    assert on.exit_code == 0, on.output
    assert "History: run 1 recorded" in on.stderr


def test_the_search_reports_each_step_to_the_progress_bar(tmp_path, monkeypatch):
    from ragmeter.cli import search as command

    steps = []

    @contextlib.contextmanager
    def bar(first):
        steps.append((first, 0, 1))
        yield lambda label, done, total: steps.append((label, done, total))

    monkeypatch.setattr(command, "step_bar", bar)
    monkeypatch.chdir(tmp_path)
    got = runner.invoke(app, [*_search_case(tmp_path), "--rounds", "100", "--no-history"])
    assert got.exit_code == 0, got.output
    assert steps[0] == ("loading corpus and questions", 0, 1)
    assert ("done", 1, 1) in steps  # the library's own steps reach the bar
    assert steps[-1] == ("intervals", 0, 1)


def test_plan_names_the_exact_interval_and_the_runs_own_level(results):
    got = runner.invoke(app, ["plan", str(results), "--rounds", "100"], env={"COLUMNS": "200"})
    assert got.exit_code == 0, got.output
    text = " ".join(got.stdout.split())
    # recall@1 is 1 on every question: planned on its exact 90% interval, at the run's level
    assert "[47.3, 100.0] exact" in text
    assert "score 100% on every question: planned on the exact 90% (Clopper-Pearson)" in (
        " ".join(got.output.split())
    )
    # the run's rule is max-T at 0.1; with no first step, Holm's numbers bound it
    assert "Holm over 1 pair tests its first pair at 0.1/1 = 0.1; max-T (this run's rule)" in text


def test_the_count_of_pairs_left_out_is_a_dim_note(results, monkeypatch):
    from rich.console import ColorSystem

    from ragmeter.cli import search_views
    from ragmeter.cli.app import console

    monkeypatch.setattr(search_views, "LONG_FAMILY", 0)
    monkeypatch.setattr(console, "_color_system", ColorSystem.STANDARD)
    with console.capture() as cap:
        got = runner.invoke(app, ["plan", str(results), "--rounds", "100"])
    assert got.exit_code == 0, got.output
    (line,) = [x for x in cap.get().splitlines() if "more pairs not shown" in x]
    assert line.startswith("\x1b[2m1 more pairs not shown")


def test_chunk_takes_the_corpus_as_search_does(tmp_path):
    _corpus(tmp_path)
    docs = str(tmp_path / "docs")
    by_option = runner.invoke(app, ["chunk", "--corpus", docs, "-s", "whole", "--show", "0"])
    assert by_option.exit_code == 0, by_option.output
    assert "whole: 2 documents" in by_option.stdout
    both = runner.invoke(app, ["chunk", docs, "--corpus", docs, "-s", "whole", "--show", "0"])
    assert both.exit_code == 0 and both.stdout == by_option.stdout  # the same one twice: fine
    other = runner.invoke(app, ["chunk", docs, "--corpus", str(tmp_path), "-s", "whole"])
    assert other.exit_code == 2 and "two corpora given" in other.stderr


def test_chunk_and_search_suggest_the_configs_strategy_names(tmp_path):
    _corpus(tmp_path)
    (tmp_path / "ragmeter.toml").write_text(
        '[[strategy]]\nname = "my-sentences"\nkind = "sentence"\nsize = 50\n'
    )
    config = str(tmp_path / "ragmeter.toml")
    got = runner.invoke(app, ["chunk", str(tmp_path / "docs"), "-c", config, "-s", "my-sentnces"])
    assert got.exit_code == 2
    said = " ".join(got.stderr.split())
    assert "(did you mean 'my-sentences'?)" in said and "valid names: my-sentences" in said


def test_an_empty_family_flag_names_the_flag_not_the_config(tmp_path, monkeypatch):
    # regression: --family '' blamed "[stats] family", a config key that was not set
    monkeypatch.chdir(tmp_path)
    got = runner.invoke(app, [*_search_case(tmp_path), "--family", ""])
    assert got.exit_code == 2
    said = " ".join(got.stderr.split())
    assert "--family must be one of" in said and "[stats]" not in said

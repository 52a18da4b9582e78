"""The command line: the search route, re-reading results, and one-line errors (exit 2)."""

import importlib
import json
import subprocess
import sys

import pytest
from typer.testing import CliRunner

import ragmeter.cli as cli
from ragmeter.cli import app

runner = CliRunner()


@pytest.fixture(scope="module")
def demo_results(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo") / "results"
    result = runner.invoke(
        app,
        ["search", "--strategies", "fixed,sentence,parent-400", "--rounds", "1000", "-o", str(out)],
    )
    assert result.exit_code == 0, result.output
    return out, result


def test_search_on_the_example_prints_intervals_and_words(demo_results):
    out, result = demo_results
    text = result.stdout
    assert "135 questions, 25 documents, 3 systems" in text
    assert "words@5" in text and "Paired comparisons on recall@5" in text
    summary = json.loads((out / "summary.json").read_text())
    est = summary["estimates"]["parent-400"]["recall@5"]
    # The printed cell is the saved interval, to one decimal.
    assert f"{est['mean'] * 100:.1f} [{est['low'] * 100:.1f}, {est['high'] * 100:.1f}]" in text
    assert summary["rounds"] == 1000 and summary["seed"] == 1
    assert len(summary["comparisons"]) == 3


def test_compare_and_plan_reread_results(demo_results):
    out, _ = demo_results
    result = runner.invoke(
        app, ["compare", str(out), "--a", "parent-400", "--b", "fixed", "--rounds", "1000"]
    )
    assert result.exit_code == 0, result.output
    assert "parent-400 better" in result.stdout
    result = runner.invoke(app, ["plan", str(out), "--system", "fixed", "--rounds", "1000"])
    assert result.exit_code == 0, result.output
    assert "Sample size: fixed on recall@5" in result.stdout
    for n in ("135", "270", "540", "1080"):
        assert n in result.stdout


def test_chunk_shows_sizes():
    result = runner.invoke(app, ["chunk", "--strategy", "fixed", "--show", "1"])
    assert result.exit_code == 0, result.output
    assert "fixed: 25 documents" in result.stdout
    assert "200" in result.stdout  # the largest fixed window has 200 words


@pytest.mark.parametrize(
    "files, args, message",
    [
        (
            {"c.jsonl": '{"id": "a", "text": "x y z"}\n{"id": \n'},
            ["--corpus", "c.jsonl"],
            "c.jsonl:2: malformed JSON",
        ),
        (
            {
                "c.jsonl": '{"id": "a", "text": "alpha beta"}\n',
                "q.jsonl": '{"id": "q9", "question": "?", "answers": [{"text": "gamma"}]}\n',
            },
            ["--corpus", "c.jsonl", "--testset", "q.jsonl"],
            "answer text not found for q9",
        ),
        (
            {
                "c.jsonl": '{"id": "a", "text": "alpha beta"}\n',
                "q.jsonl": '{"id": "q1", "question": "?", "answers": [{"text": "alpha"}]}\n',
            },
            ["--corpus", "c.jsonl", "--testset", "q.jsonl", "--strategies", "bogus"],
            "unknown chunking strategy 'bogus'",
        ),
        (
            {
                "c.jsonl": '{"id": "a", "text": "alpha beta"}\n',
                "q.jsonl": '{"id": "q1", "question": "?", "answers": [{"text": "alpha"}]}\n',
            },
            ["--corpus", "c.jsonl", "--testset", "q.jsonl", "--ks", "0,5"],
            "ks must be positive whole numbers",
        ),
        ({}, ["--corpus", "missing-folder"], "no such file or folder"),
        (
            {
                "c.jsonl": '{"id": "a", "text": "alpha beta"}\n',
                "q.jsonl": '{"id": "q1", "question": "?", "answers": [{"text": "alpha"}]}\n',
            },
            ["--corpus", "c.jsonl", "--testset", "q.jsonl", "--clusters", "docs"],
            "clusters must be one of auto, none, document, field",
        ),
        (
            {
                "c.jsonl": '{"id": "a", "text": "alpha beta alpha"}\n',
                "q.jsonl": '{"id": "q1", "question": "?", "answers": [{"doc": "a", '
                '"text": "alpha"}]}\n',
            },
            ["--corpus", "c.jsonl", "--testset", "q.jsonl"],
            "more than once in its doc for q1 (2 times in a) (give start/end",
        ),
        (
            {
                "c.jsonl": '{"id": "a", "text": "alpha beta"}\n',
                "q.jsonl": '{"id": "q1", "question": "?", "answers": [{"text": "alpha"}]}\n',
            },
            ["--corpus", "c.jsonl", "--testset", "q.jsonl", "--clusters", "field"],
            "question 'q1' has no \"cluster\" field",
        ),
        (
            {
                "c.jsonl": '{"id": "a", "text": "alpha beta"}\n',
                "q.jsonl": '{"id": "q1", "question": "?", "answers": [{"text": "alpha"}]}\n',
            },
            ["--corpus", "c.jsonl", "--testset", "q.jsonl", "--retrievers", "bm-25"],
            "unknown retriever kind 'bm-25' (did you mean 'bm25'?)",
        ),
        (
            {
                "c.jsonl": '{"id": "a", "text": "alpha beta"}\n',
                "q.jsonl": '{"id": "q1", "question": "?", "answers": [{"text": "alpha"}]}\n',
            },
            ["--corpus", "c.jsonl", "--testset", "q.jsonl", "--metric", "recal@5"],
            "(did you mean 'recall@5'?)",
        ),
        (
            {
                "c.jsonl": '{"id": "a", "text": "alpha beta"}\n',
                "q.jsonl": '{"id": "q1", "question": "?", "answers": [{"text": "alpha"}]}\n',
            },
            ["--corpus", "c.jsonl", "--testset", "q.jsonl", "--strategies", "parent400"],
            "unknown chunking strategy 'parent400' (did you mean 'parent-400'?)",
        ),
        (
            {
                "c.jsonl": '{"id": "a", "text": "alpha beta"}\n',
                "q.jsonl": '{"id": "q1", "question": "?", "answers": [{"text": "alpha"}]}\n',
                "ragmeter.toml": '[search]\nstrategies = ["mine"]\n'
                '[[strategy]]\nname = "mine"\nkind = "sentences"\n',
            },
            ["--corpus", "c.jsonl", "--testset", "q.jsonl"],
            "chunking strategy 'mine': unknown kind 'sentences' (did you mean 'sentence'?)",
        ),
    ],
)
def test_bad_input_one_line_exit_2_nothing_written(tmp_path, monkeypatch, files, args, message):
    monkeypatch.chdir(tmp_path)
    for name, content in files.items():
        (tmp_path / name).write_text(content, encoding="utf-8")
    result = runner.invoke(app, ["search", *args, "-o", "out"])
    assert result.exit_code == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and message in lines[0], result.stderr
    assert not (tmp_path / "out").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(files)


def test_console_script_entry_point(tmp_path):
    # The installed command, as a user runs it: unknown metric is one line, exit 2.
    result = subprocess.run(
        [sys.executable, "-m", "ragmeter.cli", "compare", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2
    assert "not a ragmeter results directory" in result.stderr


def test_config_file(tmp_path, monkeypatch):
    from ragmeter.cli import example_dir

    ex = example_dir()
    (tmp_path / "ragmeter.toml").write_text(
        f'[corpus]\npath = "{(ex / "posts").as_posix()}"\n'
        f'[testset]\npath = "{(ex / "questions.jsonl").as_posix()}"\n'
        '[search]\nstrategies = ["fixed-120"]\nks = [1, 3]\n'
        "[stats]\nrounds = 500\n"
        '[output]\ndir = "res"\n'
        '[[strategy]]\nname = "fixed-120"\nkind = "fixed"\nsize = 120\n',
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["search"])
    assert result.exit_code == 0, result.output
    meta = json.loads((tmp_path / "res" / "meta.json").read_text())
    assert meta["systems"][0]["strategy"]["size"] == 120
    assert meta["ks"] == [1, 3]
    (tmp_path / "ragmeter.toml").write_text("[search]\nbogus = 1\n", encoding="utf-8")
    result = runner.invoke(app, ["search"])
    assert result.exit_code == 2 and "unknown key [search] bogus" in result.stderr


def test_question_audit_lands_in_results_and_report(demo_results):
    from ragmeter.cli import example_dir

    out, _ = demo_results
    ex = example_dir()
    result = runner.invoke(
        app,
        [
            "questions",
            "audit",
            str(ex / "questions.jsonl"),
            "--corpus",
            str(ex / "posts"),
            "--results",
            str(out),
            "--rounds",
            "500",
        ],
    )
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in (out / "audit" / "flags.jsonl").open()]
    assert len(rows) == 135 and {"id", "flags", "reasons"} <= set(rows[0])
    from ragmeter.report.html import load_audit
    from ragmeter.runs.results import Results

    audit = load_audit(Results(out))
    assert audit["audited"] == 135
    assert audit["flagged"] == sum(1 for r in rows if r["flags"])
    assert "mean copy ratio" in result.stdout


def test_search_shows_design_effects_and_clusters_document_makes_every_view_cluster_aware(
    demo_results, tmp_path
):
    _, result = demo_results
    assert "135 questions in 25 documents (5.4 each)" in result.stdout
    assert "Question-level intervals and comparisons" in result.stdout  # auto, 25 documents
    out = tmp_path / "clustered"
    args = ["search", "--strategies", "fixed,sentence", "--rounds", "500", "--clusters"]
    result = runner.invoke(app, [*args, "document", "-o", str(out)])
    assert result.exit_code == 0, result.output
    text = " ".join(result.stdout.split())
    assert "cluster bootstrap (whole documents, t-widened) intervals" in text
    assert "Cluster-aware intervals and comparisons: asked for (clusters = document)" in text
    assert "sign flips of whole clusters (25 documents)" not in text  # a family of one pair
    assert "sign-flip test of whole clusters" in text
    summary = json.loads((out / "summary.json").read_text())
    assert summary["clusters"]["used"] and summary["comparison_rule"]["clusters"] == 25
    again = runner.invoke(app, ["compare", str(out), "--rounds", "500"])
    assert again.exit_code == 0, again.output
    assert "sign-flip test of whole clusters" in " ".join(again.stdout.split())
    plan = runner.invoke(app, ["plan", str(out), "--rounds", "500"])
    assert plan.exit_code == 0, plan.output
    assert "Questions share documents (5.4 each)" in " ".join(plan.stdout.split())
    none = runner.invoke(app, [*args, "none", "-o", str(tmp_path / "plain")])
    assert none.exit_code == 0, none.output
    assert "documents (5.4 each)" not in none.stdout
    plain = json.loads((tmp_path / "plain" / "summary.json").read_text())
    assert "clusters" not in plain and "clusters" not in plain["comparison_rule"]


def test_compare_points_a_folder_of_trec_runs_to_evaluate(tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "bm25.run").write_text("q1 Q0 d1 1 3.5 bm25\nq1 Q0 d2 2 1.5 bm25\n")
    result = runner.invoke(app, ["compare", str(runs)])
    assert result.exit_code == 2
    said = " ".join(result.stderr.split())
    assert "holds TREC run files" in said and "ragmeter evaluate --qrels QRELS" in said
    assert "ragmeter search` first" not in said


def test_a_mistyped_results_path_says_the_folder_does_not_exist(tmp_path):
    result = runner.invoke(app, ["compare", str(tmp_path / "ragmeter-resluts")])
    assert result.exit_code == 2
    said = " ".join(result.stderr.split())
    assert "ragmeter-resluts: no such folder" in said


def test_chunk_suggests_the_nearest_strategy():
    result = runner.invoke(app, ["chunk", "-s", "parent400"])
    assert result.exit_code == 2
    assert "(did you mean 'parent-400'?)" in " ".join(result.stderr.split())


def test_a_config_without_a_corpus_is_named_when_the_example_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    config = '[search]\nstrategies = ["fixed"]\n[stats]\nrounds = 100\n'
    (tmp_path / "ragmeter.toml").write_text(config)
    result = runner.invoke(app, ["search", "-o", "out"])
    assert result.exit_code == 0, result.output
    said = " ".join(result.stderr.split())
    assert "ragmeter.toml names no corpus: running the shipped example" in said
    assert "No config or corpus given" not in said


def test_compare_and_plan_suggest_the_nearest_metric_and_system(demo_results):
    out, _ = demo_results
    for args, hint in (
        (["compare", str(out), "--metric", "recal@5"], "(did you mean 'recall@5'?)"),
        (["plan", str(out), "--metric", "recal@5"], "(did you mean 'recall@5'?)"),
        (["compare", str(out), "--pairs", "fixd:sentence"], "(did you mean 'fixed'?)"),
    ):
        result = runner.invoke(app, [*args, "--rounds", "200"])
        assert result.exit_code == 2, result.output
        assert hint in " ".join(result.stderr.split()), args


# ``ragmeter`` interrupted (Ctrl-C): exit status 130, the shell's for SIGINT, whether the
# interrupt comes while the command line is read or while a command runs.


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


# Importing the commands is made to wait on a marker, so Ctrl-C lands while they import
# whatever the machine's speed (a timed signal raced a fast start: the command had
# already finished when it came).
SLOW_IMPORT = """
import sys, time, importlib.abc
class Slow(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == "ragmeter.cli.check":
            sys.stderr.write("importing\\n"); sys.stderr.flush(); time.sleep(60)
        return None
sys.meta_path.insert(0, Slow())
sys.argv[0] = "ragmeter"
from ragmeter.cli import main
main()
"""


@pytest.mark.parametrize(
    "command", [["search", "--out", "res"], ["report", "nowhere"], ["check", "a", "b"]]
)
def test_ctrl_c_while_the_command_starts_is_one_line_and_exit_130(tmp_path, command):
    # regression: SIGINT while the commands' modules were imported (the first second or
    # two) printed a KeyboardInterrupt traceback and the process died of the signal (-2)
    import select
    import signal
    import subprocess

    proc = subprocess.Popen(
        [sys.executable, "-c", SLOW_IMPORT, *command],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        ready, _, _ = select.select([proc.stderr], [], [], 60)
        assert ready and proc.stderr.readline() == "importing\n"
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)  # a hang fails here, never blocks the suite
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, (command, err)
    assert "Traceback" not in err and err.strip().splitlines() == ["interrupted"], err

"""The command line as a newcomer meets it: chunk reads the config, plan warns, --version,
plurals, metavars, units, the export command."""

from typer.testing import CliRunner

from ragmeter.cli import app

runner = CliRunner()

CONFIG = """
[corpus]
path = "docs"
[[strategy]]
name = "fixed-7"
kind = "fixed"
size = 7
"""


def write_corpus(root):
    (root / "docs").mkdir()
    (root / "docs" / "a.md").write_text(" ".join(f"alpha{i}" for i in range(20)))
    (root / "docs" / "b.md").write_text(" ".join(f"beta{i}" for i in range(5)))
    (root / "ragmeter.toml").write_text(CONFIG)


def test_chunk_reads_the_config_in_the_current_folder(tmp_path, monkeypatch):
    write_corpus(tmp_path)
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["chunk", "-s", "fixed-7", "--show", "1"])
    assert result.exit_code == 0, result.output
    # The config's corpus (2 documents), cut by the config's strategy: 20 words -> 7+7+6, 5 -> 5.
    assert "fixed-7: 2 documents" in result.stdout
    row = next(line for line in result.stdout.splitlines() if line.startswith("│"))
    assert [cell.strip() for cell in row.split("│")[1:6]] == ["4", "5", "6", "7", "25"]


def test_chunk_takes_an_explicit_config(tmp_path, monkeypatch):
    write_corpus(tmp_path)
    monkeypatch.chdir(tmp_path.parent)
    result = runner.invoke(
        app, ["chunk", "--config", str(tmp_path / "ragmeter.toml"), "-s", "fixed-7", "--show", "0"]
    )
    assert result.exit_code == 0, result.output
    assert "fixed-7: 2 documents" in result.stdout


def test_chunk_without_the_strategy_in_a_config_is_one_line_exit_2(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["chunk", "-s", "fixed-7"])
    assert result.exit_code == 2
    assert "unknown chunking strategy 'fixed-7'" in result.stderr


def test_strategy_list_gives_every_builtin_with_its_size_in_words(tmp_path, monkeypatch):
    write_corpus(tmp_path)
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["chunk", "--list"])
    assert result.exit_code == 0, result.output
    lines = {line.split("│")[1].strip(): line for line in result.stdout.splitlines() if "│" in line}
    from ragmeter.chunking import STRATEGIES

    for name in STRATEGIES:
        assert name in lines
    assert "200 words" in lines["fixed"] and "200 words, 100 shared" in lines["overlap"]
    assert "parents 400 / children 100 words" in lines["parent-400"]
    assert "7 words" in lines["fixed-7"] and "ragmeter.toml" in lines["fixed-7"]


def small_results(tmp_path, monkeypatch):
    """A search on 9 short documents: every system finds every answer at once."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    from test_small_corpora import write_case

    write_case(tmp_path, 9)
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["search", "--strategies", "fixed,sentence", "--rounds", "200"])
    assert result.exit_code == 0, result.output
    return tmp_path / "ragmeter-results"


def test_plan_warns_instead_of_answering_one_question(tmp_path, monkeypatch):
    out = small_results(tmp_path, monkeypatch)
    result = runner.invoke(app, ["plan", str(out), "--rounds", "200"])
    assert result.exit_code == 0, result.output
    assert "fixed, sentence score 100% on every question: recall@5 has no spread" in (result.stderr)
    assert "1 pair of systems score the same on every question (fixed = sentence)" in (
        result.stderr
    )
    rows = [line for line in result.stdout.splitlines() if line.startswith("│")]
    assert any("no spread" in r for r in rows) and any("identical" in r for r in rows)
    # No row claims that one question would do.
    last_cells = [[c.strip() for c in r.split("│")][-2] for r in rows]
    assert "1" not in last_cells


def test_plan_speaks_in_points_only_for_shares(tmp_path, monkeypatch):
    out = small_results(tmp_path, monkeypatch)
    shares = runner.invoke(app, ["plan", str(out), "--rounds", "200"])
    assert "for ± 4 points" in shares.stdout and "difference of 5 points" in shares.stdout
    mrr = runner.invoke(app, ["plan", str(out), "--metric", "mrr@10", "--rounds", "200"])
    assert mrr.exit_code == 0, mrr.output
    assert "points" not in mrr.stdout and "for ± 0.04" in mrr.stdout

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

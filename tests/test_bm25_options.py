"""BM25 options from a [[retriever]] entry: bad values are one-line errors."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from ragmeter.cli import app
from ragmeter.errors import InputError
from ragmeter.retrieval.bm25 import BM25Retriever


def test_unknown_stopwords_are_an_input_error_and_empty_means_none():
    with pytest.raises(InputError, match="bm25 stopwords 'xx' are not known"):
        BM25Retriever(stopwords="xx")
    assert BM25Retriever(stopwords="").stopwords is None
    assert BM25Retriever(stopwords=[]).stopwords is None
    assert BM25Retriever(stopwords="en").stopwords == "en"
    assert BM25Retriever(stopwords=["the", "a"]).stopwords == ["the", "a"]


def test_bad_stopwords_in_the_config_exit_2_with_one_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ragmeter.toml").write_text(
        '[[retriever]]\nname = "b"\nkind = "bm25"\nstopwords = "xx"\n'
        '[search]\nstrategies = ["sentence"]\nretrievers = ["b"]\n',
        encoding="utf-8",
    )
    result = CliRunner().invoke(app, ["search", "--out", "out", "--rounds", "200"])
    assert result.exit_code == 2
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "stopwords 'xx'" in errors[0]
    assert not (tmp_path / "out").exists()

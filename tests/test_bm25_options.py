"""BM25 options from a [[retriever]] entry: bad values are one-line errors."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from typer.testing import CliRunner

from ragmeter.cli import app
from ragmeter.errors import InputError, MissingExtra
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


# ------------------------------------------------------------------------------ stemmer

STEM_TEXTS = [
    "She runs every morning before work.",
    "The committee studies the running costs of the project.",
    "Nothing here about that topic at all.",
    "Runner's studied routes: studying maps, running hills.",
]


def _scores(retriever: BM25Retriever, questions: list[str]) -> np.ndarray:
    return np.array([retriever._model.get_scores(q) for q in retriever._query_terms(questions)])


def test_a_stemmer_matches_words_by_their_stems_and_the_default_does_not():
    plain, stemmed = BM25Retriever(), BM25Retriever(stemmer="english")
    for r in (plain, stemmed):
        r.index(STEM_TEXTS)
    assert _scores(stemmed, ["running"])[0, 0] > 0  # "runs" matches "running"
    assert _scores(plain, ["running"])[0, 0] == 0  # without stemming it does not
    assert _scores(plain, ["running"])[0, 1] > 0
    assert plain.describe().get("stemmer") is None and "stemmer" not in plain.describe()
    assert stemmed.describe()["stemmer"] == "english"


@pytest.mark.parametrize("route", ["index", "chunks", "chunks+questions"])
def test_stemmed_scores_are_bm25s_own_bit_for_bit(route):
    import bm25s
    import Stemmer

    from ragmeter.chunking.strategies import chunk_corpus, make_strategy

    docs = [
        type("D", (), {"id": f"d{i}", "text": " ".join(STEM_TEXTS[i:] + STEM_TEXTS[:i])})()
        for i in range(len(STEM_TEXTS))
    ]
    chunks = chunk_corpus(docs, make_strategy("f", kind="fixed", size=7)).chunks
    texts = [c.text for c in chunks]
    questions = ["running studies", "runner routes and maps", "studying"]
    stem = Stemmer.Stemmer("english")
    model = bm25s.BM25()
    model.index(bm25s.tokenize(texts, stemmer=stem, show_progress=False), show_progress=False)
    expected = np.array(
        [
            model.get_scores(q)
            for q in bm25s.tokenize(questions, stemmer=stem, return_ids=False, show_progress=False)
        ]
    )
    ours = BM25Retriever(stemmer="english")
    if route == "index":
        ours.index(texts)
    else:
        keep = questions if route == "chunks+questions" else None
        ours.index_chunks(chunks, {d.id: d.text for d in docs}, questions=keep)
    assert np.array_equal(_scores(ours, questions), expected)
    assert expected.max() > 0


def test_unknown_stemmer_is_one_line_input_error_and_empty_means_none():
    with pytest.raises(InputError, match="bm25 stemmer 'klingon' is not known") as err:
        BM25Retriever(stemmer="klingon")
    assert "\n" not in str(err.value) and "english" in str(err.value)
    with pytest.raises(InputError, match="bm25 stemmer must be a language"):
        BM25Retriever(stemmer=3)
    assert BM25Retriever(stemmer="").stemmer is None
    assert BM25Retriever().stemmer is None


def test_a_stemmer_without_pystemmer_names_the_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "Stemmer", None)  # import Stemmer now fails
    with pytest.raises(MissingExtra, match=r"pip install PyStemmer"):
        BM25Retriever(stemmer="english")
    assert BM25Retriever().stemmer is None  # the default never imports it


def test_stemmer_from_the_config_is_recorded(tmp_path, monkeypatch):
    from ragmeter.retrieval.registry import make_retriever

    r = make_retriever({"name": "b", "kind": "bm25", "stemmer": "english"})
    assert r.describe()["stemmer"] == "english"
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ragmeter.toml").write_text(
        '[[retriever]]\nname = "b"\nkind = "bm25"\nstemmer = "klingon"\n'
        '[search]\nstrategies = ["fixed"]\nretrievers = ["b"]\n',
        encoding="utf-8",
    )
    result = CliRunner().invoke(app, ["search", "--out", "out", "--rounds", "200"])
    assert result.exit_code == 2
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "stemmer 'klingon'" in errors[0]


# ``ragmeter.retrieval.bm25``: the paths the usual tests do not take: texts bm25s tokenizes
# itself (a character whose lower case is longer), with a stemmer.


def test_a_stemmer_also_applies_where_bm25s_tokenizes_the_texts():
    pytest.importorskip("Stemmer")
    # "İ".lower() is two characters: the token table leaves such a text to bm25s itself
    texts = ["İstanbul runners keep running", "cats sleep all day", "dogs bark at night"]
    assert len(texts[0].lower()) != len(texts[0])
    stemmed = BM25Retriever(stemmer="english")
    stemmed.index(texts)
    ranking = stemmed.rank(["run"], 3)
    assert ranking.ids[0, 0] == 0 and ranking.scores[0, 0] > 0
    plain = BM25Retriever()
    plain.index(texts)
    assert np.all(plain.rank(["run"], 3).scores == 0)  # no stems: "run" is in no text

"""Chunking edge cases, each pinned by an explicit example."""

from __future__ import annotations

from ragmeter.chunking.strategies import STRATEGIES, SentenceStrategy, chunk_corpus, make_strategy
from ragmeter.inputs.corpus import Document


def texts(chunks) -> list[str]:
    return [c.text for c in chunks]


def test_a_sentence_start_inside_the_first_word_is_dropped():
    # syntok starts a sentence at "There", inside the first word "Hi.\u200bThere"
    # (the zero-width space is not whitespace): sentences stay whole words, so the
    # first sentence is "Hi.\u200bThere we go." (3 words), windowed at size 2.
    text = "Hi.\u200bThere we go. Yes."
    assert texts(SentenceStrategy(size=2).split("d", text)) == ["Hi.\u200bThere we", "go.", "Yes."]


def test_a_piece_of_exactly_size_words_stays_whole():
    text = "a b\n\nc d"  # two paragraphs, 4 words
    assert texts(make_strategy("r4", kind="recursive", size=4).split("d", text)) == [text]
    parents = chunk_corpus(
        [Document("d", text)], make_strategy("p4", kind="parent-child", parent_size=4, child_size=4)
    ).parents
    assert texts(parents) == [text]


def test_documented_default_sizes():
    assert STRATEGIES["sentence"].describe() == {
        "name": "sentence",
        "kind": "sentence",
        "size": 200,
        "segmenter": "icu",
    }
    assert STRATEGIES["recursive"].describe() == {
        "name": "recursive",
        "kind": "recursive",
        "size": 200,
        "segmenter": "icu",
    }
    assert make_strategy("parent-child").describe() == {
        "name": "parent-child",
        "kind": "parent-child",
        "parent_size": 400,
        "child_size": 100,
        "segmenter": "icu",
    }
    assert make_strategy("f", kind="fixed").describe()["size"] == 200
    assert make_strategy("o", kind="overlap").describe() == {
        "name": "o",
        "kind": "overlap",
        "size": 200,
        "overlap": 100,
    }

"""Windows and old-Mac line endings chunk exactly like Unix ones.

``\\r\\n`` and a lone ``\\r`` end one line each, like ``\\n``; two of them in a row
(``\\r\\n\\r\\n``, ``\\r\\r``) make a blank line, a paragraph break. So every
strategy cuts a text with CRLF or CR endings at the same words as the same text
with LF endings, and the chunks keep the original characters.
"""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ragmeter.chunking.strategies import STRATEGIES, chunk_corpus, make_strategy, word_spans
from ragmeter.inputs.corpus import Document

# Small sizes make every boundary level matter on short texts.
SMALL = {
    "recursive-3": make_strategy("recursive-3", kind="recursive", size=3),
    "recursive-5": make_strategy("recursive-5", kind="recursive", size=5),
    "sentence-4": make_strategy("sentence-4", kind="sentence", size=4),
    "fixed-3": make_strategy("fixed-3", kind="fixed", size=3),
    "overlap-3": make_strategy("overlap-3", kind="overlap", size=3, overlap=1),
    "parent-6-2": make_strategy("parent-6-2", kind="parent-child", parent_size=6, child_size=2),
    "parent-3-1": make_strategy("parent-3-1", kind="parent-child", parent_size=3, child_size=1),
}
ALL = {**STRATEGIES, **SMALL}
ENDINGS = {"crlf": "\r\n", "cr": "\r"}


def texts(strategy, text: str) -> tuple[list[str], list[str] | None]:
    chunked = chunk_corpus([Document("d", text)], strategy)
    for c in chunked.chunks + (chunked.parents or []):
        assert text[c.start : c.end] == c.text
    parents = None if chunked.parents is None else [p.text for p in chunked.parents]
    return [c.text for c in chunked.chunks], parents


def word_ranges(strategy, text: str) -> tuple[list, list | None]:
    """Each chunk (and parent) as the range of word numbers it holds."""
    starts, ends = word_spans(text)
    number = {int(s): i for i, s in enumerate(starts)}
    last = {int(e): i for i, e in enumerate(ends)}
    chunked = chunk_corpus([Document("d", text)], strategy)

    def ranges(chunks):
        # a chunk may keep the white space around its words (``whole`` keeps the
        # document's full text): compare the words it holds
        return [
            (
                number[c.start + len(c.text) - len(c.text.lstrip())],
                last[c.start + len(c.text.rstrip())],
                c.parent,
            )
            for c in chunks
        ]

    parents = None if chunked.parents is None else ranges(chunked.parents)
    return ranges(chunked.chunks), parents


# --------------------------------------------------------------------------- explicit cases


@pytest.mark.parametrize("ending", ["\n", "\r\n", "\r"])
def test_a_single_line_break_is_not_a_paragraph(ending):
    # paragraph 1 ("a b", "c d") is too big for 3 words and splits at its line;
    # "e" is a paragraph of its own, so it does not join "c d"
    text = f"a b{ending}c d{ending}{ending}e"
    assert texts(SMALL["recursive-3"], text)[0] == ["a b", "c d", "e"]
    # with the single break only (no blank line) the three lines are one
    # paragraph: "c d" and "e" merge
    one_para = f"a b{ending}c d{ending}e"
    assert texts(SMALL["recursive-3"], one_para)[0] == ["a b", f"c d{ending}e"]


@pytest.mark.parametrize("blank", ["\n\n", "\r\n\r\n", "\r\r", "\r\n \r\n", "\n\r\n"])
def test_two_line_ends_make_a_paragraph(blank):
    # as above: "e" stays alone only when the blank line is a paragraph break
    text = f"a b\nc d{blank}e"
    assert texts(SMALL["recursive-3"], text)[0] == ["a b", "c d", "e"]
    assert texts(SMALL["parent-3-1"], text)[1] == ["a b", "c d", "e"]


def test_crlf_keeps_lines_inside_a_paragraph_together():
    for ending in ("\n", "\r\n", "\r"):
        # one paragraph of three lines, 5 words: it fits recursive-5 whole
        text = f"one two{ending}three{ending}four five"
        assert texts(SMALL["recursive-5"], text)[0] == [text]
        # too big for recursive-3: cut at lines, merged back up to 3 words
        assert texts(SMALL["recursive-3"], text)[0] == [f"one two{ending}three", "four five"]
    # the same with a blank line (CRLF CRLF) after line 1: cut there first
    text = "one two\r\n\r\nthree\r\nfour five"
    assert texts(SMALL["recursive-3"], text)[0] == ["one two", "three\r\nfour five"]


def test_parent_child_with_crlf_parents_and_children():
    text = "Cats purr. Dogs bark.\r\nFish swim.\r\n\r\nBirds sing. Bees hum."
    children, parents = texts(SMALL["parent-6-2"], text)
    assert parents == ["Cats purr. Dogs bark.\r\nFish swim.", "Birds sing. Bees hum."]
    assert children == ["Cats purr.", "Dogs bark.", "Fish swim.", "Birds sing.", "Bees hum."]


def test_sentence_chunks_do_not_change_with_line_endings():
    lf = "The cache is warm.\nThe disk is slow.\n\nThe queue is full.\nWrites wait."
    for ending in ("\r\n", "\r"):
        other = lf.replace("\n", ending)
        assert texts(SMALL["sentence-4"], other)[0] == [
            t.replace("\n", ending) for t in texts(SMALL["sentence-4"], lf)[0]
        ]


@pytest.mark.parametrize("name", sorted(ALL))
@pytest.mark.parametrize("ending", sorted(ENDINGS))
def test_every_strategy_cuts_crlf_and_cr_text_like_lf_text(name, ending):
    lf = (
        "Alpha beta gamma.\nDelta epsilon.\n\nZeta eta theta iota.\nKappa.\n"
        "Lambda mu nu xi omicron pi rho.\n\n\nSigma tau.\nUpsilon phi chi psi omega.\n"
    ) * 3
    other = lf.replace("\n", ENDINGS[ending])
    assert word_ranges(ALL[name], other) == word_ranges(ALL[name], lf)


# --------------------------------------------------------------------------- property

_words = st.lists(st.sampled_from(["a", "bb", "Ccc.", "dd", "E.", "ff"]), min_size=1, max_size=4)
_breaks = st.sampled_from([" ", "\n", "\n\n", "\n\n\n", "\n \n"])
# strategies that cut at lines and paragraphs (recursive, parent-child) or at words only
LINE_AWARE = ("recursive-3", "recursive-5", "parent-3-1", "parent-6-2", "fixed-3")


def _join(pieces) -> str:
    return "".join(" ".join(words) + brk for words, brk in pieces)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(_words, _breaks), min_size=1, max_size=10))
@example([(["a", "bb"], "\n"), (["dd"], "\n\n"), (["ff"], " ")])  # CRLF is one line end
@example([(["a"], "\n"), (["bb"], "\n"), (["dd"], "\n\n"), (["ff"], " ")])
@example([(["a"], "\n \n"), (["bb", "dd"], "\n\n\n"), (["ff"], "\n")])
def test_crlf_never_changes_the_cut(pieces):
    lf = _join(pieces)
    crlf = lf.replace("\n", "\r\n")
    for name in (*LINE_AWARE, "sentence-4"):
        assert word_ranges(SMALL[name], crlf) == word_ranges(SMALL[name], lf), name


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(_words, _breaks), min_size=1, max_size=10))
@example([(["a"], "\n"), (["bb"], "\n"), (["dd"], "\n\n"), (["ff"], " ")])
def test_lone_cr_never_changes_the_cut_of_line_and_word_strategies(pieces):
    lf = _join(pieces)
    cr = lf.replace("\n", "\r")
    for name in (*LINE_AWARE, "sentence-4"):
        assert word_ranges(SMALL[name], cr) == word_ranges(SMALL[name], lf), name


def test_lone_cr_paragraphs_split_sentences_like_lf():
    sentence_2 = make_strategy("sentence-2", kind="sentence", size=2)
    lf = "a\nbb\ndd\n\nff"
    assert texts(sentence_2, lf)[0] == ["a\nbb", "dd", "ff"]
    assert texts(sentence_2, lf.replace("\n", "\r"))[0] == ["a\rbb", "dd", "ff"]

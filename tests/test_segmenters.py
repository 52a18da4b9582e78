"""The sentence segmenter option: ICU (the default), syntok or blingfire."""

from __future__ import annotations

import sys
from dataclasses import dataclass

import blingfire
import pytest
from conftest import EXAMPLE
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ragmeter.chunking import segment as _segment
from ragmeter.chunking import strategies as chunking
from ragmeter.chunking.strategies import (
    ParentChildStrategy,
    RecursiveStrategy,
    SentenceStrategy,
    chunk_corpus,
    make_strategy,
    prepare_sentences,
    sentence_spans,
)
from ragmeter.errors import InputError, MissingExtra


@dataclass(frozen=True)
class Doc:
    id: str
    text: str


_PIECES = st.sampled_from(
    [" ", "  ", "\n", "\t", "\u00a0", "\u2028", "\u3000", "\u200b", ". ", "! ", "? ", "Mr. ",
     "Dr. ", "U.S. ", "e.g. ", "3.14", "é", "Straße", "日本語。", "😀", "👍🏽", "e\u0301",
     "Привет. ", "Hello", "world", "The", "cat", "sat", "(", ")", '"', "“", "”"]
)  # fmt: skip
paragraphs = st.lists(st.one_of(_PIECES, st.text(max_size=4)), max_size=30).map("".join)


def _wrapper_spans(paragraph: str) -> list[tuple[int, int]]:
    """blingfire's own Python wrapper: offsets mapped back to characters byte by byte."""
    _, offsets = blingfire.text_to_sentences_and_offsets(paragraph)
    out = []
    for a, b in offsets:  # with whitespace around a sentence left out, as ragmeter does
        piece = paragraph[a:b]
        a, b = a + len(piece) - len(piece.lstrip()), b - len(piece) + len(piece.rstrip())
        if a < b:
            out.append((a, b))
    return out


@settings(max_examples=300, deadline=None)
@given(paragraphs.filter(lambda p: p and "\ud800" not in p))
@example("Ünïcödé straße. Zwei Sätze hier! 日本語の文。 Third one.  \u2028 Fourth\u00a0one. 😀 x")
def test_blingfire_offsets_are_its_own_wrappers_in_characters(paragraph):
    flat = _segment.blingfire_sentences(paragraph)
    ours = list(zip(flat[0::2], flat[1::2], strict=True))
    assert ours == _wrapper_spans(paragraph)
    for a, b in ours:
        assert 0 <= a < b <= len(paragraph)
        text = paragraph[a:b]
        assert text == text.strip()


@settings(max_examples=200, deadline=None)
@given(st.lists(paragraphs, max_size=4).map("\n\n".join))
def test_blingfire_sentences_lie_in_the_text_and_in_order(text):
    spans = sentence_spans(text, "blingfire")
    for (_, b), (c, _) in zip(spans, spans[1:], strict=False):
        assert b <= c
    for a, b in spans:
        assert 0 <= a < b <= len(text) and text[a:b].strip() == text[a:b]


def test_segmenters_break_apart_and_each_is_cached_apart():
    text = "Dr. Who came home. Then he left again."
    chunking._CACHE.clear()
    syntok_breaks = chunking._CACHE.sentence_breaks(text, segmenter="syntok").tolist()
    bf_breaks = chunking._CACHE.sentence_breaks(text, segmenter="blingfire").tolist()
    icu_breaks = chunking._CACHE.sentence_breaks(text, segmenter="icu").tolist()
    assert syntok_breaks == [4]  # "Then"
    assert bf_breaks == icu_breaks == [1, 4]  # both also end a sentence at "Dr."
    assert chunking._CACHE.get(text).sentence_breaks.tolist() == icu_breaks  # the default
    assert chunking._CACHE.get(text, "syntok").sentence_breaks.tolist() == syntok_breaks
    for segmenter in ("blingfire", "icu"):
        chunks = SentenceStrategy(size=3, segmenter=segmenter).split("d", text)
        assert [c.text for c in chunks] == ["Dr.", "Who came home.", "Then he left", "again."]
    chunks = SentenceStrategy(size=3, segmenter="syntok").split("d", text)
    assert [c.text for c in chunks] == ["Dr. Who came", "home.", "Then he left", "again."]
    chunking._CACHE.clear()


def test_chunk_corpus_prepares_blingfire_in_this_process(monkeypatch):
    monkeypatch.setattr(chunking, "PARALLEL_MIN_CHARS", 0)  # syntok would use workers here
    monkeypatch.setattr(chunking, "BATCH_CHARS", 5)
    docs = [Doc("a", "One two. Three four!\n\nFive six? Seven."), Doc("b", "Eight. Nine ten.")]

    class NoWorkers:
        name, workers = "refuses", 4

        def map(self, *args, **kwargs):  # blingfire never goes to workers
            raise AssertionError("blingfire segmented in workers")

    chunking._CACHE.clear()
    with chunking.run_scope():
        prepare_sentences([d.text for d in docs], NoWorkers(), segmenter="blingfire")
        assert all(chunking._CACHE.has(d.text, "blingfire") for d in docs)
        assert not any(chunking._CACHE.has(d.text, "syntok") for d in docs)  # left alone
        got = chunk_corpus(docs, make_strategy("s", kind="sentence", size=2, segmenter="blingfire"))
    assert [c.text for c in got.chunks] == [
        "One two.",
        "Three four!",
        "Five six?",
        "Seven.",
        "Eight.",
        "Nine ten.",
    ]
    for c in got.chunks:
        assert {d.id: d.text for d in docs}[c.doc_id][c.start : c.end] == c.text
    chunking._CACHE.clear()


def test_segmenter_is_recorded_unless_syntok_so_earlier_results_keep_their_description():
    # a description without a segmenter is syntok's: every result made before the choice
    assert "segmenter" not in make_strategy("sentence", segmenter="syntok").describe()
    syntok = make_strategy("parent-400", segmenter="syntok")
    assert "segmenter" not in syntok.describe()
    assert make_strategy(**{"segmenter": chunking.UNNAMED_SEGMENTER, **syntok.describe()}) == syntok
    assert make_strategy("sentence").describe()["segmenter"] == "icu"  # the default, named
    for segmenter in ("icu", "blingfire"):
        d = make_strategy("parent-400", segmenter=segmenter).describe()
        assert d["segmenter"] == segmenter
        assert make_strategy(**d) == ParentChildStrategy("parent-400", 400, 100, segmenter)
        assert RecursiveStrategy(segmenter=segmenter).describe()["segmenter"] == segmenter


def test_unknown_segmenter_is_a_one_line_input_error():
    with pytest.raises(
        InputError, match="unknown segmenter 'spacy'; valid: icu, syntok, blingfire"
    ):
        make_strategy("s", kind="sentence", segmenter="spacy")
    with pytest.raises(InputError, match="fixed.*unknown parameter.*segmenter"):
        make_strategy("fixed", segmenter="blingfire")  # fixed windows have no sentences


def test_blingfire_missing_names_the_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "blingfire", None)  # import blingfire now fails
    monkeypatch.setattr(_segment, "_LIB", [])  # not loaded yet
    with pytest.raises(MissingExtra, match=r"pip install blingfire"):
        SentenceStrategy(segmenter="blingfire")
    assert SentenceStrategy().segmenter == "icu"  # the default needs no extra


def test_icu_missing_names_the_install_and_syntok(monkeypatch):
    monkeypatch.setitem(sys.modules, "icu4py.breakers", None)  # import icu4py now fails
    monkeypatch.setattr(_segment, "_ICU", [])  # not loaded yet
    with pytest.raises(MissingExtra, match=r"pip install icu4py.*segmenter = 'syntok'"):
        SentenceStrategy()
    assert SentenceStrategy(segmenter="syntok").segmenter == "syntok"


def test_a_run_of_blingfire_strategies_never_runs_syntok(monkeypatch):

    from ragmeter.inputs.config import Config
    from ragmeter.inputs.corpus import load_corpus
    from ragmeter.inputs.testset import load_testset
    from ragmeter.runs.pipeline import run_search

    def refuse(*args, **kwargs):
        raise AssertionError("syntok segmented a run that asked for blingfire")

    example = EXAMPLE
    docs = load_corpus(example / "posts")
    testset = load_testset(example / "questions.jsonl", docs)
    monkeypatch.setattr(_segment.segmenter, "segment", refuse)
    chunking._CACHE.clear()
    custom = (
        {"name": "sb", "kind": "sentence", "segmenter": "blingfire"},
        {"name": "pb", "kind": "parent-child", "segmenter": "blingfire"},
    )
    run = run_search(
        Config(strategies=("sb", "pb", "fixed"), custom_strategies=custom, rounds=200),
        docs,
        testset,
    )
    assert [s.strategy.get("segmenter") for s in run.systems] == ["blingfire", "blingfire", None]
    assert all(s.scores["recall@5"].mean() > 0.5 for s in run.systems)
    chunking._CACHE.clear()


def test_segmenter_from_the_config_and_a_bad_one_exits_2_with_one_line(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from ragmeter.cli import app

    monkeypatch.chdir(tmp_path)
    (tmp_path / "ragmeter.toml").write_text(
        '[[strategy]]\nname = "s"\nkind = "sentence"\nsegmenter = "spacy"\n'
        '[search]\nstrategies = ["s"]\n',
        encoding="utf-8",
    )
    result = CliRunner().invoke(app, ["search", "--out", "out", "--rounds", "200"])
    assert result.exit_code == 2
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "unknown segmenter 'spacy'" in errors[0]
    assert not (tmp_path / "out").exists()


# ``ragmeter.chunking.segment``: blingfire's sentences never begin or end with whitespace, even
# where blingfire itself keeps a NEL or an Ogham space in the sentence.


def test_blingfire_sentences_leave_out_whitespace_blingfire_keeps():
    # blingfire counts NEL (U+0085) and the Ogham space (U+1680) as part of the sentence they
    # begin or end; ragmeter's sentences start at the first letter and end after the last
    text = "\x85Hello there. Bye now.\u1680"
    assert sentence_spans(text, "blingfire") == [(1, 13), (14, 22)]
    assert _segment.blingfire_sentences("\u1680\u1680Hello there.") == (2, 14)


def _icu_reference(paragraph: str) -> list[tuple[int, int]]:
    """ICU's own sentences of ``paragraph`` (no line ends, no lone surrogates), mapped from
    its UTF-16 offsets to characters by decoding the units before each, whitespace left out."""
    from icu4py.breakers import SentenceBreaker

    units = paragraph.encode("utf-16-le")
    out = []
    for a, b in SentenceBreaker(paragraph, "en").segments():
        a = len(units[: 2 * a].decode("utf-16-le"))
        b = len(units[: 2 * b].decode("utf-16-le"))
        piece = paragraph[a:b]
        a, b = a + len(piece) - len(piece.lstrip()), b - len(piece) + len(piece.rstrip())
        if a < b:
            out.append((a, b))
    return out


_LINE_ENDS = "\n\r\x85\u2028\u2029"


@settings(max_examples=300, deadline=None)
@given(paragraphs.filter(lambda p: not any(c in p for c in _LINE_ENDS) and "\ud800" not in p))
@example("Ünïcödé straße. Zwei Sätze hier! 日本語の文。 Third one. 😀 Fourth\u00a0one. 👍🏽 x. Y")
def test_icu_offsets_are_its_own_segments_in_characters(paragraph):
    flat = _segment.icu_sentences(paragraph)
    assert list(zip(flat[0::2], flat[1::2], strict=True)) == _icu_reference(paragraph)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(paragraphs, st.sampled_from(list(_LINE_ENDS) + ["\ud800"]))).map("".join))
@example("One line\nwraps here. Next\u2028sentence! A lone \ud800 surrogate. 😀 End.")
def test_icu_sentences_cover_every_word_of_any_paragraph_in_order(paragraph):
    flat = _segment.icu_sentences(paragraph)
    spans = list(zip(flat[0::2], flat[1::2], strict=True))
    covered = set()
    for (_, b), (c, _) in zip(spans, spans[1:], strict=False):
        assert b <= c
    for a, b in spans:
        assert 0 <= a < b <= len(paragraph) and paragraph[a:b].strip() == paragraph[a:b]
        covered.update(range(a, b))
    assert {i for i, ch in enumerate(paragraph) if not ch.isspace()} <= covered


def test_icu_reads_a_line_break_inside_a_paragraph_as_a_space():
    text = "The table below\nshows the totals. Then\r\nit ends."
    spans = sentence_spans(text, "icu")
    assert [text[a:b] for a, b in spans] == [
        "The table below\nshows the totals.",
        "Then\r\nit ends.",
    ]


@pytest.mark.parametrize("segmenter", ["icu", "syntok", "blingfire"])
@pytest.mark.parametrize("kind", ["sentence", "recursive", "parent-child"])
def test_every_segmenter_with_every_kind_keeps_exact_offsets_and_names_itself(kind, segmenter):
    docs = [
        Doc(p.name, p.read_text(encoding="utf-8")) for p in sorted((EXAMPLE / "posts").iterdir())
    ]
    texts = {d.id: d.text for d in docs}
    strategy = make_strategy("s", kind=kind, segmenter=segmenter)
    chunking._CACHE.clear()
    got = chunk_corpus(docs, strategy)
    for c in [*got.chunks, *(got.parents or [])]:
        assert texts[c.doc_id][c.start : c.end] == c.text and c.text == c.text.strip()
    assert ("segmenter" in strategy.describe()) is (segmenter != "syntok")
    again = make_strategy(**{"segmenter": chunking.UNNAMED_SEGMENTER, **strategy.describe()})
    assert again == strategy
    chunking._CACHE.clear()

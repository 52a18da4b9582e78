"""Tests for ragmeter.chunking.strategies: exact offsets, coverage, sizes and each
strategy's shape."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from syntok import segmenter

from ragmeter.chunking.strategies import (
    _CACHE,
    KINDS,
    STRATEGIES,
    Chunk,
    Chunking,
    FixedStrategy,
    OverlapStrategy,
    ParentChildStrategy,
    RecursiveStrategy,
    SentenceStrategy,
    WholeStrategy,
    _batches,
    chunk_corpus,
    make_strategy,
    sentence_spans,
    word_spans,
)
from ragmeter.errors import InputError


@dataclass(frozen=True)
class Doc:
    id: str
    text: str


# --------------------------------------------------------------------------- text generators

_PIECES = [
    " ", "  ", "   ", "\t", "\n", "\n\n", "\n \n", "\n\t\n\n", "\r\n", "\r", "\r\n\r\n",
    "\u00a0", "\u3000", "\u2028", "\x1c", "\u200b", "\ud800",
    ".", ". ", "! ", "? ", "...", ",", ";", ":", "“", "”", "‘", "’", "'", '"', "(", ")", "[",
    "-", "—", "_", "é", "déjà", "naïve", "Straße", "😀", "👍🏽", "e\u0301", "日本語", "Привет",
    "Mr.", "Dr.", "e.g.", "U.S.", "3.14", "don't", "n’t", "A.", "Hello", "world", "The", "cat",
]  # fmt: skip

_word = st.text(
    alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", min_size=1, max_size=8
)
_sentence = st.lists(_word, min_size=1, max_size=12).map(lambda ws: " ".join(ws) + ". ")
_long_sentence = st.lists(_word, min_size=15, max_size=40).map(lambda ws: " ".join(ws) + ".")
_token = st.one_of(
    st.sampled_from(_PIECES),
    _word,
    _word.map(lambda w: w + " "),
    _sentence,
    _long_sentence,
    st.text(max_size=6),
)
_LOWER = "abcdefghijklmnopqrstuvwxyz"
_LINE_SEPS = ["\n", "\r\n", " \n", "\n\t", "\r", "\u00a0\n"]
_PARA_SEPS = ["\n\n", "\n \n", "\r\n\r\n", "\n\n\n", "\n\t\n  ", "\r\r"]


def _build(rng: random.Random) -> str:
    """A document of paragraphs of lines of sentences, words, unicode pieces and noise."""

    def word() -> str:
        w = "".join(rng.choice(_LOWER) for _ in range(rng.randint(1, 8)))
        return w.capitalize() if rng.random() < 0.3 else w

    def sentence(lo: int, hi: int) -> str:
        return " ".join(word() for _ in range(rng.randint(lo, hi))) + rng.choice(".!?") + " "

    def noise() -> str:
        top = 0x3001 if rng.random() < 0.7 else 0x110000
        return "".join(chr(rng.randrange(top)) for _ in range(rng.randint(1, 4)))

    out = [rng.choice(["", " ", "\n", "\n\n  "])]
    for _ in range(rng.randint(0, 5)):
        for _ in range(rng.randint(1, 5)):
            for _ in range(rng.randint(1, 10)):
                r = rng.random()
                if r < 0.3:
                    out.append(word() + rng.choice([" ", " ", "  ", "\t", ""]))
                elif r < 0.55:
                    out.append(sentence(1, 12))
                elif r < 0.6:
                    out.append(sentence(15, 40))
                elif r < 0.85:
                    out.append(rng.choice(_PIECES))
                else:
                    out.append(noise())
            out.append(rng.choice(_LINE_SEPS))
        out.append(rng.choice(_PARA_SEPS))
    return "".join(out)


# structured documents built from one drawn seed (cheap to draw), and free-form noise that
# hypothesis can shrink
texts = st.one_of(
    st.integers(min_value=0, max_value=2**32 - 1).map(lambda seed: _build(random.Random(seed))),
    st.lists(_token, max_size=30).map("".join),
)
sizes = st.integers(min_value=1, max_value=12)

SETTINGS = settings(max_examples=150, deadline=None)


# --------------------------------------------------------------------------- helpers


def words(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in re.finditer(r"\S+", text)]


def word_ranges(text: str, chunks: list[Chunk]) -> list[tuple[int, int]]:
    """Each chunk as a half-open range of word indices; fails if it does not align with words."""
    ws = words(text)
    by_start = {s: i for i, (s, _) in enumerate(ws)}
    by_end = {e: i for i, (_, e) in enumerate(ws)}
    out = []
    for c in chunks:
        assert c.start in by_start, c
        assert c.end in by_end, c
        out.append((by_start[c.start], by_end[c.end] + 1))
    return out


def n_words(text: str) -> int:
    return len(re.findall(r"\S+", text))


def check_spans(text: str, chunks: list[Chunk], doc_id: str = "d", trimmed: bool = True) -> None:
    """Exact offsets, no edge whitespace (unless not ``trimmed``), in order, every
    non-space character covered."""
    for c in chunks:
        assert c.doc_id == doc_id
        assert isinstance(c.start, int) and isinstance(c.end, int)
        assert 0 <= c.start < c.end <= len(text)
        assert text[c.start : c.end] == c.text
        if trimmed:
            assert not c.text[0].isspace() and not c.text[-1].isspace()
    for a, b in zip(chunks, chunks[1:], strict=False):
        assert (a.start, a.end) < (b.start, b.end)
    covered = np.zeros(len(text) + 1, dtype=np.int64)
    for c in chunks:
        covered[c.start] += 1
        covered[c.end] -= 1
    covered = np.cumsum(covered)[: len(text)]
    for i, ch in enumerate(text):
        if not ch.isspace():
            assert covered[i] > 0, (i, ch)


def check_partition(text: str, chunks: list[Chunk]) -> list[tuple[int, int]]:
    """Chunks are consecutive, non-overlapping runs of words covering every word."""
    ranges = word_ranges(text, chunks)
    expected_start = 0
    for a, b in ranges:
        assert a == expected_start and b > a
        expected_start = b
    assert expected_start == n_words(text)
    return ranges


def gap_breaks(text: str, min_newlines: int) -> set[int]:
    """Words preceded by at least ``min_newlines`` line terminators (1: lines, 2: paragraphs)."""
    ws = words(text)
    out = set()
    for i in range(1, len(ws)):
        gap = text[ws[i - 1][1] : ws[i][0]]
        if len(re.findall(r"\r\n|\r|\n", gap)) >= min_newlines:
            out.add(i)
    return out


def sentence_starts(text: str, segmenter: str = "syntok") -> set[int]:
    """Words that begin a sentence of ``segmenter`` (a start inside a word does not count)."""
    ws = words(text)
    starts = {s: i for i, (s, _) in enumerate(ws)}
    out = set()
    for s, _ in sentence_spans(text, segmenter):
        if s in starts:
            out.add(starts[s])
        elif not any(a < s < b for a, b in ws):
            out.add(next((i for i, (a, _) in enumerate(ws) if a > s), len(ws)))
    return {i for i in out if 0 < i < len(ws)}


def units(n: int, breaks: set[int]) -> list[tuple[int, int]]:
    b = [0, *sorted(breaks), n]
    return list(zip(b[:-1], b[1:], strict=True))


def check_whole_or_inside(ranges: list[tuple[int, int]], unit_spans: list[tuple[int, int]]):
    """Each range lies inside one unit, or is a run of whole units."""
    starts = {a for a, _ in unit_spans}
    ends = {b for _, b in unit_spans}
    for a, b in ranges:
        inside = any(ua <= a and b <= ub for ua, ub in unit_spans)
        assert inside or (a in starts and b in ends), (a, b)


# --------------------------------------------------------------------------- building blocks


def test_whitespace_table_matches_str_isspace():
    from ragmeter.chunking.doc_index import _WHITESPACE

    assert list(_WHITESPACE) == [c for c in range(0x110000) if chr(c).isspace()]


@SETTINGS
@given(texts)
def test_word_spans_match_regex(text):
    starts, ends = word_spans(text)
    assert list(zip(starts.tolist(), ends.tolist(), strict=True)) == words(text)


@SETTINGS
@given(texts)
def test_syntok_offsets_are_code_points_and_match_analyze(text):
    # syntok's own segmentation, token by token: offsets index the original string. A lone
    # \r is a line end to ragmeter (syntok knows only \n and \r\n): read as \n, same length.
    seen = re.sub(r"\r(?!\n)", "\n", text)
    reference = []
    for paragraph in segmenter.analyze(seen):
        for sentence in paragraph:
            toks = [t for t in sentence if t.value]
            for t in toks:
                assert text[t.offset : t.offset + len(t.value)] == t.value
            if toks:
                reference.append((toks[0].offset, toks[-1].offset + len(toks[-1].value)))
    spans = sentence_spans(text, "syntok")
    assert spans == reference
    # as word indices: a sentence start inside a word is dropped, so sentences are whole words
    breaks = _CACHE.get(text, "syntok").sentence_breaks.tolist()
    assert breaks == sorted(sentence_starts(text, "syntok"))
    for (_, e), (s, _) in zip(spans, spans[1:], strict=False):
        assert e <= s


@pytest.mark.parametrize("segmenter", ["icu", "syntok"])  # blingfire: tests/test_segmenters.py
def test_sentence_offsets_are_code_points_with_non_ascii(segmenter):
    text = "He said “hello” — café 😀 ok. Next 😀😀 sentence here! Ça va? Oui.\n\nNew “para”."
    spans = sentence_spans(text, segmenter)
    assert [text[s:e] for s, e in spans] == [
        "He said “hello” — café 😀 ok.",
        "Next 😀😀 sentence here!",
        "Ça va?",
        "Oui.",
        "New “para”.",
    ]


# --------------------------------------------------------------------------- properties


@SETTINGS
@given(texts)
def test_whole_property(text):
    chunks = WholeStrategy().split("d", text)
    check_spans(text, chunks, trimmed=False)
    if text.strip():
        # the full text, trailing newline included: a whole-document span fits inside
        assert len(chunks) == 1 and chunks[0].text == text
        assert (chunks[0].start, chunks[0].end) == (0, len(text))
    else:
        assert chunks == []


@SETTINGS
@given(texts, sizes)
def test_fixed_property(text, size):
    chunks = FixedStrategy(size=size).split("d", text)
    check_spans(text, chunks)
    ranges = check_partition(text, chunks)
    n = n_words(text)
    assert ranges == [(a, min(a + size, n)) for a in range(0, n, size)]


@SETTINGS
@given(texts, sizes, st.data())
def test_overlap_property(text, size, data):
    overlap = data.draw(st.integers(0, size - 1))
    chunks = OverlapStrategy(size=size, overlap=overlap).split("d", text)
    check_spans(text, chunks)
    ranges = word_ranges(text, chunks)
    n = n_words(text)
    if n == 0:
        assert ranges == []
        return
    assert ranges[0][0] == 0 and ranges[-1][1] == n
    for a, b in ranges:
        assert 0 < b - a <= size
    for (a1, b1), (a2, b2) in zip(ranges, ranges[1:], strict=False):
        assert b1 - a1 == size  # only the last window may be short
        assert a2 == a1 + size - overlap
        assert b1 - a2 == overlap  # consecutive windows share exactly `overlap` words
        assert b2 > b1  # never wholly inside the previous window


@pytest.mark.parametrize("segmenter", ["syntok", "blingfire"])
@SETTINGS
@given(texts, sizes)
def test_sentence_property(segmenter, text, size):
    chunks = SentenceStrategy(size=size, segmenter=segmenter).split("d", text)
    check_spans(text, chunks)
    ranges = check_partition(text, chunks)
    n = n_words(text)
    sents = units(n, sentence_starts(text, segmenter))
    sent_of = {}
    for k, (a, b) in enumerate(sents):
        for i in range(a, b):
            sent_of[i] = k
    for a, b in ranges:
        assert b - a <= size
        sa, sb = sents[sent_of[a]]
        # starts at a sentence start, or at a size-word window inside an oversize sentence
        assert a == sa or (sb - sa > size and (a - sa) % size == 0)
        ea, eb = sents[sent_of[b - 1]]
        assert b == eb or (eb - ea > size and (b - ea) % size == 0)
    # greedy: the next chunk's first sentence would not have fitted
    for (a1, b1), (a2, _) in zip(ranges, ranges[1:], strict=False):
        s_next = sents[sent_of[a2]]
        if s_next[0] == a2 and s_next[1] - s_next[0] <= size:
            prev = sents[sent_of[b1 - 1]]
            if prev[1] == b1 and prev[1] - prev[0] <= size:
                assert (b1 - a1) + (s_next[1] - s_next[0]) > size


@SETTINGS
@given(texts, sizes)
@example("a b\r\nc d\r\n\r\ne", 3)  # found by hypothesis: CRLF counted as a paragraph break
def test_recursive_property(text, size):
    chunks = RecursiveStrategy(size=size).split("d", text)
    check_spans(text, chunks)
    ranges = check_partition(text, chunks)
    n = n_words(text)
    assert all(b - a <= size for a, b in ranges)
    paragraphs = units(n, gap_breaks(text, 2))
    check_whole_or_inside(ranges, paragraphs)
    check_whole_or_inside(ranges, units(n, gap_breaks(text, 1)))
    if all(b - a <= size for a, b in paragraphs):
        # every paragraph fits: chunks are runs of whole paragraphs, merged greedily
        para_starts = {a: (a, b) for a, b in paragraphs}
        assert all(a in para_starts for a, _ in ranges)
        for (a1, b1), (a2, _) in zip(ranges, ranges[1:], strict=False):
            pa, pb = para_starts[a2]
            assert (b1 - a1) + (pb - pa) > size


@pytest.mark.parametrize("segmenter", ["syntok", "blingfire"])
@SETTINGS
@given(texts, sizes, sizes)
def test_parent_child_property(segmenter, text, parent_size, child_size):
    strategy = ParentChildStrategy(
        parent_size=parent_size, child_size=child_size, segmenter=segmenter
    )
    children, parents = strategy.split("d", text)
    check_spans(text, children)
    check_spans(text, parents)
    check_partition(text, children)
    recursive = RecursiveStrategy(size=parent_size, segmenter=segmenter)
    assert parents == recursive.split("d", text)
    assert all(p.parent is None for p in parents)
    for c in children:
        assert c.parent is not None and 0 <= c.parent < len(parents)
        p = parents[c.parent]
        assert p.start <= c.start and c.end <= p.end
        assert n_words(c.text) <= child_size
    assert [c.parent for c in children] == sorted(c.parent for c in children)
    # the children of each parent are exactly its words, packed by sentence
    for k, p in enumerate(parents):
        mine = [c for c in children if c.parent == k]
        assert mine and mine[0].start == p.start and mine[-1].end == p.end
        sub = p.text
        rel = [Chunk("d", c.start - p.start, c.end - p.start, c.text) for c in mine]
        check_partition(sub, rel)


@SETTINGS
@given(st.lists(texts, min_size=1, max_size=4), st.sampled_from(sorted(STRATEGIES)))
def test_chunk_corpus_orders_and_maps_parents(doc_texts, name):
    docs = [Doc(f"doc{i}", t) for i, t in enumerate(doc_texts)]
    strategy = make_strategy(name, **_small(name))
    result = chunk_corpus(docs, strategy)
    assert isinstance(result, Chunking) and result.strategy == name
    order = {d.id: i for i, d in enumerate(docs)}
    keys = [(order[c.doc_id], c.start, c.end) for c in result.chunks]
    assert keys == sorted(keys)
    for d in docs:
        check_spans(d.text, [c for c in result.chunks if c.doc_id == d.id], d.id, name != "whole")
    if isinstance(strategy, ParentChildStrategy):
        assert result.parents is not None and result.items is result.parents
        for d in docs:
            check_spans(d.text, [p for p in result.parents if p.doc_id == d.id], d.id)
        for c in result.chunks:
            p = result.parents[c.parent]
            assert p.doc_id == c.doc_id and p.start <= c.start and c.end <= p.end
    else:
        assert result.parents is None and result.items is result.chunks
        assert all(c.parent is None for c in result.chunks)


def _small(name: str) -> dict:
    kind = STRATEGIES[name].kind
    return {
        "whole": {},
        "fixed": {"size": 3},
        "overlap": {"size": 4, "overlap": 2},
        "sentence": {"size": 5},
        "recursive": {"size": 5},
        "parent-child": {"parent_size": 6, "child_size": 2},
    }[kind]


# --------------------------------------------------------------------------- hand-computed cases


def texts_of(chunks):
    return [c.text for c in chunks]


def test_fixed_windows():
    text = "  a b\tc\nd   e f g  "
    assert texts_of(FixedStrategy(size=3).split("d", text)) == ["a b\tc", "d   e f", "g"]
    assert texts_of(FixedStrategy(size=7).split("d", text)) == ["a b\tc\nd   e f g"]
    assert FixedStrategy(size=3).split("d", " \n\t ") == []


def test_overlap_windows():
    seven = "w1 w2 w3 w4 w5 w6 w7"
    assert texts_of(OverlapStrategy(size=4, overlap=2).split("d", seven)) == [
        "w1 w2 w3 w4",
        "w3 w4 w5 w6",
        "w5 w6 w7",
    ]
    # the window starting at w5 would lie wholly inside the previous one: not emitted
    six = "w1 w2 w3 w4 w5 w6"
    assert texts_of(OverlapStrategy(size=4, overlap=2).split("d", six)) == [
        "w1 w2 w3 w4",
        "w3 w4 w5 w6",
    ]
    assert texts_of(OverlapStrategy(size=3, overlap=0).split("d", six)) == [
        "w1 w2 w3",
        "w4 w5 w6",
    ]
    assert texts_of(OverlapStrategy(size=10, overlap=5).split("d", six)) == [six]


def test_sentence_packing():
    text = "One two three. Four five. Six seven eight nine. Ten."
    pack = {s: texts_of(SentenceStrategy(size=s).split("d", text)) for s in (4, 5, 6, 10)}
    assert pack[4] == ["One two three.", "Four five.", "Six seven eight nine.", "Ten."]
    assert pack[5] == ["One two three. Four five.", "Six seven eight nine. Ten."]
    assert pack[6] == ["One two three. Four five.", "Six seven eight nine. Ten."]
    assert pack[10] == [text]


def test_sentence_longer_than_size_is_windowed():
    text = "Hi there. Alpha beta gamma delta epsilon zeta eta. Bye now."
    assert texts_of(SentenceStrategy(size=3).split("d", text)) == [
        "Hi there.",
        "Alpha beta gamma",
        "delta epsilon zeta",
        "eta.",
        "Bye now.",
    ]


def test_sentence_start_inside_a_word_is_dropped():
    # syntok splits at the zero-width space, which is not whitespace: "beta.\u200bGamma" is one
    # word, so the first sentence keeps all of it (3 words) and is windowed at size 2.
    text = "Alpha beta.\u200bGamma delta. Eps."
    spans = sentence_spans(text, "syntok")
    assert [text[s:e] for s, e in spans] == ["Alpha beta.", "Gamma delta.", "Eps."]
    assert texts_of(SentenceStrategy(size=2, segmenter="syntok").split("d", text)) == [
        "Alpha beta.\u200bGamma",
        "delta.",
        "Eps.",
    ]


def test_sentence_offsets_with_unicode():
    text = "  “Café” is 😀 open.  Ça va?\u3000Très bien."
    chunks = SentenceStrategy(size=3).split("d", text)
    assert texts_of(chunks) == ["“Café” is 😀", "open.", "Ça va?", "Très bien."]
    assert all(text[c.start : c.end] == c.text for c in chunks)


def test_recursive_prefers_paragraphs():
    text = "alpha beta gamma\n\ndelta epsilon zeta eta\n\ntheta iota"
    # fixed(6) would cut the second paragraph; recursive keeps paragraphs whole
    assert texts_of(FixedStrategy(size=6).split("d", text)) == [
        "alpha beta gamma\n\ndelta epsilon zeta",
        "eta\n\ntheta iota",
    ]
    assert texts_of(RecursiveStrategy(size=6).split("d", text)) == [
        "alpha beta gamma",
        "delta epsilon zeta eta\n\ntheta iota",
    ]
    assert texts_of(RecursiveStrategy(size=8).split("d", text)) == [
        "alpha beta gamma\n\ndelta epsilon zeta eta",
        "theta iota",
    ]


def test_recursive_falls_back_to_lines_sentences_words():
    text = "l1 a b\nl2 c d e\nl3 f\n\nshort para"
    assert texts_of(RecursiveStrategy(size=5).split("d", text)) == [
        "l1 a b",
        "l2 c d e",
        "l3 f",
        "short para",
    ]
    text = "One two three. Four five six seven eight. Nine."
    assert texts_of(RecursiveStrategy(size=4).split("d", text)) == [
        "One two three.",
        "Four five six seven",
        "eight.",
        "Nine.",
    ]


def test_parent_child_mapping():
    text = "Aa bb. Cc dd ee. Ff.\n\nGg hh ii. Jj."
    children, parents = ParentChildStrategy(parent_size=6, child_size=3).split("d", text)
    assert texts_of(parents) == ["Aa bb. Cc dd ee. Ff.", "Gg hh ii. Jj."]
    assert [(c.text, c.parent) for c in children] == [
        ("Aa bb.", 0),
        ("Cc dd ee.", 0),
        ("Ff.", 0),
        ("Gg hh ii.", 1),
        ("Jj.", 1),
    ]
    docs = [Doc("x", text), Doc("empty", "  "), Doc("y", "Kk ll.")]
    result = chunk_corpus(
        docs, make_strategy("pc", kind="parent-child", parent_size=6, child_size=3)
    )
    assert result.strategy == "pc"
    assert [p.text for p in result.parents] == [*texts_of(parents), "Kk ll."]
    assert [(c.doc_id, c.parent) for c in result.chunks] == [
        ("x", 0),
        ("x", 0),
        ("x", 0),
        ("x", 1),
        ("x", 1),
        ("y", 2),
    ]


def test_chunk_offsets_index_the_document():
    text = "Préface 😀.\n\nÉté “chaud”.  Fin."
    for strategy in STRATEGIES.values():
        result = chunk_corpus([Doc("a", text)], strategy)
        for c in result.chunks + (result.parents or []):
            assert text[c.start : c.end] == c.text


# --------------------------------------------------------------------------- registry


def test_registry_defaults():
    assert list(STRATEGIES) == [
        "whole",
        "fixed",
        "overlap",
        "sentence",
        "recursive",
        "parent-400",
        "parent-200",
    ]
    assert set(KINDS) == {"whole", "fixed", "overlap", "sentence", "recursive", "parent-child"}
    assert STRATEGIES["fixed"].describe() == {"name": "fixed", "kind": "fixed", "size": 200}
    assert STRATEGIES["overlap"].describe() == {
        "name": "overlap",
        "kind": "overlap",
        "size": 200,
        "overlap": 100,
    }
    assert STRATEGIES["parent-200"].describe() == {
        "name": "parent-200",
        "kind": "parent-child",
        "parent_size": 200,
        "child_size": 50,
        "segmenter": "icu",
    }
    assert STRATEGIES["parent-400"].describe()["child_size"] == 100
    assert STRATEGIES["whole"].describe() == {"name": "whole", "kind": "whole"}
    for name, strategy in STRATEGIES.items():
        assert strategy.name == name
        assert make_strategy(name) == strategy
        assert make_strategy(**strategy.describe()) == strategy


def test_make_strategy_with_kind_and_params():
    s = make_strategy("fixed-300", kind="fixed", size=300)
    assert s == FixedStrategy(name="fixed-300", size=300)
    assert s.describe() == {"name": "fixed-300", "kind": "fixed", "size": 300}
    assert make_strategy("sentence", size=50) == SentenceStrategy(size=50)
    assert make_strategy("parent-400", child_size=80).parent_size == 400
    assert make_strategy("parent-child") == ParentChildStrategy()
    assert chunk_corpus([Doc("a", "x y z")], "fixed").strategy == "fixed"


@pytest.mark.parametrize(
    "name, params",
    [
        ("nope", {}),
        ("fixed-300", {"kind": "fixd", "size": 300}),
        ("fixed", {"size": 0}),
        ("fixed", {"size": -3}),
        ("fixed", {"size": 2.5}),
        ("fixed", {"size": True}),
        ("fixed", {"sizes": 3}),
        ("whole", {"size": 3}),
        ("overlap", {"overlap": 200}),
        ("overlap", {"size": 10, "overlap": 20}),
        ("overlap", {"overlap": -1}),
        ("sentence", {"size": "200"}),
        ("recursive", {"size": 0}),
        ("parent-400", {"child_size": 0}),
        ("p", {"kind": "parent-child", "parent_size": 0}),
        ("", {"kind": "fixed"}),
    ],
)
def test_bad_parameters_raise_input_error(name, params):
    with pytest.raises(InputError) as info:
        make_strategy(name, **params)
    assert "\n" not in str(info.value)


def test_unknown_name_lists_valid_names():
    with pytest.raises(InputError, match="parent-400.*parent-child"):
        make_strategy("paragraphs")
    with pytest.raises(InputError):
        chunk_corpus([Doc("a", "x")], "paragraphs")
    with pytest.raises(InputError):
        FixedStrategy(size=0)
    with pytest.raises(InputError):
        OverlapStrategy(size=5, overlap=5)


# --------------------------------------------------------------------------- shared data


@pytest.mark.slow
def test_chroma_corpora_invariants(shared_data):
    paths = sorted((shared_data / "chroma" / "corpora").glob("*.md"))
    assert len(paths) == 5
    docs = [Doc(path.name, path.read_text(encoding="utf-8")) for path in paths]
    for name, strategy in STRATEGIES.items():
        result = chunk_corpus(docs, strategy)
        assert result.chunks, name
        for d in docs:
            mine = [c for c in result.chunks if c.doc_id == d.id]
            starts, ends = word_spans(d.text)
            if name == "whole":  # the full text, edge whitespace included
                assert (mine[0].start, mine[-1].end) == (0, len(d.text))
            else:
                assert mine[0].start == starts[0] and mine[-1].end == ends[-1]
            for c in mine:
                assert d.text[c.start : c.end] == c.text
            limit = {
                "fixed": 200,
                "overlap": 200,
                "sentence": 200,
                "recursive": 200,
                "parent-400": 100,
                "parent-200": 50,
            }.get(name)
            if limit is not None:
                assert max(n_words(c.text) for c in mine) <= limit
            if name in ("fixed", "sentence", "recursive", "parent-400", "parent-200"):
                assert sum(n_words(c.text) for c in mine) == len(starts)


# Chunking's batching of paragraphs for workers (ragmeter.chunking.strategies).


def test_batches_close_once_they_hold_enough_characters():
    assert _batches([5, 5, 5], 10) == [(0, 2), (2, 3)]
    assert _batches([12, 1, 9], 10) == [(0, 1), (1, 3)]
    assert _batches([3, 3], 10) == [(0, 2)]
    assert _batches([], 10) == []

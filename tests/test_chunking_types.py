"""Chunks, pinned: a view (``Chunk.span``) and a chunk holding its text are equal, hash
alike and pickle alike when their fields are; chunks that differ in any field differ;
a chunk is never equal to something that is not a chunk; ``is_span_of`` says whether a
chunk is a view of exactly that document; chunks are immutable; a chunking returns its
parents when it has any, else its chunks."""

from __future__ import annotations

import pickle
from dataclasses import FrozenInstanceError

import pytest

from ragmeter.chunking.types import Chunk, Chunking

DOC = "alpha beta gamma delta"


def test_a_view_reads_its_span_and_equals_a_chunk_holding_the_text():
    view = Chunk.span("d1", DOC, 6, 10, parent=3)
    assert isinstance(view, Chunk)
    assert (view.doc_id, view.start, view.end, view.parent) == ("d1", 6, 10, 3)
    assert view.text == "beta"
    held = Chunk("d1", 6, 10, "beta", parent=3)
    assert held.text == "beta" and held.parent == 3
    assert view == held and held == view
    assert hash(view) == hash(held)
    assert len({view, held}) == 1


def test_chunks_that_differ_in_any_field_are_not_equal():
    base = Chunk("d1", 0, 5, "alpha")
    assert base == Chunk("d1", 0, 5, "alpha")
    assert not base != Chunk("d1", 0, 5, "alpha")
    others = [
        Chunk("d2", 0, 5, "alpha"),
        Chunk("d1", 1, 5, "alpha"),
        Chunk("d1", 0, 6, "alpha"),
        Chunk("d1", 0, 5, "alphb"),
        Chunk("d1", 0, 5, "alpha", parent=0),
        Chunk.span("d1", DOC, 0, 4),
    ]
    for other in others:
        assert base != other and not base == other
    assert len({base, *others}) == 1 + len(others)


def test_a_chunk_is_not_equal_to_what_is_not_a_chunk():
    chunk = Chunk("d1", 0, 5, "alpha")
    assert (chunk == "alpha") is False
    assert (chunk != ("d1", 0, 5, "alpha", None)) is True
    assert chunk.__eq__("alpha") is NotImplemented
    assert chunk in [object(), chunk] and chunk not in ["alpha", None]


def test_is_span_of_names_the_very_document():
    view = Chunk.span("d1", DOC, 0, 5)
    assert view.is_span_of(DOC) is True
    copy = "".join(list(DOC))  # equal text, another string
    assert copy == DOC and copy is not DOC
    assert view.is_span_of(copy) is False
    assert Chunk("d1", 0, 5, "alpha").is_span_of(DOC) is False


def test_repr_and_pickle_keep_every_field():
    view = Chunk.span("d1", DOC, 11, 16, parent=2)
    assert repr(view) == "Chunk(doc_id='d1', start=11, end=16, text='gamma', parent=2)"
    back = pickle.loads(pickle.dumps(view))
    assert back == view and back.text == "gamma" and back.parent == 2
    assert back.is_span_of(DOC) is False  # a pickled view holds its own text
    held = Chunk("d1", 0, 5, "alpha")
    assert pickle.loads(pickle.dumps(held)) == held


def test_chunks_are_immutable():
    chunk = Chunk.span("d1", DOC, 0, 5)
    with pytest.raises(FrozenInstanceError):
        chunk.start = 1
    with pytest.raises(FrozenInstanceError):
        del chunk.doc_id
    assert chunk.start == 0 and chunk.doc_id == "d1"


def test_items_are_the_parents_when_present():
    chunks = [Chunk("d1", 0, 5, "alpha", parent=0), Chunk("d1", 6, 10, "beta", parent=0)]
    parents = [Chunk("d1", 0, 10, "alpha beta")]
    assert Chunking("pc", chunks, parents).items is parents
    assert Chunking("fixed", chunks).items is chunks
    assert Chunking("empty", chunks, []).items == []  # no parents is not "no parent list"

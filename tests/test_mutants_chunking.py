"""Chunking's batching of paragraphs for workers (ragmeter.chunking)."""

from __future__ import annotations

from ragmeter.chunking import _batches


def test_batches_close_once_they_hold_enough_characters():
    assert _batches([5, 5, 5], 10) == [(0, 2), (2, 3)]
    assert _batches([12, 1, 9], 10) == [(0, 1), (1, 3)]
    assert _batches([3, 3], 10) == [(0, 2)]
    assert _batches([], 10) == []

"""``ragmeter.chunking.segment_rounds``: a round closes as soon as its new paragraphs hold
the round's characters, each round counts only its own new paragraphs, and a repeated paragraph is
numbered once; segmenting reports each batch done, in this process or on workers."""

from __future__ import annotations

import pytest

from ragmeter import engine
from ragmeter.chunking import segment_rounds as _segment_rounds
from ragmeter.chunking import strategies as chunking
from ragmeter.chunking.strategies import prepare_sentences


def _rounds(texts, round_chars):
    parts = _segment_rounds.new_parts()
    groups = list(_segment_rounds.rounds(texts, parts, round_chars))
    return [[(t, n.tolist()) for t, _, n in g] for g in groups], parts


def test_a_round_closes_when_its_new_paragraphs_reach_the_round_size():
    groups, parts = _rounds(["aaaa", "bbb", "c", "aaaa", "dd", "e"], 4)
    assert groups == [
        [("aaaa", [0])],  # exactly 4 characters: closed
        [("bbb", [1]), ("c", [2])],  # 3 + 1, counted from 0 again
        [("aaaa", [0]), ("dd", [3]), ("e", [4])],  # "aaaa" is not new: 2 + 1, the rest
    ]
    texts, text_of, start, length = parts
    assert texts == ["aaaa", "bbb", "c", "aaaa", "dd", "e"]
    assert list(text_of) == [0, 1, 2, 4, 5] and list(length) == [4, 3, 1, 2, 1]
    assert list(start) == [0] * 5
    assert _rounds(["aaaa", "bb"], None)[0] == [[("aaaa", [0]), ("bb", [1])]]  # one round


@pytest.mark.parametrize("workers", [1, 2])
def test_segmenting_reports_each_batch_done_of_all(monkeypatch, workers):
    # three batches of paragraphs; in this process (one worker) or on forked workers
    monkeypatch.setattr(chunking, "BATCH_CHARS", 5)
    monkeypatch.setattr(chunking, "PARALLEL_MIN_CHARS", 0)
    texts = ["One. Two.\n\nThree.", "Four! Five?"]
    seen: list[tuple[int, int]] = []
    chunking._CACHE.clear()
    eng = engine.LocalEngine(workers=workers)
    assert prepare_sentences(texts, eng, progress=lambda d, t: seen.append((d, t))) == 26
    assert seen == [(1, 3), (2, 3), (3, 3)]
    assert [chunking._CACHE.get(t).sentence_breaks.tolist() for t in texts] == [[1, 2], [1]]
    chunking._CACHE.clear()

"""Grades and coverage from character spans."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragmeter.chunking.strategies import Chunk
from ragmeter.errors import InputError
from ragmeter.scoring.grading import (
    SpanIndex,
    coverage,
    coverage_curve,
    found_units,
    grade,
    grade_documents,
    grade_ranking,
    ideal_grades,
)

# ---------------------------------------------------------------------------
# grade: one span


@pytest.mark.parametrize(
    ("item", "expected"),
    [
        (("d", 100, 200), 2),  # span [120, 150) lies inside [100, 200)
        (("d", 120, 150), 2),  # exactly the span: 120 <= 120 and 150 <= 150
        (("d", 121, 150), 1),  # misses character 120: shares 121..149
        (("d", 120, 149), 1),  # misses character 149
        (("d", 140, 300), 1),  # shares 140..149 (10 characters)
        (("d", 149, 150), 1),  # shares exactly one character, 149
        (("d", 150, 300), 0),  # starts where the span ends (end exclusive): nothing shared
        (("d", 0, 120), 0),  # ends where the span starts: touching is not sharing
        (("d", 130, 130), 0),  # empty item inside the span: no characters to share
        (("e", 100, 200), 0),  # same offsets, other document
    ],
)
def test_grade_one_span(item, expected):
    assert grade(item, [("d", 120, 150)]) == expected


def test_grade_accepts_chunks():
    chunk = Chunk("d", 100, 200, "x" * 100)
    assert grade(chunk, [("d", 120, 150)]) == 2
    assert grade(Chunk("d", 140, 160, "x" * 20), [("d", 120, 150)]) == 1


# ---------------------------------------------------------------------------
# grade: several spans

TWO_IN_ONE_DOC = [("d", 10, 20), ("d", 50, 60)]
TWO_DOCS = [("d", 10, 20), ("e", 10, 20)]


@pytest.mark.parametrize(
    ("item", "spans", "expected"),
    [
        # both spans inside [0, 100): 0 <= 10, 20 <= 100, 0 <= 50, 60 <= 100
        (("d", 0, 100), TWO_IN_ONE_DOC, 2),
        # [10, 60) holds both exactly (10 <= 10, 60 <= 60), the gap too
        (("d", 10, 60), TWO_IN_ONE_DOC, 2),
        # covers the first span wholly but not the second: part of the passage
        (("d", 0, 30), TWO_IN_ONE_DOC, 1),
        # covers the second only
        (("d", 45, 70), TWO_IN_ONE_DOC, 1),
        # the gap between the spans: shares nothing
        (("d", 20, 50), TWO_IN_ONE_DOC, 0),
        # first span wholly, second partly (50..54): still 1
        (("d", 5, 55), TWO_IN_ONE_DOC, 1),
        # spans in two documents: no single item can hold both, best is 1
        (("d", 0, 1000), TWO_DOCS, 1),
        (("e", 0, 1000), TWO_DOCS, 1),
        (("f", 0, 1000), TWO_DOCS, 0),
        # overlapping spans in one doc: the union [10, 30) must be inside
        (("d", 10, 30), [("d", 10, 25), ("d", 20, 30)], 2),
        (("d", 10, 29), [("d", 10, 25), ("d", 20, 30)], 1),
    ],
)
def test_grade_multi_span(item, spans, expected):
    assert grade(item, spans) == expected


def test_grade_ranking_int8_in_rank_order():
    spans = [("d", 10, 20), ("d", 50, 60)]
    items = [("d", 20, 50), ("d", 0, 100), ("e", 0, 100), ("d", 55, 58), ("d", 0, 15)]
    g = grade_ranking(items, spans)
    assert g.dtype == np.int8
    assert g.tolist() == [0, 2, 0, 1, 1]
    assert grade_ranking([], spans).shape == (0,)


@pytest.mark.parametrize(
    ("item", "spans"),
    [
        (("d", 5, 4), [("d", 0, 3)]),  # item end before start
        (("d", -1, 4), [("d", 0, 3)]),  # negative offset
        (("d", 0, 4), [("d", 3, 3)]),  # empty span
        (("d", 0, 4), []),  # empty answer key
        (("d", 0, 4), [("d", 0.5, 3)]),  # offsets must be whole numbers
        (("d", 0), [("d", 0, 3)]),  # not a triple
    ],
)
def test_grade_rejects_bad_input(item, spans):
    with pytest.raises(InputError):
        grade(item, spans)


# ---------------------------------------------------------------------------
# coverage


def test_coverage_hand_computed():
    # Answer: [10, 20) and [15, 30) in doc d -> union [10, 30) = 20 characters.
    spans = [("d", 10, 20), ("d", 15, 30)]
    items = [
        ("d", 0, 12),  # covers 10, 11                  -> 2 new, 2 / 20 = 0.10
        ("d", 25, 40),  # covers 25..29                 -> 5 new, 7 / 20 = 0.35
        ("d", 0, 12),  # repeat of the first: 0 new     -> 7 / 20 = 0.35
        ("e", 10, 30),  # other document: 0 new          -> 0.35
        ("d", 11, 26),  # covers 11..25, new 12..24     -> 13 new, 20 / 20 = 1.0
    ]
    np.testing.assert_array_equal(
        coverage_curve(items, spans, [1, 2, 3, 4, 5, 10]), [0.10, 0.35, 0.35, 0.35, 1.0, 1.0]
    )
    assert coverage(items[:2], spans) == 0.35
    assert coverage(items, spans) == 1.0
    assert coverage([], spans) == 0.0
    assert coverage_curve([], spans, [1, 5]).tolist() == [0.0, 0.0]


def test_coverage_two_documents():
    # 10 answer characters in d ([0, 10)) and 30 in e ([100, 130)): 40 in all.
    spans = [("d", 0, 10), ("e", 100, 130)]
    # d: [5, 50) covers 5..9 = 5 chars; e: [120, 200) covers 120..129 = 10 chars.
    # (5 + 10) / 40 = 0.375
    assert coverage([("d", 5, 50), ("e", 120, 200)], spans) == 0.375


def test_coverage_rejects_bad_cutoffs():
    with pytest.raises(InputError):
        coverage_curve([("d", 0, 5)], [("d", 0, 3)], [0, 1])


def _brute_coverage(items, spans) -> float:
    answer = {(d, c) for d, s, e in spans for c in range(s, e)}
    inside = {(d, c) for d, s, e in items for c in range(s, e)}
    return len(answer & inside) / len(answer)


doc_ids = st.sampled_from(["a", "b", "c"])


@st.composite
def spans_st(draw, min_len=1):
    doc = draw(doc_ids)
    start = draw(st.integers(0, 60))
    return (doc, start, start + draw(st.integers(min_len, 25)))


items_st = st.lists(spans_st(min_len=0), max_size=12)
keys_st = st.lists(spans_st(), min_size=1, max_size=5)


@settings(max_examples=150, deadline=None)
@given(items=items_st, spans=keys_st)
def test_coverage_curve_matches_brute_force_and_is_monotone(items, spans):
    ks = list(range(1, 14))
    curve = coverage_curve(items, spans, ks)
    expected = [_brute_coverage(items[:k], spans) for k in ks]
    np.testing.assert_allclose(curve, expected, rtol=0, atol=1e-12)
    assert np.all(np.diff(curve) >= 0)
    assert 0.0 <= curve[-1] <= 1.0


def _brute_grade(item, spans) -> int:
    d, s, e = item
    chars = set(range(s, e))
    answer = [set(range(ss, se)) for sd, ss, se in spans]
    if all(sd == d and a <= chars for (sd, _, _), a in zip(spans, answer, strict=True)):
        return 2
    if any(sd == d and a & chars for (sd, _, _), a in zip(spans, answer, strict=True)):
        return 1
    return 0


@settings(max_examples=150, deadline=None)
@given(items=items_st, spans=keys_st)
def test_grade_matches_character_sets(items, spans):
    # Grade 2 = every answer character set is a subset of the item's characters;
    # grade 1 = some answer character is in the item.
    assert grade_ranking(items, spans).tolist() == [_brute_grade(it, spans) for it in items]


# ---------------------------------------------------------------------------
# ideal grades over the index


def test_ideal_grades_hand_computed():
    index = [
        ("d", 0, 100),  # holds [10, 20) -> 2
        ("d", 0, 15),  # part -> 1
        ("d", 15, 40),  # part -> 1
        ("d", 20, 40),  # touches at 20 -> 0
        ("e", 0, 100),  # other doc -> 0
        ("d", 5, 25),  # holds it -> 2
    ]
    spans = [("d", 10, 20)]
    assert ideal_grades(index, spans).tolist() == [2, 2, 1, 1]
    idx = SpanIndex(index)
    assert len(idx) == 6
    pos, g = idx.nonzero(spans)
    assert pos.tolist() == [0, 1, 2, 5]
    assert g.tolist() == [2, 1, 1, 2]
    assert ideal_grades(idx, spans).dtype == np.int8
    # Spans in two documents: nothing can be 2; the four d items above that share
    # characters with [10, 20) and ("e", 0, 100), which shares [50, 60), get 1.
    assert ideal_grades(idx, [("d", 10, 20), ("e", 50, 60)]).tolist() == [1, 1, 1, 1, 1]
    # A document the index does not hold.
    assert ideal_grades(idx, [("z", 0, 5)]).tolist() == []


@settings(max_examples=100, deadline=None)
@given(index=st.lists(spans_st(min_len=0), max_size=40), spans=keys_st)
def test_span_index_matches_grade_on_every_item(index, spans):
    idx = SpanIndex(index)
    every = grade_ranking(index, spans)
    pos, g = idx.nonzero(spans)
    assert pos.tolist() == np.flatnonzero(every).tolist()
    assert g.tolist() == every[every > 0].tolist()
    assert ideal_grades(idx, spans).tolist() == sorted(every[every > 0].tolist(), reverse=True)


def test_span_index_at_scale():
    # 50k items (500 docs x 100 chunks of 200 characters, plus a parent per doc
    # that spans it whole) and 500 questions: one build, then one query each.
    # (How fast: bench/span_index.py, against grading every item.)
    rng = np.random.default_rng(0)
    index = [(f"doc{d}", 200 * c, 200 * c + 200) for d in range(500) for c in range(99)]
    index += [(f"doc{d}", 0, 99 * 200) for d in range(500)]
    questions = []
    for _ in range(500):
        d = int(rng.integers(500))
        s = int(rng.integers(0, 99 * 200 - 300))
        questions.append([(f"doc{d}", s, s + int(rng.integers(1, 200)))])
    idx = SpanIndex(index)
    ideals = [idx.ideal_grades(q) for q in questions]
    # Each answer is under 200 characters: the parent holds it (2); it falls in
    # one or two 200-character chunks (2 if in one, else 1 and 1).
    for q, ideal in zip(questions, ideals, strict=True):
        _, s, e = q[0]
        one_chunk = s // 200 == (e - 1) // 200
        assert ideal.tolist() == ([2, 2] if one_chunk else [2, 1, 1])


# Grading by documents and counting found units (ragmeter.scoring.grading).


def test_document_grades_never_go_below_zero():
    items = [("d", 0, 5), ("e", 0, 5), ("x", 0, 5)]
    assert grade_documents(items, {"d": -1, "e": 3}).tolist() == [0, 3, 0]


def test_found_units_count_each_relevant_document_once():
    items = [("n", 0, 1), ("a", 0, 1), ("a", 1, 2), ("b", 0, 1), ("c", 0, 1)]
    grades = [0, 2, 2, 0, 1]
    assert found_units(items, grades, 1, True).tolist() == [0, 1, 1, 1, 2]
    assert found_units(items, grades, 2, True).tolist() == [0, 1, 1, 1, 1]
    # a passage key is one unit, found at the first relevant item
    assert found_units(items, grades, 1, False).tolist() == [0, 1, 1, 1, 1]
    assert found_units([], [], 1, True).tolist() == []

"""Grading inputs at their edges: what counts as an item or a span, and empty indexes."""

from __future__ import annotations

from collections import namedtuple

import numpy as np
import pytest

from ragmeter.errors import InputError
from ragmeter.scoring.grading import SpanIndex, coverage, grade, grade_ranking, ideal_grades

# a triple whose first field happens to be called doc_id: read as (doc, start, end)
Triple = namedtuple("Triple", ["doc_id", "begin", "finish"])


def test_any_triple_is_an_item_even_with_a_doc_id_field():
    assert grade(Triple("d", 0, 10), [("d", 2, 5)]) == 2
    assert grade_ranking([Triple("d", 4, 10), ("d", 6, 9)], [("d", 2, 5)]).tolist() == [1, 0]


@pytest.mark.parametrize("span", [("d", -1, 3), ("d", -2, -1), ("d", 3, 3), ("d", 4, 3)])
def test_an_answer_span_needs_0_le_start_lt_end(span):
    with pytest.raises(InputError, match="needs 0 <= start < end"):
        grade(("d", 0, 10), [span])
    with pytest.raises(InputError, match="needs 0 <= start < end"):
        SpanIndex([("d", 0, 10)]).nonzero([span])


def test_an_empty_index_has_no_items_and_no_ideal():
    index = SpanIndex([])
    assert len(index) == 0
    assert ideal_grades(index, [("d", 0, 3)]).tolist() == []
    assert len(SpanIndex([("d", 0, 1), ("e", 0, 1)])) == 2


def test_coverage_of_no_items_is_zero():
    assert coverage([], [("d", 0, 4)]) == 0.0
    assert coverage([("d", 0, 2)], [("d", 0, 4)]) == 0.5
    assert np.isclose(coverage([("d", 0, 2), ("d", 2, 3)], [("d", 0, 4)]), 0.75)

"""Grading by documents and counting found units (ragmeter.grading)."""

from __future__ import annotations

from ragmeter.grading import found_units, grade_documents


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

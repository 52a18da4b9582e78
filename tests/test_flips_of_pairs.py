"""Sign flips of a table's pairs come from the systems' own flipped sums: the same test as
flipping each pair's differences, at the memory of the systems, not of the pairs."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from ragmeter.comparison.verdicts import compare_family
from ragmeter.stats.maxt import null_p_values, step_down
from ragmeter.stats.paired_tests import Flips, flip_ends


def _pairs(m: int) -> list[tuple[int, int]]:
    return [(i, j) for i in range(m) for j in range(i + 1, m)]


@pytest.mark.parametrize("clusters", [None, np.repeat(np.arange(20), 3)])
def test_pair_flips_are_the_flips_of_each_pairs_differences(clusters):
    rng = np.random.default_rng(4)
    x = np.round(rng.random((5, 60)) ** 2, 3)
    pairs = _pairs(5)
    diffs = np.stack([x[i] - x[j] for i, j in pairs], axis=1) + 0.0
    by_pair = Flips(diffs, 700, 9, clusters)
    by_system = Flips.of_pairs(x, pairs, 700, 9, clusters)
    assert np.array_equal(by_pair.b, by_system.b)
    for c in range(len(pairs)):
        assert np.array_equal(by_pair.diff(c), by_system.diff(c))
        assert by_pair.total[c] == by_system.total[c]
        assert by_system.column(c) == pytest.approx(by_pair.column(c), abs=1e-12)
    zero = np.zeros(len(pairs))
    every = np.arange(len(pairs))
    assert np.array_equal(by_pair.p_values(zero, every), by_system.p_values(zero, every))


def test_pair_flips_of_0_1_scores_are_exact():
    rng = np.random.default_rng(5)
    x = (rng.random((4, 80)) < 0.6).astype(np.float64)
    pairs = _pairs(4)
    diffs = np.stack([x[i] - x[j] for i, j in pairs], axis=1) + 0.0
    by_pair = Flips(diffs, 500, 2)
    by_system = Flips.of_pairs(x, pairs, 500, 2)
    for c in range(len(pairs)):
        assert np.array_equal(by_pair.column(c), by_system.column(c))
    reject = np.array([True, False] * 3)
    levels = np.full(len(pairs), 0.05)
    for got, want in zip(
        flip_ends(by_system, reject, levels), flip_ends(by_pair, reject, levels), strict=True
    ):
        assert np.array_equal(got, want)


def test_the_step_down_over_columns_equals_the_step_down_over_the_matrix():
    rng = np.random.default_rng(6)
    x = np.round(rng.random((9, 120)), 2)  # 9 systems: plain max-T, no constraints
    pairs = _pairs(9)
    counts = [(int((x[i] > x[j]).sum()), 0, int((x[i] < x[j]).sum())) for i, j in pairs]
    flips = Flips.of_pairs(x, pairs, 999, 3)
    raw, null = null_p_values(flips, False, counts)
    lazy = step_down(raw, null, 0.05, pairs)
    whole = step_down(raw, null.matrix(), 0.05, pairs)
    for got, want in zip(lazy, whole, strict=True):
        assert np.array_equal(got, want)


def test_a_table_of_many_systems_never_holds_rounds_by_pairs():
    rng = np.random.default_rng(7)
    m, rounds = 40, 4000
    x = np.round(rng.random((m, 200)) ** 2, 4)
    pairs = m * (m - 1) // 2
    tracemalloc.start()
    try:
        table = compare_family(x, [f"s{i}" for i in range(m)], rounds=rounds, seed=1)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(table.rows) == pairs
    assert peak < rounds * pairs * 8 / 2  # one rounds x pairs array would be 25 MB

"""Weighted kappa, Krippendorff's alpha and test-retest agreement of judges."""

from __future__ import annotations

import numpy as np
import pytest

from ragmeter import stats
from ragmeter.stats.ordinal_agreement import (
    krippendorff_alpha,
    ordinal_agreement,
    retest_agreement,
    weighted_kappa,
    weighted_kappa_value,
)

GRADES = ("wrong", "partial", "correct")
N = None


def _two_judges(seed: int, n: int = 120) -> tuple[list[str], list[str]]:
    rng = np.random.default_rng(seed)
    a = [str(g) for g in rng.choice(GRADES, n)]
    b = [g if rng.random() < 0.6 else str(rng.choice(GRADES)) for g in a]
    return a, b


# --- weighted kappa ------------------------------------------------------------------------


@pytest.mark.parametrize("weights", ["linear", "quadratic"])
def test_weighted_kappa_equals_scikit_learn(weights):
    sklearn = pytest.importorskip("sklearn.metrics")
    for seed in range(4):
        a, b = _two_judges(seed)
        got = weighted_kappa(a, b, GRADES, weights, rounds=200).mean
        assert got == pytest.approx(
            sklearn.cohen_kappa_score(a, b, labels=list(GRADES), weights=weights), abs=1e-12
        )


def test_weighted_kappa_by_hand():
    # rows: a's grade (wrong, partial, correct); n = 4.
    table = [[1, 1, 0], [0, 0, 1], [0, 0, 1]]
    # Linear weights 0, .5, 1. Observed: .5 + .5 = 1 -> * n = 4. Row sums 2,1,1; column
    # sums 1,1,2: expected = sum r_i c_j w_ij = 2*(1*.5 + 2*1) + 1*(1*.5 + 2*.5) + 1*(1*1 + 1*.5)
    assert weighted_kappa_value(table, "linear") == pytest.approx(1 - 4 / 8.0)
    # Quadratic weights 0, .25, 1: observed .5 * 4 = 2; expected 2*(.25 + 2) + 1*(.25 + .5)
    # + 1*(1 + .25) = 6.5.
    assert weighted_kappa_value(table, "quadratic") == pytest.approx(1 - 2 / 6.5)


def test_two_classes_weighted_kappa_is_plain_kappa():
    table = [[30, 7], [4, 19]]
    plain = stats.cohen_kappa(table)
    assert weighted_kappa_value(table, "linear") == pytest.approx(plain)
    assert weighted_kappa_value(table, "quadratic") == pytest.approx(plain)


def test_ordinal_agreement_sits_beside_plain_kappa_on_the_same_draws():
    a, b = _two_judges(5)
    got = ordinal_agreement(a, b, GRADES, rounds=500, seed=3)
    plain = stats.agreement(a, b, GRADES, rounds=500, seed=3)
    assert got.percent == plain.percent and got.kappa == plain.kappa
    assert got.kappa_linear.low <= got.kappa_linear.mean <= got.kappa_linear.high
    assert ordinal_agreement(a, b, GRADES, rounds=500, seed=3) == got  # reproducible
    assert ordinal_agreement(a, b, GRADES, rounds=500, seed=4) != got


def test_full_agreement_is_one_and_a_single_grade_throughout_is_one():
    assert weighted_kappa(list(GRADES) * 3, list(GRADES) * 3, GRADES, rounds=50).mean == 1.0
    only = weighted_kappa(["correct"] * 5, ["correct"] * 5, GRADES, rounds=50)
    assert (only.mean, only.low, only.high) == (1.0, 1.0, 1.0)


# --- Krippendorff's alpha ------------------------------------------------------------------

# Krippendorff (2011), "Computing Krippendorff's alpha-reliability", the example with
# 4 observers, 12 units, values 1-5 and missing data: nominal .743, ordinal .815,
# interval .849.
RELIABILITY = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, N, N, N],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, N, 3],
    [N, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, N],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, N],
]


@pytest.mark.parametrize(
    ("level", "published"), [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849)]
)
def test_alpha_matches_krippendorffs_published_example(level, published):
    got = krippendorff_alpha(RELIABILITY, [1, 2, 3, 4, 5], level, rounds=200)
    assert round(got.mean, 3) == published
    assert got.n == 11  # unit 12 has one value: not pairable


def test_alpha_by_hand_and_two_classes_ordinal_is_nominal():
    # units [a,a], [b,b], [a,b]: D_o = 2/6, D_e = 2*3*3/(6*5) -> alpha = 1 - (1/3)/.6 = 4/9.
    ratings = [["a", "b", "a"], ["a", "b", "b"]]
    assert krippendorff_alpha(ratings, ["a", "b"], "nominal", rounds=50).mean == pytest.approx(
        4 / 9
    )
    assert krippendorff_alpha(ratings, ["a", "b"], "ordinal", rounds=50).mean == pytest.approx(
        4 / 9
    )


def test_alpha_leaves_out_missing_grades_and_lone_grades():
    base = krippendorff_alpha(RELIABILITY, [1, 2, 3, 4, 5], rounds=100).mean
    more = [row + [v] for row, v in zip(RELIABILITY, [N, 4, N, N], strict=True)]
    assert krippendorff_alpha(more, [1, 2, 3, 4, 5], rounds=100).mean == pytest.approx(base)


def test_alpha_interval_is_reproducible():
    a, b = _two_judges(2)
    c = [g if i % 3 else "wrong" for i, g in enumerate(a)]
    first = krippendorff_alpha([a, b, c], GRADES, rounds=300, seed=7)
    assert first == krippendorff_alpha([a, b, c], GRADES, rounds=300, seed=7)
    assert first.low <= first.mean <= first.high


# --- test-retest ---------------------------------------------------------------------------


def test_test_retest_by_hand():
    grades = [["correct"] * 3, ["correct", "wrong", None], ["partial", "partial", "wrong"]]
    got = retest_agreement(grades, rounds=100)
    assert got.percent.mean == pytest.approx((1 + 0 + 1 / 3) / 3)
    assert (got.items, got.repeats) == (3, 3)
    same = krippendorff_alpha([list(r) for r in zip(*grades, strict=True)], GRADES, rounds=100)
    assert got.alpha == same


# --- bad input -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: weighted_kappa(["correct"], [], GRADES), "paired"),
        (lambda: weighted_kappa(["right"], ["correct"], GRADES), "not among classes"),
        (lambda: weighted_kappa(["correct"], ["correct"], GRADES, "cubic"), "weights"),
        (lambda: weighted_kappa(["correct"], [None], GRADES), "None"),
        (lambda: weighted_kappa_value([[1, 2, 3]]), "square"),
        (lambda: krippendorff_alpha([["a", "b"]], ["a", "b"]), "2 raters"),
        (lambda: krippendorff_alpha([["a"], ["a", "b"]], ["a", "b"]), "equally long"),
        (lambda: krippendorff_alpha([["a", N], [N, "b"]], ["a", "b"]), "pairable"),
        (lambda: krippendorff_alpha([["a"], ["a"]], ["a", "b"], "ratio"), "level"),
        (lambda: retest_agreement([["correct"], ["wrong"]]), "2 repeats"),
        (lambda: retest_agreement([["correct", None], [None, "wrong"]]), "graded twice"),
    ],
)
def test_bad_input_is_refused_with_a_clear_value_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()

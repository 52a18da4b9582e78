"""Tests for ragmeter.stats: bit-for-bit agreement with the reference TypeScript code,
paired comparisons, BCa, sample sizes and agreement statistics."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragmeter import stats
from ragmeter.errors import InputError
from ragmeter.stats import (
    Estimate,
    agreement,
    bootstrap,
    bootstrap_many,
    cohen_kappa,
    compare_all,
    holm,
    mulberry32,
    paired,
    questions_for_half_width,
    questions_to_separate,
    resample_indices,
    sample_size,
)
from ragmeter.stats import draws as stats_draws

# --------------------------------------------------------------------------- reference
# A line-by-line transcription of the reference TypeScript (rng, bootstrapInterval,
# pairedDifference), with JavaScript's integer conversions spelled out. Test-only.


def _u32(x: int) -> int:  # ToUint32, i.e. `x >>> 0`
    return x % 2**32


def _i32(x: int) -> int:  # ToInt32, applied by the bitwise operators
    x %= 2**32
    return x - 2**32 if x >= 2**31 else x


def _imul(x: int, y: int) -> int:  # Math.imul
    return _i32(_u32(x) * _u32(y))


def _xor(x: int, y: int) -> int:
    return _i32(x) ^ _i32(y)


def _or(x: int, y: int) -> int:
    return _i32(x) | _i32(y)


def _ushr(x: int, s: int) -> int:  # x >>> s
    return _u32(x) >> s


def ts_rng(seed: int):
    a = _u32(seed)

    def nxt() -> float:
        nonlocal a
        a = _u32(a + 0x6D2B79F5)
        t = a
        t = _imul(_xor(t, _ushr(t, 15)), _or(t, 1))
        t = _xor(t, t + _imul(_xor(t, _ushr(t, 7)), _or(t, 61)))
        return _u32(_xor(t, _ushr(t, 14))) / 4294967296

    return nxt


def ts_bootstrap_interval(scores, rounds=10_000, seed=1):
    nxt = ts_rng(seed)
    means = []
    for _ in range(rounds):
        total = 0.0
        for _ in range(len(scores)):
            total += scores[math.floor(nxt() * len(scores))]
        means.append(total / len(scores))
    means.sort()
    return means[math.floor(rounds * 0.025)], means[math.floor(rounds * 0.975)]


def ts_paired_difference(a, b, rounds=10_000, seed=1):
    assert len(a) == len(b)
    return ts_bootstrap_interval([x - y for x, y in zip(a, b, strict=True)], rounds, seed)


# --------------------------------------------------------------------------- strategies

_NDCG_TERMS = [1 / math.log2(i + 2) for i in range(10)]
ndcg_like = st.lists(st.sampled_from(_NDCG_TERMS + [0.0]), min_size=1, max_size=3).map(
    lambda xs: sum(xs) / sum(_NDCG_TERMS[: len(xs)])
)
unit_floats = st.floats(0, 1, allow_nan=False, allow_infinity=False)
score_value = st.one_of(unit_floats, ndcg_like, st.sampled_from([0.0, 1.0]))
hits = st.lists(st.sampled_from([0.0, 1.0]), min_size=1, max_size=40)
graded = st.lists(score_value, min_size=1, max_size=40)
scores_lists = st.one_of(
    hits, graded, st.lists(st.sampled_from([0.0, 0.5, 1.0]), min_size=1, max_size=40)
)
rounds_st = st.sampled_from([200, 333, 500])
seed_st = st.one_of(st.integers(0, 2**32 - 1), st.integers(-(2**31), -1))


# --------------------------------------------------------------------------- generator


def test_mulberry32_first_outputs_match_transcription():
    nxt = ts_rng(1)
    expected = [nxt() for _ in range(20)]
    assert mulberry32(1, 20).tolist() == expected
    assert all(0.0 <= u < 1.0 for u in expected)


@pytest.mark.parametrize("seed", [0, 1, 42, 2**32 - 1, -5, 2**40 + 7])
def test_mulberry32_seeds_and_start_offset(seed):
    nxt = ts_rng(seed)
    expected = [nxt() for _ in range(40)]
    assert mulberry32(seed, 40).tolist() == expected
    assert mulberry32(seed, 15, start=25).tolist() == expected[25:]
    assert mulberry32(seed, 0).size == 0


def test_mulberry32_far_start_and_chunk_boundaries():
    nxt = ts_rng(7)
    expected = [nxt() for _ in range(70_000)]
    whole = mulberry32(7, 70_000)
    assert whole.tolist() == expected
    pieces = np.concatenate([mulberry32(7, 32_000), mulberry32(7, 38_000, start=32_000)])
    assert np.array_equal(pieces, whole)
    assert mulberry32(7, 3, start=69_997).tolist() == expected[-3:]


def test_resample_indices_follow_reference_loop_order():
    n, rounds = 13, 7
    nxt = ts_rng(3)
    expected = [[math.floor(nxt() * n) for _ in range(n)] for _ in range(rounds)]
    idx = resample_indices(n, rounds, 3)
    assert idx.shape == (rounds, n)
    assert idx.tolist() == expected


def test_resample_indices_integer_path_equals_float_floor():
    for n in (1, 2, 80, 472, 1_000_003):
        idx = resample_indices(n, 3, 11)
        u = mulberry32(11, 3 * n).reshape(3, n)
        assert np.array_equal(idx, np.floor(u * n).astype(np.intp))
    big = (1 << 21) + 3  # the plain float path
    idx = resample_indices(big, 1, 5)
    assert np.array_equal(idx[0], np.floor(mulberry32(5, big) * big).astype(np.intp))


def test_resample_indices_with_generator():
    idx = resample_indices(9, 4, np.random.default_rng(123))
    expected = np.random.default_rng(123).integers(0, 9, size=(4, 9))
    assert np.array_equal(idx, expected)


# --------------------------------------------------------------------------- bootstrap


def test_seed_figure_68_of_80():
    scores = [1.0] * 68 + [0.0] * 12
    est = bootstrap(scores, rounds=10_000, seed=1)
    assert (est.low, est.high) == (0.775, 0.925)
    assert est.mean == 0.85
    assert est.format() == "85.0 [77.5, 92.5]"
    assert (est.n, est.rounds, est.seed, est.method, est.rng) == (
        80,
        10_000,
        1,
        "percentile",
        "mulberry32",
    )
    assert ts_bootstrap_interval(scores, 10_000, 1) == (0.775, 0.925)


@settings(max_examples=40, deadline=None)
@given(scores=scores_lists, rounds=rounds_st, seed=seed_st)
def test_bootstrap_bit_for_bit(scores, rounds, seed):
    est = bootstrap(scores, rounds=rounds, seed=seed)
    assert (est.low, est.high) == ts_bootstrap_interval(scores, rounds, seed)
    assert est.low <= est.high


@settings(max_examples=25, deadline=None)
@given(
    pairs=st.lists(st.tuples(score_value, score_value), min_size=1, max_size=40),
    rounds=rounds_st,
    seed=seed_st,
)
def test_paired_bit_for_bit(pairs, rounds, seed):
    a = [p[0] for p in pairs]
    b = [p[1] for p in pairs]
    comp = paired(a, b, rounds=rounds, seed=seed)
    diff = comp.difference
    assert (diff.low, diff.high) == ts_paired_difference(a, b, rounds, seed)


def test_bootstrap_bit_for_bit_where_summation_order_matters():
    # Non-dyadic scores: a pairwise or reordered sum differs from the reference's
    # left-to-right sum in the last bit for many of these resamples.
    rng = np.random.default_rng(0)
    scores = rng.random(57).tolist()
    idx = resample_indices(57, 2000, 9)
    vals = np.asarray(scores)[idx]
    seq = np.cumsum(vals, axis=1)[:, -1]
    assert np.any(vals.sum(axis=1) != seq) or np.any(vals[:, ::-1].cumsum(axis=1)[:, -1] != seq)
    est = bootstrap(scores, rounds=2000, seed=9)
    assert (est.low, est.high) == ts_bootstrap_interval(scores, 2000, 9)


@pytest.mark.parametrize("kind", ["hits", "graded", "mixed"])
def test_bootstrap_many_matches_single_and_reference(kind):
    rng = np.random.default_rng(1)
    h = (rng.random((7, 30)) < 0.7).astype(float)
    g = rng.random((7, 30))
    matrix = {"hits": h, "graded": g, "mixed": np.vstack([h[:4], g[:3]])}[kind]
    many = bootstrap_many(matrix, rounds=300, seed=4)
    assert len(many) == 7
    for row, est in zip(matrix, many, strict=True):
        assert est == bootstrap(row, rounds=300, seed=4)
    assert (many[0].low, many[0].high) == ts_bootstrap_interval(matrix[0].tolist(), 300, 4)
    assert (many[-1].low, many[-1].high) == ts_bootstrap_interval(matrix[-1].tolist(), 300, 4)


def test_packed_exact_columns_match_reference():
    # Many dyadic rows of different scales and signs: several packed words.
    rng = np.random.default_rng(6)
    rows = [rng.integers(0, 2, 25) * 1.0 for _ in range(4)]
    rows += [rng.integers(-8, 9, 25) / 8 for _ in range(4)]
    rows += [rng.integers(-1000, 1000, 25) * 1.0 for _ in range(3)]
    rows += [np.full(25, 0.25), np.zeros(25)]
    matrix = np.vstack(rows)
    many = bootstrap_many(matrix, rounds=300, seed=12)
    for row, est in zip(matrix, many, strict=True):
        assert (est.low, est.high) == ts_bootstrap_interval(row.tolist(), 300, 12)


def test_results_do_not_depend_on_block_size(monkeypatch):
    rng = np.random.default_rng(2)
    g = rng.random((3, 30))
    h = (rng.random((3, 30)) < 0.6).astype(float)
    before = (
        bootstrap_many(np.vstack([g, h]), rounds=250, seed=5),
        compare_all(g, ["x", "y", "z"], rounds=250, seed=5),
        sample_size(g[0], rounds=250, seed=5),
        agreement(h[0].tolist(), h[1].tolist(), rounds=250, seed=5),
    )
    monkeypatch.setattr(stats_draws, "_BLOCK", 100)  # a few rounds per block
    monkeypatch.setattr(stats_draws, "_CHUNK", 64)
    after = (
        bootstrap_many(np.vstack([g, h]), rounds=250, seed=5),
        compare_all(g, ["x", "y", "z"], rounds=250, seed=5),
        sample_size(g[0], rounds=250, seed=5),
        agreement(h[0].tolist(), h[1].tolist(), rounds=250, seed=5),
    )
    assert before == after


def test_confidence_other_than_95():
    scores = np.random.default_rng(2).random(50).tolist()
    wide = bootstrap(scores, rounds=1000, seed=2, confidence=0.99)
    narrow = bootstrap(scores, rounds=1000, seed=2, confidence=0.8)
    assert wide.low <= narrow.low <= narrow.high <= wide.high
    assert narrow.high - narrow.low < wide.high - wide.low
    # Positions floor(1000 * 0.1) and floor(1000 * 0.9), as the decimal literals give
    # (not 99, which (1 - 0.8) / 2 computed in floating point would give).
    idx = resample_indices(50, 1000, 2)
    means = np.sort(np.cumsum(np.asarray(scores)[idx], axis=1)[:, -1] / 50)
    assert (narrow.low, narrow.high) == (means[100], means[900])
    assert narrow.confidence == 0.8


def test_degenerate_scores():
    for method in ("percentile", "bca"):
        est = bootstrap([0.3] * 12, rounds=200, method=method)
        assert est.low == est.high == est.mean
    one = bootstrap([0.7], rounds=50, method="bca")
    assert (one.low, one.high) == (0.7, 0.7)


# --------------------------------------------------------------------------- BCa


def _bca_vectors():
    rng = np.random.default_rng(5)
    return [
        np.minimum(rng.lognormal(-2, 1.2, 40), 1.0),
        rng.beta(0.5, 3, 60),
        (rng.random(50) < 0.15).astype(float),
    ]


def test_bca_close_to_scipy():
    scipy_stats = pytest.importorskip("scipy.stats")
    tol = 0.006
    percentile_off = []
    for x in _bca_vectors():
        ref = scipy_stats.bootstrap(
            (x,), np.mean, method="BCa", n_resamples=10_000, rng=np.random.default_rng(0)
        ).confidence_interval
        est = bootstrap(x, rounds=10_000, seed=1, method="bca")
        assert est.method == "bca"
        assert abs(est.low - ref.low) < tol
        assert abs(est.high - ref.high) < tol
        pct = bootstrap(x, rounds=10_000, seed=1)
        percentile_off.append(max(abs(pct.low - ref.low), abs(pct.high - ref.high)))
    # Skewed data: the plain percentile interval would not pass the same check.
    assert max(percentile_off) > 2 * tol


def test_bca_shifts_right_for_right_skewed_scores():
    x = _bca_vectors()[0]
    pct = bootstrap(x, rounds=4000)
    bca = bootstrap(x, rounds=4000, method="bca")
    assert bca.low > pct.low and bca.high > pct.high


# --------------------------------------------------------------------------- comparisons


def ts_sign_flip_p(a, b, rounds, seed):
    """The documented sign-flip test, as a plain loop on the continued stream."""
    d = [x - y for x, y in zip(a, b, strict=True)]
    n = len(d)
    nxt = ts_rng(seed)
    for _ in range(rounds * n):  # the resampling draws come first
        nxt()
    observed = abs(math.fsum(d))
    hits = 0
    for _ in range(rounds):
        flipped = math.fsum(-x if nxt() < 0.5 else x for x in d)
        if abs(flipped) >= observed - 1e-9 * math.fsum(abs(x) for x in d):
            hits += 1
    return (hits + 1) / (rounds + 1)


def test_paired_p_value_follows_documented_draws():
    rng = np.random.default_rng(2)
    a = (rng.random(25) < 0.7).astype(float).tolist()
    b = (rng.random(25) < 0.55).astype(float).tolist()
    comp = paired(a, b, rounds=400, seed=8)
    assert comp.p_value == ts_sign_flip_p(a, b, 400, 8)
    g1, g2 = rng.random(25).tolist(), rng.random(25).tolist()
    assert paired(g1, g2, rounds=400, seed=8).p_value == ts_sign_flip_p(g1, g2, 400, 8)


def test_paired_clear_difference_verdict_and_counts():
    a = [1.0] * 70 + [0.0] * 10
    b = [1.0] * 50 + [0.0] * 30
    comp = paired(a, b, rounds=2000, seed=1, names=("sentence", "fixed"))
    assert (comp.a, comp.b) == ("sentence", "fixed")
    assert comp.verdict == "sentence better"
    assert (comp.wins, comp.ties, comp.losses) == (20, 60, 0)
    assert comp.difference.low > 0
    assert 0 < comp.p_value < 0.01
    assert comp.p_value >= 1 / 2001
    assert comp.p_holm is None
    rev = paired(b, a, rounds=2000, seed=1, names=("fixed", "sentence"))
    assert rev.verdict == "sentence better"
    assert (rev.wins, rev.ties, rev.losses) == (0, 60, 20)
    assert rev.difference.high < 0


def test_paired_tie_and_large_p_values():
    a = [1.0, 0.0] * 20
    b = [0.0, 1.0] * 20
    comp = paired(a, b, rounds=1000, seed=3)
    assert comp.verdict == "tie (interval crosses 0)"
    assert comp.difference.low < 0 < comp.difference.high
    assert comp.p_value == 1.0  # observed mean difference is exactly 0
    rng = np.random.default_rng(11)
    x = rng.random(100)
    y = x[rng.permutation(100)]  # same scores, shuffled across questions
    comp = paired(x, y, rounds=1000, seed=3)
    assert 0.2 < comp.p_value <= 1.0
    assert comp.verdict == "tie (interval crosses 0)"


def test_holm_hand_made():
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.4]) == pytest.approx([0.8, 0.8])
    assert holm([0.001]) == [0.001]
    assert holm([]) == []
    with pytest.raises(ValueError):
        holm([1.5])


def test_compare_all_matches_paired_and_adjusts():
    rng = np.random.default_rng(4)
    h = (rng.random((4, 60)) < np.array([0.5, 0.6, 0.8, 0.85])[:, None]).astype(float)
    g = rng.random((4, 60)) + np.array([0.0, 0.05, 0.3, 0.1])[:, None]
    names = ["fixed", "sentence", "recursive", "parent"]
    for matrix in (h, g):
        comps = compare_all(matrix, names, rounds=500, seed=6)
        assert [(c.a, c.b) for c in comps] == [
            (names[i], names[j]) for i in range(4) for j in range(i + 1, 4)
        ]
        pairs = [(i, j) for i in range(4) for j in range(i + 1, 4)]
        for c, (i, j) in zip(comps, pairs, strict=True):
            single = paired(matrix[i], matrix[j], rounds=500, seed=6, names=(names[i], names[j]))
            assert c.difference == single.difference
            assert c.p_value == single.p_value
            assert (c.wins, c.ties, c.losses, c.verdict) == (
                single.wins,
                single.ties,
                single.losses,
                single.verdict,
            )
        assert [c.p_holm for c in comps] == holm([c.p_value for c in comps])
        assert all(c.p_holm >= c.p_value for c in comps)


def test_compare_all_with_generator_matches_paired_with_generator():
    rng = np.random.default_rng(0)
    m = rng.random((3, 20))
    comps = compare_all(m, ["x", "y", "z"], rounds=300, seed=np.random.default_rng(9))
    single = paired(m[0], m[1], rounds=300, seed=np.random.default_rng(9), names=("x", "y"))
    assert comps[0].difference == single.difference
    assert comps[0].p_value == single.p_value
    assert comps[0].difference.rng == "numpy" and comps[0].difference.seed is None


# --------------------------------------------------------------------------- sample size


def test_sample_size_shrinks_as_root_n():
    rng = np.random.default_rng(3)
    scores = rng.random(100)
    rows = sample_size(scores, rounds=2000, seed=1)
    assert [r.n for r in rows] == [100, 200, 400, 800]
    base = bootstrap(scores, rounds=2000, seed=1)
    assert (rows[0].low, rows[0].high, rows[0].mean) == (base.low, base.high, base.mean)
    for r, expected in zip(rows[1:], [2**-0.5, 0.5, 8**-0.5], strict=True):
        assert r.half_width / rows[0].half_width == pytest.approx(expected, rel=0.08)
        assert r.half_width == pytest.approx((r.high - r.low) / 2)
        assert (r.rounds, r.seed, r.rng) == (2000, 1, "mulberry32")


def test_sample_size_explicit_sizes_and_reference_draws():
    scores = [1.0, 0.0, 0.0, 1.0, 1.0]
    rows = sample_size(scores, sizes=[7], rounds=300, seed=2)
    nxt = ts_rng(2)
    means = []
    for _ in range(300):
        total = 0.0
        for _ in range(7):
            total += scores[math.floor(nxt() * 5)]
        means.append(total / 7)
    means.sort()
    assert (rows[0].low, rows[0].high) == (means[7], means[292])


def test_questions_for_half_width_hand_computed():
    scores = [0.0, 1.0] * 10
    # sd^2 = 20 * 0.25 / 19 = 5/19; z = 1.959963984540054
    n = 1.959963984540054**2 * (5 / 19) / 0.1**2  # 101.09...
    assert math.ceil(n) == 102
    assert questions_for_half_width(scores, half_width=0.1) == 102
    assert questions_for_half_width([1.0] * 68 + [0.0] * 12, half_width=0.04) == 310
    assert questions_for_half_width([0.5, 0.5, 0.5]) == 1


def test_questions_to_separate_hand_computed():
    a = [1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 0.0, 1.0]
    b = [0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 1.0]
    d = [x - y for x, y in zip(a, b, strict=True)]  # 1 0 0 1 0 0 -1 0
    mean = sum(d) / 8
    var = sum((x - mean) ** 2 for x in d) / 7
    z = 1.959963984540054 + 0.8416212335729143
    expected = math.ceil(z**2 * var / 0.05**2)
    assert questions_to_separate(a, b, difference=0.05) == expected
    assert questions_to_separate(a, b, difference=0.1) < expected
    assert questions_to_separate(a, b, difference=0.05, power=0.9) > expected


# --------------------------------------------------------------------------- agreement


def test_kappa_textbook_example():
    # 50 items: both yes 20, a yes b no 5, a no b yes 10, both no 15 -> kappa 0.4.
    a = ["yes"] * 25 + ["no"] * 25
    b = ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15
    res = agreement(a, b, classes=["yes", "no"], rounds=500, seed=1)
    assert res.confusion == [[20, 5], [10, 15]]
    assert res.classes == ["yes", "no"]
    assert res.n == 50
    assert res.kappa.mean == pytest.approx(0.4)
    assert res.percent.mean == pytest.approx(0.7)
    assert res.kappa.low < 0.4 < res.kappa.high
    assert cohen_kappa([[20, 5], [10, 15]]) == pytest.approx(0.4)


def test_kappa_three_classes_by_hand():
    a = ["correct"] * 6 + ["partial"] * 3 + ["wrong"] * 3
    b = ["correct"] * 5 + ["wrong"] + ["partial", "partial", "correct"] + ["wrong"] * 3
    res = agreement(a, b, classes=["correct", "partial", "wrong"], rounds=300)
    # rows = a, cols = b
    assert res.confusion == [[5, 0, 1], [1, 2, 0], [0, 0, 3]]
    po = (5 + 2 + 3) / 12
    pe = (6 * 6 + 3 * 2 + 3 * 4) / 12**2  # a's marginals 6,3,3; b's 6,2,4
    assert res.kappa.mean == pytest.approx((po - pe) / (1 - pe))
    assert res.percent.mean == pytest.approx(po)


def test_agreement_percent_equals_bootstrap_and_records_seed():
    rng = np.random.default_rng(8)
    a = rng.integers(0, 3, 40).tolist()
    b = [x if rng.random() < 0.7 else int(rng.integers(0, 3)) for x in a]
    res = agreement(a, b, rounds=400, seed=5)
    hits = [float(x == y) for x, y in zip(a, b, strict=True)]
    assert res.percent == bootstrap(hits, rounds=400, seed=5)
    assert res.classes == [0, 1, 2]
    assert (res.kappa.rounds, res.kappa.seed, res.kappa.rng) == (400, 5, "mulberry32")
    # kappa per resample, by hand, with the same indices
    idx = resample_indices(40, 400, 5)
    kappas = []
    for row in idx:
        t = np.zeros((3, 3), dtype=int)
        for i in row:
            t[a[i], b[i]] += 1
        kappas.append(cohen_kappa(t))
    kappas.sort()
    assert res.kappa.low == pytest.approx(kappas[10], abs=1e-12)
    assert res.kappa.high == pytest.approx(kappas[390], abs=1e-12)


def test_kappa_degenerate_and_unsortable_labels():
    res = agreement(["ok"] * 10, ["ok"] * 10, rounds=100)
    assert res.kappa.mean == 1.0 and (res.kappa.low, res.kappa.high) == (1.0, 1.0)
    assert cohen_kappa([[0, 0], [0, 7]]) == 1.0
    assert cohen_kappa([[0, 4], [3, 0]]) < 0
    mixed = agreement([1, "a", 1, "a"], ["a", "a", 1, 1], rounds=50)
    assert mixed.classes == [1, "a"]
    assert mixed.confusion == [[1, 1], [1, 1]]


# --------------------------------------------------------------------------- records, determinism


def test_determinism_and_generator_records():
    rng = np.random.default_rng(12)
    x = rng.random(50)
    assert bootstrap(x, rounds=500, seed=3) == bootstrap(x, rounds=500, seed=3)
    assert bootstrap(x, rounds=500, seed=3) != bootstrap(x, rounds=500, seed=4)
    g1 = bootstrap(x, rounds=500, seed=np.random.default_rng(1))
    g2 = bootstrap(x, rounds=500, seed=np.random.default_rng(1))
    assert g1 == g2
    assert (g1.rng, g1.seed) == ("numpy", None)
    idx = np.random.default_rng(1).integers(0, 50, size=(500, 50))
    means = np.sort(x[idx].sum(axis=1) / 50)
    assert g1.low == pytest.approx(means[12], abs=1e-12)
    y = rng.random(50)
    assert paired(x, y, rounds=300, seed=2) == paired(x, y, rounds=300, seed=2)
    assert agreement([0, 1] * 5, [1, 1] * 5, rounds=100) == agreement(
        [0, 1] * 5, [1, 1] * 5, rounds=100
    )


def test_to_dict_and_format():
    est = Estimate(0.123456, 0.1, 0.15, 40, 1000, 1, "percentile", "mulberry32")
    assert est.format() == "12.3 [10.0, 15.0]"
    assert est.format(scale=1, digits=3) == "0.123 [0.100, 0.150]"
    assert est.to_dict() == {
        "mean": 0.123456,
        "low": 0.1,
        "high": 0.15,
        "n": 40,
        "rounds": 1000,
        "seed": 1,
        "method": "percentile",
        "rng": "mulberry32",
        "confidence": 0.95,
    }
    comp = paired([1.0, 0.0, 1.0], [0.0, 0.0, 1.0], rounds=50)
    d = comp.to_dict()
    assert d["difference"]["rounds"] == 50 and d["verdict"] == comp.verdict
    assert isinstance(d["p_value"], float)


# --------------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    "call",
    [
        lambda: bootstrap([]),
        lambda: bootstrap([0.1, float("nan")]),
        lambda: bootstrap([[0.1, 0.2]]),
        lambda: bootstrap(["a", "b"]),
        lambda: bootstrap([0.1], rounds=0),
        lambda: bootstrap([0.1], method="basic"),
        lambda: bootstrap([0.1], confidence=1.0),
        lambda: bootstrap([0.1], seed=1.5),
        lambda: bootstrap_many([[0.1, 0.2], [0.3]]),
        lambda: bootstrap_many([]),
        lambda: paired([0.1, 0.2], [0.3]),
        lambda: paired([0.1], [0.3], names=("A",)),
        lambda: compare_all([[0.1, 0.2]], ["A"]),
        lambda: compare_all([[0.1, 0.2], [0.3, 0.4]], ["A", "A"]),
        lambda: sample_size([0.1, 0.2], sizes=[0]),
        lambda: sample_size([0.1, 0.2], sizes=[]),
        lambda: questions_for_half_width([0.1]),
        lambda: questions_for_half_width([0.1, 0.2], half_width=0),
        lambda: questions_to_separate([0.1, 0.2], [0.1]),
        lambda: questions_to_separate([0.1, 0.2], [0.1, 0.3], power=1.0),
        lambda: agreement([], []),
        lambda: agreement([1, 2], [1]),
        lambda: agreement([1, 2], [1, 3], classes=[1, 2]),
        lambda: cohen_kappa([[1, 2, 3]]),
        lambda: mulberry32(1, -1),
    ],
)
def test_bad_input_raises_value_error(call):
    with pytest.raises(ValueError):
        call()


def test_error_messages_name_the_problem():
    with pytest.raises(ValueError, match="must be paired"):
        paired([0.1, 0.2], [0.3])
    with pytest.raises(ValueError, match="must not be empty"):
        bootstrap([])
    assert issubclass(stats.InputError, ValueError)


# The statistics rooms' input checks, draws and small formulas (ragmeter.stats_*).


def test_scores_must_be_a_flat_non_empty_list_or_a_non_empty_table():
    with pytest.raises(InputError, match="must be a flat list of per-question scores"):
        stats.bootstrap([[1.0, 0.0]], rounds=10)
    with pytest.raises(InputError, match="must not be empty"):
        stats.bootstrap([], rounds=10)
    for shape in ((0, 3), (2, 0)):
        with pytest.raises(InputError, match="must not be empty"):
            stats.bootstrap_many(np.zeros(shape), rounds=10)


def test_draws_need_a_round_and_keep_indices_past_65536():
    with pytest.raises(InputError, match="rounds"):
        resample_indices(5, 0)
    n = 70_000
    idx = resample_indices(n, 3, seed=1)
    assert idx.shape == (3, n) and idx.max() > 65_536 and idx.max() < n
    x = np.arange(n, dtype=np.float64)
    est = stats.bootstrap(x, rounds=3, seed=1)
    means = np.sort(x[idx].mean(axis=1))
    assert means[0] <= est.low <= est.high <= means[-1]
    assert stats.bootstrap(x, rounds=3, seed=1) == est  # the cached draws, read again


def test_a_half_width_needs_two_scores_and_sample_rows_are_plain_dicts():
    with pytest.raises(InputError, match="at least two scores"):
        questions_for_half_width([1.0])
    assert questions_for_half_width([0.0, 1.0], half_width=0.5) >= 1
    row = stats.sample_size([0.0, 1.0, 1.0, 0.0], rounds=50)[0]
    d = row.to_dict()
    assert d["n"] == 4 and d["rounds"] == 50 and d["confidence"] == 0.95


def test_agreement_refuses_repeated_classes_and_kappa_checks_its_table():
    with pytest.raises(InputError, match="classes must not repeat"):
        agreement(["a", "b"], ["a", "b"], classes=["a", "b", "a"], rounds=10)
    with pytest.raises(InputError, match="must not be negative"):
        cohen_kappa([[1, -1], [0, 2]])
    with pytest.raises(InputError, match="confusion table is empty"):
        cohen_kappa([[0, 0], [0, 0]])
    assert cohen_kappa([[3, 0], [0, 0]]) == 1.0  # one label throughout: agreement
    assert cohen_kappa([[2, 1], [1, 2]]) == pytest.approx((4 / 6 - 0.5) / 0.5)
    # p_e with n * n - E = 1: kappa is an ordinary number, not the 0/0 case
    assert cohen_kappa([[1, 0], [0, 0]]) == 1.0


def test_estimates_print_in_percent_by_default():
    from ragmeter.stats.bootstrap import format_interval

    assert format_interval(0.5, 0.25, 0.75) == "50.0 [25.0, 75.0]"
    assert format_interval(0.5, 0.25, 0.75, scale=1, digits=3) == "0.500 [0.250, 0.750]"


def test_resample_indices_draw_with_seed_one_by_default():
    from ragmeter.stats.draws import resample_indices as draw

    assert np.array_equal(draw(17, 40), draw(17, 40, seed=1))
    assert not np.array_equal(draw(17, 40), draw(17, 40, seed=0))


def test_sign_flips_from_a_numpy_generator_are_plus_or_minus_one_each_half_the_time():
    from ragmeter.stats.draws import _sign_blocks

    blocks = list(_sign_blocks(50, 400, np.random.default_rng(3)))
    signs = np.vstack([s for _, s in blocks])
    assert signs.shape == (400, 50) and set(np.unique(signs)) == {-1.0, 1.0}
    assert abs(signs.mean()) < 0.02  # 20,000 fair flips: the mean is within 0.02 of 0

"""Long rounds go by tiles of rounds and draws, and every sum stays the reference's.

The tiled path (:mod:`ragmeter.stats.resample`) takes over from thousands of draws a
round; these tests force it on small shapes (tiny tiles) and compare it, bit for bit,
with the blocked path it replaces, with the plain reference loop, and with the summary
fingerprints recorded before it existed.
"""

from __future__ import annotations

import hashlib
import json
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragmeter import stats
from ragmeter.comparison.summary import plan_of, summarize
from ragmeter.stats import resample
from ragmeter.stats.bootstrap import _block_sums, _plan
from ragmeter.stats.draws import _index_blocks, mulberry32_indices, tile_indices


def _bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.float64).view(np.uint64)


def _scores(draw, n: int, k: int) -> np.ndarray:
    """Columns of the kinds a run holds: graded, 0/1, tenths, reciprocal ranks."""
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    kinds = [
        lambda: rng.random(n),
        lambda: (rng.random(n) < 0.5) * 1.0,
        lambda: rng.integers(0, 11, n) / 10,
        lambda: 1 / rng.integers(1, 40, n),
        lambda: rng.normal(0, 1e6, n),
    ]
    cols = [kinds[draw(st.integers(0, len(kinds) - 1))]() for _ in range(k)]
    return np.ascontiguousarray(np.stack(cols, axis=1))


def _tiny_tiles(monkeypatch, rows: tuple[int, int], tile: int) -> None:
    """Every round counts as long, with tiles of a few rounds and draws."""
    monkeypatch.setattr(resample, "LONG", 1 << 40)
    monkeypatch.setattr(resample, "ROWS", rows)
    monkeypatch.setattr(resample, "SUMS", 1)
    monkeypatch.setattr(resample, "TILE", tile)


def _blocked(values: np.ndarray, m: int, rounds: int, seed: int) -> np.ndarray:
    """The blocked path: whole rounds per block, summed draw by draw."""
    words, other = _plan(values, m)
    sums = np.empty((rounds, values.shape[1]))
    for row0, idx in _index_blocks(values.shape[0], m, rounds, seed):
        sums[row0 : row0 + idx.shape[0]] = _block_sums(values, idx, words, other)
    return sums / m


@st.composite
def _case(draw):
    n = draw(st.integers(1, 40))
    k = draw(st.integers(1, 6))
    m = draw(st.sampled_from([n, 2 * n, 3 * n + 1, 8 * n]))
    rounds = draw(st.integers(1, 70))
    seed = draw(st.integers(-(2**31), 2**32 + 5))
    rows = draw(st.integers(1, 9))
    tile = draw(st.integers(1, 200))
    return _scores(draw, n, k), m, rounds, seed, (rows, rows + draw(st.integers(0, 9))), tile


@given(case=_case())
def test_tiled_sums_equal_the_blocked_sums_bit_for_bit(case):
    values, m, rounds, seed, rows, tile = case
    expected = _blocked(values, m, rounds, seed)
    with pytest.MonkeyPatch.context() as mp:
        _tiny_tiles(mp, rows, tile)
        assert resample.long_rounds(m, seed)
        got = stats.resampled_means(values, m, rounds, seed)
    assert np.array_equal(_bits(got), _bits(expected))


@st.composite
def _sizes_case(draw):
    n = draw(st.integers(1, 30))
    k = draw(st.integers(1, 5))
    unit = draw(st.integers(1, 3 * n))
    multiples = draw(st.lists(st.sampled_from([1, 2, 3, 4, 6, 8, 12]), min_size=1, max_size=4))
    rounds = draw(st.integers(1, 60))
    seed = draw(st.integers(-(2**31), 2**32 + 5))
    rows = draw(st.integers(1, 9))
    tile = draw(st.integers(1, 200))
    threads = draw(st.sampled_from([1, 2, 3]))
    sizes = [unit * q for q in multiples]
    return _scores(draw, n, k), sizes, rounds, seed, (rows, rows + 3), tile, threads


@given(case=_sizes_case())
def test_every_size_from_one_pass_of_tiles_sums_as_each_size_alone(case):
    """Sizes that divide the largest read each draw once (tiles of the largest size's
    rounds), and every size's sums are the blocked path's for that size, bit for bit."""
    from ragmeter import engine

    values, sizes, rounds, seed, rows, tile, threads = case
    top = max(sizes)
    with pytest.MonkeyPatch.context() as mp:
        _tiny_tiles(mp, rows, tile)
        mp.setattr(engine, "THREADS", threads)
        got = resample.tiled_sums_sizes(values, sizes, rounds, seed, *_plan(values, top))
    if any(top % m for m in sizes):
        assert got is None
        return
    assert sorted(got) == sorted(set(sizes))
    for m in set(sizes):
        assert np.array_equal(_bits(got[m]), _bits(_blocked_sums(values, m, rounds, seed))), m


def _blocked_sums(values: np.ndarray, m: int, rounds: int, seed: int) -> np.ndarray:
    words, other = _plan(values, m)
    sums = np.empty((rounds, values.shape[1]))
    for row0, idx in _index_blocks(values.shape[0], m, rounds, seed):
        sums[row0 : row0 + idx.shape[0]] = _block_sums(values, idx, words, other)
    return sums


def test_a_round_of_too_many_segments_is_left_to_each_size_alone():
    values = np.arange(10.0)[:, None] / 3
    assert resample.tiled_sums_sizes(values, [1, 65], 5, 1, *_plan(values, 65)) is None
    assert resample.tiled_sums_sizes(values, [1, 64], 5, 1, *_plan(values, 64)) is not None


@pytest.mark.parametrize("threads", [1, 2, 5])
def test_rounds_shared_among_threads_sum_as_one_thread_does(threads, monkeypatch):
    """Tiles of rounds go to several threads; every round's sum is the blocked path's,
    bit for bit, however many threads share them."""
    from ragmeter import engine

    rng = np.random.default_rng(11)
    values = np.stack([rng.random(60), rng.normal(0, 1e6, 60), rng.integers(0, 7, 60) / 6], 1)
    monkeypatch.setattr(engine, "THREADS", threads)
    monkeypatch.setattr(resample, "LONG", 1 << 40)  # every round long: by tiles
    got = stats.resampled_means(values, 150, 1800, 23)
    assert np.array_equal(_bits(got), _bits(_blocked(values, 150, 1800, 23)))


@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.sampled_from([1, 7, 1000, (1 << 21) - 1, 1 << 21, 3_000_000]),
    m=st.integers(1, 50),
    row0=st.integers(0, 10**6),
    rows=st.integers(1, 6),
    i0=st.integers(0, 49),
)
def test_a_tile_holds_the_streams_draws_at_its_place(seed, n, m, row0, rows, i0):
    i0 = min(i0, m - 1)
    count = m - i0
    tile = tile_indices(seed, n, m, row0, rows, i0, count)
    for b in range(rows):
        want = mulberry32_indices(seed, count, (row0 + b) * m + i0, n)
        assert tile[b].tolist() == want.tolist()


def _reference(scores: list[float], rounds: int, seed: int) -> tuple[float, float]:
    """The seed's ``bootstrapInterval``, transcribed."""
    a = seed & 0xFFFFFFFF
    means = []
    for _ in range(rounds):
        total = 0.0
        for _ in range(len(scores)):
            a = (a + 0x6D2B79F5) & 0xFFFFFFFF
            t = ((a ^ (a >> 15)) * (a | 1)) & 0xFFFFFFFF
            t ^= (t + (((t ^ (t >> 7)) * (t | 61)) & 0xFFFFFFFF)) & 0xFFFFFFFF
            total += scores[math.floor(((t ^ (t >> 14)) / 4294967296) * len(scores))]
        means.append(total / len(scores))
    means.sort()
    return means[math.floor(rounds * 0.025)], means[math.floor(rounds * 0.975)]


def test_tiled_intervals_are_the_reference_loops(monkeypatch):
    rng = np.random.default_rng(3)
    matrix = np.stack([rng.random(37), rng.integers(0, 11, 37) / 10, 1 / rng.integers(1, 9, 37)])
    _tiny_tiles(monkeypatch, (3, 5), 7)
    for row, est in zip(matrix, stats.bootstrap_many(matrix, rounds=300, seed=9), strict=True):
        assert (est.low, est.high) == _reference(row.tolist(), 300, 9)


@pytest.mark.parametrize("tiles", [False, True])
def test_sample_sizes_of_every_system_at_once_equal_one_system_at_a_time(tiles, monkeypatch):
    rng = np.random.default_rng(5)
    matrix = np.stack([rng.random(23), (rng.random(23) < 0.4) * 1.0, rng.integers(0, 4, 23) / 3])
    if tiles:
        _tiny_tiles(monkeypatch, (4, 6), 11)
    for sizes in (None, [23, 30, 46]):
        every = stats.sample_size_many(matrix, sizes, rounds=120, seed=4)
        for row, got in zip(matrix, every, strict=True):
            assert got == stats.sample_size(row, sizes, rounds=120, seed=4)


def test_sample_sizes_read_a_generator_system_after_system():
    matrix = np.random.default_rng(1).random((3, 15))
    every = stats.sample_size_many(matrix, rounds=50, seed=np.random.default_rng(8))
    one = np.random.default_rng(8)
    assert every == [stats.sample_size(row, rounds=50, seed=one) for row in matrix]


def _matrices(n: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(7)
    return {
        "map": rng.random((3, n)),
        "P_10": rng.integers(0, 11, (3, n)) / 10,
        "recip_rank": 1 / rng.integers(1, 50, (3, n)),
        "hit": (rng.random((3, n)) < 0.6) * 1.0,
    }


# Recorded with the blocked path, before tiles and one pass for every metric existed;
# recorded again, once, when a pair's flipped sums became the difference of its two
# systems' (Flips.of_pairs): the comparisons' interval ends of these graded measures
# moved in the last bits (at most 4e-17 here), every other number is the one before.
_FINGERPRINTS = {
    (1100, "percentile"): "d582949a4d4f7fa7bd8b6f567357f9d4e1a9671cf08673a1da17a493fd1e4146",
    (2100, "bca"): "87fbf2f25985d7b1290833765148381e6cb66f413f56b451785792708dce4b03",
}


@pytest.mark.parametrize(("n", "method"), list(_FINGERPRINTS))
def test_a_summary_of_thousands_of_questions_is_the_one_recorded_before(n, method):
    metric, seed = ("map", 1) if method == "percentile" else ("P_10", 3)
    summary = summarize(
        _matrices(n), ["a", "b", "c"], plan_of(metric, seed, 1500, 0.95), method=method
    )
    data = summary.to_json()  # less what summaries have recorded since: ranks, who won
    data.pop("ranks", None)
    data["comparisons"] = [
        {k: v for k, v in r.items() if k != "winner"} for r in data["comparisons"]
    ]
    text = json.dumps(data, sort_keys=True)
    assert hashlib.sha256(text.encode()).hexdigest() == _FINGERPRINTS[(n, method)]

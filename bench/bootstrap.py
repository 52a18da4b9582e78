"""Time ragmeter's intervals against the plain reference loop and scipy.

One run: 6 systems x 472 questions x 10,000 rounds, the interval of every system
plus all 15 paired comparisons, once on 0/1 hit scores and once on graded scores.

    python bench/bootstrap.py
    python bench/bootstrap.py --trec [--questions 5000] [--rounds 2000] [--runs 6]

``--trec`` times what a summary of ``ragmeter evaluate`` computes at TREC scale (runs x
5 measures x thousands of queries: every interval, the paired comparisons on the first
measure and the sample sizes at n, 2n, 4n, 8n), once as it is now (long rounds by tiles,
one pass for every measure and run) and once as before (whole-round blocks, a pass per
measure and per run), checks the two give the same numbers bit for bit and prints the
ratio.

(a) is the reference TypeScript loop transcribed to plain Python; it is timed on
500 rounds and scaled linearly to 10,000. (b) is scipy.stats.bootstrap
(vectorized, percentile, paired via the per-question difference). ragmeter's
time also includes a sign-flip p-value for every pair, which (a) and (b) do not
compute.
"""

from __future__ import annotations

import argparse
import math
import time
from contextlib import contextmanager

import numpy as np
import scipy.stats

from ragmeter import stats
from ragmeter.stats import bootstrap, bootstrap_many, compare_all, paired, resample

SYSTEMS, QUESTIONS, ROUNDS = 6, 472, 10_000
SLOW_ROUNDS = 500  # rounds for the plain Python loop, scaled up to ROUNDS
REPEATS = 5
NAMES = ["fixed", "sentence", "recursive", "overlap", "parent", "whole"]


def make_scores(seed: int = 2024) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    rates = np.linspace(0.6, 0.85, SYSTEMS)[:, None]
    hits = (rng.random((SYSTEMS, QUESTIONS)) < rates).astype(float)
    # nDCG-like graded scores: 0 for a miss, else 1 / log2(rank + 1) for a rank in 1..10.
    ranks = rng.integers(1, 11, size=(SYSTEMS, QUESTIONS))
    graded = np.where(rng.random((SYSTEMS, QUESTIONS)) < rates, 1 / np.log2(ranks + 1), 0.0)
    return {"0/1 hits": hits, "graded": graded}


# -- (a) the reference loop, transcribed ------------------------------------------------


def ts_rng(seed: int):
    a = seed & 0xFFFFFFFF

    def nxt() -> float:
        nonlocal a
        a = (a + 0x6D2B79F5) & 0xFFFFFFFF
        t = a
        t = ((t ^ (t >> 15)) * (t | 1)) & 0xFFFFFFFF
        t ^= (t + (((t ^ (t >> 7)) * (t | 61)) & 0xFFFFFFFF)) & 0xFFFFFFFF
        return (t ^ (t >> 14)) / 4294967296

    return nxt


def ts_bootstrap_interval(scores: list[float], rounds: int, seed: int = 1) -> tuple[float, float]:
    nxt = ts_rng(seed)
    n = len(scores)
    means = []
    for _ in range(rounds):
        total = 0.0
        for _ in range(n):
            total += scores[math.floor(nxt() * n)]
        means.append(total / n)
    means.sort()
    return means[math.floor(rounds * 0.025)], means[math.floor(rounds * 0.975)]


def run_reference(matrix: np.ndarray, rounds: int) -> None:
    rows = matrix.tolist()
    for row in rows:
        ts_bootstrap_interval(row, rounds)
    for i in range(SYSTEMS):
        for j in range(i + 1, SYSTEMS):
            ts_bootstrap_interval([x - y for x, y in zip(rows[i], rows[j], strict=True)], rounds)


# -- (b) scipy ---------------------------------------------------------------------------


def run_scipy(matrix: np.ndarray) -> None:
    rng = np.random.default_rng(0)

    def one(x: np.ndarray) -> None:
        scipy.stats.bootstrap(
            (x,),
            np.mean,
            vectorized=True,
            n_resamples=ROUNDS,
            method="percentile",
            rng=rng,
        )

    for row in matrix:
        one(row)
    for i in range(SYSTEMS):
        for j in range(i + 1, SYSTEMS):
            one(matrix[i] - matrix[j])


# -- ragmeter ------------------------------------------------------------------------------


def run_ragmeter(matrix: np.ndarray) -> None:
    bootstrap_many(matrix, rounds=ROUNDS, seed=1)
    compare_all(matrix, NAMES, rounds=ROUNDS, seed=1)


def best_of(fn, repeats: int) -> float:
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


# -- TREC scale: now against before --------------------------------------------------------


def trec_scores(n: int, runs: int, seed: int = 7) -> np.ndarray:
    """(5 measures x runs, n): MAP- and nDCG-like, tenths, sixths, reciprocal ranks."""
    rng = np.random.default_rng(seed)
    shape = (runs, n)
    return np.vstack(
        [
            rng.random(shape),
            rng.random(shape),
            rng.integers(0, 11, shape) / 10,
            rng.integers(0, 7, shape) / 6,
            1 / rng.integers(1, 50, shape),
        ]
    )


@contextmanager
def whole_round_blocks():
    """The path before tiles: every round in blocks of whole rounds."""
    saved = resample.LONG
    resample.LONG = 0
    try:
        yield
    finally:
        resample.LONG = saved


def summary_now(matrix: np.ndarray, rounds: int, runs: int) -> tuple:
    names = [f"run{i}" for i in range(runs)]
    est = bootstrap_many(matrix, rounds=rounds, seed=1)
    comp = compare_all(matrix[:runs], names, rounds=rounds, seed=1)
    sizes = stats.sample_size_many(matrix[:runs], rounds=rounds, seed=1)
    return est, comp, sizes


def summary_before(matrix: np.ndarray, rounds: int, runs: int) -> tuple:
    names = [f"run{i}" for i in range(runs)]
    with whole_round_blocks():
        est = [
            e
            for i in range(0, matrix.shape[0], runs)
            for e in bootstrap_many(matrix[i : i + runs], rounds=rounds, seed=1)
        ]
        comp = compare_all(matrix[:runs], names, rounds=rounds, seed=1)
        sizes = [stats.sample_size(row, rounds=rounds, seed=1) for row in matrix[:runs]]
    return est, comp, sizes


def trec_main(questions: int, rounds: int, runs: int) -> None:
    matrix = trec_scores(questions, runs)
    print(
        f"{runs} runs x 5 measures x {questions:,} questions x {rounds:,} rounds: "
        f"{matrix.shape[0]} intervals, {runs * (runs - 1) // 2} comparisons, "
        f"{runs} x 4 sample sizes"
    )
    timed = {}
    for label, fn in (("before", summary_before), ("now", summary_now)):
        start = time.perf_counter()
        timed[label] = (fn(matrix, rounds, runs), time.perf_counter() - start)
    same = timed["now"][0] == timed["before"][0]
    print(f"same numbers, bit for bit: {same}")
    before, now = timed["before"][1], timed["now"][1]
    print(f"before {before:.2f} s, now {now:.2f} s: {before / now:.2f}x")
    assert same


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--trec", action="store_true", help="TREC scale: now against before")
    p.add_argument("--questions", type=int, default=5000)
    p.add_argument("--rounds", type=int, default=2000)
    p.add_argument("--runs", type=int, default=SYSTEMS)
    args = p.parse_args()
    if args.trec:
        trec_main(args.questions, args.rounds, args.runs)
        return
    data = make_scores()
    print(
        f"{SYSTEMS} systems x {QUESTIONS} questions x {ROUNDS:,} rounds: "
        f"{SYSTEMS} intervals + {SYSTEMS * (SYSTEMS - 1) // 2} paired comparisons\n"
    )

    # Same numbers as the reference loop (500 rounds, one system and one pair).
    for label, matrix in data.items():
        x, y = matrix[0].tolist(), matrix[1].tolist()
        est = bootstrap(x, rounds=SLOW_ROUNDS, seed=1)
        ref = ts_bootstrap_interval(x, SLOW_ROUNDS, 1)
        assert (est.low, est.high) == ref, (label, est, ref)
        diff = paired(x, y, rounds=SLOW_ROUNDS, seed=1).difference
        ref_d = ts_bootstrap_interval([a - b for a, b in zip(x, y, strict=True)], SLOW_ROUNDS)
        assert (diff.low, diff.high) == ref_d, (label, diff, ref_d)
        print(
            f"{label:>9}: ragmeter == reference loop at {SLOW_ROUNDS} rounds, bit for bit: "
            f"system [{est.low!r}, {est.high!r}], pair [{diff.low!r}, {diff.high!r}]"
        )
    print()

    rows = []
    for label, matrix in data.items():
        ours = best_of(lambda m=matrix: run_ragmeter(m), REPEATS)
        sp = best_of(lambda m=matrix: run_scipy(m), 3)
        start = time.perf_counter()
        run_reference(matrix, SLOW_ROUNDS)
        ref = (time.perf_counter() - start) * ROUNDS / SLOW_ROUNDS
        rows.append((label, ours, ref, sp))

    print(
        "| scores   | ragmeter s | (a) plain loop s* | (b) scipy s | (a)/ragmeter | (b)/ragmeter |"
    )
    print(
        "|----------|-----------:|------------------:|------------:|-------------:|-------------:|"
    )
    for label, ours, ref, sp in rows:
        print(
            f"| {label:<8} | {ours:10.3f} | {ref:17.1f} | {sp:11.3f} "
            f"| {ref / ours:11.0f}x | {sp / ours:11.1f}x |"
        )
    print(
        f"\n* (a) timed on {SLOW_ROUNDS} rounds and scaled linearly x{ROUNDS // SLOW_ROUNDS}. "
        f"ragmeter: best of {REPEATS}; scipy: best of 3; ragmeter also computes 15 p-values."
    )
    for label, ours, ref, sp in rows:
        ok = ref / ours >= 50 and sp > ours
        print(f"{label}: target (>= 50x the loop, faster than scipy) {'met' if ok else 'MISSED'}")


if __name__ == "__main__":
    main()

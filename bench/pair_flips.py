"""The flips of a comparison table: per pair (rounds x pairs) against per system.

For m systems of graded scores on n questions, times and measures the peak memory
(tracemalloc) of one all-pairs max-T table's statistics both ways, in one run:

- **per pair** (the way before): the sign flips of each pair's differences
  (``Flips(diffs)``, rounds x pairs), every pair's null p-values at once
  (``NullP.matrix()``) and the step-down over that matrix;
- **per system** (``Flips.of_pairs``): each system's flipped sums (rounds x systems), a
  pair's as the difference of its two systems', and the step-down a pair at a time.

Then checks the two give the same p-values and decisions, and intervals within 1e-12.

Run: python bench/pair_flips.py [--systems 10,30,100] [--questions 5000] [--rounds 10000]
"""

from __future__ import annotations

import argparse
import time
import tracemalloc
from functools import partial

import numpy as np

from ragmeter.stats.maxt import null_p_values, step_down
from ragmeter.stats.paired_tests import Flips, flip_ends


def table(flips: Flips, counts, pairs, whole: bool):
    """The raw and adjusted p-values, decisions and interval ends of one table."""
    raw, null = null_p_values(flips, False, counts)
    adj, reject, levels = step_down(raw, null.matrix() if whole else null, 0.05, pairs)
    lows, highs = flip_ends(flips, reject, levels)
    return raw, adj, reject, lows, highs


def measure(make, whole: bool, counts, pairs):
    tracemalloc.start()
    t = time.perf_counter()
    out = table(make(), counts, pairs, whole)
    seconds = time.perf_counter() - t
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return seconds, peak, out


def by_pair(x: np.ndarray, pairs, rounds: int, seed: int) -> Flips:
    diffs = np.stack([x[i] - x[j] for i, j in pairs], axis=1) + 0.0
    return Flips(diffs, rounds, seed)


def row(m: int, questions: int, rounds: int, seed: int) -> str:
    rng = np.random.default_rng(seed)
    x = np.round(rng.random((m, questions)) ** 2, 4)
    pairs = [(i, j) for i in range(m) for j in range(i + 1, m)]
    counts = [(int((x[i] > x[j]).sum()), 0, int((x[i] < x[j]).sum())) for i, j in pairs]
    old_s, old_mb, old = measure(partial(by_pair, x, pairs, rounds, seed), True, counts, pairs)
    new_s, new_mb, new = measure(
        partial(Flips.of_pairs, x, pairs, rounds, seed), False, counts, pairs
    )
    same = all(np.array_equal(a, b) for a, b in zip(old[:3], new[:3], strict=True))
    same &= all(
        np.allclose(a, b, rtol=0, atol=1e-12) for a, b in zip(old[3:], new[3:], strict=True)
    )
    return (
        f"{m:>7} {len(pairs):>6} {old_s:>10.2f} {old_mb:>7.0f} {new_s:>12.2f} {new_mb:>7.0f} "
        f"{old_s / new_s:>9.2f}x {old_mb / new_mb:>11.1f}x {'yes' if same else 'NO':>5}"
    )


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--systems", default="10,30,100")
    p.add_argument("--questions", type=int, default=5000)
    p.add_argument("--rounds", type=int, default=10_000)
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()
    print(f"{args.questions:,} questions, {args.rounds:,} rounds, graded scores, max-T")
    print(
        f"{'systems':>7} {'pairs':>6} {'per pair s':>10} {'MB':>7} {'per system s':>12} "
        f"{'MB':>7} {'time ratio':>10} {'memory ratio':>12} {'same':>5}"
    )
    table(Flips.of_pairs(np.eye(3), [(0, 1), (0, 2), (1, 2)], 99, 1), [(1, 1, 1)] * 3, None, 0)
    for m in (int(v) for v in args.systems.split(",")):
        print(row(m, args.questions, args.rounds, args.seed))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

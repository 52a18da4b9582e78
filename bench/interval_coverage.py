"""How often does a nominal 95% interval contain the true hit rate?

    python bench/interval_coverage.py

Per-question scores are simulated as Bernoulli(p) hits for n questions, for
n in 20, 40, 80, 160, 320 and p in 0.5, 0.75, 0.85, 0.95.

Table 1 (simulated): 5,000 simulated question sets per cell; each set gets a
percentile and a BCa interval from ragmeter with 2,000 rounds (seed 1; the
sets of one cell share the resampling indices, via bootstrap_many). The cell is
the share of sets whose interval contains p (Monte Carlo error about +/- 0.6
point near 95%).

Table 2 (exact): for 0/1 scores the interval depends only on how many of the n
questions were hits (k), so the coverage of ragmeter's default interval
(10,000 rounds, seed 1) is computed exactly: the sum over k of
P(k hits | n, p) for every k whose interval contains p.

About a minute on 2 cores.
"""

from __future__ import annotations

import time

import numpy as np
import scipy.stats

from ragmeter.stats import bootstrap_many

SIZES = [20, 40, 80, 160, 320]
RATES = [0.5, 0.75, 0.85, 0.95]
METHODS = ["percentile", "bca"]
SETS = 5_000  # simulated question sets per cell
SIM_ROUNDS = 2_000  # bootstrap rounds per simulated set
EXACT_ROUNDS = 10_000  # ragmeter's default


def simulated() -> dict[tuple[str, int, float], float]:
    rng = np.random.default_rng(20240601)
    out = {}
    for n in SIZES:
        for p in RATES:
            data = (rng.random((SETS, n)) < p).astype(float)
            for method in METHODS:
                ests = bootstrap_many(data, rounds=SIM_ROUNDS, seed=1, method=method)
                covered = sum(e.low <= p <= e.high for e in ests)
                out[method, n, p] = covered / SETS
    return out


def exact() -> dict[tuple[str, int, float], float]:
    out = {}
    for n in SIZES:
        # Row k: k hits then n - k misses (order does not change the distribution).
        rows = (np.arange(n)[None, :] < np.arange(n + 1)[:, None]).astype(float)
        for method in METHODS:
            ests = bootstrap_many(rows, rounds=EXACT_ROUNDS, seed=1, method=method)
            for p in RATES:
                pmf = scipy.stats.binom.pmf(np.arange(n + 1), n, p)
                hit = np.array([e.low <= p <= e.high for e in ests])
                out[method, n, p] = float(pmf[hit].sum())
    return out


def table(title: str, cov: dict[tuple[str, int, float], float]) -> str:
    head = "| n | " + " | ".join(f"p={p} pct / BCa" for p in RATES) + " |"
    rule = "|--:|" + "|".join(":-:" for _ in RATES) + "|"
    lines = [title, "", head, rule]
    for n in SIZES:
        cells = [
            f"{100 * cov['percentile', n, p]:.1f} / {100 * cov['bca', n, p]:.1f}" for p in RATES
        ]
        lines.append(f"| {n} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    start = time.perf_counter()
    sim = simulated()
    mid = time.perf_counter()
    ex = exact()
    end = time.perf_counter()
    print(
        table(
            f"Coverage of nominal 95% intervals, % (simulated: {SETS:,} sets per cell, "
            f"{SIM_ROUNDS:,} rounds each)",
            sim,
        )
    )
    print()
    print(
        table(
            f"Coverage of nominal 95% intervals, % (exact over the binomial, "
            f"{EXACT_ROUNDS:,} rounds, seed 1)",
            ex,
        )
    )
    print(f"\nsimulated: {mid - start:.0f} s, exact: {end - mid:.0f} s")


if __name__ == "__main__":
    main()

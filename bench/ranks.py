"""Do the simultaneous rank ranges cover the true ranks, all at once?

Simulates systems with known true means scored on the same questions and runs the
library's own comparison and rank resolution on each draw
(:func:`ragmeter.comparison.systems.compare_systems`,
:func:`ragmeter.comparison.ranks.resolve_ranks`), as ``search`` and ``grade`` do:

* 0/1 scores (hit rates, answers graded correct): system ``s`` scores 1 on question
  ``q`` when ``rho * u_q + sqrt(1 - rho^2) * e_sq < Phi^-1(p_s)``, with ``u_q`` the
  question's difficulty shared by every system (``rho = 0.6``: systems agree on which
  questions are hard), so the true mean is exactly ``p_s`` and the pairs are correlated;
* graded scores: ``mu_s + 0.2 u_q + 0.25 e_sq`` (true mean ``mu_s``).

A system's true rank is 1 + the number of systems with a strictly higher true mean
(systems with equal true means share the better rank). A draw *covers* when every
system's range holds its true rank. Reported per cell, for the ranges of the default
rule (every pair under max-T) and of every pair under Holm:

* joint coverage (%), with its Monte Carlo standard error;
* the mean width of a range (``high - low``; 0 = the rank is pinned down);
* tie-group violations: pairs a table calls a tie that share no group, or pairs it
  separates that share one, counted over the all-pairs max-T table and over a table of
  every system against the last under Holm (whose groups read a family with pairs it
  does not compare). Goal: 0.

Goal: joint coverage at least 95% in every cell (within Monte Carlo error: no cell
significantly below, one-sided p < 0.01); no tie-group violation.

    python bench/ranks.py --quick     # seconds: 100 draws a cell, 500 rounds
    nice python bench/ranks.py        # the figures in docs/statistics.md (2,000 draws)
    python bench/ranks.py --cells 1 --draws 3000 --rounds 1000 --seed 7   # the null again
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one core; BLAS threads only contend
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import math  # noqa: E402
import time  # noqa: E402
from statistics import NormalDist  # noqa: E402

import numpy as np  # noqa: E402

from ragmeter.comparison.ranks import ahead_pairs, resolve_ranks  # noqa: E402
from ragmeter.comparison.systems import ComparisonPlan, compare_systems  # noqa: E402

RHO = 0.6

# name, kind, questions, true means
CELLS = (
    ("all equal (6)", "0/1", 200, (0.6,) * 6),
    ("three share the top (5)", "0/1", 200, (0.70, 0.70, 0.70, 0.62, 0.50)),
    ("ladder, 3 points apart (8)", "0/1", 300, tuple(0.71 - 0.03 * i for i in range(8))),
    ("pairs of equals (6)", "graded", 150, (0.5, 0.5, 0.45, 0.45, 0.40, 0.30)),
)


def draw(kind: str, means: tuple[float, ...], n: int, rng: np.random.Generator) -> np.ndarray:
    """One draw of (systems x questions) scores with the given true means."""
    u = rng.standard_normal(n)
    e = rng.standard_normal((len(means), n))
    if kind == "0/1":
        cut = np.array([NormalDist().inv_cdf(p) for p in means])[:, None]
        return (RHO * u + math.sqrt(1 - RHO**2) * e < cut).astype(np.float64)
    return np.asarray(means)[:, None] + 0.2 * u + 0.25 * e


def true_ranks(means: tuple[float, ...]) -> list[int]:
    return [1 + sum(t > m for t in means) for m in means]


def violations(table, groups: list[list[str]]) -> int:
    """Pairs ``table`` calls a tie that share no group, plus separated pairs that do."""
    ahead = ahead_pairs(table.rows, table.rule.identical)
    bad = 0
    for r in table.rows:
        together = any(r.a in g and r.b in g for g in groups)
        tie = (r.a, r.b) not in ahead and (r.b, r.a) not in ahead
        bad += together != tie
    return bad


def run_cell(cell, draws: int, rounds: int, seed: int) -> dict:
    name, kind, n, means = cell
    names = [f"s{i}" for i in range(len(means))]
    truth = dict(zip(names, true_ranks(means), strict=True))
    rng = np.random.default_rng(seed)
    out = {"maxt": 0, "holm": 0, "width_maxt": 0.0, "width_holm": 0.0, "bad": 0}
    for d in range(draws):
        matrices = {"score": draw(kind, means, n, rng)}
        for adjust in ("maxt", "holm"):
            plan = ComparisonPlan("score", d + 1, rounds, adjust=adjust)
            table = compare_systems(matrices, names, plan)
            ranks = resolve_ranks(matrices, names, plan, table)
            out[adjust] += all(r.low <= truth[r.system] <= r.high for r in ranks.ranges)
            out[f"width_{adjust}"] += sum(r.high - r.low for r in ranks.ranges) / len(names)
            if adjust == "maxt":
                out["bad"] += violations(table, ranks.groups)
        plan = ComparisonPlan("score", d + 1, rounds, adjust="holm", baseline=names[-1])
        table = compare_systems(matrices, names, plan)
        out["bad"] += violations(table, resolve_ranks(matrices, names, plan, table).groups)
    return {"name": name, "kind": kind, "n": n, "draws": draws, **out}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="100 draws a cell, 500 rounds")
    parser.add_argument("--draws", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=20260)
    parser.add_argument("--cells", help="the cells to run, by number from 1 (e.g. 1,3)")
    args = parser.parse_args()
    draws, rounds = (100, 500) if args.quick else (args.draws, args.rounds)
    print(f"{draws} draws a cell, {rounds} sign-flip rounds, seed {args.seed}, rho {RHO}")
    print(
        "| cell | scores | n | coverage, max-T (%) | coverage, Holm (%) "
        "| mean width, max-T / Holm | tie-group violations |"
    )
    print("|---|---|--:|--:|--:|--:|--:|")
    start = time.time()
    worst = 100.0
    bad = 0
    low = 0  # cells whose coverage is significantly below 95% (one-sided p < 0.01)
    chosen = {int(c) - 1 for c in args.cells.split(",")} if args.cells else range(len(CELLS))
    for i, cell in enumerate(CELLS):
        if i not in chosen:
            continue
        r = run_cell(cell, draws, rounds, args.seed + i)
        cov = {a: 100.0 * r[a] / draws for a in ("maxt", "holm")}
        se = {a: math.sqrt(cov[a] * (100 - cov[a]) / draws) for a in cov}
        worst = min(worst, *cov.values())
        floor = 95.0 - 2.326 * math.sqrt(95.0 * 5.0 / draws)
        low += sum(c < floor for c in cov.values())
        bad += r["bad"]
        print(
            f"| {r['name']} | {r['kind']} | {r['n']} | {cov['maxt']:.1f} ± {se['maxt']:.1f} "
            f"| {cov['holm']:.1f} ± {se['holm']:.1f} | {r['width_maxt'] / draws:.2f} / "
            f"{r['width_holm'] / draws:.2f} | {r['bad']} |",
            flush=True,
        )
    print(
        f"lowest joint coverage {worst:.1f}%; cells significantly below 95% (one-sided "
        f"p < 0.01): {low}; tie-group violations {bad}; {time.time() - start:.0f} s"
    )


if __name__ == "__main__":
    main()

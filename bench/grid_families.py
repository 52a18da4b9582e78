"""On a strategy x retriever grid, how much power does asking the grid's questions keep?

Simulates grids of S strategies x R retrievers (3 x 3 and 6 x 3) scored on the same n
questions, where any two systems differ on a share of the questions (0/1 hit rates and
graded reciprocal ranks, drawn as in ``bench/paired_coverage.py``), and runs the
library's own ``compare_family`` on each grid under three family designs, all under one
rule (``--adjust``, max-T by default):

* **all pairs**: every pair of the S x R systems (36 pairs for 3 x 3, 153 for 6 x 3);
* **grid, one family**: retrievers within each strategy and strategies within each
  retriever, adjusted together (``family="grid"``: 18 and 63 pairs);
* **grid, two families**: the same pairs as two families, each adjusted alone at the
  full level (``family="retrievers"`` and ``family="strategies"``); a table shows both.

Truths simulated (each system's true mean is equal unless said):

* ``none``: no true difference (family-wise error rate);
* ``cell``: one system (the first strategy with the first retriever) is better by
  ``delta``: S + R - 2 of the grid's pairs truly differ;
* ``retriever``: the first retriever is better by ``delta`` with every strategy:
  S (R - 1) of the grid's pairs truly differ, every strategy pair is equal.

Reported per cell: (a) family-wise false "better": the share of grids whose shown
table has at least one "better" between systems with equal true means, or one in the
wrong direction (for "two families": in either table); (b) power per true difference:
over the grid's truly different pairs (the pairs a grid asks about, the same pairs in
every design), how often the truly better system is called better; (c) the ratio of
the grid designs' power to all pairs'.

    python bench/grid_families.py --quick     # seconds: 3 x 3, 0/1 scores, n = 30
    nice python bench/grid_families.py        # full: both grids and kinds, n = 30 and 80

The full mode uses 5,000 sign-flip rounds: with 1,000, a graded pair's smallest
p-value (1/1001) is above the first level of a 153-pair family (0.05/153 = 0.00033),
so all pairs could never find a graded difference on a 6 x 3 grid at all.

Goal: power per true difference of the grid family at least 1.5 x all pairs', and
family-wise false "better" at most 5% (within Monte Carlo error) in every cell.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one core; BLAS threads only contend
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import math  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from ragmeter.comparison.verdicts import compare_family  # noqa: E402
from ragmeter.stats.exact import binom_cdf  # noqa: E402

# Reciprocal rank of the answer: ranks 1..10 or not found (as bench/paired_coverage.py).
RANK_P = np.array([0.45, 0.12, 0.08, 0.05, 0.04, 0.03, 0.03, 0.02, 0.02, 0.02, 0.14])
RANK_V = np.array([1 / r for r in range(1, 11)] + [0.0])
HIT_P = 0.7
DESIGNS = ("all", "joint", "split")
LABELS = {"all": "all pairs", "joint": "grid, one family", "split": "grid, two families"}


def simulate(rng, kind: str, n: int, share: float, better: np.ndarray, delta: float):
    """(m, n) scores; any two systems differ on about ``share`` of the questions and
    the systems where ``better`` is set are ``delta`` higher (a miss made a hit, or the
    answer moved to rank 1)."""
    m = better.size
    if kind == "binary":
        q = (1 - math.sqrt(1 - 2 * share)) / 2  # 2q(1-q) = share
        base = rng.random(n) < HIT_P
        x = base[None, :] ^ (rng.random((m, n)) < q)
        mu = HIT_P * (1 - q) + (1 - HIT_P) * q
        lift = rng.random((m, n)) < delta / (1 - mu)
        x |= lift & better[:, None]
        return x.astype(np.float64)
    same = float(np.sum(RANK_P**2))
    q = 1 - math.sqrt(1 - share / (1 - same))
    base = RANK_V[rng.choice(RANK_P.size, size=n, p=RANK_P)]
    redraw = rng.random((m, n)) < q
    other = RANK_V[rng.choice(RANK_P.size, size=(m, n), p=RANK_P)]
    x = np.where(redraw, other, base[None, :])
    mu = float(RANK_P @ RANK_V)
    lift = (rng.random((m, n)) < delta / (1 - mu)) & better[:, None]
    return np.where(lift, 1.0, x)


def names_of(s: int, r: int) -> list[str]:
    return [f"c{i}/r{j}" for i in range(s) for j in range(r)]


def truth(s: int, r: int, kind: str) -> np.ndarray:
    """Which systems are better (rows in :func:`names_of` order)."""
    better = np.zeros(s * r, dtype=bool)
    if kind == "cell":
        better[0] = True
    elif kind == "retriever":
        better[[i * r for i in range(s)]] = True
    return better


def grid_asks(a: str, b: str) -> bool:
    """Is A - B a pair the grid asks about (same strategy or same retriever)?"""
    (sa, ra), (sb, rb) = a.split("/"), b.split("/")
    return sa == sb or ra == rb


def run_cell(kind, s, r, n, truth_kind, delta, sims, rounds, seed, adjust, share):
    truths = ("none", "cell", "retriever")
    rng = np.random.default_rng([seed, n, s, r, kind == "binary", truths.index(truth_kind)])
    names = names_of(s, r)
    better = truth(s, r, truth_kind)
    gain = {nm: (delta if better[i] else 0.0) for i, nm in enumerate(names)}
    false = dict.fromkeys(DESIGNS, 0)
    found = {d: [0, 0] for d in DESIGNS}
    for k in range(sims):
        x = simulate(rng, kind, n, share, better, delta if truth_kind != "none" else 0.0)
        tables = {
            "all": [compare_family(x, names, adjust=adjust, rounds=rounds, seed=k + 1)],
            "joint": [
                compare_family(x, names, adjust=adjust, rounds=rounds, seed=k + 1, family="grid")
            ],
            "split": [
                compare_family(x, names, adjust=adjust, rounds=rounds, seed=k + 1, family=f)
                for f in ("retrievers", "strategies")
            ],
        }
        for design, shown in tables.items():
            wrong = False
            for table in shown:
                for row in table.rows:
                    true = gain[row.a] - gain[row.b]
                    said = "better" in row.verdict and not row.identical
                    if said and (true == 0 or (row.verdict == f"{row.a} better") != (true > 0)):
                        wrong = True
                    if true != 0 and grid_asks(row.a, row.b):
                        winner = row.a if true > 0 else row.b
                        found[design][0] += row.verdict == f"{winner} better"
                        found[design][1] += 1
            false[design] += wrong
    return {"false": false, "power": {d: (f / t if t else None) for d, (f, t) in found.items()}}


def binom_tail(k: int, n: int, p: float) -> float:
    """P(X >= k) for X ~ Binomial(n, p)."""
    return 1.0 - binom_cdf(k - 1, n, p)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="3 x 3 only, n = 30, 60 grids a cell")
    ap.add_argument("--sims", type=int, default=None, help="grids per cell (default 200)")
    ap.add_argument("--share", type=float, default=0.2, help="share of questions a pair differs on")
    ap.add_argument("--delta", type=float, default=0.15, help="the true gain (0.15: 15 points)")
    ap.add_argument("--rounds", type=int, default=None, help="sign-flip rounds (default 5000)")
    ap.add_argument("--adjust", default="maxt", choices=("maxt", "holm"))
    ap.add_argument("--seed", type=int, default=20240601)
    args = ap.parse_args()
    if args.quick:
        shapes, ns, sims = ((3, 3),), (30,), args.sims or 60
        kinds = ("binary",)
        args.rounds = args.rounds or 1000
    else:
        shapes, ns, sims = ((3, 3), (6, 3)), (30, 80), args.sims or 200
        kinds = ("binary", "graded")
        args.rounds = args.rounds or 5000
    start = time.perf_counter()
    print(
        f"{sims} grids per cell; any two systems differ on {args.share * 100:g}% of the "
        f"questions; true gain {args.delta * 100:g} points; rule {args.adjust}; sign-flip "
        f"rounds {args.rounds}; seed {args.seed}"
    )
    print()
    print(
        "| scores | grid | n | truth | "
        + " | ".join(f"{LABELS[d]}: false / power" for d in DESIGNS)
        + " | power ratio: one family / all, two / all |"
    )
    print("|---|---|--:|---|" + "--:|" * (len(DESIGNS) + 1))
    worst = dict.fromkeys(DESIGNS, 0.0)
    above = dict.fromkeys(DESIGNS, 0)
    ratios: list[float] = []
    for kind in kinds:
        for s, r in shapes:
            for n in ns:
                for t in ("none", "cell", "retriever"):
                    c = run_cell(
                        kind,
                        s,
                        r,
                        n,
                        t,
                        args.delta,
                        sims,
                        args.rounds,
                        args.seed,
                        args.adjust,
                        args.share,
                    )
                    cells = []
                    for d in DESIGNS:
                        f = c["false"][d] / sims * 100
                        p = c["power"][d]
                        cells.append(f"{f:.1f} / " + ("–" if p is None else f"{p * 100:.1f}"))
                        worst[d] = max(worst[d], f)
                        above[d] += binom_tail(c["false"][d], sims, 0.05) < 0.01
                    ratio = "–"
                    if t != "none":
                        pa, pj, ps = (c["power"][d] for d in DESIGNS)
                        rj = pj / pa if pa else math.inf
                        ratios.append(rj)
                        ratio = f"{rj:.2f} / {ps / pa if pa else math.inf:.2f}"
                    label = "0/1 (hit)" if kind == "binary" else "graded (RR)"
                    m = s * r
                    pairs = f"{m * (m - 1) // 2}/{s * r * (r - 1) // 2 + r * s * (s - 1) // 2}"
                    print(
                        f"| {label} | {s} x {r} ({pairs} pairs) | {n} | {t} | "
                        + " | ".join(cells)
                        + f" | {ratio} |",
                        flush=True,
                    )
    se = math.sqrt(0.05 * 0.95 / sims) * 100
    print()
    for d in DESIGNS:
        print(
            f"{LABELS[d]}: largest family-wise false-'better' rate {worst[d]:.1f}%, cells "
            f"significantly above 5% (one-sided p < 0.01): {above[d]}"
        )
    print(f"Monte Carlo standard error near 5%: {se:.1f} points")
    if ratios:
        print(
            f"power per true difference, grid (one family) / all pairs: smallest "
            f"{min(ratios):.2f}, largest {max(ratios):.2f}"
        )
    print(f"{time.perf_counter() - start:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()

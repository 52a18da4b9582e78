"""How often do comparison tables say "better" when nothing differs, and how often when it does?

Simulates tables of m systems scored on the same n questions, where any two systems
differ on a share of the questions, for 0/1 scores (hit rates) and graded scores
(reciprocal ranks), and runs the library's own ``compare_family`` on each table under
every rule and family:

* Holm over all pairs, step-down max-T over all pairs;
* Holm and max-T over every system against one baseline (s1);
* one planned pair (s0:s1, a family of one: no adjustment);
* the seed's per-pair rule (``adjust="none"``: the unadjusted 95% interval decides).

For each it reports (a) family-wise false "better": the share of tables with at least
one "better" row between systems whose true means are equal (or a "better" in the
wrong direction); with no true difference this is the family-wise error rate;
(b) power: how often system s0, truly better by 5 or 10 points, is called better than
the systems it is compared with; (c) per-pair coverage of the intervals (Holm / max-T).

    python bench/paired_coverage.py            # full grid, 500 tables a cell
    python bench/paired_coverage.py --quick    # a smaller grid
    python bench/paired_coverage.py --only binary:472:7 --null --sims 2000 --seed 7

Goal: family-wise false "better" <= 5% (within Monte Carlo error) in every cell with
no true difference, for every rule but the seed's.
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

# Reciprocal rank of the answer: ranks 1..10 or not found.
RANK_P = np.array([0.45, 0.12, 0.08, 0.05, 0.04, 0.03, 0.03, 0.02, 0.02, 0.02, 0.14])
RANK_V = np.array([1 / r for r in range(1, 11)] + [0.0])
HIT_P = 0.7
RULES = ("holm", "maxt", "holm-base", "maxt-base", "planned", "none")
LABELS = {
    "holm": "Holm, all pairs",
    "maxt": "max-T, all pairs",
    "holm-base": "Holm, baseline",
    "maxt-base": "max-T, baseline",
    "planned": "one planned pair",
    "none": "seed's per-pair rule",
}


def simulate(rng: np.random.Generator, kind: str, n: int, share: float, m: int, delta: float):
    """(m, n) scores; any two systems differ on about ``share`` of the questions.

    Every system has the same true mean, except s0 which is ``delta`` higher.
    """
    if kind == "binary":
        q = (1 - math.sqrt(1 - 2 * share)) / 2  # 2q(1-q) = share
        base = rng.random(n) < HIT_P
        x = base[None, :] ^ (rng.random((m, n)) < q)
        mu = HIT_P * (1 - q) + (1 - HIT_P) * q
        if delta:
            x[0] |= rng.random(n) < delta / (1 - mu)  # a miss becomes a hit
        return x.astype(np.float64)
    same = float(np.sum(RANK_P**2))
    q = 1 - math.sqrt(1 - share / (1 - same))  # P(pair differs) = (1 - (1-q)^2)(1 - same)
    base = RANK_V[rng.choice(RANK_P.size, size=n, p=RANK_P)]
    redraw = rng.random((m, n)) < q
    other = RANK_V[rng.choice(RANK_P.size, size=(m, n), p=RANK_P)]
    x = np.where(redraw, other, base[None, :])
    if delta:
        mu = float(RANK_P @ RANK_V)
        x[0] = np.where(rng.random(n) < delta / (1 - mu), 1.0, x[0])  # answer moved to rank 1
    return x


def binom_tail(k: int, n: int, p: float) -> float:
    """P(X >= k) for X ~ Binomial(n, p) (in log space: any n)."""
    return 1.0 - binom_cdf(k - 1, n, p)


def _tables(x, names, rounds, seed):
    out = {}
    for rule in ("holm", "maxt"):
        out[rule] = compare_family(x, names, adjust=rule, rounds=rounds, seed=seed)
        out[f"{rule}-base"] = compare_family(
            x, names, adjust=rule, baseline="s1", rounds=rounds, seed=seed
        )
    out["planned"] = compare_family(x, names, pairs=[("s0", "s1")], rounds=rounds, seed=seed)
    out["none"] = compare_family(x, names, adjust="none", rounds=rounds, seed=seed)
    return out


def run_cell(kind, n, share, m, delta, sims, rounds, seed):
    rng = np.random.default_rng([seed, n, int(share * 1000), m, kind == "binary", int(delta * 100)])
    names = [f"s{i}" for i in range(m)]
    false = dict.fromkeys(RULES, 0)
    found = {r: [0, 0] for r in RULES}  # s0 called better, s0 pairs
    covered = {"holm": [0, 0], "maxt": [0, 0]}
    both = [0, 0]  # tables where only Holm / only max-T found s0 better than s1 (all pairs)
    for s in range(sims):
        x = simulate(rng, kind, n, share, m, delta)
        tables = _tables(x, names, rounds, s + 1)
        for rule, table in tables.items():
            wrong = False
            for r in table.rows:
                true = delta if r.a == "s0" else (-delta if r.b == "s0" else 0.0)
                better = "better" in r.verdict and not r.identical
                if better and (true == 0 or (r.verdict == "s0 better") != (true > 0)):
                    wrong = True
                if delta and "s0" in (r.a, r.b):
                    found[rule][0] += r.verdict == "s0 better"
                    found[rule][1] += 1
                if rule in covered and not r.identical:
                    d = r.difference
                    covered[rule][0] += d.low - 1e-12 <= true <= d.high + 1e-12
                    covered[rule][1] += 1
            false[rule] += wrong
        if delta:
            h, t = (
                any(r.verdict == "s0 better" and "s1" in (r.a, r.b) for r in tables[k].rows)
                for k in ("holm", "maxt")
            )
            both[0] += h and not t
            both[1] += t and not h
    return {
        "false": false,
        "power": {r: (f / t if t else None) for r, (f, t) in found.items()},
        "coverage": {r: c / t if t else 1.0 for r, (c, t) in covered.items()},
        "only": both,
        "tables": sims,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a smaller grid and fewer tables")
    ap.add_argument("--sims", type=int, default=None, help="tables per cell (default 500)")
    ap.add_argument("--share", type=float, default=0.2, help="share of questions a pair differs on")
    ap.add_argument("--rounds", type=int, default=1000, help="sign-flip rounds per table")
    ap.add_argument("--seed", type=int, default=20240601)
    ap.add_argument(
        "--only", default=None, help="one cell, KIND:N:M (e.g. binary:472:7), to check it again"
    )
    ap.add_argument("--null", action="store_true", help="only tables with no true difference")
    args = ap.parse_args()
    kinds = ("binary", "graded")
    if args.quick:
        ns, ms, sims = (25, 135), (3, 7), args.sims or 100
    else:
        ns, ms, sims = (25, 80, 135, 472), (3, 7), args.sims or 500
    if args.only:
        kind, n, m = args.only.split(":")
        kinds, ns, ms = (kind,), (int(n),), (int(m),)
    deltas = (0.0,) if args.null else (0.0, 0.05, 0.10)
    start = time.perf_counter()
    print(
        f"{sims} tables per cell; any two systems differ on {args.share * 100:g}% of the "
        f"questions; sign-flip rounds {args.rounds}; seed {args.seed}"
    )
    print()
    print(
        "| scores | n | m | true gain | "
        + " | ".join(f"{LABELS[r]}: false / power" for r in RULES)
        + " | coverage Holm / max-T |"
    )
    print("|---|--:|--:|--:|" + "--:|" * (len(RULES) + 1))
    above = {r: 0 for r in RULES}
    worst = dict.fromkeys(RULES, 0.0)
    weaker = []  # cells where max-T found s0 less often than Holm
    only = [0, 0]
    for kind in kinds:
        for n in ns:
            for m in ms:
                for delta in deltas:
                    c = run_cell(kind, n, args.share, m, delta, sims, args.rounds, args.seed)
                    label = "0/1 (hit)" if kind == "binary" else "graded (RR)"
                    cells = []
                    for r in RULES:
                        f = c["false"][r] / sims * 100
                        p = c["power"][r]
                        cells.append(f"{f:.1f} / " + ("–" if p is None else f"{p * 100:.1f}"))
                        if delta == 0:
                            worst[r] = max(worst[r], f)
                            above[r] += binom_tail(c["false"][r], sims, 0.05) < 0.01
                    cov = " / ".join(f"{c['coverage'][r] * 100:.1f}" for r in ("holm", "maxt"))
                    print(
                        f"| {label} | {n} | {m} | {delta * 100:.0f} | "
                        + " | ".join(cells)
                        + f" | {cov} |",
                        flush=True,
                    )
                    if delta:
                        for fam in ("", "-base"):
                            ph, pt = c["power"]["holm" + fam], c["power"]["maxt" + fam]
                            if pt < ph:
                                weaker.append(f"{label} n={n} m={m} +{delta * 100:.0f}{fam}")
                        only[0] += c["only"][0]
                        only[1] += c["only"][1]
    se = math.sqrt(0.05 * 0.95 / sims) * 100
    print()
    for r in RULES:
        print(
            f"{LABELS[r]}: largest false-'better' rate with no true difference "
            f"{worst[r]:.1f}%, cells significantly above 5% (one-sided p < 0.01): {above[r]}"
        )
    print(f"Monte Carlo standard error near 5%: {se:.1f} points")
    print(
        "cells where max-T found the true gain less often than Holm: "
        + (", ".join(weaker) if weaker else "none")
    )
    print(
        f"tables (all pairs, s0 vs s1) where only Holm found the gain: {only[0]}; "
        f"only max-T: {only[1]}"
    )
    print(f"{time.perf_counter() - start:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()

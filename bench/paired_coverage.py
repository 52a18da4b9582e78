"""How often do comparison tables say "better" when nothing differs, and how often when it does?

Simulates tables of m systems scored on the same n questions, where a share of the
questions differ between systems, for 0/1 scores (hit rates) and graded scores
(reciprocal ranks), and runs the library's own ``compare_family`` on each:

(a) per-pair coverage: how often each row's interval holds the true difference (rows
    that report two systems as identical show no interval and are left out);
(b) family-wise false "better": the share of tables with at least one "better" row
    when every system has the same true mean;
(c) power: how often system s0, truly better by 5 or 10 points, is called better
    than each other system.

The default rule (Holm over all pairs, exact tests, intervals from the same decision)
is compared in the same run with the seed's per-pair rule (``adjust="none"``: the
unadjusted 95% percentile interval decides), and the ratio of their family-wise
false-"better" rates is printed.

    python bench/paired_coverage.py            # full grid (a few minutes on one core)
    python bench/paired_coverage.py --quick    # a smaller grid

Goal: family-wise false "better" <= 5% in every cell under the default rule;
per-pair coverage >= 94% for n >= 80.
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

from ragmeter.verdicts import compare_family  # noqa: E402

# Reciprocal rank of the answer: ranks 1..10 or not found.
RANK_P = np.array([0.45, 0.12, 0.08, 0.05, 0.04, 0.03, 0.03, 0.02, 0.02, 0.02, 0.14])
RANK_V = np.array([1 / r for r in range(1, 11)] + [0.0])
HIT_P = 0.7


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
    """P(X >= k) for X ~ Binomial(n, p)."""
    return sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k, n + 1))


def run_cell(kind, n, share, m, sims, rounds, seed, null_sims=None, seed_rule_sims=60):
    rng = np.random.default_rng([seed, n, int(share * 1000), m, kind == "binary"])
    names = [f"s{i}" for i in range(m)]
    out = {}
    null_sims = null_sims or sims
    for delta in (0.0, 0.05, 0.10):
        covered = total = false_tables = none_false = 0
        power = []
        count = null_sims if delta == 0 else sims
        for s in range(count):
            x = simulate(rng, kind, n, share, m, delta)
            table = compare_family(x, names, rounds=rounds, seed=s + 1)
            any_false = False
            for r in table.rows:
                true = delta if r.a == "s0" else (-delta if r.b == "s0" else 0.0)
                d = r.difference
                if not r.identical:  # an "identical" row shows no interval
                    covered += d.low - 1e-12 <= true <= d.high + 1e-12
                    total += 1
                if true == 0 and "better" in r.verdict:
                    any_false = True
                if delta and "s0" in (r.a, r.b):
                    power.append(r.verdict == "s0 better")
            false_tables += any_false
            if delta == 0 and s < seed_rule_sims:
                seed_rule = compare_family(x, names, adjust="none", rounds=rounds, seed=s + 1)
                none_false += any("better" in r.verdict for r in seed_rule.rows)
        out[delta] = {
            "coverage": covered / total if total else 1.0,
            "fwer": false_tables / count,
            "false": false_tables,
            "tables": count,
            "fwer_none": none_false / min(count, seed_rule_sims) if delta == 0 else None,
            "power": float(np.mean(power)) if power else None,
        }
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a smaller grid and fewer tables")
    ap.add_argument("--sims", type=int, default=None, help="tables per cell and true difference")
    ap.add_argument(
        "--null-sims", type=int, default=None, help="tables per cell with no true difference"
    )
    ap.add_argument(
        "--seed-rule-sims", type=int, default=60, help="null tables also run under the seed's rule"
    )
    ap.add_argument("--rounds", type=int, default=1000, help="sign-flip rounds per table")
    ap.add_argument("--seed", type=int, default=20240601)
    args = ap.parse_args()
    if args.quick:
        ns, shares, ms, sims = (25, 135), (0.05, 0.20), (3, 8), args.sims or 60
        null_sims = args.null_sims or 120
    else:
        ns, shares, ms, sims = (
            (25, 80, 135, 472),
            (0.02, 0.05, 0.10, 0.20, 0.40),
            (3, 5, 8),
            args.sims or 120,
        )
        null_sims = args.null_sims or 600
    start = time.perf_counter()
    print(
        f"{null_sims} tables per cell with no true difference ({args.seed_rule_sims} of them also "
        f"under the seed's rule), {sims} per cell at 5 and 10 points; sign-flip rounds "
        f"{args.rounds}; seed {args.seed}"
    )
    print(
        "| scores | n | share differing | per-pair coverage (min) | family-wise false "
        '"better", Holm (max) | same, seed\'s per-pair rule (max) | power at 5 points '
        f"(m={ms[0]} / m={ms[-1]}) | power at 10 points (m={ms[0]} / m={ms[-1]}) |"
    )
    print("|---|--:|--:|--:|--:|--:|--:|--:|")
    worst_fwer = worst_cov = 0.0
    worst_cov = 1.0
    ratios = []
    pooled = {"binary": [0, 0], "graded": [0, 0]}  # false tables, tables (Holm, null)
    above = 0  # cells whose false-"better" count is significantly above 5%
    for kind in ("binary", "graded"):
        for n in ns:
            for share in shares:
                cells = {
                    m: run_cell(
                        kind,
                        n,
                        share,
                        m,
                        sims,
                        args.rounds,
                        args.seed,
                        null_sims,
                        args.seed_rule_sims,
                    )
                    for m in ms
                }
                cov = min(c[d]["coverage"] for c in cells.values() for d in c)
                fwer = max(c[0.0]["fwer"] for c in cells.values())
                fwer_none = max(c[0.0]["fwer_none"] for c in cells.values())
                p5 = " / ".join(f"{cells[m][0.05]['power'] * 100:.0f}" for m in (ms[0], ms[-1]))
                p10 = " / ".join(f"{cells[m][0.10]['power'] * 100:.0f}" for m in (ms[0], ms[-1]))
                label = "0/1 (hit)" if kind == "binary" else "graded (RR)"
                print(
                    f"| {label} | {n} | {share * 100:.0f}% | {cov * 100:.1f} | "
                    f"{fwer * 100:.1f} | {fwer_none * 100:.1f} | {p5} | {p10} |",
                    flush=True,
                )
                worst_fwer = max(worst_fwer, fwer)
                for c in cells.values():
                    false, tables = c[0.0]["false"], c[0.0]["tables"]
                    pooled[kind][0] += false
                    pooled[kind][1] += tables
                    above += binom_tail(false, tables, 0.05) < 0.01
                if n >= 80:
                    worst_cov = min(worst_cov, cov)
                if fwer_none > 0:
                    ratios.append(fwer / fwer_none)
    se = math.sqrt(0.05 * 0.95 / null_sims) * 100
    print()
    print(
        f"largest family-wise false-'better' rate, Holm: {worst_fwer * 100:.1f}% "
        f"(Monte Carlo standard error near 5%: {se:.1f} points)"
    )
    for kind, (false, total) in pooled.items():
        print(
            f"{kind}: {false} of {total} simulated null tables ({false / total * 100:.2f}%) "
            f"showed a false 'better' under Holm"
        )
    print(f"cells significantly above 5% (one-sided binomial p < 0.01): {above}")
    print(f"smallest per-pair coverage for n >= 80: {worst_cov * 100:.1f}%")
    if ratios:
        print(
            "false-'better' rate, Holm / seed's per-pair rule (cells where the latter is > 0): "
            f"median {float(np.median(ratios)):.2f}, max {max(ratios):.2f}"
        )
    print(f"{time.perf_counter() - start:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()

"""Does a grid's main effect find a pooled gain that no single cell can?

Simulates a grid of 6 strategies x 2 retrievers (say, BM25 without and with
stemming) scored on the same n questions, any two systems differing on a share of
the questions (0/1 hits or graded reciprocal ranks, drawn as in
``bench/grid_families.py``), and runs the library's own ``compare_family`` on each
grid, under max-T:

* **main effects** (``family="main-effects"``): the grid's pairs (6 retriever pairs,
  30 strategy pairs) and its main effects (``*/r1 - */r0``: the retrievers over all
  strategies; 15 strategy pairs over all retrievers), one family of 52;
* **grid** (``family="grid"``, the default on a grid): the 36 pairs alone;
* **alone**: each strategy's retriever pair planned in advance, a family of one
  (``pairs=[(S/r1, S/r0)]``), the most power any single cell can have.

Truths simulated: ``none`` (no difference anywhere); ``pooled`` (retriever r1 better
by ``delta``, 3 points by default, with every strategy); ``spread`` (r1 better by
0, 1/5, ..., 5/5 of 2 x ``delta`` on the six strategies: 0 to +6 points, +3 on
average; the strategies' averages then differ too, by half their gains' gaps).

Reported per cell: the share of grids where the main effect calls ``*/r1`` better, in
the main-effects table and planned alone (the two averaged rows as one planned pair);
the best single strategy's pair's share (the strategy where it is highest) in the
main-effects table, in the grid table and alone; the ratios of the main effect's
share in its family to the best pair's in the grid table (the table a grid shows by
default), and of the main effect planned alone to the best pair planned alone; and
the family-wise false "better"
of the main-effects table (any row whose true difference is 0 called better, or a
true difference called the wrong way).

    python bench/grid_effects.py --quick      # seconds: 0/1 scores, n = 200, 60 grids
    nice python bench/grid_effects.py         # the figures in docs/statistics.md

Goal: the main effect finds the pooled 3 points at least twice as often as the best
single-strategy pair, with family-wise false "better" at most 5% (within Monte Carlo
error) when nothing differs.
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
from grid_families import HIT_P, RANK_P, RANK_V, binom_tail, simulate  # noqa: E402

from ragmeter.comparison.verdicts import compare_family  # noqa: E402

STRATEGIES, RETRIEVERS = 6, 2
NAMES = [f"c{i}/r{j}" for i in range(STRATEGIES) for j in range(RETRIEVERS)]
TRUTHS = ("none", "pooled", "spread")


def gains(truth: str, delta: float) -> dict[str, float]:
    """Each system's true gain, and each averaged row's (``*/r``, ``c/*``)."""
    out = dict.fromkeys(NAMES, 0.0)
    for i in range(STRATEGIES):
        if truth == "pooled":
            out[f"c{i}/r1"] = delta
        elif truth == "spread":
            out[f"c{i}/r1"] = 2 * delta * i / (STRATEGIES - 1)
    for j in range(RETRIEVERS):
        out[f"*/r{j}"] = float(np.mean([out[f"c{i}/r{j}"] for i in range(STRATEGIES)]))
    for i in range(STRATEGIES):
        out[f"c{i}/*"] = float(np.mean([out[f"c{i}/r{j}"] for j in range(RETRIEVERS)]))
    return out


def wrong(table, gain: dict[str, float]) -> bool:
    """Does the table call a row with no true difference better, or one the wrong way?"""
    for row in table.rows:
        true = gain[row.a] - gain[row.b]
        if "better" in row.verdict and not row.identical:
            if abs(true) < 1e-12 or (row.verdict == f"{row.a} better") != (true > 0):
                return True
    return False


def run_cell(kind, n, truth, delta, sims, rounds, seed, share):
    rng = np.random.default_rng([seed, n, kind == "binary", TRUTHS.index(truth)])
    gain = gains(truth, delta)
    better = np.array([gain[nm] > 0 for nm in NAMES])
    lift = {nm: gain[nm] for nm in NAMES}
    effect = planned = 0
    cells = {d: np.zeros(STRATEGIES) for d in ("main", "grid", "alone")}
    false = 0
    for k in range(sims):
        x = _draw(rng, kind, n, share, better, lift)
        main = compare_family(x, NAMES, rounds=rounds, seed=k + 1, family="main-effects")
        grid = compare_family(x, NAMES, rounds=rounds, seed=k + 1, family="grid")
        false += wrong(main, gain)
        effect += any(r.verdict == "*/r1 better" for r in main.rows)
        one = compare_family(x, NAMES, rounds=rounds, seed=k + 1, pairs=[("*/r1", "*/r0")])
        planned += one.rows[0].verdict == "*/r1 better"
        for i in range(STRATEGIES):
            a, b = f"c{i}/r1", f"c{i}/r0"
            said = f"{a} better"
            for d, table in (("main", main), ("grid", grid)):
                cells[d][i] += any({r.a, r.b} == {a, b} and r.verdict == said for r in table.rows)
            one = compare_family(x, NAMES, rounds=rounds, seed=k + 1, pairs=[(a, b)])
            cells["alone"][i] += one.rows[0].verdict == said
    return {
        "effect": effect / sims,
        "planned": planned / sims,
        "best": {d: float(v.max()) / sims for d, v in cells.items()},
        "false": false,
    }


def _draw(rng, kind, n, share, better, lift):
    """Scores with each system's own gain (``simulate`` lifts every system in
    ``better`` by one delta, so the systems are drawn by gain, one gain at a time)."""
    x = simulate(rng, kind, n, share, np.zeros(len(NAMES), bool), 0.0)
    for value in sorted({v for v in lift.values() if v > 0}):
        rows = np.array([lift[nm] == value for nm in NAMES])
        lifted = _lift(rng, kind, x, rows, value)
        x[rows] = lifted[rows]
    return x


def _lift(rng, kind, x, rows, delta):
    """``x`` with a share of each row's questions raised to the top score, so the
    row's true mean rises by ``delta`` (the lift ``simulate`` applies)."""
    mu = HIT_P if kind == "binary" else float(RANK_P @ RANK_V)
    up = rng.random(x.shape) < delta / (1 - mu)
    return np.where(up & rows[:, None], 1.0, x)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="0/1 scores, n = 200, 60 grids a cell")
    ap.add_argument("--sims", type=int, default=None, help="grids per cell (default 400)")
    ap.add_argument("--share", type=float, default=0.2, help="share of questions a pair differs on")
    ap.add_argument("--delta", type=float, default=0.03, help="the pooled gain (0.03: 3 points)")
    ap.add_argument("--rounds", type=int, default=2000, help="sign-flip rounds")
    ap.add_argument("--seed", type=int, default=20240601)
    args = ap.parse_args()
    if args.quick:
        kinds, ns, sims = ("binary",), (200,), args.sims or 60
    else:
        kinds, ns, sims = ("binary", "graded"), (100, 200, 400), args.sims or 400
    start = time.perf_counter()
    print(
        f"{sims} grids of {STRATEGIES} strategies x {RETRIEVERS} retrievers per cell; any two "
        f"systems differ on {args.share * 100:g}% of the questions; gain {args.delta * 100:g} "
        f"points; max-T; sign-flip rounds {args.rounds}; seed {args.seed}"
    )
    print()
    print(
        "| scores | n | truth | main effect: in the family / planned alone | best single "
        "pair: main-effects / grid / alone | ratio: grid, alone | false 'better' |"
    )
    print("|---|--:|---|--:|--:|--:|--:|")
    worst, above, ratios = 0.0, 0, []
    for kind in kinds:
        for n in ns:
            for truth in TRUTHS:
                c = run_cell(kind, n, truth, args.delta, sims, args.rounds, args.seed, args.share)
                f = c["false"] / sims * 100
                worst = max(worst, f) if truth == "none" else worst
                above += truth == "none" and binom_tail(c["false"], sims, 0.05) < 0.01
                best = c["best"]
                if truth == "none":
                    found, singles, ratio = "–", "–", "–"
                else:
                    rg = c["effect"] / best["grid"] if best["grid"] else math.inf
                    ra = c["planned"] / best["alone"] if best["alone"] else math.inf
                    ratios.append((truth, n, kind, rg, ra))
                    found = f"{c['effect'] * 100:.1f} / {c['planned'] * 100:.1f}"
                    singles = " / ".join(f"{best[d] * 100:.1f}" for d in ("main", "grid", "alone"))
                    ratio = f"{rg:.2f}, {ra:.2f}"
                label = "0/1 (hit)" if kind == "binary" else "graded (RR)"
                print(
                    f"| {label} | {n} | {truth} | {found} | {singles} | {ratio} | {f:.1f} |",
                    flush=True,
                )
    print()
    print(
        f"no difference: largest family-wise false-'better' rate {worst:.1f}%, cells "
        f"significantly above 5% (one-sided p < 0.01): {above}; Monte Carlo standard error "
        f"near 5%: {math.sqrt(0.05 * 0.95 / sims) * 100:.1f} points"
    )
    pooled = [r for r in ratios if r[0] == "pooled"]
    if pooled:
        print(
            f"pooled gain: main effect / best single pair in the grid table "
            f"{min(r[3] for r in pooled):.2f} to {max(r[3] for r in pooled):.2f}; planned "
            f"alone, main effect / best pair {min(r[4] for r in pooled):.2f} to "
            f"{max(r[4] for r in pooled):.2f}"
        )
    print(f"{time.perf_counter() - start:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()

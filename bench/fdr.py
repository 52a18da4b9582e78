"""Does ``--adjust fdr`` keep the share of false "better" among the "better" verdicts at 5%?

Benjamini-Hochberg's guarantee is proven for independent or positively dependent
tests; the pairs of a comparison table share questions and systems, and their
two-sided tests are neither. This bench measures what the guarantee becomes on the
tables ragmeter decides: it simulates tables of systems scored on the same n
questions (any two systems differing on a share of them; 0/1 hits or graded
reciprocal ranks, drawn as in ``bench/grid_families.py``) and runs the library's own
``compare_family`` on each under ``adjust="fdr"``, ``"maxt"`` and ``"holm"``.

Tables: every pair of 8 systems (28 pairs), and a 6 x 3 grid under ``family="grid"``
(63 pairs). Truths: ``none`` (no difference: the false discovery rate is then the
family-wise rate), ``one`` (the first system better by ``delta``), ``half`` (the
first half of the systems better by ``delta``: most pairs truly differ).

Reported per cell and rule: the false discovery rate (the mean over tables of the
false "better" verdicts over all "better" verdicts, 0 when there are none; a false
"better" is one between systems with equal true means, or the wrong way round), the
family-wise rate (tables with any false "better") and the power (the share of truly
different pairs called the right way).

    python bench/fdr.py --quick       # seconds: 8 systems, 0/1 scores, 60 tables
    nice python bench/fdr.py          # the figures in docs/statistics.md

Goal: the false discovery rate of ``fdr`` at most 5% (within Monte Carlo error) in
every cell.
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
from grid_families import simulate  # noqa: E402  (bench/ is on the path)

from ragmeter.comparison.verdicts import compare_family  # noqa: E402

RULES = ("fdr", "maxt", "holm")
TRUTHS = ("none", "one", "half")
LAYOUTS = {
    "8 systems, all pairs": ([f"s{i}" for i in range(8)], "all"),
    "6 x 3 grid": ([f"c{i}/r{j}" for i in range(6) for j in range(3)], "grid"),
}


def tally(table, gain: dict[str, float]) -> tuple[int, int, int, int]:
    """(false "better", all "better", truly different pairs found, truly different)."""
    false = said = found = true_pairs = 0
    for row in table.rows:
        true = gain[row.a] - gain[row.b]
        better = "better" in row.verdict and not row.identical
        right = better and (row.verdict == f"{row.a} better") == (true > 0)
        said += better
        false += better and (true == 0 or not right)
        if true != 0:
            true_pairs += 1
            found += right
    return false, said, found, true_pairs


def run_cell(kind, layout, n, truth, delta, sims, rounds, seed, share):
    names, family = LAYOUTS[layout]
    rng = np.random.default_rng([seed, n, kind == "binary", TRUTHS.index(truth), len(names)])
    better = np.zeros(len(names), bool)
    if truth == "one":
        better[0] = True
    elif truth == "half":
        better[: len(names) // 2] = True
    gain = {nm: delta * b for nm, b in zip(names, better, strict=True)}
    out = {r: {"fdp": 0.0, "any": 0, "found": 0, "true": 0} for r in RULES}
    for k in range(sims):
        x = simulate(rng, kind, n, share, better, delta if truth != "none" else 0.0)
        for rule in RULES:
            table = compare_family(x, names, adjust=rule, rounds=rounds, seed=k + 1, family=family)
            false, said, found, true_pairs = tally(table, gain)
            cell = out[rule]
            cell["fdp"] += false / said if said else 0.0
            cell["any"] += false > 0
            cell["found"] += found
            cell["true"] += true_pairs
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="8 systems, 0/1 scores, 60 tables")
    ap.add_argument("--sims", type=int, default=None, help="tables per cell (default 400)")
    ap.add_argument("--n", type=int, default=100, help="questions")
    ap.add_argument("--share", type=float, default=0.2, help="share of questions a pair differs on")
    ap.add_argument("--delta", type=float, default=0.1, help="the true gain (0.1: 10 points)")
    ap.add_argument("--rounds", type=int, default=2000, help="sign-flip rounds")
    ap.add_argument("--seed", type=int, default=20240601)
    args = ap.parse_args()
    if args.quick:
        kinds, layouts, sims = ("binary",), ("8 systems, all pairs",), args.sims or 60
    else:
        kinds, layouts, sims = ("binary", "graded"), tuple(LAYOUTS), args.sims or 400
    start = time.perf_counter()
    print(
        f"{sims} tables per cell; {args.n} questions; any two systems differ on "
        f"{args.share * 100:g}% of them; gain {args.delta * 100:g} points; sign-flip rounds "
        f"{args.rounds}; seed {args.seed}"
    )
    print()
    print(
        "| scores | table | truth | "
        + " | ".join(f"{r}: FDR / family-wise / power" for r in RULES)
        + " |"
    )
    print("|---|---|---|" + "--:|" * len(RULES))
    worst = 0.0
    for kind in kinds:
        for layout in layouts:
            for truth in TRUTHS:
                c = run_cell(
                    kind,
                    layout,
                    args.n,
                    truth,
                    args.delta,
                    sims,
                    args.rounds,
                    args.seed,
                    args.share,
                )
                cells = []
                for rule in RULES:
                    r = c[rule]
                    fdr = r["fdp"] / sims * 100
                    worst = max(worst, fdr) if rule == "fdr" else worst
                    power = f"{r['found'] / r['true'] * 100:.1f}" if r["true"] else "–"
                    cells.append(f"{fdr:.1f} / {r['any'] / sims * 100:.1f} / {power}")
                label = "0/1 (hit)" if kind == "binary" else "graded (RR)"
                print(f"| {label} | {layout} | {truth} | " + " | ".join(cells) + " |", flush=True)
    print()
    print(
        f"fdr: largest false discovery rate {worst:.1f}%; Monte Carlo standard error of a "
        f"rate near 5% at most {math.sqrt(0.05 * 0.95 / sims) * 100:.1f} points"
    )
    print(f"{time.perf_counter() - start:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()

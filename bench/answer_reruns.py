"""Do intervals with reruns cover, and does naive pooling of reruns under-cover?

Simulates answer grades with known truth. Each question q has a rerun flip
probability f_q (0 for a share of stable questions, uniform on (0, f_max) for the
rest) and, for each system s, a base grade b_sq ~ Bernoulli(a_s) (shared across
systems through one question difficulty with probability RHO, else drawn apart).
One rerun gives the other grade than the base with probability f_q, so system s's
true accuracy is ``a_s + mean(f) * (1 - 2 a_s)``; reruns are independent draws.

(a) coverage of the 95% accuracy interval of system A and of the paired difference
    A - B (``ragmeter.stats.reruns``), for the default bootstrap of whole questions
    (each with its reruns: "questions"), the two-level bootstrap (questions, then
    reruns within each question: ``within=True``) and naive pooling (every rerun
    counted as a question of its own, rerun r of A paired with rerun r of B);
(b) family-wise false "better" among 4 equal systems with the step-down max-T
    (``compare_reruns(family="maxt")``: the project's max-T on the sign-flip p of whole
    questions' mean differences), with Holm and with Benjamini-Hochberg (``"fdr"``;
    with every system equal, any "better" is false, so the false discovery rate is
    this rate too), with reruns (K = 3) and without (the first rerun only);
(c) variance shares at K = 3, 200 questions: the moment estimate of the share of the
    accuracy's variance due to reruns against its true value, and the coverage of its
    interval.

    python bench/answer_reruns.py                       # every part, defaults
    python bench/answer_reruns.py --only a --reps 200   # coverage only
    python bench/answer_reruns.py --only b,c --seed 7

Targets: coverage 93-97% in cells with >= 50 questions; family-wise false "better"
<= 5%; shares recovered within 0.05.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one core; BLAS threads only contend
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import math  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from ragmeter import stats  # noqa: E402
from ragmeter.stats.rerun_variance import variance_shares  # noqa: E402
from ragmeter.stats.reruns import compare_reruns, rerun_accuracy, rerun_difference  # noqa: E402

RHO = 0.7  # share of questions whose base grades share one difficulty across systems
NOISE = {"low": (0.7, 0.3), "high": (0.3, 0.5)}  # (share stable, f_max)
CELLS_A = [  # questions, reruns, noise, grades
    (50, 3, "low", "0/1"),
    (50, 3, "high", "0/1"),
    (200, 3, "low", "0/1"),
    (200, 3, "high", "0/1"),
    (200, 5, "high", "0/1"),
    (200, 3, "high", "graded"),
]
ACC = (0.75, 0.65)  # base accuracies of A and B in (a)
PARTIAL = 0.1  # share of "partial" base grades when grades are correct / partial / wrong


def draw_flips(rng: np.random.Generator, n: int, noise: str) -> np.ndarray:
    stable, f_max = NOISE[noise]
    return np.where(rng.random(n) < stable, 0.0, rng.random(n) * f_max)


def mean_flip(noise: str) -> float:
    stable, f_max = NOISE[noise]
    return (1.0 - stable) * f_max / 2.0


def draw_systems(rng, n: int, k: int, accs, flips: np.ndarray, graded: bool = False):
    """One [questions, reruns] array of grades per system: 0/1, or 0/0.5/1 when ``graded``
    (a flipped rerun then takes one of the two other grades, each half the time)."""
    z = rng.random(n)
    shared = rng.random(n) < RHO
    out = []
    for a in accs:
        u = np.where(shared, z, rng.random(n))
        base = (u < a).astype(np.float64)[:, None]
        flip = rng.random((n, k)) < flips[:, None]
        other = 1.0 - base
        if graded:
            base = np.where(u < a, 1.0, np.where(u < a + PARTIAL, 0.5, 0.0))[:, None]
            low = rng.random((n, k)) < 0.5  # which of the two other grades
            other = np.where(low, np.where(base == 0.0, 0.5, 0.0), np.where(base == 1.0, 0.5, 1.0))
        out.append(np.where(flip, other, base))
    return out


def true_accuracy(a: float, noise: str, graded: bool = False) -> float:
    if not graded:
        return a + mean_flip(noise) * (1.0 - 2.0 * a)
    # A flip moves a 1 by -0.75 and a 0 by +0.75 on average, a 0.5 by nothing.
    return a + 0.5 * PARTIAL + mean_flip(noise) * 0.75 * ((1.0 - a - PARTIAL) - a)


def _covers(est, truth: float) -> bool:
    return est.low <= truth <= est.high


def coverage_cell(rng, cell, reps: int, rounds: int) -> dict[str, float]:
    """Coverage (share of reps) of each interval, and mean widths (points)."""
    n, k, noise, grades = cell
    graded = grades == "graded"
    truth_a = true_accuracy(ACC[0], noise, graded)
    truth_d = truth_a - true_accuracy(ACC[1], noise, graded)
    hits: dict[str, int] = {}
    widths: dict[str, float] = {}
    for rep in range(reps):
        a, b = draw_systems(rng, n, k, ACC, draw_flips(rng, n, noise), graded)
        seed = 1 + rep
        found = {
            "acc two-level": rerun_accuracy(a, rounds, seed, within=True),
            "acc questions": rerun_accuracy(a, rounds, seed),
            "acc naive": stats.bootstrap(a.ravel(), rounds, seed),
            "diff two-level": rerun_difference(a, b, rounds, seed, within=True).difference,
            "diff questions": rerun_difference(a, b, rounds, seed).difference,
            "diff naive": stats.paired(a.ravel(), b.ravel(), rounds, seed).difference,
        }
        for name, est in found.items():
            truth = truth_a if name.startswith("acc") else truth_d
            hits[name] = hits.get(name, 0) + _covers(est, truth)
            widths[name] = widths.get(name, 0.0) + (est.high - est.low) * 100 / reps
    return {name: hits[name] / reps for name in hits} | {f"w {m}": w for m, w in widths.items()}


def family_cell(rng, n: int, reps: int, rounds: int) -> dict[str, float]:
    """Share of tables of 4 equal systems with at least one "better"."""
    counts: dict[str, int] = {}
    for rep in range(reps):
        systems = draw_systems(rng, n, 3, (0.7,) * 4, draw_flips(rng, n, "high"))
        names = ["s0", "s1", "s2", "s3"]
        for label, arrays in (("K=3", systems), ("K=1", [s[:, :1] for s in systems])):
            for family in ("maxt", "holm", "fdr"):
                rows = compare_reruns(arrays, names, rounds, 1 + rep, family=family)
                wrong = any(r.verdict.endswith("better") for r in rows)
                key = f"{family} {label}"
                counts[key] = counts.get(key, 0) + wrong
    return {key: c / reps for key, c in counts.items()}


def true_shares(noise: str, k: int, a: float, rng) -> tuple[float, float]:
    """(rerun share of the accuracy's variance, of one answer's), by a large draw."""
    f = draw_flips(rng, 2_000_000, noise)
    base = (rng.random(f.size) < a).astype(np.float64)
    p = np.where(base == 1.0, 1.0 - f, f)
    between, within = float(p.var()), float(np.mean(p * (1.0 - p)))
    return (within / k) / (between + within / k), within / (between + within)


def shares_cell(rng, noise: str, reps: int, rounds: int) -> dict[str, float]:
    n, k = 200, 3
    truth, truth_answer = true_shares(noise, k, ACC[0], rng)
    est, err, within, cover, err_answer = [], [], 0, 0, []
    for rep in range(reps):
        (a,) = draw_systems(rng, n, k, ACC[:1], draw_flips(rng, n, noise))
        v = variance_shares(a, rounds, 1 + rep)
        est.append(v.rerun_share.mean)
        err.append(abs(v.rerun_share.mean - truth))
        err_answer.append(abs(v.answer_rerun_share.mean - truth_answer))
        within += err[-1] <= 0.05
        cover += v.rerun_share.low <= truth <= v.rerun_share.high
    return {
        "true": truth,
        "mean est": float(np.mean(est)),
        "mean |err|": float(np.mean(err)),
        "within 0.05": within / reps,
        "covered": cover / reps,
        "true answer": truth_answer,
        "answer |err|": float(np.mean(err_answer)),
    }


def _mc(p: float, reps: int) -> str:
    """A share with its Monte Carlo standard error, in points."""
    return f"{100 * p:5.1f} ±{100 * math.sqrt(max(p * (1 - p), 1e-12) / reps):.1f}"


def run_a(rng, reps: int, rounds: int) -> None:
    print(f"(a) coverage of 95% intervals, {reps} runs a cell, {rounds} rounds (target 93-97)")
    names = ["questions", "two-level", "naive"]
    head = "  ".join(f"{f'{w} {m}':>14}" for w in ("acc", "diff") for m in names)
    print(f"{'questions K noise grades':>25}  {head}")
    for n, k, noise, grades in CELLS_A:
        r = coverage_cell(rng, (n, k, noise, grades), reps, rounds)
        cols = "  ".join(f"{_mc(r[f'{w} {m}'], reps):>14}" for w in ("acc", "diff") for m in names)
        print(f"{n:>9} {k:>2} {noise:>5} {grades:>6}  {cols}")
        widths = "  ".join(f"{r[f'w {w} {m}']:>14.1f}" for w in ("acc", "diff") for m in names)
        print(f"{'mean width (pts)':>25}  {widths}")


def run_b(rng, reps: int, rounds: int) -> None:
    print(f"\n(b) family-wise false 'better', 4 equal systems, high noise, {reps} tables a cell")
    keys = [f"{f} K={k}" for k in (3, 1) for f in ("maxt", "holm", "fdr")]
    print(f"{'questions':>10}  " + "  ".join(f"{key:>12}" for key in keys))
    for n in (100,):
        r = family_cell(rng, n, reps, rounds)
        cols = "  ".join(f"{_mc(r[key], reps):>12}" for key in keys)
        print(f"{n:>10}  {cols}")


def run_c(rng, reps: int, rounds: int) -> None:
    print(f"\n(c) variance shares at K=3, 200 questions, {reps} runs a cell (target |err| <= 0.05)")
    keys = [
        "true",
        "mean est",
        "mean |err|",
        "within 0.05",
        "covered",
        "true answer",
        "answer |err|",
    ]
    print(f"{'noise':>6}  " + "  ".join(f"{k:>12}" for k in keys))
    for noise in ("low", "high"):
        r = shares_cell(rng, noise, reps, rounds)
        print(f"{noise:>6}  " + "  ".join(f"{r[k]:>12.3f}" for k in keys))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=400, help="simulated runs a cell (default 400)")
    ap.add_argument("--rounds", type=int, default=1000, help="bootstrap / sign-flip rounds")
    ap.add_argument("--seed", type=int, default=20261206)
    ap.add_argument("--only", default="a,b,c", help="parts to run, e.g. 'a' or 'b,c'")
    args = ap.parse_args()
    parts = set(args.only.split(","))
    if not parts <= {"a", "b", "c"}:
        ap.error("--only takes a, b, c or a comma-separated list of them")
    start = time.time()
    # One stream a part, so that --only gives the same figures as the full run.
    if "a" in parts:
        run_a(np.random.default_rng([args.seed, 0]), args.reps, args.rounds)
    if "b" in parts:
        run_b(np.random.default_rng([args.seed, 1]), max(1, args.reps // 2), args.rounds)
    if "c" in parts:
        run_c(np.random.default_rng([args.seed, 2]), args.reps, args.rounds)
    print(f"\n{time.time() - start:.0f} s")


if __name__ == "__main__":
    main()

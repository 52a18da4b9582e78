"""Judge-corrected accuracy and paired comparisons: do the intervals hold when the judge errs?

Draws test sets of Q questions answered by three systems. Each answer is right or wrong
from a latent normal (a question effect shared by the systems, correlation 0.5) with
the system's true accuracy; a **programmable judge** marks a right answer correct with
probability ``sens`` and a wrong one with probability ``fpr``, and its leniency ``fpr``
differs by system (system A's by ``+bias``: a judge that favours A's answers). A hand
grade is the truth; each system has ``n`` answers hand-graded, a random sample of its
own questions drawn independently of the other systems'.

Per cell (judge quality x hand grades n x null or effect) it measures:

* **coverage** of the 95% judge-corrected paired intervals (PPI++ weights, no
  adjustment) of the true differences, and of the uncorrected judge difference's
  paired normal interval, which the system-dependent bias pulls off the truth;
* **family-wise false "better"** with no true difference (every accuracy 60%) under
  max-T over the three pairs: judge-corrected, and the judge alone;
* per system, the **mean width** of the hand-only, plain (weight 1) and PPI++ (tuned)
  asymptotic intervals; the coverage of the PPI++ interval as ``ppi_py`` computes it,
  and of the one ``ragmeter grade`` prints (:func:`ragmeter.answers.analysis.ppi_accuracy`:
  the paired verdicts' rule for one system, adjusted rectifier variance and z widened
  for few hand grades).

    python bench/ppi.py --quick          # four cells, a few seconds
    nice python bench/ppi.py             # the full grid (32 cells)
    python bench/ppi.py --reps 500 --only poor:40

Goal: judge-corrected paired intervals, and one system's interval as ``grade`` prints
it, cover at 93-97% in every cell with at least 40 hand grades; family-wise false
"better" at or below 5%; PPI++ no wider on average than hand grades alone in any cell,
and narrower than weight 1 in at least 90% of the cells where the judge agrees with
hand grades on 80% or less.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one core; BLAS threads only contend
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import time  # noqa: E402
from statistics import NormalDist  # noqa: E402

import numpy as np  # noqa: E402

from ragmeter.answers.analysis import ppi_accuracy  # noqa: E402
from ragmeter.stats import ppi  # noqa: E402

# judge quality: (sens, fpr) for systems B and C; A's fpr is larger by BIAS
JUDGES = {"good": (0.97, 0.05), "medium": (0.92, 0.15), "poor": (0.85, 0.30), "weak": (0.75, 0.45)}
HAND = (20, 40, 80, 200)
BIAS = 0.12
Q = 600
RHO = 0.5
NULL = (0.6, 0.6, 0.6)
EFFECT = (0.6, 0.6, 0.7)
PAIRS = [(0, 1), (0, 2), (1, 2)]
Z = NormalDist().inv_cdf(0.975)


def _truth(p: tuple[float, ...], q: int, rng: np.random.Generator) -> np.ndarray:
    """``[systems, questions]`` 0/1: right when the latent is below the accuracy's quantile."""
    shared = rng.standard_normal(q)
    own = rng.standard_normal((len(p), q))
    latent = np.sqrt(RHO) * shared + np.sqrt(1 - RHO) * own
    cut = np.array([NormalDist().inv_cdf(x) for x in p])[:, None]
    return (latent < cut).astype(np.float64)


def _judge(right: np.ndarray, quality: str, rng: np.random.Generator) -> np.ndarray:
    sens, fpr = JUDGES[quality]
    fprs = np.array([fpr + BIAS, fpr, fpr])[:, None]
    u = rng.random(right.shape)
    return np.where(right == 1, u < sens, u < fprs).astype(np.float64)


def _hand(right: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    out = np.full(right.shape, np.nan)
    for s in range(right.shape[0]):
        pick = rng.choice(right.shape[1], size=n, replace=False)
        out[s, pick] = right[s, pick]
    return out


def _judge_only(judge: np.ndarray) -> ppi.Joint:
    """The judge's own accuracies as a joint estimate (no hand grades): its paired
    covariance over the questions."""
    m, q = judge.shape
    cov = np.cov(judge, ddof=0).reshape(m, m) / q
    return ppi.Joint(judge.mean(1), np.ones(m), cov, judge.mean(1), [0] * m, [[0] * m] * m)


def _cell(quality: str, n: int, p: tuple[float, ...], reps: int, rounds: int, seed: int) -> dict:
    rng = np.random.default_rng([seed, n, list(JUDGES).index(quality), int(p[2] * 100)])
    true_diff = {(a, b): p[a] - p[b] for a, b in PAIRS}
    cover = judge_cover = fwer = judge_fwer = 0
    width = {"hand": 0.0, "plain": 0.0, "tuned": 0.0}
    sys_cover, grade_cover, agree = 0, 0, 0.0
    for r in range(reps):
        right = _truth(p, Q, rng)
        judge = _judge(right, quality, rng)
        hand = _hand(right, n, rng)
        joint = ppi.joint_ppi(judge, hand, "tuned")
        for t in ppi.pair_tests(joint, PAIRS, adjust="none"):
            cover += t.low <= true_diff[(t.a, t.b)] <= t.high
        for t in ppi.pair_tests(_judge_only(judge), PAIRS, adjust="none"):
            judge_cover += t.low <= true_diff[(t.a, t.b)] <= t.high
        if p == NULL:
            adj = ppi.pair_tests(joint, PAIRS, adjust="maxt", seed=r + 1, rounds=rounds)
            fwer += any(t.low > 0 or t.high < 0 for t in adj)
            alone = ppi.pair_tests(
                _judge_only(judge), PAIRS, adjust="maxt", seed=r + 1, rounds=rounds
            )
            judge_fwer += any(t.low > 0 or t.high < 0 for t in alone)
        for s in range(judge.shape[0]):
            seen = ~np.isnan(hand[s])
            args = (hand[s, seen], judge[s, seen], judge[s, ~seen])
            agree += float(np.mean(args[0] == args[1]))
            width["hand"] += 2 * Z * float(np.std(args[0])) / np.sqrt(n)
            lo, hi = ppi.ppi_interval(*args, 1.0)
            width["plain"] += hi - lo
            lam = ppi.tuned_weight(*args)
            lo, hi = ppi.ppi_interval(*args, lam)
            width["tuned"] += hi - lo
            sys_cover += lo <= p[s] <= hi
            printed = ppi_accuracy(args[2], args[1], args[0])  # what `grade` prints
            grade_cover += printed.low <= p[s] <= printed.high
    pairs, systems = reps * len(PAIRS), reps * len(p)
    return {
        "cover": cover / pairs,
        "judge_cover": judge_cover / pairs,
        "fwer": fwer / reps if p == NULL else None,
        "judge_fwer": judge_fwer / reps if p == NULL else None,
        "agree": agree / systems,
        "sys_cover": sys_cover / systems,
        "grade_cover": grade_cover / systems,
        **{f"w_{k}": v / systems for k, v in width.items()},
    }


def _fmt(x: float | None) -> str:
    return "   -  " if x is None else f"{x * 100:5.1f}%"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=2000, help="max-T draws per test")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="four cells, 200 reps")
    ap.add_argument("--only", help="one cell, JUDGE:N (both scenarios)")
    args = ap.parse_args()
    judges, hands = list(JUDGES), list(HAND)
    if args.quick:
        judges, hands, args.reps = ["good", "weak"], [40, 200], 200
    if args.only:
        j, n = args.only.split(":")
        judges, hands = [j], [int(n)]
    print(
        f"Q={Q} questions, 3 systems, judge leniency on A +{BIAS:g}; {args.reps} reps, "
        f"max-T {args.rounds} draws, seed {args.seed}"
    )
    print(
        "judge   n   agree  scen   cover  judge-cov  FWER  judge-FWER  "
        "w-hand w-plain w-tuned cov cov-grade"
    )
    start, tuned_ok, tuned_cells, beat, beat_cells = time.time(), 0, 0, 0, 0
    for quality in judges:
        for n in hands:
            for name, p in (("null", NULL), ("effect", EFFECT)):
                c = _cell(quality, n, p, args.reps, args.rounds, args.seed)
                print(
                    f"{quality:6} {n:4} {c['agree'] * 100:5.1f}%  {name:6} {_fmt(c['cover'])}"
                    f"  {_fmt(c['judge_cover'])}  {_fmt(c['fwer'])}  {_fmt(c['judge_fwer'])}"
                    f"   {c['w_hand'] * 100:5.1f}  {c['w_plain'] * 100:5.1f}  "
                    f"{c['w_tuned'] * 100:5.1f} {_fmt(c['sys_cover'])} {_fmt(c['grade_cover'])}"
                )
                tuned_cells += 1
                tuned_ok += c["w_tuned"] <= c["w_hand"]
                if c["agree"] <= 0.80:
                    beat_cells += 1
                    beat += c["w_tuned"] < c["w_plain"]
    print(
        f"PPI++ no wider than hand-only in {tuned_ok} of {tuned_cells} cells; narrower than "
        f"weight 1 in {beat} of {beat_cells} cells with agreement <= 80%"
    )
    print(f"({time.time() - start:.0f} s)")


if __name__ == "__main__":
    main()

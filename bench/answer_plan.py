"""Does the answer plan's predicted half-width match the interval a run then gets?

``ragmeter plan --answers`` predicts the half-width of the accuracy interval on n
questions x K reruns as ``z * sqrt((between + within / K) / n)``
(``ragmeter.stats.answer_plan``), with the components measured on a pilot. This bench
draws answers with known truth (the simulation of ``bench/answer_reruns.py``: each
question a flip probability, a rerun the other grade with that probability), then for
each mix of questions and reruns:

* **truth**: the components from a draw of 2,000,000 questions, put in the formula;
* **pilot**: a pilot of 60 questions x 3 reruns per plan, its components estimated by
  ``noise_of`` (moments, as ``plan --answers`` does), put in the formula: the mean over
  plans of the predicted half-width, and the share of plans within 10% of the measured;
* **one-call pilot**: the same calls as one pilot of 180 questions x 1 rerun, whose
  split between questions and reruns is assumed (``ASSUMED_RERUN_SHARE``): right at
  K = 1 whatever the split, off at K > 1 as far as the assumption is off;
* **measured**: the mean half-width of ``rerun_accuracy``'s 95% interval (the
  bootstrap of whole questions with their reruns) over fresh runs of that mix.

Then the hand grades the plan asks for: does the judge-corrected accuracy's predicted
half-width (``predicted_corrected_half_width``, the rule ``grade`` prints with: the
tuned weight, a quarter answer per hand x judge cell, z widened for n hand grades)
match the one ``ppi_accuracy`` prints? Each mix draws N answers correct by hand with
probability ``accuracy``, the judge grading each otherwise with probability ``error``,
and n of them graded by hand at random:

* **printed**: the mean half-width ``ppi_accuracy`` prints, over ``--hand-reps`` draws;
* **truth**: the prediction from the true hand x judge shares and judge variance;
* **pilot**: the prediction from a pilot of 20 answers graded both ways (its table)
  and the judge's grades of the N (its variance), as ``plan --answers`` measures them;
* **former**: the former planning rule, plain z on ``var(judge) / N + var(hand -
  judge) / n`` with the true variances.

    python bench/answer_plan.py                    # 200 runs a mix, seed 20261206
    python bench/answer_plan.py --reps 50 --rounds 500 --hand-reps 500

Target: the prediction within 10% of the measured half-width in every mix; the
corrected accuracy's from the truth within 5% of the mean printed one at 40 hand
grades or more. (It is the width printed when the hand x judge table falls at its
expected shares; the mean printed is a little narrower, the more so the fewer the
hand grades: the plug-in variance's (n - 1) / n, the weight tuned on the same sample,
and the mean of a square root.)
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one core; BLAS threads only contend
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
from answer_reruns import ACC, draw_flips, draw_systems  # noqa: E402

from ragmeter.answers.analysis import ppi_accuracy  # noqa: E402
from ragmeter.stats.answer_plan import (  # noqa: E402
    NoiseModel,
    noise_of,
    predicted_corrected_half_width,
    predicted_half_width,
)
from ragmeter.stats.reruns import rerun_accuracy  # noqa: E402

MIXES = [  # questions, reruns, noise
    (100, 1, "low"),
    (100, 3, "low"),
    (200, 2, "high"),
    (100, 5, "high"),
    (400, 1, "high"),
]
PILOT = (60, 3)
ONE_CALL_PILOT = (180, 1)
HAND_MIXES = [  # answers N, hand grades n, accuracy by hand, judge's error rate
    (400, 40, 0.7, 0.05),
    (400, 40, 0.7, 0.15),
    (200, 20, 0.8, 0.10),
    (1000, 100, 0.6, 0.15),
    (400, 80, 0.5, 0.25),
]
HAND_PILOT = 20


def true_noise(noise: str, rng) -> NoiseModel:
    """The components of system A's grades under ``noise``, by a large draw."""
    f = draw_flips(rng, 2_000_000, noise)
    base = (rng.random(f.size) < ACC[0]).astype(np.float64)
    p = np.where(base == 1.0, 1.0 - f, f)
    return NoiseModel(float(p.var()), float(np.mean(p * (1.0 - p))), "truth")


def draw(rng, n: int, k: int, noise: str) -> np.ndarray:
    (a,) = draw_systems(rng, n, k, ACC[:1], draw_flips(rng, n, noise))
    return a


def mix_row(rng, mix, truths, reps: int, rounds: int) -> dict[str, float]:
    n, k, noise = mix
    measured = np.mean(
        [
            (lambda e: (e.high - e.low) / 2)(rerun_accuracy(draw(rng, n, k, noise), rounds, 1 + r))
            for r in range(reps)
        ]
    )
    pilots = [predicted_half_width(noise_of(draw(rng, *PILOT, noise)), n, k) for _ in range(reps)]
    within = np.mean([abs(p / measured - 1) <= 0.10 for p in pilots])
    once = [
        predicted_half_width(noise_of(draw(rng, *ONE_CALL_PILOT, noise)), n, k) for _ in range(reps)
    ]
    return {
        "once": float(np.mean(once)),
        "truth": predicted_half_width(truths[noise], n, k),
        "pilot": float(np.mean(pilots)),
        "within": float(within),
        "measured": float(measured),
    }


def draw_graded(rng, big: int, accuracy: float, error: float):
    """Hand grades of ``big`` answers and the judge's, each otherwise at ``error``."""
    hand = (rng.random(big) < accuracy).astype(np.float64)
    return hand, np.where(rng.random(big) < error, 1.0 - hand, hand)


def table_of(hand: np.ndarray, judge: np.ndarray) -> np.ndarray:
    return np.array([[np.sum((hand == a) & (judge == b)) for b in (0, 1)] for a in (0, 1)])


def hand_row(rng, mix, reps: int) -> dict[str, float]:
    big, n, acc, err = mix
    printed, pilots = [], []
    for _ in range(reps):
        hand, judge = draw_graded(rng, big, acc, err)
        graded = np.zeros(big, dtype=bool)
        graded[rng.choice(big, n, replace=False)] = True
        est = ppi_accuracy(judge[~graded], judge[graded], hand[graded])
        printed.append((est.high - est.low) / 2)
        ph, pj = draw_graded(rng, HAND_PILOT, acc, err)
        pilot_var = float(np.var(judge, ddof=1))
        pilots.append(predicted_corrected_half_width(table_of(ph, pj), pilot_var, big, n))
    shares = np.array([[(1 - acc) * (1 - err), (1 - acc) * err], [acc * err, acc * (1 - err)]])
    p_judge = shares[:, 1].sum()
    judge_var = p_judge * (1 - p_judge)
    rect = err - (acc * err - (1 - acc) * err) ** 2  # var(hand - judge)
    measured = float(np.mean(printed))
    return {
        "printed": measured,
        "truth": predicted_corrected_half_width(shares, judge_var, big, n),
        "pilot": float(np.mean(pilots)),
        "within": float(np.mean([abs(p / measured - 1) <= 0.10 for p in pilots])),
        "former": 1.959963984540054 * float(np.sqrt(judge_var / big + rect / n)),
    }


def hand_table(rng, reps: int) -> float:
    """Print the corrected accuracy's table; the largest gap of the truth's prediction."""
    print(f"\njudge-corrected accuracy: {reps} draws a mix, pilot {HAND_PILOT} answers by hand")
    print(
        f"{'N':>5} {'n':>4} {'acc':>4} {'err':>4} {'printed':>8} {'truth':>6} {'ratio':>6} "
        f"{'pilot':>6} {'ratio':>6} {'in 10%':>6} {'former':>6} {'ratio':>6}"
    )
    worst = 0.0
    for mix in HAND_MIXES:
        row = hand_row(rng, mix, reps)
        ratio = row["truth"] / row["printed"]
        worst = max(worst, abs(ratio - 1)) if mix[1] >= 40 else worst
        print(
            f"{mix[0]:>5} {mix[1]:>4} {mix[2]:>4.2f} {mix[3]:>4.2f} {100 * row['printed']:>8.2f} "
            f"{100 * row['truth']:>6.2f} {ratio:>6.3f} {100 * row['pilot']:>6.2f} "
            f"{row['pilot'] / row['printed']:>6.3f} {100 * row['within']:>5.0f}% "
            f"{100 * row['former']:>6.2f} {row['former'] / row['printed']:>6.3f}"
        )
    print(f"largest gap of the prediction from the truth at 40 hand grades or more: "
          f"{100 * worst:.1f}% (target: 5%)")  # fmt: skip
    return worst


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=200, help="runs (and pilots) a mix")
    ap.add_argument("--rounds", type=int, default=1000, help="bootstrap rounds")
    ap.add_argument("--seed", type=int, default=20261206)
    ap.add_argument("--hand-reps", type=int, default=2000, help="draws a hand-grade mix")
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    start = time.time()
    truths = {noise: true_noise(noise, rng) for noise in ("low", "high")}
    print(
        f"reps {args.reps}, rounds {args.rounds}, seed {args.seed}; pilot {PILOT[0]} x {PILOT[1]}"
    )
    print("half-widths in points; ratio = predicted / measured")
    print(
        f"{'questions':>9} {'K':>2} {'noise':>5} {'measured':>9} {'truth':>6} {'ratio':>6} "
        f"{'pilot':>6} {'ratio':>6} {'pilots in 10%':>13} {'one-call':>8} {'ratio':>6}"
    )
    worst = 0.0
    for mix in MIXES:
        row = mix_row(rng, mix, truths, args.reps, args.rounds)
        ratio_t, ratio_p = row["truth"] / row["measured"], row["pilot"] / row["measured"]
        worst = max(worst, abs(ratio_t - 1), abs(ratio_p - 1))
        print(
            f"{mix[0]:>9} {mix[1]:>2} {mix[2]:>5} {100 * row['measured']:>9.2f} "
            f"{100 * row['truth']:>6.2f} {ratio_t:>6.3f} {100 * row['pilot']:>6.2f} "
            f"{ratio_p:>6.3f} {100 * row['within']:>12.0f}% {100 * row['once']:>8.2f} "
            f"{row['once'] / row['measured']:>6.3f}"
        )
    print(f"largest gap of a mean prediction from a rerun pilot: {100 * worst:.1f}% (target: 10%)")
    hand_table(rng, args.hand_reps)
    print(f"\n{time.time() - start:.0f} s")


if __name__ == "__main__":
    main()

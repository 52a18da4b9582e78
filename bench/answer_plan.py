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

    python bench/answer_plan.py                    # 200 runs a mix, seed 20261206
    python bench/answer_plan.py --reps 50 --rounds 500

Target: the prediction within 10% of the measured half-width in every mix.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one core; BLAS threads only contend
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
from answer_reruns import ACC, draw_flips, draw_systems  # noqa: E402

from ragmeter.stats.answer_plan import NoiseModel, noise_of, predicted_half_width  # noqa: E402
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=200, help="runs (and pilots) a mix")
    ap.add_argument("--rounds", type=int, default=1000, help="bootstrap rounds")
    ap.add_argument("--seed", type=int, default=20261206)
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
    print(f"\n{time.time() - start:.0f} s")


if __name__ == "__main__":
    main()

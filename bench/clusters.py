"""Questions that share a document: how honest are question-level and cluster-aware numbers?

Draws clustered test sets: G documents with m questions each, three systems whose
scores on a question come from a latent normal with a document effect (intra-document
correlation rho; half of it shared by the systems, half each system's own, so paired
differences cluster too) and a question effect shared by the systems. 0/1 scores (a
hit rate of 70%) or graded ones (reciprocal ranks, mean about 0.56). For each cell
(rho x questions per document x score kind x clusters) it measures:

* **coverage** of the 95% intervals of each system's mean: the question-level
  percentile bootstrap (the seed's), the plain cluster percentile bootstrap, the
  cluster bootstrap with its small-sample widening (what ragmeter uses) and what the
  ``auto`` rule picks;
* **family-wise false "better"** with no true difference: max-T over the three pairs,
  flipping whole questions (question-level) or whole documents (cluster-aware) or as
  ``auto`` picks;
* **power** at rho = 0: system s0 truly better (its latent shifted by 4 / sqrt(n),
  so that power is neither 0 nor 1 at any size), how often each path calls it better
  than both others.

    python bench/clusters.py --quick          # a few cells, under a minute
    nice python bench/clusters.py             # the full grid (128 cells)
    python bench/clusters.py --reps 200 --rounds 1000 --only 0.3:10:binary:30
    python bench/clusters.py --deff           # the design effect's own interval

Goal: cluster-aware intervals cover at 93-97% with at least 30 clusters, cluster-aware
comparisons keep family-wise false "better" at or below 5%, and at rho = 0 the
default (``auto``) loses at most 10% of power against the question-level path.
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

from ragmeter.comparison.verdicts import compare_family  # noqa: E402
from ragmeter.stats import bootstrap_many  # noqa: E402
from ragmeter.stats.bootstrap import _order_stat, _tails  # noqa: E402
from ragmeter.stats.clusters import (  # noqa: E402
    _resampled_cluster_means,
    cluster_bootstrap_many,
    decide_clusters,
    design_effects,
)

RHOS = (0.0, 0.1, 0.3, 0.5)
PER_DOC = (3, 5, 10, 20)
KINDS = ("binary", "graded")
GROUPS = (10, 20, 30, 60)
SYSTEMS = 3
HIT_P = 0.7
# Reciprocal rank of the answer: ranks 1..10 or not found (as bench/paired_coverage.py).
RANK_P = np.array([0.45, 0.12, 0.08, 0.05, 0.04, 0.03, 0.03, 0.02, 0.02, 0.02, 0.14])
RANK_V = np.array([1 / r for r in range(1, 11)] + [0.0])
CUM = np.cumsum(RANK_P)
GRADED_MEAN = float(RANK_P @ RANK_V)
POWER_SHIFT = 4.0  # latent shift of the better system, over sqrt(questions) (power)
_ND = NormalDist()
_PHI = np.vectorize(_ND.cdf)


def simulate(rng, kind: str, rho: float, groups: int, per_doc: int, shift: float = 0.0):
    """(systems, n) scores and each question's document code."""
    n = groups * per_doc
    codes = np.repeat(np.arange(groups), per_doc)
    shared_doc = rng.standard_normal(groups)
    own_doc = rng.standard_normal((SYSTEMS, groups))
    doc = math.sqrt(0.5) * shared_doc[None, :] + math.sqrt(0.5) * own_doc
    question = rng.standard_normal(n)
    noise = math.sqrt(0.5) * question[None, :] + math.sqrt(0.5) * rng.standard_normal((SYSTEMS, n))
    z = math.sqrt(rho) * doc[:, codes] + math.sqrt(1.0 - rho) * noise
    z[0] -= shift  # a lower latent is a better score
    if kind == "binary":
        return (z < _ND.inv_cdf(HIT_P)).astype(np.float64), codes
    u = _PHI(z)
    return RANK_V[np.minimum(np.searchsorted(CUM, u, side="right"), len(RANK_V) - 1)], codes


def true_mean(kind: str) -> float:
    return HIT_P if kind == "binary" else GRADED_MEAN


def plain_cluster(m, codes, groups, rounds, seed):
    means = _resampled_cluster_means(m, codes, groups, rounds, seed)
    lo_q, hi_q = _tails(0.95)
    lo_k, hi_k = _order_stat(rounds, lo_q), _order_stat(rounds, hi_q)
    srt = np.sort(means, axis=0)
    return srt[lo_k], srt[hi_k]


def run_cell(rho, per_doc, kind, groups, reps, rounds, seed, power: bool):
    rng = np.random.default_rng([seed, int(rho * 100), per_doc, groups, KINDS.index(kind)])
    mu = true_mean(kind)
    cover = {"question": 0, "cluster plain": 0, "cluster": 0, "auto": 0}
    false_better = {"question": 0, "cluster": 0, "auto": 0}
    wins = {"question": 0, "cluster": 0, "auto": 0}
    used = 0
    names = [f"s{i}" for i in range(SYSTEMS)]
    for r in range(reps):
        m, codes = simulate(rng, kind, rho, groups, per_doc)
        s = seed + r
        _, chosen = decide_clusters(m, codes, "auto", s, rounds)
        use = chosen is not None
        used += use
        q = bootstrap_many(m, rounds, s)
        c = cluster_bootstrap_many(m, codes, rounds, s)
        lo, hi = plain_cluster(m, codes, groups, rounds, s)
        for j in range(SYSTEMS):
            qin = q[j].low <= mu <= q[j].high
            cin = c[j].low <= mu <= c[j].high
            cover["question"] += qin
            cover["cluster"] += cin
            cover["cluster plain"] += lo[j] <= mu <= hi[j]
            cover["auto"] += cin if use else qin
        kw = dict(alpha=0.05, rounds=rounds, seed=s, adjust="maxt", identical=[])
        qv = compare_family(m, names, **kw)
        cv = compare_family(m, names, clusters=codes, **kw)
        qf = any(row.separated for row in qv.rows)
        cf = any(row.separated for row in cv.rows)
        false_better["question"] += qf
        false_better["cluster"] += cf
        false_better["auto"] += cf if use else qf
        if power:
            shift = POWER_SHIFT / math.sqrt(groups * per_doc)
            m1, codes1 = simulate(rng, kind, rho, groups, per_doc, shift)
            _, chosen1 = decide_clusters(m1, codes1, "auto", s, rounds)
            qv = compare_family(m1, names, **kw)
            cv = compare_family(m1, names, clusters=codes1, **kw)

            def s0_better(table) -> bool:
                return all(
                    row.separated and row.difference.mean > 0
                    for row in table.rows
                    if row.a == "s0" or row.b == "s0"
                )

            qb, cb = s0_better(qv), s0_better(cv)
            wins["question"] += qb
            wins["cluster"] += cb
            wins["auto"] += cb if chosen1 is not None else qb
    k = reps * SYSTEMS
    return {
        "cover": {key: v / k for key, v in cover.items()},
        "fwer": {key: v / reps for key, v in false_better.items()},
        "power": {key: v / reps for key, v in wins.items()} if power else None,
        "auto_used": used / reps,
    }


DEFF_CELLS = (
    (0.0, 5, "binary", 30),
    (0.1, 10, "graded", 30),
    (0.3, 5, "binary", 10),
    (0.3, 10, "graded", 60),
    (0.5, 3, "binary", 20),
    (0.1, 5, "binary", 60),
)


def deff_coverage(reps: int, rounds: int) -> None:
    """How often the design effect's interval holds the true one (the variance of the
    mean over 4,000 simulated test sets, over the average question-level variance)."""
    for rho, per_doc, kind, groups in DEFF_CELLS:
        rng = np.random.default_rng(11)
        means, spread, found = [], [], []
        for r in range(4000):
            x, codes = simulate(rng, kind, rho, groups, per_doc)
            x = x[:1]
            means.append(x.mean())
            spread.append(x.var() / x.size)
            if r < reps:
                found.append(design_effects(x, codes, rounds=rounds, seed=r + 1)[0])
        true = float(np.var(means) / np.mean(spread))
        ok = [d.low <= true <= d.high for d in found if d.deff is not None]
        print(
            f"rho {rho} q/doc {per_doc} {kind} G {groups}: true design effect {true:.2f}, "
            f"interval covers it in {np.mean(ok):.3f} of {len(ok)} test sets",
            flush=True,
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a few cells, under a minute")
    ap.add_argument("--reps", type=int, default=None, help="test sets a cell (default 150)")
    ap.add_argument("--rounds", type=int, default=1000, help="resampling rounds (default 1000)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--only", default="", help="one cell: rho:per_doc:kind:clusters")
    ap.add_argument("--deff", action="store_true", help="coverage of the design effect's CI")
    args = ap.parse_args()
    if args.deff:
        deff_coverage(args.reps or 300, args.rounds)
        return
    if args.only:
        rho, per_doc, kind, groups = args.only.split(":")
        cells = [(float(rho), int(per_doc), kind, int(groups))]
    elif args.quick:
        cells = [(0.0, 5, "binary", 30), (0.3, 5, "binary", 30), (0.3, 10, "graded", 60)]
    else:
        cells = [(r, p, k, g) for r in RHOS for p in PER_DOC for k in KINDS for g in GROUPS]
    reps = args.reps or (40 if args.quick else 150)
    print(
        f"{len(cells)} cells, {reps} test sets a cell, {args.rounds} rounds, seed {args.seed}; "
        f"coverage over {SYSTEMS} systems a test set (95% intervals), family-wise false "
        f"'better' of max-T over {SYSTEMS * (SYSTEMS - 1) // 2} pairs",
        flush=True,
    )
    print(
        f"{'rho':>4} {'q/doc':>5} {'kind':>6} {'G':>3} | coverage: {'quest':>5} {'cplain':>6} "
        f"{'clust':>5} {'auto':>5} | false better: {'quest':>5} {'clust':>5} {'auto':>5} | "
        f"power: {'quest':>5} {'clust':>5} {'auto':>5} | auto on"
    )
    start = time.perf_counter()
    for rho, per_doc, kind, groups in cells:
        out = run_cell(rho, per_doc, kind, groups, reps, args.rounds, args.seed, rho == 0.0)
        c, f, p = out["cover"], out["fwer"], out["power"]
        power = f"{p['question']:5.2f} {p['cluster']:5.2f} {p['auto']:5.2f}" if p else " " * 17
        print(
            f"{rho:4.1f} {per_doc:5d} {kind:>6} {groups:3d} | coverage: {c['question']:5.3f} "
            f"{c['cluster plain']:6.3f} {c['cluster']:5.3f} {c['auto']:5.3f} | false better: "
            f"{f['question']:5.3f} {f['cluster']:5.3f} {f['auto']:5.3f} | power: {power} | "
            f"{out['auto_used']:.2f}",
            flush=True,
        )
    print(f"{time.perf_counter() - start:.0f} s", flush=True)


if __name__ == "__main__":
    main()

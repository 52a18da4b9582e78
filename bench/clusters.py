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
    nice python bench/clusters.py --auto      # the default rule: 4 systems, >= 30 documents
    python bench/clusters.py --edges          # clustered 0/1 scores near 100%: coverage

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
    AUTO_CLUSTERS,
    _resampled_cluster_means,
    cluster_bootstrap_many,
    clusters_matter,
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


def simulate(
    rng,
    kind: str,
    rho: float,
    groups: int,
    per_doc: int,
    shift: float = 0.0,
    systems=SYSTEMS,
    hit: float = HIT_P,
):
    """(systems, n) scores and each question's document code."""
    n = groups * per_doc
    codes = np.repeat(np.arange(groups), per_doc)
    shared_doc = rng.standard_normal(groups)
    own_doc = rng.standard_normal((systems, groups))
    doc = math.sqrt(0.5) * shared_doc[None, :] + math.sqrt(0.5) * own_doc
    question = rng.standard_normal(n)
    noise = math.sqrt(0.5) * question[None, :] + math.sqrt(0.5) * rng.standard_normal((systems, n))
    z = math.sqrt(rho) * doc[:, codes] + math.sqrt(1.0 - rho) * noise
    z[0] -= shift  # a lower latent is a better score
    if kind == "binary":
        return (z < _ND.inv_cdf(hit)).astype(np.float64), codes
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


AUTO_SYSTEMS = 4
AUTO_RHOS = (0.0, 0.1, 0.3, 0.5)
AUTO_PER_DOC = (3, 5, 10)
AUTO_GROUPS = (30, 60)
# --auto's power: s0's latent shift over sqrt(questions) that gives the question-level
# path about 80% power to call s0 better than all three others (the power ragmeter plans for)
AUTO_SHIFT = 6.0


def pretest(m, codes, groups, seed, rounds) -> bool:
    """The earlier ``auto`` rule at any number of clusters: a design effect's interval
    (a system's score or a pair's difference) wholly above 1, with at least 10."""
    k = m.shape[0]
    pairs = [m[i] - m[j] for i in range(k) for j in range(i + 1, k)]
    return clusters_matter(design_effects(np.vstack([m, *pairs]), codes, rounds, seed), groups)


def auto_cell(rho, per_doc, kind, groups, reps, rounds, seed, shift_at=POWER_SHIFT):
    """Family-wise false "better" (max-T over the 6 pairs of 4 systems with equal true
    means) and, at rho = 0, the power to call a truly better s0 better than the other
    three: flipping questions, flipping documents, the earlier pre-test rule and
    today's ``auto`` (:func:`ragmeter.stats.clusters.decide_clusters`), on the same
    test sets."""
    rng = np.random.default_rng([seed, int(rho * 100), per_doc, groups, KINDS.index(kind), 4])
    names = [f"s{i}" for i in range(AUTO_SYSTEMS)]
    kw = dict(alpha=0.05, rounds=rounds, adjust="maxt", identical=[])
    paths = ("question", "cluster", "pretest", "auto")
    false_better = dict.fromkeys(paths, 0)
    wins = dict.fromkeys(paths, 0)
    used = {"pretest": 0, "auto": 0}

    def tables(m, codes, s):
        q = compare_family(m, names, seed=s, **kw)
        c = compare_family(m, names, seed=s, clusters=codes, **kw)
        pre = pretest(m, codes, groups, s, rounds)
        auto = decide_clusters(m, codes, "auto", s, rounds)[1] is not None
        chosen = {"question": q, "cluster": c, "pretest": c if pre else q}
        chosen["auto"] = c if auto else q
        return chosen, (pre, auto)

    for r in range(reps):
        s = seed + r
        m, codes = simulate(rng, kind, rho, groups, per_doc, systems=AUTO_SYSTEMS)
        found, (pre, auto) = tables(m, codes, s)
        used["pretest"] += pre
        used["auto"] += auto
        for path in paths:
            false_better[path] += any(row.separated for row in found[path].rows)
        if rho == 0.0:
            shift = shift_at / math.sqrt(groups * per_doc)
            m1, codes1 = simulate(rng, kind, rho, groups, per_doc, shift, systems=AUTO_SYSTEMS)
            found, _ = tables(m1, codes1, s)
            for path in paths:
                wins[path] += all(
                    row.separated and row.difference.mean > 0
                    for row in found[path].rows
                    if "s0" in (row.a, row.b)
                )
    return false_better, wins if rho == 0.0 else None, used


EDGE_CELLS = [
    (rho, per_doc, groups, hit)
    for hit in (0.95, 0.98)
    for rho in (0.0, 0.1, 0.3)
    for per_doc in (3, 5)
    for groups in (10, 30)
]


def edge_coverage(reps: int, rounds: int, seed: int) -> None:
    """``--edges``: how often the interval the tables show for a clustered 0/1 score near
    100% holds the true rate: the t-widened document bootstrap alone, and with the
    exact interval at the effective number of questions where the rule shows it."""
    from ragmeter.comparison.formatting import shown_interval

    print(
        f"{len(EDGE_CELLS)} cells, {reps} test sets a cell, {rounds} rounds, seed {seed}; "
        f"coverage of the 95% interval of one system's 0/1 score",
        flush=True,
    )
    print(f"{'hit':>5} {'rho':>4} {'q/doc':>5} {'G':>3} | bootstrap  shown | exact shown in")
    worst = 1.0
    for rho, per_doc, groups, hit in EDGE_CELLS:
        rng = np.random.default_rng([seed, int(rho * 100), per_doc, groups, int(hit * 100)])
        boot = shown = used = 0
        for r in range(reps):
            m, codes = simulate(rng, "binary", rho, groups, per_doc, systems=1, hit=hit)
            est = cluster_bootstrap_many(m, codes, rounds, seed + r)[0]
            boot += est.low <= hit <= est.high
            low, high, which = shown_interval(est)
            shown += low <= hit <= high
            used += which == "exact"
        worst = min(worst, shown / reps)
        print(
            f"{hit:5.2f} {rho:4.1f} {per_doc:5d} {groups:3d} | {boot / reps:9.3f} "
            f"{shown / reps:6.3f} | {used / reps:.2f}",
            flush=True,
        )
    print(f"lowest coverage of the shown interval: {worst:.3f}", flush=True)


def wilson(k: int, n: int) -> tuple[float, float]:
    """The 95% Wilson interval of a share k of n (the Monte Carlo error of a rate)."""
    z = 1.96
    p = k / n
    mid = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return mid - half, mid + half


def auto_bench(reps: int, rounds: int, seed: int, only: str, shift: float) -> None:
    """``--auto``: the default rule against its alternatives, every cell with at least
    30 documents (4 systems, rho 0 to 0.5)."""
    if only:
        rho, per_doc, kind, groups = only.split(":")
        cells = [(float(rho), int(per_doc), kind, int(groups))]
    else:
        grid = (AUTO_RHOS, AUTO_PER_DOC, KINDS, AUTO_GROUPS)
        cells = [(r, p, k, g) for r in grid[0] for p in grid[1] for k in grid[2] for g in grid[3]]
    print(
        f"{len(cells)} cells, {reps} test sets a cell, {rounds} rounds, seed {seed}; "
        f"{AUTO_SYSTEMS} systems with equal true means, max-T over their 6 pairs; auto "
        f"resamples documents from {AUTO_CLUSTERS} on; power: s0's latent shifted by "
        f"{shift:g} / sqrt(questions)",
        flush=True,
    )
    print(
        f"{'rho':>4} {'q/doc':>5} {'kind':>6} {'G':>3} | false better %: {'quest':>5} "
        f"{'clust':>5} {'pre':>5} {'auto':>5} [auto 95% MC] | power %: {'quest':>5} "
        f"{'clust':>5} {'pre':>5} {'auto':>5} lost | on: pre auto"
    )
    start = time.perf_counter()
    worst, lost_most = 0.0, 0.0
    for rho, per_doc, kind, groups in cells:
        fb, wins, used = auto_cell(rho, per_doc, kind, groups, reps, rounds, seed, shift)
        lo, hi = wilson(fb["auto"], reps)
        worst = max(worst, fb["auto"] / reps)
        power = " " * 29
        if wins is not None:
            lost = 1.0 - wins["auto"] / max(1, wins["question"])
            lost_most = max(lost_most, lost)
            power = " ".join(f"{100 * wins[p] / reps:5.1f}" for p in wins) + f" {100 * lost:4.1f}"
        rates = " ".join(f"{100 * fb[p] / reps:5.1f}" for p in fb)
        print(
            f"{rho:4.1f} {per_doc:5d} {kind:>6} {groups:3d} | false better %: {rates} "
            f"[{100 * lo:4.1f}, {100 * hi:4.1f}] | power %: {power} | on: "
            f"{used['pretest'] / reps:.2f} {used['auto'] / reps:.2f}",
            flush=True,
        )
    print(
        f"auto: highest false 'better' {100 * worst:.1f}%, most power lost at rho 0 "
        f"{100 * lost_most:.1f}% (relative to flipping questions); "
        f"{time.perf_counter() - start:.0f} s",
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
    ap.add_argument("--auto", action="store_true", help="the default rule, 4 systems, G >= 30")
    ap.add_argument("--edges", action="store_true", help="coverage near 100%% under clustering")
    ap.add_argument(
        "--shift", type=float, default=AUTO_SHIFT, help="--auto: the better system's latent shift"
    )
    args = ap.parse_args()
    if args.edges:
        edge_coverage(args.reps or 400, args.rounds, args.seed)
        return
    if args.auto:
        auto_bench(args.reps or 400, args.rounds, args.seed, args.only, args.shift)
        return
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

"""Time scoring TREC files end to end: ragmeter vs pytrec_eval vs ranx, in one run.

Each tool reads the same synthetic qrels and run files from a temporary folder
and computes MAP, nDCG@10, P@10, recall@100 and MRR for every query:

- ragmeter: ``read_qrels`` + ``read_run`` + ``evaluate_run`` (trec_eval
  compatibility mode), then separately 95% bootstrap intervals on the five
  means (what ragmeter adds; ``--rounds``, default 1000);
- pytrec_eval: ``parse_qrel`` + ``parse_run`` + ``RelevanceEvaluator.evaluate``;
- ranx: ``Qrels.from_file`` + ``Run.from_file`` + ``evaluate`` (numba compiled
  on a tiny input first, so compilation is not timed).

Every tool runs in its own process, so its peak memory (max RSS) is its own.
The per-query values of ragmeter and pytrec_eval are checked to agree (1e-9).

Sizes: queries x documents per query, with 10 judged documents per query
(grades 0-3, 6 of them retrieved) and BM25-like scores with 4 decimals (ties
happen). Default: 10k x 100, 10k x 1,000 and 100k x 100; ``--full`` adds
100k x 1,000 (100M run lines, about 4 GB; needs ~30 GB of memory for the
others); ``--quick`` runs only 10k x 100.

Run: python bench/trec.py [--quick | --full] [--rounds 1000]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

MEASURES_TREC = ["map", "ndcg_cut_10", "P_10", "recall_100", "recip_rank"]
MEASURES_OURS = ["map", "ndcg@10", "precision@10", "recall@100", "mrr"]
MEASURES_RANX = ["map", "ndcg@10", "precision@10", "recall@100", "mrr"]


def write_files(folder: Path, n_queries: int, depth: int, seed: int = 0) -> tuple[Path, Path]:
    """Synthetic qrels and a run, written with numpy (no Python loop per line)."""
    rng = np.random.default_rng(seed)
    n_docs = max(1_000_000, n_queries * 20)
    q = np.repeat(np.arange(n_queries), depth)
    docs = rng.integers(0, n_docs, size=q.size)
    # make each query's documents distinct: offset by rank within the query
    docs = (docs // depth) * depth + np.tile(np.arange(depth), n_queries)
    # written in rank order, as run files are: scores descending within a query
    # (4 decimals, so some tie)
    scores = np.round(
        30.0 - np.tile(np.arange(depth), n_queries) * (25.0 / depth) + rng.random(q.size), 4
    )
    scores = -np.sort(-scores.reshape(n_queries, depth), axis=1).reshape(-1)
    ranks = np.tile(np.arange(1, depth + 1), n_queries)
    run = folder / "run.txt"
    with run.open("w") as fh:
        step = 2_000_000
        for lo in range(0, q.size, step):
            hi = min(lo + step, q.size)
            lines = np.char.add(
                np.char.add(
                    np.char.add(q[lo:hi].astype("U"), " Q0 D"),
                    np.char.add(docs[lo:hi].astype("U"), " "),
                ),
                np.char.add(
                    np.char.add(ranks[lo:hi].astype("U"), " "),
                    np.char.add(np.char.mod("%.4f", scores[lo:hi]), " bm25\n"),
                ),
            )
            fh.write("".join(lines.tolist()))
    # 10 judged per query: 6 retrieved (at random ranks), 4 not
    judged_q = np.repeat(np.arange(n_queries), 10)
    bucket = depth // 6  # one pick per sixth of the ranking: 6 distinct documents
    pick = rng.integers(0, bucket, size=(n_queries, 6)) + np.arange(6) * bucket
    retrieved = docs.reshape(n_queries, depth)[np.arange(n_queries)[:, None], pick]
    unretrieved = n_docs + np.arange(n_queries * 4).reshape(n_queries, 4)
    judged = np.concatenate([retrieved, unretrieved], axis=1).reshape(-1)
    grades = rng.choice([0, 1, 2, 3], size=judged.size, p=[0.4, 0.3, 0.2, 0.1])
    qrels = folder / "qrels.txt"
    with qrels.open("w") as fh:
        fh.write(
            "".join(
                f"{a} 0 D{b} {c}\n"
                for a, b, c in zip(judged_q.tolist(), judged.tolist(), grades.tolist(), strict=True)
            )
        )
    return qrels, run


def _peak_mb() -> float:
    """This process's peak resident memory (VmHWM; ru_maxrss would carry the
    parent's peak across exec)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def worker(tool: str, qrels: str, run: str, rounds: int, out: str) -> None:
    result: dict = {"tool": tool}
    if tool == "ragmeter":
        from ragmeter import stats
        from ragmeter.scoring.trec import evaluate_run, read_qrels, read_run

        t = time.perf_counter()
        q = read_qrels(qrels)
        r = read_run(run, ranks=False)
        ev = evaluate_run(r, q, MEASURES_OURS, trec_eval_compat=True)
        result["seconds"] = time.perf_counter() - t
        t = time.perf_counter()
        matrix = np.vstack([ev.scores[m] for m in MEASURES_TREC])
        stats.bootstrap_many(matrix, rounds=rounds, seed=1)
        result["interval_seconds"] = time.perf_counter() - t
        result["means"] = {m: float(ev.scores[m].mean()) for m in MEASURES_TREC}
        np.save(out + ".npy", matrix)
        result["queries"] = ev.query_ids
    elif tool == "pytrec_eval":
        import pytrec_eval

        t = time.perf_counter()
        with open(qrels) as fh:
            qr = pytrec_eval.parse_qrel(fh)
        with open(run) as fh:
            rn = pytrec_eval.parse_run(fh)
        res = pytrec_eval.RelevanceEvaluator(
            qr, {"map", "ndcg_cut.10", "P.10", "recall.100", "recip_rank"}
        ).evaluate(rn)
        result["seconds"] = time.perf_counter() - t
        result["means"] = {m: float(np.mean([v[m] for v in res.values()])) for m in MEASURES_TREC}
        result["per_query"] = {qid: [v[m] for m in MEASURES_TREC] for qid, v in res.items()}
    elif tool == "ranx":
        import warnings

        warnings.filterwarnings("ignore")
        import ranx

        tiny_q = ranx.Qrels.from_dict({"q": {"d": 1}})
        tiny_r = ranx.Run.from_dict({"q": {"d": 1.0, "e": 0.5}})
        ranx.evaluate(tiny_q, tiny_r, MEASURES_RANX)  # compile numba first
        t = time.perf_counter()
        qr = ranx.Qrels.from_file(qrels, kind="trec")
        rn = ranx.Run.from_file(run, kind="trec")
        means = ranx.evaluate(qr, rn, MEASURES_RANX)
        result["seconds"] = time.perf_counter() - t
        result["means"] = {
            t_: float(means[m]) for t_, m in zip(MEASURES_TREC, MEASURES_RANX, strict=True)
        }
    result["peak_mb"] = _peak_mb()
    Path(out).write_text(json.dumps(result))


def run_tool(tool: str, qrels: Path, run: Path, rounds: int, folder: Path) -> dict | None:
    out = folder / f"{tool}.json"
    proc = subprocess.run(
        [sys.executable, __file__, "--worker", tool, str(qrels), str(run), str(rounds), str(out)],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        print(f"  {tool}: failed ({proc.returncode}): {proc.stderr.strip().splitlines()[-1:]}")
        return None
    return json.loads(out.read_text())


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="only 10k queries x 100 documents")
    p.add_argument("--full", action="store_true", help="add 100k x 1,000 (100M lines)")
    p.add_argument("--rounds", type=int, default=1000, help="bootstrap rounds for the intervals")
    p.add_argument("--worker", nargs=5, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        tool, qrels, run, rounds, out = args.worker
        worker(tool, qrels, run, int(rounds), out)
        return 0
    sizes = [(10_000, 100)]
    if not args.quick:
        sizes += [(10_000, 1_000), (100_000, 100)]
        if args.full:
            sizes.append((100_000, 1_000))
    print(f"cores: {os.cpu_count()}; measures: {', '.join(MEASURES_TREC)}")
    print(
        f"{'queries x docs':>16} {'ragmeter s':>10} {'+CI s':>7} {'pytrec s':>9} {'ranx s':>8}"
        f" {'vs pytrec':>9} {'vs ranx':>8} {'rm MB':>7} {'pytrec MB':>9} {'ranx MB':>8}"
    )
    for n_q, depth in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            qrels, run = write_files(folder, n_q, depth)
            res = {
                t: run_tool(t, qrels, run, args.rounds, folder)
                for t in ("ragmeter", "pytrec_eval", "ranx")
            }
            ours, pt, rx = res["ragmeter"], res["pytrec_eval"], res["ranx"]
            if ours and pt:
                matrix = np.load(folder / "ragmeter.json.npy")
                theirs = np.array([pt["per_query"][q] for q in ours["queries"]]).T
                agree = np.allclose(matrix, theirs, atol=1e-9, rtol=0)
            else:
                agree = None

            def sec(r: dict | None, key: str = "seconds") -> str:
                return f"{r[key]:.2f}" if r else "-"

            def ratio(r: dict | None, ours: dict | None = ours) -> str:
                return f"{r['seconds'] / ours['seconds']:.1f}x" if r and ours else "-"

            def mb(r: dict | None) -> str:
                return f"{r['peak_mb']:.0f}" if r else "-"

            print(
                f"{f'{n_q:,} x {depth:,}':>16} {sec(ours):>10} {sec(ours, 'interval_seconds'):>7}"
                f" {sec(pt):>9} {sec(rx):>8} {ratio(pt):>9} {ratio(rx):>8}"
                f" {mb(ours):>7} {mb(pt):>9} {mb(rx):>8}"
            )
            if agree is not None:
                print(f"{'':>16} per-query values equal pytrec_eval (1e-9): {agree}")
            if ours and rx:
                gap = max(abs(ours["means"][m] - rx["means"][m]) for m in MEASURES_TREC)
                print(f"{'':>16} largest gap to ranx's means: {gap:.2e} (ties ordered its own way)")
    print(
        f"ratio = other tool's seconds / ragmeter's (read files + score); +CI = ragmeter's "
        f"95% bootstrap intervals on the five means ({args.rounds} rounds), not in the ratio."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

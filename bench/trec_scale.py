"""Time ``ragmeter evaluate`` on many runs against pytrec_eval and ranx, side by side.

Writes one qrels file and N run files of a given size with ``bench/trec.py``'s generator
(run i from seed i; the qrels are every seed's judgments, each (query, document) once),
then times, each tool in its own process:

- ``ragmeter evaluate`` end to end (read, score, intervals on every measure and run,
  paired comparisons, sample sizes, the results directory and report; ``--rounds``,
  default 1000), with ``--workers 1`` and with ``--workers W``, and with one thread
  (``RAGMETER_THREADS=1``: the blocks of a run and the resampled rounds not shared among
  threads);
- ragmeter's scoring alone (``read_qrels``, then ``read_run`` + ``evaluate_run`` per run,
  through ``score_runs``), in one process and with W workers;
- pytrec_eval: ``parse_qrel`` once, then ``parse_run`` + ``evaluate`` per run;
- ranx: ``Qrels.from_file`` once, then ``Run.from_file`` + ``evaluate`` per run (numba
  compiled on a tiny input first).

All compute MAP, nDCG@10, P@10, recall@100 and MRR in trec_eval's mode; ragmeter's
score cache is off (``RAGMETER_SCORE_CACHE=off``), so every repetition scores every run.
Peak memory is each process's own (VmHWM), and for ``--workers`` also the largest
worker's; it is shown beside the bound ``2 x the largest run file + the qrels``.

``--growth 3,10,30`` also runs ``ragmeter evaluate`` on the first 3, 10 and 30 runs and
prints how its time and peak grow with the runs: time per run, and the peak above the
smallest row's beside what the per-question scores of the added runs take (runs x
queries x measures x 8 bytes).

``--repeat 5`` runs the chosen rows that many times, in turn and in the reverse order
every other time (so neither tool always reads the files after the other), and prints
each row's median and the median of the ratios of the same repetition: the machine is
shared, so one run's seconds say little.

Run: python bench/trec_scale.py [--queries 10000] [--depth 100] [--runs 4] [--workers 2]
                                [--tools evaluate,pytrec_eval] [--growth 3,10,30]
                                [--repeat 1]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from trec import MEASURES_OURS, MEASURES_RANX, _peak_mb, write_files  # noqa: E402

TREC_NAMES = "map,ndcg_cut_10,P_10,recall_100,recip_rank"


def make_files(folder: Path, n_queries: int, depth: int, runs: int) -> tuple[Path, list[Path]]:
    """Qrels and ``runs`` run files in ``folder``, from ``bench/trec.py``'s generator."""
    seen: set[tuple[str, str]] = set()
    lines, paths = [], []
    for i in range(runs):
        sub = folder / f"seed{i}"
        sub.mkdir()
        qrels, run = write_files(sub, n_queries, depth, seed=i)
        for line in qrels.read_text().splitlines(keepends=True):
            q, _, doc, _ = line.split()
            if (q, doc) not in seen:
                seen.add((q, doc))
                lines.append(line)
        paths.append(run.rename(folder / f"run{i}.txt"))
        qrels.unlink()
        sub.rmdir()
    (folder / "qrels.txt").write_text("".join(lines))
    return folder / "qrels.txt", paths


def _files(args: argparse.Namespace, tmp: Path) -> tuple[Path, list[Path]]:
    """The qrels and run files: made in a temporary folder, or with ``--folder`` made there
    once (``--runs`` of them) and read again by later runs with as many or fewer."""
    if not args.folder:
        return make_files(tmp, args.queries, args.depth, args.runs)
    folder = Path(args.folder)
    runs = [folder / f"run{i}.txt" for i in range(args.runs)]
    if not all(path.exists() for path in [folder / "qrels.txt", *runs]):
        folder.mkdir(parents=True, exist_ok=True)
        if any(folder.iterdir()):
            raise SystemExit(f"{folder} holds other files: give an empty or a new --folder")
        return make_files(folder, args.queries, args.depth, args.runs)
    return folder / "qrels.txt", runs


def _children_peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def worker(tool: str, qrels: str, runs: list[str], rounds: int, workers: int) -> dict:
    t = time.perf_counter()
    if tool == "evaluate":
        from ragmeter.cli import main

        args = ["evaluate", "--qrels", qrels, *runs, "--trec-eval-compat", "--measures"]
        args += [TREC_NAMES, "--rounds", str(rounds), "--workers", str(workers)]
        args += ["--no-history", "-o", str(Path(qrels).parent / f"res{workers}")]
        sys.argv = ["ragmeter", *args]
        try:
            main()
        except SystemExit as exc:
            if exc.code:
                raise
    elif tool == "scoring":
        from ragmeter.engine import LocalEngine
        from ragmeter.runs.evaluate import Scoring, score_runs
        from ragmeter.scoring.metrics import Metric
        from ragmeter.scoring.trec import read_qrels

        how = Scoring(tuple(map(Metric.parse, MEASURES_OURS)), trec_eval_compat=True)
        score_runs(read_qrels(qrels), runs, how, LocalEngine(workers))
    elif tool == "pytrec_eval":
        import pytrec_eval

        with open(qrels) as fh:
            evaluator = pytrec_eval.RelevanceEvaluator(
                pytrec_eval.parse_qrel(fh),
                {"map", "ndcg_cut.10", "P.10", "recall.100", "recip_rank"},
            )
        for run in runs:
            with open(run) as fh:
                evaluator.evaluate(pytrec_eval.parse_run(fh))
    elif tool == "ranx":
        import warnings

        warnings.filterwarnings("ignore")
        import ranx

        tiny = ranx.Qrels.from_dict({"q": {"d": 1}}), ranx.Run.from_dict({"q": {"d": 1.0}})
        ranx.evaluate(*tiny, MEASURES_RANX)  # compile numba first, untimed
        t = time.perf_counter()
        q = ranx.Qrels.from_file(qrels, kind="trec")
        for run in runs:
            ranx.evaluate(q, ranx.Run.from_file(run, kind="trec"), MEASURES_RANX)
    return {
        "seconds": time.perf_counter() - t,
        "peak_mb": _peak_mb(),
        "worker_peak_mb": _children_peak_mb(),
    }


def run_tool(
    tool: str, qrels: Path, runs: list[Path], rounds: int, workers: int, env: dict
) -> dict | None:
    cmd = [sys.executable, __file__, "--worker", tool, str(qrels), str(rounds), str(workers)]
    proc = subprocess.run(
        [*cmd, *map(str, runs)], capture_output=True, text=True, env={**os.environ, **env}
    )
    if proc.returncode != 0:
        print(f"  {tool}: failed ({proc.returncode}): {proc.stderr.strip().splitlines()[-1:]}")
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> int:
    # every tool scores every run each time: ragmeter's score cache would make a repetition
    # read the runs it scored before (children inherit this)
    os.environ["RAGMETER_SCORE_CACHE"] = "off"
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--queries", type=int, default=10_000)
    p.add_argument("--depth", type=int, default=100, help="documents per query in each run")
    p.add_argument("--runs", type=int, default=4)
    p.add_argument("--workers", type=int, default=2, help="workers for the parallel evaluate")
    p.add_argument("--rounds", type=int, default=1000, help="bootstrap rounds")
    p.add_argument("--folder", help="keep the files here and read them again next time")
    p.add_argument(
        "--tools", help="only these rows (labels or tools, comma-separated; none: no row)"
    )
    p.add_argument("--growth", help="run counts to time evaluate on, e.g. 3,10,30 (<= --runs)")
    p.add_argument("--repeat", type=int, default=1, help="times each row runs (medians)")
    p.add_argument("--worker", nargs="+", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        tool, qrels, rounds, workers, *runs = args.worker
        result = worker(tool, qrels, runs, int(rounds), int(workers))
        print(json.dumps(result))
        return 0
    print(
        f"cores: {os.cpu_count()}; {args.runs} runs x {args.queries:,} queries x {args.depth} "
        f"documents; measures {TREC_NAMES}; {args.rounds} rounds"
    )
    with tempfile.TemporaryDirectory() as tmp:
        qrels, runs = _files(args, Path(tmp))
        rows = [
            ("ragmeter evaluate --workers 1", "evaluate", 1, {}),
            ("ragmeter evaluate (1 thread)", "evaluate", 1, {"RAGMETER_THREADS": "1"}),
            (f"ragmeter evaluate --workers {args.workers}", "evaluate", args.workers, {}),
            ("ragmeter scoring only", "scoring", 1, {}),
            (f"ragmeter scoring ({args.workers} workers)", "scoring", args.workers, {}),
            ("pytrec_eval", "pytrec_eval", 1, {}),
            ("ranx", "ranx", 1, {}),
        ]
        wanted = set(args.tools.split(",")) if args.tools else None
        largest = max(path.stat().st_size for path in runs) / 2**20
        bound = 2 * largest + qrels.stat().st_size / 2**20
        chosen = [r for r in rows if wanted is None or r[0] in wanted or r[1] in wanted]
        every: dict[str, list[dict]] = {r[0]: [] for r in chosen}
        for rep in range(args.repeat):
            for label, tool, w, env in chosen if rep % 2 == 0 else chosen[::-1]:
                result = run_tool(tool, qrels, runs, args.rounds, w, env)
                if result is not None:
                    every[label].append(result)
        found = {label: _median_run(every.get(label, [])) for label, *_ in rows}
        counts = sorted({int(n) for n in args.growth.split(",")}) if args.growth else []
        growth = {n: run_tool("evaluate", qrels, runs[:n], args.rounds, 1, {}) for n in counts}
    print(f"largest run file {largest:.0f} MB; bound 2 x run + qrels = {bound:.0f} MB")
    print(f"{'':<32} {'seconds':>8} {'peak MB':>8} {'worker MB':>9} {'in bound':>8}")
    for label, res in found.items():
        if res is not None:
            inside = max(res["peak_mb"], res["worker_peak_mb"]) <= bound
            print(
                f"{label:<32} {res['seconds']:8.2f} {res['peak_mb']:8.0f} "
                f"{res['worker_peak_mb']:9.0f} {'yes' if inside else 'no':>8}"
            )
    pairs = [
        ("pytrec_eval", "ragmeter scoring only"),
        ("ranx", "ragmeter scoring only"),
        ("pytrec_eval", "ragmeter evaluate --workers 1"),
        ("ragmeter evaluate (1 thread)", "ragmeter evaluate --workers 1"),
        ("ragmeter evaluate --workers 1", f"ragmeter evaluate --workers {args.workers}"),
        ("ragmeter scoring only", f"ragmeter scoring ({args.workers} workers)"),
    ]
    for slow, fast in pairs:
        a, b = every.get(slow, []), every.get(fast, [])
        if a and b and len(a) == len(b):
            ratios = [x["seconds"] / y["seconds"] for x, y in zip(a, b, strict=True)]
            each = f" (each: {', '.join(f'{r:.2f}' for r in ratios)})" if len(ratios) > 1 else ""
            print(f"{slow} / {fast}: {statistics.median(ratios):.2f}x{each}")
    _print_growth(growth, args.queries)
    return 0


def _median_run(results: list[dict]) -> dict | None:
    """A row's figures over its repetitions: the median seconds, the largest peaks."""
    if not results:
        return None
    return {
        "seconds": statistics.median(r["seconds"] for r in results),
        "peak_mb": max(r["peak_mb"] for r in results),
        "worker_peak_mb": max(r["worker_peak_mb"] for r in results),
    }


def _print_growth(growth: dict[int, dict | None], queries: int) -> None:
    """Time and peak of ``evaluate`` against the number of runs (``--growth``)."""
    done = {n: r for n, r in growth.items() if r is not None}
    if not done:
        return
    first = min(done)
    base = done[first]
    print(
        f"\n{'evaluate on':<14} {'seconds':>8} {'s per run':>9} {'peak MB':>8} "
        f"{'peak growth':>11} {'scores of the added runs':>25}"
    )
    for n, res in done.items():
        scores = (n - first) * queries * len(TREC_NAMES.split(",")) * 8 / 2**20
        print(
            f"{n:>3} runs{'':<6} {res['seconds']:8.2f} {res['seconds'] / n:9.2f} "
            f"{res['peak_mb']:8.0f} {res['peak_mb'] - base['peak_mb']:+11.0f} {scores:24.1f}"
        )
    last = max(done)
    if last > first:
        per = (done[last]["seconds"] / last) / (base["seconds"] / first)
        print(f"time per run, {last} runs / {first} runs: {per:.2f}x (at most 1: linear or better)")


if __name__ == "__main__":
    raise SystemExit(main())

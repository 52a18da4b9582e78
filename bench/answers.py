"""How fast do answers and grades run against a local server, and what does the cache save?

    python bench/answers.py [--questions 5] [--k 3] [--concurrency 1,2,4] [--repeat 2]

Starts llama-cpp-python's OpenAI-compatible server on 127.0.0.1 with the
gemma-3 270M GGUF (two threads, as the tests do), builds a small results
directory from the shipped blog example (BM25 over 60-word sentence chunks),
then for each concurrency, with an empty reply cache each pass:

* answers/s: ``answer_questions`` with the server as the reader;
* grades/s: ``grade_answers`` with the server as the judge.

The levels are run there and back (1, 2, 4, 4, 2, 1 with ``--repeat 2``) and
each keeps its fastest pass, so a burst of load from other programs on a shared
machine does not land on one level only. Rates are shown with their ratio to
concurrency 1. Last, the whole answer + grade pass is run again on a warm cache
(no calls) and its time compared to the uncached pass at concurrency 1.
llama-cpp-python's server handles one completion at a time, so concurrency can
only overlap HTTP and bookkeeping with generation; see docs/answers.md. Skips
with a message when llama-cpp-python, its server extra or the model is missing.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "src" / "ragmeter" / "examples" / "blog"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", type=int, default=5)
    ap.add_argument("--k", type=int, default=3, help="passages given to the reader")
    ap.add_argument("--concurrency", default="1,2,4")
    ap.add_argument("--reader-tokens", type=int, default=48)
    ap.add_argument("--judge-tokens", type=int, default=48)
    ap.add_argument("--repeat", type=int, default=2, help="passes per concurrency level")
    args = ap.parse_args()
    levels = [int(c) for c in args.concurrency.split(",")]

    sys.path.insert(0, str(ROOT / "tests"))
    from llm_fixtures import gguf_model_path, llama_server_missing, start_llama_server

    reason = llama_server_missing()
    if reason:
        print(f"skipped: {reason}")
        return 0

    from ragmeter.answers import answer_questions, grade_answers
    from ragmeter.inputs.config import Config
    from ragmeter.inputs.corpus import load_corpus
    from ragmeter.inputs.testset import TestSet, load_testset
    from ragmeter.llm import OpenAIBackend
    from ragmeter.runs.pipeline import run_search
    from ragmeter.runs.results import save_results

    work = Path(tempfile.mkdtemp(prefix="ragmeter-bench-answers-"))
    docs = load_corpus(EXAMPLE / "posts")
    ts = load_testset(EXAMPLE / "questions.jsonl", docs)
    cfg = Config(
        strategies=("sentence-60",),
        custom_strategies=({"name": "sentence-60", "kind": "sentence", "size": 60},),
        ks=(1, 3, 5),
        rounds=200,
    )
    base = save_results(
        run_search(cfg, docs, TestSet(ts.questions[: args.questions])), work / "base"
    )
    server = start_llama_server(gguf_model_path(), work)
    backend = OpenAIBackend("gemma3-270m", base_url=server.base_url)
    try:
        # one call to warm the server up, outside every timing
        answer_questions(base, backend, k=1, limit=1, max_tokens=4, cache=work / "warm.sqlite")
        n = args.questions
        # levels there and back (1, 2, 4, 4, 2, 1): a burst of load from other programs
        # hits both ends; each level keeps its fastest pass
        order = (levels + levels[::-1]) * (args.repeat // 2) + levels[: args.repeat % 2]
        best: dict[int, list[float]] = {}
        first_run = None
        loads = [os.getloadavg()[0]]
        for i, c in enumerate(order):
            path = work / f"pass{i}-c{c}"
            shutil.copytree(base, path, ignore=shutil.ignore_patterns("answers"))
            t0 = time.perf_counter()
            run = answer_questions(
                path, backend, k=args.k, concurrency=c, max_tokens=args.reader_tokens
            )
            t1 = time.perf_counter()
            graded = grade_answers(path, [backend], concurrency=c, max_tokens=args.judge_tokens)
            t2 = time.perf_counter()
            assert run.stats.calls == n and graded.judges[0].stats.calls == n
            times = best.setdefault(c, [float("inf"), float("inf")])
            times[0], times[1] = min(times[0], t1 - t0), min(times[1], t2 - t1)
            if first_run is None:
                first_run = (path, run, graded.judges[0])
            loads.append(os.getloadavg()[0])

        print(
            f"{n} questions, top {args.k} passages, gemma-3 270M behind llama-cpp-python's "
            f"server (2 threads); fastest of {args.repeat} passes per level; "
            f"1-minute load average {min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} cores\n"
        )
        print(f"{'concurrency':>11}  {'answers/s':>9}  {'ratio':>5}  {'grades/s':>8}  {'ratio':>5}")
        a1, g1 = best[levels[0]]
        for c in levels:
            ta, tg = best[c]
            print(f"{c:>11}  {n / ta:>9.2f}  {a1 / ta:>5.2f}  {n / tg:>8.2f}  {g1 / tg:>5.2f}")
        path, run, judge = first_run
        print(
            f"\nper call: reader {run.stats.tokens_in / n:.0f} tokens in, "
            f"{run.stats.tokens_out / n:.0f} out; judge {judge.stats.tokens_in / n:.0f} in, "
            f"{judge.stats.tokens_out / n:.0f} out; grades {judge.counts}"
        )

        t0 = time.perf_counter()
        again = answer_questions(path, backend, k=args.k, max_tokens=args.reader_tokens)
        regraded = grade_answers(path, [backend], max_tokens=args.judge_tokens)
        cached = time.perf_counter() - t0
        assert again.stats.calls == 0 and regraded.judges[0].stats.calls == 0
        uncached = a1 + g1
        print(
            f"\nanswer + grade at concurrency {levels[0]}: {uncached:.2f} s uncached; "
            f"fully cached rerun {cached:.3f} s (0 calls) = {cached / uncached:.4f} of it "
            f"({uncached / cached:.0f}x faster)"
        )
    finally:
        backend.close()
        server.stop()
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Time the whole search route on Chroma's 472 questions: every strategy, BM25.

Prints seconds per stage (load, chunk, index, rank, grade, score, intervals),
and, in the same run, two stage-level comparisons against named alternatives:
- rank: ragmeter's stable full ranking vs bm25s's own ``retrieve`` top-k;
- score: ragmeter's vectorised metrics vs pytrec_eval on the same graded runs.

Run: python bench/search.py   (needs ../shared/data/chroma; target: under 5 s in all on an
idle 2-core machine, no stage over 40%)
"""

from __future__ import annotations

import os

# Cold timings: a warm segmentation cache would skip the sentence stage.
os.environ.setdefault("RAGMETER_SEGMENT_CACHE", "off")

import sys
import time
from pathlib import Path

import numpy as np

from ragmeter import stats
from ragmeter.inputs.config import DEFAULT_STRATEGIES, Config
from ragmeter.inputs.corpus import load_corpus
from ragmeter.inputs.testset import load_testset
from ragmeter.runs.pipeline import run_search

CHROMA = Path(__file__).resolve().parents[2] / "shared" / "data" / "chroma"


def main() -> int:
    if not CHROMA.is_dir():
        print(f"skipped: {CHROMA} is not present")
        return 0
    t0 = time.perf_counter()
    docs = load_corpus(CHROMA / "corpora")
    testset = load_testset(CHROMA / "questions_df.csv", docs)
    load_s = time.perf_counter() - t0
    cfg = Config(strategies=DEFAULT_STRATEGIES, ks=(1, 3, 5), rounds=10_000)
    run = run_search(cfg, docs, testset)
    t = time.perf_counter()
    systems = [s.name for s in run.systems]
    for m in run.metric_names:
        stats.bootstrap_many(run.matrix(m), rounds=cfg.rounds, seed=cfg.seed)
    stats.compare_all(run.matrix("recall@5"), systems, rounds=cfg.rounds, seed=cfg.seed)
    intervals_s = time.perf_counter() - t
    stages = {
        "load": load_s,
        **{k: v for k, v in run.timings.items() if k != "load"},
        "intervals": intervals_s,
    }
    total = sum(stages.values())
    print(
        f"{len(testset)} questions, {len(docs)} documents, {len(systems)} strategies, BM25, "
        f"{len(run.metric_names)} metrics x {cfg.rounds} bootstrap rounds\n"
    )
    print("| stage | seconds | share |\n|---|---:|---:|")
    for name, sec in stages.items():
        print(f"| {name} | {sec:.3f} | {sec / total:.0%} |")
    print(f"| **total** | **{total:.3f}** | |  (target < 5 s idle, no stage over 40%)\n")
    compare_rank(docs, testset)
    compare_score(run)
    return 0


def compare_rank(docs, testset) -> None:
    import bm25s

    from ragmeter.chunking.strategies import chunk_corpus, make_strategy
    from ragmeter.retrieval.bm25 import BM25Retriever

    chunks = chunk_corpus(docs, make_strategy("recursive")).chunks
    texts = [c.text for c in chunks]
    questions = [q.text for q in testset.questions]
    ours = BM25Retriever()
    ours.index(texts)
    t = time.perf_counter()
    ranking = ours.rank(questions, 10)
    ours_s = time.perf_counter() - t
    model = bm25s.BM25()
    model.index(bm25s.tokenize(texts, stopwords="en", show_progress=False), show_progress=False)
    qtok = bm25s.tokenize(questions, stopwords="en", show_progress=False, return_ids=False)
    t = time.perf_counter()
    docs_, _ = model.retrieve(qtok, k=10, show_progress=False, n_threads=1)
    theirs_s = time.perf_counter() - t
    same = np.mean(ranking.ids[:, 0] == docs_[:, 0])
    print(
        f"rank (recursive, {len(texts)} chunks): ragmeter stable top-10 {ours_s:.3f} s, "
        f"bm25s.retrieve {theirs_s:.3f} s, ratio {ours_s / theirs_s:.2f}x "
        f"(same top-1 for {same:.1%} of questions)"
    )


def compare_score(run) -> None:
    import pytrec_eval

    from ragmeter.scoring import metrics

    system = run.systems[4]
    n = len(run.questions)
    grades = np.zeros((n, 10), dtype=np.int64)
    for q, row in enumerate(system.items):
        grades[q, : len(row)] = [it.grade for it in row]
    reps = 20
    t = time.perf_counter()
    for _ in range(reps):
        metrics.score_questions(grades, None, ks=(1, 3, 5, 10))
    ours_s = (time.perf_counter() - t) / reps
    qrels = {
        str(q): {f"d{r}": int(2**g - 1) for r, g in enumerate(grades[q]) if g > 0} for q in range(n)
    }
    run_ = {str(q): {f"d{r}": float(10 - r) for r in range(10)} for q in range(n)}
    evaluator = pytrec_eval.RelevanceEvaluator(
        qrels,
        {"ndcg_cut.1,3,5,10", "P.1,3,5,10", "recip_rank", "success.1,3,5,10"},
        relevance_level=3,
    )
    t = time.perf_counter()
    for _ in range(reps):
        evaluator.evaluate(run_)
    theirs_s = (time.perf_counter() - t) / reps
    print(
        f"score ({system.name}, {n} questions, 4 cutoffs): ragmeter {ours_s * 1e3:.2f} ms, "
        f"pytrec_eval {theirs_s * 1e3:.2f} ms, ratio {theirs_s / ours_s:.1f}x faster"
    )


if __name__ == "__main__":
    sys.exit(main())

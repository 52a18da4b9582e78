"""A fast encoder beside MiniLM on Chroma's corpora: quality and encoding throughput.

Runs strategies recursive and sentence with five retrievers in one search:

- ``bm25``: the lexical baseline, for scale;
- ``minilm``: kind ``dense``, all-MiniLM-L6-v2 (the default dense model);
- ``static``: kind ``static``, the same MiniLM distilled by model2vec into a table of
  256-dimensional token vectors (distilled once into the static cache if absent);
- ``bm25-minilm``, ``bm25-static``: reciprocal rank fusion of BM25 with each.

It prints recall@5 and nDCG@10 with 95% bootstrap intervals (seed and rounds shown), the
paired differences (static against MiniLM and BM25, the two hybrids against each other
and bm25-static against BM25) per strategy, and the encoding
throughput of both encoders measured in the same run on the same chunk texts (no
embedding cache, models loaded beforehand; MiniLM on a random sample of ``--sample``
chunks because it is slow on a CPU, the static model on that sample and on every chunk of
both strategies), with their ratio.

The search itself goes through the embedding cache (``$RAGMETER_CACHE``), so a second run
encodes nothing; the throughput timing never uses it.

Run: python bench/static_encoder.py [--questions N] [--sample 500] [--dims 256]
(needs ../shared/data/chroma and the dense and static extras)
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import random
import sys
import time
from pathlib import Path

import numpy as np

from ragmeter import stats
from ragmeter.chunking.strategies import chunk_corpus
from ragmeter.inputs.config import Config
from ragmeter.inputs.corpus import load_corpus
from ragmeter.inputs.testset import load_testset
from ragmeter.runs.pipeline import run_search

CHROMA = Path(__file__).resolve().parents[2] / "shared" / "data" / "chroma"
STRATEGIES = ("recursive", "sentence")
METRICS = ("recall@5", "ndcg@10")


def rate(encode, texts: list[str], batch: int) -> float:
    """Texts per second of ``encode`` over ``texts`` in batches of ``batch``."""
    t = time.perf_counter()
    for start in range(0, len(texts), batch):
        vecs = encode(texts[start : start + batch])
        assert len(vecs) == len(texts[start : start + batch])
    return len(texts) / (time.perf_counter() - t)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", type=int, default=0, help="first N questions (0: all)")
    ap.add_argument("--sample", type=int, default=500, help="chunks MiniLM's speed is timed on")
    ap.add_argument("--dims", type=int, default=256, help="PCA dimensions of the static model")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    if not CHROMA.is_dir():
        print(f"skipped: {CHROMA} is not present")
        return 0
    for mod, extra in (("sentence_transformers", "dense"), ("model2vec", "static")):
        if importlib.util.find_spec(mod) is None:
            print(f"skipped: {mod} is not installed (pip install '.[{extra}]')")
            return 0

    from ragmeter.retrieval.dense import DenseRetriever
    from ragmeter.retrieval.static import StaticRetriever

    docs = load_corpus(CHROMA / "corpora")
    testset = load_testset(CHROMA / "questions_df.csv", docs)
    if args.questions:
        testset = dataclasses.replace(testset, questions=testset.questions[: args.questions])
    chars = sum(len(d.text) for d in docs)
    print(
        f"Chroma: {len(docs)} corpora, {chars / 1e6:.1f} M characters, {len(testset)} questions\n"
    )

    # -- throughput: both encoders on the same texts, no cache, models already loaded --------
    minilm = DenseRetriever(name="minilm", cache=False)
    static = StaticRetriever(name="static", cache=False, dims=args.dims)
    t = time.perf_counter()
    distilled_now = static.encoder.needs_distilling
    static.encoder.encode(["warm up"])
    static_load = time.perf_counter() - t
    t = time.perf_counter()
    minilm.encoder.encode(["warm up"])
    minilm_load = time.perf_counter() - t

    texts: list[str] = []
    for name in STRATEGIES:
        texts.extend(c.text for c in chunk_corpus(docs, name).chunks)
    distinct = list(dict.fromkeys(texts))
    sample = random.Random(args.seed).sample(distinct, min(args.sample, len(distinct)))
    r_minilm = rate(minilm.encoder.encode, sample, minilm.batch_size)
    r_static_sample = rate(static.encoder.encode, sample, static.batch_size)
    r_static_all = rate(static.encoder.encode, distinct, static.batch_size)
    words = np.mean([len(s.split()) for s in sample])
    print(
        f"Encoding throughput (chunks per second, one process, {len(sample)} random chunks of "
        f"both strategies, {words:.0f} words on average; seed {args.seed}):\n"
    )
    print("| encoder | chunks/s | vs MiniLM | model load |")
    print("|---|---:|---:|---:|")
    what = "distilled now" if distilled_now else "from the static cache"
    print(f"| MiniLM (all-MiniLM-L6-v2, batch 32) | {r_minilm:.1f} | 1.0x | {minilm_load:.1f} s |")
    print(
        f"| static (model2vec, {args.dims} dims, batch 256) | {r_static_sample:.0f} "
        f"| {r_static_sample / r_minilm:.0f}x | {static_load:.1f} s ({what}) |"
    )
    print(
        f"\nThe static model over all {len(distinct)} distinct chunks of both strategies: "
        f"{r_static_all:.0f} chunks/s ({len(distinct) / r_static_all:.1f} s; MiniLM at its rate "
        f"above would take {len(distinct) / r_minilm / 60:.0f} min).\n"
    )

    # -- quality: one search, both retrievers, the embedding cache on ------------------------
    cfg = Config(
        strategies=STRATEGIES,
        retrievers=(
            "bm25",
            {"name": "minilm", "kind": "dense"},
            {"name": "static", "kind": "static", "dims": args.dims},
            {"name": "bm25-minilm", "kind": "hybrid", "of": ["bm25", "dense"]},
            {
                "name": "bm25-static",
                "kind": "hybrid",
                "of": ["bm25", {"name": "static", "kind": "static", "dims": args.dims}],
            },
        ),
        ks=(5, 10),
        depth=10,
    )
    t = time.perf_counter()
    run = run_search(cfg, docs, testset)
    search_s = time.perf_counter() - t
    systems = {s.name: s for s in run.systems}
    print(
        f"Quality ({len(testset)} questions; 95% percentile bootstrap, seed {cfg.seed}, "
        f"{cfg.rounds} rounds; search {search_s:.0f} s through the embedding cache):\n"
    )
    print("| strategy | retriever | chunks | recall@5 | nDCG@10 |")
    print("|---|---|---:|---:|---:|")
    for strategy in STRATEGIES:
        for retriever in ("bm25", "minilm", "static", "bm25-minilm", "bm25-static"):
            s = systems[f"{strategy}/{retriever}"]
            cells = [
                stats.bootstrap(s.scores[m], rounds=cfg.rounds, seed=cfg.seed).format()
                for m in METRICS
            ]
            print(f"| {strategy} | {retriever} | {s.n_items} | {cells[0]} | {cells[1]} |")
    print()
    for strategy in STRATEGIES:
        pairs = [("static", "minilm"), ("static", "bm25"), ("bm25-static", "bm25-minilm")]
        pairs.append(("bm25-static", "bm25"))
        for one, other in pairs:
            a, b = systems[f"{strategy}/{one}"], systems[f"{strategy}/{other}"]
            for m in METRICS:
                c = stats.paired(
                    a.scores[m],
                    b.scores[m],
                    rounds=cfg.rounds,
                    seed=cfg.seed,
                    names=(one, other),
                )
                d = c.difference
                print(
                    f"{strategy}, {m}: {one} - {other} = {d.mean * 100:+.1f} points "
                    f"[{d.low * 100:+.1f}, {d.high * 100:+.1f}] (paired, seed {d.seed}, "
                    f"{d.rounds} rounds) -> {c.verdict}"
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""What each kept optimization earns: a stage timed with it and with the plain path.

Each comparison runs the stage both ways in turn in one process (A B A B ...), checks
that both give the same output, and prints the median times and the median of the
ratios plain / kept (the machine is shared: compare ratios, not seconds):

- ``bm25``: BM25 indexing of strategies sentence (blingfire) and fixed over Chroma's
  corpora plus copies with their letters rotated (every paragraph unique), x``--size``:
  ragmeter's (each document tokenized once, bm25s's matrix built with array operations)
  vs bm25s's own ``BM25().index(bm25s.tokenize(texts))``; same rankings and scores.
- ``qrels``: the join of run lines with judgments in ``evaluate_run`` (trec_eval mode) on
  bench/trec.py's synthetic files, ``--queries`` x ``--depth``: the hash table vs the exact
  sort-based join and duplicate check (the path taken when two judgments' hashes collide).
- ``bootstrap``: bench/search.py's intervals (every metric of the 7 strategies, 10,000
  rounds, and the comparisons of recall@5): exact columns summed as packed integers vs
  one column at a time; the draws kept between calls (as uint16) vs drawn again each
  call, or kept as drawn.

- ``sizes``: the sample sizes (n, 2n, 4n, 8n) of ``--runs`` runs' MAP-like and P_10-like
  scores over ``--queries`` questions, 10,000 rounds: every size from one pass over the
  largest size's draws (each draw made and gathered once) vs each size drawn alone.

Run: python bench/optimizations.py bm25|qrels|bootstrap|sizes [--size 16] [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
CHROMA = ROOT.parent / "shared" / "data" / "chroma"


def unique_corpus(copies: int):
    """Chroma's documents and ``copies - 1`` copies with letters rotated (no repeats)."""
    from ragmeter.inputs.corpus import Document, load_corpus

    docs = load_corpus(CHROMA / "corpora")
    lower, upper = "abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    out = list(docs)
    for c in range(1, copies):
        k = c % 25 + 1
        table = str.maketrans(lower + upper, lower[k:] + lower[:k] + upper[k:] + upper[:k])
        out += [Document(id=f"copy{c:03d}/{d.id}", text=d.text.translate(table)) for d in docs]
    return out


def paired(label: str, variants: dict, repeat: int) -> None:
    """Run each variant ``repeat`` times in turn; print medians and ratios to the first.
    A variant returns ``(seconds, output)``; outputs must be equal."""
    times: dict[str, list[float]] = {k: [] for k in variants}
    outs = {}
    for _ in range(repeat):
        for name, fn in variants.items():
            seconds, outs[name] = fn()
            times[name].append(seconds)
    first = next(iter(variants))
    same = all(outs[k] == outs[first] for k in variants)
    print(f"{label} (outputs identical: {same})")
    for name, ts in times.items():
        ratio = statistics.median(b / a for a, b in zip(times[first], ts, strict=True))
        print(f"  {name:<34} median {statistics.median(ts):7.3f} s   {ratio:.2f}x")


def timed(fn):
    def run():
        t = time.perf_counter()
        out = fn()
        return time.perf_counter() - t, out

    return run


def bench_bm25(args) -> None:
    import bm25s

    from ragmeter.chunking.strategies import chunk_corpus, make_strategy
    from ragmeter.inputs.testset import load_testset
    from ragmeter.retrieval.bm25 import BM25Retriever

    docs = unique_corpus(args.size)
    questions = [q.text for q in load_testset(CHROMA / "questions_df.csv", docs).questions]
    texts = {d.id: d.text for d in docs}
    chunkings = [
        chunk_corpus(docs, make_strategy("sentence", segmenter="blingfire")).chunks,
        chunk_corpus(docs, make_strategy("fixed")).chunks,
    ]
    print(f"x{args.size}: {sum(map(len, texts.values())) / 1e6:.1f} M characters")

    def ragmeter():
        r, spent, out = BM25Retriever(), 0.0, []
        for chunks in chunkings:
            t = time.perf_counter()
            r.index_chunks(chunks, texts)
            spent += time.perf_counter() - t
            out.append(r.rank(questions, 10))
        return spent, [(x.ids.tolist(), x.scores.tolist()) for x in out]

    def plain():
        r, spent, out = BM25Retriever(), 0.0, []
        for chunks in chunkings:
            t = time.perf_counter()
            model = bm25s.BM25()
            tokens = bm25s.tokenize([c.text for c in chunks], stopwords="en", show_progress=False)
            model.index(tokens, show_progress=False)
            spent += time.perf_counter() - t
            r._model, r._n = model, len(chunks)
            out.append(r.rank(questions, 10))
        return spent, [(x.ids.tolist(), x.scores.tolist()) for x in out]

    paired(
        "BM25 index, sentence + fixed",
        {"ragmeter": ragmeter, "bm25s BM25().index(tokenize())": plain},
        args.repeat,
    )


def bench_qrels(args) -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    from trec import write_files

    from ragmeter.scoring import trec as module
    from ragmeter.scoring.trec import evaluate_run, read_qrels, read_run

    with tempfile.TemporaryDirectory() as tmp:
        qp, rp = write_files(Path(tmp), args.queries, args.depth)
        qrels, run = read_qrels(qp), read_run(rp, ranks=False)
        measures = ["map", "ndcg@10", "precision@10", "recall@100", "mrr"]
        hashed = module._hash

        def evaluate(hash_fn):
            def run_():
                module._hash = hash_fn
                t = time.perf_counter()
                ev = evaluate_run(run, qrels, measures, trec_eval_compat=True)
                spent = time.perf_counter() - t
                module._hash = hashed
                return spent, {m: v.tobytes() for m, v in ev.scores.items()}

            return run_

        def no_hash(words):  # every key collides: the exact sort join, exact duplicate check
            return np.zeros(words.shape[0], dtype=np.uint64)

        paired(
            f"evaluate_run, {args.queries} x {args.depth} lines",
            {"hash table": evaluate(hashed), "exact sort join": evaluate(no_hash)},
            args.repeat,
        )


def bench_bootstrap(args) -> None:
    from ragmeter import stats
    from ragmeter.inputs.config import DEFAULT_STRATEGIES, Config
    from ragmeter.inputs.corpus import load_corpus
    from ragmeter.inputs.testset import load_testset
    from ragmeter.runs.pipeline import run_search
    from ragmeter.stats import bootstrap as sb
    from ragmeter.stats import draws as sd

    docs = load_corpus(CHROMA / "corpora")
    testset = load_testset(CHROMA / "questions_df.csv", docs)
    cfg = Config(strategies=DEFAULT_STRATEGIES, ks=(1, 3, 5), rounds=10_000)
    run = run_search(cfg, docs, testset)
    names = [s.name for s in run.systems]
    packed_sums = sb._block_sums

    def unpacked_sums(values, idx, words, other):
        out = np.empty((idx.shape[0], values.shape[1]))
        for j in [c for w in words for c in w.cols]:  # exact: any order, one column at a time
            out[:, j] = np.take(values[:, j], idx).sum(axis=1)
        if other:
            out[:, other] = sb._sequential_sums(np.ascontiguousarray(values[:, other]), idx)
        return out

    narrow = sd._DrawCache.put

    def wide(self, key, idx, n):  # kept as they are drawn (intp), within 4x the bytes
        idx = idx.copy()
        idx.setflags(write=False)
        self._items[key] = idx
        while sum(a.nbytes for a in self._items.values()) > 4 * self.max_bytes:
            del self._items[next(iter(self._items))]

    def intervals(sums, cache_bytes, put=narrow):
        def run_():
            sb._block_sums = sums
            sd._DrawCache.put = put
            sd._DRAWS = sd._DrawCache(cache_bytes)
            t = time.perf_counter()
            out = [stats.bootstrap_many(run.matrix(m), rounds=cfg.rounds) for m in run.metric_names]
            out.append(stats.compare_all(run.matrix("recall@5"), names, rounds=cfg.rounds))
            return time.perf_counter() - t, repr(out)

        return run_

    paired(
        "intervals of bench/search.py",
        {
            "packed sums, draws kept": intervals(packed_sums, sd._DRAW_CACHE_BYTES),
            "unpacked sums": intervals(unpacked_sums, sd._DRAW_CACHE_BYTES),
            "draws not kept": intervals(packed_sums, 0),
            "draws kept as drawn (intp)": intervals(packed_sums, sd._DRAW_CACHE_BYTES, wide),
        },
        args.repeat,
    )


def bench_sizes(args) -> None:
    from ragmeter import stats
    from ragmeter.stats import size

    rng = np.random.default_rng(5)
    shape = (args.runs, args.queries)
    matrices = {"MAP-like": rng.random(shape), "P_10-like": rng.integers(0, 11, shape) / 10}
    one_pass = size.tiled_sums_sizes

    def sizes(shared):
        def run_():
            size.tiled_sums_sizes = one_pass if shared else (lambda *a, **k: None)
            try:
                t = time.perf_counter()
                out = [stats.sample_size_many(m, rounds=10_000, seed=1) for m in matrices.values()]
                return time.perf_counter() - t, repr(out)
            finally:
                size.tiled_sums_sizes = one_pass

        return run_

    paired(
        f"sample sizes of {args.runs} runs x {args.queries:,} questions, MAP- and P_10-like",
        {"one pass for every size": sizes(True), "each size alone": sizes(False)},
        args.repeat,
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("what", choices=["bm25", "qrels", "bootstrap", "sizes"])
    ap.add_argument("--size", type=int, default=16, help="bm25: corpus copies")
    ap.add_argument("--queries", type=int, default=10_000, help="qrels, sizes: queries")
    ap.add_argument("--depth", type=int, default=100, help="qrels: lines per query")
    ap.add_argument("--runs", type=int, default=3, help="sizes: runs")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    if args.what in ("bm25", "bootstrap") and not CHROMA.is_dir():
        print(f"skipped: {CHROMA} is not present")
        return 0
    {"bm25": bench_bm25, "qrels": bench_qrels, "bootstrap": bench_bootstrap, "sizes": bench_sizes}[
        args.what
    ](args)
    return 0


if __name__ == "__main__":
    sys.exit(main())

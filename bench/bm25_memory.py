"""Peak memory of BM25's index build: the score matrix built all at once vs block-wise.

``retrieval/bm25.py`` builds bm25s's score matrix in blocks of whole chunks of about
``KEY_BLOCK`` tokens (:func:`build_scores`). The all-at-once build it replaced is kept here
(:func:`build_scores_at_once`): one 64-bit key per token of the whole index, one sort of
them all. On Chroma's corpora plus copies of unique text (``bench/scale.py``'s ``unique``
variant, x``--size``), strategies sentence (blingfire) and fixed, this runs both builds in
turn on the same token ids (A B A B ...), checks that they give the same arrays bit for bit,
and prints each one's peak of traced memory (numpy's arrays included) and time, and the
ratio all-at-once / block-wise. Then the same for a whole ``index_chunks`` (tokenizing the
documents and building the index) in a fresh retriever, each build in turn. Times are
measured under tracemalloc, which slows every Python allocation: tokenizing most, the
array operations of ``build_scores`` hardly.

Run: python bench/bm25_memory.py [--size 16] [--repeat 2]
"""

from __future__ import annotations

import argparse
import gc
import math
import statistics
import sys
import tempfile
import time
import tracemalloc
from functools import partial
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from scale import CHROMA, make_corpus  # noqa: E402


def build_scores_at_once(
    ids: np.ndarray, lengths: np.ndarray, n_vocab: int, k1: float, b: float
) -> dict:
    """The build before the blocks: every (term, text) pair of the index counted in one
    ``np.unique`` of 64-bit keys, the scores computed over all pairs at once."""
    n_docs = len(lengths)
    text = np.repeat(np.arange(n_docs, dtype=np.int64), lengths)
    pairs, tf = np.unique(ids.astype(np.int64) * n_docs + text, return_counts=True)
    term, doc = np.divmod(pairs, n_docs)
    indptr = np.searchsorted(term, np.arange(n_vocab + 1)).astype(np.int64)
    df, where = np.unique(np.diff(indptr), return_inverse=True)
    idf = np.array([math.log(1 + (n_docs - c + 0.5) / (c + 0.5)) for c in df.tolist()])
    idf = idf.astype(np.float32)[where]
    tf64 = tf.astype(np.float32).astype(np.float64)
    x = k1 * ((1 - b) + b * lengths / lengths.mean())
    x = x[doc] + tf64
    x = tf64 / x
    x *= idf[term]
    return {
        "data": x.astype(np.float32),
        "indices": doc.astype(np.int32),
        "indptr": indptr,
        "num_docs": n_docs,
    }


def _listed(fn, *args) -> list:
    return [fn(*args)]


def traced(fn):
    """``(peak traced MB over what was held before, seconds, result)`` of ``fn()``."""
    gc.collect()
    tracemalloc.reset_peak()
    before = tracemalloc.get_traced_memory()[0]
    t = time.perf_counter()
    out = fn()
    seconds = time.perf_counter() - t
    return (tracemalloc.get_traced_memory()[1] - before) / 2**20, seconds, out


def same(a: dict, b: dict) -> bool:
    return a["num_docs"] == b["num_docs"] and all(
        a[k].dtype == b[k].dtype and np.array_equal(a[k], b[k])
        for k in ("data", "indices", "indptr")
    )


def paired(label: str, variants: dict, repeat: int) -> None:
    """Run each variant ``repeat`` times in turn; print the highest peak, the median time,
    and the ratios of the first variant to the second (memory and time)."""
    peaks: dict[str, list[float]] = {k: [] for k in variants}
    times: dict[str, list[float]] = {k: [] for k in variants}
    outs: dict[str, object] = {}
    for _ in range(repeat):
        for name, fn in variants.items():
            peak, seconds, outs[name] = traced(fn)
            peaks[name].append(peak)
            times[name].append(seconds)
    (old, new) = variants
    print(f"{label} (identical: {all(map(same, outs[old], outs[new]))})")
    for name in variants:
        print(
            f"  {name:<14} peak {max(peaks[name]):7.1f} MB (tries "
            f"{[round(p, 1) for p in peaks[name]]}), median {statistics.median(times[name]):.3f} s"
        )
    print(
        f"  {old} / {new}: peak {max(peaks[old]) / max(peaks[new]):.2f}x, time "
        f"{statistics.median(a / b for a, b in zip(times[old], times[new], strict=True)):.2f}x"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", type=int, default=16, help="copies of Chroma's corpora")
    ap.add_argument("--repeat", type=int, default=2, help="runs of each build, in turn")
    args = ap.parse_args()
    if not CHROMA.is_dir():
        print(f"skipped: {CHROMA} is not present")
        return 0
    from ragmeter.chunking.strategies import chunk_corpus, make_strategy
    from ragmeter.inputs.corpus import load_corpus
    from ragmeter.retrieval import bm25 as bm25_mod

    with tempfile.TemporaryDirectory(prefix="ragmeter-bm25-memory-") as tmp:
        nbytes, _, _ = make_corpus(Path(tmp), args.size, "unique")
        docs = load_corpus(tmp)
    texts = {d.id: d.text for d in docs}
    chunkings = {
        "sentence": chunk_corpus(docs, make_strategy("sentence", segmenter="blingfire")).chunks,
        "fixed": chunk_corpus(docs, make_strategy("fixed")).chunks,
    }
    table = bm25_mod._TokenTable("en")
    inputs = {}
    for name, chunks in chunkings.items():
        ids = bm25_mod._chunk_ids(table, chunks, texts)
        lengths = np.fromiter(map(len, ids), np.int64, len(ids))
        inputs[name] = (np.concatenate(ids), lengths)
    starts = sum(table.doc(t)[0].nbytes for t in texts.values())
    print(
        f"unique x{args.size}: {nbytes / 1e6:.1f} MB of text, {len(table.terms)} terms, "
        f"{starts // 4} tokens kept (their starts: {starts / 2**20:.1f} MB at 32 bits, "
        f"{2 * starts / 2**20:.1f} MB at 64); KEY_BLOCK = {bm25_mod.KEY_BLOCK} tokens\n"
    )
    tracemalloc.start()
    for name, (ids, lengths) in inputs.items():
        build = (ids, lengths, len(table.terms), 1.5, 0.75)
        paired(
            f"build_scores, {name}: {len(ids)} tokens, {len(lengths)} chunks",
            {
                "all at once": partial(_listed, build_scores_at_once, *build),
                "block-wise": partial(_listed, bm25_mod.build_scores, *build),
            },
            args.repeat,
        )
    del inputs

    def index_chunks(build):
        def run():
            bm25_mod.build_scores, kept = build, bm25_mod.build_scores
            try:
                r, out = bm25_mod.BM25Retriever(), []
                for chunks in chunkings.values():
                    r.index_chunks(chunks, texts)
                    out.append(r._model.scores)
                return out
            finally:
                bm25_mod.build_scores = kept

        return run

    paired(
        "index_chunks of sentence then fixed, a fresh retriever (tokens found, index built)",
        {
            "all at once": index_chunks(build_scores_at_once),
            "block-wise": index_chunks(bm25_mod.build_scores),
        },
        args.repeat,
    )
    tracemalloc.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Batches by length against batches in input order: MiniLM on Chroma's child chunks.

``embed_texts`` sorts the texts it must encode by length, so that a batch pads little;
this encodes the same 400 ``parent-200`` child chunks (lengths vary) both ways, in one run,
and prints the ratio and the largest difference between the vectors.

Run: python bench/embed_batching.py   (needs the dense extra and ../shared/data/chroma)
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

import numpy as np

from ragmeter.chunking import strategies as chunking
from ragmeter.inputs.corpus import load_corpus
from ragmeter.retrieval import embedcache
from ragmeter.retrieval.dense import SentenceTransformerEncoder

CHROMA = Path(__file__).resolve().parents[2] / "shared" / "data" / "chroma"


def main() -> int:
    if not CHROMA.is_dir():
        print(f"skipped: {CHROMA} is not present")
        return 0
    docs = load_corpus(CHROMA / "corpora")
    texts = [c.text for c in chunking.chunk_corpus(docs, "parent-200").chunks]
    random.Random(0).shuffle(texts)
    texts = texts[:400]
    enc = SentenceTransformerEncoder()
    enc.encode(["warm up"])
    t = time.perf_counter()
    plain = np.vstack([enc.encode(texts[i : i + 32]) for i in range(0, len(texts), 32)])
    t1 = time.perf_counter()
    by_length = embedcache.embed_texts(enc, texts, batch_size=32)
    t2 = time.perf_counter()
    print(
        f"{len(texts)} parent-200 child chunks, MiniLM, batches of 32: input order "
        f"{t1 - t:.1f} s, by length {t2 - t1:.1f} s, ratio {(t1 - t) / (t2 - t1):.2f}x; "
        f"largest vector difference {np.abs(plain - by_length).max():.1e}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

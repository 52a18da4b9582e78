"""ICU and blingfire against syntok as the sentence segmenter: same breaks? how much faster?
same recall?

For the shipped example and Chroma's corpora, prints, for each compiled segmenter against
syntok (whose sentences every result before ICU became the default was made with):
- the sentence breaks (words that begin a sentence) each finds, the share of them that are
  identical (shared / either), and the seconds each takes to segment the corpus (every
  distinct paragraph once, in this process) with the speed ratio;
- recall@5 (BM25) of ``sentence``, ``parent-400`` and ``parent-200`` with each segmenter, and
  the paired difference with its 95% bootstrap interval (a tie when it holds 0).

Run: python bench/segmenters.py   (Chroma's part needs ../shared/data/chroma; skipped without)
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

from ragmeter.chunking import strategies as chunking
from ragmeter.inputs.config import Config
from ragmeter.inputs.corpus import load_corpus
from ragmeter.inputs.testset import load_testset
from ragmeter.runs.pipeline import run_search

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "src" / "ragmeter" / "examples" / "blog"
CHROMA = ROOT.parent / "shared" / "data" / "chroma"
STRATEGIES = {"sentence": {}, "parent-400": {}, "parent-200": {}}
OTHERS = ("icu", "blingfire")
ROUNDS = 10_000


def segment(docs, segmenter: str) -> tuple[float, list[set[int]]]:
    """Seconds to segment every document (from an empty cache), and each one's breaks."""
    chunking._CACHE.clear()
    t = time.perf_counter()
    with chunking.run_scope():
        chunking.prepare_sentences((d.text for d in docs), engine=_InProcess(), segmenter=segmenter)
        seconds = time.perf_counter() - t
        breaks = [
            set(chunking._CACHE.get(d.text, segmenter).sentence_breaks.tolist()) for d in docs
        ]
    chunking._CACHE.clear()
    return seconds, breaks


class _InProcess:
    """An engine of one worker: both segmenters run in this process, so times compare."""

    name, workers = "in-process", 1

    def map(self, fn, tasks, progress=None, meanwhile=None):  # pragma: no cover (unused)
        if meanwhile is not None:
            meanwhile()
        return [fn(t) for t in tasks]


def compare_breaks(label: str, docs) -> None:
    syntok_s, ours = segment(docs, "syntok")
    chars = sum(len(d.text) for d in docs)
    print(f"{label}: {len(docs)} documents, {chars:,} characters; syntok {syntok_s:.3f} s")
    for other in OTHERS:
        other_s, theirs = segment(docs, other)
        shared = sum(len(a & b) for a, b in zip(ours, theirs, strict=True))
        either = sum(len(a | b) for a, b in zip(ours, theirs, strict=True))
        print(
            f"  {other}: breaks syntok {sum(map(len, ours)):,}, {other} "
            f"{sum(map(len, theirs)):,}, identical {shared:,} = "
            f"{shared / max(either, 1):.1%} of either's; {other_s:.3f} s, "
            f"{syntok_s / other_s:.1f}x faster than syntok"
        )


def compare_recall(docs, testset) -> None:
    names, custom = [], []
    for name in STRATEGIES:
        spec = chunking.make_strategy(name).describe()
        for seg in ("syntok", *OTHERS):
            custom.append({**spec, "name": f"{name}-{seg}", "segmenter": seg})
            names.append(f"{name}-{seg}")
    cfg = Config(strategies=tuple(names), custom_strategies=tuple(custom), rounds=ROUNDS)
    run = run_search(cfg, docs, testset)
    matrix = np.asarray(run.matrix("recall@5"), dtype=float).T  # questions x systems
    names = [s.name for s in run.systems]
    rng = np.random.default_rng(1)
    draws = rng.integers(0, matrix.shape[0], size=(ROUNDS, matrix.shape[0]))
    print("  | strategy | segmenter | recall@5 syntok | recall@5 | difference (95% interval) |")
    print("  |---|---|---:|---:|---|")
    for name in STRATEGIES:
        a = matrix[:, names.index(f"{name}-syntok")]
        for other in OTHERS:
            b = matrix[:, names.index(f"{name}-{other}")]
            diff = b - a
            lo, hi = np.percentile(diff[draws].mean(axis=1), [2.5, 97.5])
            verdict = "tie" if lo <= 0 <= hi else ("better" if lo > 0 else "worse")
            print(
                f"  | {name} | {other} | {a.mean():.3f} | {b.mean():.3f} | "
                f"{diff.mean():+.3f} ({lo:+.3f} to {hi:+.3f}): {verdict} |"
            )


def main() -> int:
    docs = load_corpus(EXAMPLE / "posts")
    compare_breaks("shipped example", docs)
    compare_recall(docs, load_testset(EXAMPLE / "questions.jsonl", docs))
    if not CHROMA.is_dir():
        print(f"Chroma skipped: {CHROMA} is not present")
        return 0
    docs = load_corpus(CHROMA / "corpora")
    compare_breaks("Chroma", docs)
    compare_recall(docs, load_testset(CHROMA / "questions_df.csv", docs))
    return 0


if __name__ == "__main__":
    sys.exit(main())

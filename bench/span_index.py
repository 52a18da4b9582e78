"""Time the index-wide ideal grades: SpanIndex against grading every item.

50,000 items (500 documents x 99 chunks of 200 characters, plus one parent per
document spanning it whole) and 500 single-span questions, as in
tests/test_grading.py::test_span_index_at_scale (which checks the grades; this
script only times them). (a) builds a SpanIndex once and asks it for each
question's ideal grades; (b) grades all 50,000 items for every question with
grading.grade_ranking and keeps the non-zero grades. Both must agree.

    python bench/span_index.py
"""

from __future__ import annotations

import time

import numpy as np

from ragmeter.scoring.grading import SpanIndex, grade_ranking

REPEATS = 3
BRUTE_QUESTIONS = 20  # the brute force is timed on a few questions and scaled up


def make_case(seed: int = 0):
    rng = np.random.default_rng(seed)
    index = [(f"doc{d}", 200 * c, 200 * c + 200) for d in range(500) for c in range(99)]
    index += [(f"doc{d}", 0, 99 * 200) for d in range(500)]
    questions = []
    for _ in range(500):
        d = int(rng.integers(500))
        s = int(rng.integers(0, 99 * 200 - 300))
        questions.append([(f"doc{d}", s, s + int(rng.integers(1, 200)))])
    return index, questions


def main() -> None:
    index, questions = make_case()
    best_index = float("inf")
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        idx = SpanIndex(index)
        ideals = [idx.ideal_grades(q) for q in questions]
        best_index = min(best_index, time.perf_counter() - t0)

    best_brute = float("inf")
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        brute = []
        for q in questions[:BRUTE_QUESTIONS]:
            g = grade_ranking(index, q)
            brute.append(np.sort(g[g > 0])[::-1])
        best_brute = min(best_brute, time.perf_counter() - t0)
    for a, b in zip(ideals, brute, strict=False):
        assert a.tolist() == b.tolist()
    brute_all = best_brute * len(questions) / BRUTE_QUESTIONS

    print(f"{len(index):,} items, {len(questions)} questions (best of {REPEATS})")
    print(f"(a) SpanIndex build + queries   {best_index:8.3f} s")
    print(f"(b) grade every item            {brute_all:8.3f} s  (scaled from {BRUTE_QUESTIONS})")
    print(f"ratio (b) / (a)                 {brute_all / best_index:8.1f}x")


if __name__ == "__main__":
    main()

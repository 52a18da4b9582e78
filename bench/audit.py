"""Questions audited per second by the rule-based flags, on Chroma's 472 questions.

Loads the corpus and questions once, then times ``audit_questions`` (no model)
over the whole set several times and reports the best rate, the mean copy
ratio with its interval, and the count of each flag.

Run: python bench/audit.py   (needs ../shared/data/chroma; skips with a message if absent)
"""

from __future__ import annotations

import time
from pathlib import Path

from ragmeter.inputs.corpus import load_corpus
from ragmeter.inputs.testset import load_testset
from ragmeter.questions import audit_questions, summarize_audit

CHROMA = Path(__file__).resolve().parents[2] / "shared" / "data" / "chroma"
REPEATS = 5


def main() -> int:
    if not CHROMA.is_dir():
        print(f"skipped: {CHROMA} is not present")
        return 0
    docs = load_corpus(CHROMA / "corpora")
    testset = load_testset(CHROMA / "questions_df.csv", docs)
    n = len(testset)
    times = []
    for _ in range(REPEATS):
        t = time.perf_counter()
        flagged = audit_questions(testset, docs)
        times.append(time.perf_counter() - t)
    best = min(times)
    summary = summarize_audit(flagged)
    print(
        f"{n} questions, rule-based audit: best of {REPEATS} {best * 1000:.0f} ms "
        f"-> {n / best:,.0f} questions/s (median {sorted(times)[REPEATS // 2] * 1000:.0f} ms)"
    )
    print(
        f"mean copy ratio {summary.copy_ratio.format()} % (n={summary.n_scored}, "
        f"seed {summary.copy_ratio.seed}, {summary.copy_ratio.rounds} rounds)"
    )
    print(
        f"flagged {summary.flagged} of {n}:",
        ", ".join(f"{k} {v}" for k, v in summary.counts.items()),
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

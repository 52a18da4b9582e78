"""Real numbers from real runs, pinned: a change that moves one must say so.

Two searches are run as a user runs them and a few headline figures are compared
with the JSON files in ``tests/snapshots/``:

* the shipped example (25 posts, 135 questions), the strategies of the README's
  worked example: recall@5 of each with its 95% interval (seed 1, 10,000
  rounds), coverage@5 and words@5, and the per-question win/tie/loss counts of
  fixed against sentence;
* Chroma's evaluation data (5 corpora, 472 questions; ``../shared/data``), BM25
  with three strategies: recall@5 and coverage@5 with their intervals.

Intervals are single-system bootstrap intervals (``stats.bootstrap``); the
paired comparisons' p-values and intervals are pinned by tests/test_stats.py.

A deliberate change (a new tokenizer, a chunking fix) updates them with

    RAGMETER_UPDATE_SNAPSHOTS=1 pytest tests/test_snapshots.py

and the diff of ``tests/snapshots/*.json`` goes into the same commit.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
from conftest import EXAMPLE

from ragmeter.inputs.config import Config
from ragmeter.inputs.corpus import load_corpus
from ragmeter.inputs.testset import load_testset
from ragmeter.runs.pipeline import run_search
from ragmeter.stats import bootstrap

SNAPSHOTS = Path(__file__).parent / "snapshots"
UPDATE = os.environ.get("RAGMETER_UPDATE_SNAPSHOTS", "").strip() == "1"
SEED, ROUNDS = 1, 10_000


def interval(values: np.ndarray) -> list[float]:
    est = bootstrap(values, rounds=ROUNDS, seed=SEED)
    return [est.mean, est.low, est.high]


def record(run, metrics: dict[str, str]) -> dict:
    """``{"system": {"recall@5": [mean, low, high], "words@5": mean}}`` for a run."""
    out = {}
    for system in run.systems:
        row = {}
        for name, how in metrics.items():
            values = system.scores[name]
            row[name] = interval(values) if how == "interval" else float(values.mean())
        out[system.name] = row
    return out


def wins_ties_losses(run, metric: str, a: str, b: str) -> dict:
    by_name = {s.name: s.scores[metric] for s in run.systems}
    x, y = by_name[a], by_name[b]
    return {
        "a": a,
        "b": b,
        "metric": metric,
        "wins": int(np.count_nonzero(x > y)),
        "ties": int(np.count_nonzero(x == y)),
        "losses": int(np.count_nonzero(x < y)),
    }


def differences(expected, actual, where: str = "") -> list[str]:
    """Where two snapshots differ (floats to 1e-12 relative), as readable lines."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        out = []
        for key in sorted(set(expected) | set(actual)):
            if key not in expected or key not in actual:
                out.append(f"{where}/{key}: only in {'actual' if key in actual else 'snapshot'}")
            else:
                out += differences(expected[key], actual[key], f"{where}/{key}")
        return out
    if isinstance(expected, list) and isinstance(actual, list) and len(expected) == len(actual):
        return [
            d
            for i, (e, a) in enumerate(zip(expected, actual, strict=True))
            for d in differences(e, a, f"{where}[{i}]")
        ]
    if isinstance(expected, float) or isinstance(actual, float):
        if isinstance(expected, int | float) and isinstance(actual, int | float):
            if actual == pytest.approx(expected, rel=1e-12, abs=1e-12):
                return []
    elif expected == actual:
        return []
    return [f"{where}: snapshot {expected!r}, now {actual!r}"]


def check_snapshot(name: str, actual: dict) -> None:
    path = SNAPSHOTS / f"{name}.json"
    if UPDATE:
        SNAPSHOTS.mkdir(exist_ok=True)
        path.write_text(json.dumps(actual, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        return
    assert path.is_file(), (
        f"{path} is missing: RAGMETER_UPDATE_SNAPSHOTS=1 pytest tests/test_snapshots.py"
    )
    expected = json.loads(path.read_text(encoding="utf-8"))
    diff = differences(expected, actual)
    assert not diff, (
        f"real numbers moved against {path.name} (if on purpose, update it with "
        "RAGMETER_UPDATE_SNAPSHOTS=1 pytest tests/test_snapshots.py and commit the diff):\n"
        + "\n".join(diff)
    )


# --------------------------------------------------------------------------- the example

EXAMPLE_STRATEGIES = ("fixed", "overlap", "sentence", "recursive", "parent-400")


def test_shipped_example_headline_numbers():
    docs = load_corpus(EXAMPLE / "posts")
    testset = load_testset(EXAMPLE / "questions.jsonl", docs)
    cfg = Config(strategies=EXAMPLE_STRATEGIES, seed=SEED, rounds=ROUNDS)
    run = run_search(cfg, docs, testset)
    snapshot = {
        "corpus": {"documents": len(docs), "questions": len(testset)},
        "config": {
            "strategies": list(EXAMPLE_STRATEGIES),
            "ks": list(cfg.ks),
            "seed": SEED,
            "rounds": ROUNDS,
            "retriever": "bm25",
        },
        "systems": record(
            run, {"recall@5": "interval", "coverage@5": "interval", "words@5": "mean"}
        ),
        "comparison": wins_ties_losses(run, "recall@5", "fixed", "sentence"),
    }
    check_snapshot("example_search", snapshot)


# --------------------------------------------------------------------------- Chroma's data

CHROMA_STRATEGIES = ("fixed", "sentence", "recursive")


@pytest.mark.slow
def test_chroma_bm25_headline_numbers(shared_data):
    chroma = shared_data / "chroma"
    docs = load_corpus(chroma / "corpora")
    testset = load_testset(chroma / "questions_df.csv", docs)
    cfg = Config(strategies=CHROMA_STRATEGIES, ks=(1, 3, 5), seed=SEED, rounds=ROUNDS)
    run = run_search(cfg, docs, testset)
    snapshot = {
        "corpus": {"documents": len(docs), "questions": len(testset)},
        "config": {
            "strategies": list(CHROMA_STRATEGIES),
            "ks": [1, 3, 5],
            "seed": SEED,
            "rounds": ROUNDS,
            "retriever": "bm25",
        },
        "systems": record(run, {"recall@5": "interval", "coverage@5": "interval"}),
    }
    check_snapshot("chroma_bm25", snapshot)

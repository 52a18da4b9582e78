"""Results folders of the shipped example with few or many systems, for the report's
chart tests (a plain module, imported by the tests that need it).

Three systems are the demo's close pair (``sentence`` and ``recursive``, whose labels
once overlapped) beside ``whole``; eighteen are six strategies crossed with three BM25
settings, where several systems score alike and sit on top of each other. Each folder
takes about a second to build (200 bootstrap rounds).
"""

from __future__ import annotations

from pathlib import Path

from conftest import EXAMPLE_SETTINGS, save_example

STRATEGIES = ("whole", "fixed", "overlap", "sentence", "recursive", "parent-400")
BM25_SETTINGS = (
    "bm25",
    {"name": "bm25-k09", "kind": "bm25", "k1": 0.9},
    {"name": "bm25-b03", "kind": "bm25", "b": 0.3},
)
LAYOUTS = {
    3: (EXAMPLE_SETTINGS["strategies"], EXAMPLE_SETTINGS["retrievers"]),
    18: (STRATEGIES, BM25_SETTINGS),
}


def example_results(root: Path, systems: int) -> Path:
    """A results folder of the shipped example with ``systems`` (3 or 18) systems; the 3 are
    conftest's ``example_results`` (a session fixture, for a test that needs no other)."""
    strategies, retrievers = LAYOUTS[systems]
    return save_example(
        root / f"results-{systems}",
        strategies=strategies,
        retrievers=retrievers,
        rounds=200,
        family="all",  # every pair: the longest table a report shows (a grid's own: test_families)
    )

"""Documents with equal scores come out in one order, whichever way the run is sorted.

A run whose lines come grouped by query with falling scores is ordered by sorting only
its runs of tied scores (``qrels._presorted``); any other run by one full sort. Both end
with the same tie order (``qrels._tie_keys``): trec_eval's (document id descending, as
strcmp compares) or ragmeter's (rank, then file order). Each case here goes through both
ways, and the test checks which way each took.
"""

from __future__ import annotations

import numpy as np
import pytest

from ragmeter.scoring import trec as module
from ragmeter.scoring.trec import Qrels, Run, run_matrix

# (query, document, rank, score); ids of several 8-byte words, prefixes of each other,
# and digits that sort differently as text and as numbers
LINES = [
    ("q1", "d9", 1, 3.0),
    ("q1", "d10", 2, 3.0),
    ("q1", "doc-000000012-b", 5, 2.0),
    ("q1", "doc-000000012", 3, 2.0),
    ("q1", "doc-000000012-a", 3, 2.0),
    ("q1", "doc-000000100", 4, 2.0),
    ("q1", "zz", 6, 1.0),
    ("q1", "a", 9, 0.5),
    ("q1", "b", 8, 0.5),
    ("q2", "x", 2, 1.0),
    ("q2", "xy", 1, 1.0),
    ("q2", "w", 3, 1.0),
]
JUDGED = {"q1": {doc: 1 for q, doc, *_ in LINES if q == "q1"}, "q2": {"x": 1}}


def _run(lines, ranks=True) -> Run:
    n = len(lines)
    return Run(
        np.array([q.encode() for q, *_ in lines]),
        np.array([d.encode() for _, d, *_ in lines]),
        np.array([s for *_, s in lines], dtype=np.float64),
        np.array([r for _, _, r, _ in lines], dtype=np.int64) if ranks else None,
        np.arange(1, n + 1, dtype=np.int64),
        "ties",
    )


def _expected(lines, compat: bool, ranks: bool) -> dict[str, list[str]]:
    """The order by its definition: score descending, then the tie order."""
    out: dict[str, list[str]] = {}
    for q in sorted({line[0] for line in lines}):
        mine = [(pos, line) for pos, line in enumerate(lines) if line[0] == q]
        if compat:  # document id descending: sort ascending by (score, id), reversed
            mine.sort(key=lambda x: (x[1][3], x[1][1].encode()), reverse=True)
        else:
            mine.sort(key=lambda x: (-x[1][3], x[1][2] if ranks else 0, x[0]))
        out[q] = [line[1] for _, line in mine]
    return out


def _grouped(lines):
    """Grouped by query, scores falling, ties in an order that is neither tie order."""
    return sorted(lines, key=lambda x: (x[0], -x[3], x[1][::-1]))


def _shuffled(lines):
    """The same lines in an order no query is grouped or sorted in."""
    return [lines[i] for i in np.random.default_rng(3).permutation(len(lines))]


def _rising(lines):
    """Grouped by query, but scores rise within each."""
    return sorted(lines, key=lambda x: (x[0], x[3], x[1]))


@pytest.mark.parametrize(("compat", "ranks"), [(True, False), (False, True), (False, False)])
def test_ties_are_ordered_alike_by_both_ways_of_sorting(monkeypatch, compat, ranks):
    taken = []
    real = module._presorted

    def spy(*args):
        order = real(*args)
        taken.append(order)
        return order

    monkeypatch.setattr(module, "_presorted", spy)
    qrels = Qrels.from_dict(JUDGED)
    for arrange in (_grouped, _shuffled, _rising):
        lines = arrange(LINES)
        taken.clear()
        m = run_matrix(_run(lines, ranks), qrels, trec_eval_compat=compat, keep=len(lines))
        # the way each case is meant to test is the one taken
        if arrange is _grouped:  # only the runs of ties were sorted
            assert len(taken) == 1 and isinstance(taken[0], np.ndarray)
        else:  # a full sort: queries mixed (not even tried) or scores rising
            assert taken == ([] if arrange is _shuffled else [False])
        got = {
            qid.decode(): [d.decode() for d in row if d]
            for qid, row in zip(qrels.qids.tolist(), m.docs, strict=True)
        }
        assert got == _expected(lines, compat, ranks), arrange.__name__


def test_the_expected_orders_differ_from_file_order():
    # the cases above would prove nothing if the tie orders were the lines' own order
    for arrange in (_grouped, _shuffled, _rising):
        lines = arrange(LINES)
        file_order = {q: [d for x, d, *_ in lines if x == q] for q in ("q1", "q2")}
        for compat, ranks in ((True, False), (False, True)):
            assert _expected(lines, compat, ranks) != file_order
    assert _expected(LINES, True, False)["q1"][:2] == ["d9", "d10"]  # as text, not numbers

"""``ragmeter.runs.warnings.run_warnings``: capped k (one system or several), identical chunks,
identical rankings, and when the second is already said by the first."""

from __future__ import annotations

from types import SimpleNamespace

from ragmeter.runs.search_run import RankedItem
from ragmeter.runs.warnings import _plural, capped_ks, identical_systems, run_warnings


def _items(*docs):
    return [[RankedItem(1, d, 0, 5, 1.0, 0, 3)] for d in docs]


def _system(name, strategy, docs, k_cap=None):
    return SimpleNamespace(name=name, strategy={"name": strategy}, items=_items(*docs), k_cap=k_cap)


def test_plural():
    assert [_plural(n, "item") for n in (0, 1, 2)] == ["0 items", "1 item", "2 items"]


def test_capped_k_is_one_warning_per_cap():
    run = SimpleNamespace(
        systems=[
            _system("a", "whole", ["x"], 3),
            _system("b", "fixed", ["y"], 3),
            _system("c", "sentence", ["z"], 1),
            _system("d", "recursive", ["w"]),
        ],
        chunk_keys={},
    )
    assert capped_ks(run) == {"a": 3, "b": 3, "c": 1}
    assert run_warnings(run) == [
        "a, b make only 3 items each: k above 3 is scored at 3 (marked * in the tables)",
        "c makes only 1 item: k above 1 is scored at 1 (marked * in the tables)",
    ]


def test_identical_rankings_and_chunks():
    a, b = _system("fixed", "fixed", ["x", "y"]), _system("fixed2", "fixed2", ["x", "y"])
    c = _system("other", "other", ["y", "x"])
    assert identical_systems([a, b, c]) == [["fixed", "fixed2"]]
    assert identical_systems([a, c]) == []
    # the same chunks: said once, about the strategies
    same = SimpleNamespace(systems=[a, b, c], chunk_keys={"fixed": 1, "fixed2": 1, "other": 2})
    assert run_warnings(same) == ["strategies fixed, fixed2 make identical chunks of this corpus"]
    # other chunks, the same rankings: said about the systems
    other = SimpleNamespace(systems=[a, b, c], chunk_keys={"fixed": 1, "fixed2": 3, "other": 2})
    assert run_warnings(other) == [
        "systems fixed, fixed2 rank identically on every question "
        "(every comparison between them is a tie)"
    ]


def test_two_retrievers_of_one_strategy_ranking_alike_are_named():
    bm25 = _system("fixed/bm25", "fixed", ["x"])
    dense = _system("fixed/dense", "fixed", ["x"])
    run = SimpleNamespace(systems=[bm25, dense], chunk_keys={"fixed": 1, "whole": 1})
    assert run_warnings(run) == [
        "strategies fixed, whole make identical chunks of this corpus",
        "systems fixed/bm25, fixed/dense rank identically on every question "
        "(every comparison between them is a tie)",
    ]

"""``ragmeter.cli.export``: what the export says about its round trip. The scores line
(the retriever's, or ``n - rank + 1`` for some or every system), the judgments line, and
one reason per cause when measures do not carry over: several items of one document,
several relevant items, a document-level key, the search's nDCG ideal, a system with
fewer items than a k."""

from __future__ import annotations

from pathlib import Path

from ragmeter.cli.export import Export, round_trip_lines

MEASURES = ["recall@5", "precision@5", "mrr@10", "ndcg@10", "map"]


def _export(differs: dict[str, list[str]], **fields) -> Export:
    """What export_files would return for ``differs``, run files written for every system."""
    settings = {
        "paths": [],
        "runs": {s: Path(f"run.{s}.txt") for s in differs},
        "qrels": {},
        "level": 2,
        "gain": "exponential",
        "ideal": "judged",
        "documents": False,
        "measures": MEASURES,
        "differs": differs,
        "run_base": Path("run.txt"),
    }
    return Export(**(settings | fields))


def _text(ex: Export) -> str:
    return "\n".join(round_trip_lines(ex))


def test_scores_written_as_ranks_for_every_system_or_some():
    every = _text(_export({"a": []}, rank_scores=["a"]))
    assert "Scores: n - rank + 1 (the saved scores do not fall along the rankings)." in every
    some = _text(_export({"a": [], "b": []}, rank_scores=["a"]))
    assert "Scores: n - rank + 1 for a (its scores do not fall along its ranking)" in some
    assert "the retriever's for the others." in some
    tied = _text(_export({"a": [], "b": []}, lowered={"a": 2, "b": 1}))
    assert "Scores: the retriever's; 3 tied scores lowered one 32-bit step" in tied
    assert "Scores: the retriever's.\n" in _text(_export({"a": []}))
    assert "Scores:" not in _text(_export({"a": []}, runs={}))  # qrels only: no scores


def test_documents_that_differ_say_which_rankings_hold_several_items_of_one():
    ex = _export(
        {"a": ["recall@5", "map"], "b": [], "c": ["map"]},
        documents=True,
        several={"a": 3, "b": 5, "c": 1},
    )
    text = _text(ex)
    assert "Judgments: each question's answer documents" in text
    # only the systems whose measures differ count: a's 3 and c's 1, not b's 5
    assert "4 rankings hold several items of one document" in text
    assert "several items are relevant" not in text and "ndcg:" not in text
    # no ranking holds two items of a document: no reason to give
    assert "Why not:" not in _text(_export({"a": ["map"]}, documents=True, several={"a": 0}))


def test_span_items_that_differ_say_how_many_rankings_hold_several_relevant_items():
    text = _text(_export({"a": ["recall@5", "map"], "b": ["ndcg@10"]}, several={"a": 2, "b": 7}))
    assert "Judgments: per system, every item it returned" in text
    # b's measures that differ are no unit counts: its rankings are not counted
    assert "recall, map, rprec: in 2 rankings several items are relevant" in text
    keyed = _text(_export({"a": ["recall@5"]}, several={"a": 2}, document_keys=True))
    assert "the search counts relevant documents (returned or not)" in keyed
    assert "several items are relevant" not in keyed


def test_the_ndcg_ideal_is_a_reason_only_for_span_items_and_another_ideal():
    only_ndcg = {"a": ["ndcg@10"]}
    why = _text(_export(only_ndcg, search_ideal="judged", several={"a": 0}))
    assert why.endswith(
        "Why not:\n  ndcg: the search's ideal is 'judged'; the judgments hold only what a "
        "system returned (the returned ideal)."
    )
    assert "several items are relevant" not in why  # no ranking counted: no such line
    assert "ndcg:" not in _text(_export(only_ndcg, search_ideal="returned"))
    assert "ndcg:" not in _text(_export(only_ndcg, search_ideal="judged", documents=True))


def test_precision_past_a_systems_item_count_names_the_capped_systems():
    ex = _export({"a": ["precision@5"], "b": ["precision@5"], "c": []}, k_cap={"a": 3, "c": 2})
    text = _text(ex)
    assert "precision@k past a system's item count, a (3 items): the search divides" in text
    assert "c (2 items)" not in text  # c's precision carries over
    assert "precision@k: 1 of 3 systems, c only" in text

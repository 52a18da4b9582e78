"""``ragmeter.comparison.tables``: the Markdown table to the character, the default columns for each
set of cutoffs, and the empty cases (no metric with a cutoff, no system, no comparison)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from ragmeter.comparison.tables import ESTIMATE_COLUMNS, Comparisons, ShowsItself, markdown_table


def test_markdown_pads_aligns_and_rules_each_column():
    text = markdown_table(["name", "x"], [["a", "1"], ["bb", "22"]], right={1})
    assert text.splitlines() == [
        "| name |  x |",
        "|------|---:|",
        "| a    |  1 |",
        "| bb   | 22 |",
    ]
    left = markdown_table(["k"], [["abc"]], right=set())
    assert left.splitlines() == ["| k   |", "|-----|", "| abc |"]


class _Stub(ShowsItself):
    def __init__(self, metrics, compared_on="recall@5", systems=()):
        self.metrics = list(metrics)
        self.summary = SimpleNamespace(metric=compared_on, estimates={})
        self.systems = list(systems)
        self.question_ids = []


EVERY = ("recall", "precision", "mrr", "ndcg", "coverage", "words")


def _all_at(*ks):
    return [f"{m}@{k}" for k in ks for m in EVERY]


@pytest.mark.parametrize(
    ("ks", "top", "mid"),
    [
        ((1, 3, 5, 10, 20), 10, 5),
        ((5, 10, 20), 10, 5),
        ((3, 5, 10), 10, 5),
        ((1, 3, 20), 20, 3),
        ((1, 3, 10), 10, 3),
        ((7, 20), 20, 7),
    ],
)
def test_default_metrics_pick_10_and_5_or_the_nearest(ks, top, mid):
    stub = _Stub(_all_at(*ks), compared_on=f"recall@{ks[0]}")
    recall = [f"recall@{k}" for k in ks]
    words = [f"words@{ks[0]}"]
    assert stub.default_metrics() == recall + [
        f"precision@{mid}",
        f"mrr@{top}",
        f"ndcg@{top}",
        f"coverage@{mid}",
        *words,
    ]


def test_default_metrics_without_cutoffs_are_every_metric():
    assert _Stub(["map", "rprec"]).default_metrics() == ["map", "rprec"]


def test_default_metrics_read_trec_eval_names_as_their_measures():
    # a run of ``evaluate --trec-eval-compat`` stores trec_eval's names: the same columns
    # as for ragmeter's names (recall at each k, precision at 5, nDCG at 10), not only recall
    compat = ["map", "recall_5", "recall_10", "P_5", "ndcg_cut_10", "recip_rank"]
    stub = _Stub(compat, compared_on="P_5")
    assert stub.default_metrics() == ["recall_5", "recall_10", "P_5", "ndcg_cut_10"]


class _Fixed(_Stub):
    def _table(self, metrics):
        return ["system", "recall@5", "mrr@10"], [["bm25", "80.0%", "0.61"]]

    def _caption(self):
        return "caption"


def test_to_markdown_right_aligns_every_column_but_the_system():
    text = _Fixed(["recall@5"]).to_markdown()
    assert text.splitlines()[1] == "|--------|---------:|-------:|"
    assert text.endswith("\n\ncaption")


def test_to_pandas_of_no_system_keeps_the_columns():
    pytest.importorskip("pandas")
    frame = _Stub(["recall@5"]).to_pandas()
    assert list(frame.columns) == list(ESTIMATE_COLUMNS) and len(frame) == 0


def test_empty_comparisons_still_show_a_table():
    c = Comparisons([], "recall@5", seed=3, rounds=200)
    page = c._repr_html_()
    assert page is not None and "<table" in page and "seed 3, 200 rounds" in page
    assert c.to_markdown().splitlines()[0].startswith("| A ")

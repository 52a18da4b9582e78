"""One formatter for an estimate: the terminal, the report and the notebook tables agree."""

from __future__ import annotations

import io

from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console

from ragmeter import stats, tables
from ragmeter.cli import search_views as terminal
from ragmeter.formatting import format_estimate
from ragmeter.metrics import is_share
from ragmeter.report.common import _est
from ragmeter.summary import Summary

METRICS = ["recall@5", "hit@3", "precision@5", "coverage@5", "mrr@10", "ndcg@10", "map", "words@5"]


def test_each_family_has_its_scale():
    est = {"mean": 0.80712, "low": 0.7409, "high": 0.8741}
    assert format_estimate(est, "recall@5") == "80.7 [74.1, 87.4]"
    assert format_estimate(est, "hit@3") == "80.7 [74.1, 87.4]"  # a share, like recall
    assert format_estimate(est, "ndcg@10") == "0.807 [0.741, 0.874]"
    words = {"mean": 885.4, "low": 842.2, "high": 930.0}
    assert format_estimate(words, "words@5") == "885 [842, 930]"
    assert [m for m in METRICS if is_share(m)] == METRICS[:4]


unit = st.floats(min_value=0, max_value=1, allow_nan=False)


@given(a=unit, b=unit, c=unit, metric=st.sampled_from(METRICS))
def test_every_view_prints_the_same_text(a, b, c, metric):
    low, mean, high = sorted((a, b, c))
    est = stats.Estimate(mean, low, high, 10, 200, 1, "percentile", "mulberry32")
    text = format_estimate(est, metric)
    assert text == format_estimate(est.to_dict(), metric) == tables.format_estimate(est, metric)
    assert _est(est, metric)["shown"] == text  # the report prints this text as it is
    if is_share(metric) and low != high:  # a zero-width interval is never printed
        assert text == est.format()


def test_terminal_rank_table_cells_are_the_formatter_s():
    est = stats.Estimate(0.61234, 0.55, 0.67, 10, 200, 1, "percentile", "mulberry32")
    words = stats.Estimate(885.0, 0.55, 0.67, 10, 200, 1, "percentile", "mulberry32")
    summary = Summary(estimates={"bm25": {"mrr@10": est, "words@5": words}})
    console = Console(file=io.StringIO(), width=200)
    console.print(terminal.rank_table(summary, ("mrr@10", "words@5")))
    out = console.file.getvalue()
    assert format_estimate(est, "mrr@10") in out
    assert "885 [1, 1]" in out  # words: whole numbers, as in the report and the notebook


def test_a_metric_carries_its_family_and_whether_it_is_a_share():
    from ragmeter.metrics import Metric

    for name in METRICS:
        m = Metric.parse(name)
        assert m.family == name.partition("@")[0] and m.share == is_share(name)
    assert Metric.parse("P_10").share and not Metric.parse("ndcg_cut_10").share

"""One formatter for an estimate: the terminal, the report and the notebook tables agree."""

from __future__ import annotations

import io
from types import SimpleNamespace as S

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console

from ragmeter import stats
from ragmeter.cli import search_views as terminal
from ragmeter.comparison import formatting as f
from ragmeter.comparison import tables
from ragmeter.comparison.formatting import format_estimate
from ragmeter.comparison.summary import Summary
from ragmeter.report.common import _est
from ragmeter.scoring.metrics import is_share

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
    words = stats.Estimate(885.0, 842.2, 930.4, 10, 200, 1, "percentile", "mulberry32")
    summary = Summary(estimates={"bm25": {"mrr@10": est, "words@5": words}})
    console = Console(file=io.StringIO(), width=200)
    console.print(terminal.rank_table(summary, ("mrr@10", "words@5")))
    out = console.file.getvalue()
    assert format_estimate(est, "mrr@10") in out
    assert "885 [842, 930]" in out  # words: whole numbers, as in the report and the notebook


def test_a_metric_carries_its_family_and_whether_it_is_a_share():
    from ragmeter.scoring.metrics import Metric

    for name in METRICS:
        m = Metric.parse(name)
        assert m.family == name.partition("@")[0] and m.share == is_share(name)
    assert Metric.parse("P_10").share and not Metric.parse("ndcg_cut_10").share


# How numbers are printed (ragmeter.comparison.formatting): scales, ends that never round onto
# 0, p-values that never round across the level, and the comparison columns.


def test_scales_by_metric_family():
    assert f.metric_scale("recall@5") == (100, 1)
    assert f.metric_scale("words@5") == (1, 0)
    assert f.metric_scale("mrr@10") == (1, 3)
    assert f.format_interval(0.85, 0.775, 0.925) == "85.0 [77.5, 92.5]"
    assert f.format_interval(0.5, 0.25, 0.75, scale=1, digits=2) == "0.50 [0.25, 0.75]"


def test_estimates_print_exact_no_spread_or_interval():
    est = {"mean": 0.5, "low": 0.25, "high": 0.75, "exact": None}
    assert f.format_estimate(est, "recall@5") == "50.0 [25.0, 75.0]"
    assert f.format_estimate(S(**est), "mrr@10") == "0.500 [0.250, 0.750]"
    assert f.format_estimate(est | {"mean": 885.2, "low": 842, "high": 930}, "words@5") == (
        "885 [842, 930]"
    )
    flat = est | {"mean": 1.0, "low": 1.0, "high": 1.0}
    assert f.format_estimate(flat, "mrr@10") == "1.000 (no spread: interval not estimable)"
    exact = flat | {"exact": (0.832, 1.0)}
    assert f.format_estimate(exact, "recall@5") == "100.0 [83.2, 100.0] exact"
    assert f.exact_note([est, S(**exact)]) == f.EXACT_NOTE
    assert f.exact_note([est, S(**est)]) is None
    assert f.exact_note([]) is None


def test_interval_ends_never_round_onto_zero():
    assert f.fmt_end(0.0) == "0.0"
    assert f.fmt_end(0.0, digits=3) == "0.000"
    assert f.fmt_end(0.0003) == "+0.03"
    assert f.fmt_end(-0.0003) == "-0.03"
    assert f.fmt_end(0.123) == "+12.3"
    assert f.fmt_end(-0.00004, scale=1, digits=3) == "-0.00004"
    assert f.fmt_end(0.0006) == "+0.1"  # rounds away from 0: one digit is enough
    assert f.fmt_end(1e-16) == "+1.0e-14"  # past 12 digits: scientific, never "+0.0"


def test_an_interval_too_narrow_for_its_digits_prints_with_more():
    tiny = {"mean": 0.01234, "low": 0.01190, "high": 0.01271}  # a MAP over many questions
    assert format_estimate(tiny, "map") == "0.0123 [0.0119, 0.0127]"  # not [0.012, 0.013]
    assert format_estimate({"mean": 0.80712, "low": 0.7409, "high": 0.8741}, "map") == (
        "0.807 [0.741, 0.874]"  # a width that shows at the row's digits prints as before
    )
    assert stats.format_ends(0.01190, 0.01271, 1, 3) == "[0.0119, 0.0127]"
    assert stats.format_ends(0.7409, 0.8741) == "[74.1, 87.4]"  # percent, one decimal
    assert stats.format_ends(0.7409, 0.74098) == "[74.090, 74.098]"
    assert f.format_half_width(0.0004, "map") == "0.0004"  # not "0.000"
    assert f.format_half_width(0.0004, "recall@5") == "0.04"  # points for a share
    assert f.format_half_width(0.04, "recall@5") == "4.0"
    assert f.format_half_width(0.0, "map") == "0.000"
    # the half-width decides, not the whole width: 0.0006 shows at three digits
    assert format_estimate({"mean": 0.0123, "low": 0.0117, "high": 0.0129}, "map") == (
        "0.012 [0.012, 0.013]"
    )
    assert f.format_half_width(2e-9, "map") == "0.000000002"  # six digits more at most
    assert f.format_half_width(2e-10, "map") == "0.000000000"


@given(
    half=st.floats(min_value=1e-6, max_value=1.0, allow_nan=False),
    mean=unit,
    metric=st.sampled_from(METRICS),
)
def test_a_nonzero_half_width_never_prints_as_zero(half, mean, metric):
    assert float(f.format_half_width(half, metric)) != 0.0
    est = {"mean": mean, "low": mean - half, "high": mean + half}
    low, high = format_estimate(est, metric).split(" [")[1].rstrip("]").split(", ")
    assert float(high) > float(low)  # the printed interval has a width


def test_the_sample_size_tables_print_a_narrow_half_width_with_its_digits():
    row = stats.SizeRow(5000, 0.01234, 0.0119, 0.0127, 0.0004, 10_000, 1, "mulberry32")
    grid = terminal.size_grid([row], "map", "bm25")
    assert grid.rows[0][1:] == ["0.0123", "[0.0119, 0.0127]", "0.0004"]
    both = terminal.sample_sizes_grid({"bm25": [row]}, "map")
    assert both.rows[0] == ["bm25", "0.0004"]


def test_p_values_never_round_across_the_level():
    assert f.fmt_p(None) == ""
    assert f.fmt_p(0.0123456) == "0.0123"
    assert f.fmt_p(0.049996) == "0.049996"  # "0.05" would read as not below 0.05
    assert f.fmt_p(0.05) == "0.05"
    assert f.fmt_p(0.049961234) == "0.04996"  # one digit more, only as many as needed
    assert f.fmt_p(0.0999951, alpha=0.1) == "0.099995"
    assert f.fmt_p(0.0999951) == "0.1"


def test_comparison_columns():
    d = S(mean=0.126, low=0.018, high=0.244)
    row = S(identical=False, difference=d, p=0.0499999)
    assert f.shown_difference(row, "recall@5") == "+12.6 [+1.8, +24.4]"
    assert f.shown_difference(row, "mrr@10") == "+0.126 [+0.018, +0.244]"
    assert f.shown_difference(S(identical=True, difference=d), "recall@5") == "identical"
    assert f.shown_p(row, 0.05) == "0.0499999"
    assert f.shown_p(row, 0.01) == "0.05"
    assert f.shown_p(S(identical=False, p=None), 0.05) == ""
    assert f.shown_p(S(identical=True, p=0.01), 0.05) == ""
    labels = f.column_labels
    assert labels(None) == ("A - B [95% CI]", "p (Holm)")
    assert labels(S(adjust="none", alpha=0.1, pairs=3)) == ("A - B [90% CI]", None)
    assert labels(S(adjust="holm", alpha=0.05, pairs=1)) == ("A - B [95% CI]", "p")
    assert labels(S(adjust="maxt", alpha=0.05, pairs=3)) == ("A - B [max-T-level CI]", "p (max-T)")
    assert labels(S(adjust="holm", alpha=0.05, pairs=2)) == ("A - B [Holm-level CI]", "p (Holm)")


def test_a_difference_prints_signed_with_ends_never_rounded_onto_zero():
    d = S(mean=0.126, low=0.0003, high=0.244)
    assert f.difference_interval(d) == "[+0.03, +24.4]"
    assert f.format_difference(d) == "+12.6 [+0.03, +24.4]"
    assert f.format_difference({"mean": 0.126, "low": 0.0003, "high": 0.244}) == (
        "+12.6 [+0.03, +24.4]"
    )
    assert f.format_difference(S(mean=-0.02, low=-0.05, high=0.0), 1, 3) == "-0.020 [-0.050, 0.000]"
    row = S(identical=False, difference=d)
    assert f.shown_difference(row, "recall@5") == f.format_difference(d)
    assert f.shown_difference(row, "mrr") == f.format_difference(d, 1, 3)


def test_an_interval_has_one_definition():
    import importlib

    room = importlib.import_module("ragmeter.stats.bootstrap")  # stats.bootstrap is a function
    assert f.format_interval is stats.format_interval is room.format_interval
    assert stats.format_interval(0.85, 0.775, 0.925) == "85.0 [77.5, 92.5]"


# ------------------------------------------------------------ ends set by the decision


def _pinned_table(clustered: bool, adjust: str = "holm"):
    """Six 0/1 systems on 92 questions in 26 documents of unequal sizes, where some
    ties have an end the decision puts at 0 (McNemar against Tango; flips at 0)."""
    import numpy as np

    from ragmeter.comparison.verdicts import compare_family
    from ragmeter.stats.clusters import cluster_codes

    rng = np.random.default_rng(3)
    docs = np.sort(rng.integers(0, 26, 92))
    codes, _ = cluster_codes(docs)
    base = rng.normal(size=26)
    m = np.array(
        [(rng.normal(size=92) + 0.8 * base[docs] + 0.3 * s < 0.7).astype(float) for s in range(6)]
    )
    names = [f"s{i}" for i in range(6)]
    return compare_family(
        m, names, adjust=adjust, clusters=codes if clustered else None, rounds=2000
    )


def test_an_interval_end_set_by_the_decision_is_marked_and_explained():
    for clustered in (False, True):  # McNemar decides Tango's; whole documents flip
        table = _pinned_table(clustered)
        pinned = [r for r in table.rows if f.decided_end(r)]
        assert pinned, "this table has ties whose interval the decision ends at 0"
        for r in pinned:
            assert "tie" in r.verdict and min(abs(r.difference.low), abs(r.difference.high)) == 0
            shown = f.shown_difference(r, "recall@5")
            assert "[0.0*, +" in shown and shown.count("*") == 1
        for r in table.rows:
            if not f.decided_end(r):
                assert "*" not in f.shown_difference(r, "recall@5")
        assert f.decided_note(table.rows) == f.DECIDED_NOTE
        notes = terminal.family_notes(table.rows, table.rule, 6)
        assert notes[0] == f.DECIDED_NOTE
        caption = tables.Comparisons(table.rows, "recall@5", 1, 2000, table.rule)._caption()
        assert caption.endswith(f.DECIDED_NOTE)


def test_under_the_per_pair_rule_the_interval_is_the_decision_and_no_end_is_marked():
    table = _pinned_table(False, adjust="none")
    assert not any(f.decided_end(r) for r in table.rows)
    assert f.decided_note(table.rows) is None
    better = S(
        identical=False,
        p=0.001,
        difference=S(mean=0.1, low=5e-324, high=0.2),  # "better": stops just short of 0
    )
    assert f.decided_end(better)
    # printed as fmt_end prints it, never rounded onto 0, so it still excludes 0
    assert f.shown_difference(better, "recall@5") == "+10.0 [+4.9e-322*, +20.0]"


@pytest.mark.parametrize(
    ("name", "fam", "k", "scale"),
    [
        ("P_5", "precision", 5, (100, 1)),
        ("recall_100", "recall", 100, (100, 1)),
        ("success_10", "hit", 10, (100, 1)),
        ("ndcg_cut_10", "ndcg", 10, (1, 3)),
        ("map_cut_5", "map", 5, (1, 3)),
        ("map", "map", None, (1, 3)),
        ("recip_rank", "mrr", None, (1, 3)),
        ("Rprec", "rprec", None, (1, 3)),
        ("ndcg@10", "ndcg", 10, (1, 3)),
        ("words@5", "words", 5, (1, 0)),
    ],
)
def test_a_trec_eval_name_reads_as_its_family_in_every_rule(name, fam, k, scale):
    """trec_eval's names have the family, cutoff, share and scale of ragmeter's: one
    reading of a name (``scoring.names.metric_of``), no split on ``@``."""
    from ragmeter.scoring.names import cutoff, difference_scale, family, is_share

    assert (family(name), cutoff(name), f.metric_scale(name)) == (fam, k, scale)
    assert is_share(name) == (scale == (100, 1))
    assert difference_scale(name) == ((100, 1) if is_share(name) else (1, 3))


def test_every_rule_of_a_family_comes_from_its_row():
    """The families, their cutoff rules, trec_eval names, shares, costs and the report's
    titles and order are read off one table, so a family is added as one row."""
    from ragmeter.report.common import FAMILY_ORDER, FAMILY_TITLE
    from ragmeter.scoring import names

    rows = tuple(r for r in names.FAMILIES if r.half == "search")
    assert names.METRIC_NAMES == tuple(r.name for r in rows)
    assert set(names.SHARE_FAMILIES) == {r.name for r in rows if r.share}
    assert names.COST_FAMILIES == {r.name for r in rows if r.cost}
    assert names.NEEDS_K == {r.name for r in rows if r.cutoff == "always"}
    ordered = sorted((r for r in rows if r.order), key=lambda r: r.order or 0)
    assert tuple(r.name for r in ordered) == FAMILY_ORDER
    assert all(FAMILY_TITLE[r.name] == r.title for r in rows if r.order)
    for r in rows:
        if r.trec_cut:
            assert names.Metric.parse(r.trec_cut.format(k=7)) == names.Metric(r.name, 7)
        m = names.Metric(r.name) if r.cutoff == "never" else names.Metric(r.name, 3)
        assert f.metric_scale(m) == (r.scale, r.digits) and m.share == r.share


def test_a_header_names_the_level_the_estimates_share():
    assert f.level_label([None, {"confidence": 0.9}]) == "90%"  # a missing estimate skipped
    assert f.level_label([{"mean": 0.5}]) == "95%"  # saved without a level: made at 95%
    assert f.level_label([{"confidence": 0.9}, {"confidence": 0.95}]) == ""  # they differ
    assert f.level_label([]) == ""


def test_the_exact_footnote_names_the_cluster_aware_interval_when_it_is_one():
    exact = {"mean": 0.5, "low": 0.4, "high": 0.6, "exact": (0.3, 0.7)}
    assert f.exact_note([exact]) == f.EXACT_NOTE
    assert f.exact_note([{**exact, "method": "cluster-percentile"}]) == f.EXACT_CLUSTER_NOTE
    assert f.exact_note([{"mean": 0.5, "low": 0.4, "high": 0.6}]) is None


def test_a_bootstrap_half_width_is_the_recorded_one():
    # the sample-size rows record half the bootstrap's width; an exact interval's is its own
    assert f.shown_half_width({"mean": 0.5, "low": 0.4, "high": 0.7, "half_width": 0.1}) == 0.1
    exact = {"mean": 0.5, "low": 0.4, "high": 0.7, "half_width": 0.1, "exact": (0.2, 0.8)}
    assert f.shown_half_width(exact) == pytest.approx(0.3)


def test_printing_caps_end_at_twelve_digits_and_p_values_at_seventeen():
    assert f.fmt_end(3e-12, 1, 1) == "+0.000000000003"
    assert f.fmt_end(3e-13, 1, 1) == "+3.0e-13"  # past twelve digits: scientific
    just_under = 0.049999999999999996  # the double below 0.05: 17 digits tell it apart
    assert f.fmt_p(just_under, 0.05) == "0.049999999999999996"


def test_the_unresolved_note_says_it_for_one_interval_and_them_for_more():
    rule = S(adjust="maxt", interval="sign-flip", rounds=999, alpha=0.05, pairs=3)
    fine, coarse = S(level=0.05, identical=False), S(level=0.0001, identical=False)
    one = f.unresolved_note([fine, coarse], rule)
    assert one.startswith("1 of these intervals span") and "gave it (down to" in one
    assert "gives it ends" in one
    two = f.unresolved_note([coarse, coarse], rule)
    assert two.startswith("2 of these") and "gives them ends" in two
    assert f.unresolved_note([fine], rule) is None
    assert f.unresolved_note([coarse], S(**{**vars(rule), "adjust": "none"})) is None

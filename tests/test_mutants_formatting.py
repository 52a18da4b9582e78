"""How numbers are printed (ragmeter.formatting): scales, ends that never round onto 0,
p-values that never round across the level, and the comparison columns."""

from __future__ import annotations

from types import SimpleNamespace as S

from ragmeter import formatting as f


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

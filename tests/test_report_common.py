"""``ragmeter.report.common``: the report's defaults (50 questions a page, the top 5 items a
reader gets, a sample-size reading for +/- 4 points) and its numbers rounded to six
decimals."""

from __future__ import annotations

from ragmeter import stats
from ragmeter.report.common import _est
from ragmeter.report.data import report_data
from ragmeter.runs.results import Results
from ragmeter.stats import Estimate


def test_the_page_shows_50_questions_a_page_and_each_systems_top_5(example_results):
    example = Results(example_results)
    data = report_data(example)
    assert (data["page_size"], data["top"]) == (50, 5)
    lengths = {len(row) for q in data["questions"] for row in q["items"]}
    assert max(lengths) == 5  # the run keeps 10 a question; the page shows the reader's 5


def test_the_sample_size_reading_is_for_an_interval_of_4_points(example_results):
    example = Results(example_results)
    data = report_data(example)
    reading = data["sample_size"]
    assert reading["target"] == 0.04
    metric = data["metric"]
    for row in reading["systems"]:
        scores = example.scores(row["system"], metric)
        want = stats.questions_for_half_width(scores, 0.04, example.summary.confidence)
        assert row["needed"] == want


def test_the_pages_numbers_are_rounded_to_six_decimals():
    e = Estimate(
        mean=1 / 3,
        low=0.12345649,
        high=0.98765451,
        n=3,
        rounds=10,
        seed=1,
        method="percentile",
        rng="mulberry32",
    )
    out = _est(e, "mrr@5")
    assert (out["mean"], out["low"], out["high"]) == (0.333333, 0.123456, 0.987655)

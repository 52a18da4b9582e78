"""The history reads a recorded run's summary.json and scores.json through typed readers
(history.trend.SavedSummary, SavedScores); a key an older version did not write takes the
default of comparison.summary.Summary.from_json, the one place holding those defaults."""

from __future__ import annotations

import pytest

from ragmeter.comparison.summary import Summary
from ragmeter.errors import InputError
from ragmeter.history.trend import SavedScores, SavedSummary


def test_an_older_summary_gets_summary_s_defaults():
    saved = SavedSummary.from_json({})
    default = Summary.from_json({})
    assert (saved.seed, saved.rounds, saved.confidence, saved.method) == (
        default.seed,
        default.rounds,
        default.confidence,
        default.method,
    )
    assert (saved.seed, saved.rounds, saved.confidence, saved.method) == (
        1,
        10_000,
        0.95,
        "percentile",
    )
    assert saved.estimates == {} and saved.estimate("s", "recall@5") is None


def test_a_summary_s_own_settings_and_estimates_are_read_as_written():
    est = {"mean": 0.5, "low": 0.4, "high": 0.6}
    saved = SavedSummary.from_json(
        {
            "seed": 7,
            "rounds": 300,
            "confidence": 0.9,
            "method": "bca",
            "estimates": {"s": {"m": est}},
        }
    )
    assert (saved.seed, saved.rounds, saved.confidence, saved.method) == (7, 300, 0.9, "bca")
    assert saved.estimate("s", "m") is est and saved.estimate("s", "other") is None


def test_a_damaged_summary_is_one_line_naming_it():
    with pytest.raises(InputError, match="^history: run 3's summary.json: not a summary"):
        SavedSummary.from_json({"rounds": "many"}, "history: run 3's summary.json")


def test_scores_not_kept_read_as_empty():
    assert SavedScores.from_json({}) == SavedScores([], {})
    kept = SavedScores.from_json({"questions": ["q1", 2], "values": {"s": {"m": [1.0, 0.0]}}})
    assert kept.questions == ["q1", "2"] and kept.values == {"s": {"m": [1.0, 0.0]}}

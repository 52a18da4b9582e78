"""The report's first screen: a headline that states what the best system costs and sums
up the ties, a strategy x retriever grid, capped ks marked, and answer figures at the
reader's k over the answered questions only."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import save_example

pytest.importorskip("altair", reason="the HTML report needs the 'report' extra (altair)")
pytest.importorskip("vl_convert", reason="the HTML report needs the 'report' extra (vl-convert)")

from ragmeter.inputs.config import Config  # noqa: E402
from ragmeter.report.html import (  # noqa: E402
    headline_extras,
    report_data,
    strategy_grid,
    write_report,
)
from ragmeter.runs.pipeline import run_search  # noqa: E402
from ragmeter.runs.results import Results, save_results  # noqa: E402


def est(mean):
    return {"mean": mean, "low": mean - 0.05, "high": mean + 0.05}


def comparison(a, b, verdict, winner=None):
    return {"a": a, "b": b, "verdict": verdict, "winner": winner, "difference": est(0.0)}


ESTIMATES = {
    "whole": {"recall@5": est(0.95), "words@5": est(3300)},
    "parent": {"recall@5": est(0.90), "words@5": est(1700)},
    "recursive": {"recall@5": est(0.88), "words@5": est(830)},
    "fixed": {"recall@5": est(0.70), "words@5": est(900)},
}


def test_headline_names_the_cost_and_the_cheapest_system_not_below_the_best():
    comparisons = [
        comparison("whole", "parent", "tie (interval crosses 0)"),
        comparison("whole", "recursive", "tie (interval crosses 0)"),
        comparison("whole", "fixed", "whole better", "whole"),
        comparison("parent", "recursive", "tie (interval crosses 0)"),
        comparison("parent", "fixed", "parent better", "parent"),
        comparison("recursive", "fixed", "recursive better", "recursive"),
    ]
    h = headline_extras(list(ESTIMATES), ESTIMATES, comparisons, "recall@5", 5)
    assert h["words_key"] == "words@5" and h["next"] == "parent"
    assert h["not_below_best"] == ["parent", "recursive"]
    assert h["cheapest_tied"] == "recursive"  # not below the best, and 830 words against 3,300
    assert (h["tie_count"], h["pair_count"]) == (3, 6)
    # Ties with the best come first among the few named.
    assert h["named_ties"] == [["whole", "parent"], ["whole", "recursive"], ["parent", "recursive"]]


def test_verdicts_are_read_as_they_are_not_re_derived():
    # The interval of this difference excludes 0, but the comparison decided a tie (no
    # winner): the headline follows the decision, not the interval nor the verdict's words.
    c = comparison("whole", "parent", "tie (after Holm)")
    c["difference"] = {"mean": 0.05, "low": 0.01, "high": 0.09}
    two = {k: ESTIMATES[k] for k in ("whole", "parent")}
    h = headline_extras(list(two), two, [c], "recall@5", 5)
    assert h["tie_count"] == 1 and h["not_below_best"] == ["parent"]
    c["verdict"] = "tie (the words are not read)"
    c["winner"] = "whole"
    h = headline_extras(list(two), two, [c], "recall@5", 5)
    assert h["tie_count"] == 0 and h["not_below_best"] == [] and h["cheapest_tied"] is None


def test_next_best_is_another_strategy_when_retrievers_are_crossed():
    estimates = {
        "whole/bm25": ESTIMATES["whole"],
        "whole/dense": {"recall@5": est(0.94), "words@5": est(3300)},
        "parent/bm25": ESTIMATES["parent"],
    }
    h = headline_extras(list(estimates), estimates, [], "recall@5", 5)
    assert h["next"] == "parent/bm25"


def test_grid_only_with_several_retrievers():
    def system(strategy, retriever):
        return {
            "name": f"{strategy}/{retriever}",
            "strategy": {"name": strategy},
            "retriever": {"name": retriever},
        }

    assert strategy_grid([system("a", "bm25"), system("b", "bm25")]) is None
    grid = strategy_grid([system("a", "bm25"), system("a", "dense"), system("b", "bm25")])
    assert grid == {
        "strategies": ["a", "b"],
        "retrievers": ["bm25", "dense"],
        "cells": [["a/bm25", "a/dense"], ["b/bm25", None]],
    }


def test_answer_figures_use_the_readers_k_and_the_answered_questions(example_results_copy):
    results = example_results_copy
    res = Results(results)
    answered = res.question_ids[::3]  # a third of the questions were answered
    (results / "answers").mkdir()
    (results / "answers" / "meta.json").write_text(json.dumps({"judges": ["j"], "k": 2}))
    with (results / "answers" / "answers.jsonl").open("w") as fh:
        for s in res.systems:
            for q in answered:
                fh.write(json.dumps({"system": s, "question": q, "answer": "x",
                                     "grades": {"j": "correct"}}) + "\n")  # fmt: skip
    answers = report_data(Results(results))["optional"]["answers"]
    assert answers["k"] == 2 and answers["hit_metric"] == "recall@2"
    for row, cross in zip(answers["accuracy"], answers["cross"], strict=True):
        hits = [any(it.grade >= 2 for it in res.runs[row["system"]][q][:2]) for q in answered]
        assert row["n"] == len(answered)
        assert row["found"]["mean"] == pytest.approx(np.mean(hits), abs=1e-6)
        assert sum(cross["table"]["found"].values()) == sum(hits)
        assert sum(sum(t.values()) for t in cross["table"].values()) == len(answered)


def test_capped_ks_reach_the_report(tmp_path):
    sys.path.insert(0, str(Path(__file__).parent))
    from test_small_corpora import write_case

    write_case(tmp_path, 2)
    cfg = Config(
        corpus=str(tmp_path / "docs"),
        testset=str(tmp_path / "questions.jsonl"),
        strategies=("fixed", "sentence"),
        rounds=200,
    )
    out = save_results(run_search(cfg), tmp_path / "r")
    data = report_data(Results(out))
    assert data["k_capped"] == {"fixed": 2, "sentence": 2}
    html = write_report(out).read_text(encoding="utf-8")
    assert "k capped at the system" in html  # the footnote's words are in the page script


# --------------------------------------------------------------------------- in a browser


@pytest.mark.parametrize("retrievers", [1, 2])
def test_the_first_screen_holds_twelve_systems(tmp_path, retrievers):
    # The browser helpers skip themselves without selenium, chromium or its driver.
    browser = pytest.importorskip("test_report_browser")
    if not (Path(browser.CHROMIUM).exists() and Path(browser.CHROMEDRIVER).exists()):
        pytest.skip("needs chromium: apt-get install -y chromium chromium-driver")
    custom = [
        {"name": f"{kind}-{size}", "kind": kind, "size": size}
        for kind in ("fixed", "sentence", "recursive")
        for size in (100, 300)
    ]
    names = ("whole", "fixed", "overlap", "sentence", "recursive", "parent-400")
    if retrievers == 1:
        names = names + tuple(c["name"] for c in custom)
    out = save_example(
        tmp_path / "r",
        strategies=names,
        custom_strategies=tuple(custom),
        retrievers=("bm25",)
        if retrievers == 1
        else ("bm25", {"name": "bm25-k09", "kind": "bm25", "k1": 0.9}),
    )
    assert len(Results(out).systems) == 12
    report = write_report(out)
    driver = browser.make_driver(tmp_path / "profile")
    try:
        browser.open_report(driver, report)
        first = "grid-table" if retrievers == 2 else "summary-table"
        bottom, height, headline = driver.execute_script(
            f"const r = document.getElementById('{first}').getBoundingClientRect();"
            "return [r.bottom, window.innerHeight, document.getElementById('headline').textContent]"
        )
        driver.save_screenshot(str(tmp_path / "first-screen.png"))
    finally:
        driver.quit()
    assert bottom <= height, f"the summary ends at {bottom}px, below the {height}px screen"
    assert "no system beats any of these on both" in headline
    assert "3,322 words" in headline
    if retrievers == 1:
        assert "Highest on recall@5: whole at" in headline
        assert "Next highest: parent-400" in headline and "more words" in headline
    else:  # the two retrievers score the same at the top: named as a tie, not one best
        assert "Highest on recall@5, tied: whole/bm25 and whole/bm25-k09" in headline
    assert "paired comparisons are ties" in headline


def test_frontier_names_every_system_no_other_beats_on_both_and_ties_at_the_top():
    estimates = {
        "whole": {"recall@5": est(0.97), "words@5": est(3322)},
        "parent": {"recall@5": est(0.90), "words@5": est(1718)},
        "recursive": {"recall@5": est(0.80), "words@5": est(835)},
        "sentence": {"recall@5": est(0.80), "words@5": est(885)},  # beaten: same, more words
        "small": {"recall@5": est(0.72), "words@5": est(849)},  # beaten by recursive
        "twin": {"recall@5": est(0.97), "words@5": est(3322)},  # ties whole on both
    }
    comparisons = [
        comparison("whole", "twin", "identical"),
        comparison("whole", "parent", "tie (interval includes 0)"),
        comparison("whole", "recursive", "whole better", "whole"),
    ]
    comparisons[0]["identical"] = True
    h = headline_extras(list(estimates), estimates, comparisons, "recall@5", 5)
    assert h["frontier"] == ["recursive", "parent", "whole", "twin"]
    assert h["top"] == ["whole", "twin"]
    # The identical pair is not one of the compared pairs, as the rule counts them.
    assert (h["tie_count"], h["pair_count"], h["identical_count"]) == (1, 2, 1)


def test_the_report_s_main_cutoff_is_the_terminal_s_for_ks_without_5(tmp_path):
    # ks 1, 3 and 10 and a measure without a cutoff: the terminal shows k = 3 (5, else
    # the largest k below 5); the report once picked 10 by a rule of its own
    from ragmeter.scoring.names import shown_cutoffs

    path = save_example(tmp_path / "run", 8, strategies=("sentence",), ks=(1, 3, 10), metric="map")
    res = Results(path)
    data = report_data(res)
    assert shown_cutoffs(res.metrics) == (10, 3)
    assert data["main_k"] == 3
    assert data["hit_metric"] == "recall@3"

"""The report shows where each system ranks as the terminal does: the headline's sentence
from the run's ranks, and a table of each system's mean, rank range and group letters
under the paired comparisons, every text read from the data (nothing formatted in the
page)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("altair", reason="the HTML report needs the 'report' extra (altair)")
pytest.importorskip("vl_convert", reason="the HTML report needs the 'report' extra (vl-convert)")

from ragmeter.report.html import report_data, write_report  # noqa: E402
from ragmeter.runs.results import Results  # noqa: E402


def test_the_report_data_carries_the_summary_s_ranks(example_results):
    res = Results(example_results)
    data = report_data(res)
    assert data["ranks"] == res.summary.ranks.to_dict()
    assert data["headline"]["ranks"] == res.summary.ranks.sentence


def test_the_page_shows_the_ranks_in_the_headline_and_under_the_comparisons(
    example_results, tmp_path
):
    browser = pytest.importorskip("test_report_browser")
    if not (Path(browser.CHROMIUM).exists() and Path(browser.CHROMEDRIVER).exists()):
        pytest.skip("needs chromium: apt-get install -y chromium chromium-driver")
    ranks = Results(example_results).summary.ranks
    report = write_report(example_results, tmp_path / "report.html")
    driver = browser.make_driver(tmp_path / "profile")
    try:
        browser.open_report(driver, report)
        headline = driver.execute_script(
            "return document.getElementById('headline-ranks').textContent"
        )
        title = driver.execute_script("return document.getElementById('ranks').textContent")
        cells = driver.execute_script(
            "return [...document.querySelectorAll('#ranks-table tbody tr')]"
            ".map((r) => [...r.children].map((c) => c.textContent))"
        )
        assert not browser.severe(driver)
    finally:
        driver.quit()
    assert f"By the verdicts on recall@5: {ranks.sentence}" in headline
    assert title == f"Ranks on recall@5: {ranks.sentence}"
    assert cells == [
        [r.system, ranks.shown_mean(r.system), r.shown, ranks.letters(r.system)]
        for r in ranks.ranges
    ]


def test_the_answer_section_carries_each_measure_s_ranks(example_results_copy):
    from test_answers_paired import write_grades

    from ragmeter.answers.failure_counts import load_answers
    from ragmeter.answers.paired import answer_verdicts
    from ragmeter.report.sections import answer_verdict_data

    n = len(Results(example_results_copy).question_ids)
    grades = {"whole": "c" * n, "sentence": "cw" * (n // 2) + "c" * (n % 2), "recursive": "w" * n}
    write_grades(example_results_copy, grades)
    data = answer_verdict_data(load_answers(example_results_copy), None)
    v = answer_verdicts(example_results_copy)
    assert [t["ranks"] for t in data["tables"]] == [r.to_dict() for r in v.ranks.values()]
    assert data["tables"][0]["ranks"]["sentence"] == (
        "whole ahead of every other system; recursive below all"
    )


def test_the_page_shows_the_answers_ranks_under_each_measure(example_results_copy, tmp_path):
    browser = pytest.importorskip("test_report_browser")
    if not (Path(browser.CHROMIUM).exists() and Path(browser.CHROMEDRIVER).exists()):
        pytest.skip("needs chromium: apt-get install -y chromium chromium-driver")
    from test_answers_paired import write_grades

    from ragmeter.answers.paired import answer_verdicts

    n = len(Results(example_results_copy).question_ids)
    grades = {"whole": "c" * n, "sentence": "cw" * (n // 2) + "c" * (n % 2), "recursive": "w" * n}
    write_grades(example_results_copy, grades)
    ranks = answer_verdicts(example_results_copy).ranks
    report = write_report(example_results_copy, tmp_path / "report.html")
    driver = browser.make_driver(tmp_path / "profile")
    try:
        browser.open_report(driver, report)
        shown = driver.execute_script(
            "return [0, 1].map((i) => [document.getElementById('answer-ranks-' + i).textContent,"
            "[...document.querySelectorAll('#answer-ranks-' + i + '-table tbody tr')]"
            ".map((r) => r.children[2].textContent)])"
        )
    finally:
        driver.quit()
    for (title, cells), (measure, r) in zip(shown, ranks.items(), strict=True):
        assert title == f"Ranks on {measure}: {r.sentence}"
        assert cells == [x.shown for x in r.ranges]

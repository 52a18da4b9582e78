"""The report's answer-failure section in headless Chromium: the table, the drill-down
to an answer beside its passage with the numbers marked, and hostile answers kept as text.

Needs Debian's ``chromium`` and ``chromium-driver`` and ``selenium`` (skipped otherwise),
like ``test_report_browser.py``, whose driver it uses.
"""

from __future__ import annotations

import pytest
from conftest import require

require("altair", "the HTML report needs the 'report' extra")
webdriver = require("selenium.webdriver", "pip install selenium")

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402
from test_answer_failures import judge  # noqa: E402
from test_answers import Scripted, question_of  # noqa: E402
from test_report_browser import driver, open_report, severe  # noqa: E402, F401

from ragmeter.answers import answer_questions, grade_answers  # noqa: E402
from ragmeter.report.html import write_report  # noqa: E402
from ragmeter.runs.results import Results  # noqa: E402

HOSTILE = '<img src=x onerror="window.__pwned=true">'


@pytest.fixture
def report(small_example_results_copy, tmp_path):
    path = small_example_results_copy
    refs = {q.text: q for q in Results(path).questions}

    def respond(prompt: str) -> str:
        q = refs[question_of(prompt)]
        if q.id == "q002":
            return f"About 8% <i>in all</i>. {HOSTILE}"  # a plain part, then an unsupported one
        return " ".join(a.text for a in q.answers)

    answer_questions(path, Scripted("reader", respond))
    grade_answers(path, [Scripted("lenient", judge())])
    return write_report(path, tmp_path / "report.html")


def test_failure_table_drills_down_to_marked_numbers(report, driver):  # noqa: F811
    open_report(driver, report)
    assert driver.find_element(By.ID, "failures").is_displayed()
    assert driver.find_elements(By.CSS_SELECTOR, "#nav a[href='#failures']")
    cell = driver.find_element(
        By.CSS_SELECTOR,
        "#failures-table button[data-system='sentence'][data-kind='number_changed']",
    )
    assert cell.text.startswith("1: ")
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", cell)
    cell.click()
    WebDriverWait(driver, 5).until(
        lambda d: len(d.find_elements(By.CSS_SELECTOR, "#failure-cases .failcase")) == 1
    )
    case = driver.find_element(By.CSS_SELECTOR, "#failure-cases .failcase")
    assert case.get_attribute("data-question") == "q002"
    assert [m.text for m in case.find_elements(By.CSS_SELECTOR, ".answerbox mark.f-changed")] == [
        "8%"
    ]
    missing = case.find_elements(By.CSS_SELECTOR, ".passage mark.f-missing")
    assert [m.text for m in missing] == ["0.8%"]
    given = case.find_elements(By.CSS_SELECTOR, ".passage mark.f-number")
    assert [m.text for m in given] == ["10", "7"]  # the question gives them
    assert HOSTILE in case.find_element(By.CSS_SELECTOR, ".answerbox").text  # shown as text
    link = case.find_element(By.CSS_SELECTOR, "a[href='#q/q002']")
    assert link.text == "q002"
    assert "<i>in all</i>" in case.find_element(By.CSS_SELECTOR, ".answerbox").text
    assert driver.execute_script("return document.querySelectorAll('img, .failcase i').length") == 0
    assert driver.execute_script("return typeof window.__pwned") == "undefined"

    # the selects narrow and widen the list
    kind = driver.find_element(By.ID, "failure-kind")
    driver.execute_script(
        "arguments[0].value = ''; arguments[0].dispatchEvent(new Event('change'))", kind
    )
    shown = driver.find_elements(By.CSS_SELECTOR, "#failure-cases .failcase")
    count = driver.find_element(By.ID, "failure-count").text
    assert len(shown) >= 1 and count.startswith(f"{len(shown)} answer")
    assert all(c.get_attribute("data-system") == "sentence" for c in shown)
    assert severe(driver) == []

"""The report's run-history section in headless Chromium, offline: the trend chart with
its interval band draws, the runs table lists the paired changes, and the section's one
select picks the system of both the table and the chart."""

from __future__ import annotations

import pytest
from conftest import require, require_file

require("altair", "the HTML report needs the 'report' extra")
require("vl_convert", "the HTML report needs the 'report' extra")
require("selenium.webdriver", "pip install selenium")

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402
from test_history_report import build_recorded  # noqa: E402
from test_report_browser import (  # noqa: E402
    CHROMEDRIVER,
    CHROMIUM,
    make_driver,
    open_report,
    severe,
)

from ragmeter.report.html import write_report  # noqa: E402

for _binary in (CHROMIUM, CHROMEDRIVER):
    require_file(_binary, "apt-get install -y chromium chromium-driver")


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    return build_recorded(tmp_path_factory.mktemp("history-report"))


@pytest.fixture
def driver(tmp_path):
    d = make_driver(tmp_path / "profile")
    try:
        yield d
    finally:
        d.quit()


def test_history_section_renders(recorded, driver, tmp_path, monkeypatch):
    folder, runs = recorded
    monkeypatch.setenv("RAGMETER_HISTORY", str(folder))
    report = write_report(runs[2], tmp_path / "report.html")
    open_report(driver, report)

    section = driver.find_element(By.ID, "history")
    assert section.is_displayed()
    assert "History" in [a.text for a in driver.find_elements(By.CSS_SELECTOR, "#nav a")]
    host = driver.find_element(By.ID, "chart-history")
    assert host.get_attribute("data-state") == "rendered"
    drawn = host.find_elements(By.CSS_SELECTOR, "svg.marks")
    assert drawn and drawn[0].size["width"] > 300
    # the interval band, the line of means and one point per run
    assert host.find_elements(By.CSS_SELECTOR, "g.mark-area path")
    assert host.find_elements(By.CSS_SELECTOR, "g.mark-line path")
    assert len(host.find_elements(By.CSS_SELECTOR, "g.mark-symbol.role-mark path")) == 3

    # the table starts on the run's best system (sentence: unchanged, every change a tie)
    cells = "#history-table tbody tr td:last-child"
    assert all("tie" in c.text for c in driver.find_elements(By.CSS_SELECTOR, cells)[:2])
    # one system select for the section: it picks the table's system and the chart's
    assert len(section.find_elements(By.TAG_NAME, "select")) == 1
    drawn_line = "g.mark-line path"
    before = host.find_element(By.CSS_SELECTOR, drawn_line).get_attribute("d")
    Select(driver.find_element(By.ID, "history-system")).select_by_value("mine")
    WebDriverWait(driver, 5).until(
        lambda d: (
            "first run" not in d.find_element(By.CSS_SELECTOR, cells).text
            and "tie" not in d.find_element(By.CSS_SELECTOR, cells).text
            and host.find_element(By.CSS_SELECTOR, drawn_line).get_attribute("d") != before
        )
    )
    rows = driver.find_elements(By.CSS_SELECTOR, "#history-table tbody tr")
    assert len(rows) == 3  # newest first
    first = rows[0].find_elements(By.TAG_NAME, "td")
    assert first[0].text == "4 (this run)" and first[1].text == "ddddddd"
    assert first[5].text.startswith("-") and first[5].text.endswith("from run 2")
    assert first[6].text == "#2 better"  # tiny chunks lost to the run before
    assert "verdict-worse" in first[6].get_attribute("class")
    second = rows[1].find_elements(By.TAG_NAME, "td")
    assert second[6].text == "#2 better" and "verdict-better" in second[6].get_attribute("class")
    assert rows[2].find_elements(By.TAG_NAME, "td")[6].text == "first run"
    assert severe(driver) == []


def test_no_history_no_section(recorded, driver, tmp_path, monkeypatch):
    _, runs = recorded
    monkeypatch.setenv("RAGMETER_HISTORY", str(tmp_path / "empty"))
    report = write_report(runs[2], tmp_path / "report.html")
    open_report(driver, report)
    assert not driver.find_element(By.ID, "history").is_displayed()
    assert driver.find_element(By.ID, "chart-history").get_attribute("hidden") is not None
    assert severe(driver) == []

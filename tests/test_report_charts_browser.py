"""The report's charts as drawn in headless Chromium at 1366x768, with 3 and with 18
systems: no two point labels overlap, every mark sits inside its plot, the sample-size
axis stops near the data, and the sticky header hides what scrolls beneath it.

Set ``RAGMETER_SCREENSHOTS`` to a folder to keep a screenshot of each chart.
"""

from __future__ import annotations

import itertools
import os
import re
from pathlib import Path

import pytest
from conftest import require
from report_systems import example_results

require("altair", "the HTML report needs the 'report' extra")
require("vl_convert", "the HTML report needs the 'report' extra")
require("selenium.webdriver", "pip install selenium")

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import Select  # noqa: E402
from test_report_browser import CHART_IDS, make_driver, open_report, severe  # noqa: E402
from test_report_html import build_hostile_results  # noqa: E402

from ragmeter.report.data import report_data  # noqa: E402
from ragmeter.report.html import write_report  # noqa: E402

WIDTH, HEIGHT = 1366, 768


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    d = make_driver(tmp_path_factory.mktemp("profile"))
    d.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": WIDTH, "height": HEIGHT, "deviceScaleFactor": 1, "mobile": False},
    )
    try:
        yield d
    finally:
        d.quit()


@pytest.fixture(scope="module", params=[3, 18])
def report(request, tmp_path_factory) -> tuple[int, Path]:
    root = tmp_path_factory.mktemp(f"report{request.param}")
    return request.param, write_report(example_results(root, request.param))


@pytest.fixture(scope="module")
def full_marks(tmp_path_factory) -> Path:
    """A report where every system finds every passage: every dot at 100."""
    return write_report(build_hostile_results(tmp_path_factory.mktemp("full")))


@pytest.fixture(scope="module")
def one_at_100(tmp_path_factory) -> Path:
    """The 3-system report with whole's shares set to 100 [95, 100]: one dot at 100
    among others lower."""
    from ragmeter.report import page

    def full(*args, **kwargs):
        data = report_data(*args, **kwargs)
        for m, e in data["estimates"]["whole"].items():
            if m.partition("@")[0] in ("recall", "hit", "coverage"):
                e.update(mean=1.0, low=0.95, high=1.0)
        return data

    results = example_results(tmp_path_factory.mktemp("at100"), 3)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(page, "report_data", full)
        return write_report(results)


RECTS = """
return Array.from(document.querySelectorAll(arguments[0])).map((e) => {
  const r = e.getBoundingClientRect();
  return {text: e.textContent, x0: r.left, y0: r.top, x1: r.right, y1: r.bottom};
});
"""

# Each mark of the charts' plots with the plot it sits in: the nearest enclosing
# group's background (a facet's cell, or the single view's frame).
MARKS_IN_PLOTS = """
const out = [];
document.querySelectorAll(arguments[0] + " g.role-mark path").forEach((mark) => {
  let g = mark.parentElement, frame = null;
  while (g && !frame) {
    const bg = Array.from(g.children).find((c) => c.matches("path.background"));
    if (bg && bg.getBoundingClientRect().width > 0) frame = bg;
    g = g.parentElement;
  }
  const m = mark.getBoundingClientRect(), f = frame.getBoundingClientRect();
  if (m.width === 0 && m.height === 0) return;
  out.push({cls: mark.parentElement.getAttribute("class"), m: [m.left, m.top, m.right, m.bottom],
            f: [f.left, f.top, f.right, f.bottom]});
});
return out;
"""


def _overlap(a: dict, b: dict, slack: float = 0.5) -> bool:
    return (
        a["x0"] + slack < b["x1"]
        and b["x0"] + slack < a["x1"]
        and a["y0"] + slack < b["y1"]
        and b["y0"] + slack < a["y1"]
    )


def _keep(driver, name: str) -> None:
    keep = os.environ.get("RAGMETER_SCREENSHOTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        assert driver.save_screenshot(str(Path(keep) / name))


def _show(driver, cid: str) -> None:
    driver.execute_script(
        "const h = document.getElementById(arguments[0]); h.scrollIntoView({block: 'start'});"
        "window.scrollBy(0, -document.querySelector('header.top').offsetHeight - 8);",
        cid,
    )


def test_point_labels_do_not_overlap(browser, report):
    systems, path = report
    open_report(browser, path)
    _show(browser, "chart-words")
    _keep(browser, f"report-{systems}-words.png")
    labels = browser.execute_script(RECTS, "#chart-words g.role-mark.mark-text text")
    names = browser.execute_script(
        "return JSON.parse(document.getElementById('ragmeter-data').textContent)"
        ".systems.map((s) => s.name)"
    )
    assert len(names) == systems
    assert sorted(x["text"] for x in labels) == sorted(names)  # each named in full, once
    for a, b in itertools.combinations(labels, 2):
        assert not _overlap(a, b), (a, b)
    points = browser.execute_script(RECTS, "#chart-words g.role-mark.mark-symbol path")
    assert len(points) == systems
    for label in labels:  # no label covers a point
        for p in points:
            assert not _overlap(label, p, slack=1.0), (label, p)
    assert severe(browser) == []


def _inside(marks: list[dict], slack: float = 0.5) -> list[dict]:
    return [
        x
        for x in marks
        if x["m"][0] < x["f"][0] - slack
        or x["m"][1] < x["f"][1] - slack
        or x["m"][2] > x["f"][2] + slack
        or x["m"][3] > x["f"][3] + slack
    ]


def test_every_mark_sits_inside_its_plot(browser, report):
    systems, path = report
    open_report(browser, path)
    for cid in ("chart-words", "chart-size", "chart-forest"):
        marks = browser.execute_script(MARKS_IN_PLOTS, f"#{cid}")
        symbols = [x for x in marks if "mark-symbol" in x["cls"]]
        assert symbols, cid
        outside = _inside(symbols)
        assert outside == [], (cid, outside[:3])


@pytest.mark.parametrize("which", ["one_at_100", "full_marks"])
def test_dots_at_100_are_not_clipped(browser, which, request):
    open_report(browser, request.getfixturevalue(which))
    select = Select(browser.find_element(By.CSS_SELECTOR, "#chart-forest select"))
    for k in [o.get_attribute("value") for o in select.options]:
        select.select_by_value(k)
        marks = browser.execute_script(MARKS_IN_PLOTS, "#chart-forest")
        assert marks and _inside(marks) == [], (k, _inside(marks)[:3])
    marks = browser.execute_script(MARKS_IN_PLOTS, "#chart-words")
    assert marks and _inside(marks) == []


def test_sample_size_axis_stops_near_the_data(browser, report):
    systems, path = report
    open_report(browser, path)
    _show(browser, "chart-size")
    _keep(browser, f"report-{systems}-size.png")
    ticks = browser.execute_script(
        "return Array.from(document.querySelectorAll("
        "'#chart-size g.role-axis-label text')).map((t) => t.textContent)"
    )
    values = [float(t.replace(",", "")) for t in ticks if t.replace(",", "").isdigit()]
    assert values and max(values) <= 2000, ticks  # the data stops near 1,400
    legend = browser.execute_script(RECTS, "#chart-size g.role-legend-label text")
    assert len(legend) == systems


def test_sticky_header_hides_what_scrolls_beneath(browser, report):
    systems, path = report
    open_report(browser, path)
    header = browser.find_element(By.CSS_SELECTOR, "header.top")
    colour = browser.execute_script("return getComputedStyle(arguments[0]).backgroundColor", header)
    assert colour in ("rgb(255, 255, 255)", "rgba(255, 255, 255, 1)"), colour
    # scroll a chart's menu button up under the header: the header is what shows there
    button = browser.find_element(By.CSS_SELECTOR, "#chart-words summary")
    browser.execute_script(
        "const b = arguments[0], h = document.querySelector('header.top');"
        "window.scrollBy(0, b.getBoundingClientRect().top - h.offsetHeight / 2);",
        button,
    )
    hit = browser.execute_script(
        "const r = arguments[0].getBoundingClientRect();"
        "const e = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);"
        "return [r.top, e && e.closest('header.top') !== null];",
        button,
    )
    assert hit[0] < header.size["height"] and hit[1], hit
    if systems == 18:
        _show(browser, "chart-forest")
        _keep(browser, "report-18-forest.png")


# ------------------------------------------------------------------ tables and labels

SYSTEM_NAMES = (
    "return JSON.parse(document.getElementById('ragmeter-data').textContent)"
    ".systems.map((s) => s.name)"
)


def test_the_verdict_column_is_in_view(browser, report):
    systems, path = report
    open_report(browser, path)
    _show(browser, "compare-table")
    _keep(browser, f"report-{systems}-compare-table.png")
    got = browser.execute_script(
        "const t = document.getElementById('compare-table');"
        "const heads = Array.from(t.querySelectorAll('thead th'));"
        "const at = heads.findIndex((h) => h.textContent === 'verdict');"
        "const cells = [heads[at]].concat(Array.from(t.querySelectorAll('tbody tr'))"
        "  .map((r) => r.children[at]));"
        "return {at: at, width: document.documentElement.clientWidth,"
        "  rows: t.querySelectorAll('tbody tr').length,"
        "  scrolled: t.parentNode.scrollWidth - t.parentNode.clientWidth,"
        "  box: t.parentNode.getBoundingClientRect().right,"
        "  right: Math.max.apply(null, cells.map((c) => c.getBoundingClientRect().right))};"
    )
    assert got["at"] > 0 and got["rows"] == systems * (systems - 1) // 2, got
    # its right edge inside the 1366-pixel viewport and inside the table's scroll box
    # (what lies past the box is hidden until scrolled)
    assert got["right"] <= min(got["width"], got["box"]), got
    assert got["scrolled"] <= 0, got  # nothing of the table hidden to the right


# Every table cell and header that holds exactly a system's name, with the number of
# lines its text takes.
NAME_LINES = """
const names = new Set(arguments[0]);
const out = [];
document.querySelectorAll("table td, table th").forEach((cell) => {
  const text = cell.textContent;
  if (!names.has(text) || !cell.getClientRects().length) return;
  const range = document.createRange();
  range.selectNodeContents(cell);
  const tops = new Set(Array.from(range.getClientRects()).map((r) => Math.round(r.top)));
  out.push({table: cell.closest("table").id, text: text, lines: tops.size});
});
return out;
"""


def test_no_system_name_breaks_across_lines(browser, report):
    systems, path = report
    open_report(browser, path)
    names = browser.execute_script(SYSTEM_NAMES)
    cells = browser.execute_script(NAME_LINES, names)
    tables = {c["table"] for c in cells}
    assert {"summary-table", "hit-table", "measures-table", "compare-table"} <= tables
    assert len(cells) >= 4 * systems
    broken = [c for c in cells if c["lines"] != 1]
    assert broken == [], broken[:5]


# Every text drawn in a chart, with its box and its chart's box.
CHART_TEXTS = """
const out = [];
document.querySelectorAll(".chart svg.marks").forEach((svg) => {
  const s = svg.getBoundingClientRect();
  svg.querySelectorAll("text").forEach((t) => {
    const r = t.getBoundingClientRect();
    if (!t.textContent || r.width === 0) return;
    out.push({chart: svg.closest(".chart").id, text: t.textContent,
              box: [r.left, r.top, r.right, r.bottom], svg: [s.left, s.top, s.right, s.bottom]});
  });
});
return out;
"""


def test_no_chart_label_is_cut(browser, report):
    systems, path = report
    open_report(browser, path)
    _show(browser, "chart-compare")
    _keep(browser, f"report-{systems}-compare.png")
    texts = browser.execute_script(CHART_TEXTS)
    assert {t["chart"] for t in texts} >= set(CHART_IDS)
    cut = [t["text"] for t in texts if t["text"].endswith("…")]
    assert cut == []
    outside = [
        t
        for t in texts
        if t["box"][0] < t["svg"][0] - 0.5
        or t["box"][1] < t["svg"][1] - 0.5
        or t["box"][2] > t["svg"][2] + 0.5
        or t["box"][3] > t["svg"][3] + 0.5
    ]
    assert outside == [], outside[:3]
    # every pair named in full in the comparison chart, every system in the legend
    data = browser.execute_script(
        "return JSON.parse(document.getElementById('ragmeter-data').textContent)"
    )
    pairs = {f"{c['a']} − {c['b']}" for c in data["comparisons"]}
    shown = {t["text"] for t in texts if t["chart"] == "chart-compare"}
    assert pairs <= shown, sorted(pairs - shown)[:3]
    legend = browser.execute_script(RECTS, "#chart-size g.role-legend-label text")
    assert sorted(x["text"] for x in legend) == sorted(s["name"] for s in data["systems"])


# Each system's look in a chart: the colour and the marker's outline of every legend
# entry (the sample-size chart) or point (the words chart).
LOOKS = """
return Array.from(document.querySelectorAll(arguments[0])).map((p) => {
  const style = getComputedStyle(p);
  const paint = style.fill !== "none" ? style.fill : style.stroke;
  return {colour: paint, shape: p.getAttribute("d")};
});
"""


def _shape_kind(d: str) -> str:
    """A marker's outline without where it is drawn: its path commands."""
    return re.sub(r"[-\d.,\s]+", " ", d).strip()


def test_every_series_has_its_own_colour_and_marker(browser, report):
    systems, path = report
    open_report(browser, path)
    legend = browser.execute_script(LOOKS, "#chart-size g.role-legend-symbol path")
    points = browser.execute_script(LOOKS, "#chart-words g.points_marks path")
    for looks in (legend, points):
        assert len(looks) == systems
        assert len({x["colour"] for x in looks}) == systems, looks  # colours distinct
        pairs = {(x["colour"], _shape_kind(x["shape"])) for x in looks}
        assert len(pairs) == systems
    if systems == 18:  # past ten, another marker too
        assert len({_shape_kind(x["shape"]) for x in legend}) == 2

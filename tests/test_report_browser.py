"""The HTML report in headless Chromium, offline: it draws, it drills down, it runs nothing.

Needs Debian's ``chromium`` and ``chromium-driver`` and the ``selenium`` package;
skipped with the reason when any is missing.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest
from conftest import require, require_file, save_example

require("altair", "the HTML report needs the 'report' extra")
require("vl_convert", "the HTML report needs the 'report' extra")
webdriver = require("selenium.webdriver", "pip install selenium")

from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402
from test_report_html import (  # noqa: E402
    HOSTILE_IMG,
    HOSTILE_SCRIPT,
    build_hostile_results,
    embedded_data,
)

from ragmeter.report.html import write_report  # noqa: E402

CHROMIUM = os.environ.get("RAGMETER_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("RAGMETER_CHROMEDRIVER", "/usr/bin/chromedriver")

for _binary in (CHROMIUM, CHROMEDRIVER):
    require_file(_binary, "apt-get install -y chromium chromium-driver")

CHART_IDS = ("chart-forest", "chart-words", "chart-compare", "chart-size")


def make_driver(profile: Path):
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--disable-extensions",
        "--window-size=1280,900",
        # Any request that leaves the machine goes to a closed local port.
        "--proxy-server=127.0.0.1:9",
        "--proxy-bypass-list=<-loopback>",
        f"--user-data-dir={profile}",
    ):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(60)
    driver.execute_cdp_cmd("Network.enable", {})
    driver.execute_cdp_cmd(
        "Network.emulateNetworkConditions",
        {
            "offline": True,
            "latency": 0,
            "downloadThroughput": -1,
            "uploadThroughput": -1,
        },
    )
    return driver


@pytest.fixture
def driver(tmp_path):
    d = make_driver(tmp_path / "profile")
    try:
        yield d
    finally:
        d.quit()


def open_report(driver, path: Path) -> None:
    """Load the report from a file:// URL; wait for every chart (how long it takes:
    bench/report_size.py)."""
    driver.get(path.resolve().as_uri())
    WebDriverWait(driver, 60).until(
        lambda d: d.execute_script("return document.documentElement.dataset.charts") == "ready"
    )


def severe(driver) -> list[dict]:
    return [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]


def open_question(driver, index: int):
    summary = driver.find_element(By.CSS_SELECTOR, f"#question-{index} > summary")
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", summary)
    summary.click()
    WebDriverWait(driver, 10).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, f"#question-{index} .qbody")
    )
    return driver.find_element(By.ID, f"question-{index}")


def test_example_report_renders_offline(example_results, driver, tmp_path):
    report = write_report(example_results, tmp_path / "report.html")
    n_systems = len(json.loads((example_results / "scores.json").read_text())["systems"])
    open_report(driver, report)

    rows = driver.find_elements(By.CSS_SELECTOR, "#summary-table tbody tr")
    assert len(rows) == n_systems
    note = driver.find_element(By.ID, "design-note").text
    assert note.startswith("Questions share documents (5.4 each). Design effect on recall@5")
    names = json.loads((example_results / "scores.json").read_text())["systems"]
    for name in names:  # every system: "fixed 0.64 [0.41, 0.85] ~ 211"
        assert re.search(re.escape(name) + r" \d+\.\d\d \[\d+\.\d\d, \d+\.\d\d\] ~ \d+", note)
    assert "135 questions in 25 documents" in driver.find_element(By.ID, "summary-config").text
    assert "Highest on" in driver.find_element(By.ID, "headline").text
    for cid in CHART_IDS:
        host = driver.find_element(By.ID, cid)
        assert host.get_attribute("data-state") == "rendered", cid
        drawn = host.find_elements(By.CSS_SELECTOR, "svg.marks")
        assert drawn, f"{cid}: no chart drawn"
        size = drawn[0].size
        assert size["width"] > 100 and size["height"] > 50, (cid, size)
    route = driver.find_elements(By.CSS_SELECTOR, "#route-diagram svg g.step")
    assert len(route) >= 10
    assert len(driver.find_elements(By.CSS_SELECTOR, "#measures-table tbody tr")) > 20
    # the nDCG rows name their ideal and gain; the note on the returned ideal shows
    # exactly where the data says nDCG orders the systems unlike recall
    measures = driver.find_element(By.ID, "measures-table").text
    assert "nDCG: returned ideal, exponential gain" in measures
    note = embedded_data(report.read_text(encoding="utf-8"))["ndcg"]["note"]
    shown = driver.find_elements(By.ID, "ndcg-note")
    assert [e.text for e in shown] == ([note] if note else [])

    # Drill down into the first question: one block per system, each with its items.
    listed = driver.find_elements(By.CSS_SELECTOR, "#q-list details.q")
    assert 0 < len(listed) <= 50
    question = open_question(driver, 0)
    blocks = question.find_elements(By.CSS_SELECTOR, ".system")
    assert len(blocks) == n_systems
    for block in blocks:
        items = block.find_elements(By.CSS_SELECTOR, "li.item")
        assert 1 <= len(items) <= 5
        assert items[0].find_element(By.CSS_SELECTOR, ".itemtext").text.strip()
    assert question.find_elements(By.CSS_SELECTOR, ".passage")
    assert question.find_elements(By.CSS_SELECTOR, "mark"), "answer passage not highlighted"

    # Search narrows the list; paging moves on.
    box = driver.find_element(By.ID, "q-search")
    qid = question.get_attribute("data-qid")
    box.send_keys(qid)
    WebDriverWait(driver, 5).until(
        lambda d: len(d.find_elements(By.CSS_SELECTOR, "#q-list details.q")) == 1
    )
    box.clear()
    box.send_keys(" ")  # an input event with an empty query
    WebDriverWait(driver, 5).until(
        lambda d: len(d.find_elements(By.CSS_SELECTOR, "#q-list details.q")) == len(listed)
    )

    driver.execute_script("document.getElementById('questions').scrollIntoView()")
    driver.set_window_size(1280, 1400)
    open_question(driver, 1)
    driver.execute_script("document.getElementById('question-1').scrollIntoView()")
    shot = tmp_path / "report-drilldown.png"
    assert driver.save_screenshot(str(shot))
    driver.execute_script("window.scrollTo(0, 0)")
    full = tmp_path / "report-top.png"
    assert driver.save_screenshot(str(full))
    assert shot.stat().st_size > 10_000
    keep = os.environ.get("RAGMETER_SCREENSHOTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(keep) / shot.name)
        shutil.copy(full, Path(keep) / full.name)

    errors = severe(driver)
    assert errors == [], errors


def test_hostile_corpus_runs_nothing(driver, tmp_path):
    results = build_hostile_results(tmp_path / "hostile")
    report = write_report(results)
    open_report(driver, report)
    assert driver.execute_script("return typeof window.__pwned") == "undefined"
    # Markup from the corpus and the questions is text, never elements.
    assert driver.execute_script("return document.querySelectorAll('img').length") == 0
    assert driver.execute_script("return document.scripts.length") == 3

    qids = driver.execute_script(
        "return Array.from(document.querySelectorAll('#q-list details.q')).map(d => d.dataset.qid)"
    )
    index = qids.index("q-script")
    question = open_question(driver, index)
    text = question.text
    assert HOSTILE_SCRIPT in text  # the question and its passage, shown as written
    marks = [m.text for m in question.find_elements(By.CSS_SELECTOR, "mark")]
    assert any(HOSTILE_SCRIPT in m for m in marks)

    question = open_question(driver, qids.index("q-img"))
    assert HOSTILE_IMG in question.text
    emoji = open_question(driver, qids.index("q-emoji"))
    passage = "Water boils at one hundred degrees Celsius under standard atmospheric pressure."
    marks = [m.text for m in emoji.find_elements(By.CSS_SELECTOR, "mark")]
    assert passage in marks, marks  # offsets survive the astral-plane emoji before it

    # let every task the page queued run (an image's onerror, a timer) before looking
    driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "requestAnimationFrame(() => setTimeout(() => setTimeout(done, 0), 0));"
    )
    assert driver.execute_script("return typeof window.__pwned") == "undefined"
    assert driver.execute_script("return document.querySelectorAll('img').length") == 0
    errors = severe(driver)
    assert errors == [], errors


def test_headers_name_the_runs_own_level(driver, tmp_path):
    """A run at 90% says 90% in every table header and chart title, never 95%."""
    settings = {"strategies": ("sentence", "fixed"), "rounds": 300, "confidence": 0.9}
    results = save_example(tmp_path / "results", **settings)
    report = write_report(results, tmp_path / "report.html")
    open_report(driver, report)
    heads = " ".join(
        h.get_attribute("textContent") + " " + (h.get_attribute("title") or "")
        for h in driver.find_elements(By.CSS_SELECTOR, "th")
    )
    assert "[90% CI]" in heads and "95%" not in heads
    assert "± half-width of the 90% interval" in report.read_text(encoding="utf-8")
    assert "95% interval" not in report.read_text(encoding="utf-8")


def test_the_answer_section_shows_grades_paired_verdicts_and_flip_rates(
    small_example_results_copy, driver, tmp_path
):
    """With two systems graded 3 times: a verdict table per measure, as the search's
    comparison table reads (its columns, the verdict grade printed), and the flip table."""
    from test_answers_reruns import Sampling, quiet, seeded_judge, seeded_reader

    from ragmeter.answers import answer_questions
    from ragmeter.answers.paired import answer_verdicts
    from ragmeter.answers.reruns import Reruns
    from ragmeter.cli.answer_views import grade_command

    results = small_example_results_copy
    answer_questions(results, Sampling("reader", seeded_reader))
    reruns = Reruns(k=3, of="judge", temperature=0.8)
    grade_command(results, [Sampling("j", seeded_judge)], console=quiet(), reruns=reruns)
    want = answer_verdicts(results)
    open_report(driver, write_report(results, tmp_path / "report.html"))
    for i, verdicts in enumerate(want.tables.values()):
        table = driver.find_element(By.ID, f"answer-verdicts-{i}")
        heads = [h.get_attribute("textContent") for h in table.find_elements(By.CSS_SELECTOR, "th")]
        assert heads[:2] == ["A", "B"] and "wins / ties / losses" in heads and "verdict" in heads
        assert heads[2].startswith("A − B (points) ")  # an answer share: its unit from the data
        (row,) = table.find_elements(By.CSS_SELECTOR, "tbody tr")
        assert row.find_element(By.CSS_SELECTOR, ".verdict").text == verdicts.rows[0].verdict
    basis = driver.find_element(By.ID, "answer-verdicts-basis").text
    assert basis.startswith("Pairs over the 8 questions") and "means over 3 reruns" in basis
    flips = driver.find_elements(By.CSS_SELECTOR, "#answer-flips tbody tr")
    assert [r.find_element(By.CSS_SELECTOR, "td").text for r in flips] == ["sentence", "fixed-40"]
    assert not severe(driver)


def test_the_judge_agreement_shows_alpha_test_retest_and_the_position_check(
    small_example_results_copy, driver, tmp_path
):
    """Three judges rerun 3 times and a position check: the alpha line, a test-retest row
    and a position-check row per judge, each number as `ragmeter judges` prints it."""
    from test_answers_reruns import Sampling, quiet, seeded_judge, seeded_reader

    from ragmeter.answers import answer_questions
    from ragmeter.answers.judges import judge_reliability
    from ragmeter.answers.position import position_checks
    from ragmeter.answers.reruns import Reruns
    from ragmeter.cli.answer_views import grade_command
    from ragmeter.comparison.formatting import format_estimate

    results = small_example_results_copy
    answer_questions(results, Sampling("reader", seeded_reader))
    reruns = Reruns(k=3, of="judge", temperature=0.8)
    judges = [Sampling(name, seeded_judge) for name in ("j1", "j2", "j3")]
    grade_command(results, judges, console=quiet(), reruns=reruns, position=(6, 2))
    rel, checks = judge_reliability(results), position_checks(results)
    open_report(driver, write_report(results, tmp_path / "report.html"))
    alpha = driver.find_element(By.ID, "judge-alpha").text
    assert alpha.startswith("Krippendorff's alpha (ordinal), all 3 judges")
    assert format_estimate(rel.alpha, "kappa") in alpha
    retest = driver.find_elements(By.CSS_SELECTOR, "#judge-retest tbody tr")
    cells = [[td.text for td in r.find_elements(By.CSS_SELECTOR, "td")] for r in retest]
    assert [c[0] for c in cells] == list(rel.retest)
    assert [c[3] for c in cells] == [format_estimate(r.alpha, "kappa") for r in rel.retest.values()]
    position = driver.find_elements(By.CSS_SELECTOR, "#judge-position tbody tr")
    cells = [[td.text for td in r.find_elements(By.CSS_SELECTOR, "td")] for r in position]
    assert [c[:3] for c in cells] == [[c.judge, str(c.pair.n), str(c.changed)] for c in checks]
    assert [c[4] for c in cells] == [
        format_estimate(c.pair.three_weighted, "kappa") for c in checks
    ]
    assert not severe(driver)


def test_the_verdict_cell_names_the_system_the_row_says_won(driver, tmp_path):
    """The comparison table sets the winner apart from the verdict's words it reads, from
    the row's ``winner``: a tie names no system, even one called "tie"."""
    tie = ({"name": "tie", "kind": "fixed", "size": 200},)  # its verdicts begin with "tie "
    settings = {"strategies": ("whole", "sentence", "tie"), "custom_strategies": tie}
    results = save_example(tmp_path / "results", questions=45, rounds=300, **settings)
    report = write_report(results, tmp_path / "report.html")
    rows = embedded_data(report.read_text(encoding="utf-8"))["comparisons"]
    open_report(driver, report)
    cells = driver.find_elements(By.CSS_SELECTOR, "#compare-table td.verdict")
    assert [c.text for c in cells] == [r["verdict"] for r in rows]
    named = [[e.text for e in c.find_elements(By.CSS_SELECTOR, ".name")] for c in cells]
    assert named == [[r["winner"]] if r["winner"] else [] for r in rows]
    assert any(named) and not all(named)  # a pair with a winner and a tie


def _trec_files(root: Path) -> list[str]:
    """A qrels file and two run files of 30 queries (seeded), for ``ragmeter evaluate``."""
    import numpy as np

    rng = np.random.default_rng(5)
    qrels, runs = [], {"bm25": [], "dense": []}
    for q in range(30):
        docs = [f"D{j:03d}" for j in rng.choice(500, size=40, replace=False)]
        qrels += [f"{q} 0 {d} {int(rng.integers(0, 3))}\n" for d in docs[:8]]
        for name, order in (("bm25", docs[2:32]), ("dense", list(rng.permutation(docs)[:30]))):
            runs[name] += [f"{q} Q0 {d} {i} {30 - i} {name}\n" for i, d in enumerate(order, 1)]
    (root / "qrels.txt").write_text("".join(qrels))
    for name, lines in runs.items():
        (root / f"{name}.run").write_text("".join(lines))
    return [str(root / "qrels.txt"), str(root / "bm25.run"), str(root / "dense.run")]


def test_trec_eval_names_are_drawn_as_their_families(driver, tmp_path):
    """A run of ``evaluate --trec-eval-compat`` stores ``P_5``: the page reads its family,
    cutoff and percent from the data Python sends (no list of its own), so the measures
    table groups it under precision, in percent, as it does ``precision@5``."""
    from typer.testing import CliRunner

    from ragmeter.cli import app
    from ragmeter.comparison.formatting import format_estimate
    from ragmeter.runs.results import Results

    qrels, *runs = _trec_files(tmp_path)
    out = tmp_path / "compat"
    args = ["evaluate", "--qrels", qrels, *runs, "--trec-eval-compat", "--rounds", "200"]
    args += ["--measures", "P_10,P_5,ndcg_cut_10,map", "--metric", "P_5", "--out", str(out)]
    r = CliRunner().invoke(app, [*args, "--no-history"])
    assert r.exit_code == 0, r.output
    open_report(driver, out / "report.html")
    assert severe(driver) == []
    rows = [
        [c.text for c in tr.find_elements(By.CSS_SELECTOR, "th, td")]
        for tr in driver.find_elements(By.CSS_SELECTOR, "#measures-table tbody tr")
    ]
    est = Results(out).summary.estimates["bm25"]
    firsts = [row[0] for row in rows]
    assert firsts.index("precision@k (%)") < firsts.index("P_5") < firsts.index("P_10")
    p5 = rows[firsts.index("P_5")]
    assert p5[1] == format_estimate(est["P_5"], "precision@5")  # percent
    assert "ndcg_cut_10" in firsts and "map" in firsts
    headline = driver.find_element(By.ID, "headline").text
    assert format_estimate(est["P_5"], "precision@5") in headline


@pytest.mark.parametrize(
    ("metric", "family", "scale", "digits", "unit"),
    [("P_5", "precision@5", 100, 1, " points"), ("ndcg_cut_10", "ndcg@10", 1, 3, "")],
    ids=["share", "graded"],
)
def test_the_page_prints_differences_at_the_scale_the_data_gives(
    driver, tmp_path, metric, family, scale, digits, unit
):
    """The page keeps no factor of its own: a share's half-widths and differences print in
    points, nDCG's in its own scale, as the terminal prints them (the scale, digits and
    unit come with the data: ``metric_info``)."""
    from typer.testing import CliRunner

    from ragmeter.cli import app
    from ragmeter.scoring.names import difference_scale

    assert difference_scale(family) == (scale, digits)
    qrels, *runs = _trec_files(tmp_path)
    out = tmp_path / "compat"
    args = ["evaluate", "--qrels", qrels, *runs, "--trec-eval-compat", "--rounds", "200"]
    args += ["--measures", "P_5,ndcg_cut_10", "--metric", metric, "--out", str(out)]
    r = CliRunner().invoke(app, [*args, "--no-history"])
    assert r.exit_code == 0, r.output
    open_report(driver, out / "report.html")
    assert severe(driver) == []
    ss = embedded_data((out / "report.html").read_text(encoding="utf-8"))["sample_size"]
    target = f"± {ss['target'] * scale:g}{unit}"  # ± 4 points; ± 0.04
    lead = driver.find_element(By.ID, "size-lead").text
    assert f"The questions needed for {target} are" in lead
    first = next(s for s in ss["systems"] if s["half_width"] is not None)
    assert f"carries ± {first['half_width'] * scale:.{digits}f}{unit} on {metric}" in lead
    head = [th.text for th in driver.find_elements(By.CSS_SELECTOR, "#size-table th")]
    assert head[-1] == f"questions for {target}"
    cells = driver.find_elements(By.CSS_SELECTOR, "#size-table tbody tr td")
    shown = {c.text for c in cells}
    assert {f"{row['half_width'] * scale:.{digits}f}" for row in first["rows"]} <= shown
    assert {row["half_width_text"] for row in first["rows"]} <= shown  # the terminal's text
    compare = driver.find_element(By.CSS_SELECTOR, "#compare-table th:nth-child(3)").text
    assert compare.startswith("A − B (points)" if unit else "A − B [")


def test_a_page_past_its_drilldown_budget_says_which_questions_it_holds(
    example_results, driver, tmp_path, monkeypatch
):
    from ragmeter.report import drilldown

    systems = len(json.loads((example_results / "scores.json").read_text())["systems"])
    monkeypatch.setattr(drilldown, "DRILLDOWN_RANKINGS", 3 * systems)
    report = write_report(example_results, tmp_path / "report.html")
    open_report(driver, report)
    held = driver.find_element(By.ID, "q-held").text
    assert held.startswith("The page holds 3 of the 135 questions")
    assert driver.find_element(By.ID, "q-count").text == "3 of 3 questions"
    assert len(driver.find_elements(By.CSS_SELECTOR, "#q-list details.q")) == 3
    assert severe(driver) == []

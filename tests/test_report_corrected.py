"""The report's answer section shows the judge-corrected tables `grade` prints: the
paired verdicts corrected by hand grades on each answer measure, and what the judge
saved, every cell the terminal's own text (nothing computed or formatted in the page)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_answers_ppi import search_with_lenient_answers

pytest.importorskip("altair", reason="the HTML report needs the 'report' extra (altair)")
pytest.importorskip("vl_convert", reason="the HTML report needs the 'report' extra (vl-convert)")

from ragmeter.report.html import report_data, write_report  # noqa: E402


def _expected(res):
    """What `grade` prints for these results: its corrected verdicts and saving rows."""
    from ragmeter.answers.analysis import answer_figures
    from ragmeter.answers.corrected import corrected_cells, saving_cells, saving_rows
    from ragmeter.answers.paired import answer_verdicts

    v = answer_verdicts(res)
    fixed = {m: corrected_cells(c) for m, c in v.corrected.items()}
    return v, fixed, saving_cells(saving_rows(answer_figures(res).report))


def test_the_answer_data_carries_both_corrected_tables_and_the_saving(tmp_path):
    res, _, _ = search_with_lenient_answers(tmp_path)
    v, fixed, saved = _expected(res)
    answers = report_data(res)["optional"]["answers"]
    tables = answers["verdicts"]["corrected"]
    assert [t["measure"] for t in tables] == ["correct", "correct or partial"]
    for t in tables:
        c = v.corrected[t["measure"]]
        assert [r["cells"] for r in t["rows"]] == fixed[t["measure"]]
        assert [r["hand_a"] for r in t["rows"]] == [12] * len(c.rows)
        assert t["title"].startswith(f"Paired verdicts on {t['measure']}, judge-corrected")
        assert any("random sample" in line for line in t["lines"])
    saving = answers["saving"]
    assert saving["title"] == "What the judge saved, per system and all together"
    assert [r["cells"] for r in saving["rows"]] == saved
    assert [r["system"] for r in saving["rows"]] == [*res.systems, None]
    assert all(r["n_hand"] == 12 for r in saving["rows"][:-1])
    assert saving["rows"][-1]["n_hand"] == 24  # all systems together
    assert "Dorner, Nastl and Hardt" in saving["caption"]


def test_without_hand_grades_there_is_no_corrected_table(tmp_path):
    import json

    res, _, _ = search_with_lenient_answers(tmp_path)
    path = res.path / "answers" / "answers.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    path.write_text("".join(json.dumps({**r, "hand": None}) + "\n" for r in rows))
    answers = report_data(res)["optional"]["answers"]
    assert answers["saving"] is None
    assert answers["verdicts"]["corrected"] == []


def test_the_page_shows_the_corrected_verdicts_and_the_saving(tmp_path):
    browser = pytest.importorskip("test_report_browser")
    if not (Path(browser.CHROMIUM).exists() and Path(browser.CHROMEDRIVER).exists()):
        pytest.skip("needs chromium: apt-get install -y chromium chromium-driver")
    res, _, _ = search_with_lenient_answers(tmp_path)
    v, fixed, saved = _expected(res)
    report = write_report(res.path, tmp_path / "report.html")
    driver = browser.make_driver(tmp_path / "profile")
    cells = (
        "return [...document.querySelectorAll('#ID tbody tr')]"
        ".map((r) => [...r.children].map((c) => c.textContent))"
    )
    try:
        browser.open_report(driver, report)
        shown = [
            driver.execute_script(cells.replace("ID", f"answer-corrected-{i}")) for i in (0, 1)
        ]
        titles = [
            driver.execute_script(
                f"return document.getElementById('answer-corrected-{i}-title').textContent"
            )
            for i in (0, 1)
        ]
        saving = driver.execute_script(cells.replace("ID", "answer-saving"))
        text = driver.execute_script("return document.getElementById('answers-body').textContent")
        assert not browser.severe(driver)
    finally:
        driver.quit()
    assert shown == [fixed["correct"], fixed["correct or partial"]]
    assert titles[1] == (
        "Paired verdicts on correct or partial, judge-corrected by hand (A - B, points)"
    )
    assert saving == saved
    assert "bound: at most x2" in text

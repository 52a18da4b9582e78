"""User text is shown as written: no rich markup in the terminal, bidi isolated in the report."""

import io
import json
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from ragmeter.cli import app
from ragmeter.cli import search_views as terminal
from ragmeter.config import Config
from ragmeter.corpus import Document
from ragmeter.experiment import run_search
from ragmeter.results import Results, save_results, summarize_run
from ragmeter.testset import AnswerSpan, Question, TestSet

runner = CliRunner()

MARKUP_NAMES = ("[/oops]", "[link=https://example.com]click[/link]", "[bold red]x")
BIDI_ID = "q\u202eevil\u202c"


def hostile_run(tmp_path: Path):
    docs = [
        Document("cats.md", "Cats sleep for sixteen hours a day. Cats purr when content."),
        Document("dogs.md", "Dogs bark at strangers. A dog's nose has 300 million receptors."),
    ]
    questions = [
        Question(
            BIDI_ID, "how long do cats sleep", (AnswerSpan("cats.md", 0, 34, docs[0].text[:34]),)
        ),
        Question("q2", "dog nose", (AnswerSpan("dogs.md", 24, 63, docs[1].text[24:63]),)),
    ]
    cfg = Config(
        strategies=MARKUP_NAMES,
        custom_strategies=tuple({"name": n, "kind": "whole"} for n in MARKUP_NAMES),
        ks=(1,),
        rounds=200,
    )
    return run_search(cfg, docs, TestSet(questions))


def test_terminal_tables_print_names_as_written(tmp_path):
    run = hostile_run(tmp_path)
    summary = summarize_run(run)
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, width=200, color_system="truecolor")
    console.print(terminal.hit_table(summary, [1]))
    console.print(terminal.rank_table(summary, ("recall@1",)))
    console.print(terminal.comparison_table(summary.comparisons, "recall@1", 1, 200))
    console.print(terminal.size_table(summary.sample_size[MARKUP_NAMES[0]], "recall@1", "[/x]"))
    out = buf.getvalue()
    assert "\x1b]8;" not in out  # no live terminal link
    plain = Console(file=io.StringIO(), width=200)
    plain.print(terminal.hit_table(summary, [1]))
    text = plain.file.getvalue()
    for name in MARKUP_NAMES:
        assert name in text


def test_cli_prints_markup_names_after_saving(tmp_path):
    root = tmp_path
    (root / "docs").mkdir()
    (root / "docs" / "cats.md").write_text("Cats sleep for sixteen hours a day. Cats purr.")
    (root / "docs" / "dogs.md").write_text("Dogs bark at strangers. Dogs dig holes.")
    rows = [
        {"id": "q1", "question": "cats sleep", "answers": [{"text": "Cats sleep"}]},
        {"id": "q2", "question": "dogs bark", "answers": [{"text": "Dogs bark"}]},
    ]
    (root / "q.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    strategies = "".join(
        f'[[strategy]]\nname = {json.dumps(n)}\nkind = "whole"\n\n' for n in MARKUP_NAMES
    )
    (root / "ragmeter.toml").write_text(
        '[corpus]\npath = "docs"\n[testset]\npath = "q.jsonl"\n'
        f"[search]\nstrategies = {json.dumps(list(MARKUP_NAMES))}\nks = [1]\n"
        '[stats]\nrounds = 200\n[output]\ndir = "[b]out[/b]"\n\n' + strategies
    )
    result = runner.invoke(app, ["search", str(root / "ragmeter.toml")])
    assert result.exit_code == 0, result.output
    for name in MARKUP_NAMES:
        assert name in result.stdout
    assert "[b]out[/b]" in result.stdout
    result = runner.invoke(app, ["compare", str(root / "[b]out[/b]")])
    assert result.exit_code == 0, result.output
    assert "[link=https://example.com]click[/link]" in result.stdout
    result = runner.invoke(app, ["plan", str(root / "[b]out[/b]"), "--rounds", "200"])
    assert result.exit_code == 0 and "[/oops]" in result.stdout, result.stderr


def test_report_isolates_bidi_text(tmp_path):
    pytest.importorskip("altair")
    pytest.importorskip("vl_convert")
    from test_report_browser import CHROMEDRIVER, CHROMIUM, make_driver, open_report

    if not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()):
        pytest.skip("needs chromium and chromedriver")
    from selenium.webdriver.common.by import By

    from ragmeter.report.html import write_report

    results = save_results(hostile_run(tmp_path), tmp_path / "r")
    assert Results(results).question_ids[0] == BIDI_ID
    report = write_report(results)
    driver = make_driver(tmp_path / "profile")
    try:
        open_report(driver, report)
        qid = driver.find_element(By.CSS_SELECTOR, "#q-list details.q .qid")
        assert qid.get_attribute("dir") == "auto"
        assert driver.execute_script("return getComputedStyle(arguments[0]).unicodeBidi", qid) in (
            "isolate",
            "plaintext",
        )
        # every element that shows a system name is isolated too
        isolated = driver.execute_script(
            "return Array.from(document.querySelectorAll('td, th, b, span'))"
            ".filter(e => e.textContent === arguments[0])"
            ".map(e => getComputedStyle(e).unicodeBidi)",
            MARKUP_NAMES[1],
        )
        assert isolated and set(isolated) <= {"isolate", "plaintext"}
    finally:
        driver.quit()

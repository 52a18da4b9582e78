"""User text is shown as written: no rich markup in the terminal, bidi isolated in the report."""

import csv
import io
import json
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from ragmeter.cli import app
from ragmeter.cli import search_views as terminal
from ragmeter.inputs.config import Config
from ragmeter.inputs.corpus import Document
from ragmeter.inputs.testset import AnswerSpan, Question, TestSet
from ragmeter.runs.pipeline import run_search
from ragmeter.runs.results import Results, save_results, summarize_run

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


# --- control characters and secrets ----------------------------------------------------------


def test_escape_sequences_in_ids_never_reach_the_terminal_raw(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "cats.md").write_text("Cats sleep.")
    row = {"id": "q\x1b[2J1", "question": "cats?", "answers": [{"doc": "c\x1b]0;t\x07.md"}]}
    (tmp_path / "q.jsonl").write_text(json.dumps(row) + "\n")
    args = ["search", "--corpus", str(docs), "--testset", str(tmp_path / "q.jsonl")]
    result = runner.invoke(app, [*args, "--out", str(tmp_path / "r")])
    assert result.exit_code == 2
    assert "\x1b" not in result.output and "\x07" not in result.output
    assert "q\\x1b[2J1" in result.stderr and "\\x07" in result.stderr


def test_printable_keeps_newline_and_tab_only():
    from ragmeter.files.safe_text import printable

    text = "".join(map(chr, range(0x00, 0xA0))) + "é€\u202e"
    out = printable(text)
    assert not any(ord(c) < 0x20 and c not in "\n\t" or 0x7F <= ord(c) < 0xA0 for c in out)
    assert "\n" in out and "\t" in out and "\\x1b" in out and "\\x9b" in out
    assert out.endswith("é€\u202e")  # ordinary text is untouched (bidi is the report's)


def test_the_terminal_console_escapes_what_any_view_prints():
    from ragmeter.cli.app import SafeConsole

    buf = io.StringIO()
    SafeConsole(file=buf, width=80).print("system \x1b[2Jx", markup=False)
    assert buf.getvalue() == "system \\x1b[2Jx\n"


SECRET = "sk-abc123secret"


def test_an_api_key_given_as_an_option_is_never_written_or_shown(tmp_path, monkeypatch):
    import subprocess
    import sys

    from ragmeter.files.outputs import lock_path, results_lock

    argv = ["ragmeter", "answer", "r", "--option", f"api_key={SECRET}", "--option", "n_ctx=9"]
    monkeypatch.setattr(sys, "argv", argv)
    out = tmp_path / "r"
    with results_lock(out):
        text = lock_path(out).read_text()
        assert SECRET not in text and "api_key=***" in text and "n_ctx=9" in text
        code = (
            "from ragmeter.files.outputs import results_lock\n"
            "from ragmeter.errors import InputError\n"
            "try:\n"
            f"    with results_lock({str(out)!r}, wait_s=0.2): pass\n"
            "except InputError as exc: print(exc)\n"
        )
        other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        assert "in use by" in other.stdout and SECRET not in other.stdout, other.stdout


def test_secrets_are_redacted_in_config_and_error_messages():
    from ragmeter.cli.app import shown
    from ragmeter.files.safe_text import is_secret_name, redact

    cfg = Config(extra={"reader": {"api_key": SECRET, "max_tokens": 5, "api_key_env": "K"}})
    saved = cfg.to_dict()["reader"]
    assert saved == {"api_key": "***", "max_tokens": 5, "api_key_env": "K"}
    line = shown(f"http 401 from http://h/v1?key={SECRET}: Authorization: Bearer {SECRET}")
    assert SECRET not in line and "Authorization: ***" in line
    assert [is_secret_name(n) for n in ("token", "password", "Authorization", "n_ctx")] == [
        True,
        True,
        True,
        False,
    ]
    assert redact({"headers": {"X-Api-Key": SECRET}}) == {"headers": {"X-Api-Key": "***"}}


# ---------------------------------------------------------------------------
# CSV: no cell runs as a formula in a spreadsheet (OWASP's rule), numbers stay numbers

FORMULA_NAMES = ('=HYPERLINK("http://x.example","y")', "+cmd|'/Ccalc'!A0", "@SUM(1+1)", "-2+3")
DANGEROUS = ("=", "+", "-", "@", "\t", "\r")


@pytest.mark.parametrize(
    "cell, written",
    [
        ("=1+1", "'=1+1"),
        ("+cmd|'/C calc'!A0", "'+cmd|'/C calc'!A0"),
        ("-2+3", "'-2+3"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\tx", "'\tx"),
        ("\r=1", "'\r=1"),
        ("-", "'-"),
        ("-inf", "'-inf"),
        ("plain", "plain"),
        ("a=b", "a=b"),
        ("", ""),
        ("-0.05", "-0.05"),  # text that is a plain number reads as that number
        ("+3", "+3"),
        ("-1e-05", "-1e-05"),
        (-0.05, -0.05),  # numbers are never touched
        (-3, -3),
        (None, None),
    ],
)
def test_a_csv_cell_that_starts_a_formula_gets_an_apostrophe(cell, written):
    from ragmeter.files.safe_text import csv_cell

    assert csv_cell(cell) == written


def test_csv_text_neutralises_headers_and_rows_keeps_numbers():
    from ragmeter.files.safe_text import csv_text

    text = csv_text(["name", "difference"], [{"name": "=1+1", "difference": -0.05}, ["ok", -2]])
    rows = list(csv.reader(io.StringIO(text)))
    assert rows == [["name", "difference"], ["'=1+1", "-0.05"], ["ok", "-2"]]


def _formula_cells(text: str) -> list[str]:
    """Cells a spreadsheet would run: start with = + - @ tab or CR and are not a number."""
    from ragmeter.files.safe_text import csv_cell

    return [c for row in csv.reader(io.StringIO(text)) for c in row if c and csv_cell(c) != c]


@pytest.fixture()
def formula_runs(tmp_path, monkeypatch):
    """Four run files whose systems (and one query id) are spreadsheet formulas."""
    monkeypatch.setenv("RAGMETER_HISTORY", str(tmp_path / "hist"))
    qids = ["=q1", *(f"q{i}" for i in range(2, 13))]
    (tmp_path / "qrels.txt").write_text(
        "".join(f"{q} 0 d{i} 1\n{q} 0 e{i} 0\n" for i, q in enumerate(qids))
    )
    files = []
    for j, name in enumerate(FORMULA_NAMES):
        path = tmp_path / f"r{j}.run"
        lines = []
        for i, q in enumerate(qids):
            order = ["d", "e"] if i % (j + 2) else ["e", "d"]
            lines += [f"{q} Q0 {x}{i} {r} {9 - r} {name}\n" for r, x in enumerate(order, 1)]
        path.write_text("".join(lines))
        files.append(str(path))
    out = tmp_path / "res"
    r = runner.invoke(
        app,
        ["evaluate", "--qrels", str(tmp_path / "qrels.txt"), *files, "--rounds", "200",
         "--out", str(out), "--measures", "map,P_5,hit@1"],
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    return tmp_path, out, files


def test_every_csv_writer_neutralises_formula_names(formula_runs):
    tmp_path, out, files = formula_runs
    texts = {"scores.csv": (out / "scores.csv").read_text()}
    for command in (["compare", str(out)], ["plan", str(out)]):
        r = runner.invoke(app, [*command, "--rounds", "200", "--format", "csv"])
        assert r.exit_code == 0, r.output
        texts[command[0]] = r.stdout
    r = runner.invoke(
        app,
        ["evaluate", "--qrels", str(tmp_path / "qrels.txt"), *files, "--rounds", "200",
         "--out", str(tmp_path / "again"), "--no-history", "--format", "csv"],
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    texts["evaluate"] = r.stdout
    for flags in ([], ["--scores"]):
        r = runner.invoke(app, ["history", "export", *flags])
        assert r.exit_code == 0, r.output
        texts[f"history export {flags}"] = r.stdout
    for where, text in texts.items():
        assert _formula_cells(text) == [], where
        for name in FORMULA_NAMES:
            assert "'" + name in text.replace('""', '"'), (where, name)
    assert "'=q1" in texts["scores.csv"] and "'=q1" in texts["history export ['--scores']"]
    # numbers stay numbers: the differences and interval ends all read as floats
    for row in csv.DictReader(io.StringIO(texts["compare"])):
        assert all(float(row[c]) == float(row[c]) for c in ("difference", "low", "high"))


def test_search_csv_neutralises_formula_strategy_names(tmp_path):
    root = tmp_path
    (root / "docs").mkdir()
    (root / "docs" / "cats.md").write_text("Cats sleep for sixteen hours a day. Cats purr.")
    (root / "docs" / "dogs.md").write_text("Dogs bark at strangers. Dogs dig holes.")
    rows = [
        {"id": "q1", "question": "cats sleep", "answers": [{"text": "Cats sleep"}]},
        {"id": "q2", "question": "dogs bark", "answers": [{"text": "Dogs bark"}]},
    ]
    (root / "q.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    names = ["=1+1", "@SUM(1+1)"]
    strategies = "".join(f'[[strategy]]\nname = {json.dumps(n)}\nkind = "whole"\n\n' for n in names)
    (root / "ragmeter.toml").write_text(
        '[corpus]\npath = "docs"\n[testset]\npath = "q.jsonl"\n'
        f"[search]\nstrategies = {json.dumps(names)}\nks = [1]\n"
        '[stats]\nrounds = 200\n[output]\ndir = "out"\n\n' + strategies
    )
    config = str(root / "ragmeter.toml")
    r = runner.invoke(app, ["search", config, "--no-history", "--format", "csv"])
    assert r.exit_code == 0, r.output
    assert _formula_cells(r.stdout) == []
    assert "'=1+1" in r.stdout and "'@SUM(1+1)" in r.stdout
    assert _formula_cells((root / "out" / "scores.csv").read_text()) == []

"""Readable anywhere: tables fit an 80-column terminal without cutting a name or an
interval, long families are summarised, one flag vocabulary and one unit (points),
and every table also comes as Markdown, CSV or JSON."""

from __future__ import annotations

import csv
import io
import json
import os
import re

import pytest
from conftest import save_example, search_example
from rich.console import Console
from test_answers_one_view import run_dir  # noqa: F401  (a fixture: answers, two judges, hand)
from typer.testing import CliRunner

from ragmeter.cli import app
from ragmeter.cli import search_views as terminal
from ragmeter.cli.app import example_dir
from ragmeter.cli.layout import Grid, fit, natural_width
from ragmeter.runs.results import Results

runner = CliRunner()
STRATEGIES = ("whole", "fixed", "overlap", "sentence", "recursive", "parent-400", "parent-200")


@pytest.fixture(scope="module")
def many(tmp_path_factory):
    """14 systems (7 strategies x 2 BM25 settings), every pair: 91 pairs, a long family."""
    return save_example(
        tmp_path_factory.mktemp("many") / "r",
        strategies=STRATEGIES,
        retrievers=("bm25", {"name": "bm25-k09", "kind": "bm25", "k1": 0.9}),
        family="all",  # a grid compares by its families by default (tests/test_families.py)
    )


def _rendered(renderables, width: int) -> str:
    console = Console(width=width, record=True, file=io.StringIO())
    for r in renderables:
        console.print(r)
    return console.export_text()


def _fits(text: str, width: int) -> None:
    assert "…" not in text
    assert max(len(line) for line in text.splitlines()) <= width


def test_the_first_tables_fit_80_columns_with_names_and_intervals_whole(many):
    summary = Results(many).summary
    for grid in (terminal.hit_grid(summary, [1, 3, 5, 10]), terminal.rank_grid(summary)):
        text = _rendered(fit(grid, 80), 80)
        _fits(text, 80)
        for system in summary.estimates:  # parent-400/bm25 and parent-200/bm25 both whole
            assert system in text
        est = summary.estimates["parent-400/bm25-k09"]["recall@5"]
        if grid.key == "hit_rate":
            assert terminal.format_estimate(est, "recall@5") in text
    wide = _rendered(fit(terminal.hit_grid(summary, [1, 3, 5, 10]), 200), 200)
    assert wide.count("┏") == 1  # one table when it fits


def test_names_too_long_for_the_width_get_a_legend_not_an_ellipsis():
    name = "a-very-long-system-name-that-no-narrow-terminal-holds/with-its-retriever"
    grid = Grid("Scores", ["system", "recall@5", "words@5"], right={1, 2})
    grid.rows = [[name + str(i), "80.7 [74.1, 87.4]", "885"] for i in range(3)]
    text = _rendered(fit(grid, 60), 60)
    _fits(text, 60)
    assert "S1" in text and "80.7 [74.1, 87.4]" in text
    assert name.split("/")[0] in text.replace("\n", "")  # the legend folds, never cuts


def test_compare_at_80_columns_lists_decisive_pairs_first_and_counts_the_rest(many):
    out = runner.invoke(app, ["compare", str(many)], env={"COLUMNS": "80"})
    assert out.exit_code == 0, out.output
    _fits(out.stdout, 80)
    rows = [line for line in out.stdout.splitlines() if line.startswith("│ ")]
    assert sum(r.startswith("│ - ") for r in rows) == terminal.LONG_FAMILY  # A over - B
    first = rows[: next(i for i, r in enumerate(rows) if r.startswith("│ - ")) + 1]
    assert "better" in " ".join(first)  # the pairs found different come first
    assert re.search(r"[+-]\d+\.\d \[[+-]?\d+\.\d+, [+-]?\d+\.\d+\]", rows[0])  # whole
    assert "61 more pairs not shown" in " ".join(out.stdout.split())
    assert "--baseline NAME" in out.stdout
    every = runner.invoke(app, ["compare", str(many), "--all"], env={"COLUMNS": "200"})
    assert "more pairs not shown" not in every.stdout
    pairs, ranks = every.stdout.split("Ranks on ")  # the ranks' table follows the pairs'
    firsts = [line for line in pairs.splitlines() if line.startswith("│ ") and line[2] != " "]
    assert len(firsts) == 91  # one line a pair (long verdicts continue on the next)
    assert sum(line.startswith("│ ") for line in ranks.splitlines()) == 14  # each system


def test_compare_formats_write_only_the_table_to_stdout(many):
    got = runner.invoke(app, ["compare", str(many), "--format", "csv"])
    assert got.exit_code == 0, got.output
    rows = list(csv.DictReader(io.StringIO(got.stdout)))
    assert len(rows) == 91 and {"a", "b", "difference", "low", "high", "verdict"} <= set(rows[0])
    data = json.loads(runner.invoke(app, ["compare", str(many), "--format", "json"]).stdout)
    assert data["rule"]["pairs"] == 91 and len(data["rows"]) == 91
    md = runner.invoke(
        app, ["compare", str(many), "--pairs", "whole/bm25:fixed/bm25", "--format", "markdown"]
    )
    assert md.stdout.startswith("**Paired comparisons on recall@5")
    assert "| whole/bm25 | fixed/bm25 |" in md.stdout
    bad = runner.invoke(app, ["compare", str(many), "--format", "xml"])
    assert bad.exit_code == 2 and "--format must be one of" in bad.stderr


def test_old_pair_flags_still_work_and_say_what_replaces_them(many):
    old = runner.invoke(app, ["compare", str(many), "--a", "whole/bm25", "--b", "fixed/bm25"])
    new = runner.invoke(app, ["compare", str(many), "--pairs", "whole/bm25:fixed/bm25"])
    assert old.exit_code == new.exit_code == 0
    assert old.stdout == new.stdout
    assert "--a/--b are deprecated: write --pairs whole/bm25:fixed/bm25" in old.stderr


def test_plan_takes_points_reads_old_fractions_with_a_note_and_plans_a_baseline(many):
    args = ["plan", str(many), "--rounds", "200", "--format", "json"]
    points = runner.invoke(app, [*args, "--half-width", "4", "--difference", "5"])
    old = runner.invoke(app, [*args, "--half-width", "0.04", "--difference", "0.05"])
    assert points.exit_code == old.exit_code == 0, old.output
    assert json.loads(points.stdout) == json.loads(old.stdout)
    assert json.loads(points.stdout)["half_width"] == pytest.approx(0.04)
    assert "--half-width 0.04 is read as a fraction (4 points)" in old.stderr
    base = json.loads(runner.invoke(app, [*args, "--baseline", "fixed/bm25"]).stdout)
    assert base["family"] == 13 and len(base["pairs"]) == 13
    assert all("fixed/bm25" in (p["a"], p["b"]) for p in base["pairs"])
    table = runner.invoke(app, ["plan", str(many), "--rounds", "200"], env={"COLUMNS": "80"})
    _fits(table.stdout, 80)
    assert "Sample size on recall@5" in table.stdout  # one table, not one per system
    assert "Sample size: " not in table.stdout
    assert "more pairs not shown" in " ".join(table.stdout.split())
    unknown = runner.invoke(app, ["plan", str(many), "--baseline", "nope"])
    assert unknown.exit_code == 2 and "unknown system 'nope'" in unknown.stderr


def test_a_misspelt_strategy_gets_the_closest_name(tmp_path):
    got = runner.invoke(app, ["search", "--strategies", "sentnce", "-o", str(tmp_path / "o")])
    assert got.exit_code == 2
    assert "unknown chunking strategy 'sentnce' (did you mean 'sentence'?)" in got.stderr


def test_results_say_what_they_hold_and_show_the_terminals_columns(many):
    res = Results(many)
    assert repr(res) == f"<Results {str(many)!r}: 14 systems x 135 questions, compared on recall@5>"
    shown = res.default_metrics()
    assert {"mrr@10", "ndcg@10", "precision@5", "coverage@5"} <= set(shown)
    assert "mrr@5" not in shown


def test_search_formats_and_the_results_path_as_typed(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    args = ["search", "--strategies", "fixed,sentence", "--rounds", "200", "-o", "out"]
    got = runner.invoke(app, [*args, "--format", "csv"])
    assert got.exit_code == 0, got.output
    rows = list(csv.DictReader(io.StringIO(got.stdout)))
    assert {r["system"] for r in rows} == {"fixed", "sentence"} and "mean" in rows[0]
    assert "Results: out" in got.stderr
    table = runner.invoke(app, args)
    assert "Results: out\n" in table.stdout


def test_identical_systems_are_named_under_the_table_beside_the_rules_count(tmp_path):
    out = save_example(
        tmp_path / "r",
        strategies=("fixed", "twin", "sentence"),
        custom_strategies=({"name": "twin", "kind": "fixed", "size": 200},),
    )
    got = runner.invoke(app, ["compare", str(out)], env={"COLUMNS": "200"})
    assert got.exit_code == 0, got.output
    text = " ".join(got.stdout.split())
    assert "a family of one pair (all pairs)" in text  # fixed and twin are compared once
    assert "are compared once: fixed = twin; the rule counts 1 pair, not all 3 pairs" in text


def test_evaluate_writes_its_table_alone_as_json_and_csv(tmp_path):
    qrels = tmp_path / "q.txt"
    qrels.write_text("1 0 a 1\n2 0 c 1\n3 0 d 1\n")
    run = tmp_path / "bm25.run"
    run.write_text("1 Q0 a 1 2.0 bm25\n2 Q0 b 1 1.0 bm25\n3 Q0 d 1 1.0 bm25\n")
    args = ["evaluate", "--qrels", str(qrels), str(run), "--rounds", "200"]
    got = runner.invoke(app, [*args, "-o", str(tmp_path / "r1"), "--format", "json"])
    assert got.exit_code == 0, got.output
    assert json.loads(got.stdout)["estimates"]["bm25"]["map"]["n"] == 3
    got = runner.invoke(app, [*args, "-o", str(tmp_path / "r2"), "--format", "csv"])
    rows = list(csv.DictReader(io.StringIO(got.stdout)))
    assert {r["metric"] for r in rows} >= {"map", "ndcg@10"} and rows[0]["system"] == "bm25"


def test_report_open_says_when_no_browser_opened(many, tmp_path, monkeypatch):
    import webbrowser

    monkeypatch.setattr(webbrowser, "open", lambda *a, **k: False)
    got = runner.invoke(app, ["report", str(many), "-o", str(tmp_path / "r.html"), "--open"])
    assert got.exit_code == 0, got.output
    assert "no browser found to open the report" in got.stderr


def test_chunk_list_says_which_sizes_are_not_words(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ragmeter.toml").write_text(
        '[[strategy]]\nname = "lc-400"\nkind = "langchain"\nchunk_size = 400\n'
    )
    got = runner.invoke(app, ["chunk", "--list"], env={"COLUMNS": "200"})
    assert got.exit_code == 0, got.output
    assert "chunk_size=400 (characters, as LangChain counts)" in got.stdout
    assert "200 words" in got.stdout  # the built-ins count words


def test_a_wrapping_column_keeps_its_longest_word_whole():
    """A verdict wraps between words, never inside a name: the narrowest table keeps
    the verdict column as wide as its longest word; one column narrower, lines."""
    name = "parent-400/bm25-k09"
    grid = Grid("t", ["run", "verdict"], [["1", f"{name} better"]], wrap={1})
    least = natural_width(fit(grid, None)[-1], least=True)
    assert least == len("run") + len(name) + 2 * 2 + 3  # two padded columns, three edges
    for width in (least, least - 1):
        text = _rendered(fit(grid, width), width)
        _fits(text, width)
        assert name in text
    assert "┏" not in _rendered(fit(grid, least - 1), least - 1)


def test_a_terminal_too_narrow_for_any_table_gets_lines_not_cut_cells():
    grid = Grid("Scores", ["system", "recall@5", "words@5"], right={1, 2})
    grid.rows = [["parent-400/bm25-k09", "80.7 [74.1, 87.4]", "885"]]
    text = _rendered(fit(grid, 24), 24)
    _fits(text, 24)
    assert "┏" not in text and "80.7 [74.1, 87.4]" in text  # the interval on one line
    assert "parent-400/bm25-k09" in text


def _piped_width(env: dict, **streams) -> str:
    """``console.width`` in a fresh process whose stdout is a pipe, in a session of its
    own (no terminal of the test run reaches it unless given)."""
    import subprocess
    import sys

    code = "from ragmeter.cli.app import console; print(console.width)"
    streams.setdefault("stdin", subprocess.DEVNULL)
    streams.setdefault("stderr", subprocess.PIPE)
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
        **streams,
    )
    return done.stdout.strip()


def test_an_explicit_columns_wins_over_the_width_of_piped_output():
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    assert _piped_width(env) == "160"  # no terminal anywhere (logs, CI): wide
    assert _piped_width({**env, "COLUMNS": "80"}) == "80"  # COLUMNS=80 ragmeter demo | cat


@pytest.mark.skipif(os.name != "posix", reason="a pseudo-terminal needs POSIX")
def test_piped_output_follows_the_width_of_the_terminal_it_runs_in():
    """``ragmeter compare r | cat`` in a 72-column terminal: stdout is a pipe, but
    stderr, or the process's terminal (/dev/tty), is 72 columns wide."""
    import fcntl
    import pty
    import struct
    import termios

    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    main, side = pty.openpty()
    try:
        fcntl.ioctl(side, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 72, 0, 0))
        assert _piped_width(env, stderr=side) == "72"  # stdout piped, stderr the terminal
        name = os.ttyname(side)

        def own_terminal() -> None:  # the new session's controlling terminal: /dev/tty
            fd = os.open(name, os.O_RDWR)
            fcntl.ioctl(fd, termios.TIOCSCTTY, 0)
            os.close(fd)

        assert _piped_width(env, preexec_fn=own_terminal) == "72"  # every stream redirected
        assert _piped_width({**env, "COLUMNS": "100"}, stderr=side) == "100"  # COLUMNS wins
    finally:
        os.close(main)
        os.close(side)


def test_a_comparison_that_fits_only_by_folding_takes_two_lines_a_pair():
    """Five short names at 80 columns: one line a pair would need the verdict column
    folded to nothing (rich's own minimum folds every column), so the table takes two
    lines a pair and every verdict is printed whole."""
    run = search_example(strategies=("fixed", "overlap", "sentence", "recursive", "parent-400"))
    from ragmeter.comparison.systems import compare_run

    table = compare_run(run, run.comparison_plan)
    views, _ = terminal.comparison_views(table.rows, "recall@5", 1, 200, table.rule, 80)
    text = _rendered(views, 80)
    _fits(text, 80)
    for row in table.rows:
        if "better" in row.verdict:
            assert row.verdict in text, row.verdict
            assert terminal.shown_difference(row, "recall@5") in text
    assert any(line.startswith("│ - ") for line in text.splitlines())  # A over - B


# --------------------------------------------------------------------------- every command

WIDTHS = (60, 80, 120)


def _streams(text: str) -> list[str]:
    """The text flattened (words joined by one space), and each table column read down
    its lines (the pieces between ``│`` joined): a cell that wraps between words reads
    whole in one of them."""
    columns: dict[int, list[str]] = {}
    for line in text.splitlines():
        if line.startswith(("│", "┃")):
            for k, piece in enumerate(line.replace("┃", "│").split("│")[1:-1]):
                columns.setdefault(k, []).append(piece.strip())
    return [" ".join(text.split()), *(" ".join(" ".join(c).split()) for c in columns.values())]


def _check_fit(text: str, width: int, whole=(), wrapped=(), cut_ok: bool = False) -> None:
    """Every line within ``width``; no cell cut to ``…`` (unless ``cut_ok``: the audit
    shortens passages on purpose); each of ``whole`` (names, commits, times, intervals)
    on one line; each of ``wrapped`` (verdicts) whole, wrapped between words at most."""
    lines = text.splitlines()
    assert lines, "nothing printed"
    widest = max(lines, key=len)
    assert len(widest) <= width, f"{len(widest)} > {width}: {widest!r}"
    if not cut_ok:
        assert "…" not in text
    for cell in whole:
        assert any(cell in line for line in lines), f"{cell!r} not whole at {width} columns"
    streams = _streams(text)
    for cell in wrapped:
        flat = " ".join(cell.split())
        assert any(flat in s for s in streams), f"{cell!r} not whole at {width} columns"


def _cli(args: list[str], width: int, **env: str) -> str:
    got = runner.invoke(app, args, env={"COLUMNS": str(width), **env})
    assert got.exit_code == 0, got.output
    return got.stdout


def _ci(est, metric: str) -> str:
    return terminal.format_estimate(est, metric)


@pytest.mark.parametrize("width", WIDTHS)
def test_compare_and_plan_fit_every_width_with_names_intervals_and_verdicts_whole(many, width):
    summary = Results(many).summary
    text = _cli(["compare", str(many), "--all"], width)
    rows = summary.comparisons
    _check_fit(
        text,
        width,
        whole=[x for r in rows for x in (r.a, r.b, terminal.shown_difference(r, "recall@5"))],
        wrapped=[r.verdict for r in rows],
    )
    plan = _cli(["plan", str(many), "--rounds", "200", "--all"], width)
    _check_fit(plan, width, whole=list(summary.estimates))


@pytest.mark.parametrize("width", WIDTHS)
def test_search_and_chunk_fit_every_width(tmp_path, monkeypatch, width):
    monkeypatch.chdir(tmp_path)
    args = ["search", "--strategies", "fixed,parent-400", "--rounds", "200", "-o", "out"]
    text = _cli([*args, "--no-history"], width)
    summary = Results(tmp_path / "out").summary
    whole = [*summary.estimates]
    for est in summary.estimates.values():
        whole += [_ci(est[m], m) for m in ("recall@1", "recall@10", "mrr@10", "coverage@5")]
    _check_fit(text, width, whole, [r.verdict for r in summary.comparisons])
    strategies = _cli(["chunk", "--list"], width)
    _check_fit(strategies, width, STRATEGIES, ["parents 400 / children 100 words"])
    chunks = _cli(["chunk", "--strategy", "parent-400", "--show", "0"], width)
    _check_fit(chunks, width, whole=["parent-400: 25 documents"])


@pytest.mark.parametrize("width", WIDTHS)
def test_evaluate_and_check_fit_every_width(many, tmp_path, width):
    qrels = tmp_path / "q.txt"
    qrels.write_text("".join(f"{q} 0 d{q} 1\n" for q in range(12)))
    runs = []
    for name in ("a-long-run-name-from-a-system", "another-long-run-name"):
        run = tmp_path / f"{name}.run"
        run.write_text("".join(f"{q} Q0 d{(q * len(name)) % 12} 1 2.0 {name}\n" for q in range(12)))
        runs.append(str(run))
    out = tmp_path / f"e{width}"
    args = ["evaluate", *runs, "--qrels", str(qrels), "--rounds", "200", "-o", str(out)]
    text = _cli(args, width)
    summary = Results(out).summary
    whole = [*summary.estimates]
    whole += [terminal.format_estimate(e) for by in summary.estimates.values() for e in by.values()]
    _check_fit(text, width, whole, [r.verdict for r in summary.comparisons])
    gate = runner.invoke(
        app,
        ["check", str(many), str(many), "--system", "parent-400/bm25-k09", "--margin", "5"],
        env={"COLUMNS": str(width)},
    )
    assert gate.exit_code == 0, gate.output
    # the gate's verdict starts its first line (for CI logs to grep) and wraps between words
    # at the width; a run checked against itself passes as identical, with no interval
    lines = gate.stdout.splitlines()
    assert lines[0].startswith("PASS recall@5 parent-400/bm25-k09: ")
    assert all(len(line) <= width for line in lines), lines
    assert "identical on all 135 questions" in " ".join(lines)


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    """A history of two recorded runs of one measurement at two commits."""
    from test_history_report import keep, search

    base = tmp_path_factory.mktemp("two-runs")
    folder = base / "history"
    runs = [search(base / f"r{i}", size) for i, size in enumerate((60, 200))]
    for results, commit in zip(runs, "ab", strict=True):
        keep(folder, results, commit)
    return folder, runs


@pytest.mark.parametrize("width", WIDTHS)
def test_history_tables_fit_every_width_with_commits_times_and_verdicts_whole(two_runs, width):
    from ragmeter.cli.history import _commit, _when
    from ragmeter.history.store import HistoryStore
    from ragmeter.history.trend import trend

    folder, _ = two_runs
    with HistoryStore(folder, create=False) as store:
        kept = store.runs()
        found = trend(store, "mine", None)
    stamps = [_when(r.recorded_at) for r in kept]
    commits = [_commit(r) for r in kept]
    assert commits == ["aaaaaaa", "bbbbbbb"]
    listed = _cli(["history", "list", "--history", str(folder)], width)
    _check_fit(listed, width, whole=[*stamps, *commits, "search", "recall@5", "main"])
    shown = _cli(["history", "show", "2", "--history", str(folder)], width)
    _check_fit(shown, width, whole=["mine", "sentence"])
    trended = _cli(["history", "trend", "--system", "mine", "--history", str(folder)], width)
    changes = [p.change for p in found.points if p.change is not None]
    assert changes
    whole = [*stamps, *commits, *(_ci(p.estimate, "recall@5") for p in found.points)]
    whole += [terminal.shown_difference(c.row, "recall@5") for c in changes]
    _check_fit(trended, width, whole, [c.row.verdict for c in changes] + ["first run"])
    exported = _cli(["history", "export", "--history", str(folder)], width)
    assert exported == _cli(["history", "export", "--history", str(folder)], 300)  # CSV


@pytest.mark.parametrize("width", WIDTHS)
def test_answer_tables_fit_every_width(run_dir, tmp_path, monkeypatch, width):  # noqa: F811
    import shutil

    from test_answers_one_view import FixedJudge

    from ragmeter.answers.analysis import answer_report
    from ragmeter.llm import backends

    results = tmp_path / "results"
    shutil.copytree(run_dir, results)
    systems = ["sentence", "fixed-40"]
    judges = _cli(["judges", str(results)], width)
    _check_fit(judges, width, whole=["test:a", "test:b", "correct or not"])
    report = answer_report(results)
    whole = [*systems, *(_ci(r.hit, "hit") for r in report.systems)]
    failures = _cli(["failures", str(results)], width)
    _check_fit(failures, width, whole=systems + ["any failure"])
    monkeypatch.setitem(backends.KINDS, "test", FixedJudge)
    graded = _cli(["grade", str(results), "--judge", "test:c", "--no-history"], width)
    _check_fit(graded, width, whole=[*whole, "passage found", "passage missed"])
    if width == 80:  # the judge-corrected tables are among those that fit
        assert "What the judge saved" in graded  # titles whole on one line:
        assert "Paired verdicts on correct or partial, judge-corrected by hand (A" in graded


@pytest.mark.parametrize("width", WIDTHS)
def test_question_tables_fit_every_width(tmp_path, width):
    from ragmeter.cli.question_views import flag_text
    from ragmeter.questions.audit import read_audit

    ex = example_dir()
    lines = (ex / "generated.jsonl").read_text().splitlines()[:30]
    (tmp_path / "g.jsonl").write_text("\n".join(lines) + "\n")
    text = _cli(
        ["questions", "audit", str(tmp_path / "g.jsonl"), "--corpus", str(ex / "posts")], width
    )
    flagged = [f for f in read_audit(tmp_path / "audit.jsonl") if f.flagged]
    assert flagged
    flags = [flag_text(x) for f in flagged for x in f.flags]  # how strong, the phrase
    _check_fit(text, width, [f.id for f in flagged], flags, cut_ok=True)  # passages: "…"
    compared = _cli(
        [
            "questions", "compare", str(ex / "questions.jsonl"), str(tmp_path / "g.jsonl"),
            "--corpus", str(ex / "posts"), "--strategies", "fixed,parent-400",
            "--retrievers", "bm25", "--rounds", "200",
        ],
        width,
    )  # fmt: skip
    _check_fit(compared, width, whole=["fixed", "parent-400"])

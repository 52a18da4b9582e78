"""``ragmeter.cli.answer_views``: the progress bar (a label's last 28 characters, its
count), on the console given unless a progress console is; what ``answer`` prints (the
mean latency of the answers made, declined and replaced answers) and passes on (its
limit); what ``grade`` passes on, the note when the config names another accuracy
judge, the systems read from a comma-separated list; the accuracy table (the bound
when unscored answers were all correct, the judge-corrected table, the cross table's
bold cells where search and grade disagree); the judge-corrected table (numbers
right-aligned, the footer's seed and rounds those of its first row); agreement cells
as percent and kappa; the hand-check row; ``handgrade``'s defaults and console."""

from __future__ import annotations

import io
from pathlib import Path
from types import SimpleNamespace

from rich.console import Console

from ragmeter.answers.analysis import (
    COLUMNS,
    Accuracy,
    AnswerReport,
    Corrected,
    CrossTable,
    HandCheck,
    SystemAnswers,
)
from ragmeter.answers.reruns import Reruns
from ragmeter.cli import answer_views
from ragmeter.cli.answer_views import (
    _bar,
    _system_list,
    answer_command,
    grade_command,
    handgrade_command,
    print_answer_report,
    print_corrected,
    print_hand_checks,
)
from ragmeter.cli.judge_views import _agree
from ragmeter.stats import Estimate


def _console() -> Console:
    return Console(width=220, record=True, file=io.StringIO())


def _est(mean: float, low: float, high: float, seed: int = 1, rounds: int = 1000) -> Estimate:
    return Estimate(mean, low, high, 8, rounds, seed, "percentile", "mulberry32")


class _Progress:
    """Records what the bar is given in place of rich's Progress."""

    made: list[_Progress] = []

    def __init__(self, *columns, console=None, transient=False) -> None:
        self.console, self.tasks, self.updates = console, [], []
        _Progress.made.append(self)

    def add_task(self, description, total):
        self.tasks.append((description, total))
        return len(self.tasks) - 1

    def update(self, task, **kw) -> None:
        self.updates.append((task, kw))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_the_bar_shows_a_label_s_last_28_characters_and_its_count(monkeypatch):
    monkeypatch.setattr(answer_views, "Progress", _Progress)
    _Progress.made.clear()
    console = _console()
    label = "grading with a-judge-of-a-rather-long-name"
    with _bar(console) as update:
        update(label, 2, 9)
        update(label, 3, 9)
    [bar] = _Progress.made
    assert bar.console is console
    assert bar.tasks == [(label[-28:], 9)]
    assert bar.updates == [(0, {"completed": 2, "total": 9}), (0, {"completed": 3, "total": 9})]


def _reader_run(**kw):
    answers = [
        SimpleNamespace(ok=True, latency_s=1.0),
        SimpleNamespace(ok=True, latency_s=3.0),
        SimpleNamespace(ok=False, latency_s=50.0),
    ]
    stats = SimpleNamespace(calls=2, cache_hits=1, tokens_in=1200, tokens_out=30)
    base = dict(
        answers=answers, reader="test:r", k=5, stats=stats, seconds=1.5, errors=0, declined=0,
        replaced=0, folder=Path("res") / "answers", reruns=[], rerun_errors=0, settings=Reruns(),
    )  # fmt: skip
    base.update(kw)
    return SimpleNamespace(**base)


def test_answer_prints_the_mean_latency_declined_and_replaced(monkeypatch):
    monkeypatch.setattr(answer_views, "Progress", _Progress)
    _Progress.made.clear()
    asked = []

    def answer_questions(results, reader, **kw):
        asked.append((results, reader, kw))
        return _reader_run(declined=1, replaced=2)

    monkeypatch.setattr(answer_views, "answer_questions", answer_questions)
    console = _console()
    answer_command("res", "test:r", k=3, systems="a", limit=4, console=console, seed=9)
    [(results, reader, kw)] = asked
    assert (results, reader, kw["k"], kw["systems"], kw["limit"], kw["seed"]) == (
        "res",
        "test:r",
        3,
        "a",
        4,
        9,
    )
    assert _Progress.made[0].console is console  # no progress console: the console
    text = " ".join(console.export_text().split())
    assert "2.00 s per answer when it was made" in text
    assert "1 answer said the answer is not in the context." in text
    assert "2 answers of an earlier reader or k were replaced." in text

    other, console = _console(), _console()
    monkeypatch.setattr(answer_views, "answer_questions", lambda *a, **k: _reader_run())
    answer_command("res", "test:r", console=console, progress_console=other)
    assert _Progress.made[-1].console is other
    text = " ".join(console.export_text().split())
    assert "said the answer" not in text and "replaced" not in text


def test_grade_passes_its_limit_and_notes_a_configured_judge(monkeypatch, tmp_path):
    monkeypatch.setattr(answer_views, "Progress", _Progress)
    _Progress.made.clear()
    asked, reports = [], []

    def grade_answers(results, judges, **kw):
        asked.append(kw)
        return SimpleNamespace(judges=[], settings=Reruns())

    def answer_report(results, judge=None, systems=None, ppi=None):
        reports.append((judge, systems, ppi))
        return SimpleNamespace(judge=judge)

    monkeypatch.setattr(answer_views, "grade_answers", grade_answers)
    monkeypatch.setattr(answer_views, "answer_report", answer_report)
    monkeypatch.setattr(answer_views, "print_answer_report", lambda report, console: None)
    written = []  # answers/accuracy.json: the report printed, kept in the run graded
    monkeypatch.setattr(answer_views, "write_answer_report", lambda *a: written.append(a))
    monkeypatch.setattr(answer_views, "_failures_after_grading", lambda *a: None)
    compared = []
    monkeypatch.setattr(answer_views, "_verdicts_after_grading", lambda *a: compared.append(a))
    (tmp_path / "config.toml").write_text('[answers]\njudge = "test:x"\n')
    run = SimpleNamespace(path=tmp_path)
    opened = []
    graded = SimpleNamespace(results=run, folder=tmp_path / "answers", meta={})
    monkeypatch.setattr(answer_views, "as_results", lambda p: opened.append(p) or run)
    monkeypatch.setattr(answer_views, "load_answer_set", lambda res: res is run and graded)
    console = _console()
    grade_command(tmp_path, [], accuracy_judge="test:y", systems="a, b,", limit=2, console=console)
    assert opened == [tmp_path]  # the run read once, then handed on
    assert asked[0]["limit"] == 2 and asked[0]["accuracy_judge"] == "test:y"
    assert reports == [("test:y", ["a", "b"], "tuned")]  # PPI++'s weight unless --ppi plain
    # the same judge, systems and weight, on the one answer set read after grading
    assert compared == [(graded, "test:y", ["a", "b"], {"ppi": "tuned"}, console)]
    assert [(report.judge, where) for report, where in written] == [("test:y", run)]
    assert _Progress.made[0].console is console
    text = " ".join(console.export_text().split())
    assert "sets [answers] judge = 'test:x', which later reports use" in text

    for chosen in ("test:x", None):
        console = _console()
        grade_command(tmp_path, [], accuracy_judge=chosen, console=console)
        assert "sets [answers] judge" not in console.export_text()


def test_systems_from_a_list_or_comma_separated():
    assert _system_list(None) is None
    assert _system_list(" a , b,,") == ["a", "b"]
    assert _system_list(" , ") is None
    assert _system_list(("x", "y")) == ["x", "y"]
    assert _system_list([]) is None


def _cross(**filled) -> CrossTable:
    cells = {row: {c: [] for c in COLUMNS} for row in ("found", "missed")}
    for key, ids in filled.items():
        row, col = key.split("_")
        cells[row][col] = ids
    return CrossTable(cells)


def _corrected(judge="test:j", seed=1, rounds=1000) -> Corrected:
    return Corrected(
        judge,
        None,
        8,
        3,
        _est(0.5, 0.25, 0.75, seed, rounds),
        _est(0.625, 0.25, 1.0, seed, rounds),
        _est(0.55, 0.3, 0.8, seed, rounds),
        0.05,
    )


def _styled(console: Console) -> str:
    return console.export_text(styles=True, clear=False)


def test_the_accuracy_table_bound_corrected_rows_and_bold_disagreements():
    accuracy = Accuracy(
        _est(0.5, 0.25, 0.75),
        _est(0.625, 0.25, 0.875),
        {"correct": 4, "partial": 1, "wrong": 1, "unscored": 2},
        6,
        2,
        correct_if_unscored=_est(0.75, 0.5, 1.0),
    )
    row = SystemAnswers(
        "sentence",
        "test:j",
        8,
        accuracy,
        _est(0.5, 0.25, 0.75),
        _cross(
            found_correct=["q1"], found_wrong=["q2"], missed_correct=["q3"], missed_wrong=["q4"]
        ),
        corrected=_corrected(),
    )
    report = AnswerReport("test:r", "test:j", ["test:j"], 5, 3, 500, [row], _corrected())
    console = Console(width=250, record=True, file=io.StringIO(), force_terminal=True)
    print_answer_report(report, console)
    styled = _styled(console)
    text = console.export_text()
    flat = " ".join(text.split())
    assert "2, not correct (up to 75% if correct)" in flat
    assert "55.0 [30.0, 80.0] (3 by hand)" in flat
    assert "Answer accuracy corrected for the judge's errors (%): All systems together" in flat
    bold, plain = "\x1b[1m1\x1b[0m", "1\x1b[2m: "
    found = next(x for x in styled.splitlines() if "passage found" in x)
    missed = next(x for x in styled.splitlines() if "passage missed" in x)
    # found: correct plain, wrong bold; missed: correct bold, wrong plain
    assert plain + "q1" in found and found.count(bold) == 1
    assert found.index("q1") < found.index(bold) < found.index("q2")
    assert plain + "q4" in missed and missed.count(bold) == 1
    assert missed.index(bold) < missed.index("q3")
    assert "seed 3, 500 rounds" in flat


def test_the_corrected_table_is_right_aligned_with_its_first_row_s_seed():
    console = _console()
    rows = [_corrected("test:a", seed=4, rounds=300), _corrected("test:b", seed=5, rounds=700)]
    print_corrected(rows, console, "scope", accuracy_judge="test:b")
    text = console.export_text()
    assert "seed 4, 300 rounds" in text and "seed 5" not in text
    [line] = [x for x in text.splitlines() if x.startswith("│ test:a ")]
    cells = line.split("│")[1:-1]
    assert cells[0].startswith(" test:a ") and cells[0].endswith("  ")  # left
    assert cells[-1].endswith(" 8 / 3 ") and cells[-1].startswith("   ")  # right
    assert "test:b (gives accuracy)" in text


def test_agreement_cells_are_percent_then_kappa():
    ag = SimpleNamespace(percent=_est(0.75, 0.5, 1.0), kappa=_est(0.4, 0.1, 0.7))
    assert _agree(ag) == ("75.0 [50.0, 100.0]", "0.400 [0.100, 0.700]")
    assert _agree(None) == ("-", "-")


def test_the_hand_check_row_starts_with_its_judge():
    check = HandCheck("test:j", 4, 3, 2, None, None, ["s/q1"], [], [])
    console = _console()
    print_hand_checks([check], console)
    text = console.export_text()
    [line] = [x for x in text.splitlines() if x.startswith("│ test:j ")]
    assert [c.strip() for c in line.split("│")[1:-1]] == ["test:j", "3/4", "-", "2/4", "1", "0"]


def test_handgrade_defaults_and_its_console(monkeypatch):
    import ragmeter.answers.hand as hand

    asked = []

    def hand_grade(results, n, seed, ask, flagged_first):
        asked.append((n, seed, flagged_first))
        ask(SimpleNamespace(question_text="Q?", answer="A", reference="R", position=1,
                            target=n, question="q1"))  # fmt: skip
        return hand.HandRun(seed, n, 0, 0, 0, True, 3)

    monkeypatch.setattr(hand, "hand_grade", hand_grade)
    monkeypatch.setattr(answer_views, "hand_checks", lambda results: [])
    monkeypatch.setattr(
        answer_views, "print_stale_after_hand_grading", lambda results, console: None
    )
    console = _console()
    run = handgrade_command("res", input=io.StringIO(""), console=console)
    assert asked == [(20, 1, True)] and run.target == 20
    text = console.export_text()
    assert "Q?" in text and "0 of 3 in all (seed 1)" in text
    handgrade_command("res", n=2, input=io.StringIO(""), console=console, flagged_first=False)
    assert asked[-1] == (2, 1, False)


def test_judges_footer_has_the_run_s_seed_and_rounds(monkeypatch):
    import ragmeter.answers.failure_counts as failure_counts

    summary = SimpleNamespace(seed=3, rounds=700)
    aset = SimpleNamespace(judges=["test:a", "test:b"], results=SimpleNamespace(summary=summary))
    seen = []
    monkeypatch.setattr(answer_views, "answers_or_refuse", lambda results, doing: aset)
    monkeypatch.setattr(answer_views, "write_corrected_by_judge", lambda c, a, ppi: None)
    monkeypatch.setattr(answer_views, "choose_accuracy_judge", lambda a, chosen: "test:a")
    monkeypatch.setattr(answer_views, "judge_pairs", lambda a: ["pair"])
    monkeypatch.setattr(
        answer_views,
        "print_judge_pairs",
        lambda pairs, console, seed_rounds=None: seen.append((pairs, seed_rounds)),
    )
    monkeypatch.setattr(answer_views, "judge_reliability", lambda a: "reliability")
    monkeypatch.setattr(
        answer_views, "print_judge_reliability", lambda rel, console: seen.append(rel)
    )
    monkeypatch.setattr(answer_views, "position_checks", lambda a: [])
    monkeypatch.setattr(answer_views, "hand_checks", lambda a: [])
    monkeypatch.setattr(answer_views, "corrected_by_judge", lambda a, ppi="tuned": [])
    monkeypatch.setattr(failure_counts, "failure_report", lambda a, j: SimpleNamespace(leniency=[]))
    console = _console()
    assert answer_views.judges_command("res", console=console) == ["pair"]
    assert seen == [(["pair"], (3, 700)), "reliability"]
    assert "Answer accuracy is judged by test:a" in console.export_text()

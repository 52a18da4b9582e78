"""``ragmeter.cli.question_views``: the audit table (ids whole, each flag with how strong it is per
question, passages cut to twice the width, at most ``limit`` rows with the rest counted,
the caption's interval and counts) and the test-set comparison (per system A, B, A - B and
B without its flagged questions)."""

from __future__ import annotations

from dataclasses import replace

from rich.console import Console

from ragmeter import stats
from ragmeter.cli.question_views import _short, audit_grid, audit_table, compare_grid
from ragmeter.questions.audit_rows import AuditSummary, Flag, Flagged
from ragmeter.questions.compare import SetComparison, SystemComparison


def _text(table, width=300) -> str:
    console = Console(width=width, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(table)
    return console.export_text()


def test_short_text_keeps_its_limit_and_marks_a_cut():
    assert _short("one  two\nthree", 13) == "one two three"  # exactly the limit: whole
    assert _short("one two three", 12) == "one two thr…"
    assert len(_short("x" * 50, 12)) == 12


def _flagged(i, flags=("copies",), ratio=0.5, passage="p"):
    return Flagged(
        f"question-id-{i}",
        f"question {i}",
        passage,
        "d",
        0,
        1,
        ratio,
        tuple(Flag(k, "why") for k in flags),
    )


def test_the_audit_table_lists_flagged_questions_with_their_passage():
    rows = [
        _flagged(1, ("copies", "context-dependent"), 0.75, "word " * 200),
        _flagged(2, ()),
        _flagged(3, ("misstated",), None),
    ]
    grid = audit_grid(rows, limit=None, width=20)
    assert grid.title == "2 of 3 questions flagged"
    assert grid.header == ["id", "flags (how strong): flagged phrase", "question", "passage"]
    table = audit_table(rows, limit=None, width=20)
    assert table.columns[0].no_wrap  # ids whole
    ids, flags, questions, passages = zip(*grid.plain_rows(), strict=True)
    assert ids == ("question-id-1", "question-id-3")
    # flags read from a file without their measure; a wording rule's flag
    assert flags == (
        "copies (strength not recorded)\ncontext-dependent (wording rule)",
        "misstated (wording rule)",
    )
    assert passages[0] == ("word " * 8)[:39] + "…"  # 40 characters: twice the width
    text = " ".join(_text(table).split())
    assert "; copies 1, context-dependent 1; model checks not run" in text


def test_the_audit_table_stops_at_its_limit_and_counts_the_rest():
    rows = [_flagged(i) for i in range(5)]
    assert "more in the files" not in audit_grid(rows, limit=5).caption
    table = audit_grid(rows, limit=3)
    assert len(table.rows) == 3
    assert table.caption.endswith(
        "; copies 5; 2 more in the files; model checks not run: misstated, context"
    )


def test_the_audit_caption_without_ratios_or_flags():
    summary = AuditSummary(2, 0, None, 0, {"copies": 0}, {})
    table = audit_grid([_flagged(1, (), None)], summary)
    assert table.caption == "no copy ratio (no content words); no flags"
    est = stats.bootstrap([0.2, 0.4, 0.6], rounds=200, seed=3)
    table = audit_grid([], AuditSummary(3, 3, est, 0, {}, {}, not_run={"context": "why"}))
    # printed as every estimate is (format_estimate, in percent), not with a % on each end
    assert table.caption.startswith("mean copy ratio 40.0 [20.0, 60.0] (percent; ")
    assert "(percent; 95% bootstrap, seed 3, 200 rounds, n=3)" in table.caption
    assert table.caption.endswith("; no flags; model checks not run: context")


def test_the_comparison_table_gives_a_b_their_difference_and_b_cleaned():
    a = stats.bootstrap([1.0, 1.0, 0.0, 1.0], rounds=200, seed=1)
    b = stats.bootstrap([0.0, 1.0, 0.0, 0.0], rounds=200, seed=1)
    diff = stats.paired([1.0, 1.0, 0.0, 1.0], [0.0, 1.0, 0.0, 0.0], rounds=200, seed=1)
    clean = stats.bootstrap([1.0, 0.0], rounds=200, seed=1)
    result = SetComparison(
        "recall@5",
        ("reader", "generated"),
        [SystemComparison("bm25", a, b, diff, clean), SystemComparison("fixed", a, b, diff)],
        4,
        0,
        0,
        ["g1", "g2"],
        1,
        200,
    )
    table = compare_grid(result)
    assert table.header == [
        "system",
        "reader",
        "generated",
        "reader - generated",
        "verdict",
        "generated, unflagged",
    ]
    system, col_a, col_b, d, verdict, cleaned = zip(*table.plain_rows(), strict=True)
    assert system == ("bm25", "fixed")
    assert col_a[0].startswith("75.0 [") and col_b[0].startswith("25.0 [")
    assert d[0].startswith("+50.0 [")
    assert cleaned[0].startswith("50.0 [") and cleaned[0].endswith("(n=2)") and cleaned[1] == "-"
    assert "2 flagged generated questions dropped" in str(table.caption)


def test_passages_are_cut_at_twice_the_width_and_rows_are_ruled():
    rows = [_flagged(i, passage="passage words " * 40) for i in range(2)]
    table = audit_table(rows)  # the default width: passages cut at 180 characters
    assert str(next(iter(table.columns[3].cells))) == ("passage words " * 40).strip()[:179] + "…"
    lines = _text(table, width=120).splitlines()
    assert sum(line.startswith("├") for line in lines) == 1  # a rule between the two rows


def test_the_comparison_s_difference_never_rounds_an_end_onto_zero():
    # the A - B column prints as every difference does (format_difference): an end of
    # +0.03 points reads +0.03, not +0.0 as if the interval touched 0
    a = stats.bootstrap([1.0, 0.0], rounds=50, seed=1)
    diff = stats.paired([1.0, 0.0], [0.0, 0.0], rounds=50, seed=1)
    diff = replace(diff, difference=replace(diff.difference, mean=0.1, low=0.0003, high=0.2))
    result = SetComparison(
        "recall@5", ("a", "b"), [SystemComparison("s", a, a, diff)], 2, 0, 0, [], 1, 50
    )
    [row] = compare_grid(result).plain_rows()
    assert row[3] == "+10.0 [+0.03, +20.0]"


def test_a_copy_ratio_without_spread_prints_no_interval():
    est = stats.bootstrap([0.5, 0.5, 0.5], rounds=50, seed=1)
    caption = audit_grid([], AuditSummary(3, 3, est, 0, {}, {})).caption
    assert caption.startswith("mean copy ratio 50.0 (no spread: interval not estimable) (percent;")

"""The body of ``ragmeter failures`` and the failure tables ``grade`` and ``judges`` print.

The numbers come from :func:`ragmeter.answers.failure_counts.failure_report`; this
module only prints them.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rich.console import Console
from rich.text import Text

from ragmeter.answers.failure_counts import (
    ANY,
    FailureReport,
    Leniency,
    failure_report,
    load_answers,
    write_failures,
)
from ragmeter.answers.failures import (
    DEFAULT,
    FAILURES,
    AnswerCheck,
    CheckSettings,
    check_pattern,
)
from ragmeter.cli.layout import Grid, print_grids
from ragmeter.comparison.formatting import (
    column_labels,
    format_estimate,
    level_label,
    shown_difference,
    shown_p,
)
from ragmeter.comparison.ranks import ahead_pairs
from ragmeter.errors import InputError
from ragmeter.scoring.names import lower_is_better, metric_label

__all__ = [
    "check_settings",
    "failures_command",
    "print_failure_details",
    "print_failure_summary",
    "print_failure_table",
    "print_leniency",
    "print_precision",
]


def check_settings(
    refusals: Sequence[str] | None = None, support: float | None = None
) -> CheckSettings:
    """The checks' settings from ``--refusal PATTERN`` (added to the built-in ones) and
    ``--support SHARE``; a pattern that does not compile is a one-line error."""
    settings = DEFAULT
    for pattern in refusals or ():
        check_pattern(pattern, "--refusal")
    if refusals:
        settings = settings.with_refusals(list(refusals))
    if support is not None:
        if not 0.0 < support <= 1.0:
            raise InputError(f"--support must be above 0 and at most 1, not {support}")
        settings = CheckSettings(settings.refusals, settings.quantity, support, settings.min_words)
    return settings


def _seed_note(report: FailureReport) -> str:
    return (
        f"[dim]Rates are shares of each system's answers; {round(report.confidence * 100)}% "
        f"percentile bootstrap intervals, seed {report.seed}, {report.rounds} rounds.[/]"
    )


def print_failure_table(report: FailureReport, console: Console) -> None:
    """Each failure type (rows) per system (columns): count, and rate (%) with its interval."""
    console.print(
        Text(
            f"Answers of {report.reader or 'the reader'} from the top {report.k}; "
            f"graded by {report.judge or 'no judge yet'}."
        )
    )
    grid = Grid(
        f"Answer failures (count: % of answers [{report.confidence * 100:g}% CI])",
        ["failure", *(row.system for row in report.systems)],
        [["answers", *(str(row.n) for row in report.systems)]],
        right=set(range(1, len(report.systems) + 1)),
        key="failures",
    )
    for kind in (*FAILURES, ANY):
        grid.rows.append(
            [
                metric_label(kind),
                *(
                    f"{row.counts[kind]}: {format_estimate(row.rates[kind], kind)}"
                    for row in report.systems
                ),
            ]
        )
    print_grids(console, grid)
    console.print(_seed_note(report))


def print_failure_summary(report: FailureReport, console: Console) -> None:
    """One line per system with each failure type's count (what ``grade`` prints)."""
    console.print(Text("Answer failures (checked without a model; details: ragmeter failures):"))
    for row in report.systems:
        parts = [f"{row.counts[k]} {metric_label(k)}" for k in FAILURES]
        console.print(Text(f"  {row.system} ({row.n} answers): " + ", ".join(parts)))


def _describe(check: AnswerCheck, kind: str) -> str:
    if kind == "number_changed":
        return "; ".join(f"{c.stated} (reference: {c.reference})" for c in check.changed)
    if kind == "unsupported":
        return "; ".join(f"{u.sentence!r} ({u.support:.0%} support)" for u in check.unsupported)
    if kind == "without_passage":
        return f"graded {check.grade}, passage not in the top k"
    if kind == "refused":
        return "declined with the passage in the top k"
    return "states none of the reference's numbers"


def print_failure_details(report: FailureReport, console: Console, show: int = 10) -> None:
    """The answers behind each failure type, ``show`` per type (0: all)."""
    for kind in FAILURES:
        failing = report.failing(kind)
        if not failing:
            continue
        console.print(Text(f"{metric_label(kind)} ({len(failing)}):", style="bold"))
        for check in failing[: show or None]:
            console.print(Text(f"  {check.system}/{check.question}: {_describe(check, kind)}"))
        if show and len(failing) > show:
            console.print(
                Text(
                    f"  ... and {len(failing) - show} more (all in answers/failures.json)",
                    style="dim",
                )
            )


def print_comparisons(report: FailureReport, console: Console) -> None:
    """Every pair on the share of answers with any failure, under the run's rule: the
    verdict, the interval and the p-value come from one comparison and agree."""
    verdicts = report.comparisons
    if not verdicts or not verdicts.rows:
        return
    rule = verdicts.rule
    diff_label, p_label = column_labels(rule)
    shown = diff_label.replace("A - B", "a - b (points)")
    header = ["a", "b", shown, *([p_label] if p_label else []), "verdict"]
    grid = Grid(
        "Any failure, system against system (paired over questions)",
        header,
        right={2, 3} if p_label else {2},
        caption=rule.header,
        key="comparisons",
        wrap={len(header) - 1},
        groups=[list(range(1, len(header)))],  # a pair stays on one row: never split
        labels=False,
    )
    narrow = grid.narrow = Grid(  # a over - b, for a narrow terminal
        grid.title,
        ["a\n- b", *header[2:]],
        right={1, 2} if p_label else {1},
        caption=rule.header,
        key="comparisons",
        wrap={len(header) - 2},
        groups=[list(range(1, len(header) - 1))],
        labels=False,
    )
    lower = lower_is_better(ANY)  # a failure share: the verdict names the lower one
    for row in verdicts.rows:
        ahead = ahead_pairs([row], lower_better=lower)
        if row.identical:
            verdict = "identical"
        elif ahead:
            verdict = f"{next(iter(ahead))[0]} fails less"
        else:
            verdict = "tie"
        cells = [shown_difference(row, ANY, share=True)]
        if p_label:
            cells.append(shown_p(row, rule.alpha))
        grid.rows.append([row.a, row.b, *cells, verdict])
        narrow.rows.append([f"{row.a}\n- {row.b}", *cells, verdict])
    print_grids(console, grid)


def print_leniency(rows: Sequence[Leniency], console: Console) -> None:
    """How often each judge graded correct an answer whose number changed or was left out."""
    if not any(r.flagged for r in rows):
        return
    grid = Grid(
        "Judges passing a changed or left-out number",
        ["judge", "flagged", "passed", f"passed (%) [{level_label(r.rate for r in rows)} CI]"],
        right={1, 2, 3},
        key="leniency",
    )
    for r in rows:
        grid.rows.append(
            [
                r.judge,
                str(r.flagged),
                str(len(r.passed)),
                format_estimate(r.rate, "hit") if r.rate else "-",
            ]
        )
    print_grids(console, grid)
    console.print(
        "[dim]flagged: answers the judge scored whose number changed or was left out; "
        "passed: those it graded correct (each a leniency flag)[/]"
    )
    for r in rows:
        if r.passed:
            console.print(Text(f"  {r.judge} passed: {' '.join(r.passed)}"))


def print_precision(report: FailureReport, console: Console) -> None:
    """Each check against the hand grades: flagged answers the hand grade did not pass."""
    if not any(p.hand_graded for p in report.precision):
        return
    grid = Grid(
        "Checks against the hand grades",
        ["check", "flagged and hand-graded", "not correct by hand", "precision"],
        right={1, 2, 3},
        caption="precision: of the flagged answers graded by hand, the share not graded correct",
        key="precision",
    )
    for p in report.precision:
        value = "-" if p.precision is None else f"{p.precision:.0%}"
        grid.rows.append([metric_label(p.failure), str(p.hand_graded), str(p.confirmed), value])
    print_grids(console, grid)


def failures_command(
    results: str | Path,
    *,
    accuracy_judge: str | None = None,
    seed: int | None = None,
    rounds: int | None = None,
    settings: CheckSettings = DEFAULT,
    show: int = 10,
    console: Console | None = None,
) -> FailureReport:
    """``ragmeter failures RESULTS``: check every answer, count per system, write failures.json."""
    console = console or Console()
    aset = load_answers(results)
    if aset is None:
        raise InputError(
            f"{Path(results) / 'answers'}: no answers to check; run `ragmeter answer` first"
        )
    report = failure_report(aset, accuracy_judge, seed=seed, rounds=rounds, settings=settings)
    print_failure_table(report, console)
    print_comparisons(report, console)
    print_failure_details(report, console, show)
    print_leniency(report.leniency, console)
    print_precision(report, console)
    path = write_failures(report, results)
    console.print(Text.assemble("Failures: ", (str(path), "bold")))
    return report

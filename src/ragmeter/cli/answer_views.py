"""The bodies of ``ragmeter answer``, ``grade``, ``judges`` and ``handgrade``, and their tables.

Each takes plain arguments and a :class:`rich.console.Console` to print on, calls
the library (:mod:`ragmeter.answers`, which returns dataclasses and prints nothing)
and returns what it computed, so :mod:`ragmeter.cli.answers` only parses options.
The hand-grading loop's terminal side (showing an answer, reading a key) is
:func:`grade_by_hand`, from :mod:`ragmeter.cli.hand_views`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TextIO

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.text import Text

from ragmeter.answers.accuracy_files import write_answer_report, write_corrected_by_judge
from ragmeter.answers.analysis import (
    ACCURACY_BASIS,
    COLUMNS,
    CORRECTED_INTERVALS,
    AnswerReport,
    Corrected,
    JudgePair,
    answer_report,
    corrected_by_judge,
    hand_checks,
    judge_pairs,
)
from ragmeter.answers.analysis import (
    accuracy_judge as choose_accuracy_judge,
)
from ragmeter.answers.hand import HandRun
from ragmeter.answers.judges import judge_reliability
from ragmeter.answers.position import check_position_size, position_check, position_checks
from ragmeter.answers.run import (
    DEFAULT_K,
    GradeRun,
    ReaderRun,
    answer_questions,
    grade_answers,
)
from ragmeter.answers.store import (
    AnswerSet,
    answers_or_refuse,
    load_answer_set,
)
from ragmeter.cli.hand_views import grade_by_hand, print_stale_after_hand_grading
from ragmeter.cli.judge_views import (
    print_hand_checks,
    print_judge_pairs,
    print_judge_reliability,
    print_position_checks,
)
from ragmeter.cli.layout import Grid, print_grids
from ragmeter.cli.rerun_views import (
    flips_after_grading,
    grade_reruns_line,
    print_answer_reruns,
    rerun_settings_of,
)
from ragmeter.comparison.formatting import exact_note, format_estimate, level_label
from ragmeter.defaults import DEFAULTS
from ragmeter.inputs.config import answers_judge
from ragmeter.runs.results import Results, as_results
from ragmeter.scoring.names import answer_measures, metric_label
from ragmeter.stats.ppi import check_weight

__all__ = [
    "accuracy_footer",
    "answer_command",
    "grade_by_hand",
    "grade_command",
    "handgrade_command",
    "judges_command",
    "print_answer_report",
    "print_corrected",
    "print_hand_checks",
    "print_judge_pairs",
]


@contextlib.contextmanager
def _bar(console: Console) -> Iterator[Any]:
    progress = Progress(
        TextColumn("{task.description:<28}", style="bold", markup=False),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    )
    tasks: dict[str, Any] = {}

    def update(label: str, done: int, total: int) -> None:
        if label not in tasks:
            tasks[label] = progress.add_task(label[-28:], total=total)
        progress.update(tasks[label], completed=done, total=total)

    with progress:
        yield update


def _est(est: Any, measure: str = "correct") -> str:
    """An answer share as its row of the metric table prints it (``measure``: hit@k is
    a share printed as the answer measures are); ``-`` for none."""
    return format_estimate(est, measure) if est is not None else "-"  # never [x, x]


def _calls(stats: Any, seconds: float) -> str:
    return (
        f"{stats.calls} {'call' if stats.calls == 1 else 'calls'}, "
        f"{stats.cache_hits} from the cache, "
        f"{stats.tokens_in:,} tokens in / {stats.tokens_out:,} out, {seconds:.1f} s"
    )


# --- answer -------------------------------------------------------------------------------


def answer_command(
    results: str | Path,
    reader: str | Any,
    *,
    k: int = DEFAULT_K,
    systems: str | Sequence[str] | None = None,
    limit: int | None = None,
    console: Console | None = None,
    progress_console: Console | None = None,
    progress_bar: Callable[[], contextlib.AbstractContextManager[Any]] | None = None,
    reruns: Any = None,
    **call: Any,
) -> ReaderRun:
    """``ragmeter answer RESULTS --reader SPEC``: answer each question from its top k items.

    ``reader`` and ``call`` are as for :func:`ragmeter.answers.answer_questions`.
    Prints on ``console``; the progress bar goes to ``progress_console`` (default:
    ``console``), or is ``progress_bar()``: a context manager yielding
    ``progress(label, done, total)``. ``reruns`` (:class:`ragmeter.answers.reruns.Reruns`,
    or the flags :func:`~ragmeter.answers.reruns.rerun_settings` completes) asks the
    reader K times per question when it is rerun.
    """
    console = console or Console()
    reruns = rerun_settings_of(results, reruns)
    bar = progress_bar() if progress_bar is not None else _bar(progress_console or console)
    with bar as progress:
        run = answer_questions(
            results,
            reader,
            k=k,
            systems=systems,
            limit=limit,
            progress=progress,
            reruns=reruns,
            **call,
        )
    n = len(run.answers)
    latencies = [a.latency_s for a in run.answers if a.ok]
    mean_latency = sum(latencies) / len(latencies) if latencies else 0.0
    console.print(
        Text.assemble(
            (str(n), "bold"),
            (
                f" {'answer' if n == 1 else 'answers'} (questions x systems) by {run.reader} "
                f"from the top {run.k} items: ",
                "",
            ),
            _calls(run.stats, run.seconds),
            (f"; {mean_latency:.2f} s per answer when it was made.", ""),
        )
    )
    if run.errors:
        console.print(f"[yellow]{run.errors} without an answer (no reply); rerun to retry them.[/]")
    if run.declined:
        console.print(
            f"{run.declined} {'answer' if run.declined == 1 else 'answers'} said the answer "
            f"is not in the context."
        )
    if run.replaced:
        console.print(f"[dim]{run.replaced} answers of an earlier reader or k were replaced.[/]")
    console.print(Text.assemble("Answers: ", (str(run.folder / "reader.jsonl"), "bold")))
    print_answer_reruns(run, console)
    return run


# --- grade --------------------------------------------------------------------------------


def grade_command(
    results: str | Path,
    judges: Sequence[Any],
    *,
    accuracy_judge: str | None = None,
    systems: str | Sequence[str] | None = None,
    limit: int | None = None,
    console: Console | None = None,
    progress_console: Console | None = None,
    progress_bar: Callable[[], contextlib.AbstractContextManager[Any]] | None = None,
    choice: dict[str, Any] | None = None,
    reruns: Any = None,
    ppi: str = "tuned",
    position: tuple[int, int | None] | None = None,
    **call: Any,
) -> AnswerReport:
    """``ragmeter grade RESULTS --judge SPEC [--judge SPEC ...]``: grade, then report.

    ``judges`` and ``call`` are as for :func:`ragmeter.answers.grade_answers`.
    ``accuracy_judge`` (``--accuracy-judge``) names the judge whose grades give the
    accuracy, here and (recorded in ``answers/meta.json``) in later reports, where
    ``[answers] judge`` in the run's ``config.toml`` still comes first. ``choice``
    (``adjust``, ``baseline``, ``pairs``, ``family``, as ``compare`` takes them) chooses
    the rule and family of the paired verdicts; checked before any model call.
    ``reruns`` (:class:`ragmeter.answers.reruns.Reruns`, or flags completed from the
    run's config, else from what the answer step recorded) grades K reruns per answer;
    with K > 1 the flip rates are printed and kept (``answers/reruns.json``).
    ``ppi`` (``--ppi``): the judge-corrected numbers' weight, ``tuned`` or ``plain``.
    ``position`` (``--position-check N``, ``--position-seed``: size and seed of the sample)
    then has each judge grade a sample again in the other order
    (:func:`ragmeter.answers.position.position_check`) and prints how the orders agree.
    """
    console = console or Console()
    if position is not None:
        check_position_size(position[0])
    res = as_results(results)  # the search run, read once and handed on
    reruns = rerun_settings_of(res, reruns, recorded=True)
    choice = {k: v for k, v in (choice or {}).items() if v is not None}
    check_weight(ppi)
    if choice:
        from ragmeter.answers.paired import check_choice

        check_choice(res, **choice)
    bar = progress_bar() if progress_bar is not None else _bar(progress_console or console)
    with bar as progress:
        run: GradeRun = grade_answers(
            res,
            list(judges),
            accuracy_judge=accuracy_judge,
            systems=systems,
            limit=limit,
            progress=progress,
            reruns=reruns,
            **call,
        )
        if position is not None:
            n, seed = position
            position_check(res, list(judges), n=n, seed=seed, progress=progress, **call)
    _print_grade_run(run, console)
    config = res.path / "config.toml"
    if accuracy_judge is not None:
        configured = answers_judge(config)
        if configured and configured != accuracy_judge:
            console.print(
                Text(
                    f"Note: {config} sets [answers] judge = {configured!r}, which later "
                    "reports use unless given --accuracy-judge.",
                    style="yellow",
                )
            )
    listed = _system_list(systems)
    choice = {**choice, "ppi": ppi}
    graded = load_answer_set(res)  # the answers as grading left them, read once
    report = _report_after_grading(graded, accuracy_judge, listed, choice, run, console)
    if position is not None:
        print_position_checks(position_checks(graded), console)
    return report


def _print_grade_run(run: GradeRun, console: Console) -> None:
    """The reruns line, then each judge's grade counts, calls and first unscored replies."""
    line = grade_reruns_line(run.settings)
    if line:
        console.print(Text(line))
    for jr in run.judges:
        c = jr.counts
        console.print(
            Text.assemble(
                (jr.judge, "bold"),
                f": {c['correct']} correct, {c['partial']} partial, {c['wrong']} wrong, ",
                (f"{c['unscored']} unscored", "yellow" if c["unscored"] else ""),
                f" ({_calls(jr.stats, jr.seconds)})",
            )
        )
        for g in jr.unscored[:5]:
            console.print(
                Text(f"  unscored {g.system}/{g.question}: {g.error}; raw: {g.raw[:120]!r}"),
                style="dim",
            )


def _report_after_grading(
    graded: AnswerSet,
    judge: str | None,
    systems: list[str] | None,
    choice: dict[str, Any],
    run: GradeRun,
    console: Console,
) -> AnswerReport:
    """The accuracy table (kept as ``answers/accuracy.json``), the failure counts, the
    paired verdicts and the flip rates, each from the one answer set read after grading."""
    report = answer_report(graded, judge=judge, systems=systems, ppi=choice["ppi"])
    print_answer_report(report, console)
    write_answer_report(report, graded.results)
    _failures_after_grading(graded, report.judge, console)
    _verdicts_after_grading(graded, report.judge, systems, choice, console)
    flips_after_grading(graded, report.judge, systems, run, console)
    return report


def _verdicts_after_grading(
    graded: AnswerSet,
    judge: str | None,
    systems: list[str] | None,
    choice: dict[str, Any],
    console: Console,
) -> None:
    """The paired verdicts on answers printed, and ``answers/verdicts.json`` rewritten."""
    from ragmeter.answers.paired import answer_verdicts, write_answer_verdicts
    from ragmeter.cli.answer_verdict_views import print_answer_verdicts

    verdicts = answer_verdicts(graded, judge, systems=systems, **choice)
    print_answer_verdicts(verdicts, console)
    write_answer_verdicts(verdicts, graded.results)


def _failures_after_grading(graded: AnswerSet, judge: str | None, console: Console) -> None:
    """The failure counts in one line per system, and ``answers/failures.json`` rewritten."""
    from ragmeter.answers.failure_counts import failure_report, write_failures
    from ragmeter.cli.failure_views import print_failure_summary

    failures = failure_report(graded, judge)
    print_failure_summary(failures, console)
    write_failures(failures, graded.results)


def _system_list(systems: str | Sequence[str] | None) -> list[str] | None:
    if systems is None:
        return None
    if isinstance(systems, str):
        return [s.strip() for s in systems.split(",") if s.strip()] or None
    return list(systems) or None


def print_answer_report(report: AnswerReport, console: Console) -> None:
    """Accuracy per system beside the hit rate, then each system's hit x grade table."""
    corrected = any(r.corrected is not None for r in report.systems)
    measures = answer_measures()
    header = ["system", f"hit@{report.k}", *map(metric_label, measures)]
    header += [f"{metric_label('correct')}, judge-corrected"] if corrected else []
    grid = Grid(
        f"Answer accuracy (%), judged by {report.judge}, reader {report.reader}, top {report.k}",
        [*header, "scored", "unscored"],
        right=set(range(1, len(header) + 1)),
        wrap={len(header) + 1},
        key="accuracy",
    )
    for row in report.systems:
        acc = row.accuracy
        unscored = str(acc.unscored) + (f" (+{row.ungraded} ungraded)" if row.ungraded else "")
        if acc.correct_if_unscored is not None:  # counted as not correct; this if all were
            unscored += f", not correct (up to {acc.correct_if_unscored.mean:.0%} if correct)"
        cells = [row.system, _est(row.hit, f"hit@{report.k}")]
        cells += [_est(acc.share(m), m) for m in measures]
        if corrected:
            c = row.corrected
            cells.append(f"{_est(c.corrected)} ({c.n_hand} by hand)" if c else "-")
        grid.rows.append([*cells, str(acc.scored), unscored])
    print_grids(console, grid)
    if report.corrected is not None:
        print_corrected([report.corrected], console, "All systems together")
    from ragmeter.answers.corrected import SAVING_SCOPE, saving_rows

    saved = saving_rows(report)
    if saved:
        from ragmeter.cli.corrected_views import print_saving

        print_saving(saved, console, SAVING_SCOPE)
    for row in report.systems:
        cross = Grid(
            f"{row.system}: whole passage in the top {report.k} x answer grade",
            ["search", *COLUMNS],
            wrap=set(range(1, len(COLUMNS) + 1)),  # question ids wrap between ids
            key="cross",
        )
        for name, label in (("found", "passage found"), ("missed", "passage missed")):
            cells = []
            for col in COLUMNS:
                ids = row.cross.cells[name][col]
                disagree = (name == "found" and col in ("partial", "wrong")) or (
                    name == "missed" and col == "correct"
                )
                cell = Text(str(len(ids)), style="bold" if disagree and ids else "")
                if ids:
                    cell.append(": " + " ".join(ids), style="dim")
                cells.append(cell)
            cross.rows.append([label, *cells])
        print_grids(console, cross)
    console.print(Text(accuracy_footer(report), style="dim"))


def accuracy_footer(report: AnswerReport) -> str:
    """The line under the accuracy tables, from the numbers they show: what the shares
    are over (:data:`~ragmeter.answers.analysis.ACCURACY_BASIS`), how the intervals were
    drawn (the estimates' own level and method; the seed and rounds the report drew them
    with), and the exact intervals' footnote where a cell shows one."""
    shown = [
        e
        for row in report.systems
        for e in (row.hit, row.accuracy.correct, row.accuracy.correct_or_partial)
        if e is not None
    ]
    drawn = f"seed {report.seed}, {report.rounds} rounds"
    if shown:
        e = shown[0]
        how = f"{e.confidence * 100:g}% {e.method} bootstrap intervals, {drawn}"
    else:
        how = drawn
    if any(row.corrected is not None for row in report.systems):
        how += f"; {CORRECTED_INTERVALS}"
    exact = exact_note(shown)
    line = f"{ACCURACY_BASIS}; {how}." + (f" {exact}" if exact else "")
    if report.reruns > 1:
        k = report.reruns
        line += (
            f" Each answer graded {k} times: a share is the mean over questions of each "
            f"question's mean over its {k} reruns, and its interval resamples whole "
            f"questions with their {k} reruns; the counts are rerun 0's."
        )
    return line


# --- judges -------------------------------------------------------------------------------


def judges_command(
    results: str | Path,
    *,
    accuracy_judge: str | None = None,
    console: Console | None = None,
    ppi: str = "tuned",
) -> list[JudgePair]:
    """``ragmeter judges RESULTS``: agreement and leniency of every pair of judges.

    Names the judge whose grades give the accuracy (``accuracy_judge``, else as
    :func:`ragmeter.answers.analysis.accuracy_judge` chooses) and marks it in the
    judge-corrected table.
    """
    console = console or Console()
    check_weight(ppi)
    aset = answers_or_refuse(results, " to compare judges on")
    chosen = choose_accuracy_judge(aset, accuracy_judge)
    if chosen is not None:
        console.print(
            Text.assemble(
                "Answer accuracy is judged by ",
                (chosen, "bold"),
                " (choose with --accuracy-judge, or [answers] judge in config.toml).",
            )
        )
    if len(aset.judges) < 2:
        console.print(
            f"Only {len(aset.judges)} judge graded these answers; grade with a second "
            "(`ragmeter grade RESULTS --judge SPEC`) to compare judges."
        )
    pairs = judge_pairs(aset)
    print_judge_pairs(pairs, console, seed_rounds=_seed_rounds(aset.results))
    print_judge_reliability(judge_reliability(aset), console)
    print_position_checks(position_checks(aset), console)
    checks = hand_checks(aset)
    if any(c.n for c in checks):
        print_hand_checks(checks, console)
    corrected = corrected_by_judge(aset, ppi=ppi)
    write_corrected_by_judge(corrected, aset, ppi)
    if corrected:
        from ragmeter.cli.corrected_views import print_saving

        print_corrected(corrected, console, "Each judge, all systems together", chosen)
        print_saving(corrected, console, "each judge, all systems together")
    from ragmeter.answers.failure_counts import failure_report
    from ragmeter.cli.failure_views import print_leniency

    print_leniency(failure_report(aset, chosen).leniency, console)
    return pairs


def print_corrected(
    rows: Sequence[Corrected], console: Console, scope: str, accuracy_judge: str | None = None
) -> None:
    """Judge accuracy, hand-only accuracy and the judge-corrected accuracy, side by side;
    the row of ``accuracy_judge`` is marked as the one that gives the accuracy."""
    grid = Grid(
        f"Answer accuracy corrected for the judge's errors (%): {scope}",
        ["judge", "judge's accuracy", "hand grades alone", "judge-corrected", "answers / by hand"],
        right={1, 2, 3, 4},
        caption=(
            "judge-corrected = w x the judge's accuracy on all answers + mean(hand - w x "
            "judge) on the hand-graded ones (prediction-powered inference; w, the rectifier "
            "weight, is tuned to the least variance (PPI++) or 1 with --ppi plain)"
        ),
        key="corrected",
    )
    for c in rows:
        mark = " (gives accuracy)" if c.judge == accuracy_judge and len(rows) > 1 else ""
        grid.rows.append(
            [
                c.judge + mark,
                _est(c.raw),
                _est(c.hand_only),
                _est(c.corrected),
                f"{c.n} / {c.n_hand}",
            ]
        )
    print_grids(console, grid)
    first = rows[0].corrected
    console.print(
        f"[dim]{level_label([first])} percentile bootstrap intervals, seed {first.seed}, "
        f"{first.rounds} rounds (mulberry32); {CORRECTED_INTERVALS}.[/]"
    )


def _seed_rounds(results: Results) -> tuple[int, int]:
    return results.summary.seed, results.summary.rounds


# --- handgrade ----------------------------------------------------------------------------


def handgrade_command(
    results: str | Path,
    *,
    n: int = 20,
    seed: int = DEFAULTS.seed,
    input: TextIO | None = None,
    console: Console | None = None,
    flagged_first: bool = True,
) -> HandRun:
    """``ragmeter handgrade RESULTS [--n 20] [--seed 1]``: grade a sample by hand.

    With ``flagged_first`` (``--flagged-first``, the default) answers a judge passed
    although their number changed or was left out come first; ``--random-order``
    keeps the plain seeded random order (a random sample, as the judge-corrected
    accuracy needs).
    """
    import sys

    from ragmeter.answers.hand import hand_grade
    from ragmeter.cli.hand_views import terminal_ask

    console = console or Console()
    stream = input if input is not None else sys.stdin
    run = hand_grade(
        results, n=n, seed=seed, ask=terminal_ask(console, stream), flagged_first=flagged_first
    )
    if run.flagged:
        console.print(
            f"{run.flagged} {'answer' if run.flagged == 1 else 'answers'} a judge passed with a "
            "changed or left-out number came first (--random-order for a random sample)."
        )
    console.print(
        f"Hand-graded {run.graded} {'answer' if run.graded == 1 else 'answers'} this time "
        f"({run.skipped} skipped); "
        f"{run.total} of {min(run.target, run.available)} in all (seed {seed})."
    )
    if run.remaining:
        console.print(
            Text(
                f"{run.remaining} to go: run `ragmeter handgrade {results} "
                f"--n {n} --seed {seed}` to resume."
            )
        )
    checks = hand_checks(results)
    if any(c.n for c in checks):
        print_hand_checks(checks, console)
    print_stale_after_hand_grading(results, console)
    return run

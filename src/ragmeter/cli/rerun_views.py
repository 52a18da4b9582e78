"""What ``answer`` and ``grade`` print about reruns: the settings a run used, and after
grading with K > 1 the flip rates (:mod:`ragmeter.answers.flips`): each system's mean
beside the reruns' share of its accuracy's variance, then the questions that flip most
with each rerun's grade."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from ragmeter.answers.flips import FLIP_CAPTION, FlipReport, flip_rows, shown_rate
from ragmeter.answers.reruns import Reruns
from ragmeter.answers.store import AnswerSet
from ragmeter.cli.layout import Grid, print_grids
from ragmeter.runs.results import Results

__all__ = [
    "SHORT",
    "flips_after_grading",
    "grade_reruns_line",
    "print_answer_reruns",
    "print_flips",
    "rerun_settings_of",
    "reruns_line",
]

SHORT = {"correct": "c", "partial": "p", "wrong": "w", "unscored": "u", None: "-"}
"""One letter per grade in the flip table: c, p, w, u (unscored), - (not graded)."""


def reruns_line(reruns: Reruns, role: str) -> str | None:
    """One line saying how ``role`` (reader or judge) was asked, or ``None`` when it was
    asked as always (once per question, temperature 0, seed 0)."""
    if not (reruns.active and reruns.reruns(role)):
        return None
    t = reruns.temperature or 0.0
    top_p = "the model's top_p" if reruns.top_p is None else f"top_p {reruns.top_p:g}"
    line = (
        f"Reruns: the {role} asked {reruns.k} {'time' if reruns.k == 1 else 'times'} per "
        f"question at temperature {t:g}, {top_p}, seeds from the run's seed {reruns.seed} "
        f"and the rerun index (rerun 0: seed 0)."
    )
    if reruns.k > 1 and t == 0:
        line += " At temperature 0 a rerun differs only where the model is not deterministic."
    return line


def print_flips(report: FlipReport, console: Console, most: int = 5) -> None:
    """Each system's mean flip rate and the reruns' share of its accuracy's variance,
    then the ``most`` questions that flip most."""
    k = report.reruns.k
    grid = Grid(
        f"Flip rate of {k} reruns (%), judged by {report.judge}",
        [
            "system",
            "mean flip rate",
            "reruns' share of variance",
            "questions that flip",
            "questions",
        ],
        right={1, 2, 3, 4},
        caption=FLIP_CAPTION,
        key="flips",
    )
    for row in flip_rows(report):
        grid.rows.append(
            [row["system"], row["rate"], row["share"], str(row["flipping"]), str(row["questions"])]
        )
    print_grids(console, grid)
    top = report.most(most)
    if not top:
        console.print(Text(f"No question's grade changed between its {k} reruns."))
        return
    worst = Grid(
        f"The {len(top)} {'question' if len(top) == 1 else 'questions'} that flip most",
        ["question", "flip rate", "grades of each rerun"],
        right={1},
        wrap={2},
        caption="c correct, p partial, w wrong, u unscored, - not graded",
        key="most_flipped",
    )
    for q in top:
        grades = "; ".join(
            f"{s} {' '.join(SHORT.get(g, '?') for g in row)}" for s, row in q.grades.items()
        )
        worst.rows.append([q.question, shown_rate(q.rate), grades])
    print_grids(console, worst)


def rerun_settings_of(results: Results | str | Path, reruns: Any, recorded: bool = False) -> Any:
    """``reruns`` as :class:`~ragmeter.answers.reruns.Reruns`: flags (a dict) completed
    from ``[answers]`` of the run's config and, for grade (``recorded``), from what the
    answer step recorded in ``meta.json``; a ``Reruns`` or ``None`` as given."""
    if not isinstance(reruns, dict):
        return reruns
    from ragmeter.answers.reruns import rerun_settings
    from ragmeter.answers.store import answers_dir, read_meta

    earlier = read_meta(answers_dir(results)).get("answer_reruns") if recorded else None
    return rerun_settings(results, recorded=earlier, **reruns)


def print_answer_reruns(run: Any, console: Console) -> None:
    """How the reader was rerun, and where reruns 1..K-1 went (nothing when it was not)."""
    line = reruns_line(run.settings, "reader")
    if line is None:
        return
    console.print(Text(line))
    if run.reruns:
        console.print(
            Text.assemble(
                f"{len(run.reruns)} more answers (reruns 1 to {run.settings.k - 1}): ",
                (str(run.folder / "reader_reruns.jsonl"), "bold"),
            )
        )
    if run.rerun_errors:
        console.print(f"[yellow]{run.rerun_errors} reruns without an answer; rerun to retry.[/]")


def grade_reruns_line(reruns: Reruns) -> str | None:
    """How the judges were asked when answers or judges were rerun, else None."""
    if reruns.k < 2:
        return reruns_line(reruns, "judge")
    k = reruns.k
    what = {
        "reader": f"each of the reader's {k} reruns once",
        "judge": f"each answer {k} times",
        "both": f"each of the reader's {k} reruns by the judge's rerun of the same index",
    }[reruns.of]
    line = reruns_line(reruns, "judge") or "The judges were asked at temperature 0."
    return f"Graded {what}. {line}"


def flips_after_grading(
    graded: AnswerSet, judge: str | None, systems: list[str] | None, run: Any, c: Console
) -> None:
    """With K > 1 the flip rates printed and kept (``answers/reruns.json``, ``meta.json``);
    without, what an earlier grade with reruns kept there is removed. ``graded`` is the
    answer set as grading left it."""
    from ragmeter.answers.flips import FILE, clear_flips, flip_report, write_flips

    if run.settings.k < 2:
        if (graded.folder / FILE).exists() or "flip_rates" in graded.meta:
            clear_flips(graded.results)
        return
    report = flip_report(graded, judge, systems)
    print_flips(report, c)
    write_flips(report, graded.results)

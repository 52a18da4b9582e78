"""The paired verdicts on answers that ``ragmeter grade`` prints: the search half's
comparison table (:func:`ragmeter.cli.search_views.comparison_views`: the same columns,
wording, rule line and notes) once per answer measure, and the lines saying what the
pairs are over; one sentence instead when there is nothing to compare."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from ragmeter.answers.paired import BASIS, AnswerVerdicts, rerun_basis
from ragmeter.cli.search_views import comparison_views

__all__ = ["basis_line", "print_answer_verdicts"]


def _counted(counts: dict[str, int]) -> str:
    return ", ".join(f"{s} {n}" for s, n in counts.items() if n)


def basis_line(v: AnswerVerdicts) -> str:
    """What every pair is over: the questions, how an answer scores (an unscored one
    as not correct, with each system's count; with reruns, the means over them), and
    the answers left out of the pairs."""
    n = len(v.questions)
    line = (
        f"Pairs over the {n} {'question' if n == 1 else 'questions'} every compared system "
        f"has a graded answer for; {BASIS}"
    )
    unscored = _counted(v.unscored)
    line += f" (unscored: {unscored})." if unscored else " (none is unscored)."
    if v.reruns > 1:
        line += f" With reruns, {rerun_basis(v.reruns)}."
    left, ungraded = _counted(v.left_out), _counted(v.ungraded)
    if left:
        line += f" Left out, answering a question another system has no graded answer for: {left}."
    if ungraded:
        line += f" Left out, not graded yet by {v.judge}: {ungraded}."
    return line


def print_answer_verdicts(v: AnswerVerdicts, console: Console) -> None:
    """Each measure's table of paired verdicts under the run's rule, then the lines
    saying what the pairs are over; the notes alone when there is no table."""
    if not v.tables:
        for note in v.notes:
            console.print(Text(note))
        return
    reader = f", reader {v.reader}" if v.reader else ""
    console.print(
        Text.assemble(
            ("Paired verdicts on the answers", "bold"), f", judged by {v.judge}{reader}, top {v.k}"
        )
    )
    for measure, table in v.tables.items():
        shown, notes = comparison_views(
            table.rows, measure, v.seed, v.rounds, table.rule, console.width, limit=None
        )
        for renderable in shown:
            console.print(renderable)
        for line in notes:
            console.print(Text(line, style="dim"))
    for note in v.notes:
        console.print(Text(note, style="yellow"))
    console.print(Text(basis_line(v), style="dim"))

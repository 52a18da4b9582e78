"""The paired verdicts on answers that ``ragmeter grade`` prints: the search half's
comparison table (:func:`ragmeter.cli.search_views.comparison_views`: the same columns,
wording, rule line and notes) once per answer measure, each followed by where each
system ranks on it (:mod:`ragmeter.cli.rank_views`), and the lines saying what the
pairs are over; one sentence instead when there is nothing to compare."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from ragmeter.answers.paired import AnswerVerdicts, basis_line
from ragmeter.cli.rank_views import print_ranks
from ragmeter.cli.search_views import comparison_views

__all__ = ["basis_line", "print_answer_verdicts"]


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
        print_ranks(v.ranks.get(measure), console)
    for note in v.notes:
        console.print(Text(note, style="yellow"))
    console.print(Text(basis_line(v), style="dim"))
    if v.corrected:
        from ragmeter.cli.corrected_views import print_corrected_verdicts

        for fixed in v.corrected.values():
            print_corrected_verdicts(fixed, console)

"""Terminal tables of the question route: the audit's flagged questions, a test-set comparison.

The library (:mod:`ragmeter.questions`) returns :class:`~ragmeter.questions.Flagged`,
:class:`~ragmeter.questions.AuditSummary` and :class:`~ragmeter.questions.SetComparison`;
these functions turn them into :class:`rich.table.Table` objects. User text (ids,
questions, passages, system names) goes in as :class:`rich.text.Text`, never as markup.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.table import Table
from rich.text import Text

from ragmeter.formatting import format_estimate
from ragmeter.questions.audit import AuditSummary, Flagged, summarize_audit
from ragmeter.questions.compare import SetComparison

__all__ = ["audit_table", "compare_table"]


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def audit_table(
    flagged: Sequence[Flagged],
    summary: AuditSummary | None = None,
    limit: int | None = 50,
    width: int = 90,
) -> Table:
    """A :class:`rich.table.Table` of the flagged questions next to their passages.

    At most ``limit`` rows (``None``: all); the caption gives the set's mean copy
    ratio with its interval and the count per flag.
    """
    summary = summary or summarize_audit(flagged)
    rows = [f for f in flagged if f.flagged]
    title = f"{summary.flagged} of {summary.n} questions flagged"
    table = Table(title=title, show_lines=True, title_justify="left")
    table.add_column("id", no_wrap=True)
    table.add_column("flags")
    table.add_column("copy", justify="right")
    table.add_column("question", ratio=1)
    table.add_column("passage", ratio=2)
    shown = rows if limit is None else rows[:limit]
    for f in shown:
        table.add_row(
            Text(f.id),
            "\n".join(f.labels),
            "" if f.copy_ratio is None else f"{f.copy_ratio:.0%}",
            Text(f.question),
            Text(_short(f.passage, width * 2)),
        )
    counts = ", ".join(f"{k} {v}" for k, v in summary.counts.items() if v)
    ratio = summary.copy_ratio
    ratio_text = (
        f"mean copy ratio {ratio.mean:.1%} [{ratio.low:.1%}, {ratio.high:.1%}] "
        f"(95% bootstrap, seed {ratio.seed}, {ratio.rounds} rounds, n={ratio.n})"
        if ratio is not None
        else "no copy ratio (no content words)"
    )
    more = f"; {len(rows) - len(shown)} more in the files" if len(shown) < len(rows) else ""
    skipped = getattr(summary, "not_run", None) or {}
    not_run = f"; model checks not run: {', '.join(skipped)}" if skipped else ""
    table.caption = f"{ratio_text}; {counts or 'no flags'}{more}{not_run}"
    table.caption_justify = "left"
    return table


def compare_table(result: SetComparison) -> Table:
    """A :class:`rich.table.Table`: per system, A, B, A - B with its paired interval, B cleaned."""
    a_name, b_name = result.names
    table = Table(
        title=Text(
            f"{result.metric}: {a_name} vs {b_name} questions, {result.pairs} paired by passage"
        ),
        title_justify="left",
    )
    table.add_column("system", no_wrap=True)
    table.add_column(Text(a_name), justify="right")
    table.add_column(Text(b_name), justify="right")
    table.add_column(Text(f"{a_name} - {b_name}"), justify="right")
    table.add_column("verdict")
    table.add_column(Text(f"{b_name}, unflagged"), justify="right")
    for s in result.systems:
        d = s.diff.difference
        table.add_row(
            Text(s.system),
            format_estimate(s.a, "hit"),
            format_estimate(s.b, "hit"),
            f"{d.mean * 100:+.1f} [{d.low * 100:+.1f}, {d.high * 100:+.1f}]",
            Text(s.diff.verdict),
            f"{format_estimate(s.b_clean, 'hit')} (n={s.b_clean.n})"
            if s.b_clean is not None
            else "-",
        )
    table.caption = Text(
        f"Percent; 95% bootstrap intervals, paired on the same passages; seed {result.seed}, "
        f"{result.rounds} rounds. {len(result.dropped)} flagged {b_name} questions dropped "
        f"from the last column."
    )
    table.caption_justify = "left"
    return table

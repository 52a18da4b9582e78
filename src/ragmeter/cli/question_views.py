"""Terminal tables of the question route: the audit's flagged questions, a test-set comparison.

The library (:mod:`ragmeter.questions`) returns :class:`~ragmeter.questions.Flagged`,
:class:`~ragmeter.questions.AuditSummary` and :class:`~ragmeter.questions.SetComparison`;
these functions turn them into grids (:class:`ragmeter.cli.layout.Grid`, which the
commands fit to the terminal) and :class:`rich.table.Table` objects. User text (ids,
questions, passages, system names) goes in as :class:`rich.text.Text`, never as markup.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.table import Table
from rich.text import Text

from ragmeter.cli.layout import Grid, as_table
from ragmeter.comparison.formatting import format_difference, format_estimate
from ragmeter.defaults import DEFAULTS
from ragmeter.questions.audit import AuditSummary, Flag, Flagged, summarize_audit
from ragmeter.questions.compare import SetComparison

__all__ = [
    "audit_grid",
    "audit_headline",
    "audit_table",
    "compare_grid",
    "compare_table",
    "flag_text",
]


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def audit_headline(summary: AuditSummary, flagged: Sequence[Flagged] = ()) -> str:
    """``12 of 30 questions flagged; 11 only weakly (copies 60-67%, threshold 60%)``:
    how many questions were flagged and how many of them only by weak flags, with the
    range of each weak flag's measure (read from ``flagged``, when given)."""
    head = f"{summary.flagged} of {summary.n} questions flagged"
    if not summary.weak:
        return head
    ranges: dict[str, list[Flag]] = {}
    for f in flagged:
        if f.weak:
            for flag in f.flags:
                ranges.setdefault(flag.kind, []).append(flag)
    parts = []
    for kind, flags in ranges.items():
        low, high = min(x.value or 0 for x in flags), max(x.value or 0 for x in flags)
        share = kind != "near-duplicate"
        span = (
            (f"{low:.0%}" if low == high else f"{low:.0%}-{high:.0%}")
            if share
            else (f"{low:.2f}" if low == high else f"{low:.2f}-{high:.2f}")
        )
        limit = flags[0].threshold or 0
        strong = (limit + 1) / 2
        parts.append(
            f"{kind} {span}, flagged from {limit:.0%}, strong from {strong:.0%}"
            if share
            else f"{kind} {span}, flagged from {limit:.2f}, strong from {strong:.2f}"
        )
    weakly = f"{summary.weak} of them only weakly"
    return f"{head}; {weakly} ({'; '.join(parts)})" if parts else f"{head}; {weakly}"


def flag_text(flag: Flag) -> str:
    """``copies (weak, 67% >= 60%): 'time complexity'``: the flag, how strong it is and
    the phrase that raised it."""
    return f"{flag.label} ({flag.how_strong})" + (f": '{flag.phrase}'" if flag.phrase else "")


def audit_grid(
    flagged: Sequence[Flagged],
    summary: AuditSummary | None = None,
    limit: int | None = 50,
    width: int = 90,
) -> Grid:
    """The flagged questions: each flag with how strong it is and the phrase that raised
    it (:func:`flag_text`), the question and (shortened to ``width * 2`` characters) its
    passage.

    At most ``limit`` rows (``None``: all); the title says how many questions were
    flagged and how many only weakly, the caption gives the set's mean copy ratio with
    its interval and the count per flag.
    """
    summary = summary or summarize_audit(flagged)
    rows = [f for f in flagged if f.flagged]
    grid = Grid(
        audit_headline(summary, flagged),
        ["id", "flags (how strong): flagged phrase", "question", "passage"],
        key="audit",
        wrap={1, 2, 3},
        lines=True,
    )
    shown = rows if limit is None else rows[:limit]
    for f in shown:
        grid.rows.append(
            [
                Text(f.id),
                Text("\n".join(flag_text(x) for x in f.flags)),
                Text(f.question),
                Text(_short(f.passage, width * 2)),
            ]
        )
    counts = ", ".join(f"{k} {v}" for k, v in summary.counts.items() if v)
    ratio = summary.copy_ratio
    ratio_text = (
        f"mean copy ratio {format_estimate(ratio, 'hit')} (percent; "
        f"{ratio.confidence * 100:g}% bootstrap, seed {ratio.seed}, {ratio.rounds} rounds, "
        f"n={ratio.n})"
        if ratio is not None
        else "no copy ratio (no content words)"
    )
    more = f"; {len(rows) - len(shown)} more in the files" if len(shown) < len(rows) else ""
    skipped = getattr(summary, "not_run", None) or {}
    not_run = f"; model checks not run: {', '.join(skipped)}" if skipped else ""
    grid.caption = f"{ratio_text}; {counts or 'no flags'}{more}{not_run}"
    return grid


def audit_table(
    flagged: Sequence[Flagged],
    summary: AuditSummary | None = None,
    limit: int | None = 50,
    width: int = 90,
) -> Table:
    """:func:`audit_grid` as one :class:`rich.table.Table`."""
    return as_table(audit_grid(flagged, summary, limit, width))


def compare_grid(result: SetComparison) -> Grid:
    """Per system: A, B, A - B with its paired interval and verdict under the comparison's
    rule (named in the caption), and B cleaned."""
    a_name, b_name = result.names
    grid = Grid(
        f"{result.metric}: {a_name} vs {b_name} questions, {result.pairs} paired by passage",
        ["system", a_name, b_name, f"{a_name} - {b_name}", "verdict", f"{b_name}, unflagged"],
        right={1, 2, 3, 5},
        key="compare",
        wrap={4},
    )
    for s in result.systems:
        d = s.diff.difference
        grid.rows.append(
            [
                s.system,
                format_estimate(s.a, "hit"),
                format_estimate(s.b, "hit"),
                format_difference(d),
                s.diff.verdict,
                f"{format_estimate(s.b_clean, 'hit')} (n={s.b_clean.n})"
                if s.b_clean is not None
                else "-",
            ]
        )
    level = result.systems[0].a.confidence if result.systems else DEFAULTS.confidence
    rule = f". {result.rule.header}" if result.rule is not None else ""
    grid.caption = (
        f"Percent; {level * 100:g}% bootstrap intervals, seed {result.seed}, {result.rounds} "
        f"rounds. {a_name} - {b_name} paired on the same passages, every system one family"
        f"{rule}. {len(result.dropped)} flagged {b_name} questions dropped from the last column."
    )
    return grid


def compare_table(result: SetComparison) -> Table:
    """:func:`compare_grid` as one :class:`rich.table.Table`."""
    return as_table(compare_grid(result))

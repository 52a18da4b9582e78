"""Rich tables for the terminal: scores with intervals, comparisons, sample sizes.

The search and evaluate commands print these; they read the typed
:class:`ragmeter.summary.Summary`. (Formerly ``ragmeter.report.terminal``: the library never
imports rich, so the terminal tables live with the command line.)
"""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table
from rich.text import Text

from ragmeter.formatting import column_labels, format_estimate, shown_difference, shown_p
from ragmeter.metrics import is_share
from ragmeter.stats import SizeRow
from ragmeter.summary import Summary
from ragmeter.verdicts import Row, Rule

RANK_METRICS = ("mrr@10", "ndcg@10", "precision@5", "coverage@5")


_is_share = is_share


def _cap_mark(summary: Summary, system: str, metric: str) -> str:
    """``*`` when ``metric``'s k was capped for ``system`` (fewer items than k)."""
    cap = summary.k_capped.get(system)
    return "*" if cap is not None and "@" in metric and int(metric.split("@")[1]) > cap else ""


def cap_note(summary: Summary) -> str | None:
    """The footnote for capped cells: ``* k capped at the item count: whole 2, ...``."""
    if not summary.k_capped:
        return None
    by_cap: dict[int, list[str]] = {}
    for system, n in summary.k_capped.items():
        by_cap.setdefault(n, []).append(system)
    return "* k capped at the system's item count: " + "; ".join(
        f"{n} {'item' if n == 1 else 'items'} for {', '.join(names)}" for n, names in by_cap.items()
    )


def hit_table(summary: Summary, ks: list[int], title: str = "") -> Table:
    """Hit rate (recall@k) with its interval and the words sent, per k."""
    table = Table(
        title=title or "Hit rate (recall@k, %) and words sent to the model",
        title_justify="left",
        caption=cap_note(summary),
        caption_justify="left",
    )
    table.add_column("system", style="bold")
    for k in ks:
        table.add_column(f"recall@{k}", justify="right")
        table.add_column(f"words@{k}", justify="right", style="dim")
    for system, est in summary.estimates.items():
        row: list = [Text(system)]
        for k in ks:
            mark = _cap_mark(summary, system, f"recall@{k}")
            row.append(format_estimate(est[f"recall@{k}"], f"recall@{k}") + mark)
            row.append(f"{est[f'words@{k}'].mean:.0f}{mark}")
        table.add_row(*row)
    return table


def _rank_metrics(available: dict) -> list[str]:
    """MRR and nDCG at 10, else at the largest k there is; precision and coverage at 5,
    else at the largest k below 5 (or the smallest k)."""
    ks = sorted({int(m.split("@")[1]) for m in available if "@" in m})
    if not ks:
        return []
    top = 10 if 10 in ks else ks[-1]
    mid = 5 if 5 in ks else max([k for k in ks if k < 5] or [ks[0]])
    wanted = (f"mrr@{top}", f"ndcg@{top}", f"precision@{mid}", f"coverage@{mid}")
    return [m for m in wanted if m in available]


def rank_table(summary: Summary, metrics: tuple[str, ...] | None = None) -> Table:
    """MRR, nDCG, precision and coverage with intervals."""
    first = next(iter(summary.estimates.values()))
    present = [m for m in metrics if m in first] if metrics else _rank_metrics(first)
    table = Table(
        title="Rank-aware scores",
        title_justify="left",
        caption=cap_note(summary),
        caption_justify="left",
    )
    table.add_column("system", style="bold")
    for m in present:
        table.add_column(m + (" (%)" if _is_share(m) else ""), justify="right")
    for system, est in summary.estimates.items():
        table.add_row(
            escape(system),
            *(format_estimate(est[m], m) + _cap_mark(summary, system, m) for m in present),
        )
    return table


def comparison_table(
    comparisons: list[Row], metric: str, seed: int, rounds: int, rule: Rule | None = None
) -> Table:
    """Paired differences A - B with interval, p-value and verdict, under one named rule.

    ``rule`` is the summary's ``comparison_rule`` (see ``ragmeter.verdicts``); its
    header line names the rule and the family. Numbers are printed by
    :func:`ragmeter.verdicts.shown_difference` and :func:`~ragmeter.verdicts.shown_p`,
    as in the report and the notebook tables, so none rounds across the decision.
    """
    title = (
        f"Paired comparisons on {metric} (A - B{', points' if _is_share(metric) else ''}; "
        f"seed {seed}, {rounds} rounds)"
    )
    if rule is not None:
        title += "\n" + escape(rule.header)
    table = Table(title=title, title_justify="left")
    alpha = rule.alpha if rule is not None else 0.05
    ci, p_label = column_labels(rule)
    cols = [("A", "left"), ("B", "left"), (ci, "right"), ("win/tie/loss", "right")]
    if p_label:
        cols.append((p_label, "right"))
    cols.append(("verdict", "left"))
    for col, just in cols:
        table.add_column(col, justify=just)
    for c in comparisons:
        style = "green" if "better" in c.verdict else "yellow"
        row = [
            escape(c.a),
            escape(c.b),
            shown_difference(c, metric),
            f"{c.wins}/{c.ties}/{c.losses}",
        ]
        if p_label:
            row.append(shown_p(c, alpha))
        row.append(f"[{style}]{escape(c.verdict)}[/{style}]")
        table.add_row(*row)
    return table


def summary_comparisons(summary: Summary) -> Table | None:
    """:func:`comparison_table` of a summary's own comparisons (None when there are none)."""
    if not summary.comparisons:
        return None
    return comparison_table(
        summary.comparisons,
        summary.metric,
        summary.seed,
        summary.rounds,
        summary.comparison_rule,
    )


def interval_note(summary: Summary) -> str:
    """The dim line under the tables: how every interval was drawn."""
    return (
        f"[dim]{summary.confidence:.0%} {summary.method} bootstrap intervals, seed "
        f"{summary.seed}, {summary.rounds} rounds ({summary.rng or 'mulberry32'}).[/]"
    )


def size_table(rows: list[SizeRow], metric: str, system: str) -> Table:
    """The interval each number of questions would give (resampled up from n)."""
    table = Table(title=Text(f"Sample size: {system} on {metric}"), title_justify="left")
    for col in ("questions", "mean", "95% interval", "± half-width"):
        table.add_column(col, justify="right")
    scale = 100 if _is_share(metric) else 1
    d = 1 if scale == 100 else 3  # points for shares, three decimals for the rest
    for r in rows:
        table.add_row(
            str(r.n),
            f"{r.mean * scale:.{d}f}",
            f"[{r.low * scale:.{d}f}, {r.high * scale:.{d}f}]",
            f"{r.half_width * scale:.{d}f}",
        )
    return table

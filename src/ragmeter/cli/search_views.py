"""Rich tables for the terminal: scores with intervals, comparisons, sample sizes.

The search and evaluate commands print these; they read the typed
:class:`ragmeter.comparison.summary.Summary`. (Formerly ``ragmeter.report.terminal``: the
library never imports rich, so the terminal tables live with the command line.)
"""

from __future__ import annotations

from rich.console import RenderableType
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from ragmeter.cli.layout import Grid, as_table, fit
from ragmeter.cli.layout import terminal_width as layout_width
from ragmeter.comparison import tables
from ragmeter.comparison.families import (
    GRID_LABELS,
    grid_cells,
    grid_pairs,
    grid_views,
    kind_of,
    short_verdict,
)
from ragmeter.comparison.formatting import (
    EXACT,
    EXACT_MARK,
    column_labels,
    decided_note,
    exact_note,
    format_estimate,
    format_half_width,
    shown_difference,
    shown_half_width,
    shown_interval,
    shown_p,
    unresolved_note,
)
from ragmeter.comparison.summary import Summary
from ragmeter.comparison.verdicts import Row, Rule, rule_alpha
from ragmeter.defaults import DEFAULTS
from ragmeter.scoring.metrics import is_share
from ragmeter.scoring.names import (
    cutoff,
    difference_scale,
    family,
    held,
    metric_label,
    shown_cutoffs,
)
from ragmeter.stats import SizeRow, format_ends, format_interval
from ragmeter.stats.bootstrap import spread_digits

RANK_METRICS = ("mrr@10", "ndcg@10", "precision@5", "coverage@5")
#: A comparison table longer than this lists its decisive rows and counts the rest.
LONG_FAMILY = 30


_is_share = is_share


def _cap_mark(summary: Summary, system: str, metric: str) -> str:
    """``*`` when ``metric``'s k was capped for ``system`` (fewer items than k)."""
    cap = summary.k_capped.get(system)
    k = cutoff(metric)
    return "*" if cap is not None and k is not None and k > cap else ""


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


def hit_grid(summary: Summary, ks: list[int], title: str = "") -> Grid:
    """Hit rate (recall@k) with its interval and the words sent, per k."""
    header = ["system"]
    for k in ks:
        header += [f"recall@{k}", f"words@{k}"]
    grid = Grid(
        title or "Hit rate (recall@k, %) and words sent to the model",
        header,
        right=set(range(1, len(header))),
        groups=[[i, i + 1] for i in range(1, len(header), 2)],
        caption=cap_note(summary),
        key="hit_rate",
        dim=set(range(2, len(header), 2)),
    )
    for system, est in summary.estimates.items():
        row: list = [system]
        for k in ks:
            mark = _cap_mark(summary, system, f"recall@{k}")
            row.append(format_estimate(est[f"recall@{k}"], f"recall@{k}") + mark)
            row.append(f"{est[f'words@{k}'].mean:.0f}{mark}")
        grid.rows.append(row)
    return grid


def hit_table(summary: Summary, ks: list[int], title: str = "") -> Table:
    """:func:`hit_grid` as one rich table."""
    return as_table(hit_grid(summary, ks, title))


def _rank_metrics(available: dict) -> list[str]:
    """MRR and nDCG at 10, else at the largest k there is; precision and coverage at 5,
    else at the largest k below 5 (or the smallest k)."""
    cutoffs = shown_cutoffs(available)
    if cutoffs is None:
        return []
    top, mid = cutoffs
    wanted = (f"mrr@{top}", f"ndcg@{top}", f"precision@{mid}", f"coverage@{mid}")
    return held(available, wanted)


def rank_grid(summary: Summary, metrics: tuple[str, ...] | None = None) -> Grid:
    """MRR, nDCG, precision and coverage with intervals."""
    first = next(iter(summary.estimates.values()))
    present = [m for m in metrics if m in first] if metrics else _rank_metrics(first)
    named = summary.ndcg_label if any(family(m) == "ndcg" for m in present) else ""
    grid = Grid(
        "Rank-aware scores" + (f" ({named})" if named else ""),
        ["system", *(m + (" (%)" if _is_share(m) else "") for m in present)],
        right=set(range(1, len(present) + 1)),
        caption=cap_note(summary),
        key="rank_aware",
    )
    for system, est in summary.estimates.items():
        grid.rows.append(
            [system, *(format_estimate(est[m], m) + _cap_mark(summary, system, m) for m in present)]
        )
    return grid


def rank_table(summary: Summary, metrics: tuple[str, ...] | None = None) -> Table:
    """:func:`rank_grid` as one rich table."""
    return as_table(rank_grid(summary, metrics))


def comparison_title(
    metric: str, seed: int, rounds: int, rule: Rule | None = None, ndcg: str = ""
) -> str:
    """The comparison table's title: the metric, the seed and the rule's header line;
    on nDCG also ``ndcg`` (:attr:`ragmeter.comparison.summary.Summary.ndcg_label`)."""
    named = f"; {ndcg}" if ndcg and family(metric) == "ndcg" else ""
    title = (
        f"Paired comparisons on {metric_label(metric)} "
        f"(A - B{', points' if _is_share(metric) else ''}; "
        f"seed {seed}, {rounds} rounds{named})"
    )
    return title + ("\n" + rule.header if rule is not None else "")


def _verdict(c: Row) -> Text:
    return Text(c.verdict, style="green" if c.winner is not None else "yellow")


def comparison_grid(
    comparisons: list[Row],
    metric: str,
    seed: int,
    rounds: int,
    rule: Rule | None = None,
    ndcg: str = "",
) -> Grid:
    """Paired differences A - B with interval, p-value and verdict, under one named rule.

    ``rule`` is the summary's ``comparison_rule`` (see ``ragmeter.comparison.verdicts``); its
    header line names the rule and the family. Numbers are printed by
    :func:`ragmeter.comparison.verdicts.shown_difference` and
    :func:`~ragmeter.comparison.verdicts.shown_p`,
    as in the report and the notebook tables, so none rounds across the decision.
    """
    alpha = rule_alpha(rule)
    ci, p_label = column_labels(rule)
    header = ["A", "B", ci, "win/tie/loss", *([p_label] if p_label else []), "verdict"]
    grid = Grid(
        comparison_title(metric, seed, rounds, rule, ndcg),
        header,
        right={2, 3, 4} if p_label else {2, 3},
        key="comparisons",
        wrap={len(header) - 1},
        groups=[list(range(1, len(header)))],  # a pair stays on one row: never split
        labels=False,
    )
    for c in comparisons:
        row = [c.a, c.b, shown_difference(c, metric), f"{c.wins}/{c.ties}/{c.losses}"]
        if p_label:
            row.append(shown_p(c, alpha))
        grid.rows.append([*row, _verdict(c)])
    return grid


def narrow_comparison_grid(
    comparisons: list[Row],
    metric: str,
    seed: int,
    rounds: int,
    rule: Rule | None = None,
    ndcg: str = "",
) -> Grid:
    """:func:`comparison_grid` for a narrow terminal: each pair on two lines (A over
    B) and its numbers under each other (the difference, win/tie/loss, the p-value),
    names, intervals and verdicts whole."""
    alpha = rule_alpha(rule)
    ci, p_label = column_labels(rule)
    numbers = f"{ci}\nwin/tie/loss" + (f"\n{p_label}" if p_label else "")
    header = ["A\n- B", numbers, "verdict"]
    grid = Grid(
        comparison_title(metric, seed, rounds, rule, ndcg),
        header,
        right={1},
        key="comparisons",
        wrap={2},
        groups=[[1, 2]],
        labels=False,
    )
    for c in comparisons:
        cell = f"{shown_difference(c, metric)}\n{c.wins}/{c.ties}/{c.losses}"
        if p_label:
            cell += f"\n{shown_p(c, alpha)}"
        grid.rows.append([f"{c.a}\n- {c.b}", cell, _verdict(c)])
    return grid


def grid_comparison_grids(comparisons: list[Row], metric: str, rule: Rule | None) -> list[Grid]:
    """A grid family's table as the grids a person reads it by: rows = strategies,
    columns = retriever pairs (which retriever, for each strategy), then rows =
    strategy pairs, columns = retrievers (which strategy, for each retriever). Each
    cell is A - B with its interval over the verdict (and p); no grid for any other
    family. The rule's header (rule and family) heads each grid."""
    views = grid_views(comparisons, kind_of(rule.family) if rule is not None else None)
    if rule is None or not views:
        return []
    ci, _ = column_labels(rule)
    unit = " in points" if _is_share(metric) else ""
    grids = []
    for view in views:
        grid = Grid(
            f"{view.title[0].upper()}{view.title[1:]} on {metric_label(metric)}: each cell is "
            f"{ci}{unit}, over its verdict\n{rule.header}",
            [view.corner, *view.columns],
            right=set(range(1, len(view.columns) + 1)),
            key=f"comparisons_{view.axis}",
        )
        for label, cells in zip(view.rows, view.cells, strict=True):
            grid.rows.append([label, *(_grid_cell(comparisons, i, metric) for i in cells)])
        grids.append(grid)
    return grids


def _grid_cell(comparisons: list[Row], index: int | None, metric: str) -> Text:
    """A - B with its interval over the verdict (the p-values are in the list, --all)."""
    if index is None:
        return Text("–")
    c = comparisons[index]
    verdict = short_verdict(c)
    style = "green" if c.winner is not None else "dim" if c.identical else "yellow"
    return Text.assemble(shown_difference(c, metric), "\n", (verdict, style))


def comparison_table(
    comparisons: list[Row], metric: str, seed: int, rounds: int, rule: Rule | None = None
) -> Table:
    """:func:`comparison_grid` as one rich table."""
    return as_table(comparison_grid(comparisons, metric, seed, rounds, rule))


def decisive_first(rows: list[Row], limit: int | None = LONG_FAMILY) -> tuple[list[Row], str]:
    """The rows to print (the pairs found different first) and a line counting the
    rest, when there are more than ``limit`` (``None``: every row, no line)."""
    if limit is None or len(rows) <= limit:
        return rows, ""
    ordered = [r for r in rows if r.winner is not None]
    ordered += [r for r in rows if r.winner is None]
    rest = ordered[limit:]
    better = sum(r.winner is not None for r in rest)
    same = sum(r.identical for r in rest)
    ties = len(rest) - better - same
    kinds = ", ".join(
        f"{n} {word}"
        for n, word in ((better, "with a better system"), (ties, "ties"), (same, "identical"))
        if n
    )
    return ordered[:limit], (
        f"{len(rest)} more pairs not shown ({kinds}); the pairs found different come "
        f"first. --all prints every pair, --format csv writes them"
    )


def family_notes(rows: list[Row], rule: Rule | None, systems: int) -> list[str]:
    """Lines under a comparison table: interval ends set by the decision
    (:func:`ragmeter.comparison.formatting.decided_note`), identical systems left out of
    the rule's count, and ``--baseline`` when every pair of many systems is compared."""
    notes = [note] if (note := decided_note(rows)) else []
    if fine := unresolved_note(rows, rule):
        notes.append(fine)
    same = [r for r in rows if r.identical]
    if same and rule is not None:
        shown = ", ".join(f"{r.a} = {r.b}" for r in same[:4])
        more = f" and {len(same) - 4} more" if len(same) > 4 else ""
        every = systems * (systems - 1) // 2
        notes.append(
            f"Identical systems (the same score on every question) are compared once: "
            f"{shown}{more}; the rule counts {rule.pairs} "
            f"{'pair' if rule.pairs == 1 else 'pairs'}"
            + (
                f", not all {every} pairs of the {systems} systems"
                if "all pairs" in rule.family
                else ""
            )
        )
    if rule is not None and rule.family == "all pairs" and systems > 6:
        notes.append(
            f"{systems} systems make {systems * (systems - 1) // 2} pairs; --baseline NAME "
            f"compares each with one system ({systems - 1} pairs, each with more power), "
            f"--pairs A:B,C:D only the pairs planned"
        )
    return notes


def comparison_views(
    comparisons: list[Row],
    metric: str,
    seed: int,
    rounds: int,
    rule: Rule | None,
    width: int | None,
    *,
    limit: int | None = LONG_FAMILY,
    ndcg: str = "",
) -> tuple[list[RenderableType], list[str]]:
    """The comparison table fitted to ``width`` (two lines a pair when one is too
    wide) and the lines to print under it; a grid family's grids
    (:func:`grid_comparison_grids`) instead, and the table too with no ``limit``."""
    names = sorted({r.a for r in comparisons} | {r.b for r in comparisons})
    systems = len(names)
    notes = family_notes(comparisons, rule, systems)
    grids = grid_comparison_grids(comparisons, metric, rule)
    if grids:
        shown_grids = [t for g in grids for t in fit(g, width)]
        if limit is not None:
            more = "--all also lists every pair with its win/tie/loss; --format csv writes them"
            return shown_grids, [more, *notes]
        listed, rest = _listed(comparisons, metric, seed, rounds, rule, width, None, ndcg)
        return shown_grids + listed, notes
    if rule is not None and rule.family == "all pairs" and grid_cells(names) is not None:
        notes.append(
            f"These systems form a strategy x retriever grid: --family grid compares only "
            f"{GRID_LABELS['grid']} ({len(grid_pairs(names, 'grid'))} pairs, each with more "
            f"power than among {rule.pairs})"
        )
    tables, rest = _listed(comparisons, metric, seed, rounds, rule, width, limit, ndcg)
    return tables, ([rest] if rest else []) + notes


def _listed(
    comparisons: list[Row],
    metric: str,
    seed: int,
    rounds: int,
    rule: Rule | None,
    width: int | None,
    limit: int | None,
    ndcg: str = "",
) -> tuple[list[RenderableType], str]:
    """The table of pairs fitted to ``width`` (two lines a pair, or lines of ``header:
    value``, where the table is too wide), and the line counting the rows left out."""
    shown, rest = decisive_first(comparisons, limit)
    grid = comparison_grid(shown, metric, seed, rounds, rule, ndcg)
    grid.narrow = narrow_comparison_grid(shown, metric, seed, rounds, rule, ndcg)
    return fit(grid, width), rest


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
        summary.ndcg_label,
    )


def interval_note(summary: Summary) -> str:
    """The dim lines under the tables: how every interval was drawn, and the footnote
    of the exact intervals where a table printed one."""
    used = summary.clusters is not None and summary.clusters.used
    how = f"{summary.method} bootstrap"
    if used:
        how = "cluster bootstrap (whole documents, t-widened)"
    note = (
        f"[dim]{summary.confidence * 100:g}% {how} intervals, seed "
        f"{summary.seed}, {summary.rounds} rounds ({summary.rng or 'mulberry32'}).[/]"
    )
    exact = exact_note(e for per in summary.estimates.values() for e in per.values())
    clusters = cluster_note(summary)
    return (
        note
        + (f"\n[dim]{escape(exact)}[/]" if exact else "")
        + (f"\n[dim]{escape(clusters)}[/]" if clusters else "")
    )


def cluster_note(summary: Summary) -> str | None:
    """One line: how the questions cluster, each system's design effect on the
    comparison metric with its interval and effective questions, and which intervals
    the tables show (None when the run has no clusters)."""
    info = summary.clusters
    if info is None:
        return None
    if info.count < 2:
        return f"Question-level intervals and comparisons: {info.reason}."
    parts = []
    for system in summary.estimates:
        d = summary.design_of(system)
        if d is not None and d.deff is not None:
            parts.append(f"{system} {format_design(d)}")
    return (
        f"{info.questions} questions in {info.count} {_kind(info.source)} "
        f"({info.per_cluster:.1f} each). Design effect on {summary.metric} [interval] "
        f"~ effective questions: {'; '.join(parts) or 'none (equal scores)'}. "
        f"{'Cluster-aware' if info.used else 'Question-level'} intervals and comparisons: "
        f"{info.reason}."
    )


def _kind(source: str) -> str:
    return "documents" if source == "document" else "clusters"


def format_design(d) -> str:
    """``1.46 [0.92, 2.10] ~ 92``: a design effect, its interval, effective questions."""
    eff = d.effective
    return f"{format_interval(d.deff, d.low, d.high, 1, 2)} ~ {eff:.0f}" if eff else f"{d.deff:.2f}"


def _scale(metric: str) -> tuple[int, int]:
    """Points with one decimal for shares, three decimals for the rest."""
    return difference_scale(metric)


def size_grid(rows: list[SizeRow], metric: str, system: str) -> Grid:
    """The interval each number of questions would give (resampled up from n)."""
    scale, d = _scale(metric)
    level = rows[0].confidence if rows else DEFAULTS.confidence
    grid = Grid(
        f"Sample size: {system} on {metric}",
        ["questions", "mean", f"{level * 100:g}% interval", "± half-width"],
        right={0, 1, 2, 3},
        key="sample_size",
    )
    for r in rows:
        low, high, which = shown_interval(r)  # exact for 0/1 scores where the estimate is
        mark = f" {EXACT_MARK}" if which == EXACT else ""
        digits = spread_digits(shown_half_width(r), scale, d)
        grid.rows.append(
            [
                str(r.n),
                f"{r.mean * scale:.{digits}f}",
                f"{format_ends(low, high, scale, digits)}{mark}",
                format_half_width(shown_half_width(r), metric),
            ]
        )
    return grid


def size_table(rows: list[SizeRow], metric: str, system: str) -> Table:
    """:func:`size_grid` as one rich table."""
    return as_table(size_grid(rows, metric, system))


def sample_sizes_grid(
    sizes: dict[str, list[SizeRow]],
    metric: str,
    last: tuple[str, dict[str, str]] | None = None,
) -> Grid:
    """Every system's ± half-width at n, 2n, 4n and 8n questions in one table (one row
    a system), with ``last`` = (header, cell per system) as a final column."""
    first = next(iter(sizes.values()), [])
    header = ["system", *(f"± at {r.n}" for r in first), *([last[0]] if last else [])]
    grid = Grid(
        f"Sample size on {metric}: the ± half-width at more questions",
        header,
        right=set(range(1, len(header))),
        key="sample_size",
        caption=exact_note(r for rows in sizes.values() for r in rows),
    )
    for system, rows in sizes.items():
        cells = [
            format_half_width(shown_half_width(r), metric)
            + (f" {EXACT_MARK}" if shown_interval(r)[2] == EXACT else "")
            for r in rows
        ]
        grid.rows.append([system, *cells, *([last[1][system]] if last else [])])
    return grid


def sizes_grid(needs: list, metric: str, target: str) -> Grid:
    """:func:`sample_sizes_grid` with the questions ``target`` (``± 4 points``, half the
    interval's width) needs (``needs``: :class:`SystemNeed`), each with the design effect
    it is planned at when questions share documents."""
    clustered = any(s.deff > 1.0 for s in needs)
    needed = {
        s.system: "no spread"
        if s.needed is None
        else f"{s.needed} ({s.deff:.2f})"
        if clustered
        else str(s.needed)
        for s in needs
    }
    header = f"questions for {target}\n(design effect)" if clustered else f"questions\nfor {target}"
    return sample_sizes_grid({s.system: s.sizes for s in needs}, metric, (header, needed))


def estimate_records(summary: Summary) -> list[dict]:
    """One CSV row per system and metric: the mean and the interval the table shows,
    exact or bootstrap (``interval``), shares as fractions: 0.807 is 80.7%."""
    return tables.estimate_records(
        summary,
        columns=("system", "metric", "mean", "low", "high", "n", "confidence", "interval"),
    )


def comparison_records(rows: list[Row], metric: str) -> list[dict]:
    """One CSV row per pair: A - B with its interval, p-values and verdict."""
    return [
        {
            "a": r.a,
            "b": r.b,
            "metric": metric,
            "difference": r.difference.mean,
            "low": r.difference.low,
            "high": r.difference.high,
            "wins": r.wins,
            "ties": r.ties,
            "losses": r.losses,
            "p_value": r.p_value,
            "p": r.p,
            "identical": r.identical,
            "verdict": r.verdict,
        }
        for r in rows
    ]


def terminal_width() -> int:
    """The width tables are fitted to (:func:`ragmeter.cli.layout.terminal_width`)."""
    return layout_width()

"""Rich tables for the terminal: scores with intervals, comparisons, sample sizes."""

from __future__ import annotations

from rich.table import Table

RANK_METRICS = ("mrr@10", "ndcg@10", "precision@5", "coverage@5")


def fmt_estimate(est: dict, percent: bool = True, digits: int = 1) -> str:
    """``85.0 [77.5, 92.5]`` for shares; ``0.843 [0.79, 0.89]`` for the rest."""
    if percent:
        return (
            f"{est['mean'] * 100:.{digits}f} [{est['low'] * 100:.{digits}f}, "
            f"{est['high'] * 100:.{digits}f}]"
        )
    return f"{est['mean']:.3f} [{est['low']:.3f}, {est['high']:.3f}]"


def _is_share(metric: str) -> bool:
    return metric.split("@")[0] in ("recall", "hit", "precision", "coverage")


def hit_table(summary: dict, ks: list[int], title: str = "") -> Table:
    """Hit rate (recall@k) with its interval and the words sent, per k."""
    table = Table(
        title=title or "Hit rate (recall@k, %) and words sent to the model", title_justify="left"
    )
    table.add_column("system", style="bold")
    for k in ks:
        table.add_column(f"recall@{k}", justify="right")
        table.add_column(f"words@{k}", justify="right", style="dim")
    for system, est in summary["estimates"].items():
        row = [system]
        for k in ks:
            row.append(fmt_estimate(est[f"recall@{k}"]))
            row.append(f"{est[f'words@{k}']['mean']:.0f}")
        table.add_row(*row)
    return table


def rank_table(summary: dict, metrics: tuple[str, ...] = RANK_METRICS) -> Table:
    """MRR, nDCG, precision and coverage with intervals."""
    present = [m for m in metrics if m in next(iter(summary["estimates"].values()))]
    table = Table(title="Rank-aware scores", title_justify="left")
    table.add_column("system", style="bold")
    for m in present:
        table.add_column(m + (" (%)" if _is_share(m) else ""), justify="right")
    for system, est in summary["estimates"].items():
        table.add_row(system, *(fmt_estimate(est[m], percent=_is_share(m)) for m in present))
    return table


def comparison_table(comparisons: list[dict], metric: str, seed: int, rounds: int) -> Table:
    """Paired differences A - B with interval, p-values and the verdict."""
    table = Table(
        title=f"Paired comparisons on {metric} (A - B, points; seed {seed}, {rounds} rounds)",
        title_justify="left",
    )
    for col, just in (
        ("A", "left"),
        ("B", "left"),
        ("A - B [95% CI]", "right"),
        ("win/tie/loss", "right"),
        ("p (Holm)", "right"),
        ("verdict", "left"),
    ):
        table.add_column(col, justify=just)
    scale = 100 if _is_share(metric) else 1
    for c in comparisons:
        d = c["difference"]
        style = "green" if "better" in c["verdict"] else "yellow"
        p = c.get("p_holm", c.get("p_value"))
        table.add_row(
            c["a"],
            c["b"],
            f"{d['mean'] * scale:+.1f} [{d['low'] * scale:+.1f}, {d['high'] * scale:+.1f}]"
            if scale == 100
            else f"{d['mean']:+.3f} [{d['low']:+.3f}, {d['high']:+.3f}]",
            f"{c['wins']}/{c['ties']}/{c['losses']}",
            "" if p is None else f"{p:.3g}",
            f"[{style}]{c['verdict']}[/{style}]",
        )
    return table


def size_table(rows: list[dict], metric: str, system: str) -> Table:
    """The interval each number of questions would give (resampled up from n)."""
    table = Table(title=f"Sample size: {system} on {metric}", title_justify="left")
    for col in ("questions", "mean", "95% interval", "± half-width"):
        table.add_column(col, justify="right")
    scale = 100 if _is_share(metric) else 1
    d = 1 if scale == 100 else 3  # points for shares, three decimals for the rest
    for r in rows:
        table.add_row(
            str(r["n"]),
            f"{r['mean'] * scale:.{d}f}",
            f"[{r['low'] * scale:.{d}f}, {r['high'] * scale:.{d}f}]",
            f"{r['half_width'] * scale:.{d}f}",
        )
    return table

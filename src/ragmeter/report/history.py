"""The report's run-history section: this run among the recorded runs that measured
the same thing, with interval bands and the paired changes marked.

Shown only when the run history (:func:`ragmeter.history.store.locate`, from the
current folder) holds at least two runs comparable with this one for some system.
Nothing is computed here: the trend, its intervals and changes, and which runs hold
a system (by its name, and by its identity across a rename) are
:func:`ragmeter.history.trend.trend`'s, as for ``ragmeter history trend``; this module
shapes them into JSON-ready data and one Vega-Lite chart, whose system is picked by
the section's one select.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ragmeter.comparison.formatting import format_estimate, shown_difference, shown_interval
from ragmeter.errors import RagmeterError
from ragmeter.runs.meta import RunMeta
from ragmeter.runs.results import Results
from ragmeter.scoring import measurement
from ragmeter.scoring.names import is_share, metric_scale

MAX_RUNS = 20
"""The newest comparable runs shown per system (``ragmeter history trend`` shows all)."""


def load_history(results: Results, folder: str | Path | None = None) -> dict[str, Any] | None:
    """The section's data, or None when the history holds no comparable runs."""
    from ragmeter.history.ancestry import Ancestry
    from ragmeter.history.baseline import scores_digest
    from ragmeter.history.store import HistoryStore, history_file, locate
    from ragmeter.history.trend import trend

    folder = folder if folder is not None else locate()
    if folder is None or not history_file(folder).is_file():
        return None
    metric = results.summary.metric
    this = RunMeta.from_json(results.meta).measurement
    own = (str(results.path.resolve()), scores_digest(results.path))
    try:
        with HistoryStore(folder, create=False) as store:
            held = store.runs(metric=metric)
            same = [r for r in held if not measurement.differences(r.measurement, this, metric)]
            series: dict[str, list[dict[str, Any]]] = {}
            means = {s: float(results.scores(s, metric).mean()) for s in results.systems}
            line = Ancestry()  # git asked once for every system
            for system in sorted(results.systems, key=lambda s: -means[s]):
                # the trend's runs of the system: by its name, and by identity across a rename
                found = trend(store, system, metric, runs=same, last=MAX_RUNS, ancestry=line)
                if len(found.points) >= 2:
                    series[system] = [_point(p, metric, own) for p in found.points]
    except (RagmeterError, OSError):
        return None  # an unreadable history leaves the section out; the report still renders
    if not series:
        return None
    best = max(series, key=lambda s: series[s][-1]["mean"])
    return {
        "metric": metric,
        "confidence": results.summary.confidence,
        "share": is_share(metric),
        "path": str(history_file(folder)),
        "systems": list(series),
        "default": best,
        "runs": len(same),
        "other": len(held) - len(same),
        "series": series,
    }


def _point(p: Any, metric: str, own: tuple[str, str]) -> dict[str, Any]:
    r, e, c = p.run, p.estimate, p.change
    scale = metric_scale(metric)[0]
    low, high, which = shown_interval(e)  # the band is the interval the table shows
    out: dict[str, Any] = {
        "run": r.id,
        "label": r.label,
        "commit": r.commit,
        "branch": r.branch,
        "dirty": r.dirty,
        "recorded_at": r.recorded_at,
        "mean": e.mean * scale,
        "low": low * scale,
        "high": high * scale,
        "interval": which,
        "shown": format_estimate(e, metric),
        "current": (r.results, r.scores_digest) == own,
        "direction": "first" if c is None else c.direction,
        "change": None,
        "name": p.name,
        "renamed_from": p.renamed_from,
        "other_branch": p.other_branch,
    }
    if c is not None:
        out["change"] = {
            "earlier": c.earlier,
            "shown": shown_difference(c.row, metric),
            "verdict": c.row.verdict,
            "wins": c.row.wins,
            "losses": c.row.losses,
        }
    return out


DIRECTION_COLORS = {
    "better": "#2e7d32",
    "worse": "#c62828",
    "no change": "#777777",
    "first": "#1d3f6e",
}


def history_chart(alt: Any, data: dict) -> dict | None:
    """The trend chart: a band per run's interval, the means joined, each run's point
    coloured by its paired change from the run before it; the section's system select
    sets its ``history_system`` parameter, as it sets the table's system."""
    h = (data.get("optional") or {}).get("history")
    if not h:
        return None
    rows = []
    for system, points in h["series"].items():
        for order, p in enumerate(points):
            change = p["change"]
            rows.append(
                {
                    "system": system,
                    "order": order,
                    "run": p["label"] + (" (this run)" if p["current"] else ""),
                    "mean": p["mean"],
                    "low": p["low"],
                    "high": p["high"],
                    "shown": p["shown"],
                    "change": (
                        f"{change['shown']} from run {change['earlier']}: {change['verdict']}"
                        if change
                        else "first run"
                    ),
                    "direction": p["direction"],
                }
            )
    # no select of its own: the section's one system select sets it (report.js)
    pick = alt.param(name="history_system", value=h["default"])
    unit = " (%)" if h["share"] else ""
    base = alt.Chart().transform_filter("datum.system == history_system")
    x = alt.X("run:N", sort=alt.EncodingSortField("order"), title="recorded run (id, commit)")
    tooltip = [
        alt.Tooltip("run:N"),
        alt.Tooltip(
            "shown:N",
            title=f"{h['metric']} [{h['confidence'] * 100:g}% interval]",  # the run's own
        ),
        alt.Tooltip("change:N", title="paired change"),
    ]
    band = base.mark_area(opacity=0.25, color="#4c78a8").encode(
        x=x, y=alt.Y("low:Q", title=h["metric"] + unit, scale=alt.Scale(zero=False)), y2="high:Q"
    )
    line = base.mark_line(color="#1d3f6e").encode(x=x, y="mean:Q")
    domain = list(DIRECTION_COLORS)
    point = base.mark_point(filled=True, size=90).encode(
        x=x,
        y="mean:Q",
        color=alt.Color(
            "direction:N",
            title="change from the run before",
            scale=alt.Scale(domain=domain, range=[DIRECTION_COLORS[d] for d in domain]),
        ),
        tooltip=tooltip,
    )
    chart = (
        alt.layer(band, line, point, data=alt.Data(values=rows))
        .properties(width=640, height=240)
        .add_params(pick)
    )
    return chart.to_dict()

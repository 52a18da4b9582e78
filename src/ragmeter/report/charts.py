"""The report's charts: Vega-Lite specifications built with altair, and the Vega bundle.

:func:`chart_specs` turns :func:`ragmeter.report.data.report_data`'s plain data
into one specification per chart container; :func:`vega_bundle` is Vega,
Vega-Lite and vega-embed as one script from ``vl-convert-python``, cached on
disk. Both need the ``report`` extra; a missing one is
:class:`~ragmeter.errors.MissingExtra` with the install command.
"""

from __future__ import annotations

import functools
import math
import os
from importlib import metadata
from pathlib import Path

from ragmeter.comparison.formatting import format_estimate, shown_interval
from ragmeter.errors import MissingExtra
from ragmeter.files.io import atomic_write_text
from ragmeter.report.chartlayout import (
    FONT_SIZE,
    group_points,
    padded,
    place_labels,
    system_style,
)
from ragmeter.report.common import _family, _k, family_order, family_titles
from ragmeter.scoring.names import (
    difference_scale,
    difference_unit,
    lower_is_better,
    metric_scale,
)

# the HTML report needs the ``report`` extra (altair and vl-convert-python)
ReportDependencyError = MissingExtra

_CHART_IDS = ("chart-forest", "chart-words", "chart-compare", "chart-size")


def _altair():
    try:
        import altair
    except ImportError:
        raise ReportDependencyError(
            "the HTML report needs altair and vl-convert-python: pip install 'ragmeter[report]'"
        ) from None
    return altair


def _vegalite_version(alt) -> str | None:
    """The Vega-Lite version altair writes (e.g. "6.4"), if the bundle can provide it."""
    try:
        import vl_convert
    except ImportError:
        raise ReportDependencyError(
            "the HTML report needs vl-convert-python: pip install 'ragmeter[report]'"
        ) from None
    major_minor = ".".join(str(alt.SCHEMA_VERSION).lstrip("v").split(".")[:2])
    available = list(vl_convert.get_vegalite_versions())
    if major_minor in available:
        return major_minor
    same_major = [v for v in available if v.split(".")[0] == major_minor.split(".")[0]]
    return same_major[-1] if same_major else None


def _vega_version() -> str:
    import vl_convert

    try:
        return str(vl_convert.get_vega_version())
    except Exception:  # an older vl-convert without the call
        return "bundled"


def _bundle_ok(js: str) -> bool:
    return "window.vegaEmbed" in js and len(js) > 100_000


@functools.cache
def vega_bundle(vl_version: str | None = None) -> str:
    """Vega, Vega-Lite and vega-embed as one script (from vl-convert), cached on disk.

    The bundle takes a few seconds to build, so it is kept under
    ``$XDG_CACHE_HOME/ragmeter`` (default ``~/.cache/ragmeter``) keyed by the
    vl-convert and Vega-Lite versions; any problem with the cache just rebuilds.
    """
    try:
        import vl_convert
    except ImportError:
        raise ReportDependencyError(
            "the HTML report needs vl-convert-python: pip install 'ragmeter[report]'"
        ) from None
    try:
        vlc_version = metadata.version("vl-convert-python")
    except metadata.PackageNotFoundError:
        vlc_version = "unknown"
    cache_root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    cache = cache_root / "ragmeter" / f"vega-bundle-{vlc_version}-{vl_version or 'default'}.js"
    try:
        js = cache.read_text(encoding="utf-8")
        if _bundle_ok(js):
            return js
    except OSError:
        pass
    js = (
        vl_convert.javascript_bundle(vl_version=vl_version)
        if vl_version
        else vl_convert.javascript_bundle()
    )
    try:
        atomic_write_text(cache, js)
    except OSError:
        pass
    return js


def chart_specs(data: dict, alt=None) -> dict[str, dict]:
    """Vega-Lite specifications (as dicts) for the page's charts, keyed by container id."""
    alt = alt or _altair()
    specs = {
        "chart-forest": _forest_chart(alt, data),
        "chart-words": _words_chart(alt, data),
        "chart-size": _size_chart(alt, data),
    }
    if data["comparisons"]:
        specs["chart-compare"] = _compare_chart(alt, data)
    from ragmeter.report.history import history_chart

    specs["chart-history"] = history_chart(alt, data)  # None without a run history
    return {k: v for k, v in specs.items() if v is not None}


def _level(data: dict) -> str:
    """The run's interval level as the headers name it (``95%``): the data's, which
    :func:`ragmeter.report.data.report_data` takes from the run's summary (where an older
    run gets its default)."""
    return f"{data['stats']['confidence'] * 100:g}%"


def recall_is_hit(data: dict) -> bool:
    """Whether every system's recall@k equals its hit@k at every k (mean and
    interval): so it is when each question has one answer passage, as with span
    keys; the forest then draws the two as one panel."""
    pairs = 0
    for est in data["estimates"].values():
        for m, e in est.items():
            if _family(m) != "recall" or _k(m) is None:
                continue
            hit = est.get(f"hit@{_k(m)}")
            if hit is None:
                continue
            if any(e[key] != hit[key] for key in ("mean", "low", "high")):
                return False
            pairs += 1
    return pairs > 0


COINCIDE_TITLE = "recall@k = hit@k (%)"
COINCIDE_NOTE = (
    "recall@k and hit@k coincide on these questions (each has one answer passage), "
    "so one panel shows both."
)


WHOLE = 0
"""Vega's label limit for "no limit": a system's name is never cut to "…" in an axis or
a legend (Vega cuts at 180 pixels on an axis, 160 in a legend, by default)."""


def _drawn(e: dict, scale: float, mean: str = "mean") -> dict[str, float]:
    """An estimate's mean (under the key ``mean``) and the interval its label prints
    (:func:`shown_interval`: the exact one where there is one), as a chart draws them."""
    low, high, _ = shown_interval(e)
    return {mean: e["mean"] * scale, "low": low * scale, "high": high * scale}


def _forest_chart(alt, data: dict) -> dict | None:
    rows = []
    systems = [s["name"] for s in data["systems"]]
    one = recall_is_hit(data)
    order, own = family_order(), family_titles()
    titles = dict(own, recall=COINCIDE_TITLE) if one else own
    for s in systems:
        for m, e in data["estimates"][s].items():
            fam, k = _family(m), _k(m)
            if lower_is_better(m) or k is None or fam not in own:
                continue
            if one and fam == "hit":
                continue
            rows.append(
                {
                    "system": s,
                    "metric": m,
                    "k": k,
                    "family": titles[fam],
                    "order": order.index(fam),
                    **_drawn(e, metric_scale(m)[0]),
                    "label": format_estimate(e, m),
                }
            )
    if not rows:
        return None
    ks = sorted({r["k"] for r in rows})
    main_k = data["main_k"] if data["main_k"] in ks else ks[-1]
    k = alt.param(
        name="k", value=main_k, bind=alt.binding_select(options=ks, name="k (top results) ")
    )
    base = alt.Chart().transform_filter("datum.k == k")
    y = alt.Y("system:N", sort=systems, title=None, axis=alt.Axis(labelLimit=WHOLE))
    tooltip = [
        alt.Tooltip("system:N"),
        alt.Tooltip("metric:N"),
        alt.Tooltip("label:N", title=f"mean [{_level(data)} interval]"),
    ]
    rule = base.mark_rule(strokeWidth=2.5, color="#4c78a8").encode(
        # padding: a dot or an interval end at 100 (or 0) stays inside the panel
        x=alt.X("low:Q", title=None, scale=alt.Scale(zero=False, padding=12)),
        x2="high:Q",
        y=y,
        tooltip=tooltip,
    )
    point = base.mark_point(filled=True, size=70, color="#1d3f6e").encode(
        x="mean:Q", y=y, tooltip=tooltip
    )
    families = [titles[f] for f in order if not lower_is_better(f) and not (one and f == "hit")]
    chart = (
        alt.layer(rule, point, data=alt.Data(values=rows))
        .properties(width=250, height=max(60, 24 * len(systems)))
        .facet(
            facet=alt.Facet(
                "family:N",
                sort=families,
                title=None,
                header=alt.Header(labelFontSize=13, labelFontWeight="bold"),
            ),
            columns=3,
        )
        .resolve_scale(x="independent")
        .add_params(k)
    )
    if one:
        chart = chart.properties(
            title=alt.TitleParams(
                COINCIDE_NOTE, orient="bottom", anchor="start", fontSize=12, fontWeight="normal"
            )
        )
    return chart.to_dict()


def _style_encodings(alt, systems: list[str], legend=None):
    colours, shapes = system_style(systems)
    common = {"sort": systems, "title": "system", "legend": legend}
    color = alt.Color("system:N", scale=alt.Scale(domain=systems, range=colours), **common)
    shape = alt.Shape("system:N", scale=alt.Scale(domain=systems, range=shapes), **common)
    return color, shape


WORDS_WIDTH = 600


def words_height(n_systems: int) -> int:
    """The words chart's height: taller with more systems, so their labels fit."""
    return 300 if n_systems <= 8 else min(480, 300 + 10 * (n_systems - 8))


def _words_chart(alt, data: dict) -> dict | None:
    k = data["main_k"]
    hit = f"recall@{k}"
    rows = _words_rows(data, k)
    if not rows:
        return None
    width, height = WORDS_WIDTH, words_height(len(rows))
    xdom, ydom, labels, leaders, key = _words_labels(rows, width, height)
    systems = [r["system"] for r in rows]
    color, shape = _style_encodings(alt, systems)
    xscale = alt.Scale(domain=list(xdom), nice=False, zero=False)
    yscale = alt.Scale(domain=list(ydom), nice=False, zero=False)
    x = alt.X("words:Q", title=f"words sent to the model (mean, top {k})", scale=xscale)
    tooltip = [
        alt.Tooltip("system:N"),
        alt.Tooltip("label:N", title=f"{hit} [{_level(data)} interval]"),
        alt.Tooltip("words:Q", title=f"words@{k}", format=".0f"),
    ]
    base = alt.Chart(alt.Data(values=rows))
    rule = (
        base.mark_rule(strokeWidth=2, opacity=0.6)
        .encode(
            x=x,
            y=alt.Y("low:Q", title=f"hit rate ({hit}, %)", scale=yscale),
            y2="high:Q",
            color=color,
            tooltip=tooltip,
        )
        .properties(name="intervals")
    )
    point = (
        base.mark_point(filled=True, size=80, opacity=1)
        .encode(x=x, y="hit:Q", color=color, shape=shape, tooltip=tooltip)
        .properties(name="points")
    )
    # named layers: the page draws them as g.labels_marks, g.points_marks, ...
    text = (
        alt.Chart(alt.Data(values=labels))
        .mark_text(align="left", baseline="middle", fontSize=FONT_SIZE, font="sans-serif")
        .encode(
            x=alt.X("lx:Q", scale=xscale),
            y=alt.Y("ly:Q", scale=yscale),
            text="text:N",
            color=alt.value("#1d2330"),
        )
        .properties(name="labels")
    )
    layers = [rule, point, text]
    if leaders:
        layers.insert(
            0,
            alt.Chart(alt.Data(values=leaders))
            .mark_rule(color="#8a8f98", strokeWidth=0.8)
            .encode(
                x=alt.X("x:Q", scale=xscale),
                y=alt.Y("y:Q", scale=yscale),
                x2="x2:Q",
                y2="y2:Q",
            )
            .properties(name="leaders"),
        )
    chart = alt.layer(*layers).properties(width=width, height=height)
    if key:
        chart = chart.properties(title=_numbered_key(alt, key))
    return chart.to_dict()


def _words_rows(data: dict, k: int) -> list[dict]:
    """The words chart's points: each system's hit rate at ``k`` (percent, the interval
    its label prints) against the words it sends to the model."""
    hit, words = f"recall@{k}", f"words@{k}"
    rows = []
    for s in data["systems"]:
        e = data["estimates"][s["name"]]
        if hit in e and words in e:
            rows.append(
                {
                    "system": s["name"],
                    **_drawn(e[hit], 100, mean="hit"),
                    "words": e[words]["mean"],
                    "label": format_estimate(e[hit], hit),
                }
            )
    return rows


def _words_labels(rows: list[dict], width: int, height: int) -> tuple:
    """The words chart's domains and its labels placed clear of the points and the
    interval bars: ``(xdom, ydom, labels, leaders, key)``, ``key`` the numbered points."""
    wlo = min(r["words"] for r in rows)
    whi = max(r["words"] for r in rows)
    xdom = padded(wlo, whi, share=0.08, least=max(1.0, 0.1 * abs(whi)))
    ydom = padded(min(r["low"] for r in rows), max(r["high"] for r in rows), least=2.0)

    def px(v: float) -> float:
        return (v - xdom[0]) / (xdom[1] - xdom[0]) * width

    def py(v: float) -> float:
        return height - (v - ydom[0]) / (ydom[1] - ydom[0]) * height

    points = [(px(r["words"]), py(r["hit"])) for r in rows]
    groups = group_points(points)  # systems drawn on the same spot share one label
    bars = [(px(r["words"]) - 2, py(r["high"]), px(r["words"]) + 2, py(r["low"])) for r in rows]
    placed = place_labels(
        [points[g[0]] for g in groups],
        ["\n".join(rows[i]["system"] for i in g) for g in groups],
        width,
        height,
        obstacles=bars,
    )

    def data_x(v: float) -> float:
        return xdom[0] + v / width * (xdom[1] - xdom[0])

    def data_y(v: float) -> float:
        return ydom[0] + (height - v) / height * (ydom[1] - ydom[0])

    labels, leaders, key = [], [], []
    for g, p in zip(groups, placed, strict=True):
        for text, mid in p.lines:
            labels.append({"text": text, "lx": data_x(p.x), "ly": data_y(mid)})
        if p.leader is not None:
            x1, y1, x2, y2 = p.leader
            leaders.append({"x": data_x(x1), "y": data_y(y1), "x2": data_x(x2), "y2": data_y(y2)})
        if p.number is not None:
            key.append((p.number, " = ".join(rows[i]["system"] for i in g)))
    return xdom, ydom, labels, leaders, key


def _numbered_key(alt, key: list[tuple[int, str]]):
    """The line under the chart naming its numbered points, wrapped at 90 characters."""
    entries = [f"{n} {name}" for n, name in sorted(key)]
    lines, line = [], ""
    for entry in entries:
        if line and len(line) + len(entry) > 90:
            lines.append(line)
            line = ""
        line = f"{line}   {entry}" if line else entry
    lines.append(line)
    return alt.TitleParams(
        ["numbered points:", *lines],
        orient="bottom",
        anchor="start",
        fontSize=FONT_SIZE,
        fontWeight="normal",
    )


def _compare_chart(alt, data: dict) -> dict:
    metric = data["metric"]
    scale = difference_scale(metric)[0]
    rows = []
    for c in data["comparisons"]:
        d = c["difference"]
        rows.append(
            {
                "pair": f"{c['a']} − {c['b']}",
                "mean": d["mean"] * scale,
                "low": d["low"] * scale,
                "high": d["high"] * scale,
                "label": c["shown"]["difference"],  # as the comparison table prints it
                "verdict": c["verdict"],
                "kind": "separated" if c["separated"] else "tie (interval includes 0)",
            }
        )
    pairs = [r["pair"] for r in rows]
    unit = "points" if scale == 100 else "difference"
    base = alt.Chart(alt.Data(values=rows))
    # each pair's label whole: the plot gives way to long names, never the names
    y = alt.Y("pair:N", sort=pairs, title=None, axis=alt.Axis(labelLimit=WHOLE))
    color = alt.Color(
        "kind:N",
        title=None,
        scale=alt.Scale(
            domain=["separated", "tie (interval includes 0)"], range=["#1f5fbf", "#b0b0b0"]
        ),
        legend=alt.Legend(orient="top"),
    )
    tooltip = [
        alt.Tooltip("pair:N", title="A − B"),
        alt.Tooltip("label:N", title="difference [interval]"),
        alt.Tooltip("verdict:N"),
    ]
    x = alt.X("low:Q", title=f"A − B on {metric} ({unit}, paired interval of the table's rule)")
    rule = base.mark_rule(strokeWidth=2.5).encode(
        x=x, x2="high:Q", y=y, color=color, tooltip=tooltip
    )
    point = base.mark_point(filled=True, size=60).encode(
        x="mean:Q", y=y, color=color, tooltip=tooltip
    )
    zero = (
        alt.Chart(alt.Data(values=[{"zero": 0}]))
        .mark_rule(strokeDash=[4, 3], color="#333")
        .encode(x="zero:Q")
    )
    return (
        alt.layer(zero, rule, point).properties(width=560, height=max(60, 20 * len(rows))).to_dict()
    )


SIZE_WIDTH = 560


def _size_chart(alt, data: dict) -> dict | None:
    ss = data["sample_size"]
    rows, curve = _size_rows(ss)
    if not rows:
        return None
    unit = difference_unit(ss["metric"])  # points for a share, as the rows are scaled
    target = ss["target"] * difference_scale(ss["metric"])[0]
    listed = [s["name"] for s in data["systems"]]
    shown = {r["system"] for r in rows}
    systems = [s for s in listed if s in shown]
    ns = [r["n"] for r in rows + curve]
    xdom = [min(ns) / 1.12, max(ns) * 1.12]  # the data's range, a little headroom
    ydom = [0, max([r["hw"] for r in rows + curve] + [target]) * 1.06]
    x = alt.X(
        "n:Q",
        scale=alt.Scale(type="log", domain=xdom, nice=False),
        title="number of questions (log scale)",
    )
    y = alt.Y(
        "hw:Q",
        scale=alt.Scale(domain=ydom, nice=False),
        title=f"± half-width of the {_level(data)} interval on {ss['metric']}"
        + (f" ({unit})" if unit else ""),
    )
    columns = 1 if len(systems) <= 20 else 2
    legend = alt.Legend(symbolOpacity=1, symbolStrokeWidth=1.5, columns=columns, labelLimit=WHOLE)
    color, shape = _style_encodings(alt, systems, legend=legend)
    tooltip = [
        alt.Tooltip("system:N"),
        alt.Tooltip("n:Q", format=",.0f", title="questions"),
        alt.Tooltip("hw:Q", format=".2f", title=f"± {unit}".strip()),
    ]
    lines = (
        alt.Chart(alt.Data(values=rows))
        .mark_line(strokeWidth=1.5)
        .encode(x=x, y=y, color=color, detail="system:N", tooltip=tooltip)
    )
    marks = (
        alt.Chart(alt.Data(values=rows))
        .mark_point(filled=True, size=45, opacity=1)
        .encode(x=x, y=y, color=color, shape=shape, tooltip=tooltip)
    )
    sqrt = (
        alt.Chart(alt.Data(values=curve))
        .mark_line(strokeDash=[5, 4], opacity=0.55)
        .encode(x=x, y=y, color=color, detail="system:N")
    )
    # each dashed curve ends in its system's marker, so it too is told apart past ten
    ends: dict[str, dict] = {}
    for c in curve:
        if c["system"] not in ends or c["n"] > ends[c["system"]]["n"]:
            ends[c["system"]] = c
    tips = (
        alt.Chart(alt.Data(values=[ends[s] for s in systems if s in ends]))
        .mark_point(filled=False, size=30, opacity=0.8)
        .encode(x=x, y=y, color=color, shape=shape)
    )
    rule = (
        alt.Chart(alt.Data(values=[{"hw": target}]))
        .mark_rule(color="#c0392b", strokeDash=[2, 2])
        .encode(y=alt.Y("hw:Q", scale=alt.Scale(domain=ydom, nice=False)))
    )
    label = (
        alt.Chart(alt.Data(values=[{"hw": target, "text": f"target ± {target:g} {unit}".strip()}]))
        # at the right end, where the curves have fallen below most targets
        .mark_text(align="right", dy=-7, x=SIZE_WIDTH - 5, color="#c0392b")
        .encode(y=alt.Y("hw:Q", scale=alt.Scale(domain=ydom, nice=False)), text="text:N")
    )
    height = 300 if len(systems) <= 12 else 300 + 13 * (len(systems) - 12)
    return (
        alt.layer(sqrt, lines, marks, tips, rule, label)
        .properties(width=SIZE_WIDTH, height=height)
        .to_dict()
    )


def _size_rows(ss: dict) -> tuple[list[dict], list[dict]]:
    """The sample-size chart's points (each system's half-width, at each number of
    questions resampled, in points for a share: :func:`difference_scale`) and its dashed
    curves (1/sqrt(n) from the observed n)."""
    rows, curve = [], []
    scale = difference_scale(ss["metric"])[0]
    for r in ss["systems"]:
        if not r["rows"]:
            continue
        for row in r["rows"]:
            rows.append(
                {
                    "system": r["system"],
                    "n": row["n"],
                    "hw": row["half_width"] * scale,
                    "kind": "bootstrap",
                }
            )
        n0, h0 = r["n"], r["half_width"]
        if h0 is None or n0 < 1:
            continue
        top = max([row["n"] for row in r["rows"]] + [r["needed"] or 0]) * 1.25
        lo = max(2.0, n0 / 4)
        for i in range(25):
            n = lo * (top / lo) ** (i / 24)
            curve.append(
                {
                    "system": r["system"],
                    "n": round(n, 2),
                    "hw": h0 * scale * math.sqrt(n0 / n),
                    "kind": "1/√n from the observed n",
                }
            )
    return rows, curve

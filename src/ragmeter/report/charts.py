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

from ragmeter.errors import MissingExtra
from ragmeter.formatting import format_estimate
from ragmeter.io import atomic_write_text
from ragmeter.metrics import is_share
from ragmeter.report.common import FAMILY_ORDER, FAMILY_TITLE, _family, _k

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


def _forest_chart(alt, data: dict) -> dict | None:
    rows = []
    systems = [s["name"] for s in data["systems"]]
    for s in systems:
        for m, e in data["estimates"][s].items():
            fam, k = _family(m), _k(m)
            if fam == "words" or k is None or fam not in FAMILY_TITLE:
                continue
            scale = 100 if is_share(m) else 1
            rows.append(
                {
                    "system": s,
                    "metric": m,
                    "k": k,
                    "family": FAMILY_TITLE[fam],
                    "order": FAMILY_ORDER.index(fam),
                    "mean": e["mean"] * scale,
                    "low": e["low"] * scale,
                    "high": e["high"] * scale,
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
    y = alt.Y("system:N", sort=systems, title=None)
    tooltip = [
        alt.Tooltip("system:N"),
        alt.Tooltip("metric:N"),
        alt.Tooltip("label:N", title="mean [95% interval]"),
    ]
    rule = base.mark_rule(strokeWidth=2.5, color="#4c78a8").encode(
        x=alt.X("low:Q", title=None, scale=alt.Scale(zero=False)), x2="high:Q", y=y, tooltip=tooltip
    )
    point = base.mark_point(filled=True, size=70, color="#1d3f6e").encode(
        x="mean:Q", y=y, tooltip=tooltip
    )
    families = [FAMILY_TITLE[f] for f in FAMILY_ORDER if f != "words"]
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
    return chart.to_dict()


def _words_chart(alt, data: dict) -> dict | None:
    k = data["main_k"]
    hit, words = f"recall@{k}", f"words@{k}"
    rows = []
    for s in data["systems"]:
        e = data["estimates"][s["name"]]
        if hit in e and words in e:
            rows.append(
                {
                    "system": s["name"],
                    "hit": e[hit]["mean"] * 100,
                    "low": e[hit]["low"] * 100,
                    "high": e[hit]["high"] * 100,
                    "words": e[words]["mean"],
                    "label": format_estimate(e[hit], hit),
                }
            )
    if not rows:
        return None
    base = alt.Chart(alt.Data(values=rows))
    x = alt.X(
        "words:Q",
        title=f"words sent to the model (mean, top {k})",
        scale=alt.Scale(zero=False, padding=30),
    )
    tooltip = [
        alt.Tooltip("system:N"),
        alt.Tooltip("label:N", title=f"{hit} [95% interval]"),
        alt.Tooltip("words:Q", title=f"words@{k}", format=".0f"),
    ]
    rule = base.mark_rule(strokeWidth=2, opacity=0.6).encode(
        x=x,
        y=alt.Y("low:Q", title=f"hit rate ({hit}, %)", scale=alt.Scale(zero=False)),
        y2="high:Q",
        color=alt.Color("system:N", legend=None),
        tooltip=tooltip,
    )
    point = base.mark_point(filled=True, size=80).encode(
        x=x, y="hit:Q", color=alt.Color("system:N", legend=None), tooltip=tooltip
    )
    text = base.mark_text(align="left", dx=8, dy=-8, fontSize=12).encode(
        x=x, y="hit:Q", text="system:N", color=alt.Color("system:N", legend=None)
    )
    return alt.layer(rule, point, text).properties(width=520, height=300).to_dict()


def _compare_chart(alt, data: dict) -> dict:
    metric = data["metric"]
    scale = 100 if is_share(metric) else 1
    rows = []
    for c in data["comparisons"]:
        d = c["difference"]
        rows.append(
            {
                "pair": f"{c['a']} − {c['b']}",
                "mean": d["mean"] * scale,
                "low": d["low"] * scale,
                "high": d["high"] * scale,
                "verdict": c["verdict"],
                "kind": "separated" if c["separated"] else "tie (interval includes 0)",
            }
        )
    pairs = [r["pair"] for r in rows]
    unit = "points" if scale == 100 else "difference"
    base = alt.Chart(alt.Data(values=rows))
    y = alt.Y("pair:N", sort=pairs, title=None)
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
        alt.Tooltip("mean:Q", format="+.2f"),
        alt.Tooltip("low:Q", format="+.2f"),
        alt.Tooltip("high:Q", format="+.2f"),
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


def _size_chart(alt, data: dict) -> dict | None:
    ss = data["sample_size"]
    rows, curve = [], []
    for r in ss["systems"]:
        if not r["rows"]:
            continue
        for row in r["rows"]:
            rows.append(
                {
                    "system": r["system"],
                    "n": row["n"],
                    "hw": row["half_width"] * 100,
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
                    "hw": h0 * 100 * math.sqrt(n0 / n),
                    "kind": "1/√n from the observed n",
                }
            )
    if not rows:
        return None
    target = ss["target"] * 100
    systems = [s["name"] for s in data["systems"]]
    x = alt.X("n:Q", scale=alt.Scale(type="log"), title="number of questions (log scale)")
    y = alt.Y("hw:Q", title=f"± half-width of the 95% interval on {ss['metric']} (points)")
    color = alt.Color(
        "system:N",
        sort=systems,
        title="system",
        legend=alt.Legend(symbolOpacity=1, symbolType="stroke"),
    )
    tooltip = [
        alt.Tooltip("system:N"),
        alt.Tooltip("n:Q", format=",.0f", title="questions"),
        alt.Tooltip("hw:Q", format=".2f", title="± points"),
    ]
    boot = (
        alt.Chart(alt.Data(values=rows))
        .mark_line(point=True)
        .encode(x=x, y=y, color=color, tooltip=tooltip)
    )
    sqrt = (
        alt.Chart(alt.Data(values=curve))
        .mark_line(strokeDash=[5, 4], opacity=0.55)
        .encode(x=x, y=y, color=color, detail="system:N")
    )
    rule = (
        alt.Chart(alt.Data(values=[{"hw": target}]))
        .mark_rule(color="#c0392b", strokeDash=[2, 2])
        .encode(y="hw:Q")
    )
    label = (
        alt.Chart(alt.Data(values=[{"hw": target, "text": f"target ± {target:g} points"}]))
        .mark_text(align="left", dy=-7, x=5, color="#c0392b")
        .encode(y="hw:Q", text="text:N")
    )
    return alt.layer(boot, sqrt, rule, label).properties(width=560, height=300).to_dict()

"""``ragmeter.report.charts``: what the charts draw. The words chart's layers share one
pair of axes and its labels stay by their points, clear of every interval bar (all 4 pixels
of it), one label for systems on one spot placed as the first one's would be; the forest
never draws words, the sample-size chart's curves, target, legend and height, and the
bundle's disk cache."""

from __future__ import annotations

import math

import pytest
from conftest import require
from report_systems import example_results

require("altair", "the HTML report needs the 'report' extra")

from ragmeter.comparison.formatting import shown_interval  # noqa: E402
from ragmeter.report import charts  # noqa: E402
from ragmeter.report.chartlayout import LINE_HEIGHT, _overlap, text_width  # noqa: E402
from ragmeter.report.charts import chart_specs, recall_is_hit, words_height  # noqa: E402
from ragmeter.report.common import FAMILY_TITLE  # noqa: E402
from ragmeter.report.data import report_data  # noqa: E402
from ragmeter.runs.results import Results  # noqa: E402


@pytest.fixture(scope="module", params=[3, 18])
def example(request, tmp_path_factory):
    root = tmp_path_factory.mktemp(f"charts{request.param}")
    return report_data(Results(example_results(root, request.param)))


@pytest.fixture()
def specs(example):
    """Each test draws the charts itself (a mutant's tests are those that draw them)."""
    return example, chart_specs(example)


def _layer(spec: dict, name: str) -> dict:
    (layer,) = [x for x in spec["layer"] if x.get("name") == name]
    return layer


def test_words_chart_plots_each_systems_hit_rate_in_percent_at_the_main_k(specs):
    data, charts_ = specs
    k = data["main_k"]
    rows = _layer(charts_["chart-words"], "points")["data"]["values"]
    assert [r["system"] for r in rows] == [s["name"] for s in data["systems"]]
    for r in rows:
        e = data["estimates"][r["system"]]
        assert r["hit"] == pytest.approx(e[f"recall@{k}"]["mean"] * 100)
        low, high, _ = shown_interval(e[f"recall@{k}"])  # the interval its label prints
        assert r["low"] == pytest.approx(low * 100)
        assert r["high"] == pytest.approx(high * 100)
        assert r["words"] == e[f"words@{k}"]["mean"]


def test_every_layer_of_the_words_chart_shares_its_axes(specs):
    _, charts_ = specs
    spec = charts_["chart-words"]
    for axis in ("x", "y"):
        given = [layer["encoding"][axis] for layer in spec["layer"]]
        scales = [str(e["scale"]) for e in given if isinstance(e, dict) and "scale" in e]
        assert len(scales) >= 2 and len(set(scales)) == 1, scales


def _pixels(spec: dict):
    labels = _layer(spec, "labels")
    x0, x1 = labels["encoding"]["x"]["scale"]["domain"]
    y0, y1 = labels["encoding"]["y"]["scale"]["domain"]
    w, h = spec["width"], spec["height"]
    return lambda x, y: ((x - x0) / (x1 - x0) * w, h - (y - y0) / (y1 - y0) * h)


def test_each_label_is_drawn_by_its_point_or_joined_to_it(specs):
    data, charts_ = specs
    spec = charts_["chart-words"]
    pixel = _pixels(spec)
    points = [pixel(r["words"], r["hit"]) for r in _layer(spec, "points")["data"]["values"]]
    leaders = [layer for layer in spec["layer"] if layer.get("name") == "leaders"]
    starts = [pixel(v["x"], v["y"]) for layer in leaders for v in layer["data"]["values"]]
    # a leader line starts by a point (just outside its dot)
    for sx, sy in starts:
        assert min(math.dist((sx, sy), p) for p in points) <= 7
    # a label sits beside a point, or at most 240 pixels away (with its leader)
    for v in _layer(spec, "labels")["data"]["values"]:
        lx, ly = pixel(v["lx"], v["ly"])
        assert min(math.dist((lx, ly), p) for p in points) <= 240 + 60


def test_no_label_covers_an_interval_bar(specs):
    _, charts_ = specs
    spec = charts_["chart-words"]
    pixel = _pixels(spec)
    bars = []
    for r in _layer(spec, "intervals")["data"]["values"]:
        x, top = pixel(r["words"], r["high"])
        _, bottom = pixel(r["words"], r["low"])
        bars.append((x - 2, top, x + 2, bottom))
    for v in _layer(spec, "labels")["data"]["values"]:
        x, mid = pixel(v["lx"], v["ly"])
        box = (
            x - 1,
            mid - LINE_HEIGHT / 2,
            x - 1 + text_width(v["text"]) + 2,
            mid + LINE_HEIGHT / 2,
        )
        for bar in bars:
            assert not _overlap(box, bar), (v["text"], box, bar)


def _words_spec(systems: list[tuple[str, float, float, float, float]]) -> dict:
    """The words chart of hand-made systems: (name, words, hit, low, high) each."""
    data = {
        "main_k": 5,
        "stats": {"confidence": 0.95},  # as report_data gives every page
        "systems": [{"name": name} for name, *_ in systems],
        "estimates": {
            name: {
                "recall@5": {"mean": hit, "low": low, "high": high},
                "words@5": {"mean": words},
            }
            for name, words, hit, low, high in systems
        },
    }
    return charts._words_chart(charts._altair(), data)


# two systems far apart fix the axes of the scenes below
ENDS = [("cheap", 200.0, 0.5, 0.4, 0.6), ("dear", 1200.0, 0.5, 0.4, 0.6)]


def _words_a_pixel(pixel) -> float:
    return 1000 / (pixel(1200.0, 0)[0] - pixel(200.0, 0)[0])


def _label_boxes(spec: dict) -> dict[str, tuple[float, float, float, float]]:
    pixel = _pixels(spec)
    boxes = {}
    for v in _layer(spec, "labels")["data"]["values"]:
        x, mid = pixel(v["lx"], v["ly"])
        width = text_width(v["text"]) + 2
        boxes[v["text"]] = (x - 1, mid - LINE_HEIGHT / 2, x - 1 + width, mid + LINE_HEIGHT / 2)
    return boxes


def test_a_label_stops_short_of_a_neighbours_interval_bar_not_of_its_middle():
    """A label that would end inside the 4-pixel-wide interval bar of the next system
    to its right (1 pixel before the bar's middle line) goes elsewhere."""
    pixel = _pixels(_words_spec(ENDS))
    ax, _ = pixel(500.0, 50.0)
    # beside its point, the label "a" starts 8 pixels right of it (the dot's radius 5, then 3)
    bx = ax + 8 + text_width("a") + 2 + 1
    b_words = 500.0 + (bx - ax) * _words_a_pixel(pixel)
    # b's bar runs from far above to far below a's label; b's own dot is well above it
    spec = _words_spec([*ENDS, ("a", 500.0, 0.5, 0.45, 0.55), ("b", b_words, 0.8, 0.2, 0.85)])
    pixel = _pixels(spec)
    assert pixel(b_words, 80.0)[0] == pytest.approx(bx)  # the scene is as meant
    _, top = pixel(b_words, 85.0)
    _, bottom = pixel(b_words, 20.0)
    bar = (bx - 2, top, bx + 2, bottom)
    for text, box in _label_boxes(spec).items():
        assert not _overlap(box, bar), (text, box, bar)


def test_a_label_shared_by_systems_on_one_spot_sits_as_the_first_ones_would():
    """Systems drawn less than 1.5 pixels apart share one label, placed beside the
    first of them just as that system's own label would be without the others."""
    alone = _label_boxes(_words_spec([*ENDS, ("a", 500.0, 0.5, 0.45, 0.55)]))["a"]
    b_words = 500.0 + 1.4 * _words_a_pixel(_pixels(_words_spec(ENDS)))  # 1.4 pixels right
    spec = _words_spec([*ENDS, ("a", 500.0, 0.5, 0.45, 0.55), ("b", b_words, 0.5, 0.45, 0.55)])
    shared = _label_boxes(spec)
    assert [v["text"] for v in _layer(spec, "labels")["data"]["values"]].count("a") == 1
    # the two lines of the shared label, one above the other, centred where a's was
    assert shared["a"][0] == pytest.approx(alone[0]) == shared["b"][0]
    middle = (shared["a"][1] + shared["b"][3]) / 2
    assert middle == pytest.approx((alone[1] + alone[3]) / 2)


def test_the_forest_draws_no_words_panel(specs):
    _, charts_ = specs
    panels = {r["family"] for r in charts_["chart-forest"]["data"]["values"]}
    assert FAMILY_TITLE["words"] not in panels
    assert all(
        not r["metric"].startswith("words@") for r in charts_["chart-forest"]["data"]["values"]
    )


def test_recall_is_hit_needs_a_hit_beside_a_recall():
    est = {"mean": 0.5, "low": 0.4, "high": 0.6}
    assert not recall_is_hit({"estimates": {"a": {"recall@5": est, "mrr@5": est}}})
    assert not recall_is_hit({"estimates": {}})
    assert recall_is_hit({"estimates": {"a": {"recall@5": est, "hit@5": dict(est)}}})


def test_words_chart_height_grows_past_eight_systems_up_to_480():
    assert words_height(8) == 300 and words_height(9) == 310
    assert words_height(26) == 480 and words_height(27) == 480 and words_height(200) == 480


def test_sample_size_chart(specs):
    data, charts_ = specs
    spec = charts_["chart-size"]
    n = len(data["systems"])
    assert spec["height"] == (300 if n <= 12 else 300 + 13 * (n - 12))  # a legend row each
    ys = [layer["encoding"]["y"]["scale"] for layer in spec["layer"]]
    assert all(y == ys[0] for y in ys) and ys[0]["nice"] is False
    # the bootstrap's lines and points name the system, n and the half-width on hover
    drawn = [
        layer
        for layer in spec["layer"]
        if any(v.get("kind") == "bootstrap" for v in layer["data"]["values"])
    ]
    assert sorted(layer["mark"]["type"] for layer in drawn) == ["line", "point"]
    for layer in drawn:
        assert [t["field"] for t in layer["encoding"]["tooltip"]] == ["system", "n", "hw"]
    (points,) = [layer for layer in drawn if layer["mark"]["type"] == "point"]
    legend = points["encoding"]["color"]["legend"]
    assert legend["symbolOpacity"] == 1
    # each dashed 1/sqrt(n) curve runs to 1.25 x the largest n shown or needed
    curves = [layer for layer in spec["layer"] if layer["mark"].get("strokeDash") == [5, 4]]
    (curve,) = curves
    for s in data["sample_size"]["systems"]:
        mine = [c["n"] for c in curve["data"]["values"] if c["system"] == s["system"]]
        if not mine:
            continue
        top = max([r["n"] for r in s["rows"]] + [s["needed"] or 0]) * 1.25
        assert len(mine) == 25
        assert all(n == round(n, 2) for n in mine)  # two decimals: a small page
        assert max(mine) == pytest.approx(top, abs=0.01)
        assert min(mine) == pytest.approx(max(2.0, s["n"] / 4), abs=0.01)


FAKE_BUNDLE = "window.vegaEmbed = function () {};" + " " * 100_000


def test_the_vega_bundle_is_read_from_its_cache_and_a_damaged_one_rebuilt(tmp_path, monkeypatch):
    vl_convert = require("vl_convert")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    built = []

    def bundle(**kwargs):
        built.append(kwargs)
        return FAKE_BUNDLE

    monkeypatch.setattr(vl_convert, "javascript_bundle", bundle)
    build = charts.vega_bundle.__wrapped__  # past the in-process cache
    assert build("9.9") == FAKE_BUNDLE and built == [{"vl_version": "9.9"}]
    (cached,) = (tmp_path / "ragmeter").glob("vega-bundle-*-9.9.js")
    assert cached.read_text(encoding="utf-8") == FAKE_BUNDLE
    assert build("9.9") == FAKE_BUNDLE and len(built) == 1  # from the disk cache
    cached.write_text("window.vegaEmbed", encoding="utf-8")  # cut short
    assert build("9.9") == FAKE_BUNDLE and len(built) == 2
    cached.write_text("x" * 200_000, encoding="utf-8")  # not a bundle
    assert build("9.9") == FAKE_BUNDLE and len(built) == 3

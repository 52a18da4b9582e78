"""The report's charts stay readable from 2 to 20 systems: labels placed without
overlap, a colour and a marker per system, axes from the data with headroom, and one
panel where recall@k and hit@k coincide."""

from __future__ import annotations

import copy
import itertools
import json
import random

import pytest
from conftest import require
from report_systems import example_results

from ragmeter.report.chartlayout import (
    LINE_HEIGHT,
    PALETTE,
    Placed,
    clusters,
    padded,
    place_labels,
    system_style,
    text_width,
)

NAMES = [
    f"{s}/bm25-k{k}" for s in ("overlap", "sentence", "recursive", "parent-400") for k in range(6)
]


def _overlap(a, b) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _check(placed: list[Placed], points, width, height, radius=5.0) -> None:
    boxes = [p.box for p in placed]
    for a, b in itertools.combinations(boxes, 2):
        assert not _overlap(a, b), (a, b)
    for box in boxes:
        assert box[0] >= 0 and box[1] >= 0 and box[2] <= width and box[3] <= height, box
        for x, y in points:
            assert not _overlap(box, (x - radius, y - radius, x + radius, y + radius)), box


def _cluster(rng: random.Random, n: int, cx: float, cy: float, spread: float):
    return [
        (cx + rng.uniform(-spread, spread), cy + rng.uniform(-spread, spread)) for _ in range(n)
    ]


@pytest.mark.parametrize(
    "points",
    [
        _cluster(random.Random(1), 12, 80, 150, 12),  # a tight cluster by the left edge
        _cluster(random.Random(2), 20, 300, 200, 40),
        [(x, y) for x in (20, 300, 590) for y in (4, 200, 396)],  # corners and edges
        [(float(i * 29 % 600), float(i * 53 % 400)) for i in range(24)],
    ],
)
def test_labels_never_overlap_and_stay_inside_the_plot(points):
    texts = [NAMES[i % len(NAMES)] for i in range(len(points))]
    placed = place_labels(points, texts, 600, 400)
    _check(placed, points, 600, 400)
    for p, text in zip(placed, texts, strict=True):
        assert p.text == text or p.number is not None


def test_a_label_with_room_sits_beside_its_point():
    (p,) = place_labels([(100.0, 100.0)], ["whole"], 600, 400)
    assert p.leader is None and p.number is None
    assert p.box[0] > 100 and p.box[1] < 100 < p.box[3]  # on the right, level with it


def test_a_crowded_cluster_gets_a_column_of_labels_with_leader_lines():
    points = _cluster(random.Random(3), 9, 200, 200, 8)
    placed = place_labels(points, NAMES[:9], 600, 400)
    _check(placed, points, 600, 400)
    assert all(p.leader is not None for p in placed)
    lefts = {round(p.box[0], 6) for p in placed}
    assert len(lefts) == 1  # one column
    order = sorted(range(9), key=lambda i: points[i][1])
    tops = [placed[i].box[1] for i in order]
    assert tops == sorted(tops)  # top to bottom in the order of their points


def test_labels_become_numbers_only_when_no_room_is_left():
    points = _cluster(random.Random(4), 8, 60, 40, 10)
    placed = place_labels(points, NAMES[:8], 160, 80)
    _check(placed, points, 160, 80)
    numbers = sorted(p.number for p in placed if p.number is not None)
    assert numbers and numbers == list(range(1, len(numbers) + 1))
    assert all(p.text == str(p.number) for p in placed if p.number is not None)


def test_points_on_one_spot_share_one_label():
    placed = place_labels([(200.0, 200.0)], ["whole/bm25\nwhole/bm25-k09"], 600, 400)
    (p,) = placed
    assert p.box[3] - p.box[1] == 2 * LINE_HEIGHT
    assert [t for t, _ in p.lines] == ["whole/bm25", "whole/bm25-k09"]


def test_placement_is_the_same_every_time():
    points = _cluster(random.Random(5), 15, 300, 200, 30)
    assert place_labels(points, NAMES[:15], 600, 400) == place_labels(points, NAMES[:15], 600, 400)


def test_clusters_chain_near_points():
    assert clusters([(0, 0), (20, 0), (40, 0), (200, 0)]) == [[0, 1, 2], [3]]


def test_text_width_is_an_upper_estimate():
    assert text_width("mmmm") > text_width("iiii") > 0
    assert text_width("parent-400/bm25-k09") >= 0.55 * 11 * len("parent-400/bm25-k09")
    assert text_width("日本") == 22  # outside ASCII: one em each


def test_no_two_systems_share_colour_and_marker():
    systems = [f"s{i}" for i in range(80)]
    colours, shapes = system_style(systems)
    assert len(set(zip(colours, shapes, strict=True))) == 80
    assert len(set(colours[:20])) == 20  # up to twenty, the colour alone tells them apart
    assert len(set(shapes[:10])) == 1 and shapes[10] != shapes[0] == shapes[9]
    assert colours[20] == colours[0] and shapes[20] not in (shapes[0], shapes[10])


def _lab(colour: str) -> tuple[float, float, float]:
    """CIELAB (D65) of an sRGB ``#rrggbb``."""
    rgb = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    r, g, b = [((c + 0.055) / 1.055) ** 2.4 if c > 0.04045 else c / 12.92 for c in rgb]
    xyz = (
        (r * 0.4124 + g * 0.3576 + b * 0.1805) / 0.95047,
        r * 0.2126 + g * 0.7152 + b * 0.0722,
        (r * 0.0193 + g * 0.1192 + b * 0.9505) / 1.08883,
    )
    fx, fy, fz = [v ** (1 / 3) if v > 0.008856 else 7.787 * v + 16 / 116 for v in xyz]
    return 116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)


def test_the_twenty_colours_are_as_far_apart_as_tableaus_closest_pair():
    import math

    def closest(colours) -> float:
        return min(math.dist(_lab(a), _lab(b)) for a, b in itertools.combinations(colours, 2))

    assert len(PALETTE) == 20 and len(set(PALETTE)) == 20
    tableau = closest(PALETTE[:10])  # brown and grey, about 18.7
    assert closest(PALETTE) >= tableau > 15


def test_padded_leaves_room_on_both_sides():
    assert padded(60.0, 100.0) == (57.6, 102.4)
    assert padded(100.0, 100.0, least=2.0) == (98.0, 102.0)


# ------------------------------------------------------------------ the specifications


@pytest.fixture(scope="module", params=[3, 18])
def specs(request, tmp_path_factory):
    require("altair", "the HTML report needs the 'report' extra")
    from ragmeter.report.charts import chart_specs
    from ragmeter.report.data import report_data
    from ragmeter.runs.results import Results

    root = tmp_path_factory.mktemp(f"charts{request.param}")
    data = report_data(Results(example_results(root, request.param)))
    return data, chart_specs(data)


def _layer(spec: dict, name: str) -> dict:
    (layer,) = [x for x in spec["layer"] if x.get("name") == name]
    return layer


def test_words_chart_axes_fit_the_data_with_headroom(specs):
    data, charts = specs
    spec = charts["chart-words"]
    rows = _layer(spec, "points")["data"]["values"]
    x = _layer(spec, "points")["encoding"]["x"]["scale"]["domain"]
    y = _layer(spec, "intervals")["encoding"]["y"]["scale"]["domain"]
    words = [r["words"] for r in rows]
    low, high = min(r["low"] for r in rows), max(r["high"] for r in rows)
    assert x[0] < min(words) and x[1] > max(words)
    assert x[1] - x[0] < 1.3 * (max(words) - min(words))
    assert y[0] < low and y[1] > high  # a dot at 100 is inside, not on the edge
    assert y[1] - y[0] < 1.3 * (high - low)


def test_words_labels_do_not_overlap(specs):
    data, charts = specs
    spec = charts["chart-words"]
    labels = _layer(spec, "labels")
    x0, x1 = labels["encoding"]["x"]["scale"]["domain"]
    y0, y1 = labels["encoding"]["y"]["scale"]["domain"]
    w, h = spec["width"], spec["height"]
    boxes = []
    for r in labels["data"]["values"]:
        px = (r["lx"] - x0) / (x1 - x0) * w
        py = h - (r["ly"] - y0) / (y1 - y0) * h
        boxes.append((px, py - 6, px + text_width(r["text"]), py + 6))
    for a, b in itertools.combinations(boxes, 2):
        assert not _overlap(a, b), (a, b)
    shown = {r["text"] for r in labels["data"]["values"]}
    assert shown == {s["name"] for s in data["systems"]}  # every system named in full


def test_size_chart_axis_stops_near_the_data(specs):
    data, charts = specs
    spec = charts["chart-size"]
    values = [r for layer in spec["layer"] for r in layer["data"]["values"] if "n" in r]
    lo, hi = min(r["n"] for r in values), max(r["n"] for r in values)
    domain = spec["layer"][0]["encoding"]["x"]["scale"]["domain"]
    assert domain[0] < lo and hi < domain[1] < 1.25 * hi
    asked = max(r["n"] for s in data["sample_size"]["systems"] for r in s["rows"])
    assert domain[1] < 2 * asked  # not the next power of ten


def test_many_systems_never_share_colour_and_marker(specs):
    data, charts = specs
    systems = [s["name"] for s in data["systems"]]
    for cid in ("chart-words", "chart-size"):
        enc = next(x["encoding"] for x in charts[cid]["layer"] if "shape" in x["encoding"])
        assert enc["color"]["scale"]["domain"] == systems == enc["shape"]["scale"]["domain"]
        pairs = zip(enc["color"]["scale"]["range"], enc["shape"]["scale"]["range"], strict=True)
        assert len(set(pairs)) == len(systems), cid
        assert set(enc["color"]["scale"]["range"]) <= set(PALETTE)


def test_recall_and_hit_are_one_panel_where_they_coincide(specs):
    from ragmeter.report.charts import COINCIDE_NOTE, COINCIDE_TITLE, chart_specs
    from ragmeter.report.common import FAMILY_TITLE

    data, charts = specs
    forest = charts["chart-forest"]
    panels = {r["family"] for r in forest["data"]["values"]}
    assert COINCIDE_TITLE in panels and FAMILY_TITLE["hit"] not in panels
    assert FAMILY_TITLE["recall"] not in panels
    assert forest["title"]["text"] == COINCIDE_NOTE

    apart = copy.deepcopy(data)  # one estimate apart: both panels, no note
    first = next(iter(apart["estimates"].values()))
    first["hit@5"]["mean"] += 0.01
    forest = chart_specs(apart)["chart-forest"]
    panels = {r["family"] for r in forest["data"]["values"]}
    assert {FAMILY_TITLE["hit"], FAMILY_TITLE["recall"]} <= panels
    assert "title" not in forest


def test_same_data_same_specs(specs):
    from ragmeter.report.charts import chart_specs

    data, charts = specs
    assert json.dumps(chart_specs(data), sort_keys=True) == json.dumps(charts, sort_keys=True)

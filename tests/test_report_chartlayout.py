"""``ragmeter.report.chartlayout``: the width table's figures and mirrored pairs, padding,
points on one spot, where a label goes when the sides are full or only the spot straight
below is free, a column centred on its cluster, and leader lines no label covers."""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import random

import pytest

from ragmeter.report.chartlayout import (
    FONT_SIZE,
    _overlap,
    _segment_hits_box,
    group_points,
    padded,
    place_labels,
    text_width,
)

NAMES = [
    f"{s}/bm25-k{k}" for s in ("overlap", "sentence", "recursive", "parent-400") for k in range(6)
]


def test_figures_share_one_width_and_mirrored_pairs_match():
    # both fonts of the table set figures at one width (tabular), and a bracket is as
    # wide as its mirror image
    for figure in "0123456789":
        assert text_width(figure) == pytest.approx(0.64 * FONT_SIZE), figure
    for left, right in ("()", "[]", "{}", "<>", "/\\"):
        assert text_width(left) == text_width(right), (left, right)


def test_ascii_is_measured_by_the_table_and_the_rest_as_one_em():
    assert text_width("~") == pytest.approx(0.84 * FONT_SIZE)  # the table's last character
    assert text_width(" ") == pytest.approx(0.32 * FONT_SIZE)  # its first
    assert text_width("\x7f") == text_width("é") == FONT_SIZE


def test_a_narrow_span_is_padded_by_at_least_one_unit():
    assert padded(0.0, 10.0) == (-1.0, 11.0)
    assert padded(5.0, 5.0) == (4.0, 6.0)


def test_points_within_a_pixel_and_a_half_share_a_group():
    points = [(0.0, 0.0), (1.0, 1.0), (10.0, 10.0), (0.5, 0.0), (11.0, 10.0)]
    assert group_points(points) == [[0, 1, 3], [2, 4]]
    assert group_points(points, within=0.1) == [[0], [1], [2], [3], [4]]


def test_boxes_that_only_touch_do_not_overlap():
    assert not _overlap((0, 0, 10, 10), (10, 0, 20, 10))
    assert not _overlap((0, 0, 10, 10), (0, 10, 10, 20))
    assert _overlap((0, 0, 10, 10), (9, 9, 20, 20))


def test_a_segment_hits_a_box_only_when_it_crosses_it():
    box = (10.0, 10.0, 20.0, 20.0)
    assert _segment_hits_box(0, 15, 30, 15, box)  # straight through
    assert not _segment_hits_box(0, 5, 30, 5, box)  # above it
    assert not _segment_hits_box(0, 25, 30, 25, box)  # below it
    assert not _segment_hits_box(15, 0, 15, 8, box)  # stops short of it
    assert _segment_hits_box(15, 0, 15, 12, box)  # reaches in from above
    assert not _segment_hits_box(0, 0, 8, 30, box)  # passes by on the left


def test_with_no_room_at_the_sides_a_label_goes_above_its_point_else_below():
    (p,) = place_labels([(30.0, 100.0)], ["whole"], 60, 200)
    assert p.leader is None and p.number is None
    assert p.box[3] < 100 - 5 and p.box[0] < 30 < p.box[2]  # right above it
    (p,) = place_labels([(30.0, 10.0)], ["whole"], 60, 200)  # no room above either
    assert p.leader is None and p.number is None
    assert p.box[1] > 10 + 5 and p.box[0] < 30 < p.box[2]  # right below it


def test_with_room_left_only_straight_below_a_label_goes_there_centred_under_its_point():
    """The last direction the search tries further out is straight down: when every
    other spot is taken (here by obstacles), the label goes 20 pixels below its point,
    centred under it, joined by a vertical leader line."""
    x, y = 300.0, 100.0
    w, h = text_width("whole") + 2, 14
    # a slot just big enough for the label, 20 pixels under the point
    left, right, top, bottom = x - w / 2 - 0.1, x + w / 2 + 0.1, y + 20, y + 20 + h + 0.1
    taken = [
        (0, 0, left, 400),
        (right, 0, 600, 400),
        (left, 0, right, top),
        (left, bottom, right, 400),
    ]
    (p,) = place_labels([(x, y)], ["whole"], 600, 400, obstacles=taken)
    assert p.number is None and p.text == "whole"
    assert (p.box[0] + p.box[2]) / 2 == pytest.approx(x)
    assert p.box[1] == pytest.approx(top)
    assert p.leader is not None and p.leader[0] == p.leader[2] == pytest.approx(x)


def test_a_column_is_centred_on_its_cluster():
    points = [(300.0, 190.0 + 5 * i) for i in range(5)]
    placed = place_labels(points, NAMES[:5], 600, 400)
    assert all(p.leader is not None for p in placed)
    mid = sum(y for _, y in points) / len(points)
    top = min(p.box[1] for p in placed)
    bottom = max(p.box[3] for p in placed)
    assert (top + bottom) / 2 == pytest.approx(mid)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_no_label_covers_another_labels_leader_line(seed):
    rng = random.Random(seed)
    points = [(rng.uniform(150, 450), rng.uniform(100, 300)) for _ in range(24)]
    placed = place_labels(points, NAMES[:24], 600, 400)
    leaders = [p.leader for p in placed if p.leader is not None]
    assert leaders
    for p, seg in itertools.product(placed, leaders):
        if seg is p.leader:
            continue
        assert not _segment_hits_box(*seg, p.box), (seg, p.box)
    assert all(math.isfinite(v) for p in placed for v in p.box)


def _scene(seed: int, n: int, cx: float, cy: float, spread: float):
    rng = random.Random(seed)
    return [
        (cx + rng.uniform(-spread, spread), cy + rng.uniform(-spread, spread)) for _ in range(n)
    ]


def _grid(x0: float, y0: float, nx: int, ny: int, step: float = 28):
    return [(x0 + step * i, y0 + step * j) for j in range(ny) for i in range(nx)]


GRIDS = (
    (250, 10, 4, 3),
    (480, 330, 4, 3),
    (100, 100, 3, 8, 30),
)
EDGES = ((570, 200), (570, 380), (30, 380), (300, 385), (300, 15), (30, 20))
LAYOUT_DIGEST = "4cf2c834047a9b0aeb5c26eb02f582e773a0ce1068c2617d629be6be10c2724b"


def test_the_placement_of_fixed_scenes_is_pinned():
    """The same results give the same page, release after release: a change to the
    placement search (its directions, distances, shifts or margins) changes this digest,
    and the new layout must be looked at (tests/test_report_charts_browser.py draws it)
    before the digest is updated."""
    scenes = [_scene(s, 12 + s, 300, 200, 20 + 5 * s) for s in range(8)]
    scenes += [_scene(10 + s, 6, 60 + 80 * s, 40 + 40 * s, 12) for s in range(6)]
    # by the edges and corners, where labels go left, up or down, and further out
    scenes += [_scene(20 + s, 8 + 2 * s, x, y, 25) for s, (x, y) in enumerate(EDGES)]
    scenes += [[(560.0 + 4 * (i % 3), 20.0 + 17 * i) for i in range(22)]]
    # grids of single points too far apart to be a cluster: labels go further out
    scenes += [_grid(*g) for g in GRIDS]
    # small grids placed at random, their points one label-height apart
    for seed in range(80, 90):
        rng = random.Random(seed)
        n, x0, y0 = rng.randint(4, 9), rng.uniform(30, 540), rng.uniform(10, 360)
        scenes.append(
            [(x0 + 28 * (i % 3) + rng.uniform(-1, 1), y0 + 28 * (i // 3)) for i in range(n)]
        )
    # two clusters side by side: columns shifted up or down to fit
    for seed in range(40):
        side = random.Random(seed)
        x, y = 300 + side.choice([-90, 90]), 200 + side.uniform(-60, 60)
        scenes.append(
            _scene(seed, 3 + seed % 9, 300, 200, 14) + _scene(seed + 100, 3 + seed % 5, x, y, 14)
        )
    out = []
    for points in scenes:
        placed = place_labels(points, [NAMES[i % 24] for i in range(len(points))], 600, 400)
        out.append(
            [
                [round(v, 3) for v in p.box]
                + [p.number]
                + ([round(v, 3) for v in p.leader] if p.leader else [])
                for p in placed
            ]
        )
    digest = hashlib.sha256(json.dumps(out).encode()).hexdigest()
    assert digest == LAYOUT_DIGEST

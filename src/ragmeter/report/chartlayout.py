"""The report charts' layout without altair: the systems' colours and markers, axis
domains with headroom, and where point labels go so that no two overlap.

:func:`system_style` gives each system a colour and a marker: twenty colours, no
two systems alike in both up to 80. :func:`padded` widens an axis domain so no mark sits on
the plot's edge.

Label placement is pure geometry on pixels: the chart fixes its width, height and axis
domains, so every point's pixel position is known before the page is drawn, and
:func:`place_labels` can place each label by a greedy search over candidate
positions with bounding-box checks. A label goes beside its point when there is
room; else further out, joined to the point by a leader line; else, when no room
is left anywhere, it becomes a number beside the point, spelled out in a key
under the chart. The same points give the same placement, so the same results
give the same page.

Text widths are estimated from a table of character widths that is the wider of
DejaVu Sans and Arial (Liberation Sans) at each character, so the estimate is
never narrower than the text drawn with the common sans-serif fonts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

FONT_SIZE = 11
"""Point size of the label text (pixels)."""

LINE_HEIGHT = 14
"""Height of a label's box (pixels): the font size and a little room."""

# Widths of the printable ASCII characters (space to ~), in hundredths of an em: the
# wider of DejaVu Sans and Arial at each character. Other characters count as 1 em.
_WIDTHS = (
    32, 40, 46, 84, 64, 95, 78, 27, 39, 39, 50, 84, 32, 36, 32, 34, 64, 64, 64, 64,
    64, 64, 64, 64, 64, 64, 34, 34, 84, 84, 84, 56, 102, 68, 69, 72, 77, 67, 61, 78,
    75, 29, 50, 67, 56, 86, 75, 79, 67, 79, 72, 67, 61, 73, 68, 99, 69, 67, 69, 39,
    34, 39, 84, 56, 50, 61, 63, 55, 63, 62, 35, 63, 63, 28, 28, 58, 28, 97, 63, 61,
    63, 63, 41, 52, 39, 63, 59, 82, 59, 59, 52, 64, 34, 64, 84,
)  # fmt: skip

# Twenty colours: Tableau 10, then ten darker ones, each at least as far from every
# other (CIELAB distance) as Tableau's closest pair (brown and grey) are from each other.
# A system is told apart by its colour up to twenty and by its colour and marker past
# that: the darker ten also take another marker, so colour is never the only cue.
PALETTE = (
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
    "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#79706e",
    "#1f3a6e", "#b35806", "#8e1b2f", "#2a7f7a", "#2d6a2e",
    "#a08000", "#6a3d9a", "#d6336c", "#5c3d2e", "#222222",
)  # fmt: skip
SHAPES = (
    "circle", "square", "triangle-up", "diamond",
    "triangle-down", "cross", "triangle-left", "triangle-right",
)  # fmt: skip
ROUND = 10
"""Systems per marker: the first ten are circles, the next ten squares, and so on."""


def system_style(systems: list[str]) -> tuple[list[str], list[str]]:
    """Each system's colour and marker, in order: twenty distinct colours
    (:data:`PALETTE`), and the marker changes every ten systems, so up to twenty no
    two systems share a colour and up to 80 no two share both."""
    colours = [PALETTE[i % len(PALETTE)] for i in range(len(systems))]
    shapes = [SHAPES[(i // ROUND) % len(SHAPES)] for i in range(len(systems))]
    return colours, shapes


def padded(lo: float, hi: float, share: float = 0.06, least: float = 1.0) -> tuple[float, float]:
    """``[lo, hi]`` widened by ``share`` of its span on each side (at least ``least``),
    so no mark sits on the edge of the plot."""
    pad = max((hi - lo) * share, least)
    return lo - pad, hi + pad


Box = tuple[float, float, float, float]
"""``(left, top, right, bottom)`` in pixels, y growing downwards."""


def text_width(text: str, font_size: float = FONT_SIZE) -> float:
    """An upper estimate of ``text``'s width in pixels at ``font_size``."""
    em = 0.0
    for ch in text:
        code = ord(ch)
        em += _WIDTHS[code - 32] / 100 if 32 <= code < 127 else 1.0
    return em * font_size


@dataclass(frozen=True)
class Placed:
    """One label's place: its box, the text drawn there, and the leader line's ends
    (``None`` when the label sits beside its point)."""

    text: str
    box: Box
    leader: tuple[float, float, float, float] | None = None
    number: int | None = None  # set when the label became a number in the key

    @property
    def lines(self) -> list[tuple[str, float]]:
        """Each line of the text with the vertical middle where it is drawn."""
        rows = self.text.split("\n")
        step = (self.box[3] - self.box[1]) / len(rows)
        return [(t, self.box[1] + step * (j + 0.5)) for j, t in enumerate(rows)]

    @property
    def x(self) -> float:
        """Left edge, where left-aligned text starts."""
        return self.box[0] + 1


def group_points(points: list[tuple[float, float]], within: float = 1.5) -> list[list[int]]:
    """Points drawn on top of each other (centres ``within`` pixels), as groups of
    indices in order of their first member: one label names them all."""
    groups: list[list[int]] = []
    for i, p in enumerate(points):
        for g in groups:
            if math.dist(points[g[0]], p) <= within:
                g.append(i)
                break
        else:
            groups.append([i])
    return groups


def _overlap(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _inside(box: Box, width: float, height: float) -> bool:
    return box[0] >= 0 and box[1] >= 0 and box[2] <= width and box[3] <= height


def _segment_hits_box(x1: float, y1: float, x2: float, y2: float, box: Box) -> bool:
    """Whether the segment from (x1, y1) to (x2, y2) passes through ``box``
    (Liang-Barsky clipping)."""
    dx, dy = x2 - x1, y2 - y1
    lo, hi = 0.0, 1.0
    for p, q in ((-dx, x1 - box[0]), (dx, box[2] - x1), (-dy, y1 - box[1]), (dy, box[3] - y1)):
        if p == 0:
            if q < 0:
                return False
            continue
        t = q / p
        if p < 0:
            lo = max(lo, t)
        else:
            hi = min(hi, t)
        if lo > hi:
            return False
    return True


def _box_at(px: float, py: float, w: float, h: float, ux: float, uy: float, d: float) -> Box:
    """The box of width ``w`` and height ``h`` whose near side is ``d`` pixels from
    (px, py) in the direction (ux, uy)."""
    left = _near_side(px + ux * d, ux, w)
    top = _near_side(py + uy * d, uy, h)
    return (left, top, left + w, top + h)


def _near_side(c: float, u: float, size: float) -> float:
    """Where a box of ``size`` starts on one axis, its near side at ``c`` when the
    direction ``u`` points away along that axis, centred on ``c`` when it does not."""
    if u > 0.35:
        return c
    if u < -0.35:
        return c - size
    return c - size / 2


def _nearest_on_box(px: float, py: float, box: Box) -> tuple[float, float]:
    return (min(max(px, box[0]), box[2]), min(max(py, box[1]), box[3]))


# Directions tried, in order: right, left, then the diagonals and up/down.
_NEAR = ((1, 0), (-1, 0), (1, -1), (1, 1), (-1, -1), (-1, 1), (0, -1), (0, 1))
_ANGLES = tuple(
    (math.cos(math.radians(a)), math.sin(math.radians(a)))
    for a in (0, 180, -15, 15, 195, 165, -30, 30, 210, 150, -45, 45, 225, 135)
    + (-60, 60, 240, 120, -75, 75, 255, 105, -90, 90)
)
_DISTANCES = (20, 30, 42, 56, 72, 90, 110, 135, 165, 200, 240)
_MARGIN = 2.0  # pixels kept free around every label


def _grow(box: Box, by: float) -> Box:
    return (box[0] - by, box[1] - by, box[2] + by, box[3] + by)


def clusters(points: list[tuple[float, float]], link: float = 26.0) -> list[list[int]]:
    """Points within ``link`` pixels of each other, chained (single linkage), as lists
    of indices; clusters in order of their first member."""
    parent = list(range(len(points)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i in range(len(points)):
        for j in range(i):
            if math.dist(points[i], points[j]) <= link:
                parent[root(i)] = root(j)
    out: dict[int, list[int]] = {}
    for i in range(len(points)):
        out.setdefault(root(i), []).append(i)
    return sorted(out.values(), key=lambda c: c[0])


Segment = tuple[float, float, float, float]


class _Layout:
    """The labels placed so far and the checks a new one must pass."""

    def __init__(self, points, width, height, radius, obstacles, font_size) -> None:
        self.points = points
        self.width, self.height = width, height
        self.radius = radius
        self.font_size = font_size
        self.line = LINE_HEIGHT * font_size / FONT_SIZE
        r = radius + 1
        self.dots = [(x - r, y - r, x + r, y + r) for x, y in points]
        self.blocked = self.dots + list(obstacles)
        self.boxes: list[Box] = []
        self.leaders: list[Segment] = []

    def size(self, text: str) -> tuple[float, float]:
        rows = text.split("\n")
        return max(text_width(t, self.font_size) for t in rows) + 2, self.line * len(rows)

    def free(self, box: Box, also: list[Box] = (), strict: bool = True) -> bool:
        """Whether ``box`` is inside the plot and clear of every label, point, obstacle
        and leader line (not ``strict``: of every label and point)."""
        if not _inside(box, self.width, self.height):
            return False
        wide = _grow(box, _MARGIN)
        if any(_overlap(wide, b) for b in self.boxes) or any(_overlap(wide, b) for b in also):
            return False
        if any(_overlap(box, b) for b in (self.blocked if strict else self.dots)):
            return False
        return not strict or not any(_segment_hits_box(*seg, wide) for seg in self.leaders)

    def leader(self, i: int, box: Box, also: list[Box] = (), near: set[int] = frozenset()):
        """The leader line from point ``i`` to ``box``, if it crosses no label and no
        point apart from those under point ``i``'s own dot and those in ``near``."""
        px, py = self.points[i]
        ex, ey = _nearest_on_box(px, py, box)
        dist = math.hypot(ex - px, ey - py) or 1.0
        start = (self.radius + 1) / dist
        seg = (px + (ex - px) * start, py + (ey - py) * start, ex, ey)
        if any(_segment_hits_box(*seg, b) for b in [*self.boxes, *also]):
            return None
        for j, d in enumerate(self.dots):
            if j == i or j in near:
                continue
            under = math.dist(self.points[i], self.points[j]) <= 2 * self.radius + 2
            if not under and _segment_hits_box(*seg, d):
                return None
        return seg

    def add(self, got: Placed) -> Placed:
        self.boxes.append(got.box)
        if got.leader is not None:
            self.leaders.append(got.leader)
        return got

    def beside(self, i: int, text: str) -> Placed | None:
        px, py = self.points[i]
        w, h = self.size(text)
        gap = self.radius + 3
        for ux, uy in _NEAR:
            norm = math.hypot(ux, uy)
            box = _box_at(px, py, w, h, ux / norm, uy / norm, gap if norm == 1 else gap * 0.8)
            if self.free(box):
                return Placed(text, box)
        return None

    def further(self, i: int, text: str) -> Placed | None:
        px, py = self.points[i]
        w, h = self.size(text)
        for d in _DISTANCES:
            for ux, uy in _ANGLES:
                box = _box_at(px, py, w, h, ux, uy, d)
                if self.free(box):
                    seg = self.leader(i, box)
                    if seg is not None:
                        return Placed(text, box, leader=seg)
        return None

    def anywhere(self, i: int, text: str, within: float = math.inf) -> Placed | None:
        """The free spot nearest point ``i`` on a 4-pixel grid over the whole plot (no
        further than ``within``), with a leader line; else (when ``within`` is
        unbounded) the nearest spot clear of labels and points, its line anywhere."""
        px, py = self.points[i]
        w, h = self.size(text)
        spots = []
        for top in range(0, int(self.height - h) + 1, 4):
            for left in range(0, int(self.width - w) + 1, 4):
                box = (float(left), float(top), left + w, top + h)
                ex, ey = _nearest_on_box(px, py, box)
                dist = math.hypot(ex - px, ey - py)
                if dist <= within:
                    spots.append((dist, top, left, box))
        spots.sort()
        for _, _, _, box in spots:
            if self.free(box):
                seg = self.leader(i, box)
                if seg is not None:
                    return Placed(text, box, leader=seg)
        if within < math.inf:
            return None
        for _, _, _, box in spots:  # last: clear of labels and points, the line anywhere
            if self.free(box, strict=False):
                ex, ey = _nearest_on_box(px, py, box)
                return Placed(text, box, leader=(px, py, ex, ey))
        return None

    def column(self, members: list[int], texts: list[str]) -> list[tuple[int, Placed]] | None:
        """The labels of a crowded cluster stacked in one column beside it, in the
        order of their points from top to bottom, each joined to its point by a
        leader line; ``None`` when no column fits."""
        members = sorted(members, key=lambda i: (self.points[i][1], self.points[i][0], i))
        sizes = [self.size(texts[i]) for i in members]
        tall = sum(h for _, h in sizes) + _MARGIN * 2 * (len(members) - 1)
        wide = max(w for w, _ in sizes)
        xs = [self.points[i][0] for i in members]
        mid = sum(self.points[i][1] for i in members) / len(members)
        for d in _DISTANCES:
            for side in (1, -1):
                edge = (max(xs) + self.radius + d) if side > 0 else (min(xs) - self.radius - d)
                left = edge if side > 0 else edge - wide
                for shift in (0, -1, 1, -2, 2, -3, 3, -4, 4, -6, 6, -8, 8):
                    top = min(max(mid - tall / 2 + shift * 10, 0), self.height - tall)
                    got = self._stack(members, texts, sizes, left, top, side)
                    if got is not None:
                        return got
        return None

    def _stack(self, members, texts, sizes, left, top, side) -> list[tuple[int, Placed]] | None:
        boxes, y = [], top
        for w, h in sizes:
            x0 = left if side > 0 else left + max(s[0] for s in sizes) - w
            boxes.append((x0, y, x0 + w, y + h))
            y += h + _MARGIN * 2
        if not all(self.free(b) for b in boxes):
            return None
        out = []
        for k, (i, box) in enumerate(zip(members, boxes, strict=True)):
            seg = self.leader(i, box, also=boxes[:k] + boxes[k + 1 :], near=set(members))
            if seg is None:
                return None
            if any(_segment_hits_box(*p.leader, box) for _, p in out):
                return None
            out.append((i, Placed(texts[i], box, leader=seg)))
        return out


def place_labels(
    points: list[tuple[float, float]],
    texts: list[str],
    width: float,
    height: float,
    *,
    radius: float = 5.0,
    obstacles: list[Box] = (),
    font_size: float = FONT_SIZE,
) -> list[Placed]:
    """Place ``texts[i]`` (lines split on ``\\n``) near ``points[i]`` (pixels in a
    ``width`` x ``height`` plot, y downwards) so that no two labels overlap, no label
    covers a point or an obstacle, and every label stays inside the plot.

    A cluster of three or more points close together gets its labels stacked in a
    column beside it, each joined to its point by a leader line (largest clusters
    first). Any other label goes beside its point where there is room, else further
    out (at most 240 pixels) with a leader line that crosses no label and no other
    point; a label with no room left becomes its number (1, 2, ...), placed the same
    way or anywhere free in the plot, and ``Placed.number`` says so.
    """
    lay = _Layout(points, width, height, radius, obstacles, font_size)
    placed: dict[int, Placed] = {}
    groups = sorted(clusters(points), key=lambda c: (-len(c), c[0]))
    rest: list[int] = []
    for c in groups:
        got = lay.column(c, texts) if len(c) >= 3 else None
        if got is None:
            rest.extend(c)
            continue
        for i, p in got:
            placed[i] = lay.add(p)

    def crowd(i: int) -> int:
        return sum(1 for p in points if 0 < math.dist(p, points[i]) < 60)

    numbered = 0
    for i in sorted(rest, key=lambda i: (-crowd(i), i)):
        got = lay.beside(i, texts[i]) or lay.further(i, texts[i])
        got = got or lay.anywhere(i, texts[i], within=_DISTANCES[-1])
        if got is None:
            numbered += 1
            mark = str(numbered)
            got = lay.beside(i, mark) or lay.further(i, mark) or lay.anywhere(i, mark)
            if got is None:  # the plot is full: the number goes on the point's right
                px, py = points[i]
                w, h = lay.size(mark)
                left = px + radius + 3
                got = Placed(mark, (left, py - h / 2, left + w, py + h / 2))
            got = Placed(got.text, got.box, got.leader, number=numbered)
        placed[i] = lay.add(got)
    return [placed[i] for i in range(len(points))]

"""What the report's modules share: display constants and small helpers on metric names.

No I/O: :mod:`ragmeter.report.data`,
:mod:`ragmeter.report.sections` and :mod:`ragmeter.report.charts` all read these.
"""

from __future__ import annotations

from typing import Any

from ragmeter.comparison.formatting import format_estimate
from ragmeter.defaults import DEFAULTS
from ragmeter.scoring.names import cutoff, family, table

TOP_ITEMS = 5
"""Ranked items shown per system in the drill-down (the cut a reader model gets)."""

PAGE_SIZE = 50
"""Questions per page in the drill-down."""

DRILLDOWN_RANKINGS = 20_000
"""Rankings (questions x systems) the drill-down embeds at most: past that it shows the
questions on which the systems' scores differ most, so the page stays small enough to
open (every question's scores stay in the results)."""

TARGET_HALF_WIDTH = DEFAULTS.half_width
"""Default target for the sample-size reading: planning's (an interval of +/- 4 points)."""


def family_order() -> tuple[str, ...]:
    """The families the measures table groups rows by, in order (:data:`FAMILIES`'
    ``order``, read as the table stands)."""
    return table().report_order


def family_titles() -> dict[str, str]:
    """Each family's title over its rows (:data:`FAMILIES`' ``title``)."""
    return dict(table().titles)


FAMILY_ORDER = family_order()
""":func:`family_order` as the table stood at import (the views call the function)."""
FAMILY_TITLE = family_titles()
""":func:`family_titles` as the table stood at import (the views call the function)."""
GRADE_LABELS = ("correct", "partial", "wrong", "unscored")


SHARE = "hit"
"""Any share family: an estimate shaped with it is printed in percent."""

RATIO = "kappa"
"""A family printed with three decimals (agreement, MRR-like numbers)."""


def _est(e: Any, metric: str) -> dict[str, Any]:
    """An estimate (:class:`ragmeter.stats.Estimate`) for the page: ends rounded for the
    charts, and ``shown``, the text every view prints for ``metric``
    (:func:`ragmeter.comparison.formatting.format_estimate`); the page prints ``shown`` as it is."""
    out = {
        "mean": _r(e.mean),
        "low": _r(e.low),
        "high": _r(e.high),
        "n": e.n,
        "shown": format_estimate(e, metric),  # the exact interval, where there is one
    }
    exact = getattr(e, "exact", None)
    if exact is not None:  # 0/1 scores near 0% or 100%: kept beside the bootstrap's ends
        out["exact"] = [_r(exact[0]), _r(exact[1])]
    return out


def _r(x: float) -> float:
    return round(float(x), 6)


_k = cutoff
"""A metric name's cutoff (:func:`ragmeter.scoring.names.cutoff`)."""

_family = family
"""A metric name's family (:func:`ragmeter.scoring.names.family`)."""

"""One self-contained HTML page for a results directory (the names, in one place).

The report is four modules; this one re-exports their public names so that
``from ragmeter.report.html import write_report`` keeps working:

* :mod:`ragmeter.report.data`: plain JSON-ready data (``report_data``); no altair.
* :mod:`ragmeter.report.sections`: the optional answer and audit sections.
* :mod:`ragmeter.report.charts`: Vega-Lite specifications and the Vega bundle.
* :mod:`ragmeter.report.page`: assembly, the CSP, ``write_report``.

Sections for answer grades and question audits appear when their files are in
the directory (see :data:`OPTIONAL_SECTIONS`).
"""

from __future__ import annotations

from ragmeter.report.charts import ReportDependencyError, chart_specs, vega_bundle
from ragmeter.report.common import (
    FAMILY_ORDER,
    FAMILY_TITLE,
    GRADE_LABELS,
    PAGE_SIZE,
    TARGET_HALF_WIDTH,
    TOP_ITEMS,
)
from ragmeter.report.data import (
    _comparisons,  # noqa: F401 (tests reach it here)
    headline_extras,
    report_data,
    strategy_grid,
)
from ragmeter.report.page import (
    is_report_file,
    json_for_script,
    render_report,
    write_report,
)
from ragmeter.report.sections import (
    OPTIONAL_SECTIONS,
    OptionalSection,
    load_answers,
    load_audit,
)
from ragmeter.scoring.metrics import SHARE_FAMILIES

__all__ = [
    "FAMILY_ORDER",
    "FAMILY_TITLE",
    "GRADE_LABELS",
    "OPTIONAL_SECTIONS",
    "PAGE_SIZE",
    "SHARE_FAMILIES",
    "TARGET_HALF_WIDTH",
    "TOP_ITEMS",
    "OptionalSection",
    "ReportDependencyError",
    "chart_specs",
    "headline_extras",
    "is_report_file",
    "json_for_script",
    "load_answers",
    "load_audit",
    "render_report",
    "report_data",
    "strategy_grid",
    "vega_bundle",
    "write_report",
]

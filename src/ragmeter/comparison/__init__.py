"""How systems are compared and shown: the one comparison of a family, its verdicts, the run's
summary, tables, and how every number is printed.

Public names, imported on first use::

    systems:      ComparisonPlan, compare_systems, compare_run
    verdicts:     Rule, Row, Verdicts, compare_family, identical_groups
    summary:      Summary, summarize
    tables:       Comparisons, ShowsItself
    formatting:   format_estimate, format_interval, shown_difference, shown_p
"""

from __future__ import annotations

from ragmeter._compat import lazy_getattr

_LAZY = {
    "ComparisonPlan": "ragmeter.comparison.systems",
    "compare_systems": "ragmeter.comparison.systems",
    "compare_run": "ragmeter.comparison.systems",
    "Rule": "ragmeter.comparison.verdicts",
    "Row": "ragmeter.comparison.verdicts",
    "Verdicts": "ragmeter.comparison.verdicts",
    "compare_family": "ragmeter.comparison.verdicts",
    "identical_groups": "ragmeter.comparison.verdicts",
    "Summary": "ragmeter.comparison.summary",
    "summarize": "ragmeter.comparison.summary",
    "Comparisons": "ragmeter.comparison.tables",
    "ShowsItself": "ragmeter.comparison.tables",
    "format_estimate": "ragmeter.comparison.formatting",
    "format_interval": "ragmeter.comparison.formatting",
    "shown_difference": "ragmeter.comparison.formatting",
    "shown_p": "ragmeter.comparison.formatting",
}
__all__ = sorted(_LAZY)


__getattr__ = lazy_getattr(__name__, _LAZY)

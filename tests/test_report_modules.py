"""The report's modules: plain data needs no altair; the old import path still works."""

from __future__ import annotations

import subprocess
import sys


def test_report_data_imports_without_altair_or_rich():
    code = (
        "import sys, ragmeter.report.data, ragmeter.report.sections\n"
        "bad = [m for m in ('altair', 'vl_convert', 'rich') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_html_module_re_exports_the_moved_names():
    from ragmeter.report import charts, data, html, page, sections

    assert html.write_report is page.write_report
    assert html.render_report is page.render_report
    assert html.report_data is data.report_data
    assert html.chart_specs is charts.chart_specs and html.vega_bundle is charts.vega_bundle
    assert html.load_answers is sections.load_answers
    assert html.load_audit is sections.load_audit
    assert html.ReportDependencyError is charts.ReportDependencyError

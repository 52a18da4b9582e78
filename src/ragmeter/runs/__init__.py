"""A search run from start to saved results: the pipeline, the run's data, scoring one system,
saving, reading results back, run files scored with ``evaluate``, and TREC files exported.
A run in memory (``SearchRun``) and one read back (``Results``) are the one run type,
``ReadableRun``.

Public names, imported on first use::

    reading:      ReadableRun, RunReading, RankedItem, SystemRun
    meta:         RunMeta
    search_run:   SearchRun
    pipeline:     run_search
    scoring:      grade_rankings, score_system
    saving:       save_results, meta_record
    results:      Results, as_results, results_path
    evaluate:     EvaluateRun, evaluate_files
    warnings:     run_warnings
    export:       Export, export_files, merged_judgments
"""

from __future__ import annotations

from ragmeter._compat import lazy_getattr

_LAZY = {
    "ReadableRun": "ragmeter.runs.reading",
    "RunReading": "ragmeter.runs.reading",
    "RankedItem": "ragmeter.runs.reading",
    "SystemRun": "ragmeter.runs.reading",
    "RunMeta": "ragmeter.runs.meta",
    "SearchRun": "ragmeter.runs.search_run",
    "run_search": "ragmeter.runs.pipeline",
    "grade_rankings": "ragmeter.runs.scoring",
    "score_system": "ragmeter.runs.scoring",
    "save_results": "ragmeter.runs.saving",
    "meta_record": "ragmeter.runs.saving",
    "Results": "ragmeter.runs.results",
    "as_results": "ragmeter.runs.results",
    "results_path": "ragmeter.runs.results",
    "EvaluateRun": "ragmeter.runs.evaluate",
    "evaluate_files": "ragmeter.runs.evaluate",
    "run_warnings": "ragmeter.runs.warnings",
    "Export": "ragmeter.runs.export",
    "export_files": "ragmeter.runs.export",
    "merged_judgments": "ragmeter.runs.export",
}
__all__ = sorted(_LAZY)


__getattr__ = lazy_getattr(__name__, _LAZY)

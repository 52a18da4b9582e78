"""The run history and what is built on it: the store, the trend of a system across runs, a
recorded run as a baseline, and the CI gate (``ragmeter check``).

Public names, imported on first use::

    store:        HistoryStore, RunRecord, open_history, locate, record
    trend:        Trend
    baseline:     resolve_ref, materialise, recorded_baseline, RecordedBaseline
    gate:         Check, check_noninferior
"""

from __future__ import annotations

from ragmeter._compat import lazy_getattr

_LAZY = {
    "HistoryStore": "ragmeter.history.store",
    "RunRecord": "ragmeter.history.store",
    "open_history": "ragmeter.history.store",
    "locate": "ragmeter.history.store",
    "record": "ragmeter.history.store",
    "Trend": "ragmeter.history.trend",
    "resolve_ref": "ragmeter.history.baseline",
    "materialise": "ragmeter.history.baseline",
    "recorded_baseline": "ragmeter.history.baseline",
    "RecordedBaseline": "ragmeter.history.baseline",
    "Check": "ragmeter.history.gate",
    "check_noninferior": "ragmeter.history.gate",
}
__all__ = sorted(_LAZY)


__getattr__ = lazy_getattr(__name__, _LAZY)

"""Module paths and names from before the sub-packages, still importable for a while,
and the one lazy import every package's ``__init__`` uses (:func:`lazy_getattr`).

``import ragmeter.verdicts`` (and every other flat module name below) gives a stand-in that
forwards each name to the module's new home and warns once, with a
:class:`DeprecationWarning`, where it moved. New code imports from the sub-packages.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import types
import warnings
from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any

MOVED = {
    "ragmeter.checks": "ragmeter.runs.warnings",
    "ragmeter.chunk_types": "ragmeter.chunking.types",
    "ragmeter.chunkers": "ragmeter.chunking.frameworks",
    "ragmeter.config": "ragmeter.inputs.config",
    "ragmeter.corpus": "ragmeter.inputs.corpus",
    "ragmeter.doc_index": "ragmeter.chunking.doc_index",
    "ragmeter.evaluate": "ragmeter.runs.evaluate",
    "ragmeter.experiment": "ragmeter.runs.pipeline",
    "ragmeter.formatting": "ragmeter.comparison.formatting",
    "ragmeter.gate": "ragmeter.history.gate",
    "ragmeter.grading": "ragmeter.scoring.grading",
    "ragmeter.history_baseline": "ragmeter.history.baseline",
    "ragmeter.history_trend": "ragmeter.history.trend",
    "ragmeter.io": "ragmeter.files.io",
    "ragmeter.measurement": "ragmeter.scoring.measurement",
    "ragmeter.metrics": "ragmeter.scoring.metrics",
    "ragmeter.outputs": "ragmeter.files.outputs",
    "ragmeter.paired_tests": "ragmeter.stats.paired_tests",
    "ragmeter.planning": "ragmeter.stats.planning",
    "ragmeter.qrels": "ragmeter.scoring.trec",
    "ragmeter.qrels_bytes": "ragmeter.scoring.trec_bytes",
    "ragmeter.qrels_read": "ragmeter.scoring.trec_read",
    "ragmeter.results": "ragmeter.runs.results",
    "ragmeter.saving": "ragmeter.runs.saving",
    "ragmeter.schemas": "ragmeter.files.schemas",
    "ragmeter.stats_agreement": "ragmeter.stats.agreement",
    "ragmeter.stats_bootstrap": "ragmeter.stats.bootstrap",
    "ragmeter.stats_checks": "ragmeter.stats.validate",
    "ragmeter.stats_compare": "ragmeter.stats.paired",
    "ragmeter.stats_draws": "ragmeter.stats.draws",
    "ragmeter.stats_exact": "ragmeter.stats.exact",
    "ragmeter.stats_maxt": "ragmeter.stats.maxt",
    "ragmeter.stats_size": "ragmeter.stats.size",
    "ragmeter.store": "ragmeter.files.sqlite",
    "ragmeter.summary": "ragmeter.comparison.summary",
    "ragmeter.tables": "ragmeter.comparison.tables",
    "ragmeter.testset": "ragmeter.inputs.testset",
    "ragmeter.verdicts": "ragmeter.comparison.verdicts",
}
"""Old module name -> its home now."""

MOVED_NAMES = {
    **{
        f"ragmeter.chunking.{name}": "ragmeter.chunking.strategies"
        for name in (
            "BATCH_CHARS KINDS PARALLEL_MIN_CHARS ROUND_CHARS Span Strategy "
            "prepare_sentences run_scope"
        ).split()
    },
    "ragmeter.comparison.family_of": "ragmeter.comparison.systems",
    **{
        f"ragmeter.history.{name}": "ragmeter.history.store"
        for name in (
            "DEFAULT_DIR ENV EXTRA_FILES FILE_NAME RESULT_FILES git_state history_path "
            "read_results_files record_if_enabled"
        ).split()
    },
    **{
        f"ragmeter.scoring.{name}": "ragmeter.runs.scoring"
        for name in ("Found", "grade_items", "grade_rankings", "score_system")
    },
    # stats' internals, re-exported by the package before it kept them in their modules
    **{
        f"ragmeter.stats.{name}": f"ragmeter.stats.{module}"
        for module, names in {
            "agreement": "_kappa_from_counts",
            "bootstrap": "_block_sums _estimate _order_stat _plan _tails",
            "draws": "_BLOCK _CHUNK _DRAW_CACHE_BYTES _DRAWS _draw_indices _DrawCache "
            "_index_blocks _sign_blocks",
            "paired": "_TIE _flip_p_values",
            "size": "_shared_stream_means",
            "validate": "_as_vector _check_int _check_seed _finite",
        }.items()
        for name in names.split()
    },
}
"""Public names that a package held when it was one module -> the module holding them
now (:func:`lazy_getattr` forwards them with a warning)."""


class _Forward(importlib.abc.Loader):
    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        new = MOVED[spec.name]
        warnings.warn(
            f"{spec.name} has moved to {new}; import it from there",
            DeprecationWarning,
            stacklevel=2,
        )
        module = types.ModuleType(spec.name, f"Moved to {new}.")
        home = import_module(new)
        module.__getattr__ = lambda name: getattr(home, name)  # type: ignore[method-assign]
        module.__dir__ = lambda: dir(home)  # type: ignore[method-assign]
        module.__all__ = [n for n in dir(home) if not n.startswith("_")]
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        return None


class _OldPaths(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):  # noqa: ANN001
        if name in MOVED:
            return importlib.machinery.ModuleSpec(name, _Forward())
        return None


def install() -> None:
    """Let the old module names resolve (once per interpreter)."""
    if not any(isinstance(f, _OldPaths) for f in sys.meta_path):
        sys.meta_path.append(_OldPaths())


def lazy_getattr(package: str, lazy: Mapping[str, str]) -> Callable[[str], Any]:
    """The module ``__getattr__`` of ``package``: ``lazy`` maps a public name to the
    module holding it; a moved name forwards with a warning; else AttributeError."""

    def __getattr__(name: str) -> Any:
        module = lazy.get(name)
        if module is not None:
            value = getattr(import_module(module), name)
            vars(sys.modules[package])[name] = value  # the next access is a plain lookup
            return value
        home = MOVED_NAMES.get(f"{package}.{name}")
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        warnings.warn(
            f"{package}.{name} has moved to {home}.{name}; import it from there",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(import_module(home), name)

    return __getattr__

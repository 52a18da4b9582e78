"""ragmeter: measure retrieval for language models, with honest intervals.

The notebook API, one screen::

    import ragmeter

    run = ragmeter.search(corpus="docs", testset="questions.jsonl",
                          strategies=["sentence", "recursive"])   # -> SearchRun
    run                                         # systems x metrics with 95% intervals
    run.scores("sentence", "recall@5")          # per-question scores
    ragmeter.compare(run, "sentence", "recursive")              # paired interval, verdict
    ragmeter.bootstrap(run.scores("sentence", "recall@5"))      # Estimate(mean, low, high...)
    run.summary                                 # Summary: estimates, comparisons, sample sizes
    run.to_pandas(), run.to_markdown()
    ragmeter.Results("ragmeter-results")        # a saved run reads the same way

Also here: :class:`Config`, :class:`Summary`, :func:`load_corpus`, :func:`load_testset`. Names
are imported on first use, so ``import ragmeter`` stays cheap (no numpy, no
rich, no torch).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragmeter import _compat
from ragmeter._compat import lazy_getattr

__version__ = "0.1.0"

_compat.install()  # the flat module names of earlier versions still import, with a warning

_LAZY = {
    "Config": "ragmeter.inputs.config",
    "Results": "ragmeter.runs.results",
    "SearchRun": "ragmeter.runs.search_run",
    "Summary": "ragmeter.comparison.summary",
    "bootstrap": "ragmeter.stats",
    "compare": "ragmeter.api",
    "load_corpus": "ragmeter.inputs.corpus",
    "load_testset": "ragmeter.inputs.testset",
    "search": "ragmeter.api",
}

__all__ = [
    "Config",
    "Results",
    "SearchRun",
    "Summary",
    "__version__",
    "bootstrap",
    "compare",
    "load_corpus",
    "load_testset",
    "search",
]

if TYPE_CHECKING:  # for type checkers and editors; at run time see __getattr__
    from ragmeter.api import compare, search
    from ragmeter.comparison.summary import Summary
    from ragmeter.inputs.config import Config
    from ragmeter.inputs.corpus import load_corpus
    from ragmeter.inputs.testset import load_testset
    from ragmeter.runs.results import Results
    from ragmeter.runs.search_run import SearchRun
    from ragmeter.stats import bootstrap


__getattr__ = lazy_getattr(__name__, _LAZY)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))

"""The comparison families a run can name (``[stats] family``, ``--family``) and what each
compares: the one table of family names. :mod:`ragmeter.inputs.config` checks a family
against it and :mod:`ragmeter.comparison.families` reads the grid's families and their
titles from it, so a new family is one row here. Imports nothing.

"auto" is "grid" on a strategy x retriever grid and "all" (every pair) otherwise;
"main-effects" adds each retriever over all strategies and each strategy over all
retrievers.
"""

from __future__ import annotations

__all__ = ["FAMILY_CHOICES", "FAMILY_LABELS"]

FAMILY_LABELS = {
    "auto": "a strategy x retriever grid's families on a grid run, else every pair",
    "all": "every pair",
    "grid": "retrievers within each strategy and strategies within each retriever",
    "retrievers": "retrievers within each strategy",
    "strategies": "strategies within each retriever",
    "main-effects": "the grid's pairs, each retriever over all strategies (*/R) and each "
    "strategy over all retrievers (S/*)",
}
FAMILY_CHOICES = tuple(FAMILY_LABELS)

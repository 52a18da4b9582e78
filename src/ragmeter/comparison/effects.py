"""Main effects of a strategy x retriever grid, as comparisons in the grid's family.

A grid answers "which retriever, for each strategy?" cell by cell; a person with six
chunkers also asks "does this retriever help, over all my chunkers?". The effect of
retriever A over retriever B over all strategies is, for each question, the
difference A - B averaged over the strategies:

    effect(q) = mean over strategies s of (score(s/A, q) - score(s/B, q))

and the effect of strategy S over T over all retrievers is the same with the roles
swapped. Each is a per-question difference vector, and the mean of differences is
the difference of means, so an effect is the pair of two *averaged rows*:
``*/A`` (question by question, the mean over every strategy of ``s/A``'s scores)
against ``*/B``, and ``S/*`` against ``T/*`` (:func:`ragmeter.comparison.families.effect_name`).
:func:`with_main_effects` appends those rows and their pairs to a table, so the one
paired test, interval and family rule of
:func:`ragmeter.comparison.verdicts.compare_family` decide them beside the grid's
own pairs (``family="main-effects"``), with rows worded as the pairs' rows are.

Averaged 0/1 scores are no longer 0/1, so a family with main effects uses the
sign-flip test (and its inverted interval) for every row; the flips of a question
flip its whole row of differences, the averaged ones included, so max-T's joint null
keeps the dependence between an effect and the cells it averages.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ragmeter.comparison.families import EVERY, MAIN_EFFECTS, effect_name, grid_cells
from ragmeter.errors import InputError

__all__ = [
    "MAIN_EFFECTS",
    "averaged_scores",
    "main_effect_names",
    "names_an_effect",
    "pair_names",
    "with_main_effects",
]


def _levels(names: Sequence[str]) -> tuple[dict[str, tuple[str, str]], list[str], list[str]]:
    """The grid's cells, and its strategies and retrievers in order of first appearance."""
    cells = grid_cells(names)
    if cells is None:  # a grid family's grid_pairs has said why; planned pairs come here
        raise InputError(
            f"a main effect ({EVERY}/R: a retriever over every strategy, S/{EVERY}: a "
            f"strategy over every retriever) needs a strategy x retriever grid "
            f"(STRATEGY/RETRIEVER names, every strategy with every retriever); these "
            f"systems form none: plan pairs of systems instead"
        )
    if any(EVERY in cell for cell in cells.values()):
        raise InputError(
            f"a system named with {EVERY!r} as its strategy or retriever leaves no name "
            f"for the main effects (which average over {EVERY!r}); rename it"
        )
    strategies = list(dict.fromkeys(c[0] for c in cells.values()))
    retrievers = list(dict.fromkeys(c[1] for c in cells.values()))
    return cells, strategies, retrievers


def names_an_effect(pairs: Sequence[Sequence[str]] | None) -> bool:
    """Whether planned ``pairs`` name an averaged row (``*/stem``, ``fixed/*``): one
    main effect asked in advance, a family of one at the full level."""
    return any(EVERY in str(name).rpartition("/")[::2] for pair in pairs or () for name in pair)


def main_effect_names(names: Sequence[str]) -> list[tuple[str, str]]:
    """The main effects of the grid ``names`` as (A, B) averaged-row names: every two
    retrievers over all strategies (``*/A``, ``*/B``), then every two strategies over
    all retrievers (``S/*``, ``T/*``), each in order of first appearance."""
    _, strategies, retrievers = _levels([str(n) for n in names])
    out = []
    for axis, levels in ((1, retrievers), (0, strategies)):
        rows = [effect_name(level, axis) for level in levels]
        out += [(a, b) for k, a in enumerate(rows) for b in rows[k + 1 :]]
    return out


def with_main_effects(
    matrix: np.ndarray, names: Sequence[str]
) -> tuple[np.ndarray, list[str], list[tuple[int, int]]]:
    """``(matrix, names, pairs)``: the (systems x questions) ``matrix`` of a grid with
    an averaged row appended for each retriever (``*/R``: the mean over strategies)
    and each strategy (``S/*``: the mean over retrievers), the names with them, and
    the main effects as pairs of those rows' indices (:func:`main_effect_names`)."""
    names = [str(n) for n in names]
    cells, strategies, retrievers = _levels(names)
    m = np.asarray(matrix, dtype=np.float64)
    rows, extra = [], []
    for axis, levels in ((1, retrievers), (0, strategies)):
        for level in levels:
            members = [i for i, n in enumerate(names) if cells[n][axis] == level]
            rows.append(m[members].mean(axis=0))
            extra.append(effect_name(level, axis))
    every = [*names, *extra]
    index = {n: i for i, n in enumerate(every)}
    pairs = [(index[a], index[b]) for a, b in main_effect_names(names)]
    return np.vstack([m, np.array(rows)]), every, pairs


def pair_names(names: Sequence[str], pairs: Sequence[Sequence[str]] | None) -> list[str]:
    """The names planned ``pairs`` may use over the systems ``names``: the systems, and
    when a pair names an averaged row (:func:`names_an_effect`), the grid's averaged rows
    (``*/R``, ``S/*``; one line when the systems form no grid). Every command that takes
    ``--pairs`` checks the names it is given against these."""
    known = [str(n) for n in names]
    if names_an_effect(pairs):
        known += list(dict.fromkeys(n for pair in main_effect_names(known) for n in pair))
    return known


def averaged_scores(
    matrix: np.ndarray, names: Sequence[str], pairs: Sequence[Sequence[str]] | None
) -> dict[str, np.ndarray]:
    """The per-question scores of the averaged rows (``*/R``, ``S/*``) of the grid
    ``names`` (rows of ``matrix``), as :func:`with_main_effects` makes them, when
    ``pairs`` name one; else none."""
    if not names_an_effect(pairs):
        return {}
    m, every, _ = with_main_effects(matrix, names)
    own = {str(n) for n in names}
    return {n: m[i] for i, n in enumerate(every) if n not in own}

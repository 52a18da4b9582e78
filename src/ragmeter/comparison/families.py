"""The questions a strategy x retriever grid asks, as families of pairs.

A search that crosses several strategies with several retrievers names each system
``STRATEGY/RETRIEVER`` (:func:`system_name`). Of all its pairs, a person asks two
questions: which retriever, for each strategy (the retrievers' pairs within each
strategy), and which strategy, for each retriever (the strategies' pairs within each
retriever). :func:`grid_pairs` builds those families (``"grid"``: both, adjusted as
one family; ``"retrievers"`` or ``"strategies"``: one; ``"main-effects"``: both, with
each retriever over all strategies and each strategy over all retrievers added by
:mod:`ragmeter.comparison.effects`), :func:`grid_cells` reads a grid back from the
names (:func:`effect_name` names an averaged row), and :func:`grid_views` lays a
table's rows out as the two grids the terminal and the report show, the main effects
as their last row or column. The decision itself is
:func:`ragmeter.comparison.verdicts.compare_family`'s; this module only chooses and places pairs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ragmeter.errors import InputError
from ragmeter.inputs.config import Config
from ragmeter.inputs.family_names import FAMILY_CHOICES, FAMILY_LABELS
from ragmeter.stats.paired import verdict_text

__all__ = [
    "EVERY",
    "FAMILIES",
    "GRID_FAMILIES",
    "GRID_LABELS",
    "MAIN_EFFECTS",
    "GridView",
    "check_config_family",
    "effect_name",
    "grid_cells",
    "grid_pairs",
    "grid_views",
    "kind_of",
    "short_verdict",
    "system_name",
]

#: Every family kind a comparison can be asked for by name (besides a baseline or pairs);
#: "auto" (:data:`ragmeter.inputs.family_names.FAMILY_CHOICES`) is resolved before it comes here.
FAMILIES = tuple(f for f in FAMILY_CHOICES if f != "auto")
#: The families of a strategy x retriever grid: both questions (one family), or one.
GRID_FAMILIES = tuple(f for f in FAMILIES if f != "all")
#: The family that adds the grid's main effects to its pairs.
MAIN_EFFECTS = "main-effects"
#: The strategy (or retriever) of an averaged row: ``*/dense`` is dense over every strategy.
EVERY = "*"
GRID_LABELS = {f: FAMILY_LABELS[f] for f in GRID_FAMILIES}
#: The row and column a grid view gives the main effects.
_ALL_STRATEGIES, _ALL_RETRIEVERS = "all strategies", "all retrievers"


def effect_name(level: str, axis: int) -> str:
    """The name of an averaged row: retriever ``level`` over every strategy (``axis``
    1: ``*/dense``) or strategy ``level`` over every retriever (``axis`` 0: ``fixed/*``)."""
    return f"{EVERY}/{level}" if axis == 1 else f"{level}/{EVERY}"


def grid_cells(names: Sequence[str]) -> dict[str, tuple[str, str]] | None:
    """Each system's (strategy, retriever) when the systems form a grid, else None.

    A search names a system ``STRATEGY/RETRIEVER`` when it has several retrievers
    (:func:`system_name`); the systems form a grid when every
    name splits so (at its last ``/``), there are at least two strategies and two
    retrievers, and every strategy is there with every retriever.
    """
    cells: dict[str, tuple[str, str]] = {}
    for name in names:
        strategy, slash, retriever = str(name).rpartition("/")
        if not slash or not strategy or not retriever:
            return None
        cells[str(name)] = (strategy, retriever)
    strategies = {c[0] for c in cells.values()}
    retrievers = {c[1] for c in cells.values()}
    if len(strategies) < 2 or len(retrievers) < 2:
        return None
    if len(set(cells.values())) != len(strategies) * len(retrievers):
        return None
    return cells


def _not_a_grid(names: Sequence[str], family: str) -> InputError:
    parts = [str(n).rpartition("/") for n in names]
    strategies = sorted({p[0] for p in parts if p[1]})
    retrievers = sorted({p[2] for p in parts if p[1]})
    alone = [str(n) for n, p in zip(names, parts, strict=True) if not p[1]]
    found = (
        f"systems {', '.join(alone[:4])}{' ...' if len(alone) > 4 else ''} name no retriever "
        f"(STRATEGY/RETRIEVER; a search with one retriever names them by strategy alone)"
        if alone
        else f"this run has {len(strategies)} "
        f"{'strategy' if len(strategies) == 1 else 'strategies'} and {len(retrievers)} "
        f"{'retriever' if len(retrievers) == 1 else 'retrievers'}"
        + (
            ""
            if len(strategies) < 2 or len(retrievers) < 2
            else ", and not every strategy with every retriever"
        )
    )
    return InputError(
        f"family {family!r} ({GRID_LABELS[family]}) needs a strategy x retriever grid: "
        f"at least two strategies crossed with at least two retrievers; {found}. "
        f"Use the family 'all', a baseline or planned pairs instead"
    )


def grid_pairs(names: Sequence[str], family: str) -> list[tuple[int, int]]:
    """The pairs (row indices, A before B in ``names`` order) of a grid family.

    ``"retrievers"``: every two retrievers within each strategy (strategies in order
    of first appearance); ``"strategies"``: every two strategies within each
    retriever; ``"grid"``: both, the retrievers' pairs first (``"main-effects"``
    too: its main effects are pairs of averaged rows, added by
    :func:`ragmeter.comparison.effects.with_main_effects`). One line naming what
    is missing when the systems are not a grid (:func:`grid_cells`).
    """
    if family not in GRID_FAMILIES:
        raise InputError(f"a grid family is one of {GRID_FAMILIES}, got {family!r}")
    cells = grid_cells(names)
    if cells is None:
        raise _not_a_grid(names, family)
    names = [str(n) for n in names]
    out: list[tuple[int, int]] = []
    for axis in (0, 1):  # 0: same strategy (retriever pairs); 1: same retriever
        if family not in ("grid", MAIN_EFFECTS, ("retrievers", "strategies")[axis]):
            continue
        groups: dict[str, list[int]] = {}
        for i, n in enumerate(names):
            groups.setdefault(cells[n][axis], []).append(i)
        for members in groups.values():
            out += [(i, j) for k, i in enumerate(members) for j in members[k + 1 :]]
    return out


def kind_of(label: str | None) -> str | None:
    """The grid family a rule's ``family`` label names (``"grid"``, ``"retrievers"``,
    ``"strategies"``), or None for every other family."""
    return next((kind for kind, text in GRID_LABELS.items() if text == label), None)


def system_name(strategy: str, retriever: str, n_retrievers: int) -> str:
    """A search's system name: the strategy alone with one retriever, else
    ``STRATEGY/RETRIEVER`` (read back by :func:`grid_cells`)."""
    return strategy if n_retrievers == 1 else f"{strategy}/{retriever}"


def check_config_family(cfg: Config) -> None:
    """A grid family on a config that makes no strategy x retriever grid is one line
    before any work, as the comparison itself would say it after the search."""
    if cfg.family not in GRID_FAMILIES:
        return
    names = [
        r if isinstance(r, str) else str(r.get("name") or r.get("kind")) for r in cfg.retrievers
    ]
    # every cell named as in a grid, so that the line counts strategies and retrievers
    grid_pairs([f"{s}/{r}" for s in cfg.strategies for r in names], cfg.family)


@dataclass
class GridView:
    """One grid of a grid family's rows: ``cells[i][j]`` is the index of the table row
    (A - B as the table has it) at row label ``rows[i]`` and column ``columns[j]``, or
    None. ``axis`` is ``"retrievers"`` (rows: strategies, columns: retriever pairs) or
    ``"strategies"`` (rows: strategy pairs, columns: retrievers)."""

    axis: str
    title: str
    corner: str
    rows: list[str] = field(default_factory=list)
    columns: list[str] = field(default_factory=list)
    cells: list[list[int | None]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "axis": self.axis,
            "title": self.title,
            "corner": self.corner,
            "rows": list(self.rows),
            "columns": list(self.columns),
            "cells": [list(r) for r in self.cells],
        }


def _place(view: GridView, row: str, column: str, index: int) -> None:
    if row not in view.rows:
        view.rows.append(row)
        view.cells.append([None] * len(view.columns))
    if column not in view.columns:
        view.columns.append(column)
        for r in view.cells:
            r.append(None)
    view.cells[view.rows.index(row)][view.columns.index(column)] = index


def grid_views(rows: Sequence[Any], family: str | None) -> list[GridView]:
    """The grids of a grid family's table ``rows`` (anything with ``a`` and ``b``):
    retrievers within each strategy (rows: strategies, columns: ``A − B`` retriever
    pairs) and strategies within each retriever (rows: ``A − B`` strategy pairs,
    columns: retrievers), as many as ``family`` holds; the main effects (``*/A``
    against ``*/B``, ``S/*`` against ``T/*``) as a last row ``all strategies`` and a
    last column ``all retrievers``; none for another family or when the rows'
    systems form no grid."""
    if family not in GRID_FAMILIES:
        return []
    systems = {str(r.a) for r in rows} | {str(r.b) for r in rows}
    cells = grid_cells(sorted(s for s in systems if EVERY not in s.rpartition("/")[::2]))
    if cells is None:
        return []
    by_retriever = GridView("retrievers", GRID_LABELS["retrievers"], "strategy")
    by_strategy = GridView("strategies", GRID_LABELS["strategies"], "strategies")
    effects: list[tuple[int, tuple[str, str], tuple[str, str]]] = []
    for i, r in enumerate(rows):
        if str(r.a) not in cells or str(r.b) not in cells:
            effects.append((i, str(r.a).rpartition("/")[::2], str(r.b).rpartition("/")[::2]))
            continue
        (sa, ra), (sb, rb) = cells[str(r.a)], cells[str(r.b)]
        if sa == sb:
            _place(by_retriever, sa, f"{ra} − {rb}", i)
        elif ra == rb:
            _place(by_strategy, f"{sa} − {sb}", ra, i)
    for i, (sa, ra), (sb, rb) in effects:  # the main effects: last row, last column
        if sa == sb == EVERY:
            _place(by_retriever, _ALL_STRATEGIES, f"{ra} − {rb}", i)
        elif ra == rb == EVERY:
            _place(by_strategy, f"{sa} − {sb}", _ALL_RETRIEVERS, i)
    return [v for v in (by_retriever, by_strategy) if v.rows]


def short_verdict(row: Any) -> str:
    """A grid cell's verdict: the better one's retriever (or strategy) name and
    ``better``, ``tie`` or ``identical``; the full verdict stays in the table."""
    if row.identical:
        return "identical"
    if row.winner is None:
        return "tie"
    same_strategy = str(row.a).rpartition("/")[0] == str(row.b).rpartition("/")[0]
    strategy, _, retriever = str(row.winner).rpartition("/")
    return verdict_text(retriever if same_strategy else strategy, "tie")

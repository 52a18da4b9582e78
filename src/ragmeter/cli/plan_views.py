"""``ragmeter plan``'s flags and tables: points, the planned family, the pairs'
table and its Markdown, CSV and JSON."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict

from ragmeter.cli import search_views as terminal
from ragmeter.cli.app import plural
from ragmeter.cli.layout import render
from ragmeter.comparison.formatting import shown_half_width, shown_interval
from ragmeter.defaults import DEFAULTS
from ragmeter.errors import InputError, did_you_mean
from ragmeter.scoring.metrics import is_share
from ragmeter.scoring.names import difference_scale
from ragmeter.stats.planning import Plan, undecided_first


def planned_pairs(
    systems: Sequence[str], baseline: str | None, pairs: str | None, family: str | None = None
) -> list[tuple[str, str]] | None:
    """The pairs --baseline, --pairs or a grid --family choose (None: every pair)."""
    from ragmeter.comparison.effects import pair_names
    from ragmeter.comparison.families import GRID_FAMILIES, grid_pairs
    from ragmeter.comparison.verdicts import parse_pairs
    from ragmeter.inputs.config import check_family, one_family

    if baseline and pairs:
        raise InputError("give --baseline or --pairs, not both")
    names = [str(s) for s in systems]
    if family is not None:  # given, even empty: the flag is named, not the config
        check_family(family, "--family")
    if family:
        one_family(family, baseline, pairs)
        if family in GRID_FAMILIES:
            return [(names[i], names[j]) for i, j in grid_pairs(names, family)]
        if family == "auto" and grid_family(names) is not None:
            return planned_pairs(names, None, None, "grid")
        return None
    given = parse_pairs(pairs) if pairs else None
    chosen = [baseline] if baseline else [x for p in given or () for x in p]
    known = pair_names(names, given)  # the systems, and a grid's averaged rows: */R, S/*
    for name in chosen:
        if name not in known:
            raise InputError(
                f"unknown system {name!r}{did_you_mean(name, known)}; choose one of {known}"
            )
    if baseline:
        return [(s, baseline) for s in names if s != baseline]
    return given


def effects_family_size(
    systems: Sequence[str], planned: list[tuple[str, str]] | None, family: str | None
) -> int | None:
    """The size of a main-effects family whose grid pairs are ``planned``: those pairs
    and the grid's main effects (None for any other family)."""
    from ragmeter.comparison.effects import MAIN_EFFECTS, main_effect_names

    if family != MAIN_EFFECTS or planned is None:
        return None
    return len(planned) + len(main_effect_names([str(s) for s in systems]))


def grid_family(systems: Sequence[str], label: str | None = None) -> str | None:
    """The grid family a run's rule names by its ``label`` (None: any grid family the
    systems allow, ``"grid"``), or None when the systems form no grid."""
    from ragmeter.comparison.families import grid_cells, kind_of

    if grid_cells([str(s) for s in systems]) is None:
        return None
    return "grid" if label is None else kind_of(label)


def pair_need_grid(found: Plan, shown: list, caption: str | None = None, narrow: bool = False):
    """The questions each pair needs, in the family and alone; ``narrow``: A over B."""
    from ragmeter.cli.layout import Grid

    share = is_share(found.metric)
    scale = difference_scale(found.metric)[0]
    family = f"in this table ({plural(found.family, 'pair')})"
    deffs = {p.deff for p in found.pairs if p.needed is not None}
    at = (
        "at design effect 1 (questions independent)"
        if deffs <= {1.0}
        else "at each pair's design effect (questions share documents)"
    )
    clustered = not deffs <= {1.0}
    head = ["A\n- B"] if narrow else ["A", "B"]
    numbers = [family, "alone", *(["design effect"] if clustered else [])]
    first = len(head)
    grid = Grid(
        f"Questions needed to separate the planned difference of "
        f"{found.difference * scale:g}{' points' if share else ''} (power {DEFAULTS.power:g}), "
        f"{at}",
        [*head, *numbers],
        right=set(range(first, first + len(numbers))),
        caption=caption,
        key="pairs",
        groups=None if narrow else [list(range(1, first + len(numbers)))],  # one row a pair
        labels=narrow,
    )
    for p in shown:
        if p.needed is None:
            cells = ["identical" if p.identical else "constant difference", ""]
        else:
            cells = [str(p.in_family), str(p.needed)]
            if p.separated:  # planned anyway, but the run's table has decided it
                cells[0] = f"separated ({cells[0]})"
        if clustered:
            cells.append(f"{p.deff:.2f}" if p.needed is not None else "")
        names = [f"{p.a}\n- {p.b}"] if narrow else [p.a, p.b]
        grid.rows.append([*names, *cells])
    return grid


def _observed(sizes: list) -> dict:
    """A system's interval at the questions it has: ``low``, ``high`` and which
    ``interval`` it is (exact for 0/1 scores where the tables show that one)."""
    if not sizes:
        return {"low": "", "high": "", "interval": "", "half_width": ""}
    low, high, which = shown_interval(sizes[0])
    return {"low": low, "high": high, "interval": which, "half_width": shown_half_width(sizes[0])}


def _shown_sizes(data: dict) -> dict:
    """``data`` (the plan as a dict) with each sample-size row's ``half_width`` the one
    the tables print (:func:`ragmeter.comparison.formatting.shown_half_width`: the exact
    interval's where it is shown) and ``interval`` naming which; the bootstrap's stays
    as ``bootstrap_half_width``."""
    for system in data.get("systems", []):
        for row in system.get("sizes", []):
            row["bootstrap_half_width"] = row["half_width"]
            row["half_width"] = shown_half_width(row)
            row["interval"] = shown_interval(row)[2]
    return data


def plan_text(found: Plan, chosen: str) -> str:
    """The plan as markdown (its two tables), csv (one row per system and pair) or
    json (every number)."""
    share = is_share(found.metric)
    target = (
        f"± {found.half_width * difference_scale(found.metric)[0]:g}{' points' if share else ''}"
    )
    systems = terminal.sizes_grid(found.systems, found.metric, target)
    pairs = pair_need_grid(found, found.pairs)
    records = [
        {
            "kind": "system",
            "a": s.system,
            "b": "",
            "questions": s.needed,
            "alone": "",
            **_observed(s.sizes),
        }
        for s in found.systems
    ] + [
        {
            "kind": "pair",
            "a": p.a,
            "b": p.b,
            "questions": p.in_family,
            "alone": p.needed,
            "design_effect": p.deff,
            "separated": p.separated or "",
        }
        for p in found.pairs
    ]
    data = _shown_sizes(asdict(found))
    return render([systems, pairs], chosen, records, data)


def most_needed(needs: list, limit: int | None) -> tuple[list, str]:
    """The pairs to print, those the run left undecided first (most questions needed
    first when some are left out), then those its table already separated
    (:func:`ragmeter.stats.planning.undecided_first`), and a line counting the rest when
    there are more than ``limit``."""
    if limit is None or len(needs) <= limit:
        return undecided_first(needs), ""
    ordered = undecided_first(needs, by_need=True)
    rest = ordered[limit:]
    counts = [n for p in rest if not p.separated and (n := p.in_family or p.needed)]
    done = sum(1 for p in rest if p.separated)
    each = (
        f"each needing at most {max(counts):,} questions (identical pairs and constant "
        f"differences among them)"
        if counts
        else "each identical or with a constant difference (no number of questions applies)"
        if not done
        else "none undecided that a number of questions applies to"
    )
    separated = f", and {done} the run's table already separated" if done else ""
    return ordered[:limit], (
        f"{len(rest)} more pairs not shown, {each}{separated}; --all prints every pair, "
        f"--baseline NAME or --pairs A:B,C:D plans only the comparisons you will make"
    )

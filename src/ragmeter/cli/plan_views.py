"""``ragmeter plan``'s flags and tables: points, the planned family, the pairs'
table and its Markdown, CSV and JSON."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict

from ragmeter.cli import search_views as terminal
from ragmeter.cli.app import plural, warn
from ragmeter.cli.layout import render
from ragmeter.errors import InputError
from ragmeter.planning import Plan


def points(value: float, flag: str) -> float:
    """A half-width or difference given in points, on the metric's own scale (4 -> 0.04).

    A value below 1 is read as the fraction earlier versions took (0.04 is 4 points),
    with a note; write points.
    """
    if 0 < value < 1:
        warn(
            f"{flag} {value:g} is read as a fraction ({value * 100:g} points); {flag} now "
            f"takes points, as check's --margin does: write {flag} {value * 100:g}"
        )
        return float(value)
    return value / 100.0


def planned_pairs(
    systems: Sequence[str], baseline: str | None, pairs: str | None
) -> list[tuple[str, str]] | None:
    """The pairs --baseline or --pairs choose (None: every pair)."""
    from ragmeter.verdicts import parse_pairs

    if baseline and pairs:
        raise InputError("give --baseline or --pairs, not both")
    names = [str(s) for s in systems]
    chosen = [baseline] if baseline else [x for p in parse_pairs(pairs) for x in p] if pairs else []
    for name in chosen:
        if name not in names:
            raise InputError(f"unknown system {name!r}; choose one of {names}")
    if baseline:
        return [(s, baseline) for s in names if s != baseline]
    return parse_pairs(pairs) if pairs else None


def pair_need_grid(found: Plan, shown: list, caption: str | None = None, narrow: bool = False):
    """The questions each pair needs, in the family and alone; ``narrow``: A over B."""
    from ragmeter.cli.layout import Grid

    share = terminal._is_share(found.metric)
    scale = 100 if share else 1
    family = f"in this table ({plural(found.family, 'pair')})"
    grid = Grid(
        f"Questions needed to separate a paired difference of "
        f"{found.difference * scale:g}{' points' if share else ''} (power 0.8)",
        ["A\n- B", family, "alone"] if narrow else ["A", "B", family, "alone"],
        right={1, 2} if narrow else {2, 3},
        caption=caption,
        key="pairs",
        groups=None if narrow else [[1, 2, 3]],  # a pair stays on one row: never split
        labels=narrow,
    )
    for p in shown:
        if p.needed is None:
            cells = ["identical" if p.identical else "constant difference", ""]
        else:
            cells = [str(p.in_family), str(p.needed)]
        names = [f"{p.a}\n- {p.b}"] if narrow else [p.a, p.b]
        grid.rows.append([*names, *cells])
    return grid


def plan_text(found: Plan, chosen: str) -> str:
    """The plan as markdown (its two tables), csv (one row per system and pair) or
    json (every number)."""
    share = terminal._is_share(found.metric)
    target = f"± {found.half_width * (100 if share else 1):g}{' points' if share else ''}"
    systems = terminal.sizes_grid(found.systems, found.metric, target)
    pairs = pair_need_grid(found, found.pairs)
    records = [
        {"kind": "system", "a": s.system, "b": "", "questions": s.needed, "alone": ""}
        for s in found.systems
    ] + [
        {"kind": "pair", "a": p.a, "b": p.b, "questions": p.in_family, "alone": p.needed}
        for p in found.pairs
    ]
    data = asdict(found)
    return render([systems, pairs], chosen, records, data)


def most_needed(needs: list, limit: int | None) -> tuple[list, str]:
    """The pairs to print (those needing the most questions first) and a line counting
    the rest, when there are more than ``limit``."""
    if limit is None or len(needs) <= limit:
        return needs, ""
    ordered = sorted(needs, key=lambda p: -(p.in_family or p.needed or 0))
    rest = ordered[limit:]
    counts = [n for p in rest if (n := p.in_family or p.needed)]
    each = (
        f"each needing at most {max(counts):,} questions (identical pairs and constant "
        f"differences among them)"
        if counts
        else "each identical or with a constant difference (no number of questions applies)"
    )
    return ordered[:limit], (
        f"{len(rest)} more pairs not shown, {each}; --all prints every pair, "
        f"--baseline NAME or --pairs A:B,C:D plans only the comparisons you will make"
    )

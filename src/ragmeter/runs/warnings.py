"""What a newcomer should be told about a run: ks capped on small corpora, strategies
that cut the corpus identically, systems that rank identically on every question,
questions nothing matched.

These are warnings, not errors: the run is still scored. Each is one line.
"""

from __future__ import annotations

from collections.abc import Sequence

from ragmeter.comparison.summary import unmatched_questions
from ragmeter.runs.search_run import SearchRun, SystemRun


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def capped_ks(run: SearchRun) -> dict[str, int]:
    """``{system: items}`` for every system scored with k capped at its item count."""
    return {s.name: s.k_cap for s in run.systems if s.k_cap is not None}


def _groups(keys: dict[str, object]) -> list[list[str]]:
    """Names whose keys are equal, in first-seen order; only groups of two or more."""
    by_key: dict[object, list[str]] = {}
    for name, key in keys.items():
        by_key.setdefault(key, []).append(name)
    return [names for names in by_key.values() if len(names) > 1]


def _ranking_key(system: SystemRun) -> tuple:
    return tuple(tuple((it.doc, it.start, it.end) for it in row) for row in system.items)


def identical_systems(systems: Sequence[SystemRun]) -> list[list[str]]:
    """Groups of systems that return the same items in the same order for every question."""
    return _groups({s.name: _ranking_key(s) for s in systems})


def run_warnings(run: SearchRun) -> list[str]:
    """One-line warnings about ``run`` (no rich markup; names are the user's own)."""
    out = []
    by_cap: dict[int, list[str]] = {}
    for name, cap in capped_ks(run).items():
        by_cap.setdefault(cap, []).append(name)
    for cap, names in by_cap.items():
        out.append(
            f"{', '.join(names)} {'makes' if len(names) == 1 else 'make'} only "
            f"{_plural(cap, 'item')}{' each' if len(names) > 1 else ''}: k above {cap} is "
            f"scored at {cap} (marked * in the tables)"
        )
    same_chunks = _groups(dict(run.chunk_keys))
    for names in same_chunks:
        out.append(f"strategies {', '.join(names)} make identical chunks of this corpus")
    strategy_of = {s.name: s.strategy.get("name") for s in run.systems}
    for names in identical_systems(run.systems):
        strategies = {strategy_of[n] for n in names}
        if len(strategies) > 1 and any(strategies <= set(g) for g in same_chunks):
            continue  # already said: the strategies' chunks are the same
        out.append(
            f"systems {', '.join(names)} rank identically on every question "
            f"(every comparison between them is a tie)"
        )
    out.extend(unmatched_lines(unmatched_questions(run.systems, getattr(run, "questions", ()))))
    return out


def unmatched_lines(unmatched: dict[str, tuple[str, ...]], shown: int = 10) -> list[str]:
    """One line per set of questions that systems matched nothing for
    (:func:`ragmeter.comparison.summary.unmatched_questions`), naming them."""
    by_ids: dict[tuple[str, ...], list[str]] = {}
    for system, ids in unmatched.items():
        by_ids.setdefault(tuple(ids), []).append(system)
    out = []
    for ids, systems in by_ids.items():
        listed = ", ".join(ids[:shown]) + (
            f" and {len(ids) - shown} more" if len(ids) > shown else ""
        )
        out.append(
            f"{_plural(len(ids), 'question')} matched nothing in {', '.join(systems)} (no item "
            f"returned scored above 0, so those items are in no meaningful order; the "
            f"question shares no term with the corpus?): {listed}"
        )
    return out

"""Which system of one run is which system of another.

A system's display name is its strategy's name, or ``strategy/retriever`` once a
config has more than one retriever: adding a retriever renames every system. Its
identity is what it is made of: the strategy and the retriever with their
settings, as ``meta.json`` records them under ``systems`` (:func:`system_identity`,
the one rule). The run history's trend, ``ragmeter check`` and
``--baseline-from-history`` find a system by its name first and, in a run that
lacks the name, by its identity (:func:`match_system`); ``--baseline-system``
names it in the baseline when a real rename also changed it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ragmeter.errors import InputError
from ragmeter.runs.meta import RunMeta

__all__ = ["match_system", "pair_systems", "system_identity"]

NOT_SETTINGS = frozenset(
    {
        "name",
        "library",
        "device",
        "batch_size",
        "max_seq_length",
        "max_length",
        "cache",
        "static_model",
        "recall_vs_exact",
    }
)
"""Keys of a strategy's or retriever's record that are not its settings: display
names, the machine and library versions, where caches live, and what an index
measured of itself (none of them is a setting of the system)."""


def _settings(obj: Any) -> Any:
    if isinstance(obj, Mapping):
        return {str(k): _settings(v) for k, v in obj.items() if k not in NOT_SETTINGS}
    if isinstance(obj, list | tuple):
        return [_settings(v) for v in obj]
    return obj


def system_identity(entry: Mapping[str, Any]) -> str | None:
    """The identity of one system of ``meta.json``'s ``systems`` list: its strategy's
    and its retriever's settings, names left out (``None`` when not recorded)."""
    strategy, retriever = entry.get("strategy"), entry.get("retriever")
    if not isinstance(strategy, Mapping) or not isinstance(retriever, Mapping):
        return None
    return json.dumps([_settings(strategy), _settings(retriever)], sort_keys=True)


def _parts(entry: Mapping[str, Any]) -> tuple[Any, Any]:
    """The strategy's and the retriever's names (what a display name is made of)."""
    s, r = entry.get("strategy"), entry.get("retriever")
    return (
        s.get("name") if isinstance(s, Mapping) else None,
        r.get("name") if isinstance(r, Mapping) else None,
    )


def _entries(meta: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    return RunMeta.from_json(meta).system_entries


def match_system(
    name: str, source: Mapping[str, Any], target: Mapping[str, Any], held: Sequence[str]
) -> str | None:
    """The system of the target run (``target`` its ``meta.json``, ``held`` its systems)
    that is system ``name`` of the source run: the same name when the target holds
    it, else the one target system with the same identity (of several, the one also
    made of the same-named strategy and retriever); ``None`` when there is none, or
    more than one."""
    same = matching_systems(name, source, target, held)
    return same[0] if len(same) == 1 else None


def matching_systems(
    name: str, source: Mapping[str, Any], target: Mapping[str, Any], held: Sequence[str]
) -> list[str]:
    """Every target system :func:`match_system` could take for ``name``: one is the
    match, several are ambiguous (a rename the settings alone cannot tell apart)."""
    if name in held:
        return [name]
    mine = _entries(source).get(name)
    key = None if mine is None else system_identity(mine)
    if key is None:
        return []
    theirs = _entries(target)
    same = [s for s in held if s in theirs and system_identity(theirs[s]) == key]
    if len(same) > 1:
        same = [s for s in same if _parts(theirs[s]) == _parts(mine)] or same
    return same


def pair_systems(
    system: str,
    baseline: tuple[Mapping[str, Any], Sequence[str], str],
    candidate: tuple[Mapping[str, Any], Sequence[str], str],
    baseline_system: str | None = None,
) -> tuple[str, str]:
    """``(name in the baseline, name in the candidate)`` of the system checked as
    ``system`` (``baseline_system``: its name in the baseline, for a rename). Each run
    is ``(meta, systems, where)``; ``system`` may be the name in either run, and the
    other run's system is found by :func:`match_system`."""
    (b_meta, b_held, b_where), (c_meta, c_held, c_where) = baseline, candidate
    if baseline_system is not None:
        for name, held, where, label in (
            (baseline_system, b_held, b_where, "baseline"),
            (system, c_held, c_where, "candidate"),
        ):
            if name not in held:
                raise InputError(f"{where}: no system {name!r} in the {label} run; it has {held}")
        return baseline_system, system
    if system in c_held:
        found = match_system(system, c_meta, b_meta, b_held)
        several = matching_systems(system, c_meta, b_meta, b_held)
        if found is None and len(several) > 1:
            raise InputError(
                f"{b_where}: system {system!r} is ambiguous in the baseline run: "
                f"{', '.join(several)} all have its strategy and retriever settings; give "
                f"--baseline-system NAME (its name in the baseline)"
            )
        if found is None:
            raise InputError(
                f"{b_where}: no system {system!r} in the baseline run, nor one with its "
                f"strategy and retriever settings; it has {list(b_held)}. For a renamed "
                f"system give --baseline-system NAME (its name in the baseline)"
            )
        return found, system
    if system in b_held:
        found = match_system(system, b_meta, c_meta, c_held)
        if found is None:
            raise InputError(
                f"{c_where}: no system {system!r} in the candidate run, nor one with the "
                f"baseline's {system!r} strategy and retriever settings; it has "
                f"{list(c_held)}. Give --system with the candidate's name and "
                f"--baseline-system {system}"
            )
        return system, found
    raise InputError(f"{b_where}: no system {system!r} in the baseline run; it has {list(b_held)}")

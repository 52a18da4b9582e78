"""A recorded run as the baseline of ``ragmeter check --baseline-from-history REF``.

:func:`resolve_ref` finds the run a reference names (a run id, a commit, ``latest``
or ``latest:BRANCH``), never the candidate's own record; :func:`materialise` writes
its kept files back as a results directory, which
:func:`ragmeter.history.gate.check_noninferior` reads like any other.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragmeter.errors import InputError
from ragmeter.files.io import write_folder
from ragmeter.history.ancestry import Ancestry
from ragmeter.history.store import HistoryStore, RunRecord, scores_digest_of
from ragmeter.history.systems import match_system
from ragmeter.runs.results import Results, as_results
from ragmeter.scoring import measurement

__all__ = [
    "RecordedBaseline",
    "candidate_name",
    "materialise",
    "recorded_baseline",
    "resolve_ref",
    "scores_digest",
]


def resolve_ref(
    store: HistoryStore,
    ref: str,
    *,
    system: str | None = None,
    metric: str | None = None,
    exclude: tuple[str, str] | None = None,
    like: Mapping[str, Any] | None = None,
    candidate: tuple[Mapping[str, Any], Sequence[str]] | None = None,
    baseline_system: str | None = None,
    ancestry: Ancestry | None = None,
) -> RunRecord:
    """The run ``ref`` names: ``N`` or ``#N`` (a run id), ``latest`` or ``latest:REF``
    (the newest run, in the history of ``REF``: :func:`_latest`), or a commit (its
    newest run; at least 4 hex digits of it; all digits: a run id or a commit, whichever the
    history holds, and an error naming both when it holds both).

    Only runs holding ``system`` (``baseline_system`` when given) and ``metric`` count;
    a run holds ``system`` under another name when one of its systems is the
    ``candidate``'s (its ``meta.json`` and systems) by
    :func:`ragmeter.history.systems.match_system`. ``exclude`` (results path, scores
    digest) is the candidate's: its newest such record, the candidate's own, is left
    out, and a run id naming it is refused. Of the runs ``latest`` or a commit names,
    the newest that measured what ``like`` (the candidate's ``measurement``) records
    is taken; when none did, the newest (which the gate then refuses, naming what
    differs)."""
    ref = ref.strip()
    every = store.runs()
    own = None
    if exclude is not None:
        own = next((r.id for r in reversed(every) if (r.results, r.scores_digest) == exclude), None)
    run_id = _run_id(ref, every)
    if run_id is not None:
        return _named_run(store, run_id, own, system, metric, candidate, baseline_system)
    runs = [
        r
        for r in every
        if r.id != own
        and (metric is None or metric in r.metrics)
        and _holds(store, r, system, candidate, baseline_system)
    ]
    want = baseline_system or system
    what = "" if want is None else f" holding system {want!r}"
    if ref == "latest" or ref.startswith("latest:"):
        found, where = _latest(runs, ref.partition(":")[2], ancestry or Ancestry())
    else:
        found = [r for r in runs if r.commit.startswith(ref.lower())]
        where = f" at commit {ref}"
    if like is not None:
        same = [
            r for r in found if not measurement.differences(r.measurement, like, metric or r.metric)
        ]
        found = same or found
    if not found:
        renamed = (
            "; for a system renamed with other settings give --baseline-system NAME"
            if system is not None and baseline_system is None
            else ""
        )
        raise InputError(
            f"{store.path}: no recorded run{what}{where} (other than the candidate's own); "
            f"`ragmeter history list` shows the runs{renamed}"
        )
    return found[-1]


def _latest(runs: list[RunRecord], ref: str, line: Ancestry) -> tuple[list[RunRecord], str]:
    """The runs ``latest:REF`` chooses from, and where they are, for a message.

    With git: the runs whose commit is in the history of the merge base of ``REF`` and
    the checked-out commit (a branch's gate takes its baseline where it left ``REF``,
    never from a branch beside it); a run whose commit git does not hold counts when it
    was recorded on a branch named ``REF``. Without git, or a ``REF`` it does not know:
    the runs recorded on a branch named ``REF``. No ``REF``: every run."""
    if not ref:
        return runs, ""
    tip, head = line.commit(ref), line.head()
    base = line.merge_base(tip, head) if tip is not None and head is not None else tip
    if base is None:
        return [r for r in runs if r.branch == ref], f" on branch {ref!r}"

    def held(r: RunRecord) -> bool:
        known = line.before(r.commit, base)
        return r.branch == ref if known is None else known

    return [r for r in runs if held(r)], f" in the history of {ref} (up to {base[:7]})"


def _named_run(
    store: HistoryStore,
    run_id: int,
    own: int | None,
    system: str | None,
    metric: str | None,
    candidate: tuple[Mapping[str, Any], Sequence[str]] | None,
    baseline_system: str | None,
) -> RunRecord:
    """The run a run id names, refused when it is the candidate's own record (``own``) or
    lacks the metric or the system."""
    run = store.get(run_id)
    if run.id == own:
        raise InputError(
            f"history run {run.id} is the candidate's own record ({run.results}, the same "
            f"scores): the check would compare the candidate with itself; give the run of "
            f"the baseline (`ragmeter history list`), a commit, latest or latest:BRANCH"
        )
    if metric is not None and metric not in run.metrics:
        raise InputError(
            f"history run {run.id} has no metric {metric!r}; it has {', '.join(run.metrics)}"
        )
    if not _holds(store, run, system, candidate, baseline_system):
        want = baseline_system or system
        raise InputError(
            f"history run {run.id} has no system {want!r}"
            + ("" if baseline_system else ", nor one with its strategy and retriever settings")
            + f"; it has {', '.join(run.systems)}"
            + ("" if baseline_system else ". For a renamed system give --baseline-system NAME")
        )
    return run


def candidate_name(
    store: HistoryStore, system: str, candidate: tuple[Mapping[str, Any], Sequence[str]]
) -> str:
    """The candidate's name of ``system``: itself when the candidate holds it, else the
    candidate's system that is the newest recorded run's ``system`` by its identity
    (``system`` as it was when none is)."""
    meta, held = candidate
    if system in held:
        return system
    for run in reversed(store.runs(system=system)):
        found = match_system(system, store.run_meta(run.id), meta, held)
        if found is not None:
            return found
    return system


def _run_id(ref: str, every: Sequence[RunRecord]) -> int | None:
    """The run id ``ref`` names, or ``None`` when it names a commit or ``latest``."""
    if ref.startswith("#") and ref[1:].isdigit():
        return int(ref[1:])
    if ref == "latest" or ref.startswith("latest:"):
        return None
    if not ref.isdigit():
        if len(ref) >= 4 and all(c in "0123456789abcdefABCDEF" for c in ref):
            return None
        raise InputError(
            f"history reference {ref!r}: give a run id (3 or #3), latest, latest:BRANCH "
            f"or a commit (at least 4 hex digits)"
        )
    if len(ref) < 4:
        return int(ref)
    commits = sorted({r.commit for r in every if r.commit.startswith(ref)})
    held = any(r.id == int(ref) for r in every)
    if not commits:
        if not held:
            raise InputError(
                f"history reference {ref!r}: no run {int(ref)} in the history and no recorded "
                f"commit starting {ref}; `ragmeter history list` shows the runs"
            )
        return int(ref)
    if held:
        raise InputError(
            f"history reference {ref!r} names both run {int(ref)} and commit "
            f"{commits[0][:12]}; give #{int(ref)} for the run, or more digits of the commit"
        )
    return None


def _holds(
    store: HistoryStore,
    run: RunRecord,
    system: str | None,
    candidate: tuple[Mapping[str, Any], Sequence[str]] | None,
    baseline_system: str | None,
) -> bool:
    """Whether ``run`` holds the system checked (by name, or by its identity)."""
    if baseline_system is not None:
        return baseline_system in run.systems
    if system is None or system in run.systems:
        return True
    if candidate is None or system not in candidate[1]:
        return False
    meta = store.run_meta(run.id)
    return match_system(system, candidate[0], meta, run.systems) is not None


def materialise(store: HistoryStore, run_id: int, folder: str | Path) -> Path:
    """Write run ``run_id``'s kept files as a results directory in ``folder`` (new or
    empty), which :class:`ragmeter.runs.results.Results` and ``ragmeter check`` read; through
    the one folder writer (:func:`ragmeter.files.io.write_folder`: atomic, recorded, no name
    that leads out of ``folder``)."""
    folder = Path(folder)
    if folder.exists() and any(folder.iterdir()):
        raise InputError(f"{folder}: not empty; give a new or empty folder for the run")
    files = store.files(run_id)
    if "scores.json" not in files:
        raise InputError(f"{store.path}: run {run_id} has no scores kept; record it again")
    return write_folder(folder, files, "run")


def scores_digest(results_dir: str | Path) -> str:
    """The digest a record keeps of a results directory's ``scores.json``."""
    return scores_digest_of((Path(results_dir) / "scores.json").read_bytes())


@dataclass(frozen=True)
class RecordedBaseline:
    """The baseline ``check --baseline-from-history`` compares a candidate with."""

    run: RunRecord  # the history record the reference named
    path: Path  # that record written back as a results directory
    system: str  # the system's name in the candidate (it may have had another name before)
    elsewhere: bool  # the record's commit is not in the checked-out commit's history


def recorded_baseline(
    store: HistoryStore,
    ref: str,
    candidate: Results | str | Path,
    folder: str | Path,
    *,
    system: str,
    metric: str | None = None,
    baseline_system: str | None = None,
    ancestry: Ancestry | None = None,
) -> RecordedBaseline:
    """The history run ``ref`` names for the run ``candidate`` (never the
    candidate's own record; the run that measured what the candidate did preferred),
    written back under the empty ``folder`` (:func:`materialise`). ``system`` may be a
    name the system had in earlier runs unless ``baseline_system`` names it there."""
    line = ancestry if ancestry is not None else Ancestry()
    res = as_results(candidate)
    own = (str(res.path.resolve()), scores_digest(res.path))
    if baseline_system is None:
        system = candidate_name(store, system, (res.meta, res.systems))
    run = resolve_ref(
        store,
        ref,
        system=system,
        metric=metric,
        exclude=own,
        like=res.meta.measurement,  # a RunMeta: {} for a run that did not record it
        candidate=(res.meta, res.systems),
        baseline_system=baseline_system,
        ancestry=line,
    )
    path = materialise(store, run.id, Path(folder) / f"run-{run.id}")
    head = line.head()
    elsewhere = head is not None and line.before(run.commit, head) is False
    return RecordedBaseline(run, path, system, elsewhere)

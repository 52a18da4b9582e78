"""A recorded run as the baseline of ``ragmeter check --baseline-from-history REF``.

:func:`resolve_ref` finds the run a reference names (a run id, a commit, ``latest``
or ``latest:BRANCH``); :func:`materialise` writes its kept files back as a results
directory, which :func:`ragmeter.gate.check_noninferior` reads like any other.
"""

from __future__ import annotations

from collections.abc import Mapping
from hashlib import blake2b
from pathlib import Path
from typing import Any

from ragmeter import measurement
from ragmeter.errors import InputError
from ragmeter.history import HistoryStore, RunRecord
from ragmeter.io import write_folder

__all__ = ["materialise", "resolve_ref", "scores_digest"]


def resolve_ref(
    store: HistoryStore,
    ref: str,
    *,
    system: str | None = None,
    metric: str | None = None,
    exclude: tuple[str, str] | None = None,
    like: Mapping[str, Any] | None = None,
) -> RunRecord:
    """The run ``ref`` names: ``N`` or ``#N`` (a run id), ``latest`` or
    ``latest:BRANCH`` (the newest run, on that branch), or a commit (its newest run;
    at least 4 hex digits of it). Only runs holding ``system`` and ``metric`` count;
    ``exclude`` (results path, scores digest) leaves out the newest such record: the
    candidate's own. Of the runs ``latest`` or a commit names, the newest that measured
    what ``like`` (the candidate's ``measurement``) records is taken; when none did,
    the newest (which the gate then refuses, naming what differs)."""
    ref = ref.strip()
    if ref.lstrip("#").isdigit():
        run = store.get(int(ref.lstrip("#")))
        for want, have, what in ((system, run.systems, "system"), (metric, run.metrics, "metric")):
            if want is not None and want not in have:
                raise InputError(
                    f"history run {run.id} has no {what} {want!r}; it has {', '.join(have)}"
                )
        return run
    runs = store.runs(system=system, metric=metric)
    if exclude is not None:
        own = [r for r in runs if (r.results, r.scores_digest) == exclude]
        if own:
            runs = [r for r in runs if r.id != own[-1].id]
    what = "" if system is None else f" holding system {system!r}"
    if ref == "latest" or ref.startswith("latest:"):
        branch = ref.partition(":")[2]
        found = [r for r in runs if not branch or r.branch == branch]
        where = f" on branch {branch!r}" if branch else ""
    elif len(ref) >= 4 and all(c in "0123456789abcdefABCDEF" for c in ref):
        found = [r for r in runs if r.commit.startswith(ref.lower())]
        where = f" at commit {ref}"
    else:
        raise InputError(
            f"history reference {ref!r}: give a run id (3 or #3), latest, latest:BRANCH "
            f"or a commit (at least 4 hex digits)"
        )
    if like is not None:
        same = [
            r for r in found if not measurement.differences(r.measurement, like, metric or r.metric)
        ]
        found = same or found
    if not found:
        raise InputError(
            f"{store.path}: no recorded run{what}{where} (other than the candidate's own); "
            f"`ragmeter history list` shows the runs"
        )
    return found[-1]


def materialise(store: HistoryStore, run_id: int, folder: str | Path) -> Path:
    """Write run ``run_id``'s kept files as a results directory in ``folder`` (new or
    empty), which :class:`ragmeter.results.Results` and ``ragmeter check`` read; through
    the one folder writer (:func:`ragmeter.io.write_folder`: atomic, recorded, no name
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
    data = (Path(results_dir) / "scores.json").read_bytes()
    return blake2b(data, digest_size=16).hexdigest()

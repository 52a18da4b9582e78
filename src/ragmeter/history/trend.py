"""The trend of one system's metric across recorded runs, with paired changes.

Each run shows the interval its own summary holds. Runs that measured the same
thing (:func:`ragmeter.scoring.measurement.differences` is empty and the questions are
the same) form a series; each run is compared with the run before it in its
series: the paired difference by question id, later - earlier, with its
interval and verdict from :func:`ragmeter.comparison.systems.compare_systems`, the rule
``ragmeter check`` uses (two runs of one system, never folded as identical;
seed, rounds and confidence of the earlier run). Where the measurement changes
from one run to the next the trend shows a break; runs of different series are
never compared.

A system is followed by its name and, across a run where it is named otherwise
(adding a retriever renames every system), by its strategy and retriever settings
(:func:`ragmeter.history.systems.match_system`); a point says when its name changed.

"Before" follows git: a run is compared only with runs whose commit is in its own
commit's history (:class:`ragmeter.history.ancestry.Ancestry`), so a branch's run is
never compared with a run of a branch beside it; a point says when its run is not in
the checked-out commit's history.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ragmeter import stats
from ragmeter.comparison.formatting import shown_interval
from ragmeter.comparison.summary import Summary
from ragmeter.comparison.systems import ComparisonPlan, compare_systems
from ragmeter.comparison.verdicts import Row, Rule
from ragmeter.errors import InputError
from ragmeter.files.safe_text import csv_text
from ragmeter.history.ancestry import Ancestry
from ragmeter.history.store import HistoryStore, RunRecord, damaged
from ragmeter.history.systems import match_system
from ragmeter.runs.meta import RunMeta
from ragmeter.scoring import measurement
from ragmeter.scoring.names import lower_is_better

__all__ = [
    "Break",
    "Change",
    "SavedScores",
    "SavedSummary",
    "Trend",
    "TrendPoint",
    "comparable",
    "follow",
    "trend",
]


@dataclass(frozen=True)
class Change:
    """The paired change from run ``earlier`` to run ``later`` (later - earlier)."""

    earlier: int
    later: int
    row: Row
    rule: Rule

    @property
    def direction(self) -> str:
        """``better``, ``worse`` or ``no change`` (who won, read from the later run)."""
        if self.row.winner == f"#{self.later}":
            return "better"
        if self.row.winner == f"#{self.earlier}":
            return "worse"
        return "no change"

    def to_dict(self) -> dict[str, Any]:
        d = self.row.difference
        return {
            "kind": "change",
            "earlier": self.earlier,
            "later": self.later,
            "difference": d.to_dict(),
            "p": self.row.p,
            "wins": self.row.wins,
            "ties": self.row.ties,
            "losses": self.row.losses,
            "verdict": self.row.verdict,
            "direction": self.direction,
            "interval": self.rule.interval,
        }


@dataclass(frozen=True)
class Break:
    """Runs ``earlier`` and ``later`` measured different things: not compared."""

    earlier: int
    later: int
    reasons: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "break",
            "earlier": self.earlier,
            "later": self.later,
            "reasons": list(self.reasons),
        }


@dataclass(frozen=True)
class TrendPoint:
    """One run on the trend: its estimate, its ``series`` (runs that measured the same
    thing share one), the ``change`` from the run before it in its series, and the
    ``gap``: a break when the run just before it measured something else. ``name`` is
    the system's name in this run; ``renamed_from`` its name in the run before, when
    that differs; ``other_branch``: the run is not in the checked-out commit's history
    (git says so)."""

    run: RunRecord
    estimate: stats.Estimate
    series: int
    change: Change | None = None
    gap: Break | None = None
    name: str = ""
    renamed_from: str | None = None
    other_branch: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "run": self.run.to_dict(),
            "label": self.run.label,
            "system": self.name,
            "renamed_from": self.renamed_from,
            "other_branch": self.other_branch,
            "estimate": self.estimate.to_dict(),
            "series": self.series,
            "change": None if self.change is None else self.change.to_dict(),
            "break": None if self.gap is None else self.gap.to_dict(),
        }


@dataclass(frozen=True)
class Trend:
    """``metric`` of ``system`` across runs, oldest first."""

    system: str
    metric: str
    points: list[TrendPoint]

    @property
    def changes(self) -> list[Change]:
        return [p.change for p in self.points if p.change is not None]

    @property
    def breaks(self) -> list[Break]:
        return [p.gap for p in self.points if p.gap is not None]

    def to_dict(self) -> dict[str, Any]:
        return {
            "system": self.system,
            "metric": self.metric,
            "points": [p.to_dict() for p in self.points],
        }


@dataclass(frozen=True)
class SavedSummary:
    """What the history reads of a recorded run's ``summary.json``: the seed, rounds,
    confidence and method its intervals were drawn with, and its estimates as saved
    (plain dicts, exported as they are). A key an earlier version did not write takes
    its default from :meth:`ragmeter.comparison.summary.Summary.from_json`, the one place
    that holds the defaults of an older summary."""

    seed: int
    rounds: int
    confidence: float
    method: str
    estimates: dict[str, dict[str, dict[str, Any]]]

    @classmethod
    def from_json(cls, data: dict[str, Any], where: str = "summary.json") -> SavedSummary:
        drawn = Summary.from_json({k: data[k] for k in _DRAWN if k in data}, where)
        estimates = data.get("estimates") or {}
        return cls(drawn.seed, drawn.rounds, drawn.confidence, drawn.method, estimates)

    def estimate(self, system: str, metric: str) -> dict[str, Any] | None:
        """One saved estimate (``None`` when the summary holds none)."""
        return self.estimates.get(system, {}).get(metric) or None


_DRAWN = ("seed", "rounds", "confidence", "method")


@dataclass(frozen=True)
class SavedScores:
    """A recorded run's ``scores.json``: the question ids and each system's per-question
    values by metric (both empty when the run's scores were not kept)."""

    questions: list[str]
    values: dict[str, dict[str, list[float]]]

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SavedScores:
        return cls([str(q) for q in data.get("questions", [])], data.get("values") or {})


class RecordedRun:
    """One run's kept scores and summary, read once."""

    def __init__(self, store: HistoryStore, record: RunRecord) -> None:
        self.record = record
        self.path = store.path
        self.scores = SavedScores.from_json(store.file_json(record.id, "scores.json"))
        self.summary = _saved_summary(store, record)
        self.ids = self.scores.questions

    def values(self, system: str, metric: str) -> np.ndarray:
        try:
            return np.asarray(self.scores.values[system][metric], dtype=np.float64)
        except (KeyError, TypeError, ValueError):
            raise damaged(
                self.path, f"run {self.record.id} has no kept scores of {system!r}, {metric}"
            ) from None

    @property
    def seed(self) -> int:
        return self.summary.seed

    @property
    def rounds(self) -> int:
        return self.summary.rounds

    @property
    def confidence(self) -> float:
        return self.summary.confidence

    def estimate(self, system: str, metric: str) -> stats.Estimate:
        """The interval the run's summary holds (computed as the run would, when absent)."""
        saved = self.summary.estimate(system, metric)
        if saved:
            return stats.Estimate.from_dict(saved)
        return stats.bootstrap(
            self.values(system, metric),
            self.rounds,
            self.seed,
            self.summary.method,
            self.confidence,
        )  # type: ignore[arg-type]


def comparable(
    a: RunRecord, b: RunRecord, metric: str, ids_a: Sequence[str] = (), ids_b=()
) -> list[str]:
    """Why runs ``a`` and ``b`` cannot be compared on ``metric`` (``[]``: they can)."""
    reasons = measurement.differences(a.measurement, b.measurement, metric)
    if not reasons and (sorted(ids_a) != sorted(ids_b) or len(set(ids_a)) != len(ids_a)):
        reasons = ["the questions (their ids)"]
    return reasons


def _change(before: RecordedRun, after: RecordedRun, names: tuple[str, str], metric: str) -> Change:
    """``after`` - ``before``; ``names``: the system's name in each."""
    earlier, later = before.record.id, after.record.id
    order = {q: i for i, q in enumerate(after.ids)}
    y = before.values(names[0], metric)
    x = after.values(names[1], metric)[[order[q] for q in before.ids]]
    names = [f"#{later}", f"#{earlier}"]
    plan = ComparisonPlan(
        metric, before.seed, before.rounds, before.confidence, pairs=((names[0], names[1]),)
    )
    # two runs of one system: never folded as "identical", however alike
    table = compare_systems({metric: np.stack([x, y])}, names, plan, fold_identical=False)
    return Change(earlier, later, table.rows[0], table.rule)


def follow(
    store: HistoryStore, runs: Sequence[RunRecord], system: str
) -> list[tuple[RunRecord, str]]:
    """The ``runs`` holding ``system``, each with the system's name in it, oldest first.

    From the newest run that names it ``system``, back and forward through ``runs``:
    a run holds it under the name the run next to it (nearer that one) used, else
    under the name :func:`ragmeter.history.systems.match_system` finds by identity.
    """
    runs = list(runs)
    anchor = next((i for i in range(len(runs) - 1, -1, -1) if system in runs[i].systems), None)
    if anchor is None:
        return []
    names = {anchor: system}
    metas: dict[int, RunMeta] = {}

    def meta(i: int) -> RunMeta:
        if i not in metas:
            metas[i] = store.run_meta(runs[i].id)
        return metas[i]

    for step in (-1, 1):
        ref, name, i = anchor, system, anchor + step
        while 0 <= i < len(runs):
            held = runs[i].systems
            found = name if name in held else match_system(name, meta(ref), meta(i), held)
            if found is not None:
                names[i], ref, name = found, i, found
            i += step
    return [(runs[i], names[i]) for i in sorted(names)]


def trend(
    store: HistoryStore,
    system: str,
    metric: str | None = None,
    *,
    branch: str | None = None,
    runs: Sequence[RunRecord] | None = None,
    ancestry: Ancestry | None = None,
    last: int | None = None,
) -> Trend:
    """``metric`` (default: the newest run's) of ``system`` across the recorded runs
    holding both (on ``branch`` when given, or the ``runs`` given), with the paired
    change or the break between each run and the one before it in its commit's history
    (``ancestry``, default: git in the current folder; a run of another branch is never
    the one before it). A point says when its run is not in the checked-out commit's
    history. ``last``: only the newest ``last`` runs holding the system.

    The one way in for every view of a system across runs (``history trend``, the
    report's history section): the runs that hold it are :func:`follow`'s, by its name
    and across a rename by its identity."""
    if runs is None:
        named, metric = _held(store, system, metric, branch)
    elif metric is None:
        raise InputError("give the metric of the trend")
    else:
        named = follow(store, runs, system)
    if last is not None:
        named = named[-last:] if last > 0 else []
    if lower_is_better(metric):
        raise InputError(
            f"{metric} is a cost (lower is better), not a score a verdict reads as better or "
            f"worse; follow a score such as recall@5 (`ragmeter history export` lists {metric})"
        )
    line = ancestry if ancestry is not None else Ancestry()
    head = line.head()
    points: list[TrendPoint] = []
    prior: list[tuple[int, RecordedRun, str]] = []  # (series, run, name), newest first
    for record, name in named:
        now = RecordedRun(store, record)
        point = _point(prior, now, name, metric, line)
        if head is not None and line.before(record.commit, head) is False:
            point = replace(point, other_branch=True)
        points.append(point)
        prior.insert(0, (point.series, now, name))
    return Trend(system, metric, points)


def _held(
    store: HistoryStore, system: str, metric: str | None, branch: str | None
) -> tuple[list[tuple[RunRecord, str]], str]:
    """The recorded runs holding ``system`` (by name or identity) and the metric (default:
    the newest run's), each with the system's name in it; the metric."""
    held = follow(store, store.runs(branch=branch), system)
    if not held:
        known = sorted({s for r in store.runs(branch=branch) for s in r.systems})
        raise InputError(
            f"{store.path}: no recorded run holds system {system!r}"
            + (f" on branch {branch!r}" if branch is not None else "")
            + (f"; the runs hold {', '.join(known[:12])}" if known else "; no run recorded")
        )
    metric = metric or held[-1][0].metric
    named = [(r, n) for r, n in held if metric in r.metrics]
    if not named:
        raise InputError(
            f"{store.path}: no recorded run of system {system!r} has metric {metric!r}; "
            f"they have {', '.join(held[-1][0].metrics)}"
        )
    return named, metric


def _point(
    prior: list[tuple[int, RecordedRun, str]],
    now: RecordedRun,
    name: str,
    metric: str,
    line: Ancestry,
) -> TrendPoint:
    """The trend's point of run ``now``: compared with the newest earlier run in its
    commit's history (or of unknown history) that measured the same thing; a break when
    the newest one there measured something else."""
    record = now.record
    # newest first, asked of git only as far as needed (one question in a straight history)
    mine = (p for p in prior if line.before(p[1].record.commit, record.commit) is not False)
    newest = next(mine, None)

    def same(r: RecordedRun) -> bool:
        return not comparable(r.record, record, metric, r.ids, now.ids)

    gap = change = None
    if newest is not None and not same(newest[1]):
        why = comparable(newest[1].record, record, metric, newest[1].ids, now.ids)
        gap = Break(newest[1].record.id, record.id, tuple(why))
    if newest is not None and gap is None:
        before = newest
    else:
        before = next((p for p in mine if same(p[1])), None)
    if before is not None:
        series = before[0]
        change = _change(before[1], now, (before[2], name), metric)
    else:  # the series of its measurement on another branch, or a new one
        new = 1 + max((s for s, _, _ in prior), default=-1)
        series = next((s for s, r, _ in prior if same(r)), new)
    renamed = newest[2] if newest is not None and newest[2] != name else None
    estimate = now.estimate(name, metric)
    return TrendPoint(record, estimate, series, change, gap, name, renamed)


def export_rows(
    records: Sequence[RunRecord], store: HistoryStore, *, scores: bool = False
) -> list[dict[str, Any]]:
    """One row per run, system and metric: the run's fields and its estimate (for CSV).

    ``low`` and ``high`` are the interval the run's tables showed: the exact binomial
    one where there is one (``interval`` is ``exact``), else the bootstrap's
    (:func:`ragmeter.comparison.formatting.shown_interval`). With ``scores``, each estimate row is
    followed by one row per question with its ``question`` id and ``score``.
    """
    out = []
    for r in records:
        summary = _saved_summary(store, r)
        kept = SavedScores.from_json(store.file_json(r.id, "scores.json") if scores else {})
        questions, values = kept.questions, kept.values
        for system in r.systems:
            for metric in r.metrics:
                e = summary.estimate(system, metric) or {}
                low, high, which = shown_interval(e) if e else ("", "", "")
                row = {
                    "run": r.id,
                    "uid": r.uid,
                    "recorded_at": r.recorded_at,
                    "command": r.command,
                    "commit": r.commit,
                    "branch": r.branch,
                    "dirty": "" if r.dirty is None else str(r.dirty).lower(),
                    "results": r.results,
                    "system": system,
                    "metric": metric,
                    "mean": e.get("mean", ""),
                    "low": low,
                    "high": high,
                    "interval": which,
                    "questions": r.questions,
                    "confidence": e.get("confidence", ""),
                    "corpus": r.measurement.get("corpus", ""),
                    "testset": r.measurement.get("testset", ""),
                }
                out.append(row)
                if not scores:
                    continue
                blank = dict.fromkeys(("mean", "low", "high", "interval", "confidence"), "")
                for q, v in zip(questions, values.get(system, {}).get(metric) or [], strict=False):
                    out.append({**row, **blank, "question": q, "score": v})
    return out


def export_csv(records: Sequence[RunRecord], store: HistoryStore, *, scores: bool = False) -> str:
    """:func:`export_rows` as CSV text (``question`` and ``score`` columns with
    ``scores``), written as every CSV of ragmeter is (:func:`ragmeter.files.safe_text.csv_text`)."""
    rows = export_rows(records, store, scores=scores)
    columns = list(rows[0]) if rows else ["run"]
    if scores:
        columns += [c for c in ("question", "score") if c not in columns]
    return csv_text(columns, rows)


def export_json(
    records: Sequence[RunRecord], store: HistoryStore, *, scores: bool = False
) -> list[dict[str, Any]]:
    """Each run's fields with its summary's estimates (and per-question scores)."""
    out = []
    for r in records:
        entry = {**r.to_dict(), "estimates": _saved_summary(store, r).estimates}
        if scores:
            kept = SavedScores.from_json(store.file_json(r.id, "scores.json"))
            entry["scores"] = {"questions": kept.questions, "values": kept.values}
        out.append(_finite(entry))
    return out


def _saved_summary(store: HistoryStore, r: RunRecord) -> SavedSummary:
    where = f"{store.path}: run {r.id}'s summary.json"
    return SavedSummary.from_json(store.file_json(r.id, "summary.json"), where)


def _finite(obj: Any) -> Any:
    """``obj`` with NaN and infinities as None, so the export is strict JSON."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_finite(v) for v in obj]
    return obj

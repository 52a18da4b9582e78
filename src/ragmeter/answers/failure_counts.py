"""Answer failures counted per system, with intervals; judge leniency; ``failures.json``.

:func:`failure_report` runs the checks of :mod:`ragmeter.answers.failures` on every
answer of a results directory and counts each failure type per system, with a
seeded bootstrap interval of its rate (:func:`ragmeter.stats.bootstrap_many`, the
seed and rounds of the run's summary unless given) and paired comparisons of the
share of answers with any failure under the run's own rule (the one comparison,
:func:`ragmeter.comparison.systems.compare_systems`, over every pair). It also says
how often each judge passed an answer whose number changed or was left out
(:class:`Leniency`) and, where answers were graded by hand, how often each check
was right (:class:`Precision`). :func:`write_failures` saves it all as
``answers/failures.json``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ragmeter import stats
from ragmeter.answers.analysis import accuracy_judge, search_hits
from ragmeter.answers.failures import (
    DEFAULT,
    FAILURES,
    AnswerCheck,
    CheckSettings,
    check_answer,
)
from ragmeter.answers.store import (
    AnswerSet,
    Key,
    answers_dir,
    graded_answers,
    load_answers,
)
from ragmeter.comparison.systems import ComparisonPlan, compare_systems
from ragmeter.comparison.verdicts import Verdicts
from ragmeter.errors import InputError
from ragmeter.files.io import dumps
from ragmeter.files.outputs import results_lock, write_output
from ragmeter.runs.results import Results, results_path
from ragmeter.scoring.names import metric_label

__all__ = [
    "ANY",
    "FailureReport",
    "Leniency",
    "Precision",
    "SystemFailures",
    "check_answers",
    "failure_report",
    "leniency_flags",
    "load_answers",
    "write_failures",
]

ANY = "any"
"""An answer with at least one failure."""


@dataclass(frozen=True)
class SystemFailures:
    """One system's answers: how many show each failure, and its rate with an interval.

    ``n`` counts the answers the reader gave (a call that failed gave none);
    ``rates[kind]`` is the share of those ``n`` with that failure (``ANY``: at least one).
    """

    system: str
    n: int
    counts: dict[str, int]
    rates: dict[str, stats.Estimate]


@dataclass(frozen=True)
class Leniency:
    """How often a judge passed an answer whose number changed or was left out.

    ``flagged`` counts such answers the judge scored, ``passed`` lists those it graded
    correct (the leniency flags), ``rate`` is ``len(passed) / flagged`` with its interval.
    """

    judge: str
    flagged: int
    passed: list[str]
    rate: stats.Estimate | None


@dataclass(frozen=True)
class Precision:
    """A check against the hand grades: of the flagged answers graded by hand, how many
    the hand grade did not mark correct (``confirmed``); None when none was."""

    failure: str
    hand_graded: int
    confirmed: int

    @property
    def precision(self) -> float | None:
        return self.confirmed / self.hand_graded if self.hand_graded else None


@dataclass(frozen=True)
class FailureReport:
    """Every answer's checks, the counts per system and the judge checks."""

    reader: str | None
    judge: str | None
    k: int
    seed: int
    rounds: int
    confidence: float
    settings: CheckSettings
    checks: list[AnswerCheck]
    systems: list[SystemFailures]
    comparisons: Verdicts | None
    leniency: list[Leniency]
    precision: list[Precision]

    def failing(self, kind: str | None = None) -> list[AnswerCheck]:
        """Answers with ``kind`` of failure (any when None), in results order."""
        return [c for c in self.checks if (c.failures if kind is None else kind in c.failures)]

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready form written to ``failures.json``."""
        return {
            "reader": self.reader,
            "judge": self.judge,
            "k": self.k,
            "seed": self.seed,
            "rounds": self.rounds,
            "confidence": self.confidence,
            "method": "percentile bootstrap over answers (mulberry32)",
            "failures": {f: metric_label(f) for f in FAILURES},
            "settings": asdict(self.settings),
            "systems": [
                {
                    "system": s.system,
                    "n": s.n,
                    "counts": s.counts,
                    "rates": {k: e.to_dict() for k, e in s.rates.items()},
                }
                for s in self.systems
            ],
            "comparisons": (
                {"of": ANY, **self.comparisons.to_dict()} if self.comparisons else None
            ),
            "leniency": [
                {
                    "judge": j.judge,
                    "flagged": j.flagged,
                    "passed": j.passed,
                    "rate": j.rate.to_dict() if j.rate else None,
                }
                for j in self.leniency
            ],
            "precision": [{**asdict(p), "precision": p.precision} for p in self.precision],
            "answers": [asdict(c) for c in self.checks if c.failures or c.number_flag],
        }


def _key_str(key: Key) -> str:
    return f"{key[0]}/{key[1]}"


def check_answers(
    aset: AnswerSet, judge: str | None, settings: CheckSettings = DEFAULT
) -> list[AnswerCheck]:
    """The checks of every answer the reader gave, in results order; ``judge``'s grade
    decides "correct without the passage"."""
    res = aset.results
    questions = {q.id: q for q in res.questions}
    hits = {s: search_hits(res, s, aset.k) for s in res.systems}
    grades = aset.grades.get(judge, {}) if judge else {}
    out = []
    for key in aset.ordered_keys():
        a = aset.answers[key]
        if not a.ok:
            continue
        s, q = key
        g = grades.get(key)
        out.append(
            check_answer(
                s,
                q,
                a.answer,
                [span.text for span in questions[q].answers],
                [item.text or "" for item in res.runs[s][q][: aset.k]],
                questions[q].text,
                hits[s][q],
                g.grade if g is not None else None,
                settings,
            )
        )
    return out


def _leniency(
    aset: AnswerSet, checks: Sequence[AnswerCheck], rounds: int, seed: int, conf: float
) -> list[Leniency]:
    flagged = [c.key for c in checks if c.number_flag]
    out = []
    for judge in aset.judges:
        labels = aset.labels(judge, flagged)
        scored = [k for k in flagged if labels.get(k, "unscored") != "unscored"]
        passed = [k for k in scored if labels[k] == "correct"]
        rate = None
        if scored:
            arr = np.array([labels[k] == "correct" for k in scored], dtype=np.float64)
            rate = stats.bootstrap(arr, rounds=rounds, seed=seed, confidence=conf)
        out.append(Leniency(judge, len(scored), [_key_str(k) for k in passed], rate))
    return out


def leniency_flags(aset: AnswerSet, settings: CheckSettings = DEFAULT) -> set[Key]:
    """Answers some judge graded correct while their number changed or was left out."""
    checks = check_answers(aset, None, settings)
    flagged = [c.key for c in checks if c.number_flag]
    return {k for j in aset.judges for k, g in aset.labels(j, flagged).items() if g == "correct"}


def _precision(aset: AnswerSet, checks: Sequence[AnswerCheck]) -> list[Precision]:
    if not aset.hand:
        return []
    out = []
    for kind in FAILURES:
        graded = [c.key for c in checks if kind in c.failures and c.key in aset.hand]
        confirmed = sum(1 for k in graded if aset.hand[k].hand != "correct")
        out.append(Precision(kind, len(graded), confirmed))
    return out


def _per_system(
    checks: Sequence[AnswerCheck], systems: Sequence[str], rounds: int, seed: int, conf: float
) -> tuple[list[SystemFailures], dict[str, dict[str, float]]]:
    rows, any_by_q = [], {}
    kinds = (*FAILURES, ANY)
    for system in systems:
        mine = [c for c in checks if c.system == system]
        if not mine:
            continue
        matrix = np.array(
            [[float(k in c.failures) for c in mine] for k in FAILURES]
            + [[float(bool(c.failures)) for c in mine]],
            dtype=np.float64,
        )
        estimates = stats.bootstrap_many(matrix, rounds=rounds, seed=seed, confidence=conf)
        counts = {k: int(row.sum()) for k, row in zip(kinds, matrix, strict=True)}
        rows.append(
            SystemFailures(system, len(mine), counts, dict(zip(kinds, estimates, strict=True)))
        )
        any_by_q[system] = {c.question: float(bool(c.failures)) for c in mine}
    return rows, any_by_q


def _comparisons(
    any_by_q: dict[str, dict[str, float]], rounds: int, seed: int, conf: float, adjust: str
) -> Verdicts | None:
    """Every pair of systems on the share of answers with any failure, under ``adjust``."""
    names = list(any_by_q)
    if len(names) < 2:
        return None
    common = [q for q in any_by_q[names[0]] if all(q in any_by_q[s] for s in names[1:])]
    if len(common) < 2:
        return None
    matrix = np.array([[any_by_q[s][q] for q in common] for s in names], dtype=np.float64)
    plan = ComparisonPlan(ANY, seed, rounds, conf, adjust)
    return compare_systems({ANY: matrix}, names, plan)


def failure_report(
    results: Results | str | Path | AnswerSet,
    judge: str | None = None,
    *,
    seed: int | None = None,
    rounds: int | None = None,
    settings: CheckSettings = DEFAULT,
) -> FailureReport:
    """Run every check on every answer and count the failures per system.

    ``judge`` gives the grade that "correct without the passage" reads (default: the
    accuracy judge, see :func:`ragmeter.answers.analysis.accuracy_judge`). Intervals use
    ``seed`` and ``rounds``, by default those of the run's summary.
    """
    aset = graded_answers(results)
    if aset is None:
        raise InputError(f"{results}: no answers to check; run `ragmeter answer` first")
    res = aset.results
    seed = res.summary.seed if seed is None else seed
    rounds = res.summary.rounds if rounds is None else rounds
    conf = res.summary.confidence
    chosen = accuracy_judge(aset, judge)
    checks = check_answers(aset, chosen, settings)
    systems, any_by_q = _per_system(checks, res.systems, rounds, seed, conf)
    return FailureReport(
        reader=aset.reader,
        judge=chosen,
        k=aset.k,
        seed=seed,
        rounds=rounds,
        confidence=conf,
        settings=settings,
        checks=checks,
        systems=systems,
        comparisons=_comparisons(any_by_q, rounds, seed, conf, res.comparison_plan.adjust),
        leniency=_leniency(aset, checks, rounds, seed, conf),
        precision=_precision(aset, checks),
    )


def write_failures(report: FailureReport, results: Results | str | Path) -> Path:
    """Write ``answers/failures.json`` atomically, under the results lock, over
    nothing or over the ``failures.json`` ragmeter wrote there (never a file of
    the user's at that name: that is an :class:`InputError`)."""
    base = results_path(results)
    path = answers_dir(base) / "failures.json"
    with results_lock(base):
        write_output(path, dumps(report.to_dict()), "failure count", flag=None)
    return path

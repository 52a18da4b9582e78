"""What the grades say: accuracy with intervals, search hit x answer grade, judge checks.

The pure functions (:func:`accuracy`, :func:`cross_table`, :func:`compare_judges`,
:func:`check_against_hand`) work on plain grade mappings; :func:`answer_report`,
:func:`judge_pairs` and :func:`hand_checks` read them from a results directory.
Intervals use the seed and rounds of the results' own summary unless given.

Judge agreement and hand checks are computed in :mod:`ragmeter.answers.judges` and
re-exported here; :func:`answer_figures` bundles every answer number for the terminal
and the report.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from ragmeter import stats
from ragmeter.answers.flips import rerun_count, rerun_scores
from ragmeter.answers.judges import (
    HandCheck,
    JudgePair,
    accuracy_judge,
    check_against_hand,
    compare_judges,
    hand_checks,
    interval_settings,
    judge_pairs,
    run_confidence,
)
from ragmeter.answers.store import (
    GRADES,
    UNSCORED,
    AnswerSet,
    answers_or_refuse,
    graded_answers,
    hand_stamp,
)
from ragmeter.defaults import DEFAULTS
from ragmeter.errors import InputError
from ragmeter.runs.meta import RunMeta
from ragmeter.runs.results import Results
from ragmeter.scoring.names import passing_grades
from ragmeter.stats import ppi as ppi_math
from ragmeter.stats.reruns import rerun_accuracy

__all__ = [
    "CORRECTED_INTERVALS",
    "AnswerFigures",
    "AnswerReport",
    "Corrected",
    "CrossTable",
    "HandCheck",
    "JudgePair",
    "SystemAnswers",
    "accuracy",
    "accuracy_judge",
    "answer_figures",
    "answer_report",
    "check_against_hand",
    "compare_judges",
    "corrected_accuracy",
    "corrected_by_judge",
    "cross_table",
    "hand_checks",
    "judge_pairs",
    "ppi_accuracy",
    "search_hits",
]

COLUMNS = (*GRADES, UNSCORED)
# --- accuracy --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Accuracy:
    """Share correct, and share correct or partial, over every answer.

    An ``unscored`` answer (the judge's reply could not be read, or was
    ambiguous) counts as not correct: leaving it out would raise the score, and
    an answer that talks the judge out of a readable grade would gain by it.
    ``unscored`` says how many there are; ``correct_if_unscored`` is the share
    correct had they all been correct (the most they could add).
    """

    correct: stats.Estimate | None
    correct_or_partial: stats.Estimate | None
    counts: dict[str, int]
    scored: int
    unscored: int
    correct_if_unscored: stats.Estimate | None = None

    def share(self, measure: str) -> stats.Estimate | None:
        """The share on an answer measure of the metric table (``correct``, ``correct or
        partial``: :func:`ragmeter.scoring.names.answer_measures`)."""
        return {"correct": self.correct, "correct or partial": self.correct_or_partial}[measure]


ACCURACY_BASIS = "Shares over every answer, an unscored one counted as not correct"
"""What :func:`accuracy`'s shares are over, as the tables under them say it."""


def accuracy(
    grades: Iterable[str],
    rounds: int = DEFAULTS.rounds,
    seed: int = DEFAULTS.seed,
    confidence: float = DEFAULTS.confidence,
) -> Accuracy:
    """Bootstrap intervals of the share correct and correct-or-partial.

    ``grades`` are correct / partial / wrong / unscored; unscored ones count as
    not correct in both means, and in ``unscored``.
    """
    labels = list(grades)
    bad = sorted({g for g in labels if g not in COLUMNS})
    if bad:
        raise InputError(f"unknown grades {bad}; use one of {', '.join(COLUMNS)}")
    counts = {c: labels.count(c) for c in COLUMNS}
    n_scored = len(labels) - counts[UNSCORED]
    if not labels:
        return Accuracy(None, None, counts, 0, 0)
    correct = np.array([g in passing_grades("correct") for g in labels], dtype=np.float64)
    passes = passing_grades("correct or partial")
    either = np.array([g in passes for g in labels], dtype=np.float64)
    upper = None
    if counts[UNSCORED]:
        best = np.array([g in ("correct", UNSCORED) for g in labels], dtype=np.float64)
        upper = stats.bootstrap(best, rounds=rounds, seed=seed, confidence=confidence)
    return Accuracy(
        stats.bootstrap(correct, rounds=rounds, seed=seed, confidence=confidence),
        stats.bootstrap(either, rounds=rounds, seed=seed, confidence=confidence),
        counts,
        n_scored,
        counts[UNSCORED],
        upper,
    )


# --- judge-corrected accuracy (prediction-powered inference) ----------------------------

MIN_HAND = 5  # hand grades needed before a corrected accuracy is shown

CORRECTED_INTERVALS = "judge-corrected: normal intervals (no draws), widened for few hand grades"
"""How :func:`ppi_accuracy`'s intervals are made, as the footers under them say it."""


def ppi_accuracy(
    judge_all: Sequence[float],
    judge_hand: Sequence[float],
    hand: Sequence[float],
    rounds: int = DEFAULTS.rounds,
    seed: int = DEFAULTS.seed,
    confidence: float = DEFAULTS.confidence,
    weight: str | float = "tuned",
) -> stats.Estimate:
    """Accuracy corrected for the judge's errors: prediction-powered inference.

    ``judge_all`` is the judge's 0/1 "correct" over the N answers not graded by hand;
    ``judge_hand`` and ``hand`` the judge's and the hand grade over the n hand-graded ones
    (a random sample of the answers; the two samples are disjoint, so their parts are
    independent, as in the papers and ``ppi_py``). The estimate is the judge's accuracy
    plus the rectifier, the mean of ``hand - judge`` on the hand-graded ones:
    ``mean(judge_all) + mean(hand - judge_hand)``. With a rectifier weight ``lam``
    (``weight``: ``"tuned"``, the PPI++ weight of :func:`ragmeter.stats.ppi.tuned_weight`,
    the default; ``"plain"``, 1; or a number in [0, 1]) it is ``lam * mean(judge_all) +
    mean(hand - lam * judge_hand)``; the weight is estimated once, on all the data.

    Its interval is the rule of the judge-corrected paired verdicts for one system
    (:func:`ragmeter.stats.ppi.ppi_interval` with ``adjusted`` and ``widen``): normal,
    on the variance :func:`ragmeter.stats.ppi.joint_ppi` gives the system (the
    rectifier's with a quarter answer per hand x judge cell), z widened for n hand
    grades; kept within [0, 1]. It needs no draws: the estimate records ``n = N`` and
    the seed and rounds of the run's other intervals, so every interval beside it
    still says how it was made (``method`` "ppi-normal").
    """
    j_all = np.asarray(judge_all, dtype=np.float64)
    j_hand = np.asarray(judge_hand, dtype=np.float64)
    h = np.asarray(hand, dtype=np.float64)
    if j_all.ndim != 1 or j_all.size == 0:
        raise InputError("judge_all must be a non-empty list of 0/1 grades")
    if j_hand.shape != h.shape or j_hand.ndim != 1 or h.size == 0:
        raise InputError("judge_hand and hand must be paired, non-empty lists of 0/1 grades")
    stats.check_common(rounds, seed, "percentile", confidence)
    lam = ppi_math.weight_of(weight, h, j_hand, j_all)
    low, high = ppi_math.ppi_interval(h, j_hand, j_all, lam, confidence, adjusted=True, widen=True)
    return stats.Estimate(
        mean=ppi_math.ppi_mean(h, j_hand, j_all, lam),
        low=max(0.0, low),
        high=min(1.0, high),
        n=j_all.size,
        rounds=rounds,
        seed=stats.seed_record(seed),
        method="ppi-normal",
        rng=stats.rng_name(seed),
        confidence=confidence,
    )


SAVING_BOUND = 2.0
"""Dorner, Nastl and Hardt (ICLR 2025): when the judge is no better than the system it
grades, no correction of its grades is worth more than twice the hand grades."""


@dataclass(frozen=True)
class Corrected:
    """A judge's accuracy beside the same accuracy corrected by the hand grades.

    ``raw`` is the share the judge marked correct over its ``n`` scored answers;
    ``hand_only`` the share correct by hand over the ``n_hand`` hand-graded ones
    (answers both graded); ``corrected`` the prediction-powered estimate from both
    (see :func:`ppi_accuracy`); ``rectifier`` the mean of hand - judge on the sample.
    ``system`` is None for all systems together.

    ``weight`` is the rectifier weight used and ``weight_rule`` how it was chosen
    (``tuned``: PPI++, ``plain``: 1). ``effective_hand`` is the number of hand grades
    alone that would give the corrected estimate's asymptotic variance
    (:func:`ragmeter.stats.ppi.effective_hand`); ``agreement`` the share of the
    hand-graded answers where the judge's correct-or-not matches the hand grade.
    """

    judge: str
    system: str | None
    n: int
    n_hand: int
    raw: stats.Estimate
    hand_only: stats.Estimate
    corrected: stats.Estimate
    rectifier: float
    weight: float = 1.0
    weight_rule: str = "plain"
    effective_hand: float = 0.0
    agreement: float = 0.0

    @property
    def saved(self) -> float:
        """Hand grades the judge saved: those hand grades alone would need for the same
        width, less those used (negative: the judge cost hand grades)."""
        return self.effective_hand - self.n_hand

    @property
    def bound(self) -> float | None:
        """The published bound on ``effective_hand / n_hand`` (:data:`SAVING_BOUND`) when
        it applies: the judge agrees with the hand grades no more often than the answers
        are correct by hand; None when the judge is the better of the two."""
        return SAVING_BOUND if self.agreement <= self.hand_only.mean else None

    @property
    def hand_as_tight(self) -> bool:
        """Hand grades alone are as tight: the judge is worth under 5% more hand grades."""
        return self.effective_hand < 1.05 * self.n_hand

    def to_dict(self) -> dict[str, Any]:
        """Every field, with what the judge saved: ``saved``, ``bound`` and
        ``hand_as_tight`` (the saving table's figures, as data)."""
        return asdict(self) | {
            "saved": self.saved,
            "bound": self.bound,
            "hand_as_tight": self.hand_as_tight,
        }


def corrected_accuracy(
    judge: Mapping[Hashable, str],
    hand: Mapping[Hashable, str],
    name: str = "judge",
    system: str | None = None,
    rounds: int = DEFAULTS.rounds,
    seed: int = DEFAULTS.seed,
    confidence: float = DEFAULTS.confidence,
    weight: str | float = "tuned",
) -> Corrected | None:
    """Judge-corrected accuracy over the judge's scored answers; None with too few hand grades.

    ``judge`` maps every answer key to the judge's grade; ``hand`` the hand-graded keys
    to the hand grade. The judge's part is over the answers not graded by hand. Unscored
    answers (by either) are left out; at least
    ``MIN_HAND`` answers graded both ways are needed. ``weight`` names the rectifier
    weight (:data:`ragmeter.stats.ppi.WEIGHTS`: ``tuned``, the default, or ``plain``).
    """
    keys = [k for k in judge if judge[k] != UNSCORED]
    both = [k for k in keys if k in hand and hand[k] != UNSCORED]
    if not keys or len(both) < MIN_HAND:
        return None
    j_all = np.array([judge[k] == "correct" for k in keys], dtype=np.float64)
    j_hand = np.array([judge[k] == "correct" for k in both], dtype=np.float64)
    h = np.array([hand[k] == "correct" for k in both], dtype=np.float64)
    graded, rule = set(both), str(weight)
    j_rest = np.array([judge[k] == "correct" for k in keys if k not in graded], dtype=np.float64)
    if j_rest.size == 0:  # every answer graded by hand: the judge has nothing to add
        j_rest, weight = j_hand, 0.0
    lam = ppi_math.weight_of(weight, h, j_hand, j_rest)
    return Corrected(
        judge=name,
        system=system,
        n=len(keys),
        n_hand=len(both),
        raw=stats.bootstrap(j_all, rounds=rounds, seed=seed, confidence=confidence),
        hand_only=stats.bootstrap(h, rounds=rounds, seed=seed, confidence=confidence),
        corrected=ppi_accuracy(j_rest, j_hand, h, rounds, seed, confidence, weight=lam),
        rectifier=stats.seq_mean(h - j_hand),
        weight=lam,
        weight_rule=rule,
        effective_hand=ppi_math.effective_hand(h, j_hand, j_rest, lam),
        agreement=float(np.mean(h == j_hand)),
    )


def corrected_by_judge(
    results: Results | str | Path | AnswerSet,
    seed: int | None = None,
    rounds: int | None = None,
    ppi: str = "tuned",
) -> list[Corrected]:
    """Each judge's corrected accuracy over all systems' answers (where hand grades allow),
    with the rectifier weight ``ppi`` names (:data:`ragmeter.stats.ppi.WEIGHTS`)."""
    aset = answers_or_refuse(results, " to correct")
    seed, rounds = interval_settings(aset.results, seed, rounds)
    hand = {k: h.hand for k, h in aset.hand.items()}
    keys = aset.ordered_keys()
    out = []
    for j in aset.judges:
        c = corrected_accuracy(
            aset.labels(j, keys), hand, j, None, rounds, seed, run_confidence(aset.results), ppi
        )
        if c is not None:
            out.append(c)
    return out


# --- search hit x answer grade -------------------------------------------------------------


@dataclass(frozen=True)
class CrossTable:
    """Search hit (the whole passage in the top k) x answer grade, with question ids.

    ``cells["found"]["wrong"]`` lists the questions whose passage was in the top
    k but whose answer was graded wrong; ``cells["missed"]["correct"]`` those
    answered correctly without the whole passage.
    """

    cells: dict[str, dict[str, list[str]]]

    def count(self, row: str, column: str) -> int:
        return len(self.cells[row][column])

    @property
    def found_not_correct(self) -> list[str]:
        """Passage in the top k, answer partial or wrong."""
        return self.cells["found"]["partial"] + self.cells["found"]["wrong"]

    @property
    def correct_without_passage(self) -> list[str]:
        """Answer correct although no top-k item held the whole passage."""
        return list(self.cells["missed"]["correct"])

    def to_dict(self) -> dict[str, Any]:
        return {"cells": self.cells}


def cross_table(hits: Mapping[str, bool], grades: Mapping[str, str]) -> CrossTable:
    """Cross every graded question's hit (True: found) with its grade."""
    cells: dict[str, dict[str, list[str]]] = {
        row: {c: [] for c in COLUMNS} for row in ("found", "missed")
    }
    for qid, grade in grades.items():
        if qid not in hits:
            raise InputError(f"question {qid!r} has a grade but no search result")
        if grade not in COLUMNS:
            raise InputError(f"question {qid!r}: unknown grade {grade!r}")
        cells["found" if hits[qid] else "missed"][grade].append(qid)
    return CrossTable(cells)


def search_hits(
    results: Results, system: str, k: int, relevant_grade: int | None = None
) -> dict[str, bool]:
    """Per question: did a relevant item make the top ``k``?

    Relevant means a grade of at least ``relevant_grade``, by default the run's own
    (:attr:`ragmeter.runs.meta.RunMeta.relevant_grade`: 2, the whole passage, unless the
    search counted a part as found), so the hit agrees with the run's recall@k.
    """
    if relevant_grade is None:
        relevant_grade = RunMeta.from_json(results.meta).relevant_grade
    return {
        q: any(item.grade >= relevant_grade for item in items[:k])
        for q, items in results.runs[system].items()
    }


# --- the report -------------------------------------------------------------------------------


@dataclass(frozen=True)
class SystemAnswers:
    """One system's answers as graded by one judge, beside its search hit rate.

    ``hit`` is the share of the same questions whose whole passage was in the
    top k (recall@k); ``n`` counts answers, ``ungraded`` those the judge has not
    graded yet (left out of everything else).
    """

    system: str
    judge: str
    n: int
    accuracy: Accuracy
    hit: stats.Estimate | None
    cross: CrossTable
    ungraded: int = 0
    unscored_ids: list[str] = field(default_factory=list)
    corrected: Corrected | None = None


@dataclass(frozen=True)
class AnswerReport:
    """Answer accuracy per system (see :func:`answer_report`)."""

    reader: str | None
    judge: str | None
    judges: list[str]
    k: int
    seed: int
    rounds: int
    systems: list[SystemAnswers]
    corrected: Corrected | None = None  # all systems together
    reruns: int = 1  # K: each answer graded K times, the intervals resampling whole questions
    hand_grades: dict[str, Any] = field(default_factory=dict)  # store.hand_stamp: built from

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, as ``answers/accuracy.json`` keeps it: every field, each
        judge-corrected accuracy (per system, and all together) through
        :meth:`Corrected.to_dict`, so with what the judge saved."""
        data = asdict(self)
        for row, system in zip(data["systems"], self.systems, strict=True):
            row["corrected"] = _corrected_dict(system.corrected)
        data["corrected"] = _corrected_dict(self.corrected)
        return data


def _corrected_dict(c: Corrected | None) -> dict[str, Any] | None:
    return None if c is None else c.to_dict()


def answer_report(
    results: Results | str | Path | AnswerSet,
    judge: str | None = None,
    systems: Sequence[str] | None = None,
    seed: int | None = None,
    rounds: int | None = None,
    ppi: str = "tuned",
) -> AnswerReport:
    """Accuracy per system by ``judge`` (default: the first in ``meta.json``).

    Each system gets the share correct and the share correct-or-partial with
    bootstrap intervals (scored answers only), counts of each grade, the search
    hit rate over the same questions, and the hit x grade table with question ids.
    ``ppi`` names the judge-corrected accuracy's rectifier weight (``tuned`` or ``plain``).
    """
    aset = answers_or_refuse(results, " to report")
    res = aset.results
    seed, rounds = interval_settings(res, seed, rounds)
    conf = run_confidence(res)
    judge = accuracy_judge(aset, judge)
    rows = []
    hand = {k: h.hand for k, h in aset.hand.items()}
    k, reruns = _rerun_accuracies(aset, judge, list(systems or res.systems), rounds, seed, conf)
    for system in systems or res.systems:
        keys = aset.ordered_keys([system])
        if not keys:
            continue
        graded = aset.labels(judge, keys) if judge is not None else {}
        by_q = {q: g for (_, q), g in graded.items()}
        hits_all = search_hits(res, system, aset.k)
        hits = np.array([hits_all[q] for _, q in keys], dtype=np.float64)
        acc = accuracy(by_q.values(), rounds=rounds, seed=seed, confidence=conf)
        rows.append(
            SystemAnswers(
                system=system,
                judge=judge or "",
                n=len(keys),
                accuracy=replace(acc, **reruns[system]) if system in reruns else acc,
                hit=stats.bootstrap(hits, rounds=rounds, seed=seed, confidence=conf),
                cross=cross_table(hits_all, by_q),
                ungraded=len(keys) - len(graded),
                unscored_ids=[q for q, g in by_q.items() if g == UNSCORED],
                corrected=corrected_accuracy(graded, hand, judge, system, rounds, seed, conf, ppi)
                if judge is not None
                else None,
            )
        )
    overall = None
    if judge is not None:
        every = aset.ordered_keys(systems or res.systems)
        overall = corrected_accuracy(
            aset.labels(judge, every), hand, judge, None, rounds, seed, conf, ppi
        )
    return AnswerReport(
        aset.reader, judge, list(aset.judges), aset.k, seed, rounds, rows, overall, k,
        hand_stamp(aset),
    )  # fmt: skip


def _rerun_accuracies(
    aset: AnswerSet, judge: str | None, systems: list[str], rounds: int, seed: int, conf: float
) -> tuple[int, dict[str, dict[str, stats.Estimate | None]]]:
    """``(K, {system: the accuracy's estimates})`` when ``grade`` graded each answer K > 1
    times: each share the mean over questions of each question's mean over its reruns,
    its interval resampling whole questions with their reruns
    (:func:`ragmeter.stats.reruns.rerun_accuracy`; unscored counts as not correct, an
    ungraded rerun is left out). With one rerun ``(1, {})``: :func:`accuracy` as always."""
    k = rerun_count(aset)
    if k < 2 or judge is None:
        return 1, {}
    measures = {
        "correct": "correct",
        "correct_or_partial": "correct_or_partial",
        "correct_if_unscored": "correct_or_unscored",
    }
    arrays = {
        field: rerun_scores(aset, judge, systems=systems, measure=m).scores
        for field, m in measures.items()
    }
    out: dict[str, dict[str, stats.Estimate | None]] = {}
    for system in systems:
        graded = ~np.all(np.isnan(arrays["correct"][system]), axis=1)
        if not graded.any():
            continue
        ys = {field: a[system][graded] for field, a in arrays.items()}
        if np.array_equal(ys["correct"], ys["correct_if_unscored"], equal_nan=True):
            del ys["correct_if_unscored"]  # no rerun unscored: nothing it could add
        out[system] = {"correct_if_unscored": None}
        out[system] |= {
            field: rerun_accuracy(y, rounds, seed, confidence=conf) for field, y in ys.items()
        }
    return k, out


# --- everything at once, for the report -------------------------------------------------


@dataclass(frozen=True)
class AnswerFigures:
    """Every answer-route number of a results directory, computed once.

    ``report`` is :func:`answer_report` (accuracy per system with its interval,
    judge-corrected accuracy, the hit x grade table at the reader's k over the
    answered questions), ``pairs`` :func:`judge_pairs`, ``hand``
    :func:`hand_checks`; ``answers`` is the answer set they were computed from.
    ``ragmeter grade`` / ``judges`` print these objects and the HTML report
    shapes the same objects, so the two views show the same numbers.
    """

    answers: AnswerSet
    report: AnswerReport
    pairs: list[JudgePair]
    hand: list[HandCheck]


def answer_figures(
    results: AnswerSet | Results | str | Path, judge: str | None = None
) -> AnswerFigures | None:
    """All answer numbers of ``results``; None when it holds no answers.

    The answers come from ``answers/reader.jsonl`` with ``grades.jsonl`` and
    ``hand.jsonl`` when those exist, else from a hand-made ``answers/answers.jsonl``
    (see :func:`ragmeter.answers.store.load_merged_answer_set`). ``judge`` picks
    the accuracy judge (see :func:`accuracy_judge`).
    """
    aset = graded_answers(results)
    if aset is None:
        return None
    return AnswerFigures(
        aset, answer_report(aset, judge=judge), judge_pairs(aset), hand_checks(aset)
    )

"""Judge-corrected paired verdicts: which system answers better when the judge errs.

A judge's bias need not be the same for two systems (a judge that favours long answers
favours the system that sends more words), so the judge's paired difference can be
biased however many questions there are. Where each compared system has answers graded
both by the judge and by hand, the difference is corrected the way one accuracy is
(prediction-powered inference; for comparisons Boyeau et al., "AutoEval done right",
ICML 2025): each system's share correct is

    lam_s * (judge's share over the common questions)
          + mean(hand - lam_s * judge) over that system's hand-graded answers

with ``lam_s`` the system's own rectifier weight (PPI++ tuned by default, or 1 for
``plain``), and a pair's difference is the difference of two such estimates. Its
standard error comes from the joint covariance of every system's estimate
(:func:`ragmeter.stats.ppi.joint_ppi`): the judge parts are paired over the same
questions; questions hand-graded for both systems pair their rectifiers; hand grades
of different questions count as independent samples.

What is required: at least ``MIN_HAND`` hand-graded answers (scored both ways) of each
system among the questions the pairs are over; a system with fewer is left out of the
judge-corrected family (a note says so). The hand grades need not cover the same
questions for different systems. What is assumed: each system's hand-graded answers
are a random sample of its answers, drawn without looking at the grades (``ragmeter
handgrade --random-order``; the flagged-first order seeks out the judge's errors and is
no such sample), and the intervals are asymptotic (normal), so they want tens of hand
grades per system (the bench in docs/answers.md shows coverage from 40).

Both answer measures are corrected the same way: "correct" scores an answer 1 when it
was graded correct, "correct or partial" when it was graded correct or partial, by the
judge and by hand alike (:data:`PASSING`). The family is the judge's own (the same
pairs as the table of paired verdicts on the measure, under its rule): max-T (single
step, the maximum |z| simulated from the joint normal with seeded mulberry32 draws,
``rounds`` of them), Holm, or none.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from statistics import NormalDist
from typing import Any

import numpy as np

from ragmeter import stats
from ragmeter.answers.analysis import MIN_HAND, SAVING_BOUND, AnswerReport, Corrected
from ragmeter.answers.store import UNSCORED
from ragmeter.comparison.formatting import format_difference
from ragmeter.defaults import DEFAULTS
from ragmeter.scoring.names import (
    answer_measures,
    difference_scale,
    metric_label,
    passing_grades,
)
from ragmeter.stats import ppi
from ragmeter.stats.paired import verdict_text

__all__ = [
    "PASSING",
    "SAVING_CAPTION",
    "CorrectedRow",
    "CorrectedVerdicts",
    "corrected_cells",
    "corrected_lines",
    "corrected_verdicts",
    "saving_cells",
    "saving_lines",
    "saving_rows",
]

PASSING = {m: passing_grades(m) for m in answer_measures()}
"""Each answer measure's passing grades as the table stood at import (the code reads
:func:`ragmeter.scoring.names.passing_grades`)."""
"""Per answer measure, the grades that score 1 (by the judge and by hand alike)."""


@dataclass(frozen=True)
class CorrectedRow:
    """One judge-corrected pair ``a - b``: the corrected ``difference`` (its interval
    at the family's level), the uncorrected ``judge`` difference over the same
    questions, the pair's unadjusted ``p_value`` and the rule's ``p``, the ``verdict``
    (worded from ``winner``, None for a tie),
    and the hand grades behind it: ``hand_a``, ``hand_b`` and ``hand_both`` (questions
    hand-graded for both)."""

    a: str
    b: str
    difference: stats.Estimate
    judge: float
    p_value: float
    p: float
    verdict: str
    hand_a: int
    hand_b: int
    hand_both: int
    winner: str | None = None
    judge_corrected: bool = True  # every verdict here is, in the data as in the tables

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CorrectedRow:
        d = dict(data)
        d["difference"] = stats.Estimate.from_dict(d["difference"])
        return cls(**d)


@dataclass(frozen=True)
class CorrectedVerdicts:
    """The judge-corrected family on one answer ``measure`` (a key of :data:`PASSING`):
    ``weight_rule`` (``tuned`` or
    ``plain``) and each system's ``weights`` and hand grades ``n_hand``; the rule
    ``adjust`` at level ``alpha`` over the ``family`` of the judge's verdicts, with
    ``seed`` and ``rounds`` (max-T's draws); ``rows``; ``notes`` where a pair could not
    be corrected."""

    measure: str
    weight_rule: str
    adjust: str
    alpha: float
    family: str
    seed: int
    rounds: int
    questions: int
    weights: dict[str, float]
    n_hand: dict[str, int]
    rows: list[CorrectedRow] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["rows"] = [r.to_dict() for r in self.rows]
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CorrectedVerdicts:
        d = dict(data)
        d["rows"] = [CorrectedRow.from_dict(r) for r in d.get("rows") or []]
        return cls(**d)


def _matrices(
    grades: Mapping[str, Mapping[str, str]],
    hand: Mapping[tuple[str, str], str],
    names: Sequence[str],
    questions: Sequence[str],
    passing: Sequence[str],
) -> tuple[np.ndarray, np.ndarray]:
    """``(judge, hand)`` as ``[systems, questions]``: the judge's 0/1 score (1 for a grade
    in ``passing``; unscored counts as 0, as in the paired verdicts), the hand's 0/1
    score with NaN where an answer has no hand grade or the judge or the hand left it
    unscored."""
    judge = np.array(
        [[float(grades[s][q] in passing) for q in questions] for s in names], dtype=np.float64
    )
    by_hand = np.full(judge.shape, np.nan)
    for i, s in enumerate(names):
        for k, q in enumerate(questions):
            h = hand.get((s, q))
            if h is not None and h != UNSCORED and grades[s][q] != UNSCORED:
                by_hand[i, k] = float(h in passing)
    return judge, by_hand


def _winner(t: ppi.PairTest, a: str, b: str, adjust: str, alpha: float) -> str | None:
    """Who the rule puts above the other: under Holm its p, else the interval."""
    separated = t.p < alpha if adjust == "holm" else (t.low > 0 or t.high < 0)
    return (a if t.difference > 0 else b) if separated else None


def corrected_verdicts(
    grades: Mapping[str, Mapping[str, str]],
    hand: Mapping[tuple[str, str], str],
    questions: Sequence[str],
    pairs: Sequence[tuple[str, str]],
    *,
    adjust: str = "maxt",
    alpha: float = stats.alpha_of(DEFAULTS.confidence),
    family: str = "all",
    seed: int = DEFAULTS.seed,
    rounds: int = DEFAULTS.rounds,
    weight: str = "tuned",
    measure: str = "correct",
) -> CorrectedVerdicts | None:
    """The judge-corrected verdicts of ``pairs`` over ``questions``; None when no pair has
    two systems with enough hand grades.

    ``grades`` maps each system to ``{question: the judge's grade}``; ``hand`` maps
    ``(system, question)`` to the hand grade. ``adjust``, ``alpha`` and ``family`` are the
    judge's family rule; ``weight`` the rectifier weight (``tuned`` or ``plain``);
    ``measure`` the answer measure (a key of :data:`PASSING`)."""
    names = sorted({s for p in pairs for s in p}, key=[s for p in pairs for s in p].index)
    judge, by_hand = _matrices(grades, hand, names, questions, passing_grades(measure))
    counts = {s: int((~np.isnan(by_hand[i])).sum()) for i, s in enumerate(names)}
    few = [s for s in names if counts[s] < MIN_HAND]
    kept = [p for p in pairs if p[0] not in few and p[1] not in few]
    notes = []
    if few:
        notes.append(
            f"Not judge-corrected, fewer than {MIN_HAND} hand grades among the compared "
            f"questions: {', '.join(f'{s} ({counts[s]})' for s in few)}; "
            f"{len(pairs) - len(kept)} of {len(pairs)} pairs left out of the family."
        )
    if not kept:
        return None
    use = [s for s in names if s not in few]
    joint = ppi.joint_ppi(
        judge[[names.index(s) for s in use]], by_hand[[names.index(s) for s in use]], weight
    )
    at = {s: i for i, s in enumerate(use)}
    tests = ppi.pair_tests(
        joint,
        [(at[a], at[b]) for a, b in kept],
        adjust=adjust,
        alpha=alpha,
        seed=seed,
        rounds=rounds,
    )
    rows = [
        _row(t, a, b, joint, at, len(questions), adjust, alpha, seed, rounds)
        for (a, b), t in zip(kept, tests, strict=True)
    ]
    weights = {s: float(joint.weights[at[s]]) for s in use}
    hand_counts = {s: counts[s] for s in use}
    return CorrectedVerdicts(
        measure,
        weight,
        adjust,
        alpha,
        family,
        seed,
        rounds,
        len(questions),
        weights,
        hand_counts,
        rows,
        notes,
    )


def _row(
    t: ppi.PairTest,
    a: str,
    b: str,
    joint: ppi.Joint,
    at: dict[str, int],
    n: int,
    adjust: str,
    alpha: float,
    seed: int,
    rounds: int,
) -> CorrectedRow:
    """One pair's row: its difference as an estimate recording the rule's draws."""
    method = {"maxt": "ppi-normal-maxt", "holm": "ppi-normal-bonferroni"}.get(adjust, "ppi-normal")
    est = stats.Estimate(
        mean=t.difference,
        low=t.low,
        high=t.high,
        n=n,
        rounds=rounds,
        seed=stats.seed_record(seed),
        method=method,
        rng=stats.rng_name(seed),
        confidence=2.0 * NormalDist().cdf(t.critical) - 1.0,
    )
    i, j = at[a], at[b]
    winner = _winner(t, a, b, adjust, alpha)
    verdict = verdict_text(winner, "tie")
    return CorrectedRow(
        a,
        b,
        est,
        t.judge,
        t.p_value,
        t.p,
        verdict,
        joint.n_hand[i],
        joint.n_hand[j],
        joint.both[i][j],
        winner,
    )


def corrected_lines(v: CorrectedVerdicts) -> list[str]:
    """What the judge-corrected table rests on, as the lines under it say it."""
    weights = ", ".join(f"{s} {w:.2f}" for s, w in v.weights.items())
    rule = {
        "maxt": "max-T over the family (single step, simulated from the joint normal)",
        "holm": "Holm over the family (intervals at Bonferroni's level)",
    }.get(v.adjust, "no adjustment")
    return [
        "judge: the judge's own difference; corrected: with its interval at the family's "
        "level; hand: hand grades of A / of B / of questions graded for both.",
        f"Judge-corrected: each system's share {metric_label(v.measure)} = weight x the "
        f"judge's share over the {v.questions} questions + mean(hand - weight x judge) "
        f"over its hand-graded answers (prediction-powered, {v.weight_rule} weight: {weights}).",
        f"Rule: {rule}, alpha {v.alpha:g}, family {v.family}; normal intervals; "
        f"seed {v.seed}, {v.rounds} rounds (mulberry32). Assumes each system's hand "
        "grades are a random sample of its answers (handgrade --random-order).",
        *v.notes,
    ]


# --- the texts the terminal and the report show ------------------------------------------

CORRECTED_HEAD = ["pair", "judge", "corrected", "p", "hand", "verdict"]
"""The judge-corrected table's columns, in the terminal and the report."""


def corrected_title(v: CorrectedVerdicts) -> str:
    """The judge-corrected table's title, naming the measure as its row does."""
    return f"Paired verdicts on {metric_label(v.measure)}, judge-corrected by hand (A - B, points)"


def corrected_cells(v: CorrectedVerdicts) -> list[list[str]]:
    """Per pair the cells of :data:`CORRECTED_HEAD`: the judge's difference, the corrected
    one with its interval, the rule's p, the hand grades (of A / of B / of both) and the
    verdict, in points as the measure's row prints a difference."""
    scale, digits = difference_scale(v.measure, share=True)
    return [
        [
            f"{r.a} - {r.b}",
            f"{r.judge * scale:+.{digits}f}",
            format_difference(r.difference, scale, digits),
            f"{r.p:.3f}",
            f"{r.hand_a}/{r.hand_b}/{r.hand_both}",
            r.verdict,
        ]
        for r in v.rows
    ]


SAVING_HEAD = ["", "weight", "agree", "by hand", "worth", "saved", "bound"]
"""The saving table's columns, in the terminal and the report."""

SAVING_CAPTION = (
    "worth: hand grades alone for the same interval width (by hand x hand-only "
    "variance / corrected variance); bound: at most x"
    f"{SAVING_BOUND:g} when the judge agrees no more often than answers are "
    "correct (Dorner, Nastl and Hardt, ICLR 2025)"
)


def saving_cells(rows: Sequence[Corrected]) -> list[list[str]]:
    """Per corrected accuracy the cells of :data:`SAVING_HEAD`: the rectifier weight, the
    agreement, the hand grades used, what the corrected interval is worth in hand grades
    alone, the saving, and the bound where it applies."""
    return [
        [
            c.system or f"all ({c.judge})",
            f"{c.weight:.2f} {c.weight_rule}",
            f"{c.agreement:.0%}",
            str(c.n_hand),
            f"{c.effective_hand:.0f}",
            f"{c.saved:+.0f} (x{c.effective_hand / c.n_hand:.2f})",
            f"x{c.bound:g}" if c.bound is not None else "-",
        ]
        for c in rows
    ]


def saving_lines(rows: Sequence[Corrected]) -> list[str]:
    """The warnings under the saving table: where hand grades alone are as tight."""
    return [
        f"Warning: {c.system or 'all systems'}: hand grades alone are as tight as the "
        f"judge-corrected accuracy (the judge agrees on {c.agreement:.0%}); read the "
        "hand-only accuracy, or grade more by hand."
        for c in rows
        if c.hand_as_tight
    ]


def saving_rows(report: AnswerReport) -> list[Corrected]:
    """The rows of ``grade``'s saving table (:data:`SAVING_SCOPE`): each system's
    corrected accuracy, then all systems together."""
    whole = [report.corrected] if report.corrected is not None else []
    return [*(r.corrected for r in report.systems if r.corrected is not None), *whole]


SAVING_SCOPE = "per system and all together"
"""What ``grade``'s saving table covers, as its title says it."""

"""How many questions and reruns an answer accuracy needs: the arithmetic of
``ragmeter plan --answers``.

An accuracy over n questions, each the mean of K reruns, has variance
``(between + within / K) / n`` (the one-way random-effects model of
:mod:`ragmeter.stats.rerun_variance`: ``between`` is the spread of the questions'
rerun-averaged scores, ``within`` the spread of one rerun around its question's
mean). Its interval's half-width is about ``z * sqrt(that)``; the questions that
reach a target half-width ``h`` at K reruns are ``ceil(z**2 (between + within / K) /
h**2)``, and those that separate a paired difference ``d`` with power ``p`` at level
``alpha`` are ``ceil((z_(1-alpha/2) + z_p)**2 (between + within / K) / d**2)`` with the
components of the paired differences. Reruns shrink only the ``within`` part: past
``K = within / between`` they buy little, and a question that brings its own reader
and judge calls is often the better buy. :func:`rerun_or_question` spends the calls
of one more rerun on questions instead and says which narrows more.

The hand grades a judge-corrected accuracy needs are predicted by the rule ``grade``
prints that interval with (:func:`predicted_corrected_half_width`, through
:mod:`ragmeter.stats.ppi`'s own functions), on the hand x judge table expected at n
hand grades.

Where no rerun was run, the components are split by an assumed share
(:data:`ASSUMED_RERUN_SHARE`); where nothing was graded, the accuracy is assumed at
50% (the widest a 0/1 score can spread). Either says so (``NoiseModel.source``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
from numpy.typing import ArrayLike

from ragmeter.defaults import DEFAULTS
from ragmeter.errors import InputError
from ragmeter.stats import ppi
from ragmeter.stats.rerun_variance import variance_components
from ragmeter.stats.reruns import as_reruns
from ragmeter.stats.validate import alpha_of, check_confidence

__all__ = [
    "ASSUMED_ACCURACY",
    "ASSUMED_DISCORDANT",
    "ASSUMED_JUDGE_DISAGREEMENT",
    "MIN_HAND_PAIRS",
    "ASSUMED_RERUN_SHARE",
    "NoiseModel",
    "RerunOrQuestion",
    "assumed_noise",
    "assumed_table",
    "hand_grades_for_half_width",
    "noise_of",
    "predicted_corrected_half_width",
    "predicted_half_width",
    "questions_for_half_width",
    "questions_to_separate",
    "rerun_or_question",
    "widest",
]

ASSUMED_ACCURACY = 0.5
"""The accuracy assumed with no grades: a 0/1 score spreads most there (variance 0.25)."""

ASSUMED_RERUN_SHARE = 0.2
"""The share of one answer's variance a rerun could change (``answer_rerun_share``),
assumed when no question was graded twice. On the bench's "low" noise (70% of
questions stable, the rest flipping up to 30% of the time) it is about 0.15, on its
"high" noise (30% stable, up to 50%) about 0.45."""

ASSUMED_JUDGE_DISAGREEMENT = 0.15
"""The share of answers a judge grades otherwise than a person, assumed with fewer
than :data:`MIN_HAND_PAIRS` answers graded both ways: the variance of ``hand - judge``
on 0/1 grades is at most that."""

MIN_HAND_PAIRS = 5
"""Answers graded by hand and by the judge before their disagreement is measured (the
judge-corrected accuracy's own minimum)."""

ASSUMED_DISCORDANT = 0.3
"""The share of questions two systems score differently on, assumed for a paired
difference with no grades: the variance of a 0/1 difference near 0 is about that."""


@dataclass(frozen=True)
class NoiseModel:
    """The variance components a plan rests on (see the module docstring), and where
    they come from: ``pilot`` (measured on ``questions`` x ``reruns`` graded answers),
    ``pilot, rerun share assumed`` (graded once) or ``assumed`` (nothing graded)."""

    between: float
    within: float
    source: str
    questions: int = 0
    reruns: int = 0

    def variance(self, n: int, k: int) -> float:
        """The variance of a mean over ``n`` questions of ``k`` reruns each."""
        _check_counts(n, k)
        return (self.between + self.within / k) / n

    @property
    def total(self) -> float:
        """One answer's variance: ``between + within``."""
        return self.between + self.within


def _check_counts(n: int, k: int) -> None:
    for value, what in ((n, "questions"), (k, "reruns")):
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
            raise InputError(f"{what} must be a whole number of at least 1, got {value!r}")


def _z(confidence: float) -> float:
    check_confidence(confidence)
    return NormalDist().inv_cdf(0.5 + confidence / 2.0)


def _positive(value: float, what: str) -> float:
    if not (isinstance(value, int | float) and math.isfinite(value) and value > 0):
        raise InputError(f"{what} must be a number above 0, got {value!r}")
    return float(value)


def _ceil(x: float) -> int:
    return max(1, math.ceil(round(x, 9)))


def assumed_noise(kind: str = "accuracy", rerun_share: float = ASSUMED_RERUN_SHARE) -> NoiseModel:
    """Components with nothing graded: an accuracy at :data:`ASSUMED_ACCURACY` or a
    difference with :data:`ASSUMED_DISCORDANT` of questions discordant, split by
    ``rerun_share``."""
    total = ASSUMED_ACCURACY * (1 - ASSUMED_ACCURACY) if kind == "accuracy" else ASSUMED_DISCORDANT
    return NoiseModel(total * (1 - rerun_share), total * rerun_share, "assumed")


def noise_of(scores: ArrayLike, rerun_share: float = ASSUMED_RERUN_SHARE) -> NoiseModel:
    """The components measured on ``[questions, reruns]`` scores (NaN: not graded).

    With a question graded twice or more they are
    :func:`ragmeter.stats.rerun_variance.variance_components`'s moment estimates; graded
    once, the sample variance of the scores split by ``rerun_share``; fewer than two
    graded questions, :func:`assumed_noise`.
    """
    raw = np.asarray(scores, dtype=np.float64)
    raw = raw[:, None] if raw.ndim == 1 else raw
    graded = raw[~np.all(np.isnan(raw), axis=1)] if raw.ndim == 2 else raw
    y = as_reruns(graded) if graded.size else graded.reshape(0, 1)
    n = int(y.shape[0])
    counts = np.count_nonzero(~np.isnan(y), axis=1)
    k = int(counts.max()) if n else 0
    if n >= 2 and np.any(counts >= 2):
        parts = variance_components(y)
        return NoiseModel(parts["between"], parts["within"], "pilot", n, k)
    if n >= 2:
        first = np.array([row[~np.isnan(row)][0] for row in y])
        total = float(np.var(first, ddof=1))
        return NoiseModel(
            total * (1 - rerun_share), total * rerun_share, "pilot, rerun share assumed", n, 1
        )
    return assumed_noise("accuracy", rerun_share)


def widest(models: Sequence[NoiseModel], k: int) -> NoiseModel:
    """Of several systems' (or pairs') components, the one that is noisiest at ``k``
    reruns: the plan that settles it settles every one."""
    if not models:
        raise InputError("no noise model to plan on")
    return max(models, key=lambda m: m.between + m.within / k)


def predicted_half_width(
    noise: NoiseModel, n: int, k: int, confidence: float = DEFAULTS.confidence
) -> float:
    """The half-width a ``confidence`` interval on ``n`` questions x ``k`` reruns is
    expected to have: ``z * sqrt((between + within / k) / n)``."""
    return _z(confidence) * math.sqrt(noise.variance(n, k))


def questions_for_half_width(
    noise: NoiseModel, k: int, half_width: float, confidence: float = DEFAULTS.confidence
) -> int:
    """Questions at ``k`` reruns each for an interval of +/- ``half_width``."""
    _check_counts(1, k)
    h = _positive(half_width, "half-width")
    return _ceil(_z(confidence) ** 2 * noise.variance(1, k) / h**2)


def questions_to_separate(
    noise: NoiseModel,
    k: int,
    difference: float,
    alpha: float = alpha_of(DEFAULTS.confidence),
    power: float = DEFAULTS.power,
) -> int:
    """Questions at ``k`` reruns each for a paired difference of ``difference`` to be
    separated with ``power`` at two-sided level ``alpha`` (``noise``: the components of
    the paired differences)."""
    _check_counts(1, k)
    d = _positive(difference, "difference")
    z = _z(1 - alpha) + NormalDist().inv_cdf(power)
    return _ceil(z**2 * noise.variance(1, k) / d**2)


@dataclass(frozen=True)
class RerunOrQuestion:
    """At ``questions`` x ``reruns``: the half-width one more rerun of every question
    gives (``with_rerun``), and the half-width the same spend buys as more questions at
    ``reruns`` each (``more_questions`` questions: ``with_questions``); ``better`` is
    ``"rerun"`` or ``"question"``."""

    questions: int
    reruns: int
    now: float
    with_rerun: float
    more_questions: int
    with_questions: float
    rerun_cost: float
    better: str


def rerun_or_question(
    noise: NoiseModel,
    n: int,
    k: int,
    cost: Callable[[int, int], float],
    confidence: float = DEFAULTS.confidence,
) -> RerunOrQuestion:
    """Whether another rerun or more questions narrow the interval more for the same
    spend. ``cost(n, k)`` is what ``n`` questions at ``k`` reruns cost (calls, tokens or
    money); the spend of going from ``k`` to ``k + 1`` reruns buys
    ``floor(spend / (cost(n + 1, k) - cost(n, k)))`` more questions at ``k`` instead."""
    _check_counts(n, k)
    spend = cost(n, k + 1) - cost(n, k)
    per_question = cost(n + 1, k) - cost(n, k)
    more = int(spend // per_question) if per_question > 0 else 0
    now = predicted_half_width(noise, n, k, confidence)
    rerun = predicted_half_width(noise, n, k + 1, confidence)
    questions = predicted_half_width(noise, n + more, k, confidence)
    return RerunOrQuestion(
        n, k, now, rerun, more, questions, spend, "rerun" if rerun < questions else "question"
    )


def assumed_table(
    accuracy: float = ASSUMED_ACCURACY, disagreement: float = ASSUMED_JUDGE_DISAGREEMENT
) -> np.ndarray:
    """The hand x judge shares ``[hand][judge]`` (0: not correct, 1: correct) assumed with
    too few answers graded both ways: ``accuracy`` correct by hand, the judge otherwise
    on ``disagreement`` of answers, half each way (so ``var(hand - judge)`` is
    ``disagreement``)."""
    d = disagreement / 2.0
    return np.array([[1.0 - accuracy - d, d], [d, accuracy - d]])


def _shares(table: ArrayLike) -> np.ndarray:
    t = np.asarray(table, dtype=np.float64)
    if t.shape != (2, 2) or not np.all(np.isfinite(t)) or np.any(t < 0) or t.sum() <= 0:
        raise InputError("the hand x judge table must be 2 x 2 counts or shares, not negative")
    return t / t.sum()


def predicted_corrected_half_width(
    table: ArrayLike,
    judge_variance: float,
    questions: int,
    hand: int,
    confidence: float = DEFAULTS.confidence,
) -> float:
    """The half-width ``grade`` is expected to print for the judge-corrected accuracy of
    ``questions`` judged answers, ``hand`` of them graded by hand
    (:func:`ragmeter.answers.analysis.ppi_accuracy`), by the rule it prints with, on the
    hand x judge table expected at ``hand`` grades (``hand`` x the shares of ``table``,
    ``[hand][judge]``): the tuned weight ``lam`` (:func:`ragmeter.stats.ppi.weight_from`,
    the judge's variance ``judge_variance``), the variance ``lam**2 judge_variance / (N -
    n) + table_variance / n`` (:func:`ragmeter.stats.ppi.table_variance`, a quarter
    answer per cell) and z widened for n hand grades
    (:func:`ragmeter.stats.ppi.half_width`). With every answer graded by hand, the hand
    grades alone (``lam = 0``), as ``grade`` does."""
    _check_counts(questions, hand)
    shares = _shares(table)
    return ppi.half_width(_corrected_variance(shares, judge_variance, questions, hand),
                          min(hand, questions), confidence)  # fmt: skip


def _corrected_variance(shares: np.ndarray, judge_variance: float, big: int, n: int) -> float:
    n = min(n, big)
    rest = big - n
    if rest < 1:
        return ppi.table_variance(n * shares, 0.0) / n
    cov = float(shares[1, 1] - shares[1].sum() * shares[:, 1].sum())
    lam = ppi.weight_from(cov, judge_variance, n, rest)
    return lam**2 * judge_variance / rest + ppi.table_variance(n * shares, lam) / n


def hand_grades_for_half_width(
    judge_variance: float,
    table: ArrayLike,
    questions: int,
    half_width: float,
    confidence: float = DEFAULTS.confidence,
) -> int | None:
    """The fewest hand grades (at least :data:`MIN_HAND_PAIRS`, the corrected accuracy's
    own minimum) at which the judge-corrected accuracy of ``questions`` judged answers
    is predicted to be +/- ``half_width`` (:func:`predicted_corrected_half_width`, the
    rule ``grade`` prints with); ``None`` when no number up to ``questions`` is (more
    questions first, not more hand grades)."""
    _check_counts(questions, 1)
    h = _positive(half_width, "half-width")
    shares = _shares(table)
    z = _z(confidence)
    for n in range(min(MIN_HAND_PAIRS, questions), questions + 1):
        var = _corrected_variance(shares, judge_variance, questions, n)
        if z * math.sqrt(var) <= h and ppi.half_width(var, n, confidence) <= h:
            return n  # the unwidened width first: widening only widens, and costs more
    return None

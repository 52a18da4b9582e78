"""How much of an accuracy's wobble comes from the questions and how much from reruns.

Scores ``[questions, reruns]`` (NaN for a missing rerun) follow the one-way
random-effects model ``y_qr = mu + a_q + e_qr``: ``a_q`` (variance ``between``) is how
question q's rerun-averaged score differs from the mean, ``e_qr`` (variance
``within``) how one rerun differs from its question's average. The components are
the method-of-moments (ANOVA, Henderson's method 1) estimates for unbalanced data
(Searle, Casella and McCulloch 1992, *Variance Components*, section 3.6):

* ``within = MSW = sum_q sum_r (y_qr - ybar_q)**2 / (N - n)``,
* ``between = (MSB - MSW) / k0`` with ``MSB = sum_q K_q (ybar_q - ybar)**2 / (n - 1)``
  and ``k0 = (N - sum_q K_q**2 / N) / (n - 1)``, set to 0 when negative,

``K_q`` being question q's observed reruns, ``N = sum K_q`` and ``ybar`` the mean of
all N scores. The accuracy (the mean of the n question means) has variance
``(between + within * mean(1 / K_q)) / n``; ``rerun_share`` is the second term's
share of it, ``question_share`` the first's. ``answer_rerun_share`` is
``within / (between + within)``: the share of one answer's variance that a rerun
could change. Intervals resample whole questions (seeded as
:func:`ragmeter.stats.bootstrap`: the same question draws), each keeping its reruns.

A question's **flip rate** is the share of its pairs of reruns that disagree
(``1 - sum_v C(c_v, 2) / C(K_q, 2)``, ``c_v`` counting its reruns graded ``v``);
questions with fewer than two reruns have none (NaN).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ragmeter.defaults import DEFAULTS
from ragmeter.errors import InputError
from ragmeter.stats.bootstrap import Estimate, bootstrap, percentile_interval
from ragmeter.stats.draws import _index_blocks, rng_name
from ragmeter.stats.reruns import as_reruns
from ragmeter.stats.validate import Seed, _check_int, check_common, seed_record

__all__ = [
    "FlipRates",
    "VarianceShares",
    "flip_rates",
    "question_flip_rates",
    "variance_components",
    "variance_shares",
]


@dataclass(frozen=True)
class VarianceShares:
    """Variance components of ``[questions, reruns]`` scores and their shares.

    ``between`` and ``within`` are the components (not shares); ``question_share`` and
    ``rerun_share`` split the accuracy's variance (they add up to 1);
    ``answer_rerun_share`` splits one answer's. Each carries a bootstrap interval.
    """

    between: Estimate
    within: Estimate
    question_share: Estimate
    rerun_share: Estimate
    answer_rerun_share: Estimate
    n: int
    reruns: int

    def to_dict(self) -> dict[str, Any]:
        """Plain dict (JSON-ready)."""
        return asdict(self)


def _question_stats(y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(K_q, sum_q, within sum of squares_q)`` per question."""
    observed = ~np.isnan(y)
    k = np.count_nonzero(observed, axis=1).astype(np.float64)
    filled = np.where(observed, y, 0.0)
    s = filled.sum(axis=1)
    centred = np.where(observed, y - (s / k)[:, None], 0.0)
    return k, s, np.sum(centred**2, axis=1)


def _components(totals: tuple[np.ndarray, ...], ssw: np.ndarray, n: int) -> tuple[np.ndarray, ...]:
    """Moment estimates, one per round, from the totals of :func:`_round_stats`.

    ``totals`` holds per-round ``N = sum K_q``, ``sum K_q**2``, ``sum sum_q``,
    ``sum sum_q**2 / K_q`` and ``sum 1 / K_q``; ``ssw`` the within sums of squares.
    """
    big_n, sum_k2, s_total, sum_s2k, inv_k = totals
    msw = ssw / (big_n - n)
    ssb = sum_s2k - s_total**2 / big_n
    msb = ssb / (n - 1)
    k0 = (big_n - sum_k2 / big_n) / (n - 1)
    between = np.maximum((msb - msw) / k0, 0.0)
    within = msw
    acc_within = within * inv_k / n  # within times mean(1 / K_q)
    total = between + acc_within
    with np.errstate(invalid="ignore", divide="ignore"):
        rerun_share = np.where(total > 0, acc_within / total, 0.0)
        answer = np.where(between + within > 0, within / (between + within), 0.0)
    return between, within, 1.0 - rerun_share, rerun_share, answer


def _round_stats(k, s, ssw, idx: np.ndarray) -> tuple[tuple[np.ndarray, ...], np.ndarray]:
    """Per-round totals for the questions ``idx`` (rounds, n) draws."""
    kk, ss = k[idx], s[idx]
    totals = (
        kk.sum(axis=1),
        (kk**2).sum(axis=1),
        ss.sum(axis=1),
        (ss**2 / kk).sum(axis=1),
        (1.0 / kk).sum(axis=1),
    )
    return totals, ssw[idx].sum(axis=1)


def variance_components(scores: ArrayLike) -> dict[str, float]:
    """``between``, ``within`` and the three shares (see the module docstring), no intervals."""
    y = as_reruns(scores)
    n = y.shape[0]
    k, s, ssw = _question_stats(y)
    _check_identified(k, n)
    totals, ssw_sum = _round_stats(k, s, ssw, np.arange(n)[None, :])
    names = ("between", "within", "question_share", "rerun_share", "answer_rerun_share")
    values = _components(totals, ssw_sum, n)
    return {name: float(v[0]) + 0.0 for name, v in zip(names, values, strict=True)}


def _check_identified(k: np.ndarray, n: int) -> None:
    if n < 2:
        raise InputError("variance shares need at least 2 questions")
    if not np.any(k >= 2):
        raise InputError(
            "variance shares need at least one question with 2 or more reruns "
            "(with one rerun a question, rerun noise cannot be told from question noise)"
        )


def variance_shares(
    scores: ArrayLike,
    rounds: int = DEFAULTS.rounds,
    seed: Seed = DEFAULTS.seed,
    confidence: float = DEFAULTS.confidence,
) -> VarianceShares:
    """The components and shares of :func:`variance_components`, with percentile intervals.

    Rounds whose resample has no question with two reruns (possible only when few
    questions have them) are left out of the intervals.
    """
    y = as_reruns(scores)
    check_common(rounds, seed, "percentile", confidence)
    n = y.shape[0]
    k, s, ssw = _question_stats(y)
    _check_identified(k, n)
    point = variance_components(y)
    draws = np.empty((5, rounds))
    for row0, idx in _index_blocks(n, n, rounds, seed):
        totals, ssw_sum = _round_stats(k, s, ssw, np.asarray(idx, dtype=np.intp))
        with np.errstate(invalid="ignore", divide="ignore"):
            draws[:, row0 : row0 + idx.shape[0]] = np.stack(_components(totals, ssw_sum, n))
    ok = np.all(np.isfinite(draws), axis=0)
    out = {}
    for row, name in enumerate(point):
        low, high = percentile_interval(draws[row, ok], point[name], s, "percentile", confidence)
        out[name] = Estimate(
            mean=point[name], low=low, high=high, n=n, rounds=int(ok.sum()),
            seed=seed_record(seed), method="percentile", rng=rng_name(seed), confidence=confidence,
        )  # fmt: skip
    return VarianceShares(**out, n=n, reruns=int(y.shape[1]))


# --------------------------------------------------------------------------- flips


@dataclass(frozen=True)
class FlipRates:
    """Each question's flip rate and the questions that flip most.

    ``rates[q]`` is NaN for a question with fewer than two reruns. ``mean`` is the
    mean rate over the questions that have one, with its bootstrap interval (None when
    none has). ``most`` lists ``(question, rate, reruns)`` for the ``top`` questions
    with the highest rate above 0, highest first (ties in question order).
    """

    rates: list[float]
    mean: Estimate | None
    most: list[tuple[Hashable, float, int]]
    flipping: int
    measured: int

    def to_dict(self) -> dict[str, Any]:
        """Plain dict (JSON-ready when the question ids are)."""
        return asdict(self)


def question_flip_rates(y: np.ndarray) -> np.ndarray:
    """Share of each question's pairs of observed reruns that disagree (NaN below two).

    The one formula of a flip rate: ``(pairs - agreeing pairs) / pairs``, counted in
    whole numbers and divided once. :func:`ragmeter.answers.flips.flip_rate` codes
    grade labels as scores (correct 1, partial 0.5, wrong 0) and calls this.
    """
    observed = ~np.isnan(y)
    k = np.count_nonzero(observed, axis=1)
    pairs = k * (k - 1) // 2
    agree = np.zeros(y.shape[0], dtype=np.int64)
    for v in np.unique(y[observed]):
        c = np.count_nonzero(y == v, axis=1)
        agree += c * (c - 1) // 2
    return np.where(k >= 2, (pairs - agree) / np.where(pairs > 0, pairs, 1), np.nan)


def flip_rates(
    scores: ArrayLike,
    ids: Sequence[Hashable] | None = None,
    top: int = 10,
    rounds: int = DEFAULTS.rounds,
    seed: Seed = DEFAULTS.seed,
    confidence: float = DEFAULTS.confidence,
) -> FlipRates:
    """Each question's flip rate, their mean with an interval, and the ``top`` that flip most."""
    y = as_reruns(scores)
    _check_int(top, "top", minimum=0)
    if ids is not None and len(ids) != y.shape[0]:
        raise InputError(f"ids must name every question: {len(ids)} ids for {y.shape[0]}")
    names = list(ids) if ids is not None else list(range(y.shape[0]))
    rates = question_flip_rates(y)
    have = np.flatnonzero(~np.isnan(rates))
    mean = None
    if have.size:
        mean = bootstrap(rates[have], rounds=rounds, seed=seed, confidence=confidence)
    order = sorted((q for q in have if rates[q] > 0), key=lambda q: (-rates[q], q))
    most = [(names[q], float(rates[q]), int(np.count_nonzero(~np.isnan(y[q])))) for q in order]
    return FlipRates(
        rates=[float(r) for r in rates],
        mean=mean,
        most=most[:top],
        flipping=len(order),
        measured=int(have.size),
    )

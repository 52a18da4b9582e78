"""Paired comparisons of systems on the same questions, with Holm-adjusted p-values.

The interval of :func:`paired` is the bootstrap of the per-question differences (exactly
the reference ``pairedDifference``); the p-value is a sign-flip randomization test whose
flips continue the mulberry32 stream after the resampling draws.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ragmeter.defaults import DEFAULTS
from ragmeter.errors import InputError
from ragmeter.stats.bootstrap import Estimate, _estimate, resampled_means
from ragmeter.stats.draws import _sign_blocks
from ragmeter.stats.validate import (
    Method,
    Seed,
    _as_vector,
    as_matrix,
    check_common,
    check_names,
)

# Flipped sums within this share of sum(|d|) of the observed sum count as ties.
_TIE = 1e-9


# --------------------------------------------------------------------------- comparisons


@dataclass(frozen=True)
class Comparison:
    """System ``a`` against system ``b`` on the same questions.

    ``difference`` is the paired bootstrap interval of mean(a - b). ``p_value``
    comes from a sign-flip randomization test; ``p_holm`` is the Holm-adjusted
    p-value when the comparison is one of a family (else None). ``wins``,
    ``ties`` and ``losses`` count questions where a scored above, equal to and
    below b.
    """

    a: str
    b: str
    difference: Estimate
    p_value: float
    p_holm: float | None
    wins: int
    ties: int
    losses: int
    verdict: str

    def to_dict(self) -> dict[str, Any]:
        """Plain dict (JSON-ready)."""
        return asdict(self)


def verdict_text(winner: str | None, tie: str) -> str:
    """A verdict in words, made from who won: ``"X better"`` when ``winner`` is X, else
    ``tie`` (the tie's own reason). Every verdict is worded here; a view that needs who won
    reads the winner, never these words."""
    return tie if winner is None else f"{winner} better"


def interval_winner(diff: Estimate, a: str, b: str) -> str | None:
    """The system an interval of a - b puts above the other (it excludes 0), else None."""
    if diff.low > 0:
        return a
    if diff.high < 0:
        return b
    return None


def winner_of(a: str, b: str, difference: Estimate, separated: bool) -> str | None:
    """Who won a pair a rule separated: A when A - B is above 0, else B; None when the
    rule did not separate them."""
    if not separated:
        return None
    return a if difference.mean > 0 else b


def interval_verdict(diff: Estimate, a: str, b: str) -> str:
    return verdict_text(interval_winner(diff, a, b), "tie (interval crosses 0)")


def _flip_p_values(diffs: np.ndarray, rounds: int, seed: Seed) -> list[float]:
    """Sign-flip randomization p-values for each column of ``diffs`` (n, k).

    ``p = (b + 1) / (rounds + 1)`` where ``b`` counts rounds whose flipped mean is
    at least as far from 0 as the observed mean. Flipped sums within
    ``1e-9 * sum(|d|)`` of the observed one count as ties (at least as far), so
    the result does not hinge on the order of floating-point additions.
    """
    n = diffs.shape[0]
    observed = np.abs(np.cumsum(diffs, axis=0)[-1])
    threshold = observed - _TIE * np.sum(np.abs(diffs), axis=0)
    hits = np.zeros(diffs.shape[1], dtype=np.int64)
    for _, signs in _sign_blocks(n, rounds, seed):
        flipped = np.abs(signs @ diffs)
        hits += np.count_nonzero(flipped >= threshold, axis=0)
    return [float((h + 1) / (rounds + 1)) for h in hits]


def compare_pairs(
    m: np.ndarray,
    names: Sequence[str],
    pairs: list[tuple[int, int]],
    rounds: int,
    seed: Seed,
    method: str,
    confidence: float,
) -> list[Comparison]:
    n = m.shape[1]
    diffs = np.stack([m[i] - m[j] for i, j in pairs], axis=1) + 0.0  # (n, pairs)
    means = resampled_means(diffs, n, rounds, seed)  # indices drawn once
    p_values = _flip_p_values(diffs, rounds, seed)  # then the sign flips
    out = []
    for c, (i, j) in enumerate(pairs):
        diff = _estimate(diffs[:, c], means[:, c], rounds, seed, method, confidence)
        a, b = m[i], m[j]
        out.append(
            Comparison(
                a=names[i],
                b=names[j],
                difference=diff,
                p_value=p_values[c],
                p_holm=None,
                wins=int(np.count_nonzero(a > b)),
                ties=int(np.count_nonzero(a == b)),
                losses=int(np.count_nonzero(a < b)),
                verdict=interval_verdict(diff, names[i], names[j]),
            )
        )
    return out


def paired(
    a: ArrayLike,
    b: ArrayLike,
    rounds: int = DEFAULTS.rounds,
    seed: Seed = DEFAULTS.seed,
    names: tuple[str, str] = ("A", "B"),
    method: Method = "percentile",
    confidence: float = DEFAULTS.confidence,
) -> Comparison:
    """Paired comparison of two systems scored on the same questions.

    The interval is the bootstrap of the per-question differences ``a - b`` with
    the same seed, exactly the reference ``pairedDifference``. The p-value is a
    sign-flip randomization test: each round flips the sign of each question's
    difference at random (see :func:`compare_all` for the draws).
    """
    x = _as_vector(a, "a")
    y = _as_vector(b, "b")
    if x.size != y.size:
        raise InputError(f"score lists must be paired: a has {x.size} scores, b has {y.size}")
    check_names(names, 2)
    check_common(rounds, seed, method, confidence)
    return compare_pairs(np.stack([x, y]), names, [(0, 1)], rounds, seed, method, confidence)[0]


def compare_all(
    matrix: ArrayLike,
    names: Sequence[str],
    rounds: int = DEFAULTS.rounds,
    seed: Seed = DEFAULTS.seed,
    method: Method = "percentile",
    confidence: float = DEFAULTS.confidence,
) -> list[Comparison]:
    """Every pair ``i < j`` of systems (rows of ``matrix``), with Holm-adjusted p-values.

    All pairs share one set of resampling indices and one set of sign flips, so
    each pair's result equals ``paired(matrix[i], matrix[j], rounds, seed)``
    (plus ``p_holm``). With an integer seed the sign flips are mulberry32
    outputs ``rounds*n`` onwards, i.e. the stream continues after the
    resampling draws; a question's sign is flipped when its output is below 0.5.
    """
    m = as_matrix(matrix, "matrix")
    if m.shape[0] < 2:
        raise InputError("compare_all needs at least two systems (rows)")
    check_names(names, m.shape[0])
    check_common(rounds, seed, method, confidence)
    pairs = [(i, j) for i in range(m.shape[0]) for j in range(i + 1, m.shape[0])]
    out = compare_pairs(m, list(names), pairs, rounds, seed, method, confidence)
    adjusted = holm([c.p_value for c in out])
    return [_with_holm(c, p) for c, p in zip(out, adjusted, strict=True)]


def _with_holm(c: Comparison, p: float) -> Comparison:
    return replace(c, p_holm=p)


def _checked_p_values(p_values: Sequence[float]) -> list[float]:
    """The p-values as floats, or one line naming the first outside [0, 1]."""
    p = [float(v) for v in p_values]
    for v in p:
        if not 0.0 <= v <= 1.0:
            raise InputError(f"p-values must lie in [0, 1], got {v}")
    return p


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm step-down adjustment, returned in the input order.

    Sort the m p-values ascending; the k-th smallest (k = 1..m) becomes
    ``max over j <= k of min(1, (m - j + 1) * p_(j))``.
    """
    p = _checked_p_values(p_values)
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    out = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = running
    return out


def benjamini_hochberg(p_values: Sequence[float]) -> list[float]:
    """Benjamini-Hochberg step-up adjustment (false discovery rate), in the input order.

    Sort the m p-values ascending; the k-th smallest (k = 1..m) becomes
    ``min over j >= k of min(1, m * p_(j) / j)``. Rejecting where the adjusted p is
    below alpha controls the expected share of false rejections among the rejections
    at alpha (independent or positively dependent tests), not the chance of any.
    """
    p = _checked_p_values(p_values)
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    out = [0.0] * m
    running = 1.0
    for rank in range(m - 1, -1, -1):
        i = order[rank]
        running = min(running, min(1.0, m * p[i] / (rank + 1)))
        out[i] = running
    return out

"""Accuracy and paired differences when every answer was drawn more than once.

A reader or judge at temperature > 0 (or a server that is not deterministic) gives a
question a different grade on each run. Scores then come as an array
``[questions, reruns]`` per system: 0/1 or 0/0.5/1 grades, NaN where a rerun is
missing. Each question's score is the mean of its reruns, and an interval has to
carry both sources of noise, the questions drawn and the reruns drawn:

* **The interval resamples whole questions** (Davison and Hinkley 1997, section 3.8,
  "strategy 2"; Ren et al. 2010 recommend it for nested data): each round draws the
  questions with replacement, each keeping its reruns. A question's mean over its
  reruns already carries the rerun noise, so the spread of the resampled means is
  ``(between + within / K) / n``, both sources at their true size. The question draws
  are exactly :func:`ragmeter.stats.bootstrap`'s (mulberry32 outputs ``0 .. rounds*n -
  1``) and each round's question means are summed left to right as the reference adds
  them, so with one rerun a question the interval *is* today's one-call interval, bit
  for bit.
* **Two-level bootstrap** (``within=True``, "strategy 1"): then, within each drawn
  question, its observed reruns are drawn again with replacement. The rerun draws
  continue the stream after the sign flips (outputs from ``2 * rounds * n``), one block
  of ``K`` outputs for each drawn question, system after system. It counts the rerun
  noise a second time (about ``(K - 1) / K**2`` of the within-question variance more a
  question), so it is wider and over-covers where reruns flip often
  (``bench/answer_reruns.py``: 97.5-98% at a nominal 95% with 70% of questions
  flipping); it is kept for comparison and for few reruns of few questions.
* **Paired test**: the sign-flip randomization test of :func:`ragmeter.stats.paired`
  applied to whole questions' mean differences (``mean over a's reruns - mean over
  b's reruns``); with one rerun it is :func:`ragmeter.stats.paired`'s p-value.
* **Families**: :func:`compare_reruns` adjusts every pair's sign-flip p by the
  project's step-down max-T (:mod:`ragmeter.stats.maxt`, with its logical
  constraints) or by Holm.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike

from ragmeter.defaults import DEFAULTS
from ragmeter.errors import InputError
from ragmeter.stats.adjust import RULES, decide, guarantee
from ragmeter.stats.bootstrap import Estimate, _estimate
from ragmeter.stats.draws import _index_blocks, _mulberry32_chunks
from ragmeter.stats.exact import exact_interval
from ragmeter.stats.paired import interval_verdict, verdict_text
from ragmeter.stats.paired_tests import Flips, is_binary
from ragmeter.stats.validate import Method, Seed, alpha_of, check_common, check_names

__all__ = [
    "RerunComparison",
    "as_reruns",
    "compare_reruns",
    "question_means",
    "rerun_accuracy",
    "rerun_difference",
    "resampled_rerun_means",
]


# --------------------------------------------------------------------------- input


def as_reruns(scores: ArrayLike, name: str = "scores") -> np.ndarray:
    """``scores`` as a float array ``[questions, reruns]``, checked.

    NaN marks a missing rerun; every question needs at least one observed score, and
    no score may be infinite. A 1-D list is refused (give ``[[s] for s in scores]``
    for one rerun a question), so that a transposed array is never read silently.
    """
    try:
        arr = np.array(scores, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{name} must be a [questions, reruns] table of numbers: {exc}") from None
    if arr.ndim != 2:
        raise InputError(
            f"{name} must be 2-D [questions, reruns], got {arr.ndim}-D; "
            "one rerun a question is a column: [[s] for s in scores]"
        )
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise InputError(f"{name} must not be empty, got shape {arr.shape}")
    if np.any(np.isinf(arr)):
        raise InputError(f"{name} must be finite numbers or NaN (found infinity)")
    empty = np.flatnonzero(np.all(np.isnan(arr), axis=1))
    if empty.size:
        raise InputError(
            f"{name}: question(s) {empty[:5].tolist()} have no score in any rerun; "
            "drop them or score them"
        )
    return arr + 0.0  # -0.0 -> 0.0


def question_means(scores: np.ndarray) -> np.ndarray:
    """Each question's mean over its observed reruns (summed left to right)."""
    counts = np.count_nonzero(~np.isnan(scores), axis=1)
    sums = np.cumsum(np.nan_to_num(scores, nan=0.0), axis=1)[:, -1]
    return sums / counts


def _packed(scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(values, counts)``: each question's observed reruns moved to the front, in order."""
    observed = ~np.isnan(scores)
    order = np.argsort(~observed, axis=1, kind="stable")
    values = np.take_along_axis(np.nan_to_num(scores, nan=0.0), order, axis=1)
    return values, np.count_nonzero(observed, axis=1)


# --------------------------------------------------------------------------- draws


def _within_uniforms(seed: Seed, rows: int, n: int, k: int, start: int) -> np.ndarray:
    """Uniforms in [0, 1) for the rerun draws of ``rows`` rounds: (rows, n, k)."""
    if isinstance(seed, np.random.Generator):
        return seed.random((rows, n, k))
    out = np.empty(rows * n * k)
    for offset, t in _mulberry32_chunks(int(seed), rows * n * k, start):
        np.divide(t, 4294967296.0, out=out[offset : offset + t.size])
    return out.reshape(rows, n, k)


def _drawn_means(
    packed: tuple[np.ndarray, np.ndarray], idx: np.ndarray, u: np.ndarray | None
) -> np.ndarray:
    """Question means of one block of rounds: (rows, n), reruns redrawn when ``u`` is given."""
    values, counts = packed
    if u is None:
        return question_means_packed(values, counts)[idx]
    k = values.shape[1]
    kq = counts[idx]  # (rows, n)
    pick = np.floor(u * kq[..., None]).astype(np.intp)  # exact: kq * 2**32 < 2**53
    drawn = values[idx[..., None], pick]
    drawn[np.arange(k) >= kq[..., None]] = 0.0
    return np.cumsum(drawn, axis=2)[..., -1] / kq


def question_means_packed(values: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Question means of packed reruns (observed first, zeros after)."""
    return np.cumsum(values, axis=1)[:, -1] / counts


def resampled_rerun_means(
    systems: Sequence[np.ndarray],
    weights: Sequence[float],
    rounds: int,
    seed: Seed,
    within: bool = False,
) -> np.ndarray:
    """``sum_s weights[s] * question_mean_s`` averaged over each round's resample: (rounds,).

    Every system shares the question draws (those of :func:`ragmeter.stats.bootstrap`);
    with ``within`` each system's reruns are redrawn within the drawn questions, from
    mulberry32 output ``2*rounds*n + (offset of the system) + (row*n + i)*K`` onwards.
    Each round's weighted question values are summed left to right and divided by n.
    """
    n = systems[0].shape[0]
    packs = [_packed(s) for s in systems]
    starts = np.cumsum([2 * rounds * n] + [rounds * n * s.shape[1] for s in systems])
    out = np.empty(rounds)
    for row0, idx in _index_blocks(n, n, rounds, seed):
        rows = idx.shape[0]
        total = np.zeros((rows, n))
        for s, (pack, w) in enumerate(zip(packs, weights, strict=True)):
            k = pack[0].shape[1]
            u = None
            if within and k > 1:
                u = _within_uniforms(seed, rows, n, k, int(starts[s]) + row0 * n * k)
            part = _drawn_means(pack, np.asarray(idx, dtype=np.intp), u)
            total = part if s == 0 and w == 1.0 else total + w * part
        out[row0 : row0 + rows] = np.cumsum(total, axis=1)[:, -1] / n
    return out


# --------------------------------------------------------------------------- accuracy


def rerun_accuracy(
    scores: ArrayLike,
    rounds: int = DEFAULTS.rounds,
    seed: Seed = DEFAULTS.seed,
    within: bool = False,
    method: Method = "percentile",
    confidence: float = DEFAULTS.confidence,
) -> Estimate:
    """Mean score over questions (each question the mean of its reruns), with its interval.

    The interval resamples whole questions (``within=True``: then reruns within them
    too, the two-level bootstrap), as in the module docstring.
    With one rerun a question this returns exactly ``stats.bootstrap(scores[:, 0],
    rounds, seed)``, the exact binomial interval beside it included.
    """
    y = as_reruns(scores)
    check_common(rounds, seed, method, confidence)
    qm = question_means(y)
    means = resampled_rerun_means([y], [1.0], rounds, seed, within)
    est = _estimate(qm, means, rounds, seed, method, confidence)
    exact = exact_interval(qm, est.low, est.high, confidence)
    if exact is not None:
        est = replace(est, exact=exact)
    return est


# --------------------------------------------------------------------------- comparisons


@dataclass(frozen=True)
class RerunComparison:
    """System ``a`` against system ``b`` on the same questions, reruns averaged per question.

    ``difference`` is the two-level bootstrap interval of mean(a) - mean(b); ``p_value``
    the sign-flip test of whole questions' mean differences; ``p_family`` that p
    adjusted over the family (``family`` names how), None for a single comparison.
    ``wins``, ``ties`` and ``losses`` count questions whose mean over reruns is above,
    equal to and below b's.
    """

    a: str
    b: str
    difference: Estimate
    p_value: float
    p_family: float | None
    family: str | None
    wins: int
    ties: int
    losses: int
    reruns_a: int
    reruns_b: int
    verdict: str

    @property
    def guarantee(self) -> str | None:
        """What the family's verdicts guarantee, in the words of every table's header
        (:func:`ragmeter.stats.adjust.guarantee`); None for a single comparison."""
        return None if self.family is None else guarantee(self.family)

    def to_dict(self) -> dict[str, Any]:
        """Plain dict (JSON-ready), with ``guarantee`` in a family."""
        data = asdict(self)
        return data | {"guarantee": self.guarantee} if self.family is not None else data


def _paired_arrays(systems: Sequence[ArrayLike], names: Sequence[str]) -> list[np.ndarray]:
    arrays = [as_reruns(s, f"scores of {name}") for s, name in zip(systems, names, strict=True)]
    n = {a.shape[0] for a in arrays}
    if len(n) != 1:
        shapes = {name: a.shape[0] for name, a in zip(names, arrays, strict=True)}
        raise InputError(f"systems must be scored on the same questions, got {shapes}")
    return arrays


def _compare_one(
    ya: np.ndarray,
    yb: np.ndarray,
    names: tuple[str, str],
    p_value: float,
    rounds: int,
    seed: Seed,
    within: bool,
    method: str,
    confidence: float,
) -> RerunComparison:
    d = question_means(ya) - question_means(yb) + 0.0
    means = resampled_rerun_means([ya, yb], [1.0, -1.0], rounds, seed, within)
    diff = _estimate(d, means, rounds, seed, method, confidence)
    return RerunComparison(
        a=names[0],
        b=names[1],
        difference=diff,
        p_value=p_value,
        p_family=None,
        family=None,
        wins=int(np.count_nonzero(d > 0)),
        ties=int(np.count_nonzero(d == 0)),
        losses=int(np.count_nonzero(d < 0)),
        reruns_a=int(ya.shape[1]),
        reruns_b=int(yb.shape[1]),
        verdict=interval_verdict(diff, names[0], names[1]),
    )


def rerun_difference(
    a: ArrayLike,
    b: ArrayLike,
    rounds: int = DEFAULTS.rounds,
    seed: Seed = DEFAULTS.seed,
    names: tuple[str, str] = ("A", "B"),
    within: bool = False,
    method: Method = "percentile",
    confidence: float = DEFAULTS.confidence,
) -> RerunComparison:
    """Paired comparison of two systems with reruns (``[questions, reruns]`` each).

    The interval resamples the questions (shared by both systems; with ``within=True``
    then each system's reruns within each drawn question); the p-value flips the signs
    of whole questions' mean differences. With one rerun a question both equal
    :func:`ragmeter.stats.paired`'s.
    """
    check_names(names, 2)
    check_common(rounds, seed, method, confidence)
    ya, yb = _paired_arrays([a, b], names)
    d = (question_means(ya) - question_means(yb))[:, None] + 0.0
    p = float(Flips(d, rounds, seed).p_values(np.zeros(1), np.zeros(1, dtype=np.intp))[0])
    return _compare_one(ya, yb, tuple(names), p, rounds, seed, within, method, confidence)


def _family_p(
    diffs: np.ndarray, pairs: list[tuple[int, int]], rounds: int, seed: Seed, family: str, alpha
) -> tuple[np.ndarray, np.ndarray]:
    """``(raw p, adjusted p)`` of every pair from one set of whole-question sign flips,
    adjusted by ``family`` where every table's adjustment is applied
    (:func:`ragmeter.stats.adjust.decide`)."""
    flips = Flips(diffs, rounds, seed)
    counts = [(int(np.sum(c > 0)), int(np.sum(c == 0)), int(np.sum(c < 0))) for c in diffs.T]
    binary = is_binary(np.abs(diffs))  # one rerun of 0/1 scores: McNemar's exact p, as today
    raw, adjusted, _, _ = decide(flips, binary, counts, pairs, alpha, family)
    return np.array(raw, dtype=np.float64), np.array(adjusted, dtype=np.float64)


def compare_reruns(
    systems: Sequence[ArrayLike],
    names: Sequence[str],
    rounds: int = DEFAULTS.rounds,
    seed: Seed = DEFAULTS.seed,
    family: Literal["maxt", "holm", "fdr"] = "maxt",
    within: bool = False,
    method: Method = "percentile",
    confidence: float = DEFAULTS.confidence,
) -> list[RerunComparison]:
    """Every pair ``i < j`` of systems, each ``[questions, reruns]``, adjusted as a family.

    ``p_family`` is the pair's p adjusted by the step-down max-T (``"maxt"``: the
    joint null of every pair's p from one set of sign flips of whole questions, each
    question's row of mean differences flipped together, with logical constraints
    from 3 to 8 systems), by Holm (``"holm"``) or by Benjamini-Hochberg (``"fdr"``:
    the false discovery rate, not family-wise; each row's ``guarantee`` says which),
    through :func:`ragmeter.stats.adjust.decide`, as every comparison table. Each
    pair's p is the sign-flip p of its question mean differences, or McNemar's exact p
    when every question mean is 0 or 1 (one rerun of 0/1 scores). A family calls
    "better" where ``p_family < 1 - confidence`` and the difference points that way.
    """
    if len(systems) < 2:
        raise InputError("compare_reruns needs at least two systems")
    if family not in RULES:
        raise InputError(f"family must be one of {', '.join(map(repr, RULES))}, got {family!r}")
    check_names(names, len(systems))
    check_common(rounds, seed, method, confidence)
    arrays = _paired_arrays(systems, names)
    qm = [question_means(y) for y in arrays]
    pairs = [(i, j) for i in range(len(arrays)) for j in range(i + 1, len(arrays))]
    diffs = np.stack([qm[i] - qm[j] for i, j in pairs], axis=1) + 0.0
    raw, adjusted = _family_p(diffs, pairs, rounds, seed, family, alpha_of(confidence))
    out = []
    for c, (i, j) in enumerate(pairs):
        one = _compare_one(
            arrays[i],
            arrays[j],
            (names[i], names[j]),
            float(raw[c]),
            rounds,
            seed,
            within,
            method,
            confidence,
        )
        verdict = _family_verdict(one, float(adjusted[c]), alpha_of(confidence))
        out.append(replace(one, p_family=float(adjusted[c]), family=family, verdict=verdict))
    return out


def _family_verdict(c: RerunComparison, p_family: float, alpha: float) -> str:
    winner = None
    if p_family < alpha and c.difference.mean > 0:
        winner = c.a
    elif p_family < alpha and c.difference.mean < 0:
        winner = c.b
    return verdict_text(winner, "tie (not separated)")

"""Agreement on ordered grades: weighted kappa, Krippendorff's alpha, test-retest.

Grades such as correct / partial / wrong are ordered: a judge that says "partial"
where another says "correct" disagrees less than one that says "wrong". Plain
Cohen's kappa (:func:`ragmeter.stats.agreement`) counts both alike; these count the
distance too.

* **Weighted kappa** (Cohen 1968): ``1 - sum w_ij O_ij / sum w_ij E_ij`` with
  disagreement weights ``w_ij = |i - j| / (k - 1)`` (linear) or ``((i - j) / (k - 1))**2``
  (quadratic) over the classes in their given order, ``O`` the observed table and ``E``
  the table expected from the two raters' label shares. Equal to scikit-learn's
  ``cohen_kappa_score(..., weights=...)``.
* **Krippendorff's alpha** (Krippendorff 2011, "Computing Krippendorff's
  alpha-reliability"): ``1 - D_o / D_e`` from the coincidence matrix of all pairable
  values, for any number of raters, with missing grades (None) left out; ``ordinal``
  (the rank distance over the coincidence marginals), ``interval`` or ``nominal``.
* **Test-retest**: the same judge grading the same answer more than once; the share
  of agreeing pairs of repeats and alpha across the repeats.

When no resample shows any variation (every rater gave every item one grade), kappa
and alpha are 0/0; they are taken as 1.0, as :func:`ragmeter.stats.cohen_kappa` does.
Every interval resamples the items with the bootstrap's draws (mulberry32 outputs
``0 .. rounds*n - 1``), so the intervals of one call share their resamples.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any, Literal

import numpy as np

from ragmeter.defaults import DEFAULTS
from ragmeter.errors import InputError
from ragmeter.stats.agreement import agreement
from ragmeter.stats.bootstrap import Estimate, bootstrap, percentile_interval
from ragmeter.stats.draws import _index_blocks, rng_name
from ragmeter.stats.validate import Seed, check_common, seed_record

__all__ = [
    "OrdinalAgreement",
    "RetestAgreement",
    "krippendorff_alpha",
    "ordinal_agreement",
    "retest_agreement",
    "weighted_kappa",
    "weighted_kappa_value",
]

Weights = Literal["linear", "quadratic"]
Level = Literal["ordinal", "interval", "nominal"]


def _codes(labels: Sequence[Hashable | None], classes: Sequence[Hashable], what: str) -> np.ndarray:
    """Class positions of ``labels``; None (missing) becomes -1."""
    pos = {c: i for i, c in enumerate(classes)}
    if len(pos) != len(classes) or len(pos) < 2:
        raise InputError("classes must be at least two distinct labels, in their order")
    bad = [v for v in dict.fromkeys(labels) if v is not None and v not in pos]
    if bad:
        raise InputError(f"{what}: labels not among classes {list(classes)!r}: {bad[:5]!r}")
    return np.array([-1 if v is None else pos[v] for v in labels], dtype=np.intp)


def _disagreement_weights(k: int, weights: str) -> np.ndarray:
    if weights not in ("linear", "quadratic"):
        raise InputError(f"weights must be 'linear' or 'quadratic', got {weights!r}")
    d = np.abs(np.arange(k)[:, None] - np.arange(k)[None, :]) / (k - 1)
    return d if weights == "linear" else d**2


def _weighted_from_tables(tables: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Weighted kappa of each (k, k) table in ``tables`` (rounds, k, k)."""
    n = tables.sum(axis=(1, 2)).astype(np.float64)
    observed = np.einsum("rij,ij->r", tables, w) * n
    expected = np.einsum("ri,ij,rj->r", tables.sum(axis=2), w, tables.sum(axis=1))
    safe = np.where(expected == 0, 1.0, expected)
    return np.where(expected == 0, 1.0, 1.0 - observed / safe)


def weighted_kappa_value(table: Any, weights: Weights = "quadratic") -> float:
    """Weighted kappa of one square confusion table (rows: rater a, in class order)."""
    t = np.asarray(table, dtype=np.float64)
    if t.ndim != 2 or t.shape[0] != t.shape[1] or t.shape[0] < 2 or np.any(t < 0) or t.sum() == 0:
        raise InputError("table must be a square table of counts, at least 2 x 2, not all 0")
    return float(_weighted_from_tables(t[None], _disagreement_weights(t.shape[0], weights))[0])


def _paired_codes(labels_a, labels_b, classes) -> tuple[np.ndarray, int]:
    la, lb = list(labels_a), list(labels_b)
    if not la:
        raise InputError("labels must not be empty")
    if len(la) != len(lb):
        raise InputError(f"label lists must be paired: a has {len(la)}, b has {len(lb)}")
    if None in la or None in lb:
        raise InputError("labels must not be None: leave out items a rater did not grade")
    k = len(classes)
    return _codes(la, classes, "a") * k + _codes(lb, classes, "b"), k


def _resampled_tables(code: np.ndarray, k: int, rounds: int, seed: Seed):
    """Yield ``(row0, tables)``: the confusion table of each resample, as agreement() draws."""
    n = code.size
    for row0, idx in _index_blocks(n, n, rounds, seed):
        rows = idx.shape[0]
        flat = code[idx] + (np.arange(rows, dtype=np.intp) * (k * k))[:, None]
        yield row0, np.bincount(flat.ravel(), minlength=rows * k * k).reshape(rows, k, k)


def _record(point: float, draws: np.ndarray, data: np.ndarray, rounds, seed, confidence):
    low, high = percentile_interval(draws, point, data, "percentile", confidence)
    return Estimate(
        mean=point, low=low, high=high, n=int(data.size), rounds=rounds,
        seed=seed_record(seed), method="percentile", rng=rng_name(seed), confidence=confidence,
    )  # fmt: skip


def weighted_kappa(
    labels_a: Sequence[Hashable],
    labels_b: Sequence[Hashable],
    classes: Sequence[Hashable],
    weights: Weights = "quadratic",
    rounds: int = DEFAULTS.rounds,
    seed: Seed = DEFAULTS.seed,
    confidence: float = DEFAULTS.confidence,
) -> Estimate:
    """Weighted kappa of two raters over ordered ``classes``, with a percentile interval."""
    check_common(rounds, seed, "percentile", confidence)
    code, k = _paired_codes(labels_a, labels_b, classes)
    w = _disagreement_weights(k, weights)
    table = np.bincount(code, minlength=k * k).reshape(k, k)
    draws = np.empty(rounds)
    for row0, tables in _resampled_tables(code, k, rounds, seed):
        draws[row0 : row0 + tables.shape[0]] = _weighted_from_tables(tables, w)
    point = float(_weighted_from_tables(table[None], w)[0])
    agree = (code // k == code % k).astype(np.float64)
    return _record(point, draws, agree, rounds, seed, confidence)


@dataclass(frozen=True)
class OrdinalAgreement:
    """Two raters on ordered grades: percent, plain kappa, linear and quadratic kappa."""

    percent: Estimate
    kappa: Estimate
    kappa_linear: Estimate
    kappa_quadratic: Estimate
    confusion: list[list[int]]
    classes: list[Hashable]
    n: int

    def to_dict(self) -> dict[str, Any]:
        """Plain dict (JSON-ready when the labels are)."""
        return asdict(self)


def ordinal_agreement(
    labels_a: Sequence[Hashable],
    labels_b: Sequence[Hashable],
    classes: Sequence[Hashable] = ("wrong", "partial", "correct"),
    rounds: int = DEFAULTS.rounds,
    seed: Seed = DEFAULTS.seed,
    confidence: float = DEFAULTS.confidence,
) -> OrdinalAgreement:
    """:func:`ragmeter.stats.agreement` with both weighted kappas beside it, on the same draws."""
    plain = agreement(labels_a, labels_b, classes, rounds, seed, confidence)
    lin = weighted_kappa(labels_a, labels_b, classes, "linear", rounds, seed, confidence)
    quad = weighted_kappa(labels_a, labels_b, classes, "quadratic", rounds, seed, confidence)
    return OrdinalAgreement(
        percent=plain.percent,
        kappa=plain.kappa,
        kappa_linear=lin,
        kappa_quadratic=quad,
        confusion=plain.confusion,
        classes=list(classes),
        n=plain.n,
    )


# --------------------------------------------------------------------------- Krippendorff


def _unit_coincidences(codes: np.ndarray, k: int) -> np.ndarray:
    """Each unit's contribution to the coincidence matrix: (units, k * k).

    A unit with ``m >= 2`` values, ``c_v`` of value v, adds ``(c_v * c_w - [v = w] c_v)
    / (m - 1)`` to cell (v, w); units with fewer than two values add nothing.
    """
    counts = np.stack([np.count_nonzero(codes == v, axis=0) for v in range(k)], axis=1)
    m = counts.sum(axis=1).astype(np.float64)
    pairs = counts[:, :, None] * counts[:, None, :] - counts[:, :, None] * np.eye(k, dtype=np.intp)
    scale = np.where(m >= 2, 1.0 / np.where(m >= 2, m - 1.0, 1.0), 0.0)
    return (pairs * scale[:, None, None]).reshape(codes.shape[1], k * k)


def _delta2(margins: np.ndarray, level: str) -> np.ndarray:
    """Squared distances (rounds, k, k) between classes for ``level``."""
    rounds, k = margins.shape
    i, j = np.meshgrid(np.arange(k), np.arange(k), indexing="ij")
    if level == "nominal":
        return np.broadcast_to((i != j).astype(np.float64), (rounds, k, k))
    if level == "interval":
        return np.broadcast_to(((i - j) ** 2).astype(np.float64), (rounds, k, k))
    lo, hi = np.minimum(i, j), np.maximum(i, j)
    cum = np.cumsum(margins, axis=1)
    between = cum[:, hi] - cum[:, lo] + margins[:, lo]  # sum of n_g for g = lo .. hi
    return (between - (margins[:, i] + margins[:, j]) / 2.0) ** 2


def _alpha_from(coincidences: np.ndarray, k: int, level: str) -> np.ndarray:
    """Alpha of each coincidence matrix (rounds, k * k); 1.0 where nothing varies."""
    o = coincidences.reshape(-1, k, k)
    margins = o.sum(axis=2)
    total = margins.sum(axis=1)
    d2 = _delta2(margins, level)
    observed = np.einsum("rij,rij->r", o, d2)
    expected = np.einsum("ri,rij,rj->r", margins, d2, margins) / np.where(total > 1, total - 1, 1)
    safe = np.where(expected > 0, expected, 1.0)
    return np.where(expected > 0, 1.0 - observed / safe, 1.0)


def krippendorff_alpha(
    ratings: Sequence[Sequence[Hashable | None]],
    classes: Sequence[Hashable],
    level: Level = "ordinal",
    rounds: int = DEFAULTS.rounds,
    seed: Seed = DEFAULTS.seed,
    confidence: float = DEFAULTS.confidence,
) -> Estimate:
    """Krippendorff's alpha of ``ratings[rater][item]`` (None: not graded), with an interval.

    ``classes`` gives the grades in order (for ``interval`` their positions 0, 1, ...
    are the values). The interval resamples the items; ``n`` counts the items with at
    least two grades (the pairable ones).
    """
    if level not in ("ordinal", "interval", "nominal"):
        raise InputError(f"level must be 'ordinal', 'interval' or 'nominal', got {level!r}")
    check_common(rounds, seed, "percentile", confidence)
    rows = [list(r) for r in ratings]
    if len(rows) < 2 or len({len(r) for r in rows}) != 1 or not rows[0]:
        raise InputError("ratings must be [raters][items]: at least 2 raters, equally long rows")
    k = len(classes)
    codes = np.stack([_codes(r, classes, f"rater {i}") for i, r in enumerate(rows)])
    per_unit = _unit_coincidences(codes, k)
    pairable = np.count_nonzero(codes >= 0, axis=0) >= 2
    if not pairable.any():
        raise InputError("no item has grades from two raters: alpha needs pairable values")
    n = codes.shape[1]
    draws = np.empty(rounds)
    for row0, idx in _index_blocks(n, n, rounds, seed):
        r = idx.shape[0]
        flat = np.asarray(idx, dtype=np.intp) + (np.arange(r, dtype=np.intp) * n)[:, None]
        weights = np.bincount(flat.ravel(), minlength=r * n).reshape(r, n).astype(np.float64)
        draws[row0 : row0 + r] = _alpha_from(weights @ per_unit, k, level)
    point = float(_alpha_from(per_unit.sum(axis=0)[None], k, level)[0])
    est = _record(point, draws, pairable.astype(np.float64), rounds, seed, confidence)
    return replace(est, n=int(pairable.sum()))


# --------------------------------------------------------------------------- test-retest


@dataclass(frozen=True)
class RetestAgreement:
    """One judge grading the same answers more than once.

    ``percent`` is the mean share of agreeing pairs of repeats over the items graded at
    least twice (1 - the flip rate); ``alpha`` Krippendorff's alpha across the repeats.
    """

    percent: Estimate
    alpha: Estimate
    items: int
    repeats: int

    def to_dict(self) -> dict[str, Any]:
        """Plain dict (JSON-ready)."""
        return asdict(self)


def retest_agreement(
    grades: Sequence[Sequence[Hashable | None]],
    classes: Sequence[Hashable] = ("wrong", "partial", "correct"),
    level: Level = "ordinal",
    rounds: int = DEFAULTS.rounds,
    seed: Seed = DEFAULTS.seed,
    confidence: float = DEFAULTS.confidence,
) -> RetestAgreement:
    """Agreement of a judge with itself: ``grades[item][repeat]`` (None: no grade that time)."""
    items = [list(g) for g in grades]
    if not items or len({len(g) for g in items}) != 1 or len(items[0]) < 2:
        raise InputError("grades must be [items][repeats] with at least 2 repeats an item")
    k = len(classes)
    codes = np.stack([_codes(g, classes, f"item {i}") for i, g in enumerate(items)])
    m = np.count_nonzero(codes >= 0, axis=1)
    pairs = m * (m - 1) / 2.0
    same = sum((c := np.count_nonzero(codes == v, axis=1)) * (c - 1) / 2.0 for v in range(k))
    keep = m >= 2
    if not keep.any():
        raise InputError("no item was graded twice: test-retest needs repeats")
    agree = same[keep] / pairs[keep]
    percent = bootstrap(agree, rounds=rounds, seed=seed, confidence=confidence)
    by_repeat = [[items[i][r] for i in range(len(items))] for r in range(len(items[0]))]
    alpha = krippendorff_alpha(by_repeat, classes, level, rounds, seed, confidence)
    return RetestAgreement(
        percent=percent, alpha=alpha, items=int(keep.sum()), repeats=len(items[0])
    )

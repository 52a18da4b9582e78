"""How often two raters gave the same label: percent agreement and Cohen's kappa.

Both intervals resample the items with the bootstrap's draws, so ``percent`` equals
:func:`ragmeter.stats.bootstrap` of the 0/1 agreement per item.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ragmeter.defaults import DEFAULTS
from ragmeter.errors import InputError
from ragmeter.stats.bootstrap import Estimate, _estimate, percentile_interval
from ragmeter.stats.draws import _index_blocks, rng_name
from ragmeter.stats.exact import exact_interval
from ragmeter.stats.validate import Seed, check_common, seed_record

# --------------------------------------------------------------------------- agreement


@dataclass(frozen=True)
class Agreement:
    """How often two raters (e.g. two judges) gave the same label.

    ``confusion[i][j]`` counts items rater a labelled ``classes[i]`` and rater b
    labelled ``classes[j]``.
    """

    percent: Estimate
    kappa: Estimate
    confusion: list[list[int]]
    classes: list[Hashable]
    n: int

    def to_dict(self) -> dict[str, Any]:
        """Plain dict (JSON-ready when the labels are)."""
        return asdict(self)


def _kappa_from_counts(diag: np.ndarray, expected: np.ndarray, n: int) -> np.ndarray:
    """``(n*diag - E) / (n*n - E)`` with ``E = sum_k rows_k * cols_k``; 1 where E = n*n."""
    num = (n * diag - expected).astype(np.float64)
    den = (n * n - expected).astype(np.float64)
    safe = np.where(den == 0, 1.0, den)
    return np.where(den == 0, 1.0, num / safe)


def cohen_kappa(confusion: ArrayLike) -> float:
    """Cohen's kappa of a square confusion table: ``(p_o - p_e) / (1 - p_e)``.

    ``p_o`` is the share on the diagonal, ``p_e`` the agreement expected by
    chance from the two raters' label shares. When ``p_e = 1`` (both raters gave
    every item the same single label) kappa is 0/0; it is taken as 1.0, since
    then the raters agree on every item.
    """
    t = np.asarray(confusion, dtype=np.int64)
    if t.ndim != 2 or t.shape[0] != t.shape[1] or t.size == 0:
        raise InputError("confusion must be a non-empty square table")
    if np.any(t < 0):
        raise InputError("confusion counts must not be negative")
    n = int(t.sum())
    if n == 0:
        raise InputError("confusion table is empty")
    expected = np.int64(t.sum(axis=1) @ t.sum(axis=0))
    return float(_kappa_from_counts(np.int64(np.trace(t)), expected, n))


def agreement(
    labels_a: Sequence[Hashable],
    labels_b: Sequence[Hashable],
    classes: Sequence[Hashable] | None = None,
    rounds: int = DEFAULTS.rounds,
    seed: Seed = DEFAULTS.seed,
    confidence: float = DEFAULTS.confidence,
) -> Agreement:
    """Percent agreement and Cohen's kappa of two raters, with percentile intervals.

    Both intervals resample the items with the same indices (drawn once, as in
    :func:`bootstrap`); ``percent`` equals ``bootstrap`` of the 0/1 agreement per
    item. ``classes`` fixes the label order (default: sorted labels, or first
    appearance when the labels do not sort). Kappa is taken as 1.0 in any
    resample where both raters used one and the same label throughout.
    """
    la, lb = list(labels_a), list(labels_b)
    if not la:
        raise InputError("labels must not be empty")
    if len(la) != len(lb):
        raise InputError(f"label lists must be paired: a has {len(la)}, b has {len(lb)}")
    check_common(rounds, seed, "percentile", confidence)
    if classes is None:
        seen = list(dict.fromkeys(la + lb))
        try:
            classes = sorted(seen)
        except TypeError:
            classes = seen
    cls = list(classes)
    pos = {c: i for i, c in enumerate(cls)}
    if len(pos) != len(cls):
        raise InputError("classes must not repeat")
    missing = [v for v in dict.fromkeys(la + lb) if v not in pos]
    if missing:
        raise InputError(f"labels not among classes: {missing[:5]!r}")
    k = len(cls)
    n = len(la)
    code = np.array([pos[u] * k + pos[v] for u, v in zip(la, lb, strict=True)], dtype=np.intp)
    table = np.bincount(code, minlength=k * k).reshape(k, k)
    diag_cells = np.arange(k) * (k + 1)

    diag = np.empty(rounds, dtype=np.int64)
    expected = np.empty(rounds, dtype=np.int64)
    for row0, idx in _index_blocks(n, n, rounds, seed):
        rows = idx.shape[0]
        flat = code[idx] + (np.arange(rows, dtype=np.intp) * (k * k))[:, None]
        cells = np.bincount(flat.ravel(), minlength=rows * k * k).reshape(rows, k, k)
        diag[row0 : row0 + rows] = cells.reshape(rows, k * k)[:, diag_cells].sum(axis=1)
        expected[row0 : row0 + rows] = np.einsum("rk,rk->r", cells.sum(axis=2), cells.sum(axis=1))

    hits = (code // k == code % k).astype(np.float64)
    percent = _estimate(hits, diag / n, rounds, seed, "percentile", confidence)
    exact = exact_interval(hits, percent.low, percent.high, confidence)
    if exact is not None:  # all agree, or nearly: the exact binomial interval beside it
        percent = replace(percent, exact=exact)
    kappas = _kappa_from_counts(diag, expected, n)
    observed = cohen_kappa(table)
    low, high = percentile_interval(kappas, observed, hits, "percentile", confidence)
    kappa = Estimate(
        mean=observed,
        low=low,
        high=high,
        n=n,
        rounds=rounds,
        seed=seed_record(seed),
        method="percentile",
        rng=rng_name(seed),
        confidence=confidence,
    )
    return Agreement(
        percent=percent,
        kappa=kappa,
        confusion=table.tolist(),
        classes=cls,
        n=n,
    )

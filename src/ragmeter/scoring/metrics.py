"""Per-question retrieval metrics, computed for all questions at once.

Input is a matrix of grades, one row per question and one column per rank
(see :mod:`ragmeter.scoring.grading`: 2 holds the whole answering passage, 1 holds part
of it, 0 neither). A negative grade marks a rank the retriever did not fill and
counts as 0. For the binary metrics an item is *relevant* when its grade is at
least ``relevant_grade`` (default 2, the whole passage; 1 is the lenient
reading that also counts partial items).

With ``g_i`` the grade at rank ``i = 1, 2, ...`` and ``rel_i = g_i >= relevant_grade``,
``R`` the number of relevant units of the question (1 for a span answer key,
"all of these spans" or "any of these alternatives"; the relevant documents of
a qrels key) and ``found_k`` the distinct relevant units among the top ``k``:

* ``recall@k`` -- ``found_k / R`` (trec_eval's ``recall_k``). With one unit per
  question it equals the hit rate, which is what ``recall@k`` meant before.
* ``hit@k`` -- 1 if any of the top ``k`` items is relevant, else 0 (trec_eval's
  ``success_k``).
* ``map@k`` / ``map`` -- average precision: ``sum(P@i * new_i) / R`` over the
  ranks ``i <= k`` (all ranks for ``map``), ``new_i`` the units first found at
  rank ``i`` (trec_eval's ``map_cut_k`` / ``map``).
* ``rprec`` -- ``found_R / R``: R-precision (trec_eval's ``Rprec``).
* ``precision@k`` -- ``(number of relevant items in the top k) / k``; the
  divisor is ``k`` even when fewer than ``k`` items were returned. With one
  answering passage and items that do not overlap, at most one item can hold the
  whole passage, so ``precision@5 <= 0.2``.
* ``mrr@k`` / ``mrr`` -- ``1 / i`` for the first relevant rank ``i <= k``, else 0.
* ``ndcg@k`` / ``ndcg`` -- ``DCG@k / IDCG@k`` with ``DCG@k = sum_{i<=k} gain(g_i) / log2(i + 1)``,
  ``gain(g) = 2**g - 1`` (``exponential``, the seed) or ``g`` (``linear``, trec_eval).
  ``IDCG@k`` is the same sum over the ideal grades sorted high to low: by
  default the grades of the *whole returned list* (all ranks, not only the top
  ``k``) -- the best order of the items actually returned; with ``ideal`` given,
  the grades of every item in the index with a grade above 0
  (:func:`ragmeter.scoring.grading.ideal_grades`) or the judged grades of the qrels.
  ``IDCG@k == 0`` gives 0. With ``units`` (the judged ideal) an answer held by
  several items earns its gain once, its items' largest ``gain(g_i) / log2(i + 1)``
  in the top ``k``: ``nDCG <= 1`` under every ideal (docs/metrics.md).
* ``coverage@k`` -- share of the answer characters inside the top ``k`` items
  (:func:`ragmeter.scoring.grading.coverage_curve`), passed in precomputed.
* ``words@k`` -- the number of words in the top ``k`` items (what a reader is
  sent alongside the score).

When ``k`` exceeds the number of ranks, every rank is used (only ``precision``
still divides by ``k``). A question with ``R = 0`` scores 0 on recall, MAP and
R-precision.

:func:`recall_at_k`, :func:`precision_at_k`, :func:`mrr_at_k` and
:func:`ndcg_at_k` score one list of relevance values exactly as the reference
TypeScript does (an item counts for the binary ones when its value is above 0);
:func:`score_questions` gives the same numbers for a whole matrix at once.

Names (:class:`Metric`, the families, the cutoff checks, :func:`find_metric`) live in
:mod:`ragmeter.scoring.names`; this module computes the measures.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from ragmeter.errors import InputError

__all__ = [
    "DEFAULT_KS",
    "METRIC_NAMES",
    "COST_FAMILIES",
    "SHARE_FAMILIES",
    "Metric",
    "family",
    "find_metric",
    "is_share",
    "metric_names",
    "ndcg_at_k",
    "mrr_at_k",
    "precision_at_k",
    "recall_at_k",
    "score_questions",
]

from ragmeter.scoring.names import (  # noqa: F401  (the names, beside the measures)
    COST_FAMILIES,
    DEFAULT_KS,
    DEFAULT_WHOLE,
    GAINS,
    METRIC_NAMES,
    NEEDS_K,
    NO_K,
    SHARE_FAMILIES,
    Metric,
    _bad_metric,
    _check_k,
    _ks,
    check_k,
    check_ks,
    family,
    find_metric,
    is_share,
    metric_names,
)


def recall_at_k(relevance: Sequence[float], k: int) -> float:
    """1 if any of the first ``k`` values is above 0, else 0 (``recallAtK``)."""
    k = _check_k(k)
    return 1.0 if any(r > 0 for r in list(relevance)[:k]) else 0.0


def precision_at_k(relevance: Sequence[float], k: int) -> float:
    """Number of the first ``k`` values above 0, divided by ``k`` (``precisionAtK``)."""
    k = _check_k(k)
    return len([r for r in list(relevance)[:k] if r > 0]) / k


def mrr_at_k(relevance: Sequence[float], k: int) -> float:
    """``1 / rank`` of the first value above 0 within the first ``k``, else 0."""
    k = _check_k(k)
    for i, r in enumerate(list(relevance)[:k]):
        if r > 0:
            return 1.0 / (i + 1)
    return 0.0


def ndcg_at_k(relevance: Sequence[float], k: int, ideal: Sequence[float] | None = None) -> float:
    """nDCG at ``k`` with gain ``2**r - 1`` and discount ``log2(i + 2)`` for 0-based
    ``i`` (``ndcgAtK``); the ideal is ``ideal`` (default: ``relevance`` itself)
    sorted high to low, cut at ``k``."""
    k = _check_k(k)

    def dcg(rels: Sequence[float]) -> float:
        total = 0.0
        for i, r in enumerate(list(rels)[:k]):
            total = total + (2**r - 1) / math.log2(i + 2)
        return total

    best = dcg(sorted(relevance if ideal is None else ideal, reverse=True))
    return 0.0 if best == 0 else dcg(relevance) / best


# ---------------------------------------------------------------------------
# vectorised


def _int_matrix(x: object, what: str) -> np.ndarray:
    a = np.asarray(x)
    if a.ndim != 2:
        raise InputError(f"{what} must be a 2-D array (questions x ranks), got shape {a.shape}")
    if a.dtype == bool or not np.issubdtype(a.dtype, np.number):
        raise InputError(f"{what} must hold whole numbers, got dtype {a.dtype}")
    if not np.issubdtype(a.dtype, np.integer):
        if not np.all(np.isfinite(a)) or np.any(a != np.round(a)):
            raise InputError(f"{what} must hold whole numbers")
    return a.astype(np.int64)


def _gain(g: np.ndarray, gain: str) -> np.ndarray:
    g = g.astype(np.float64)
    return np.exp2(g) - 1.0 if gain == "exponential" else g


def _cum_dcg(g: np.ndarray, gain: str = "exponential", units: np.ndarray | None = None):
    """Running DCG along each row: column ``j`` is DCG over ranks ``0..j``; with ``units``
    each unit counts its largest discounted gain so far once (unit ``-1``: every item)."""
    disc = np.log2(np.arange(g.shape[1], dtype=np.float64) + 2.0)
    gains = _gain(g, gain) / disc
    if units is None:
        return np.cumsum(gains, axis=1)
    out = np.cumsum(np.where(units < 0, gains, 0.0), axis=1)
    for u in np.unique(units[units >= 0]).tolist():
        out += np.maximum.accumulate(np.where(units == u, gains, 0.0), axis=1)
    return out


def _at(cum: np.ndarray | None, k: int, n: int = 0) -> np.ndarray:
    """Column ``k - 1`` of a running sum, or its last column when shorter; 0 if empty."""
    if cum is None:
        return np.zeros(n, dtype=np.float64)
    if cum.shape[1] == 0 or k < 1:
        return np.zeros(cum.shape[0], dtype=np.float64)
    return cum[:, min(k, cum.shape[1]) - 1]


def _ideal_matrix(ideal: object, n: int, width: int | None) -> np.ndarray:
    """Ideal grades as an ``(n, w)`` matrix sorted high to low per row, negatives as 0;
    ``w`` is ``width`` (``None``: the longest vector)."""
    if isinstance(ideal, np.ndarray) and ideal.ndim == 2:
        if ideal.shape[0] != n:
            raise InputError(f"ideal has {ideal.shape[0]} grade vectors for {n} questions")
        a = _int_matrix(ideal, "ideal grades")
        a = -np.sort(-np.clip(a, 0, None), axis=1)
        return a if width is None else a[:, :width]
    if len(ideal) != n:
        raise InputError(f"ideal has {len(ideal)} grade vectors for {n} questions")
    vecs = []
    for q, vec in enumerate(ideal):
        v = np.asarray(vec).reshape(-1)
        if v.size and not np.issubdtype(v.dtype, np.integer):
            raise InputError(f"ideal grades of question {q} must be whole numbers")
        vecs.append(np.sort(np.clip(v.astype(np.int64), 0, None))[::-1])
    w = max((v.size for v in vecs), default=0) if width is None else width
    out = np.zeros((n, w), dtype=np.int64)
    for q, v in enumerate(vecs):
        v = v[:w]
        out[q, : v.size] = v
    return out


def _wanted(measures: Iterable[object] | None, default: list[str]) -> list[Metric]:
    if measures is None:
        return [Metric.parse(m) for m in default]
    out = [m if isinstance(m, Metric) else Metric.parse(m) for m in measures]
    if not out:
        raise InputError("no measures asked for")
    return out


def score_questions(
    grades: object,
    words: object | None,
    ks: Iterable[int] = DEFAULT_KS,
    coverage: object | None = None,
    ideal: Sequence[object] | np.ndarray | None = None,
    relevant_grade: int = 2,
    *,
    n_relevant: object | None = None,
    found: object | None = None,
    gain: str = "exponential",
    measures: Iterable[str | Metric] | None = None,
    units: object | None = None,
) -> dict[str, np.ndarray]:
    """Every metric at every cutoff, per question.

    Args:
        grades: ``(n_questions, depth)`` whole numbers; the grade of the item at
            each rank, negative where no item was returned (counts as 0).
        words: ``(n_questions, depth)`` words in each item, or ``None`` to skip
            ``words@k``. Values at ranks with a negative grade are ignored.
        ks: the cutoffs, each >= 1, no repeats.
        coverage: ``(n_questions, len(ks))``: column ``j`` is ``coverage@ks[j]``
            as :func:`ragmeter.scoring.grading.coverage_curve` returns it; ``None`` skips
            ``coverage@k``.
        ideal: ``None`` for nDCG's ideal from the returned list; else one grade
            vector per question (or an ``(n, w)`` matrix): the ideal over every
            item in the index, or the judged grades of a qrels file.
        relevant_grade: lowest grade that counts as relevant for the binary
            measures (2: whole passage; 1: any part of it, or trec_eval's level).
        n_relevant: ``(n_questions,)`` relevant units per question (the
            denominator of recall, MAP and R-precision). ``None``: one unit per
            question, the span answer key.
        found: ``(n_questions, depth)`` distinct relevant units among the top
            ``j + 1`` items. ``None``: with ``n_relevant`` every relevant item is a
            unit of its own (a document ranking); without it, the one unit is
            found at the first relevant item.
        gain: ``"exponential"`` (``2**g - 1``, the seed) or ``"linear"`` (``g``,
            trec_eval).
        measures: names to compute (``"ndcg@10"``, ``"map"``, trec_eval names);
            ``None`` for :func:`metric_names` of ``ks``.
        units: ``(n_questions, depth)``: each item's answer unit (a relevant document;
            0, a span key's passage; -1, none) for nDCG to credit each unit once.

    Returns:
        ``{"recall@1": array, ...}``: metric name to a float64 vector with one
        value per question, in the order of ``measures`` (default: families in
        :data:`METRIC_NAMES` order, then by cutoff).
    """
    cutoffs = _ks(ks)
    if gain not in GAINS:
        raise InputError(f"gain must be one of {', '.join(GAINS)}, not {gain!r}")
    asked = _wanted(
        measures, metric_names(cutoffs, coverage=coverage is not None, words=words is not None)
    )
    wanted = [_basis(m) for m in asked]
    g = _int_matrix(grades, "grades")
    level = _level(relevant_grade)
    filled = g >= 0
    g = np.where(filled, g, 0)
    cols = _Columns(cutoffs, g >= level, _totals(n_relevant, g.shape[0]))
    cols.found = _found_matrix(cols, wanted, found, n_relevant is None)
    cols.ap_cum = _ap_cum(cols, wanted)
    cols.dcg, cols.best = _ndcg_sums(cols, wanted, g, gain, ideal, units)
    cols.coverage = _coverage_matrix(coverage, cols)
    cols.cum_words = _cum_words(words, filled, cols)
    return {str(a): _measure(m, cols) for a, m in zip(asked, wanted, strict=True)}


def _level(relevant_grade: object) -> int:
    try:
        level = operator.index(relevant_grade)
    except TypeError:
        raise InputError(f"relevant_grade={relevant_grade!r} must be a whole number >= 1") from None
    if level < 1:
        raise InputError(f"relevant_grade={relevant_grade!r} must be a whole number >= 1")
    return level


def _totals(n_relevant: object | None, n: int) -> np.ndarray:
    """Relevant units per question (one each without ``n_relevant``)."""
    if n_relevant is None:
        return np.ones(n, dtype=np.float64)
    total = np.asarray(n_relevant, dtype=np.float64).reshape(-1)
    if total.shape != (n,):
        raise InputError(f"n_relevant must have one value per question ({n})")
    return total


@dataclass
class _Columns:
    """What the measures of :func:`score_questions` are read from, computed once each."""

    cutoffs: list[int]
    rel: np.ndarray  # (n, depth): the item at the rank is relevant
    total: np.ndarray  # relevant units per question
    found: np.ndarray | None = None  # distinct relevant units among the top j + 1
    ap_cum: np.ndarray | None = None  # running sum of precision at each new unit
    dcg: np.ndarray | None = None  # running DCG of the returned list
    best: np.ndarray | None = None  # running DCG of the ideal
    coverage: np.ndarray | None = None  # (n, len(cutoffs))
    cum_words: np.ndarray | None = None  # running words of the returned items

    def __post_init__(self) -> None:
        self.n, self.depth = self.rel.shape
        self.safe_total = np.where(self.total > 0, self.total, 1.0)

    def eff(self, m: Metric) -> int:
        """The ranks a measure reads: its cutoff, or every rank."""
        return self.depth if m.k is None else min(m.k, self.depth)

    def found_at(self, k: int) -> np.ndarray:
        if self.found is None or k < 1:
            return np.zeros(self.n, dtype=np.float64)
        return self.found[:, k - 1].astype(np.float64)

    def per_unit(self, v: np.ndarray) -> np.ndarray:
        """``v / R``, 0 where a question has no relevant unit."""
        return np.where(self.total > 0, v / self.safe_total, 0.0)


def _found_matrix(
    cols: _Columns, wanted: list[Metric], found: object | None, one_unit: bool
) -> np.ndarray | None:
    """Distinct relevant units found by each rank, as far as recall, MAP and R-precision read."""
    n, depth = cols.n, cols.depth
    need = max(
        [cols.eff(m) for m in wanted if m.name in ("recall", "map")]
        + ([depth] if any(m.name == "rprec" for m in wanted) else [])
        + [0]
    )
    if not need:
        return None
    if found is not None:
        found_m = _int_matrix(found, "found")
        if found_m.shape != (n, depth):
            raise InputError(f"found must have the shape of grades {(n, depth)}")
        return found_m[:, :need]
    if one_unit:
        return np.logical_or.accumulate(cols.rel[:, :need], axis=1).astype(np.int64)
    return np.cumsum(cols.rel[:, :need], axis=1, dtype=np.int64)


def _ap_cum(cols: _Columns, wanted: list[Metric]) -> np.ndarray | None:
    """Running sum of ``P@i * new_i`` (average precision before dividing by ``R``)."""
    width = max([cols.eff(m) for m in wanted if m.name == "map"] + [0])
    if not width:
        return None
    ranks = np.arange(1, width + 1, dtype=np.float64)
    cum_rel = np.cumsum(cols.rel[:, :width], axis=1, dtype=np.int64)
    new = np.diff(cols.found[:, :width], axis=1, prepend=0)
    return np.cumsum(new * (cum_rel / ranks), axis=1)


def _ndcg_sums(
    cols: _Columns, wanted: list[Metric], g: np.ndarray, gain: str, ideal: object, units: object
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Running DCG of the returned lists and of their ideal, as far as nDCG reads."""
    ndcg_wanted = [m for m in wanted if m.name == "ndcg"]
    if not ndcg_wanted:
        return None, None
    n, depth = cols.n, cols.depth
    width = max(cols.eff(m) for m in ndcg_wanted)
    if units is not None and np.shape(units) != (n, depth):
        raise InputError(f"units must have the shape of grades {(n, depth)}")
    u = None if units is None else _int_matrix(units, "units")[:, :width]
    dcg = _cum_dcg(g[:, :width], gain, u)
    if ideal is None:
        return dcg, _cum_dcg(-np.sort(-g, axis=1), gain)
    whole = any(m.k is None for m in ndcg_wanted)
    top = _ideal_matrix(ideal, n, None if whole else max(m.k for m in ndcg_wanted))
    return dcg, _cum_dcg(top, gain)


def _coverage_matrix(coverage: object | None, cols: _Columns) -> np.ndarray | None:
    if coverage is None:
        return None
    cov = np.asarray(coverage, dtype=np.float64)
    if cov.shape != (cols.n, len(cols.cutoffs)):
        raise InputError(
            f"coverage must have shape {(cols.n, len(cols.cutoffs))} (questions x cutoffs),"
            f" got {cov.shape}"
        )
    return cov


def _cum_words(words: object | None, filled: np.ndarray, cols: _Columns) -> np.ndarray | None:
    if words is None:
        return None
    w = np.asarray(words, dtype=np.float64)
    if w.shape != (cols.n, cols.depth):
        raise InputError(
            f"words must have the shape of grades {(cols.n, cols.depth)}, got {w.shape}"
        )
    return np.cumsum(np.where(filled, w, 0.0), axis=1)


def _hit(m: Metric, k: int, cols: _Columns) -> np.ndarray:
    return cols.rel[:, :k].any(axis=1).astype(np.float64)


def _precision(m: Metric, k: int, cols: _Columns) -> np.ndarray:
    return cols.rel[:, :k].sum(axis=1).astype(np.float64) / m.k


def _recall(m: Metric, k: int, cols: _Columns) -> np.ndarray:
    return cols.per_unit(cols.found_at(k))


def _mrr(m: Metric, k: int, cols: _Columns) -> np.ndarray:
    top = cols.rel[:, :k]
    v = np.zeros(cols.n, dtype=np.float64)
    if top.shape[1]:
        hit = top.any(axis=1)
        v[hit] = 1.0 / (top[hit].argmax(axis=1) + 1.0)
    return v


def _map(m: Metric, k: int, cols: _Columns) -> np.ndarray:
    return cols.per_unit(_at(cols.ap_cum, k, cols.n))


def _rprec(m: Metric, k: int, cols: _Columns) -> np.ndarray:
    r = np.minimum(cols.total, cols.depth).astype(np.int64)
    fa = np.zeros(cols.n, dtype=np.float64)
    ok = r > 0
    if cols.found is not None and ok.any():
        fa[ok] = cols.found[ok, r[ok] - 1]
    return cols.per_unit(fa)


def _coverage(m: Metric, k: int, cols: _Columns) -> np.ndarray:
    if cols.coverage is None or m.k not in cols.cutoffs:
        raise InputError(f"{m} needs coverage computed at k={m.k}")
    return cols.coverage[:, cols.cutoffs.index(m.k)].copy()


def _words(m: Metric, k: int, cols: _Columns) -> np.ndarray:
    if cols.cum_words is None:
        raise InputError(f"{m} needs the words of each item")
    return _at(cols.cum_words, k).copy()


def _basis(m: Metric) -> Metric:
    """The measure whose computation gives ``m``'s values: itself, or, for a family row
    ``computed_as`` another (``success@5`` as ``hit@5``), that family's at its cutoff."""
    basis = m.rules.basis
    return m if basis == m.name else Metric(basis, m.k)


def _measure(m: Metric, cols: _Columns) -> np.ndarray:
    """One measure per question, read from ``cols`` by its family's computation."""
    compute = _COMPUTE.get(m.name)
    if compute is None:  # pragma: no cover - a row names no computation there is
        raise _bad_metric(str(m))
    return compute(m, cols.eff(m), cols)


def _ndcg(m: Metric, k: int, cols: _Columns) -> np.ndarray:
    best = cols.best
    num = _at(cols.dcg, k)
    den = best[:, -1] if (m.k is None and best.shape[1]) else _at(best, m.k or k)
    if m.k is None and not best.shape[1]:
        den = np.zeros(cols.n, dtype=np.float64)
    v = np.zeros(cols.n, dtype=np.float64)
    np.divide(num, den, out=v, where=den != 0)
    return v


_COMPUTE = {
    "hit": _hit,
    "precision": _precision,
    "recall": _recall,
    "mrr": _mrr,
    "map": _map,
    "rprec": _rprec,
    "ndcg": _ndcg,
    "coverage": _coverage,
    "words": _words,
}
"""Each family's computation, by the name a row of
:data:`~ragmeter.scoring.names.FAMILIES` gives it (its own, or its ``computed_as``)."""

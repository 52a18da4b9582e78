"""Per-question retrieval metrics, computed for all questions at once.

Input is a matrix of grades, one row per question and one column per rank
(see :mod:`ragmeter.grading`: 2 holds the whole answering passage, 1 holds part
of it, 0 neither). A negative grade marks a rank the retriever did not fill and
counts as 0. For the binary metrics an item is *relevant* when its grade is at
least ``relevant_grade`` (default 2, the whole passage; 1 is the lenient
reading that also counts partial items).

With ``g_i`` the grade at rank ``i = 1, 2, ...`` and ``rel_i = g_i >= relevant_grade``:

* ``recall@k`` -- hit rate: 1 if any of the top ``k`` items is relevant, else 0.
* ``precision@k`` -- ``(number of relevant items in the top k) / k``; the
  divisor is ``k`` even when fewer than ``k`` items were returned. With one
  answering passage and items that do not overlap, at most one item can hold the
  whole passage, so ``precision@5 <= 0.2``.
* ``mrr@k`` -- ``1 / i`` for the first relevant rank ``i <= k``, else 0.
* ``ndcg@k`` -- ``DCG@k / IDCG@k`` with ``DCG@k = sum_{i<=k} (2**g_i - 1) / log2(i + 1)``.
  ``IDCG@k`` is the same sum over the ideal grades sorted high to low: by
  default the grades of the *whole returned list* (all ranks, not only the top
  ``k``) -- the best order of the items actually returned; with ``ideal`` given,
  the grades of every item in the index with a grade above 0
  (:func:`ragmeter.grading.ideal_grades`). ``IDCG@k == 0`` gives 0.
* ``coverage@k`` -- share of the answer characters inside the top ``k`` items
  (:func:`ragmeter.grading.coverage_curve`), passed in precomputed.
* ``words@k`` -- the number of words in the top ``k`` items (what a reader is
  sent alongside the score).

When ``k`` exceeds the number of ranks, every rank is used (only ``precision``
still divides by ``k``).

:func:`recall_at_k`, :func:`precision_at_k`, :func:`mrr_at_k` and
:func:`ndcg_at_k` score one list of relevance values exactly as the reference
TypeScript does (an item counts for the binary ones when its value is above 0);
:func:`score_questions` gives the same numbers for a whole matrix at once.
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
    "Metric",
    "metric_names",
    "ndcg_at_k",
    "mrr_at_k",
    "precision_at_k",
    "recall_at_k",
    "score_questions",
]

METRIC_NAMES: tuple[str, ...] = ("recall", "precision", "mrr", "ndcg", "coverage", "words")
"""Every metric name, in the order :func:`score_questions` reports them."""

DEFAULT_KS: tuple[int, ...] = (1, 3, 5, 10)


def _bad_metric(text: object) -> InputError:
    return InputError(
        f"unknown metric {text!r}: use NAME@K, NAME one of {', '.join(METRIC_NAMES)}"
        " and K a whole number >= 1 (e.g. ndcg@10)"
    )


@dataclass(frozen=True, slots=True)
class Metric:
    """A metric at a cutoff; prints as ``name@k`` and parses back."""

    name: str
    k: int

    def __post_init__(self) -> None:
        if self.name not in METRIC_NAMES or isinstance(self.k, bool):
            raise _bad_metric(f"{self.name}@{self.k}")
        try:
            k = operator.index(self.k)
        except TypeError:
            raise _bad_metric(f"{self.name}@{self.k}") from None
        if k < 1:
            raise _bad_metric(f"{self.name}@{self.k}")
        object.__setattr__(self, "k", k)

    def __str__(self) -> str:
        return f"{self.name}@{self.k}"

    @classmethod
    def parse(cls, text: str) -> Metric:
        """``Metric.parse("ndcg@10") == Metric("ndcg", 10)``; surrounding spaces
        and upper case are accepted."""
        if not isinstance(text, str):
            raise _bad_metric(text)
        name, sep, k = text.strip().partition("@")
        name, k = name.strip().lower(), k.strip()
        if not sep or name not in METRIC_NAMES or not k.isascii() or not k.isdigit():
            raise _bad_metric(text)
        return cls(name, int(k))


def metric_names(
    ks: Iterable[int] = DEFAULT_KS, *, coverage: bool = True, words: bool = True
) -> list[str]:
    """The names :func:`score_questions` returns for these cutoffs, in its order."""
    ks = _ks(ks)
    out = []
    for name in METRIC_NAMES:
        if (name == "coverage" and not coverage) or (name == "words" and not words):
            continue
        out.extend(str(Metric(name, k)) for k in ks)
    return out


# ---------------------------------------------------------------------------
# scalar reference versions (one question; transcriptions of the TypeScript)


def check_k(k: int, *, depth: int | None = None, what: str = "cutoff k") -> int:
    """``k`` as an int, checked: a whole number >= 1, and at most ``depth`` when given.

    The one validator of a single cutoff (see :func:`check_ks` for a list).
    """
    try:
        k = operator.index(k)
    except TypeError:
        raise InputError(f"{what}={k!r} must be a whole number >= 1") from None
    if k < 1:
        raise InputError(f"{what}={k!r} must be a whole number >= 1")
    if depth is not None and k > depth:
        raise InputError(
            f"{what}={k} is past the depth {depth} (items kept per question); "
            f"use a k of at most {depth}, or search again with a larger depth"
        )
    return k


_check_k = check_k


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


def check_ks(ks: Iterable[int], *, depth: int | None = None, what: str = "cutoffs") -> list[int]:
    """``ks`` as a list of ints, checked: non-empty, whole numbers >= 1, each once,
    and at most ``depth`` when given.

    The one validator of a list of cutoffs: the config's ``ks``, the metrics'
    and the coverage curve's all go through it.
    """
    try:
        out = [operator.index(k) for k in ks]
    except TypeError:
        raise InputError(f"{what} {ks!r} must be whole numbers >= 1") from None
    if not out or any(k < 1 for k in out):
        raise InputError(f"{what} must be positive whole numbers (>= 1), got {out!r}")
    if len(set(out)) != len(out):
        raise InputError(f"{what} {out!r} repeat a value: list each cutoff once")
    if depth is not None and max(out) > depth:
        raise InputError(
            f"{what} {out!r} go past the depth {depth} (items kept per question); "
            f"use cutoffs of at most {depth}, or a larger depth"
        )
    return out


_ks = check_ks


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


def _cum_dcg(g: np.ndarray) -> np.ndarray:
    """Running DCG along each row: column ``j`` is DCG over ranks ``0..j``."""
    disc = np.log2(np.arange(g.shape[1], dtype=np.float64) + 2.0)
    return np.cumsum((np.exp2(g.astype(np.float64)) - 1.0) / disc, axis=1)


def _at(cum: np.ndarray, k: int) -> np.ndarray:
    """Column ``k - 1`` of a running sum, or its last column when shorter; 0 if empty."""
    if cum.shape[1] == 0:
        return np.zeros(cum.shape[0], dtype=np.float64)
    return cum[:, min(k, cum.shape[1]) - 1]


def score_questions(
    grades: object,
    words: object | None,
    ks: Iterable[int] = DEFAULT_KS,
    coverage: object | None = None,
    ideal: Sequence[object] | None = None,
    relevant_grade: int = 2,
) -> dict[str, np.ndarray]:
    """Every metric at every cutoff, per question.

    Args:
        grades: ``(n_questions, depth)`` whole numbers; the grade of the item at
            each rank, negative where no item was returned (counts as 0).
        words: ``(n_questions, depth)`` words in each item, or ``None`` to skip
            ``words@k``. Values at ranks with a negative grade are ignored.
        ks: the cutoffs, each >= 1, no repeats.
        coverage: ``(n_questions, len(ks))``: column ``j`` is ``coverage@ks[j]``
            as :func:`ragmeter.grading.coverage_curve` returns it; ``None`` skips
            ``coverage@k``.
        ideal: ``None`` for nDCG's ideal from the returned list; else one grade
            vector per question (:func:`ragmeter.grading.ideal_grades`): the
            ideal over every item in the index.
        relevant_grade: lowest grade that counts as relevant for recall,
            precision and MRR (2: whole passage; 1: any part of it).

    Returns:
        ``{"recall@1": array, ...}``: metric name to a float64 vector with one
        value per question, metrics in :data:`METRIC_NAMES` order, then by cutoff.
    """
    cutoffs = _ks(ks)
    g = _int_matrix(grades, "grades")
    n, depth = g.shape
    try:
        level = operator.index(relevant_grade)
    except TypeError:
        raise InputError(f"relevant_grade={relevant_grade!r} must be 1 or 2") from None
    if level < 1:
        raise InputError(f"relevant_grade={relevant_grade!r} must be 1 or 2")

    filled = g >= 0
    g = np.where(filled, g, 0)
    rel = g >= level
    ranks = np.arange(1, depth + 1, dtype=np.float64)

    out: dict[str, np.ndarray] = {}

    for k in cutoffs:
        out[f"recall@{k}"] = rel[:, :k].any(axis=1).astype(np.float64)
    for k in cutoffs:
        out[f"precision@{k}"] = rel[:, :k].sum(axis=1).astype(np.float64) / k
    for k in cutoffs:
        top = rel[:, :k]
        rr = np.zeros(n, dtype=np.float64)
        if top.shape[1]:
            hit = top.any(axis=1)
            rr[hit] = 1.0 / ranks[top[hit].argmax(axis=1)]
        out[f"mrr@{k}"] = rr

    dcg = _cum_dcg(g)
    if ideal is None:
        best = _cum_dcg(-np.sort(-g, axis=1))
    else:
        if len(ideal) != n:
            raise InputError(f"ideal has {len(ideal)} grade vectors for {n} questions")
        width = max(cutoffs)
        top_ideal = np.zeros((n, width), dtype=np.int64)
        for q, vec in enumerate(ideal):
            v = np.asarray(vec).reshape(-1)
            if v.size and not np.issubdtype(v.dtype, np.integer):
                raise InputError(f"ideal grades of question {q} must be whole numbers")
            v = np.sort(np.clip(v.astype(np.int64), 0, None))[::-1][:width]
            top_ideal[q, : v.size] = v
        best = _cum_dcg(top_ideal)
    for k in cutoffs:
        num, den = _at(dcg, k), _at(best, k)
        nd = np.zeros(n, dtype=np.float64)
        np.divide(num, den, out=nd, where=den != 0)
        out[f"ndcg@{k}"] = nd

    if coverage is not None:
        cov = np.asarray(coverage, dtype=np.float64)
        if cov.shape != (n, len(cutoffs)):
            raise InputError(
                f"coverage must have shape {(n, len(cutoffs))} (questions x cutoffs),"
                f" got {cov.shape}"
            )
        for j, k in enumerate(cutoffs):
            out[f"coverage@{k}"] = cov[:, j].copy()

    if words is not None:
        w = np.asarray(words, dtype=np.float64)
        if w.shape != (n, depth):
            raise InputError(f"words must have the shape of grades {(n, depth)}, got {w.shape}")
        cum = np.cumsum(np.where(filled, w, 0.0), axis=1)
        for k in cutoffs:
            out[f"words@{k}"] = _at(cum, k).copy()

    return out

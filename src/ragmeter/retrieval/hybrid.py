"""Hybrid retrieval: fuse the rankings of two (or more) retrievers.

``method="rrf"`` (default) is reciprocal rank fusion: an item's score is
``sum(1 / (k + rank))`` over the retrievers that returned it, with ``rank``
counted from 1 within each retriever's top ``depth`` and ``k = 60`` by default.

``method="weighted"`` is a convex combination of normalised scores: for each
question, each retriever's top-``depth`` scores are min-max normalised to
``[0, 1]`` (``(s - min) / (max - min)``, all ``1.0`` when max equals min), an
item absent from a retriever's list counts ``0`` for it, and the fused score is
``alpha * first + (1 - alpha) * second``.

In both, fused scores tie-break by item index (earlier text first).

Texts a lexical retriever did not match are left out of the fusion: BM25
scores a text that shares no word with the question 0, and a search engine
would not return it, so it gets no rank (``keep_unmatched=True`` fuses them
too, in index order). A retriever marks its no-match score with its
``unmatched_score`` hook (see :class:`ragmeter.retrieval.base.Retriever`);
BM25's is 0.

The parts are retriever objects: :func:`ragmeter.retrieval.registry.make_retriever`
builds them from config entries and passes them in.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ragmeter.errors import InputError
from ragmeter.retrieval.base import Ranking, Retriever

METHODS = ("rrf", "weighted")


def _emit(fused: list[dict[int, float]], k: int) -> Ranking:
    n_q = len(fused)
    ids = np.full((n_q, k), -1, dtype=np.int64)
    scores = np.full((n_q, k), -np.inf)
    for q, cand in enumerate(fused):
        if not cand:
            continue
        items = np.fromiter(cand.keys(), dtype=np.int64, count=len(cand))
        vals = np.fromiter(cand.values(), dtype=np.float64, count=len(cand))
        order = np.lexsort((items, -vals))[:k]
        ids[q, : order.size] = items[order]
        scores[q, : order.size] = vals[order]
    return Ranking(ids=ids, scores=scores)


def _check(rankings: Sequence[Ranking]) -> int:
    if not rankings:
        raise ValueError("nothing to fuse")
    n_q = {r.ids.shape[0] for r in rankings}
    if len(n_q) != 1:
        raise ValueError(f"rankings cover different numbers of questions: {sorted(n_q)}")
    return n_q.pop()


def rrf_fuse(
    rankings: Sequence[Ranking],
    k: int,
    rrf_k: float = 60.0,
    weights: Sequence[float] | None = None,
) -> Ranking:
    """Reciprocal rank fusion of ``rankings`` (one row per question), top ``k``.

    Item at 1-based rank ``r`` in a ranking adds ``w / (rrf_k + r)``; padding
    (id -1) is skipped. Ties break by item index.
    """
    n_q = _check(rankings)
    weights = [1.0] * len(rankings) if weights is None else list(weights)
    fused: list[dict[int, float]] = [{} for _ in range(n_q)]
    for w, ranking in zip(weights, rankings, strict=True):
        for q in range(n_q):
            acc = fused[q]
            for r, item in enumerate(ranking.ids[q].tolist(), start=1):
                if item < 0:
                    continue
                acc[item] = acc.get(item, 0.0) + w / (rrf_k + r)
    return _emit(fused, k)


def minmax(scores: np.ndarray) -> np.ndarray:
    """Min-max normalisation of finite scores to [0, 1]; all 1.0 if they are equal."""
    scores = np.asarray(scores, dtype=np.float64)
    if scores.size == 0:
        return scores
    lo, hi = float(scores.min()), float(scores.max())
    if hi <= lo:
        return np.ones_like(scores)
    return (scores - lo) / (hi - lo)


def weighted_fuse(rankings: Sequence[Ranking], k: int, weights: Sequence[float]) -> Ranking:
    """Weighted sum of per-question min-max normalised scores, top ``k``.

    Each ranking's valid entries (id >= 0, finite score) for a question are
    normalised on their own; an item missing from a ranking adds 0 for it.
    Ties break by item index.
    """
    n_q = _check(rankings)
    fused: list[dict[int, float]] = [{} for _ in range(n_q)]
    for w, ranking in zip(weights, rankings, strict=True):
        for q in range(n_q):
            ids, sc = ranking.ids[q], ranking.scores[q]
            ok = (ids >= 0) & np.isfinite(sc)
            norm = minmax(sc[ok])
            acc = fused[q]
            for item, v in zip(ids[ok].tolist(), norm.tolist(), strict=True):
                acc[item] = acc.get(item, 0.0) + w * v
    return _emit(fused, k)


def drop_unmatched(ranking: Ranking, threshold: float) -> Ranking:
    """``ranking`` with entries scored ``<= threshold`` turned into padding."""
    gone = ranking.scores <= threshold
    if not gone.any():
        return ranking
    return Ranking(
        ids=np.where(gone, -1, ranking.ids), scores=np.where(gone, -np.inf, ranking.scores)
    )


class HybridRetriever(Retriever):
    """Fusion of two retrievers that index the same texts.

    Parameters
    ----------
    of:
        The two retrievers to fuse (:class:`~ragmeter.retrieval.base.Retriever`
        objects; ``make_retriever`` builds them from kind strings and spec dicts).
    method:
        ``"rrf"`` (reciprocal rank fusion) or ``"weighted"``.
    k:
        The RRF constant (60 by default; larger flattens the rank weights).
    depth:
        How many of each side's top results are fused (at least the ``k`` of
        :meth:`rank`).
    alpha:
        For ``"weighted"``: weight of the first retriever; the second gets
        ``1 - alpha``.
    keep_unmatched:
        Also fuse texts a lexical retriever did not match (BM25 score 0).
    """

    def __init__(
        self,
        name: str = "hybrid",
        of: Sequence[Retriever] = (),
        method: str = "rrf",
        k: float = 60,
        depth: int = 100,
        alpha: float = 0.5,
        keep_unmatched: bool = False,
    ) -> None:
        if method not in METHODS:
            raise InputError(
                f"retriever {name!r}: unknown fusion method {method!r}; use one of {METHODS}"
            )
        if isinstance(of, str) or len(of) != 2:
            raise InputError(f"retriever {name!r}: of= must list exactly two retrievers")
        if not (isinstance(k, int | float) and math.isfinite(k) and k >= 0):
            raise InputError(f"retriever {name!r}: k must be a number >= 0, got {k!r}")
        if int(depth) < 1:
            raise InputError(f"retriever {name!r}: depth must be at least 1")
        if not 0.0 <= float(alpha) <= 1.0:
            raise InputError(f"retriever {name!r}: alpha must be between 0 and 1")
        self.name = name
        self.method = method
        self.rrf_k = float(k)
        self.depth = int(depth)
        self.alpha = float(alpha)
        self.keep_unmatched = bool(keep_unmatched)
        for part in of:
            if not isinstance(part, Retriever):
                raise InputError(
                    f"retriever {name!r} cannot fuse {part!r}: a hybrid fuses retrievers that "
                    "rank ragmeter's chunks (bm25, dense, ...; subclass "
                    "ragmeter.retrieval.base.Retriever), not ones that return their own spans"
                )
        self.retrievers: list[Retriever] = list(of)

    def describe(self) -> dict[str, Any]:
        parts = [r.describe() for r in self.retrievers]
        info: dict[str, Any] = {
            "name": self.name,
            "kind": "hybrid",
            "method": self.method,
            "depth": self.depth,
            "keep_unmatched": self.keep_unmatched,
            "of": parts,
        }
        if self.method == "rrf":
            info["k"] = self.rrf_k
        else:
            info["alpha"] = self.alpha
            info["normalisation"] = "min-max per question over each side's top depth"
        return info

    def index(self, texts: Sequence[str]) -> None:
        for r in self.retrievers:
            r.index(texts)

    def follow_progress(self, progress: Callable[[str, int, int], None], label: str) -> None:
        for r in self.retrievers:
            r.follow_progress(progress, label)

    def release(self) -> None:
        for r in self.retrievers:
            r.release()

    def rank(self, questions: Sequence[str], k: int) -> Ranking:
        depth = max(self.depth, k)
        rankings = []
        for r in self.retrievers:
            ranking = r.rank(questions, depth)
            floor = None if self.keep_unmatched else r.unmatched_score
            rankings.append(ranking if floor is None else drop_unmatched(ranking, floor))
        if self.method == "rrf":
            return rrf_fuse(rankings, k, rrf_k=self.rrf_k)
        return weighted_fuse(rankings, k, weights=[self.alpha, 1.0 - self.alpha])

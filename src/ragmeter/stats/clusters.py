"""Questions that share a document: the design effect and cluster-aware intervals.

Questions are written from passages, several per document, and a document that is
hard to chunk makes all of its questions hard together. The question-level bootstrap
then treats 135 questions as 135 independent draws and its intervals come out too
narrow. This module measures that and corrects it:

* **Clusters** are integer codes per question (:func:`cluster_codes`), in the order
  clusters first appear.
* **The design effect** (:func:`design_effects`) is the ratio of the variance of the
  mean when whole clusters are resampled to its variance when questions are:
  ``sum_g (S_g - m_g * mean)**2 / sum_i (y_i - mean)**2`` (``S_g`` the sum and
  ``m_g`` the size of cluster ``g``; the linearised variances the two bootstraps
  estimate, so it carries no resampling noise). Its interval is the percentile
  interval of the same ratio over the cluster resamples of :func:`cluster_bootstrap_many`
  (same seed, same rounds). ``questions / deff`` is the effective number of questions.
* **The cluster bootstrap** (:func:`cluster_bootstrap_many`) resamples whole clusters
  with the seeded mulberry32 draws of :mod:`ragmeter.stats.draws` (cluster ``g`` of
  round ``b`` is ``floor(next() * G)``, the question bootstrap's order with ``G`` in
  place of ``n``); the mean of a round is the resampled clusters' total over their
  questions. With ``G`` clusters the percentile interval is too narrow by about the
  ratio of Student's t with ``G - 1`` degrees of freedom to the normal quantile, and
  the plug-in variance by ``(G - 1) / G``; each end is moved away from the mean by
  ``t_{G-1} / z * sqrt(G / (G - 1))`` (kept within the scores' range).
* **When clusters decide** (:func:`decide_clusters`): under ``auto`` a run's intervals
  and comparisons are cluster-aware whenever it has at least :data:`AUTO_CLUSTERS`
  clusters, whatever its design effects: a pre-test of the design effect misses
  modest correlations often enough to let false "better" through, and from 30
  clusters on resampling them costs at most a few percent of power where they do not
  matter. With :data:`MIN_CLUSTERS` to 29 clusters, where it costs more, only when
  the design effect's interval of some system's score or some compared pair's
  difference lies wholly above 1 (:func:`clusters_matter`; ``bench/clusters.py``
  measured both: ``docs/statistics.md``, "Questions that share a document").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from statistics import NormalDist
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ragmeter.defaults import DEFAULTS
from ragmeter.errors import InputError
from ragmeter.stats.bootstrap import Estimate, _order_stat, _tails, from_fields, seq_mean
from ragmeter.stats.draws import _index_blocks, rng_name
from ragmeter.stats.exact import betainc, exact_interval
from ragmeter.stats.validate import Seed, as_matrix, check_common, seed_record

__all__ = [
    "AUTO_CLUSTERS",
    "CLUSTER_MODES",
    "MIN_CLUSTERS",
    "ClusterNeed",
    "Clusters",
    "Design",
    "cluster_bootstrap_many",
    "cluster_codes",
    "clusters_matter",
    "decide_clusters",
    "design_effects",
    "documents_to_separate",
    "effective_questions",
    "pair_design_effect",
    "variance_parts",
    "widening",
]

CLUSTER_MODES = ("auto", "none", "document", "field")
MIN_CLUSTERS = 10  # fewest clusters for ``auto`` to make intervals cluster-aware
AUTO_CLUSTERS = 30  # from this many clusters on, ``auto`` always resamples them
CLUSTER_METHOD = "cluster percentile, t-widened"


def cluster_codes(labels: Sequence[object]) -> tuple[np.ndarray, int]:
    """``(codes, G)``: each question's cluster as 0..G-1, numbered by first appearance."""
    seen: dict[str, int] = {}
    codes = np.array([seen.setdefault(str(x), len(seen)) for x in labels], dtype=np.intp)
    return codes, len(seen)


def _check_codes(codes: np.ndarray, n: int) -> int:
    codes = np.asarray(codes)
    if codes.shape != (n,):
        raise InputError(f"clusters: expected one label per question ({n}), got {codes.size}")
    groups = int(codes.max()) + 1 if n else 0
    if groups < 2:
        raise InputError("clusters: at least two clusters are needed to resample them")
    return groups


def widening(groups: int, confidence: float = DEFAULTS.confidence) -> float:
    """How far each percentile end moves out: ``t_{G-1} / z * sqrt(G / (G - 1))``."""
    z = NormalDist().inv_cdf(0.5 + confidence / 2.0)
    return _t_quantile(0.5 + confidence / 2.0, groups - 1) / z * math.sqrt(groups / (groups - 1))


def _t_quantile(p: float, df: int) -> float:
    """Student's t quantile by bisection on its CDF (regularised incomplete beta)."""
    lo, hi = 0.0, 1e3
    for _ in range(200):
        mid = (lo + hi) / 2.0
        if _t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2.0


def _t_cdf(t: float, df: int) -> float:
    x = df / (df + t * t)
    return 1.0 - 0.5 * betainc(df / 2.0, 0.5, x)


def _counts(groups: int, rounds: int, seed: Seed):
    """Yield ``(row0, counts)``: how often each cluster was drawn in each round."""
    for row0, idx in _index_blocks(groups, groups, rounds, seed):
        rows = idx.shape[0]
        flat = np.asarray(idx, dtype=np.intp) + (np.arange(rows, dtype=np.intp) * groups)[:, None]
        yield row0, np.bincount(flat.ravel(), minlength=rows * groups).reshape(rows, groups)


def _cluster_sums(values: np.ndarray, codes: np.ndarray, groups: int) -> np.ndarray:
    """(G, k): the sum of each column of ``values`` (n, k) within each cluster."""
    out = np.zeros((groups, values.shape[1]))
    np.add.at(out, codes, values)
    return out


def _resampled_cluster_means(
    m: np.ndarray, codes: np.ndarray, groups: int, rounds: int, seed: Seed
) -> np.ndarray:
    """(rounds, series): each round's total of the drawn clusters over their questions."""
    sums = _cluster_sums(m.T, codes, groups)
    sizes = np.bincount(codes, minlength=groups).astype(np.float64)
    out = np.empty((rounds, m.shape[0]))
    for row0, counts in _counts(groups, rounds, seed):
        c = counts.astype(np.float64)
        out[row0 : row0 + c.shape[0]] = (c @ sums) / (c @ sizes)[:, None]
    return out


def effective_questions(
    questions: int, deff: float | None, groups: int, confidence: float = DEFAULTS.confidence
) -> float:
    """The questions an exact interval of clustered 0/1 scores counts (Korn and
    Graubard 1998): ``questions / max(1, deff)``, times ``(z / t_{G-1})**2`` for the
    few clusters the spread is measured on. Never more than ``questions``: grouping
    questions never claims more certainty than independent ones would (a design effect
    below 1, or none measurable, counts as 1)."""
    z = NormalDist().inv_cdf(0.5 + confidence / 2.0)
    t = _t_quantile(0.5 + confidence / 2.0, groups - 1)
    return questions / max(1.0, deff or 1.0) * (z / t) ** 2


def cluster_bootstrap_many(
    matrix: ArrayLike,
    codes: ArrayLike,
    rounds: int = DEFAULTS.rounds,
    seed: Seed = DEFAULTS.seed,
    confidence: float = DEFAULTS.confidence,
) -> list[Estimate]:
    """One :class:`Estimate` per row of ``matrix`` from resampling whole clusters.

    The percentile interval of the resampled means, each end moved away from the
    mean by :func:`widening` and kept within the row's smallest and largest score;
    ``method`` records it and ``n`` stays the number of questions. A row of 0/1 scores
    also carries the exact interval where :func:`ragmeter.stats.exact.exact_interval` asks
    for one at the row's :func:`effective_questions` (its design effect, by the
    linearised ratio of :func:`design_effects`), as the question-level estimates do.
    """
    m = as_matrix(matrix, "matrix")
    check_common(rounds, seed, "percentile", confidence)
    codes = np.asarray(codes, dtype=np.intp)
    groups = _check_codes(codes, m.shape[1])
    means = _resampled_cluster_means(m, codes, groups, rounds, seed)
    lo_q, hi_q = _tails(confidence)
    lo_k, hi_k = _order_stat(rounds, lo_q), _order_stat(rounds, hi_q)
    wide = widening(groups, confidence)
    deffs = _observed_deffs(m, codes, groups)
    out = []
    for j in range(m.shape[0]):
        observed = seq_mean(m[j])
        part = np.partition(means[:, j], sorted({lo_k, hi_k}))
        low = observed - wide * max(0.0, observed - float(part[lo_k]))
        high = observed + wide * max(0.0, float(part[hi_k]) - observed)
        est = Estimate(
            mean=observed,
            low=max(float(m[j].min()), low) + 0.0,
            high=min(float(m[j].max()), high) + 0.0,
            n=int(m.shape[1]),
            rounds=rounds,
            seed=seed_record(seed),
            method=CLUSTER_METHOD,
            rng=rng_name(seed),
            confidence=confidence,
        )
        deff = float(deffs[j]) if np.isfinite(deffs[j]) else None
        effective = effective_questions(est.n, deff, groups, confidence)
        exact = exact_interval(m[j], est.low, est.high, confidence, effective)
        out.append(est if exact is None else replace(est, exact=exact))
    return out


def _observed_deffs(m: np.ndarray, codes: np.ndarray, groups: int) -> np.ndarray:
    """Each row's design effect on the data as observed (NaN: no spread)."""
    y = m.T
    sizes = np.bincount(codes, minlength=groups).astype(np.float64)
    s = _cluster_sums(y, codes, groups)
    q = _cluster_sums(y * y, codes, groups)
    return _ratio(s, q, sizes, np.ones((1, groups)))[0]


@dataclass(frozen=True)
class Design:
    """The design effect of one mean: ``deff`` with its interval, the clusters, and
    ``effective`` = questions / deff. ``deff`` is None when every score is equal."""

    clusters: int
    questions: int
    deff: float | None
    low: float | None
    high: float | None
    rounds: int
    seed: int | None
    confidence: float = DEFAULTS.confidence

    @property
    def effective(self) -> float | None:
        """The effective number of questions, ``questions / deff``."""
        if self.deff is None or self.deff <= 0:
            return None
        return self.questions / self.deff

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["effective"] = self.effective
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Design:
        return from_fields(cls, data)

    @property
    def above_one(self) -> bool:
        """Whether the whole interval lies above 1 (clustering measurably widens)."""
        return self.low is not None and self.low > 1.0


def design_effects(
    matrix: ArrayLike,
    codes: ArrayLike,
    rounds: int = DEFAULTS.rounds,
    seed: Seed = DEFAULTS.seed,
    confidence: float = DEFAULTS.confidence,
) -> list[Design]:
    """The design effect of each row's mean, with its percentile interval over the
    cluster resamples (the draws of :func:`cluster_bootstrap_many`)."""
    m = as_matrix(matrix, "matrix")
    check_common(rounds, seed, "percentile", confidence)
    codes = np.asarray(codes, dtype=np.intp)
    groups = _check_codes(codes, m.shape[1])
    y = m.T  # (n, k)
    sizes = np.bincount(codes, minlength=groups).astype(np.float64)
    s = _cluster_sums(y, codes, groups)  # (G, k)
    q = _cluster_sums(y * y, codes, groups)
    observed = _ratio(s, q, sizes, np.ones((1, groups)))[0]  # as _observed_deffs
    ratios = np.empty((rounds, m.shape[0]))
    for row0, counts in _counts(groups, rounds, seed):
        c = counts.astype(np.float64)
        ratios[row0 : row0 + c.shape[0]] = _ratio(s, q, sizes, c)
    lo_q, hi_q = _tails(confidence)
    lo_k, hi_k = _order_stat(rounds, lo_q), _order_stat(rounds, hi_q)
    out = []
    for j in range(m.shape[0]):
        if not np.isfinite(observed[j]):
            out.append(Design(groups, m.shape[1], None, None, None, rounds, seed_record(seed)))
            continue
        col = ratios[:, j]
        col = np.where(np.isfinite(col), col, float(observed[j]))  # a round with no spread
        part = np.partition(col, sorted({lo_k, hi_k}))
        out.append(
            Design(
                groups,
                int(m.shape[1]),
                float(observed[j]),
                float(part[lo_k]),
                float(part[hi_k]),
                rounds,
                seed_record(seed),
                confidence,
            )
        )
    return out


def _ratio(s: np.ndarray, q: np.ndarray, sizes: np.ndarray, c: np.ndarray) -> np.ndarray:
    """(rounds, k): ``sum_g c_g (S_g - m_g ybar)^2 / sum_g c_g (Q_g - ...)`` per round."""
    n = c @ sizes  # (rounds,)
    total = c @ s  # (rounds, k)
    ybar = total / n[:, None]
    between = (
        c @ (s * s) - 2.0 * ybar * (c @ (s * sizes[:, None])) + ybar**2 * (c @ sizes**2)[:, None]
    )
    within = c @ q - n[:, None] * ybar**2
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.maximum(between, 0.0) / within
    tiny = 1e-12 * np.maximum(1.0, c @ q)
    return np.where(within > tiny, out, np.nan)


@dataclass(frozen=True)
class Clusters:
    """How a run's questions cluster, and whether its intervals and comparisons took it
    into account: ``source`` (``"document"`` or ``"field"``), ``count`` clusters,
    ``questions``, the ``mode`` asked for and ``used`` (cluster-aware numbers), with
    ``reason`` in words."""

    source: str
    count: int
    questions: int
    mode: str
    used: bool
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def per_cluster(self) -> float:
        """Questions per cluster, on average."""
        return self.questions / self.count


def decide_clusters(
    main: np.ndarray,
    labels: Sequence[object] | None,
    mode: str,
    seed: Seed,
    rounds: int,
    confidence: float = DEFAULTS.confidence,
    *,
    source: str = "document",
    metric: str = "the compared metric",
) -> tuple[Clusters | None, np.ndarray | None]:
    """``(clusters, codes)``: the one decision whether a run's intervals and comparisons
    resample whole clusters. ``codes`` is None unless they do: ``mode`` "document" or
    "field" always (with two clusters or more); "auto" with at least
    :data:`AUTO_CLUSTERS` clusters always, and with fewer when :func:`clusters_matter`
    holds for the design effects of ``main``'s rows (systems x questions) and of every
    pair's differences; "none" never (``clusters`` is then None too). Every question in
    one cluster leaves nothing to resample: under "auto" the run has no clusters
    (``clusters`` None); asked for, ``clusters`` says so (``used`` False, its
    ``reason`` one line for the terminal and summary.json)."""
    if labels is None or mode == "none":
        return None, None
    codes, groups = cluster_codes(labels)
    if groups < 2:
        if mode == "auto" or not len(codes):
            return None, None
        where = "document" if source == "document" else "cluster"
        reason = (
            f"asked for (clusters = {mode}), but all {len(codes)} questions are in one {where}, "
            f"so there is nothing to resample: the numbers are question-level"
        )
        return Clusters(source, groups, len(codes), mode, False, reason), None
    if mode != "auto":
        used, reason = True, f"asked for (clusters = {mode})"
    elif groups >= AUTO_CLUSTERS:
        used = True
        reason = f"{groups} clusters (auto resamples them from {AUTO_CLUSTERS} on)"
    else:
        k = main.shape[0]
        pairs = [main[i] - main[j] for i in range(k) for j in range(i + 1, k)]
        designs = design_effects(np.vstack([main, *pairs]), codes, rounds, seed, confidence)
        if clusters_matter(designs, groups):
            used = True
            reason = (
                f"{groups} clusters and a design effect on {metric} whose interval lies above 1"
            )
        elif groups < MIN_CLUSTERS:
            used, reason = False, f"fewer than {MIN_CLUSTERS} clusters"
        else:
            used, reason = (
                False,
                (
                    f"no design effect on {metric} measurably above 1, on {groups} clusters "
                    f"(fewer than {AUTO_CLUSTERS})"
                ),
            )
    info = Clusters(source, groups, len(codes), mode, used, reason)
    return info, codes if used else None


def clusters_matter(designs: Sequence[Design], groups: int) -> bool:
    """The ``auto`` rule below :data:`AUTO_CLUSTERS` clusters (a pre-test, which lets
    false "better" through at modest correlations; ``docs/statistics.md``): at least
    :data:`MIN_CLUSTERS` clusters and some design effect's interval wholly above 1."""
    return groups >= MIN_CLUSTERS and any(d.above_one for d in designs)


@dataclass(frozen=True)
class ClusterNeed:
    """What settles a paired difference when questions come in clusters.

    ``questions``: the questions the planned difference needs at ``deff``, the design
    effect of the pair's mean at the run's ``per_document`` questions a document
    (:func:`pair_design_effect`); ``documents``: the clusters they make at
    ``per_document`` each, ``more_documents`` beyond the ``clusters`` there are;
    ``more_questions``: questions to add on the same clusters instead (None: no number
    would do, since the clusters' own spread stays); ``floor``: the smallest difference
    these clusters can separate with unlimited questions on them (0 when the clusters
    do not differ).
    """

    clusters: int
    per_document: float
    documents: int
    more_documents: int
    more_questions: int | None
    floor: float
    questions: int = 0
    deff: float = 1.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def variance_parts(x: ArrayLike, codes: ArrayLike) -> tuple[float, float]:
    """``(between, within)``: the one-way analysis-of-variance estimates of the spread
    between clusters' true means and of questions within a cluster (moment estimators,
    the between part floored at 0)."""
    x = np.asarray(x, dtype=np.float64)
    codes = np.asarray(codes, dtype=np.intp)
    groups = _check_codes(codes, x.size)
    n = x.size
    sizes = np.bincount(codes, minlength=groups).astype(np.float64)
    means = np.bincount(codes, weights=x, minlength=groups) / sizes
    within = float(np.sum((x - means[codes]) ** 2)) / max(1, n - groups)
    between_ms = float(np.sum(sizes * (means - x.mean()) ** 2)) / (groups - 1)
    m0 = (n - float(np.sum(sizes**2)) / n) / (groups - 1)
    return max(0.0, (between_ms - within) / m0), within


def pair_design_effect(diff: ArrayLike, codes: ArrayLike) -> float:
    """The design effect the planner uses for a paired difference's mean: ``(m *
    between + within) / variance`` at the run's ``m`` questions a cluster
    (:func:`variance_parts`; the variance of the differences with ``n - 1``), at least
    1, so that planning in clusters never promises fewer questions than planning
    without them; 1 when the differences do not vary."""
    d = np.asarray(diff, dtype=np.float64)
    codes = np.asarray(codes, dtype=np.intp)
    groups = _check_codes(codes, d.size)
    between, within = variance_parts(d, codes)
    spread = float(np.var(d, ddof=1)) if d.size > 1 else 0.0
    if not spread > 0:
        return 1.0
    return max(1.0, (d.size / groups * between + within) / spread)


def documents_to_separate(
    diff: ArrayLike,
    codes: ArrayLike,
    difference: float,
    confidence: float = DEFAULTS.confidence,
    power: float = DEFAULTS.power,
    questions: int | None = None,
) -> ClusterNeed:
    """Clusters (at the observed questions per cluster), or questions on the same
    clusters, that separate a paired ``difference`` at two-sided ``1 - confidence``
    with ``power``: the mean of ``G`` clusters of ``m`` questions varies by
    ``(between + within / m) / G`` (:func:`variance_parts`). ``questions``: what the
    question-level planner (:func:`ragmeter.stats.questions_to_separate`) says at this
    level; the clustered need is that times :func:`pair_design_effect`, and the
    documents are those questions at ``m`` a document (the one planner's number,
    in documents)."""
    d = np.asarray(diff, dtype=np.float64)
    codes = np.asarray(codes, dtype=np.intp)
    groups = _check_codes(codes, d.size)
    between, within = variance_parts(d, codes)
    per = d.size / groups
    nd = NormalDist()
    z = nd.inv_cdf(0.5 + confidence / 2.0) + nd.inv_cdf(power)
    target = (difference / z) ** 2  # the largest variance of the mean that separates it
    deff = pair_design_effect(d, codes)
    if questions is None:
        spread = float(np.var(d, ddof=1)) if d.size > 1 else 0.0
        questions = max(1, math.ceil(round(spread / target, 9)))
    need = max(1, math.ceil(round(questions * deff, 9)))
    docs = max(2, math.ceil(round(need / per, 9)))
    if groups * target > between:
        m_star = within / (groups * target - between)
        more_q: int | None = max(0, math.ceil(groups * m_star - d.size))
    else:
        more_q = None
    return ClusterNeed(
        clusters=groups,
        per_document=per,
        documents=docs,
        more_documents=max(0, docs - groups),
        more_questions=more_q,
        floor=z * math.sqrt(between / groups),
        questions=need,
        deff=deff,
    )

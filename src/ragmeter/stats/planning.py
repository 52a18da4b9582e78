"""How many questions would settle it: the arithmetic behind ``ragmeter plan``.

For each system, the interval its metric would have at n, 2n, 4n and 8n questions
and the questions a target half-width needs; for each pair, the questions a paired
difference of a given size needs, alone and as one of the run's family of pairs under
its rule (a table of 21 pairs tests its first pair at 0.05/21 under Holm, so a pair
needs more questions there than alone). Systems with no spread and pairs that never
differ are named, since no number of questions narrows or separates them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
from numpy.typing import ArrayLike

from ragmeter.defaults import DEFAULTS
from ragmeter.errors import InputError
from ragmeter.stats import SizeRow, questions_for_half_width, questions_to_separate, sample_size
from ragmeter.stats.clusters import (
    ClusterNeed,
    cluster_codes,
    documents_to_separate,
    pair_design_effect,
)
from ragmeter.stats.exact import exact_interval, questions_for_exact_half_width
from ragmeter.stats.plan_inputs import PlannedRow, PlannedRule, PlannedRun
from ragmeter.stats.validate import alpha_of

__all__ = [
    "PairNeed",
    "Plan",
    "PlanningInputs",
    "SystemNeed",
    "family_level",
    "family_sentence",
    "first_level",
    "cluster_sentence",
    "pair_needs",
    "plan_questions",
    "plan_run",
    "planning_inputs",
    "questions_needed",
    "undecided_first",
]


def family_level(pairs: int, alpha: float = alpha_of(DEFAULTS.confidence)) -> float:
    """The level one true difference must pass in a family of ``pairs`` pairs.

    Holm tests the smallest p-value first, at ``alpha / pairs``; when one pair truly
    differs and the others do not, that first step decides it. The step-down max-T
    rule is never stricter (its first level is at least this one, more when the
    pairs share questions), so questions planned at this level suffice under either.
    """
    if pairs < 1:
        raise InputError(f"a family has at least one pair, got {pairs}")
    return alpha / pairs


def first_level(rule: PlannedRule | None, rows: Sequence[PlannedRow]) -> float | None:
    """The level the first step of a run's max-T table tested at, or None.

    Max-T's first step rejects the pair with the smallest p exactly when that p is
    below this level; it is the smallest ``level`` of the table's rows (later steps
    and the stopping step only raise it). It reflects how much the run's pairs share,
    so it is the level one true difference must pass under the run's own rule (Holm's
    would be ``alpha / pairs``). None for other rules or a family of one.
    """
    if rule is None or getattr(rule, "adjust", None) != "maxt" or rule.pairs < 2:
        return None
    levels = [float(r.level) for r in rows if not r.identical]
    return min(levels) if levels else None


@dataclass(frozen=True)
class SystemNeed:
    """One system: its intervals at larger question sets, and the questions a
    half-width needs. 0/1 scores with no spread (every question a hit, or none) plan
    on their exact interval (``exact``), which more questions narrow; other scores
    with no spread have ``needed`` None, since no number of questions narrows them."""

    system: str
    sizes: list[SizeRow]
    needed: int | None
    constant: float | None = None  # the one score of a system with no spread
    exact: tuple[float, float] | None = None  # 0/1 scores with no spread: the exact interval
    # 0/1 scores with no spread: the questions at which the interval's far end comes within
    # the half-width of the score (its whole width, not half of it, within the target)
    edge: int | None = None
    deff: float = 1.0  # the design effect ``needed`` is planned at


@dataclass(frozen=True)
class PairNeed:
    """One pair: the questions a paired difference needs alone (``needed``) and as one
    of the family (``in_family``, at :func:`family_level`); ``None`` when the pair's
    difference is the same on every question (``identical`` when that is 0)."""

    a: str
    b: str
    needed: int | None
    identical: bool = False
    in_family: int | None = None
    clusters: ClusterNeed | None = None  # documents (or questions on them) that settle it
    deff: float = 1.0  # the design effect ``needed`` and ``in_family`` are planned at
    separated: str | None = None  # the run's own table already separated it: its verdict


@dataclass(frozen=True)
class Plan:
    """Everything ``ragmeter plan`` prints, for one metric."""

    metric: str
    half_width: float
    difference: float
    seed: int
    rounds: int
    systems: list[SystemNeed] = field(default_factory=list)
    pairs: list[PairNeed] = field(default_factory=list)
    family: int = 1  # pairs in the family the run's table decides on together
    rule: str = "maxt"
    alpha: float = alpha_of(DEFAULTS.confidence)
    first: float | None = None  # max-T: the level the run's first step tested at

    @property
    def level(self) -> float:
        """The level one true difference must pass in the family: max-T's first level
        on the run when known (:func:`first_level`), else :func:`family_level`."""
        return self.first if self.first is not None else family_level(self.family, self.alpha)

    def family_needed(self) -> int | None:
        """Median over the pairs of the questions needed in the family (None: no pair)."""
        need = sorted(p.in_family for p in self.pairs if p.in_family is not None)
        return need[len(need) // 2] if need else None

    def single_needed(self) -> int | None:
        """Median over the pairs of the questions one planned pair alone would need."""
        need = sorted(p.needed for p in self.pairs if p.needed is not None)
        return need[len(need) // 2] if need else None


def plan_questions(
    run: PlannedRun,
    metric: str,
    *,
    half_width: float = DEFAULTS.half_width,
    difference: float = DEFAULTS.difference,
    systems: Sequence[str] | None = None,
    seed: int = DEFAULTS.seed,
    rounds: int = DEFAULTS.rounds,
    family: int | None = None,
    rule: str = "maxt",
    alpha: float = alpha_of(DEFAULTS.confidence),
    first: float | None = None,
    clustered: bool | None = None,
) -> Plan:
    """The sample-size view of a run (a :class:`ragmeter.runs.results.Results` or an
    in-memory :class:`ragmeter.runs.search_run.SearchRun`) on ``metric``.

    ``half_width`` and ``difference`` are on the metric's own scale (0.04 is 4 points
    of a share). ``family`` is the number of pairs the run's table decides on
    together under ``rule`` (default: every pair of the systems); each pair's
    ``in_family`` is planned at ``first`` (max-T's first level on the run,
    :func:`first_level`) when given, else at :func:`family_level`. ``clustered``
    (default: whether the run's own comparisons resampled documents, its summary's
    ``clusters.used``) plans each pair at its design effect
    (:func:`ragmeter.stats.clusters.pair_design_effect`), else at 1. A pair the run's
    own table already separated carries its verdict (``separated``).
    """
    for name, value in (("half-width", half_width), ("difference", difference)):
        if not (isinstance(value, int | float) and np.isfinite(value) and value > 0):
            raise InputError(f"the {name} must be a positive number, got {value}")
    names = [str(s) for s in (systems or run.systems)]
    scores = {s: run.scores(s, metric) for s in names}
    m = len(names)
    k = max(1, m * (m - 1) // 2) if family is None else int(family)
    labels = getattr(run, "clusters", None)
    clustered = _clustered(run) if clustered is None else clustered
    grouped = labels if clustered else None
    plan = Plan(
        metric,
        float(half_width),
        float(difference),
        seed,
        rounds,
        family=k,
        rule=rule,
        alpha=float(alpha),
        first=first,
    )
    for s in names:
        x = scores[s]
        flat = bool(np.ptp(x) == 0)
        exact = exact_interval(x, 0.0, 0.0, 1.0 - alpha) if flat else None
        plan.systems.append(
            SystemNeed(
                s,
                sample_size(x, rounds=rounds, seed=seed, confidence=1.0 - alpha),
                questions_needed(x, half_width, 1.0 - alpha, grouped),
                float(x[0]) if flat else None,
                exact,
                None if exact is None else questions_needed(x, half_width / 2.0, 1.0 - alpha),
                system_design_effect(x, grouped),
            )
        )
    needs = pair_needs(
        scores, names, difference, k, alpha, level=first, clusters=labels, clustered=clustered
    )
    plan.pairs.extend(_with_verdicts(run, needs))
    return plan


def _clustered(run: PlannedRun) -> bool:
    """Whether a run's own comparisons resampled whole clusters (its summary says)."""
    info = getattr(getattr(run, "summary", None), "clusters", None)
    return bool(info is not None and info.used)


def _with_verdicts(run: PlannedRun, needs: list[PairNeed]) -> list[PairNeed]:
    """``needs`` with the verdict of each pair the run's own table separated."""
    rows = getattr(getattr(run, "summary", None), "comparisons", None) or []
    found = {
        frozenset((r.a, r.b)): r.verdict
        for r in rows
        if getattr(r, "separated", False) and not getattr(r, "identical", False)
    }
    return [replace(p, separated=found.get(frozenset((p.a, p.b)))) for p in needs]


@dataclass(frozen=True)
class PlanningInputs:
    """What a run's own comparison table says about planning more questions."""

    pairs: int  # pairs in the run's table (every pair of its systems when it has no rule)
    rule: str  # its adjustment: maxt, holm or none (holm for a run saved without a rule)
    alpha: float  # its level: the rule's, else 1 - the run's confidence
    first: float | None  # max-T: the level its first step tested at (:func:`first_level`)

    @property
    def family(self) -> int:
        """The pairs whose first level one true difference must pass: 1 under the seed's
        per-pair rule, which adjusts for none."""
        return 1 if self.rule == "none" else self.pairs


def planning_inputs(run: PlannedRun) -> PlanningInputs:
    """A run's planning inputs (a :class:`ragmeter.runs.results.Results` or a
    :class:`ragmeter.runs.search_run.SearchRun`), read from its summary: ``plan`` and the
    report's sample-size section both plan with these."""
    summary = run.summary
    rule = summary.comparison_rule
    m = len(run.systems)
    return PlanningInputs(
        pairs=rule.pairs if rule is not None else m * (m - 1) // 2,
        rule=rule.adjust if rule is not None else "holm",
        alpha=float(summary.alpha),
        first=first_level(rule, summary.comparisons),
    )


def plan_run(
    run: PlannedRun,
    metric: str | None = None,
    *,
    half_width: float = DEFAULTS.half_width,
    difference: float = DEFAULTS.difference,
    system: str | None = None,
    seed: int | None = None,
    rounds: int | None = None,
    pairs: Sequence[tuple[str, str]] | None = None,
    own_table: bool = False,
    family_size: int | None = None,
    averaged: Mapping[str, ArrayLike] | None = None,
) -> Plan:
    """``ragmeter plan`` as a library call: :func:`plan_questions` under the run's own
    rule, level and family (:func:`planning_inputs`); metric, seed and rounds default to
    the run's. ``system`` plans that one system alone. ``pairs`` plans only those pairs,
    as one family (of ``family_size`` comparisons when the family holds more than the
    pairs planned: a grid's main effects); ``own_table`` says they are the run's own
    table's (its grid family), whose max-T first level on the run then applies (else
    Holm's, an upper bound). ``averaged``: per-question scores on ``metric`` of rows the
    pairs name beside the run's systems (a grid's averaged rows, ``*/R`` and ``S/*``:
    :func:`ragmeter.comparison.effects.averaged_scores`)."""
    summary = run.summary
    metric = metric or summary.metric
    given = planning_inputs(run)
    found = plan_questions(
        run,
        metric,
        half_width=half_width,
        difference=difference,
        systems=[system] if system else None,
        seed=summary.seed if seed is None else seed,
        rounds=rounds or summary.rounds,
        family=given.family if given.pairs > 0 and not system else None,
        rule=given.rule,
        alpha=given.alpha,
        first=None if system else given.first,
    )
    if pairs is None:
        return found
    return _planned_as_family(run, found, pairs, own_table, family_size, averaged)


def _planned_as_family(
    run: PlannedRun,
    found: Plan,
    pairs: Sequence[tuple[str, str]],
    own_table: bool,
    family_size: int | None = None,
    averaged: Mapping[str, ArrayLike] | None = None,
) -> Plan:
    """``found`` with only ``pairs``, planned as one family of ``family_size`` (default:
    the pairs; a family of one under the seed's per-pair rule); a name of ``averaged``
    reads its scores there."""
    k = 1 if found.rule == "none" else (family_size or len(pairs))
    rows = averaged or {}
    scores = {
        s: np.asarray(rows[s], dtype=np.float64) if s in rows else run.scores(s, found.metric)
        for s in {x for pair in pairs for x in pair}
    }
    clusters = getattr(run, "clusters", None)
    needs = [
        need
        for a, b in pairs
        for need in pair_needs(
            scores,
            [a, b],
            found.difference,
            k,
            found.alpha,
            clusters=clusters,
            clustered=_clustered(run),
        )
    ]
    # another family: Holm's first level, an upper bound under max-T
    first = found.first if own_table else None
    return replace(found, family=k, first=first, pairs=_with_verdicts(run, needs))


def run_clusters(run: PlannedRun) -> Sequence[str] | None:
    """Each question's document when the run's own comparisons resampled documents
    (its summary's ``clusters.used``), else None: what every planner plans with."""
    return getattr(run, "clusters", None) if _clustered(run) else None


def system_design_effect(scores: ArrayLike, clusters: Sequence[str] | None = None) -> float:
    """The design effect a system's mean is planned at: the one of
    :func:`ragmeter.stats.clusters.pair_design_effect` over its scores when
    ``clusters`` (each question's document) are given and the scores vary, else 1."""
    x = np.asarray(scores, dtype=np.float64)
    if not clusters or x.size < 2 or not np.ptp(x) > 0:
        return 1.0
    codes, groups = cluster_codes(clusters)
    return pair_design_effect(x, codes) if groups > 1 else 1.0


def questions_needed(
    scores: ArrayLike,
    half_width: float,
    confidence: float = DEFAULTS.confidence,
    clusters: Sequence[str] | None = None,
) -> int | None:
    """The questions an interval of ``± half_width`` (half the interval's width) needs,
    as ``plan`` and the report say it: the normal approximation
    (:func:`ragmeter.stats.questions_for_half_width`), times the system's design effect
    (:func:`system_design_effect`) when ``clusters`` are given; for 0/1 scores with no
    spread (every question a hit, or none) the questions at which the exact interval
    narrows that far (:func:`ragmeter.stats.exact.questions_for_exact_half_width`);
    None for other scores with no spread, which no number of questions narrows."""
    x = np.asarray(scores, dtype=np.float64)
    if x.size and np.ptp(x) > 0:
        need = questions_for_half_width(x, half_width, confidence)
        deff = system_design_effect(x, clusters)
        return need if need is None or deff <= 1.0 else math.ceil(round(need * deff, 9))
    if exact_interval(x, 0.0, 0.0, confidence) is None:
        return None
    return questions_for_exact_half_width(int(np.count_nonzero(x)), x.size, half_width, confidence)


def pair_needs(
    scores: dict[str, np.ndarray],
    names: Sequence[str],
    difference: float,
    family: int,
    alpha: float = alpha_of(DEFAULTS.confidence),
    level: float | None = None,
    clusters: Sequence[str] | None = None,
    clustered: bool = False,
) -> list[PairNeed]:
    """Every pair of ``names``: questions to separate ``difference`` alone and as one of
    ``family`` pairs (at ``level``, by default :func:`family_level`), at the record's power
    (:data:`ragmeter.defaults.DEFAULTS`, 0.8); with
    ``clusters`` (each question's document) also the documents that would settle it in
    the family (:func:`ragmeter.stats.clusters.documents_to_separate`). ``clustered``
    (the run's comparisons resample documents) plans both numbers at the pair's design
    effect, so the table, the documents and the report say one number. The one planner
    of "how many questions": ``plan``, its documents line and the report ask here."""
    level = family_level(family, alpha) if level is None else level
    codes, groups = cluster_codes(clusters) if clusters else (None, 0)
    out = []
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            diff = scores[a] - scores[b]
            if np.ptp(diff) == 0:
                out.append(PairNeed(a, b, None, identical=bool(diff[0] == 0)))
                continue
            need = questions_to_separate(scores[a], scores[b], difference, 1.0 - alpha)
            wide = questions_to_separate(scores[a], scores[b], difference, 1.0 - level)
            docs = (
                documents_to_separate(diff, codes, difference, 1.0 - level, questions=wide)
                if codes is not None and groups > 1
                else None
            )
            deff = docs.deff if docs is not None and clustered else 1.0
            if deff > 1.0:
                need, wide = math.ceil(round(need * deff, 9)), docs.questions
            out.append(PairNeed(a, b, need, in_family=wide, clusters=docs, deff=deff))
    return out


def undecided_first(needs: Sequence[PairNeed], by_need: bool = False) -> list[PairNeed]:
    """The pairs as ``plan`` lists them: those the run left undecided first, then those
    its table already separated, each in the order given (``by_need``: most questions
    needed first); a list with no separated pair keeps its order."""

    def key(p: PairNeed) -> tuple[int, int]:
        need = -(p.in_family or p.needed or 0) if by_need else 0
        return (1 if p.separated else 0), need

    return sorted(needs, key=key)


def _undecided(needs: list[PairNeed]) -> list[PairNeed]:
    """The pairs a sentence's median is over: those not yet separated, when any."""
    open_ = [p for p in needs if not p.separated]
    return open_ or needs


def family_sentence(
    needs: list[PairNeed],
    difference: float,
    family: int,
    rule: str,
    alpha: float = alpha_of(DEFAULTS.confidence),
    scale: float = 100.0,
    first: float | None = None,
) -> str | None:
    """One sentence for the sample-size views: what a family of this size costs
    (``first``: the level max-T's first step tested at on the run, if known), over the
    pairs not yet separated."""
    some_separated = any(p.separated for p in needs)
    needs = _undecided(needs)
    wide = sorted(p.in_family for p in needs if p.in_family is not None)
    alone = sorted(p.needed for p in needs if p.needed is not None)
    if not wide:
        return None
    unit = " points" if scale == 100 else ""
    if rule == "none":
        return (
            f"Separating a difference of {difference * scale:g}{unit} takes about "
            f"{alone[len(alone) // 2]:,} questions per pair at power {DEFAULTS.power:g} "
            f"(median over the pairs); the seed's per-pair rule makes no adjustment for the "
            f"{family} pairs, so its tables show false differences."
        )
    if rule == "maxt" and first is not None:
        how = (
            f"max-T's first step tested at {first:.3g} on this run, where Holm's tests at "
            f"{alpha:g}/{family}"
        )
    elif rule == "maxt":
        how = (
            f"planned at Holm's first level, {alpha:g}/{family}; max-T's is never lower, so "
            f"this is an upper bound"
        )
    elif rule == "fdr":
        how = (
            f"Benjamini-Hochberg over {family} pairs tests the first at {alpha:g}/{family} "
            f"when it is the only difference, higher the more are found"
        )
    else:
        how = f"Holm over {family} pairs tests the first at {alpha:g}/{family}"
    at = (
        " Each pair is planned at its design effect, as the questions share documents."
        if any(p.deff > 1.0 for p in needs)
        else ""
    )
    return (
        f"Separating a difference of {difference * scale:g}{unit} at power {DEFAULTS.power:g} "
        f"takes about "
        f"{wide[len(wide) // 2]:,} questions per pair in this table of {family} pairs ({how}), "
        f"against {alone[len(alone) // 2]:,} for one pair planned in advance (median over "
        f"the pairs{' not yet separated' if some_separated else ''}).{at}"
    )


def cluster_sentence(needs: list[PairNeed], difference: float, scale: float = 100.0) -> str | None:
    """One sentence for ``plan`` when questions share documents: the questions (at the
    pair's design effect) and the documents they make (at the run's questions per
    document) that would settle the median pair not yet separated in the family, and
    what more questions on the same documents would and would not buy. The table's
    numbers are these questions when the run's comparisons are cluster-aware; else the
    sentence says the table planned at design effect 1."""
    found = sorted(
        (p for p in _undecided(needs) if p.clusters is not None),
        key=lambda p: p.clusters.documents,
    )
    if not found:
        return None
    pick = found[len(found) // 2]
    c = pick.clusters
    unit = " points" if scale == 100 else ""
    more = (
        f"{c.more_documents:,} more than the {c.clusters} there are"
        if c.more_documents
        else f"the {c.clusters} there are suffice"
    )
    if c.more_questions is None:
        same = (
            f"no number of questions on the same {c.clusters} documents would: their own "
            f"spread leaves differences under {c.floor * scale:.3g}{unit} unsettled"
        )
    else:
        same = (
            f"on the same {c.clusters} documents it would take {c.more_questions:,} more "
            f"questions (each adds less, as the documents' own spread stays)"
        )
    table = (
        ""
        if pick.deff > 1.0 or c.deff <= 1.0
        else " (the table above plans at design effect 1, as this run's comparisons are "
        "question-level)"
    )
    return (
        f"Questions share documents ({c.per_document:.1f} each): separating the planned "
        f"difference of {difference * scale:g}{unit} in this table takes about "
        f"{c.questions:,} questions at the pair's design effect {c.deff:.2f}{table}, that is "
        f"{c.documents:,} documents ({more}) at {c.per_document:.1f} questions each (median "
        f"over the pairs not yet separated); {same}."
    )

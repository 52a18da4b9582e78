"""``ragmeter check``: is a candidate run no worse than a baseline run?

The CI gate reads two results directories, so it lives above them; the paired
comparison itself is :func:`ragmeter.comparison.systems.compare_systems`, the one
comparison every view uses.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from ragmeter import stats
from ragmeter.answers.paired import answer_scores
from ragmeter.comparison.formatting import difference_interval, format_difference
from ragmeter.comparison.systems import ComparisonPlan, compare_systems
from ragmeter.defaults import DEFAULTS
from ragmeter.errors import InputError
from ragmeter.files.safe_text import markdown_text
from ragmeter.history.systems import pair_systems
from ragmeter.runs.meta import RunMeta
from ragmeter.runs.results import Results, as_results
from ragmeter.scoring import measurement
from ragmeter.scoring.names import (
    answer_measure,
    difference_scale,
    difference_unit,
    lower_is_better,
    metric_label,
    metric_scale,
    points_digits,
)
from ragmeter.stats.paired_tests import is_binary

__all__ = [
    "MAX_MARGIN",
    "POINTS",
    "WIDE_MARGIN",
    "Check",
    "check_answers_noninferior",
    "check_noninferior",
    "checked_margin",
    "supported_margin",
]

#: the whole scale: a margin this large would pass a candidate that lost every question.
#: Margins are fractions of the metric's scale (0.02 is 2 points), as every difference the
#: library holds; one of 1 or more is refused, so a margin written in points (2 for 2
#: points) is never read as twice the scale
MAX_MARGIN = 1.0
#: a margin above this (20 points) lets a candidate lose more than a fifth of the scale
#: and pass; it is accepted with a warning
WIDE_MARGIN = 0.20
#: points: hundredths of the metric's scale (what ``ragmeter check --margin`` takes); the
#: gate prints a difference, a loss and a margin as the metric table says a difference of
#: its metric prints (:func:`ragmeter.scoring.names.difference_scale`): in points for a
#: share, at the metric's own scale and three decimals for MRR, nDCG or MAP
POINTS = 100.0

_WHO = {
    "unchanged": "an unchanged candidate",
    "changed": "a candidate that changes as many questions, with no net change,",
    "spread": "a candidate whose per-question differences spread as these do, with no "
    "change on average,",
}


@dataclass(frozen=True)
class Check:
    """Non-inferiority of a candidate run against a baseline run, for one system and metric.

    ``difference`` is candidate - baseline, paired by question id, with its two-sided
    interval (a family of one under the default rule); the check passes when the
    interval's lower end is above ``-margin`` (``margin`` a fraction of the metric's
    scale, as ``difference`` is: 0.02 for 2 points), or when the candidate is
    ``identical``: every per-question score as in the baseline, so nothing was lost
    whatever the interval's width.
    """

    system: str
    metric: str
    margin: float
    baseline: float
    candidate: float
    difference: stats.Estimate
    wins: int
    ties: int
    losses: int
    interval: str
    passed: bool
    #: the smallest margin (a fraction, as ``margin``) a candidate with no net change
    #: would pass on these questions (:func:`supported_margin`); set on FAIL, ``inf``
    #: when none would
    supported_margin: float | None = None
    #: how that candidate differs: ``unchanged``, ``changed`` (0/1 scores: as many
    #: questions changed each way as this candidate changed) or ``spread`` (graded
    #: scores: this candidate's per-question differences less their mean)
    support_basis: str = "unchanged"
    #: the system's name in the baseline run, when it is not ``system`` (a renamed system)
    baseline_system: str | None = None
    #: every per-question score of the candidate equals the baseline's: the check passes
    #: without its interval (nothing was lost, whatever the questions could show)
    identical: bool = False
    #: what the scores are when they are not the run's own (an answer measure: the judge,
    #: the reruns, the questions left out), said after the verdict
    note: str = ""

    @property
    def shown_metric(self) -> str:
        """The measure as the line names it: its row's title for an answer measure
        (:func:`ragmeter.scoring.names.metric_label`), the stored name otherwise."""
        return metric_label(self.metric)

    @property
    def digits(self) -> int:
        """Decimals the points print with (:func:`ragmeter.scoring.names.points_digits`)."""
        return points_digits(self.metric)

    @property
    def shown_system(self) -> str:
        if self.baseline_system is None:
            return self.system
        return f"{self.system} (baseline: {self.baseline_system})"

    def _amount(self, x: float, unit: bool = True) -> str:
        """A loss, a margin or an interval's reach (``x``, a fraction of the scale) as a
        difference of the metric prints (the metric table's scale, digits and unit):
        ``4.1 points`` of recall@5, ``0.041`` of MRR."""
        scale, digits = difference_scale(self.metric)
        named = difference_unit(self.metric) if unit else ""
        return f"{x * scale:.{digits}f}" + (f" {named}" if named else "")

    @property
    def margin_shown(self) -> str:
        """The margin as the gate prints it, at the scale a difference of the metric
        prints at, without trailing zeros: ``2`` (points) of recall@5, ``0.02`` of MRR."""
        scale = difference_scale(self.metric)[0]
        return f"{round(self.margin * scale, 9) + 0.0:g}"  # 0.29 prints 29, never 28.999...

    def _unit(self) -> str:
        """`` points`` after a difference of a share; nothing after one of MRR, nDCG, MAP."""
        named = difference_unit(self.metric)
        return f" {named}" if named else ""

    def _tail(self) -> str:
        """What a FAIL line adds: with an observed loss, the loss and the smallest margin
        this candidate passes (never advice to raise the margin); without one, the margin
        the questions support."""
        if self.passed:
            return ""
        d = self.difference
        scale, digits = difference_scale(self.metric)
        if d.mean * scale <= -0.5 * 10.0**-digits:  # a loss that prints as one
            need = -d.low
            passes = (
                f"only a margin above {self._amount(need)} would pass it"
                if math.isfinite(need) and need < MAX_MARGIN
                else "no margin up to the whole scale would pass it"
            )
            return (
                f"; observed loss {self._amount(-d.mean)}: {passes} (a margin is set "
                f"before the result, never raised to pass one)"
            )
        return self._support()

    def _support(self) -> str:
        s, n = self.supported_margin, self.difference.n
        if s is None:
            return ""
        who = _WHO[self.support_basis]
        if not math.isfinite(s):
            return (
                f"; these {n} questions support no margin: the interval of {who} is "
                f"unbounded (too few questions differ for the test to reach "
                f"{self.difference.confidence * 100:g}%); add questions (`ragmeter plan`)"
            )
        if s >= MAX_MARGIN:
            return (
                f"; these {n} questions support no margin below the whole scale: the "
                f"interval of {who} reaches -{self._amount(s, False)}; add questions "
                f"(`ragmeter plan`)"
            )
        if s == 0:
            return f"; these {n} questions support any margin above 0"
        reach = (
            f"an unchanged candidate's interval reaches -{self._amount(s, False)}"
            if self.support_basis == "unchanged"
            else f"the interval of {who} reaches -{self._amount(s, False)}"
        )
        return f"; these {n} questions support a margin above {self._amount(s)} ({reach})"

    def _identical(self) -> str:
        n = self.difference.n
        return f"identical on all {n} questions" if n != 1 else "identical on its one question"

    @property
    def line(self) -> str:
        d = self.difference
        if self.identical:
            zero = f"{0.0:+.{difference_scale(self.metric)[1]}f}{self._unit()}"
            return (
                f"PASS {self.shown_metric} {self.shown_system}: candidate - baseline = {zero}, "
                f"{self._identical()} (each question scores as in the baseline: no loss to "
                f"test against the margin of {self.margin_shown})" + self._note()
            )
        verdict = "PASS" if self.passed else "FAIL"
        rel = ">" if self.passed else "<="
        return (
            f"{verdict} {self.shown_metric} {self.shown_system}: candidate - baseline = "
            f"{format_difference(d, *difference_scale(self.metric))}{self._unit()} "
            f"({d.confidence * 100:g}% {self.interval}, {d.n} questions, seed {d.seed}, "
            f"{d.rounds} rounds); lower end {rel} -{self.margin_shown} (margin)"
            + self._tail()
            + self._note()
        )

    @property
    def margin_points(self) -> float:
        """The margin in points, hundredths of the scale, as ``--margin`` takes it (0.02
        is 2, of any metric)."""
        return round(self.margin * POINTS, 9) + 0.0  # 0.29 prints 29, never 28.999...

    def _note(self) -> str:
        return f"; {self.note}" if self.note else ""

    def markdown(self) -> str:
        d = self.difference
        scale, digits = metric_scale(self.metric)
        d_scale, d_digits = difference_scale(self.metric)
        head = "passed" if self.passed else "failed"
        title = markdown_text(f"{self.shown_metric}, {self.shown_system}")  # text, never HTML
        interval = (
            []
            if self.identical
            else [
                f"| {d.confidence * 100:g}% interval | "
                f"{difference_interval(d, *difference_scale(self.metric))} |"
            ]
        )
        if self.identical:
            note = (
                f"{self._identical().capitalize()}: each question scores as in the baseline, "
                f"so the check passes without an interval (nothing was lost)."
            )
        else:
            note = (
                f"Non-inferiority: the check passes when the lower end of the paired interval "
                f"is above -{self.margin_shown}{self._unit()}. Interval: {self.interval}; "
                f"{d.n} questions paired by id; seed {d.seed}, {d.rounds} rounds"
                + _sentence(self._tail())
            )
        if self.note:
            note += _sentence(f"; {self.note}").removeprefix(".")
        return "\n".join(
            [
                f"### ragmeter check {head}: {title}",
                "",
                "| | value |",
                "|---|--:|",
                f"| baseline | {self.baseline * scale:.{digits}f} |",
                f"| candidate | {self.candidate * scale:.{digits}f} |",
                f"| candidate - baseline | {d.mean * d_scale:+.{d_digits}f} |",
                *interval,
                f"| margin | -{self.margin_shown} |",
                f"| questions better / same / worse | {self.wins} / {self.ties} / {self.losses} |",
                "",
                note,
                "",
            ]
        )

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["line"] = self.line
        return out


def _sentence(tail: str) -> str:
    """A line's ``; these 30 questions ...`` as the sentence that ends a paragraph:
    ``. These 30 questions ....`` (``.`` alone for no tail)."""
    if not tail:
        return "."
    text = tail.removeprefix("; ")
    return f". {text[:1].upper()}{text[1:]}."


def check_noninferior(
    baseline: Any,
    candidate: Any,
    system: str,
    metric: str,
    margin: float,
    confidence: float = DEFAULTS.confidence,
    rounds: int | None = None,
    seed: int | None = None,
    baseline_system: str | None = None,
) -> Check:
    """Is the candidate run no worse than the baseline by more than ``margin``?

    ``baseline`` and ``candidate`` are :class:`ragmeter.runs.results.Results` (or their
    paths). Both runs must have measured the same thing (corpus, questions, answer
    keys and measurement settings: :mod:`ragmeter.scoring.measurement`) and hold the system
    and the metric; questions are paired by id. A cost (``words@k``) is refused.
    Seed and rounds default to the baseline run's. ``system`` may be the system's
    name in either run: a run that lacks it holds it under another name when one of
    its systems has the same strategy and retriever settings
    (:func:`ragmeter.history.systems.pair_systems`); ``baseline_system`` names it in
    the baseline outright. A candidate identical to the baseline on every question
    passes (``identical``); any other is decided by the interval. ``margin`` is a
    fraction of the metric's scale, as every difference the library holds (0.02 for 2
    points of recall@5, 0.02 of MRR), read by :func:`checked_margin`: from 0 to below 1.
    """
    base, cand, b_name, c_name = _paired_runs(
        baseline, candidate, system, baseline_system, margin, metric
    )
    ids_b, ids_c = base.question_ids, cand.question_ids
    order = {q: i for i, q in enumerate(ids_c)}
    y = base.scores(b_name, metric)
    x = cand.scores(c_name, metric)[[order[q] for q in ids_b]]
    plan = _plan(base, metric, confidence, rounds, seed)
    return _decided(x, y, plan, margin, (b_name, c_name))


def _paired_runs(
    baseline: Any,
    candidate: Any,
    system: str,
    baseline_system: str | None,
    margin: float,
    metric: str | None,
) -> tuple[Results, Results, str, str]:
    """Both runs read, the margin checked, the system named in each, and the runs shown
    to have measured the same thing on the same questions (``metric`` None: answers)."""
    base = as_results(baseline)
    cand = as_results(candidate)
    checked_margin(margin)
    b_name, c_name = pair_systems(
        system,
        (base.meta, base.systems, str(base.path)),
        (cand.meta, cand.systems, str(cand.path)),
        baseline_system,
    )
    _same_measurement(base, cand, metric)
    _same_questions(base, cand)
    return base, cand, b_name, c_name


def check_answers_noninferior(
    baseline: Any,
    candidate: Any,
    system: str,
    measure: str,
    margin: float,
    confidence: float = DEFAULTS.confidence,
    rounds: int | None = None,
    seed: int | None = None,
    baseline_system: str | None = None,
) -> Check:
    """:func:`check_noninferior` on an answer measure (``correct``, ``correct_or_partial``):
    does the candidate's system answer no worse than the baseline's?

    Each run's scores are its paired verdicts' (:func:`ragmeter.answers.paired.
    answer_scores`): per question 0/1 by the run's accuracy judge, unscored as not
    correct, and with reruns (K > 1) each question's mean over its graded reruns, so the
    interval resamples whole questions with their reruns (:mod:`ragmeter.stats.reruns`).
    The questions are those both runs have a graded answer for; the others are left out
    and said. Both runs must have asked the same questions of the same corpus and been
    graded by the same judge; the rule is :func:`check_noninferior`'s.
    """
    base, cand, b_name, c_name = _paired_runs(
        baseline, candidate, system, baseline_system, margin, None
    )
    sb = answer_scores(base, b_name, measure)
    sc = answer_scores(cand, c_name, measure)
    if sb.judge != sc.judge:
        raise InputError(
            f"baseline {base.path} is graded by {sb.judge}, candidate {cand.path} by "
            f"{sc.judge}: a change of judge changes the measurement; grade both with the "
            f"same judge (`ragmeter grade RESULTS --judge SPEC --accuracy-judge NAME`)"
        )
    have_c = set(sc.questions)
    common = [q for q in sb.questions if q in have_c]
    if not common:
        raise InputError(
            f"no question has a graded answer of {system!r} in both {base.path} and "
            f"{cand.path}: nothing to check"
        )
    y = sb.scores[[sb.questions.index(q) for q in common]]
    x = sc.scores[[sc.questions.index(q) for q in common]]
    plan = _plan(base, answer_measure(measure) or measure, confidence, rounds, seed)
    return _decided(x, y, plan, margin, (b_name, c_name), _answer_note(sb, sc, len(common)))


def _answer_note(sb: Any, sc: Any, common: int) -> str:
    """What the answer scores are, said after the gate's verdict."""
    k = max(sb.reruns, sc.reruns)
    parts = [f"answers graded by {sb.judge}"]
    if k > 1:
        parts.append(f"each question's mean over its reruns (K = {sb.reruns} / {sc.reruns})")
    left = len(set(sb.questions) | set(sc.questions)) - common
    if left:
        parts.append(f"{left} questions without a graded answer in one run left out")
    unscored = sb.unscored + sc.unscored
    if unscored:
        parts.append(f"{unscored} unscored answers count as not correct")
    return ", ".join(parts)


def _plan(
    base: Results, metric: str, confidence: float, rounds: int | None, seed: int | None
) -> ComparisonPlan:
    """The gate's plan: candidate against baseline, a family of one, the baseline run's
    seed and rounds unless given."""
    return ComparisonPlan(
        metric,
        base.summary.seed if seed is None else seed,
        base.summary.rounds if rounds is None else rounds,
        confidence,
        pairs=(("candidate", "baseline"),),
    )


def _decided(
    x: np.ndarray,
    y: np.ndarray,
    plan: ComparisonPlan,
    margin: float,
    names: tuple[str, str],
    note: str = "",
) -> Check:
    """The gate's rule on candidate scores ``x`` against baseline scores ``y`` (paired by
    question): identical passes, else the interval's lower end must lie above -margin.
    ``names`` are the system's names in the baseline and the candidate."""
    metric = plan.metric
    # two runs of one system: never folded as "identical", however alike
    table = compare_systems(
        {metric: np.stack([x, y])}, ["candidate", "baseline"], plan, fold_identical=False
    )
    row = table.rows[0]
    diff = row.difference
    # nothing changed on any question: no loss for an interval to bound (a change to the
    # docs passes whatever the questions could show); any change goes to the interval
    identical = bool(np.array_equal(x, y))
    passed = identical or bool(diff.low > -margin)
    supported, basis = supported_margin(x, y, plan) if not passed else (None, "unchanged")
    b_name, c_name = names
    return Check(
        system=c_name,
        metric=metric,
        margin=float(margin) + 0.0,  # -0.0 is 0: never printed "--0"
        baseline=stats.seq_mean(y),
        candidate=stats.seq_mean(x),
        difference=diff,
        wins=row.wins,
        ties=row.ties,
        losses=row.losses,
        interval=table.rule.interval,
        passed=passed,
        supported_margin=supported,
        support_basis=basis,
        baseline_system=None if b_name == c_name else b_name,
        identical=identical,
        note=note,
    )


def checked_margin(margin: float, typed: str | None = None) -> str | None:
    """Refuse a margin that is not a fraction of the metric's scale from 0 to below
    :data:`MAX_MARGIN` (:class:`InputError`: a margin of 1 or more is the whole scale,
    or points written where a fraction is taken); the warning a margin above
    :data:`WIDE_MARGIN` earns, else None. Every way in to the gate reads its margin
    through this one rule; ``typed`` (``"--margin 100"``) is how a person wrote it in
    points, named in the refusal instead of the fraction."""
    said = typed or f"margin {margin:g} ({margin * POINTS:g} points)"
    if not margin >= 0 or not math.isfinite(margin):
        unit = "number of points" if typed else "fraction of the metric's scale (0.02 for 2)"
        raise InputError(f"{said}: a margin must be a non-negative {unit}")
    if margin >= MAX_MARGIN:
        how = (
            "give less than 100 points" if typed else "margins are fractions now: 0.02 for 2 points"
        )
        raise InputError(
            f"{said} is the whole scale or more: a candidate that lost every question would "
            f"pass; {how}"
        )
    if margin > WIDE_MARGIN:
        shown = round(margin * POINTS, 9)
        return (
            f"a margin of {shown:g} points passes a candidate up to {shown:g} points "
            f"worse; above {WIDE_MARGIN * POINTS:g} the gate lets large regressions through "
            f"(set the margin before the result; `ragmeter plan` says how many questions a "
            f"tighter one needs)"
        )
    return None


def _same_measurement(base: Results, cand: Results, metric: str | None) -> None:
    """Both runs hold ``metric``, a score (not a cost), and measured the same thing
    (``metric`` None: an answer measure, which no search metric's settings touch)."""
    for res, label in ((base, "baseline"), (cand, "candidate")):
        if metric is None:
            break
        if metric not in res.metrics:
            raise InputError(
                f"{res.path}: no metric {metric!r} in the {label} run; it has {res.metrics}"
            )
    if metric is not None and lower_is_better(metric):
        raise InputError(
            f"{metric} is a cost (lower is better), not a score a margin protects; check a "
            f"score such as recall@5, and read {metric} beside it"
        )
    differ = measurement.differences(
        RunMeta.from_json(base.meta).measurement,
        RunMeta.from_json(cand.meta).measurement,
        metric or "answers@k",  # the reader reads its own k: the ranking depth is not compared
    )
    if differ:
        raise InputError(
            f"baseline {base.path} and candidate {cand.path} measured different things "
            f"({'; '.join(differ)}); the system under test may change, the measurement may "
            f"not: run both on the same corpus and test set with the same settings"
        )


def _same_questions(base: Results, cand: Results) -> None:
    """Both runs asked the same questions (the same ids, read the same way)."""
    ids_b, ids_c = base.question_ids, cand.question_ids
    if set(ids_b) != set(ids_c) or len(ids_b) != len(ids_c):
        only_b = sorted(set(ids_b) - set(ids_c))
        only_c = sorted(set(ids_c) - set(ids_b))
        where = (
            f"{only_b[0]!r} is only in the baseline"
            if only_b
            else f"{only_c[0]!r} is only in the candidate"
            if only_c
            else "a question id repeats"
        )
        raise InputError(
            f"different test sets: baseline {base.path} has {len(ids_b)} questions, candidate "
            f"{cand.path} has {len(ids_c)}; {where}. Run both on the same test set"
        )
    texts_b = _question_texts(base)
    texts_c = _question_texts(cand)
    if texts_b is not None and texts_c is not None:
        for qid in ids_b:
            if texts_b.get(qid) != texts_c.get(qid):
                raise InputError(
                    f"different test sets: question {qid!r} reads differently in "
                    f"{base.path} and {cand.path}. Run both on the same test set"
                )


def supported_margin(x: np.ndarray, y: np.ndarray, plan: ComparisonPlan) -> tuple[float, str]:
    """The smallest margin (a fraction of the metric's scale, as the gate takes) that
    candidate scores ``x`` against baseline scores ``y`` could pass with no net change,
    and how that candidate is made: the lower end of its interval under ``plan``,
    negated (``inf`` when unbounded).

    0/1 scores: a candidate that changes as many questions as ``x`` does, half each
    way (Tango's interval depends on those counts alone; none changed: ``unchanged``).
    Graded scores: ``x``'s per-question differences less their mean (``spread``);
    their interval is this candidate's moved to a mean of 0, so a FAIL with no
    observed loss never reads as a margin the questions support.
    """
    d = x - y
    changed = int(np.count_nonzero(d))
    if not changed:
        basis, x0, y0 = "unchanged", y, y
    elif is_binary(np.stack([x, y])):
        basis = "changed"
        y0 = np.zeros_like(y)
        x0 = np.zeros_like(y)
        x0[: (changed + 1) // 2] = 1.0
        y0[(changed + 1) // 2 : changed] = 1.0
    else:
        basis, x0, y0 = "spread", y + (d - d.mean()), y
    low = (
        compare_systems(
            {plan.metric: np.stack([x0, y0])}, ["candidate", "baseline"], plan, fold_identical=False
        )
        .rows[0]
        .difference.low
    )
    if not math.isfinite(low):
        return math.inf, basis
    return max(0.0, -low), basis


def _question_texts(res: Any) -> dict[str, str] | None:
    try:
        return {q.id: q.text for q in res.questions}
    except (OSError, ValueError, KeyError):
        return None

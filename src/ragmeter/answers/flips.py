"""What reruns show: each system's grades as a [questions, reruns] array, and flip rates.

:func:`rerun_scores` is where interval code starts: per system a float array of shape
``[questions, reruns]`` (1 correct, 0 not, NaN not graded) under the accuracy judge.
:func:`flip_report` gives each question's flip rate, the share of pairs of its reruns
whose grade (correct, partial, wrong) differs: 0 when every rerun agrees, 1 when no two
do. A rerun left unscored is left out of the pairs. Beside it, each system's share of
its accuracy's variance that the reruns make
(:func:`ragmeter.stats.rerun_variance.variance_shares`). ``grade`` prints both when
K > 1 and keeps them in ``answers/reruns.json`` (all of it) and ``answers/meta.json``
(``flip_rates``: the means and the questions that flip most).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ragmeter.answers.judges import (
    accuracy_judge,
    as_answer_set,
    interval_settings,
    run_confidence,
)
from ragmeter.answers.rerun_store import read_answer_reruns, read_grade_reruns
from ragmeter.answers.reruns import Reruns
from ragmeter.answers.store import UNSCORED, AnswerSet, answers_dir, update_meta
from ragmeter.errors import InputError
from ragmeter.files.io import dumps
from ragmeter.files.outputs import results_lock, write_output
from ragmeter.runs.results import Results, results_path
from ragmeter.scoring.names import answer_measures, passing_grades
from ragmeter.stats.bootstrap import format_interval
from ragmeter.stats.rerun_variance import VarianceShares, question_flip_rates, variance_shares

__all__ = [
    "FILE",
    "FLIP_CAPTION",
    "FlipReport",
    "QuestionFlips",
    "RerunScores",
    "flip_rate",
    "flip_report",
    "flip_rows",
    "grade_scores",
    "rerun_count",
    "rerun_grades",
    "rerun_scores",
    "shown_rate",
    "clear_flips",
    "write_flips",
]

FILE = "reruns.json"
MEASURES = {
    **{m.replace(" ", "_"): passing_grades(m) for m in answer_measures()},
    "correct_or_unscored": ("correct", UNSCORED),  # the most unscored answers could add
}


CODES = {"correct": 1.0, "partial": 0.5, "wrong": 0.0}
"""Grade labels as scores for :func:`ragmeter.stats.rerun_variance.question_flip_rates`:
a label change is a score change; unscored and not graded are left out (NaN)."""


def grade_scores(rows: list[list[str | None]]) -> np.ndarray:
    """Rows of grade labels (one row a question, of equal length) as a float array,
    coded by :data:`CODES`, NaN for unscored or not graded."""
    width = max((len(r) for r in rows), default=0)
    out = np.full((len(rows), width), np.nan)
    for i, row in enumerate(rows):
        for r, g in enumerate(row):
            out[i, r] = CODES.get(g, np.nan) if g is not None else np.nan
    return out


def flip_rate(grades: list[str | None]) -> float | None:
    """The share of pairs of ``grades`` that differ (unscored and missing left out);
    ``None`` with fewer than two grades. The formula is
    :func:`ragmeter.stats.rerun_variance.question_flip_rates`'s, on the grades coded
    correct 1, partial 0.5, wrong 0."""
    return _rates([grades])[0]


def _rates(rows: list[list[str | None]]) -> list[float | None]:
    """Each row's flip rate (None below two grades), one call of the one formula."""
    if not rows:
        return []
    rates = question_flip_rates(grade_scores(rows))
    return [None if np.isnan(r) else float(r) for r in rates]


def _settings(aset: AnswerSet) -> Reruns:
    """The reruns ``grade`` recorded in ``meta.json`` (one when none)."""
    return Reruns.from_meta(aset.meta.get("grade_reruns")) or Reruns()


def rerun_count(results: Results | str | Path | AnswerSet) -> int:
    """K: how many times ``grade`` graded each answer (1 without reruns)."""
    return _settings(as_answer_set(results)).k


def rerun_grades(
    results: Results | str | Path | AnswerSet,
    judge: str | None = None,
    systems: list[str] | None = None,
) -> tuple[str | None, Reruns, dict[str, dict[str, list[str | None]]]]:
    """The accuracy judge (``judge``, else as :func:`~ragmeter.answers.analysis.
    accuracy_judge` chooses), the reruns ``grade`` recorded, and per system and question
    the judge's grade of each rerun in order (``None``: not graded, or graded for an
    answer since changed)."""
    aset = as_answer_set(results)
    chosen = accuracy_judge(aset, judge)
    reruns = _settings(aset)
    folder = answers_dir(aset.results)
    rerun_answers = reruns.reruns("reader")
    answers = read_answer_reruns(folder) if rerun_answers else {}
    graded = read_grade_reruns(folder)
    first = aset.grades.get(chosen or "", {})
    out: dict[str, dict[str, list[str | None]]] = {}
    for s, q in aset.ordered_keys(systems):
        row: list[str | None] = [first[(s, q)].grade if (s, q) in first else None]
        for r in range(1, reruns.k):
            answer = answers.get((s, q, r)) if rerun_answers else aset.answers[(s, q)]
            g = graded.get((chosen or "", s, q, r))
            ok = g is not None and answer is not None and g.answer_sha == answer.sha
            row.append(g.grade if ok else None)  # type: ignore[union-attr]
        out.setdefault(s, {})[q] = row
    return chosen, reruns, out


@dataclass(frozen=True)
class RerunScores:
    """Each system's scores over questions and reruns, for intervals that resample both.

    ``scores[system]`` has shape ``[len(questions), reruns]``: 1.0 where the judge
    graded the rerun's answer ``measure`` (correct; or correct or partial), 0.0 where
    it graded it otherwise (unscored counts as not correct, as accuracy does), NaN
    where that system has no grade (no answer to that question, or not graded yet).
    """

    judge: str | None
    measure: str
    questions: list[str]
    reruns: int
    scores: dict[str, np.ndarray] = field(default_factory=dict)


def rerun_scores(
    results: Results | str | Path | AnswerSet,
    judge: str | None = None,
    *,
    systems: list[str] | None = None,
    measure: str = "correct",
) -> RerunScores:
    """Each system's scores as a ``[questions, reruns]`` array (:class:`RerunScores`);
    one column when the run has no reruns. ``measure`` is ``correct``,
    ``correct_or_partial`` or ``correct_or_unscored`` (an unscored grade counted as
    correct: the most the unscored answers could add)."""
    if measure not in MEASURES:
        raise ValueError(f"measure must be one of {', '.join(MEASURES)}, got {measure!r}")
    aset = as_answer_set(results)
    chosen, reruns, grades = rerun_grades(aset, judge, systems)
    questions = [q for q in aset.results.question_ids if any(q in g for g in grades.values())]
    hit = MEASURES[measure]
    scores = {}
    for s in systems if systems is not None else aset.results.systems:
        array = np.full((len(questions), reruns.k), np.nan)
        for i, q in enumerate(questions):
            for r, g in enumerate(grades.get(s, {}).get(q, [])):
                if g is not None:
                    array[i, r] = 1.0 if g in hit else 0.0
        scores[s] = array
    return RerunScores(chosen, measure, questions, reruns.k, scores)


@dataclass(frozen=True)
class QuestionFlips:
    """One question's reruns: its grades and flip rate under each system, and their mean."""

    question: str
    rate: float | None
    rates: dict[str, float | None]
    grades: dict[str, list[str | None]]


@dataclass(frozen=True)
class FlipReport:
    """Flip rates under the accuracy judge: each system's mean over its questions, and
    every question's (:class:`QuestionFlips`, in results order). ``shares`` holds each
    system's :class:`~ragmeter.stats.rerun_variance.VarianceShares` of its accuracy
    (correct), with intervals: how much of the accuracy's variance the reruns make
    (None where they cannot be told apart: fewer than two questions, or no question
    with two graded reruns)."""

    judge: str | None
    reruns: Reruns
    systems: dict[str, float | None]
    questions: list[QuestionFlips]
    shares: dict[str, VarianceShares | None] = field(default_factory=dict)

    def most(self, n: int = 5) -> list[QuestionFlips]:
        """The ``n`` questions that flip most (those that flip at all), highest first."""
        flipping = [q for q in self.questions if q.rate]
        return sorted(flipping, key=lambda q: -(q.rate or 0.0))[:n]

    def to_dict(self) -> dict[str, Any]:
        return {
            "judge": self.judge,
            "reruns": self.reruns.to_meta(),
            "mean_flip_rate": self.systems,
            "variance_shares": {s: v.to_dict() if v else None for s, v in self.shares.items()},
            "most_flipped": [q.question for q in self.most()],
            "questions": [
                {"question": q.question, "flip_rate": q.rate, "rates": q.rates, "grades": q.grades}
                for q in self.questions
            ],
        }


def _mean(values: list[float | None]) -> float | None:
    seen = [v for v in values if v is not None]
    return sum(seen) / len(seen) if seen else None


def flip_report(
    results: Results | str | Path | AnswerSet,
    judge: str | None = None,
    systems: list[str] | None = None,
) -> FlipReport:
    """The flip rate of every question under each system, and each system's mean."""
    aset = as_answer_set(results)
    chosen, reruns, grades = rerun_grades(aset, judge, systems)
    names = list(grades)
    rates = {s: dict(zip(grades[s], _rates(list(grades[s].values())), strict=True)) for s in names}
    questions = []
    for q in aset.results.question_ids:
        by_system = {s: rates[s][q] for s in names if q in rates[s]}
        if by_system:
            mean = _mean(list(by_system.values()))
            questions.append(
                QuestionFlips(q, mean, by_system, {s: grades[s][q] for s in by_system})
            )
    means = {s: _mean(list(rates[s].values())) for s in names}
    return FlipReport(chosen, reruns, means, questions, _shares(aset, chosen, names))


def _shares(aset: AnswerSet, judge: str | None, names: list[str]) -> dict:
    """Each system's variance shares of its accuracy (correct), seeded as the run's
    intervals; None where questions and reruns cannot be told apart."""
    seed, rounds = interval_settings(aset.results, None, None)
    scores = rerun_scores(aset, judge, systems=names).scores
    out: dict[str, VarianceShares | None] = {}
    for s in names:
        y = scores[s][~np.all(np.isnan(scores[s]), axis=1)]
        try:
            out[s] = variance_shares(y, rounds, seed, run_confidence(aset.results))
        except InputError:
            out[s] = None
    return out


FLIP_CAPTION = (
    "flip rate: the share of pairs of a question's reruns graded differently "
    "(correct / partial / wrong); 0 when every rerun agrees. Reruns' share of "
    "variance: how much of the accuracy's (correct) variance the reruns make, the "
    "rest the questions drawn (one-way random effects by moments; interval "
    "resampling whole questions; - where they cannot be told apart)"
)
"""What the flip table's columns mean, printed under it in the terminal and the report."""


def shown_rate(rate: float | None) -> str:
    """A flip rate as every view prints it: percent, one decimal; ``-`` for none."""
    return "-" if rate is None else f"{rate * 100:.1f}"


def _shown_share(shares: VarianceShares | None) -> str:
    """The reruns' share of the accuracy's variance with its interval, in percent."""
    if shares is None:
        return "-"
    e = shares.rerun_share
    return format_interval(e.mean, e.low, e.high)


def flip_rows(report: FlipReport) -> list[dict[str, Any]]:
    """The flip table's rows, as the terminal and the report show them: per system its
    mean flip rate and the reruns' share of its accuracy's variance (numbers and the
    texts printed), the questions that flip and the questions with reruns."""
    rows = []
    for system, mean in report.systems.items():
        rates = [q.rates[system] for q in report.questions if system in q.rates]
        share = report.shares.get(system)
        rows.append(
            {
                "system": system,
                "mean_flip_rate": mean,
                "rerun_share": share.rerun_share.to_dict() if share else None,
                "rate": shown_rate(mean),
                "share": _shown_share(share),
                "flipping": sum(1 for r in rates if r),
                "questions": len(rates),
            }
        )
    return rows


def write_flips(report: FlipReport, results: Results | str | Path) -> Path:
    """``answers/reruns.json`` (everything) and ``flip_rates`` in ``answers/meta.json``
    (the means and the questions that flip most), under the results lock."""
    base = results_path(results)
    path = answers_dir(base) / FILE
    data = report.to_dict()
    with results_lock(base):
        write_output(path, dumps(data), "flip rates of the reruns", flag=None)
        short = {k: data[k] for k in ("judge", "mean_flip_rate", "most_flipped")}
        update_meta(answers_dir(base), flip_rates={**short, "reruns": report.reruns.k})
    return path


def clear_flips(results: Results | str | Path) -> None:
    """Remove what :func:`write_flips` wrote (a grade without reruns leaves none)."""
    base = results_path(results)
    with results_lock(base):
        (answers_dir(base) / FILE).unlink(missing_ok=True)
        if (answers_dir(base) / "meta.json").is_file():
            update_meta(answers_dir(base), flip_rates=None)

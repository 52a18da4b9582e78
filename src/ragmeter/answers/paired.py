"""Paired verdicts on answers: system against system on the share correct, and on the
share correct or partial, over the same questions.

Each compared system's answers, as the accuracy judge graded them
(:func:`ragmeter.answers.analysis.accuracy_judge`), become one 0/1 score per question: 1
when the answer was graded correct (for "correct or partial": correct or partial), else 0.
An **unscored** answer counts as not correct, as the accuracy counts it
(:data:`ragmeter.answers.analysis.ACCURACY_BASIS`), so a pair's difference is the
difference of the two accuracies over the same questions. The pairs are taken over the
questions every compared system has a graded answer for; an answer the judge has not
graded, and an answer to a question another compared system has none for, are left out
of every pair and counted.

The verdicts come from the one comparison of the search half,
:func:`ragmeter.comparison.systems.compare_systems`, under the run's own plan (rule,
family, seed, rounds and clusters: :attr:`ragmeter.runs.results.Results.comparison_plan`)
or what the caller chooses instead (``ComparisonPlan.choose``: a rule, a baseline,
planned pairs or a family), so a table on answers reads as the search's tables do.
:func:`write_answer_verdicts` keeps them as ``answers/verdicts.json``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from ragmeter.answers.analysis import accuracy_judge
from ragmeter.answers.corrected import CorrectedVerdicts, corrected_verdicts
from ragmeter.answers.flips import rerun_count, rerun_scores
from ragmeter.answers.store import (
    UNSCORED,
    AnswerSet,
    answers_dir,
    answers_or_refuse,
    hand_stamp,
)
from ragmeter.comparison.effects import names_an_effect, pair_names
from ragmeter.comparison.families import GRID_FAMILIES, grid_cells, grid_pairs
from ragmeter.comparison.ranks import Ranks, resolve_ranks
from ragmeter.comparison.systems import ComparisonPlan, compare_systems
from ragmeter.comparison.verdicts import Row, Rule, Verdicts
from ragmeter.errors import InputError, did_you_mean
from ragmeter.files.io import dumps, read_json
from ragmeter.files.outputs import results_lock, write_output
from ragmeter.runs.results import Results, as_results, results_path
from ragmeter.scoring.names import answer_measure, answer_measures, passing_grades
from ragmeter.stats.reruns import question_means

__all__ = [
    "BASIS",
    "MEASURES",
    "AnswerScores",
    "AnswerVerdicts",
    "answer_measure",
    "answer_scores",
    "answer_verdicts",
    "basis_line",
    "check_choice",
    "read_answer_verdicts",
    "rerun_basis",
    "write_answer_verdicts",
]

MEASURES = answer_measures()
"""The answer measures compared, as the table stood at import: the answer half's rows
of :data:`ragmeter.scoring.names.FAMILIES` that are scores (the comparisons read
:func:`~ragmeter.scoring.names.answer_measures`); each one's passing grades are
:data:`~ragmeter.answers.corrected.PASSING`."""

BASIS = (
    "per question, 1 when the answer was graded correct (correct or partial), else 0; "
    "an unscored answer counts as not correct, as in the accuracy"
)
"""What each system's score per question is, as the table under the verdicts says it."""

FILE = "verdicts.json"


def rerun_basis(k: int) -> str:
    """How a question's score takes K > 1 reruns, as the line under the verdicts says it."""
    return (
        f"scores are means over {k} reruns: each question's mean over its graded reruns, so "
        "a pair's test flips the signs of whole questions' mean differences"
    )


@dataclass(frozen=True)
class AnswerVerdicts:
    """The paired verdicts on answers of one results directory, by one judge.

    ``systems`` are the systems compared, ``questions`` the questions every one of them
    has a graded answer for (the pairs are over these). Per system, ``unscored`` counts
    its unscored answers among ``questions`` (each scored 0, not correct), ``left_out``
    its graded answers to other questions and ``ungraded`` its answers the judge has not
    graded yet (both in no pair). ``tables`` maps each measure of :data:`MEASURES` (as
    the table stands) to its :class:`~ragmeter.comparison.verdicts.Verdicts` (the rule
    with its family, seed and rounds, and a row per pair); it is empty when there is
    nothing to compare, and ``notes`` then says why. ``notes`` also says where the run's
    own family could not apply to the systems answered. ``reruns`` is K, the times
    ``grade`` graded each answer: with K > 1 a system's score on a question is its mean
    over the K reruns. ``corrected`` maps each measure to the same family corrected by
    the hand grades (:mod:`ragmeter.answers.corrected`); empty without enough hand
    grades.
    """

    judge: str | None
    reader: str | None
    k: int
    seed: int
    rounds: int
    systems: list[str]
    questions: list[str]
    unscored: dict[str, int]
    left_out: dict[str, int]
    ungraded: dict[str, int]
    tables: dict[str, Verdicts] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    reruns: int = 1
    ranks: dict[str, Ranks] = field(default_factory=dict)
    corrected: dict[str, CorrectedVerdicts] = field(default_factory=dict)
    hand_grades: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready form written to ``answers/verdicts.json`` (``reruns`` and
        ``rerun_basis`` only with K > 1, so a run without reruns writes what it did)."""
        data = {
            "judge": self.judge,
            "reader": self.reader,
            "k": self.k,
            "seed": self.seed,
            "rounds": self.rounds,
            "basis": BASIS,
            "systems": list(self.systems),
            "questions": list(self.questions),
            "unscored": dict(self.unscored),
            "left_out": dict(self.left_out),
            "ungraded": dict(self.ungraded),
            "comparisons": [{"measure": m, **t.to_dict()} for m, t in self.tables.items()],
            "notes": list(self.notes),
            "hand_grades": dict(self.hand_grades),
        }
        if self.reruns > 1:
            data |= {"reruns": self.reruns, "rerun_basis": rerun_basis(self.reruns)}
        if self.ranks:
            data["ranks"] = {m: r.to_dict() for m, r in self.ranks.items()}
        if self.corrected:
            data["judge_corrected"] = {m: c.to_dict() for m, c in self.corrected.items()}
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AnswerVerdicts:
        """The inverse of :meth:`to_dict`."""
        tables = {
            str(c["measure"]): Verdicts(
                Rule.from_dict(c["rule"]), [Row.from_dict(r) for r in c["rows"]]
            )
            for c in data.get("comparisons") or []
        }
        return cls(
            judge=data.get("judge"),
            reader=data.get("reader"),
            k=int(data["k"]),
            seed=int(data["seed"]),
            rounds=int(data["rounds"]),
            systems=[str(s) for s in data["systems"]],
            questions=[str(q) for q in data["questions"]],
            unscored={str(s): int(n) for s, n in data["unscored"].items()},
            left_out={str(s): int(n) for s, n in data["left_out"].items()},
            ungraded={str(s): int(n) for s, n in data["ungraded"].items()},
            tables=tables,
            notes=[str(n) for n in data.get("notes") or []],
            reruns=int(data.get("reruns", 1)),
            ranks={str(m): Ranks.from_dict(r) for m, r in (data.get("ranks") or {}).items()},
            corrected=_read_corrected(data.get("judge_corrected")),
            hand_grades=dict(data.get("hand_grades") or {}),
        )


def _read_corrected(data: dict[str, Any] | None) -> dict[str, CorrectedVerdicts]:
    """``judge_corrected`` per measure; a file written before "correct or partial" was
    corrected holds the one family on "correct" itself."""
    if not data:
        return {}
    if "rows" in data:
        data = {data["measure"]: data}
    return {str(m): CorrectedVerdicts.from_dict(c) for m, c in data.items()}


def _counted(counts: dict[str, int]) -> str:
    return ", ".join(f"{s} {n}" for s, n in counts.items() if n)


def basis_line(v: AnswerVerdicts) -> str:
    """The line under the tables, in the terminal and the report: what every pair is
    over, the questions, how an answer scores (an unscored one as not correct, with
    each system's count; with reruns, the means over them), and the answers left out
    of the pairs."""
    n = len(v.questions)
    line = (
        f"Pairs over the {n} {'question' if n == 1 else 'questions'} every compared system "
        f"has a graded answer for; {BASIS}"
    )
    unscored = _counted(v.unscored)
    line += f" (unscored: {unscored})." if unscored else " (none is unscored)."
    if v.reruns > 1:
        line += f" With reruns, {rerun_basis(v.reruns)}."
    left, ungraded = _counted(v.left_out), _counted(v.ungraded)
    if left:
        line += f" Left out, answering a question another system has no graded answer for: {left}."
    if ungraded:
        line += f" Left out, not graded yet by {v.judge}: {ungraded}."
    return line


def _unknown(name: str, known: Sequence[str], what: str) -> InputError:
    return InputError(
        f"{what}: unknown system {name!r}{did_you_mean(name, known)}; choose one of {list(known)}"
    )


def check_choice(
    results: Results | str | Path,
    *,
    adjust: str | None = None,
    baseline: str | None = None,
    pairs: str | Sequence[tuple[str, str]] | None = None,
    family: str | None = None,
) -> ComparisonPlan:
    """The run's plan with the choices made (``ComparisonPlan.choose``, as ``compare``
    makes them), each system named checked against the run's systems: one line before
    any model is called."""
    res = as_results(results)
    plan = res.comparison_plan.choose(adjust=adjust, baseline=baseline, pairs=pairs, family=family)
    if baseline:
        if plan.baseline not in res.systems:
            raise _unknown(str(plan.baseline), res.systems, "--baseline")
    known = pair_names(res.systems, plan.pairs if pairs else None)  # and */R, S/*
    for a, b in plan.pairs if pairs else ():
        for name in (a, b):
            if name not in known:
                raise _unknown(name, known, "--pairs")
    if family in GRID_FAMILIES:
        grid_pairs(res.systems, family)  # one line naming what makes no grid
    return plan


def _own_plan(plan: ComparisonPlan, names: list[str]) -> tuple[ComparisonPlan, list[str]]:
    """The run's own family as far as the systems with answers allow: a baseline or
    planned pairs naming a system without graded answers, or a grid family on systems
    that form no grid, fall back to every pair, and a note says so."""
    if plan.baseline and plan.baseline not in names:
        note = f"The run's baseline {plan.baseline} has no graded answers: every pair is compared."
        return replace(plan, baseline=None, family="all"), [note]
    if plan.pairs:
        grid = grid_cells(names) is not None  # averaged rows (*/R, S/*) need the whole grid
        kept = tuple(
            p
            for p in plan.pairs
            if (grid and names_an_effect([p])) or (p[0] in names and p[1] in names)
        )
        if len(kept) == len(plan.pairs):
            return plan, []
        note = (
            f"{len(plan.pairs) - len(kept)} of the run's planned pairs name a system without "
            "graded answers"
        )
        if kept:
            return replace(plan, pairs=kept), [note + ": compared without them."]
        return replace(plan, pairs=None, family="all"), [note + ": every pair is compared."]
    if plan.family in GRID_FAMILIES and grid_cells(names) is None:
        note = (
            f"The systems with graded answers form no strategy x retriever grid, so the run's "
            f"family {plan.family!r} cannot apply: every pair is compared."
        )
        return replace(plan, family="all"), [note]
    return plan, []


def _graded(aset: AnswerSet, judge: str | None, systems: Sequence[str]) -> dict[str, dict]:
    """Per system with answers, ``{question: grade}`` by ``judge`` (unscored included),
    and the number of its answers the judge has not graded, under ``"ungraded"``."""
    out = {}
    for system in systems:
        keys = aset.ordered_keys([system])
        if not keys:
            continue
        labels = aset.labels(judge, keys) if judge is not None else {}
        grades = {q: g for (_, q), g in labels.items()}
        out[system] = {"grades": grades, "ungraded": len(keys) - len(labels)}
    return out


def answer_verdicts(
    results: Results | str | Path | AnswerSet,
    judge: str | None = None,
    *,
    systems: Sequence[str] | None = None,
    adjust: str | None = None,
    baseline: str | None = None,
    pairs: str | Sequence[tuple[str, str]] | None = None,
    family: str | None = None,
    seed: int | None = None,
    rounds: int | None = None,
    ppi: str = "tuned",
) -> AnswerVerdicts:
    """The paired verdicts on answers, under the run's plan or the one chosen.

    ``judge`` picks the accuracy judge (:func:`ragmeter.answers.analysis.accuracy_judge`);
    ``systems`` limits the systems (default: every system with answers). ``adjust``,
    ``baseline``, ``pairs`` and ``family`` choose the rule and family as for ``ragmeter
    compare``; none given, the run's own family applies (falling back to every pair where
    the systems answered do not allow it, with a note). ``seed`` and ``rounds`` default
    to the run's. ``ppi`` names the rectifier weight of the judge-corrected verdicts.
    """
    aset = answers_or_refuse(results, " to compare")
    res = aset.results
    chosen = accuracy_judge(aset, judge)
    graded = _graded(aset, chosen, list(systems) if systems else res.systems)
    own = not (baseline or pairs or family)
    notes: list[str] = []
    plan = res.comparison_plan
    if own:
        plan, notes = _own_plan(plan, list(graded))
    plan = plan.choose(
        adjust=adjust, baseline=baseline, pairs=pairs, family=family, seed=seed, rounds=rounds
    )
    names = _compared(plan, list(graded), chosen)
    common = [q for q in res.question_ids if all(q in graded[s]["grades"] for s in names)]
    out = AnswerVerdicts(
        judge=chosen,
        reader=aset.reader,
        k=aset.k,
        seed=plan.seed,
        rounds=plan.rounds,
        systems=names,
        questions=common,
        unscored={s: sum(graded[s]["grades"][q] == UNSCORED for q in common) for s in names},
        left_out={s: len(graded[s]["grades"]) - len(common) for s in names},
        ungraded={s: graded[s]["ungraded"] for s in names},
        notes=notes,
        hand_grades=hand_stamp(aset),
    )
    why = _nothing_to_compare(out, chosen)
    if why:
        return replace(out, notes=[*notes, why])
    matrices = _scores(aset, chosen, {s: graded[s]["grades"] for s in names}, common)
    k = rerun_count(aset)
    tables, ranks = _tables(res, plan, matrices, names, common)
    fixed = _corrected(aset, tables, {s: graded[s]["grades"] for s in names}, common, plan, ppi)
    return replace(out, tables=tables, reruns=k, ranks=ranks, corrected=fixed)


def _corrected(
    aset: AnswerSet,
    tables: dict[str, Verdicts],
    grades: dict[str, dict[str, str]],
    common: list[str],
    plan: ComparisonPlan,
    ppi: str,
) -> dict[str, CorrectedVerdicts]:
    """Per measure, the judge's family corrected by the hand grades where they allow."""
    if not aset.hand:
        return {}
    hand = {k: h.hand for k, h in aset.hand.items()}
    out = {}
    for measure, table in tables.items():
        fixed = corrected_verdicts(
            grades,
            hand,
            common,
            [(r.a, r.b) for r in table.rows],
            adjust=table.rule.adjust,
            alpha=table.rule.alpha,
            family=table.rule.family,
            seed=plan.seed,
            rounds=plan.rounds,
            weight=ppi,
            measure=measure,
        )
        if fixed is not None:
            out[measure] = fixed
    return out


@dataclass(frozen=True)
class AnswerScores:
    """One system's scores on ``measure`` as the paired verdicts take them: per question
    of ``questions`` (those with an answer ``judge`` graded, in results order), 0/1, or
    with ``reruns`` K > 1 the mean over the question's graded reruns; an unscored answer
    is 0 (``unscored`` counts them), an answer the judge has not graded is in no question
    (``ungraded`` counts them)."""

    system: str
    measure: str
    judge: str | None
    questions: list[str]
    scores: np.ndarray
    unscored: int
    ungraded: int
    reruns: int


def answer_scores(
    results: Results | str | Path | AnswerSet, system: str, measure: str, judge: str | None = None
) -> AnswerScores:
    """``system``'s scores on ``measure`` (a name :func:`answer_measure` reads) by the
    accuracy judge (:func:`~ragmeter.answers.analysis.accuracy_judge`), computed as the
    paired verdicts compute them; the one way the gate reads an answer run."""
    aset = answers_or_refuse(results, then="`ragmeter answer` and `ragmeter grade` on it")
    wanted = answer_measure(measure)
    if wanted is None:
        raise InputError(
            f"unknown answer measure {measure!r}; choose "
            + " or ".join(m.replace(" ", "_") for m in answer_measures())
        )
    chosen = accuracy_judge(aset, judge)
    graded = _graded(aset, chosen, [system]).get(system)
    if chosen is None or graded is None or not graded["grades"]:
        raise InputError(
            f"{aset.results.path}: system {system!r} has no answers graded by "
            f"{chosen or 'a judge'}; run `ragmeter answer` and `ragmeter grade` on it first"
        )
    questions = [q for q in aset.results.question_ids if q in graded["grades"]]
    scores = _scores(aset, chosen, {system: graded["grades"]}, questions)[wanted][0]
    return AnswerScores(
        system=system,
        measure=wanted,
        judge=chosen,
        questions=questions,
        scores=scores,
        unscored=sum(graded["grades"][q] == UNSCORED for q in questions),
        ungraded=graded["ungraded"],
        reruns=rerun_count(aset),
    )


def _compared(plan: ComparisonPlan, answered: list[str], judge: str | None) -> list[str]:
    """The systems a plan compares, of those with answers (``answered``, in results
    order): those its planned pairs name, else all; one it names without answers is an
    error."""
    if names_an_effect(plan.pairs):  # an averaged row needs every system of the grid
        return answered
    named = [plan.baseline] if plan.baseline else []
    named += [s for p in plan.pairs or () for s in p]
    for name in named:
        if name not in answered:
            raise InputError(
                f"system {name!r} has no answers graded by {judge or 'a judge'}; systems with "
                f"answers: {', '.join(answered) or 'none'}"
            )
    if plan.pairs:
        return [s for s in answered if s in named]
    return answered


def _nothing_to_compare(v: AnswerVerdicts, judge: str | None) -> str | None:
    """The sentence printed instead of a table, or None when there are pairs to compare."""
    if judge is None:
        return "No answer is graded yet: paired verdicts need a judge's grades."
    if len(v.systems) < 2:
        only = f" ({v.systems[0]})" if v.systems else ""
        return (
            f"One system{only} has answers graded by {judge}: paired verdicts need two; "
            "answer and grade another system to compare."
        )
    if not v.questions:
        return (
            f"No question has an answer graded by {judge} for every compared system: "
            "nothing to compare."
        )
    return None


def _scores(
    aset: AnswerSet, judge: str | None, grades: dict[str, dict[str, str]], common: list[str]
) -> dict[str, np.ndarray]:
    """Per measure, the compared systems' scores ``[systems, questions]``: each answer's
    0/1 grade, or with reruns (K > 1) each question's mean over its graded reruns
    (:func:`ragmeter.answers.flips.rerun_scores`, rerun 0 first)."""
    names = list(grades)
    if rerun_count(aset) < 2:
        return {
            m: np.array(
                [[float(grades[s][q] in passing_grades(m)) for q in common] for s in names],
                dtype=np.float64,
            )
            for m in answer_measures()
        }
    out = {}
    for m in answer_measures():
        scores = rerun_scores(aset, judge, systems=names, measure=m.replace(" ", "_"))
        where = {q: i for i, q in enumerate(scores.questions)}
        rows = [where[q] for q in common]
        out[m] = np.array([question_means(scores.scores[s][rows]) for s in names])
    return out


def _tables(
    res: Results,
    plan: ComparisonPlan,
    matrices: dict[str, np.ndarray],
    names: list[str],
    common: list[str],
) -> tuple[dict[str, Verdicts], dict[str, Ranks]]:
    """One comparison per measure, through the search half's one comparison, and the
    ranks it gives (:func:`ragmeter.comparison.ranks.resolve_ranks`)."""
    clusters = None
    if res.clusters is not None:  # each compared question's cluster, as the search had it
        label = dict(zip(res.question_ids, res.clusters, strict=True))
        clusters = tuple(label[q] for q in common)
    measures = answer_measures()
    plans = {m: replace(plan, clusters=clusters, metric=m) for m in measures}
    tables = {m: compare_systems(matrices, names, plans[m]) for m in measures}
    return tables, {m: resolve_ranks(matrices, names, plans[m], tables[m]) for m in measures}


def write_answer_verdicts(verdicts: AnswerVerdicts, results: Results | str | Path) -> Path:
    """Write ``answers/verdicts.json`` atomically, under the results lock, over nothing or
    over the file ragmeter wrote there (never a file of the user's at that name)."""
    base = results_path(results)
    path = answers_dir(base) / FILE
    with results_lock(base):
        write_output(path, dumps(verdicts.to_dict()), "paired verdicts on answers", flag=None)
    return path


def read_answer_verdicts(results: Results | str | Path) -> AnswerVerdicts | None:
    """``answers/verdicts.json`` read back; None when ``grade`` has not written one."""
    base = results_path(results)
    path = answers_dir(base) / FILE
    if not path.is_file():
        return None
    try:
        return AnswerVerdicts.from_dict(read_json(path))
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        raise InputError(
            f"{path}: not paired verdicts ragmeter can read ({type(exc).__name__}: {exc}); "
            "run `ragmeter grade` again"
        ) from None

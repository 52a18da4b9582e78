"""The report's optional sections: answer grades, answer failures and question audits.

A section is shown only when its files are in the results directory. Nothing is
computed here: answer numbers are :func:`ragmeter.answers.analysis.answer_figures`
(the objects ``ragmeter grade`` and ``judges`` print), audit rows are read by
:func:`ragmeter.questions.audit.read_audit`; this module shapes them into
JSON-ready data for the page.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragmeter import stats
from ragmeter.comparison.formatting import decided_note, shown_difference, shown_p
from ragmeter.comparison.verdicts import rule_alpha
from ragmeter.errors import InputError
from ragmeter.files.io import read_json
from ragmeter.report.common import GRADE_LABELS, RATIO, SHARE, _est
from ragmeter.report.history import load_history
from ragmeter.runs.results import Results
from ragmeter.scoring.names import answer_measures, difference_unit, metric_label

if TYPE_CHECKING:
    from ragmeter.answers.store import AnswerSet


@dataclass(frozen=True)
class OptionalSection:
    """A report section shown only when its files are in the results directory.

    ``load`` returns the section's data, or None when the files are absent (the
    section is then left out silently). Add a loader here for each new kind of
    output that belongs in the report.
    """

    key: str
    title: str
    load: Callable[..., dict[str, Any] | None]


def _read_json(path: Path) -> dict:
    if not path.is_file():
        return {}

    obj = read_json(path, nan_ok=True)
    return obj if isinstance(obj, dict) else {}


def _est_or_none(e: stats.Estimate | None, metric: str = SHARE) -> dict[str, Any] | None:
    return None if e is None else _est(e, metric)


def shared_answers(results: Results) -> AnswerSet | None:
    """The answers the answer and failure sections share, read once
    (:func:`ragmeter.answers.store.load_answers`); None when the results hold no answer
    file, without importing the answer route."""
    folder = results.path / "answers"
    if not ((folder / "reader.jsonl").is_file() or (folder / "answers.jsonl").is_file()):
        return None
    from ragmeter.answers.store import load_answers as read_answers

    return read_answers(results)


def load_answers(
    results: Results, judge: str | None = None, answers: AnswerSet | None = None
) -> dict[str, Any] | None:
    """The answer section: :func:`ragmeter.answers.analysis.answer_figures`, as plain data.

    Nothing is computed here: accuracy per system, the judge-corrected accuracy,
    the passage-found x grade table (the reader's top k, answered questions only),
    judge agreement and hand checks are the objects ``ragmeter grade`` and
    ``ragmeter judges`` print. ``judge`` picks the accuracy judge (default:
    ``accuracy_judge`` in ``answers/meta.json``, else the first of its judges).
    ``answers``: the set :func:`shared_answers` read (read here when not given).
    """
    aset = answers if answers is not None else shared_answers(results)
    if aset is None:
        figures = None  # no answers (answer_figures would say so), and no import of the route
    else:
        from ragmeter.answers.analysis import answer_figures

        figures = answer_figures(aset, judge=judge)
    if figures is None:
        if judge is not None:
            raise InputError(
                f"{results.path}: no answers graded yet, so no judge {judge!r} to give "
                "accuracy; run `ragmeter answer` and `ragmeter grade` first"
            )
        return None
    from ragmeter.report.corrected import saving_table

    report = figures.report
    reruns = {"reruns": report.reruns} if report.reruns > 1 else {}  # K = 1: as it was
    reliability = judge_reliability_data(figures.answers)
    return {
        **reruns,
        **({"reliability": reliability} if reliability else {}),  # none: as it was
        "reader": report.reader,
        "judges": report.judges,
        "primary": report.judge,
        "k": report.k,
        "hit_metric": f"recall@{report.k}",
        "titles": {m: metric_label(m) for m in answer_measures()},  # the table's rows
        "seed": report.seed,
        "rounds": report.rounds,
        "accuracy": [_accuracy_row(row, report.judge) for row in report.systems],
        "cross": [_cross_row(row) for row in report.systems],
        "agreement": [_agreement_row(pair) for pair in figures.pairs],
        "hand": [_hand_row(check) for check in figures.hand if check.n],
        "saving": saving_table(report),
        "verdicts": answer_verdict_data(figures.answers, report.judge),
        "flips": answer_flip_data(figures.answers, report.judge) if report.reruns > 1 else None,
        "per_question": _answers_per_question(figures.answers, results.systems),
    }


def answer_verdict_data(aset: Any, judge: str | None) -> dict[str, Any] | None:
    """The paired verdicts on answers, as ``ragmeter grade`` prints them:
    :func:`ragmeter.answers.paired.answer_verdicts` under the run's own plan, one table
    per measure with its rule and each row's texts as the terminal prints them
    (:func:`ragmeter.comparison.formatting.shown_difference` / ``shown_p``), the notes
    and :func:`~ragmeter.answers.paired.basis_line`. None when there is nothing to
    compare (no grades, or one system)."""
    from ragmeter.answers.paired import answer_verdicts, basis_line
    from ragmeter.report.corrected import corrected_tables

    v = answer_verdicts(aset, judge)
    if not v.tables:
        return None
    tables = []
    for measure, table in v.tables.items():
        alpha = rule_alpha(table.rule)
        rows = [
            {
                **r.to_dict(),
                "shown": {"difference": shown_difference(r, measure), "p": shown_p(r, alpha)},
            }
            for r in table.rows
        ]
        note = decided_note(table.rows)
        ranks = v.ranks.get(measure)
        tables.append(
            {
                "measure": measure,
                "difference_unit": difference_unit(measure),  # what A - B is in
                "title": metric_label(measure),
                "rule": table.rule.to_dict(),
                "rows": rows,
                "note": note,
                "ranks": None if ranks is None else ranks.to_dict(),
            }
        )
    return {
        "judge": v.judge,
        "seed": v.seed,
        "rounds": v.rounds,
        "tables": tables,
        "notes": list(v.notes),
        "basis": basis_line(v),
        "corrected": corrected_tables(v.corrected),
    }


def judge_reliability_data(aset: Any) -> dict[str, Any] | None:
    """What ``ragmeter judges`` prints beyond pairs of judges: Krippendorff's alpha over
    three or more judges, each judge's test-retest agreement when the judges were rerun
    (:func:`ragmeter.answers.judges.judge_reliability`) and each judge's position check
    (:func:`ragmeter.answers.position.position_checks`); None when there is none."""
    from ragmeter.answers.judges import judge_reliability
    from ragmeter.answers.position import position_checks

    rel = judge_reliability(aset)
    out: dict[str, Any] = {}
    if rel.alpha is not None:
        out["alpha"] = {**_est(rel.alpha, RATIO), "judges": len(rel.judges)}
    if rel.retest:
        out["retest_reruns"] = rel.reruns
        out["retest"] = [
            {
                "judge": j,
                "answers": r.items,
                "percent": _est(r.percent, SHARE),
                "alpha": _est(r.alpha, RATIO),
            }
            for j, r in rel.retest.items()
        ]
    checks = position_checks(aset)
    if checks:
        out["position"] = [
            {
                "judge": c.judge,
                "answers": c.pair.n,
                "changed": c.changed,
                "sampled": c.sampled,
                "seed": c.seed,
                "order": c.order,
                "kappa": _est_or_none(c.pair.three.kappa if c.pair.three else None, RATIO),
                "kappa_weighted": _est_or_none(c.pair.three_weighted, RATIO),
                "more_correct": c.pair.correct_a - c.pair.correct_b,
            }
            for c in checks
        ]
    return out or None


def answer_flip_data(aset: Any, judge: str | None) -> dict[str, Any]:
    """With reruns (K > 1), each system's mean flip rate and the reruns' share of its
    accuracy's variance: :func:`ragmeter.answers.flips.flip_report`'s rows as ``grade``
    prints them (:func:`~ragmeter.answers.flips.flip_rows`)."""
    from ragmeter.answers.flips import FLIP_CAPTION, flip_report, flip_rows

    report = flip_report(aset, judge)
    return {
        "judge": report.judge,
        "reruns": report.reruns.k,
        "rows": flip_rows(report),
        "caption": FLIP_CAPTION,
    }


def _accuracy_row(row: Any, judge: str) -> dict[str, Any]:
    """One system's accuracy under ``judge``, with the passage-found rate and the
    hand-corrected accuracy where there is one."""
    fixed = row.corrected
    return {
        "system": row.system,
        "judge": judge,
        "n": row.n,
        "ungraded": row.ungraded,
        "correct": _est_or_none(row.accuracy.correct, "correct"),
        "counts": dict(row.accuracy.counts),
        "found": _est_or_none(row.hit),
        "corrected": None
        if fixed is None
        else {**_est(fixed.corrected, "correct"), "n_hand": fixed.n_hand},
    }


def _cross_row(row: Any) -> dict[str, Any]:
    """One system's passage-found x grade table."""
    table = {
        kind: {g: row.cross.count(kind, g) for g in GRADE_LABELS} for kind in ("found", "missed")
    }
    return {"system": row.system, "table": table}


def _agreement_row(pair: Any) -> dict[str, Any]:
    """Two judges' agreement (percent and kappa on correct-or-not, the weighted kappa on
    the three grades), and how many more correct the first gives."""
    ag: dict[str, Any] = {"a": pair.a, "b": pair.b, "n": pair.n}
    ag["percent"] = _est_or_none(pair.binary.percent if pair.binary else None)
    ag["kappa"] = _est_or_none(pair.binary.kappa if pair.binary else None, RATIO)
    # on the three grades, linear weights (ragmeter.answers.judges.WEIGHTS)
    ag["kappa_weighted"] = _est_or_none(pair.three_weighted, RATIO)
    if pair.binary is not None:
        ag["more_correct"] = pair.correct_a - pair.correct_b
    return ag


def _hand_row(check: Any) -> dict[str, Any]:
    """A judge against the hand checks, as a row of the agreement table."""
    return {
        "a": check.judge,
        "b": "hand",
        "n": check.n,
        "percent": _est_or_none(check.binary.percent if check.binary else None),
        "kappa": _est_or_none(check.binary.kappa if check.binary else None, RATIO),
        "more_correct": len(check.lenient) - len(check.strict),
        "lenient": len(check.lenient),
        "strict": len(check.strict),
    }


def _answers_per_question(aset: Any, systems: list[str]) -> dict[str, list]:
    """``{question: [one record per system, in the results' order]}``: the answer, each
    judge's grade and the hand grade where there is one."""
    per_question: dict[str, list] = {}
    for key in aset.ordered_keys():
        s, q = key
        grades = {
            j: aset.grades[j][key].grade for j in aset.judges if key in aset.grades.get(j, {})
        }
        rec: dict[str, Any] = {"answer": aset.answers[key].answer, "grades": grades}
        if key in aset.hand:
            rec["hand"] = aset.hand[key].hand
        per_question.setdefault(q, [None] * len(systems))[systems.index(s)] = rec
    return per_question


def _segments(text: str, marks: list[tuple[int, int, str]]) -> list[list[Any]]:
    """``text`` cut into ``[piece, kind]`` runs; later marks win where marks overlap, and
    pieces with no mark have kind None. The page sets each piece as text."""
    kinds: list[str | None] = [None] * len(text)
    for start, end, kind in marks:
        for i in range(max(0, start), min(len(text), end)):
            kinds[i] = kind
    out: list[list[Any]] = []
    for ch, kind in zip(text, kinds, strict=True):
        if out and out[-1][1] == kind:
            out[-1][0] += ch
        else:
            out.append([ch, kind])
    return out


def _failure_case(check: Any, answer: str, references: list[str], question: str) -> dict:
    """One failing answer for the page: the answer and the reference passage as
    segments, its numbers marked (changed, same, missing) and unsupported sentences."""
    from ragmeter.answers.numbers import numbers, stated_in

    marks: list[tuple[int, int, str]] = []
    for u in check.unsupported:
        at = answer.find(u.sentence)
        if at >= 0:
            marks.append((at, at + len(u.sentence), "unsupported"))
    ref_text = "\n".join(references)
    ref_numbers = numbers(ref_text)
    stated = [n for n in numbers(answer) if not n.weak]
    changed = {(c.start, c.end) for c in check.changed}
    for n in stated:
        if (n.start, n.end) in changed:
            marks.append((n.start, n.end, "changed"))
        elif stated_in(n, ref_numbers):
            marks.append((n.start, n.end, "same"))
    given = numbers(question)
    ref_marks = []
    for r in ref_numbers:
        said = any(stated_in(n, [r]) for n in stated)
        kind = "same" if said else "missing" if not stated_in(r, given) else "number"
        ref_marks.append((r.start, r.end, kind))
    return {
        "system": check.system,
        "question": check.question,
        "failures": list(check.failures),
        "number_flag": check.number_flag,
        "grade": check.grade,
        "hit": check.hit,
        "answer": _segments(answer, marks),
        "reference": _segments(ref_text, ref_marks),
        "changed": [[c.stated, c.reference] for c in check.changed],
        "unsupported": [[u.sentence, u.support] for u in check.unsupported],
    }


def load_failures(
    results: Results, judge: str | None = None, answers: AnswerSet | None = None
) -> dict[str, Any] | None:
    """The failure section: :func:`ragmeter.answers.failure_counts.failure_report`, as data.

    Per system the count and rate of each failure type, each judge's passes of answers
    whose number changed or was left out, the checks against hand grades, and every
    failing answer with its reference passage, the numbers marked. ``answers``: the set
    :func:`shared_answers` read (read here when not given).
    """
    aset = answers if answers is not None else shared_answers(results)
    if aset is None:
        return None
    from ragmeter.answers.failure_counts import ANY, failure_report
    from ragmeter.answers.failures import FAILURES

    report = failure_report(aset, judge)
    texts = {q.id: q for q in results.questions}
    cases = []
    for check in report.checks:
        if check.failures or check.number_flag:
            q = texts[check.question]
            cases.append(
                _failure_case(
                    check, aset.answers[check.key].answer, [a.text for a in q.answers], q.text
                )
            )
    return {
        "judge": report.judge,
        "k": report.k,
        "seed": report.seed,
        "rounds": report.rounds,
        "order": [*FAILURES, ANY],
        "labels": {f: metric_label(f) for f in (*FAILURES, ANY)},
        "threshold": report.settings.threshold,
        "systems": [
            {
                "system": row.system,
                "n": row.n,
                "counts": row.counts,
                "rates": {k: _est(e, k) for k, e in row.rates.items()},  # k: a row's name
            }
            for row in report.systems
        ],
        "leniency": [
            {
                "judge": j.judge,
                "flagged": j.flagged,
                "passed": len(j.passed),
                "rate": _est_or_none(j.rate),
            }
            for j in report.leniency
        ],
        "precision": [
            {"failure": p.failure, "hand_graded": p.hand_graded, "confirmed": p.confirmed}
            for p in report.precision
        ],
        "cases": cases,
    }


def load_audit(results: Results) -> dict[str, Any] | None:
    """Question audit flags: ``audit/flags.jsonl`` (and optional ``audit/meta.json``).

    One line per audited question, as ``ragmeter questions audit --results`` writes it
    (``{"id": ..., "flags": [...], "reasons": [{"reason": ...}], ...}``) or by hand::

        {"question": "q001", "flags": ["misstated"], "note": "says upper bound; passage: lower"}

    An empty ``flags`` list means the question was read and passed. Flags are
    free labels (e.g. copied, misstated, missing-context, yes-no).
    """
    from ragmeter.questions.flagged import results_audit

    audit = results_audit(results)
    if audit is None:
        return None
    meta = _read_json(results.path / "audit" / "meta.json")
    flags: dict[str, dict] = {}
    for row in audit.rows:
        note = row.note or "; ".join(f.reason for f in row.flags if f.source != "hand")
        flags[row.id] = {"flags": row.labels, "note": note}
    by_system = [
        {
            "system": split.system,
            "all": _est_or_none(split.all, audit.metric),
            "clean": _est_or_none(split.clean, audit.metric),
            "flagged": _est_or_none(split.flagged, audit.metric),
        }
        for split in audit.systems
    ]
    return {
        "source": meta.get("generator") or meta.get("source"),
        "audited": len(flags),
        "flagged": len(audit.flagged),
        "questions": audit.questions,
        "counts": audit.counts,
        "metric": audit.metric,
        "by_system": by_system,
        "per_question": flags,
    }


OPTIONAL_SECTIONS: list[OptionalSection] = [
    OptionalSection("answers", "Answer grades", load_answers),
    OptionalSection("failures", "Answer failures", load_failures),
    OptionalSection("audit", "Question audit", load_audit),
    OptionalSection("history", "Run history", load_history),
]
"""Sections drawn only when present; each loader returns None when its files are absent."""


def _attach_optional_to_questions(data: dict) -> None:
    """Move per-question parts of the optional sections onto the question records."""
    opt = data["optional"]
    answers = opt.get("answers")
    audit = opt.get("audit")
    by_q = answers.pop("per_question") if answers else {}
    flags = audit.pop("per_question") if audit else {}
    for q in data["questions"]:
        if q["id"] in by_q:
            q["model_answers"] = by_q[q["id"]]
        if q["id"] in flags:
            q["audit"] = flags[q["id"]]

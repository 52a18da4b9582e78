"""The answer numbers kept as data beside the other answer files: ``answers/accuracy.json``
(what ``grade`` prints, :meth:`ragmeter.answers.analysis.AnswerReport.to_dict`) and
``answers/by_judge.json`` (the saving table ``ragmeter judges`` prints), each written
atomically under the results lock, with the hand grades it was built from."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ragmeter.answers.analysis import AnswerReport, Corrected
from ragmeter.answers.store import AnswerSet, answers_dir, hand_stamp
from ragmeter.files.io import dumps
from ragmeter.files.outputs import results_lock, write_output
from ragmeter.runs.results import Results, results_path

__all__ = ["BY_JUDGE_FILE", "FILE", "write_answer_report", "write_corrected_by_judge"]

FILE = "accuracy.json"


def write_answer_report(report: AnswerReport, results: Results | str | Path) -> Path:
    """Write ``answers/accuracy.json`` (:meth:`AnswerReport.to_dict`) atomically, under the
    results lock, over nothing or over the file ragmeter wrote there (never a file of the
    user's at that name: that is an :class:`InputError`)."""
    base = results_path(results)
    path = answers_dir(base) / FILE
    with results_lock(base):
        write_output(path, dumps(report.to_dict()), "answer accuracy", flag=None)
    return path


BY_JUDGE_FILE = "by_judge.json"


def write_corrected_by_judge(
    corrected: Sequence[Corrected], aset: AnswerSet, ppi: str = "tuned"
) -> Path:
    """Write ``answers/by_judge.json``, the saving table ``ragmeter judges`` prints as
    data: ``ppi`` (the weight rule), ``hand_grades`` (:func:`hand_stamp`: the hand
    grades it was built from) and ``judges``, each judge's :func:`corrected_by_judge`
    row through :meth:`Corrected.to_dict` (empty with too few hand grades). Atomically,
    under the results lock, as :func:`write_answer_report` writes."""
    base = results_path(aset.results)
    path = answers_dir(base) / BY_JUDGE_FILE
    data = {
        "ppi": ppi,
        "hand_grades": hand_stamp(aset),
        "judges": [c.to_dict() for c in corrected],
    }
    with results_lock(base):
        write_output(path, dumps(data), "judge-corrected accuracy by judge", flag=None)
    return path

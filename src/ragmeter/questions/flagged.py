"""What an audit does to a run's numbers: each system's score on clean and flagged questions.

:func:`audit_scores` splits the questions of a results directory by the audit
rows (:func:`ragmeter.questions.audit.read_audit`) and bootstraps each system's
per-question scores on either side with the run's own seed, rounds and
confidence; :func:`results_audit` reads ``<results>/audit/flags.jsonl``. The
HTML report's audit section shows these objects.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ragmeter import stats
from ragmeter.questions.audit import Flagged, read_audit
from ragmeter.runs.results import Results, as_results

__all__ = ["AuditScores", "SystemSplit", "audit_scores", "results_audit"]


@dataclass(frozen=True)
class SystemSplit:
    """One system's ``metric`` on all questions (the run's own estimate, as saved),
    on the questions without a flag, and on the flagged ones (None when empty)."""

    system: str
    all: stats.Estimate | None
    clean: stats.Estimate | None
    flagged: stats.Estimate | None


@dataclass(frozen=True)
class AuditScores:
    """The audit of a results directory's questions and its effect on the scores.

    ``rows`` are the audit rows read (flagged or passed), ``flagged`` the ids of
    the questions with at least one flag, ``counts`` how often each label was raised
    (most frequent first).
    """

    metric: str
    questions: int
    rows: list[Flagged]
    flagged: list[str]
    counts: dict[str, int]
    systems: list[SystemSplit]


def audit_scores(
    results: Results, rows: Sequence[Flagged], metric: str | None = None
) -> AuditScores:
    """Split ``results``' questions by the audit ``rows`` and score each side per system."""
    summary = results.summary
    metric = metric or summary.metric
    seed = summary.seed
    rounds = summary.rounds
    confidence = summary.confidence
    qids = results.question_ids
    flagged_ids = {r.id for r in rows if r.flags}
    clean = np.array([q not in flagged_ids for q in qids])
    counts: dict[str, int] = {}
    for r in rows:
        for label in r.labels:
            counts[label] = counts.get(label, 0) + 1
    systems = []
    for s in results.systems:
        scores = results.scores(s, metric)

        def boot(mask: np.ndarray, scores: np.ndarray = scores) -> stats.Estimate | None:
            if not mask.sum():
                return None
            return stats.bootstrap(scores[mask], rounds=rounds, seed=seed, confidence=confidence)

        systems.append(
            SystemSplit(
                system=s,
                all=summary.estimate(s, metric),
                clean=boot(clean),
                flagged=boot(~clean),
            )
        )
    return AuditScores(
        metric=metric,
        questions=len(qids),
        rows=list(rows),
        flagged=[q for q in qids if q in flagged_ids],
        counts=dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))),
        systems=systems,
    )


def results_audit(results: Results | str | Path) -> AuditScores | None:
    """:func:`audit_scores` of ``<results>/audit/flags.jsonl``; None without the file or rows.

    A row naming a question that is not in the results is an error naming its line.
    """
    res = as_results(results)
    path = res.path / "audit" / "flags.jsonl"
    if not path.is_file():
        return None
    rows = read_audit(path, res.question_ids)
    return audit_scores(res, rows) if rows else None

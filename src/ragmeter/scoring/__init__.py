"""How a ranking is scored: grades from answer spans or qrels, every metric, trec_eval's
semantics for run files, and what a run measured.

Public names, imported on first use::

    grading:      grade, grade_ranking, coverage, SpanIndex
    metrics:      Metric, metric_names, score_questions, recall_at_k, precision_at_k, mrr_at_k,
                  ndcg_at_k
    trec:         Evaluation, evaluate_run, measure_names
    trec_read:    Qrels, Run, read_qrels, read_run
    measurement:  describe, differences
"""

from __future__ import annotations

from ragmeter._compat import lazy_getattr

_LAZY = {
    "grade": "ragmeter.scoring.grading",
    "grade_ranking": "ragmeter.scoring.grading",
    "coverage": "ragmeter.scoring.grading",
    "SpanIndex": "ragmeter.scoring.grading",
    "Metric": "ragmeter.scoring.metrics",
    "metric_names": "ragmeter.scoring.metrics",
    "score_questions": "ragmeter.scoring.metrics",
    "recall_at_k": "ragmeter.scoring.metrics",
    "precision_at_k": "ragmeter.scoring.metrics",
    "mrr_at_k": "ragmeter.scoring.metrics",
    "ndcg_at_k": "ragmeter.scoring.metrics",
    "Evaluation": "ragmeter.scoring.trec",
    "evaluate_run": "ragmeter.scoring.trec",
    "measure_names": "ragmeter.scoring.trec",
    "Qrels": "ragmeter.scoring.trec_read",
    "Run": "ragmeter.scoring.trec_read",
    "read_qrels": "ragmeter.scoring.trec_read",
    "read_run": "ragmeter.scoring.trec_read",
    "describe": "ragmeter.scoring.measurement",
    "differences": "ragmeter.scoring.measurement",
}
__all__ = sorted(_LAZY)


__getattr__ = lazy_getattr(__name__, _LAZY)

"""An audit without a model says which checks did not run instead of counting them 0."""

from __future__ import annotations

from rich.console import Console

from ragmeter.cli.question_views import audit_table
from ragmeter.inputs.testset import AnswerSpan, Question
from ragmeter.questions.audit import audit_questions, summarize_audit

BODY = "Dijkstra's algorithm runs in O(E log V) time with a binary heap."
QUESTIONS = [Question("1", "How fast is this algorithm?", (AnswerSpan("d", 0, len(BODY), BODY),))]


def _summary(**kw):
    flagged = audit_questions(QUESTIONS)
    return flagged, summarize_audit(flagged, rounds=200, **kw)


def test_without_a_model_misstated_is_not_counted_and_both_model_checks_are_named():
    flagged, summary = _summary()
    saved = summary.to_dict()
    assert "misstated" not in saved["counts"]  # not "misstated": 0, which reads as clean
    assert set(saved["checks_not_run"]) == {"misstated", "context"}
    assert "context-dependent" in saved["counts"]  # the wording rules ran
    console = Console(width=200, record=True)
    console.print(audit_table(flagged, summary))
    assert "model checks not run: misstated, context" in " ".join(console.export_text().split())


def test_with_a_model_the_checks_that_ran_are_counted():
    _, both = _summary(llm="gguf:model")
    assert both.to_dict()["checks_not_run"] == {} and "misstated" in both.counts
    _, one = _summary(llm="gguf:model", model_checks=("context",))
    assert list(one.not_run) == ["misstated"] and "misstated" not in one.counts

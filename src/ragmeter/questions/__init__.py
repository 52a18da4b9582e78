"""Test questions: generate them with a model, audit them, compare test sets.

::

    from ragmeter.questions import audit_questions, summarize_audit, audit_table

    flagged = audit_questions(testset, documents)          # rules only
    flagged = audit_questions(testset, documents, llm="ollama:llama3.2")  # + model checks
    summary = summarize_audit(flagged)                     # mean copy ratio with interval

See ``docs/questions.md``.
"""

from ragmeter.questions.audit import (
    FLAG_KINDS,
    STOP_WORDS,
    AuditSummary,
    Flag,
    Flagged,
    audit_command,
    audit_questions,
    audit_table,
    content_words,
    context_reasons,
    copy_ratio,
    fold,
    near_duplicates,
    restatement,
    summarize_audit,
    swapped_words,
    tokens,
    write_audit,
)
from ragmeter.questions.compare import (
    UNFIT_FLAGS,
    SetComparison,
    SystemComparison,
    compare_command,
    compare_table,
    compare_testsets,
    pair_by_answer,
    unfit_ids,
)
from ragmeter.questions.generate import (
    GENERATE_PROMPT,
    QUESTION_SCHEMA,
    Generation,
    Passage,
    Skipped,
    generate_command,
    generate_questions,
    model_label,
    parse_options,
    passages_from_testset,
    sample_passages,
)

__all__ = [
    "FLAG_KINDS",
    "GENERATE_PROMPT",
    "QUESTION_SCHEMA",
    "STOP_WORDS",
    "UNFIT_FLAGS",
    "AuditSummary",
    "Flag",
    "Flagged",
    "Generation",
    "Passage",
    "SetComparison",
    "Skipped",
    "SystemComparison",
    "audit_command",
    "audit_questions",
    "audit_table",
    "compare_command",
    "compare_table",
    "compare_testsets",
    "content_words",
    "context_reasons",
    "copy_ratio",
    "fold",
    "generate_command",
    "generate_questions",
    "model_label",
    "near_duplicates",
    "pair_by_answer",
    "parse_options",
    "passages_from_testset",
    "restatement",
    "sample_passages",
    "summarize_audit",
    "swapped_words",
    "tokens",
    "unfit_ids",
    "write_audit",
]

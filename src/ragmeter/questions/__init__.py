"""Test questions: generate them with a model, audit them, compare test sets.

::

    from ragmeter.questions import audit_questions, summarize_audit

    flagged = audit_questions(testset, documents)          # rules only
    flagged = audit_questions(testset, documents, llm="ollama:llama3.2")  # + model checks
    summary = summarize_audit(flagged)                     # mean copy ratio with interval

The package exports the three jobs (generate, audit, compare), each as a
function on objects and as one on files, and the dataclasses they return. The
rule helpers (``copy_ratio``, ``content_words``, ...) stay in
:mod:`ragmeter.questions.audit`; the terminal tables are
:mod:`ragmeter.cli.question_views`. See ``docs/questions.md``.
"""

from ragmeter.questions.audit import (
    FLAG_KINDS,
    AuditedFiles,
    AuditSummary,
    Flag,
    Flagged,
    audit_files,
    audit_questions,
    summarize_audit,
    write_audit,
)
from ragmeter.questions.compare import (
    UNFIT_FLAGS,
    SetComparison,
    SystemComparison,
    compare_files,
    compare_testsets,
    unfit_ids,
)
from ragmeter.questions.generate import (
    Generation,
    Passage,
    Skipped,
    generate_file,
    generate_questions,
    passages_from_testset,
    sample_passages,
)

__all__ = [
    "FLAG_KINDS",
    "UNFIT_FLAGS",
    "AuditSummary",
    "AuditedFiles",
    "Flag",
    "Flagged",
    "Generation",
    "Passage",
    "SetComparison",
    "Skipped",
    "SystemComparison",
    "audit_files",
    "audit_questions",
    "compare_files",
    "compare_testsets",
    "generate_file",
    "generate_questions",
    "passages_from_testset",
    "sample_passages",
    "summarize_audit",
    "unfit_ids",
    "write_audit",
]

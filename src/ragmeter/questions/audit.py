"""Audit test questions: copying, yes/no restatements, missing context, misstatements.

Every question is read next to its passage (its answer spans). Rule-based flags
need nothing but the text; two optional checks ask a chat model. See
``docs/questions.md`` for each flag's definition and threshold.

The rules and their word tables are :mod:`ragmeter.questions.audit_rules`, the model
checks :mod:`ragmeter.questions.audit_model`, the rows and files
:mod:`ragmeter.questions.audit_rows`; every name is importable from here too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from ragmeter import stats
from ragmeter.defaults import DEFAULTS
from ragmeter.errors import InputError
from ragmeter.files.outputs import is_results_dir, results_lock
from ragmeter.inputs.corpus import Document, load_corpus
from ragmeter.inputs.testset import Question, TestSet, load_testset
from ragmeter.questions.audit_model import (  # noqa: F401
    CONTEXT_PROMPT,
    CONTEXT_SCHEMA,
    DEFAULT_CHECK_TOKENS,
    MISSTATEMENT_PROMPT,
    MISSTATEMENT_SCHEMA,
    _llm_checks,
)
from ragmeter.questions.audit_rows import (  # noqa: F401
    CSV_COLUMNS,
    FLAG_KINDS,
    AuditSummary,
    Flag,
    Flagged,
    check_audit_targets,
    read_audit,
    write_audit,
)
from ragmeter.questions.audit_rules import (  # noqa: F401
    AUXILIARIES,
    CONTEXT_RULES,
    GENERIC_NOUNS,
    STOP_WORDS,
    SWAPS,
    content_words,
    context_matches,
    context_reasons,
    copied_span,
    copy_ratio,
    fold,
    near_duplicates,
    restatement,
    swapped_words,
    tokens,
)

__all__ = [
    "AUXILIARIES",
    "CONTEXT_RULES",
    "CONTEXT_SCHEMA",
    "FLAG_KINDS",
    "GENERIC_NOUNS",
    "MISSTATEMENT_SCHEMA",
    "STOP_WORDS",
    "SWAPS",
    "AuditSummary",
    "AuditedFiles",
    "Flag",
    "Flagged",
    "audit_files",
    "audit_questions",
    "content_words",
    "context_matches",
    "context_reasons",
    "copied_span",
    "copy_ratio",
    "fold",
    "near_duplicates",
    "restatement",
    "summarize_audit",
    "swapped_words",
    "tokens",
    "write_audit",
]


def _passage(q: Question, docs: dict[str, Document]) -> str:
    parts = []
    for a in q.answers:
        doc = docs.get(a.doc)
        parts.append(doc.text[a.start : a.end] if doc is not None else a.text)
    return "\n".join(parts)


def audit_questions(
    testset: TestSet | Sequence[Question],
    documents: Sequence[Document] = (),
    llm: Any = None,
    *,
    copy_threshold: float = 0.6,
    restate_threshold: float = 0.7,
    duplicate_threshold: float = 0.8,
    llm_checks: Sequence[str] = ("misstated", "context"),
    cache_path: str | Path | None = None,
    progress: Callable | None = None,
    **call: Any,
) -> list[Flagged]:
    """Audit every question against its passage; one :class:`Flagged` per question, in order.

    The passage is the question's answer spans (text taken from ``documents``
    when given, else from the spans), joined by newlines. With ``llm`` (a spec
    string such as ``ollama:llama3.2``, a backend object or
    :class:`ragmeter.llm.CallSettings`) the model checks in ``llm_checks`` run
    too, through the reply cache at ``cache_path`` (else the settings' cache);
    ``call`` sets or overrides the settings' fields (``options``,
    ``max_tokens`` (default 24), ...).
    """
    questions = testset.questions if isinstance(testset, TestSet) else list(testset)
    docs = {d.id: d for d in documents}
    items = [(q, _passage(q, docs)) for q in questions]
    dupes = near_duplicates(questions, duplicate_threshold)
    llm_flags: list[list[Flag]] = [[] for _ in items]
    verdicts: list[dict[str, str]] = [{} for _ in items]
    if llm is not None and llm_checks:
        from ragmeter.llm import call_settings

        if cache_path is not None:
            call["cache"] = cache_path
        settings = call_settings(llm, **call)
        llm_flags, verdicts, _ = _llm_checks(items, settings, llm_checks, progress)
    out = []
    for k, (q, passage) in enumerate(items):
        ratio = copy_ratio(q.text, passage)
        flags = _rule_flags(q.text, passage, ratio, copy_threshold, restate_threshold)
        flags.extend(llm_flags[k])
        if q.id in dupes:
            other, jac = dupes[q.id]
            flags.append(
                Flag(
                    "near-duplicate",
                    f"content-word Jaccard {jac:.2f} with {other}",
                    other=other,
                    value=jac,
                    threshold=duplicate_threshold,
                )
            )
        first = q.answers[0]
        out.append(
            Flagged(
                q.id,
                q.text,
                passage,
                first.doc,
                first.start,
                first.end,
                ratio,
                tuple(flags),
                verdicts[k],
            )
        )
    return out


def _rule_flags(
    text: str,
    passage: str,
    ratio: float | None,
    copy_threshold: float,
    restate_threshold: float,
) -> list[Flag]:
    """The flags the wording rules give a question (``ratio``: its copy ratio), in order:
    copies, yes-no restatement, context-dependent, swapped words."""
    flags: list[Flag] = []
    if ratio is not None and ratio >= copy_threshold:
        flags.append(
            Flag(
                "copies",
                f"{ratio:.0%} of its content words are in the passage "
                f"(threshold {copy_threshold:.0%})",
                value=ratio,
                threshold=copy_threshold,
                phrase=copied_span(text, passage),
            )
        )
    restated = restatement(text, passage)
    if restated is not None and restated[0] >= restate_threshold:
        flags.append(
            Flag(
                "yes-no-restatement",
                f"yes/no question; {restated[0]:.0%} of its content words are in one passage "
                f"sentence: {restated[1][:160]!r}",
                value=restated[0],
                threshold=restate_threshold,
                phrase=" ".join(restated[1].split()),
            )
        )
    for reason, phrase in context_matches(text):
        flags.append(Flag("context-dependent", reason, phrase=phrase))
    for said, passage_says in swapped_words(text, passage):
        flags.append(
            Flag(
                "swapped-word",
                f"the question says '{said}' where the passage says "
                f"'{passage_says}' (and never '{said}')",
                phrase=said,
            )
        )
    return flags


def summarize_audit(
    flagged: Sequence[Flagged],
    seed: int = DEFAULTS.seed,
    rounds: int = DEFAULTS.rounds,
    thresholds: dict[str, float] | None = None,
    llm: str | None = None,
    model_checks: Iterable[str] | None = None,
) -> AuditSummary:
    """Mean copy ratio with a bootstrap interval (:func:`ragmeter.stats.bootstrap`) and counts.

    ``model_checks`` are the model checks that ran (default: both with ``llm``, none
    without); the others are named in ``not_run`` and ``misstated``, which only the
    model finds, is left out of the counts rather than counted 0.
    """

    ran = set(("misstated", "context") if model_checks is None and llm else model_checks or ())
    not_run = {}
    if "misstated" not in ran:
        not_run["misstated"] = "needs a model (--model): no question was checked against it"
    if "context" not in ran:
        not_run["context"] = (
            "the model's context check needs a model (--model); only the wording rules "
            "for context-dependent questions ran"
        )
    ratios = [f.copy_ratio for f in flagged if f.copy_ratio is not None]
    estimate = stats.bootstrap(ratios, rounds=rounds, seed=seed) if ratios else None
    counts = {
        kind: sum(kind in f.kinds for f in flagged)
        for kind in FLAG_KINDS
        if not (kind == "misstated" and "misstated" in not_run)
    }
    n_flagged = sum(bool(f.kinds - {"unscored"}) for f in flagged)
    weak = sum(f.weak for f in flagged)
    return AuditSummary(
        n=len(flagged),
        n_scored=len(ratios),
        copy_ratio=estimate,
        flagged=n_flagged,
        counts=counts,
        thresholds=thresholds or {"copy": 0.6, "restate": 0.7, "duplicate": 0.8},
        llm=llm,
        not_run=not_run,
        weak=weak,
    )


class AuditedFiles(NamedTuple):
    """What :func:`audit_files` did: one :class:`Flagged` per question, the summary and
    the files written (a tuple too: ``flagged, summary, paths = audit_files(...)``)."""

    flagged: list[Flagged]
    summary: AuditSummary
    paths: list[Path]


def audit_files(
    testset_path: str | Path,
    corpus_path: str | Path,
    out_dir: str | Path | None = None,
    llm: Any = None,
    *,
    name: str = "audit",
    cache_path: str | Path | None = None,
    llm_checks: Iterable[str] = ("misstated", "context"),
    copy_threshold: float = 0.6,
    restate_threshold: float = 0.7,
    duplicate_threshold: float = 0.8,
    seed: int = DEFAULTS.seed,
    rounds: int = DEFAULTS.rounds,
    progress: Callable | None = None,
    **call: Any,
) -> AuditedFiles:
    """Load a test set and its corpus, audit, summarize, write the files.

    The body of ``ragmeter questions audit`` (which prints
    :func:`ragmeter.cli.question_views.audit_table`).

    ``out_dir`` defaults to the test set's folder; files are ``<name>.jsonl``,
    ``<name>.csv`` and ``<name>-summary.json``. ``llm`` and ``call`` are as
    for :func:`audit_questions`; the model cache defaults to
    ``<out_dir>/<name>.llm-cache.sqlite``. Returns the per-question results, the
    summary and the paths written, as :class:`AuditedFiles`.
    """

    llm_checks = tuple(llm_checks)
    thresholds = _thresholds(copy_threshold, restate_threshold, duplicate_threshold)
    documents = load_corpus(corpus_path)
    testset = load_testset(testset_path, documents)
    out_dir = Path(out_dir) if out_dir is not None else Path(testset_path).parent
    check_audit_targets(out_dir, name, corpus_path, testset_path)
    llm_label = None
    if llm is not None:
        from ragmeter.llm import call_settings

        llm = call_settings(llm, **call)
        call = {}
        llm_label = llm.label
        if cache_path is None and llm.cache is None:
            cache_path = out_dir / f"{name}.llm-cache.sqlite"
    flagged = audit_questions(
        testset,
        documents,
        llm,
        copy_threshold=copy_threshold,
        restate_threshold=restate_threshold,
        duplicate_threshold=duplicate_threshold,
        llm_checks=llm_checks,
        cache_path=cache_path,
        progress=progress,
        **call,
    )
    summary = summarize_audit(
        flagged,
        seed=seed,
        rounds=rounds,
        thresholds=thresholds,
        llm=llm_label,
        model_checks=llm_checks if llm is not None else (),
    )
    if is_results_dir(out_dir.parent):  # <results>/audit: written under the results lock
        with results_lock(out_dir.parent):
            paths = write_audit(flagged, summary, out_dir, name)
    else:
        paths = write_audit(flagged, summary, out_dir, name)
    return AuditedFiles(flagged, summary, paths)


def _thresholds(copy: float, restate: float, duplicate: float) -> dict[str, float]:
    """The audit's thresholds by name, each checked to be in (0, 1]."""
    thresholds = {"copy": copy, "restate": restate, "duplicate": duplicate}
    for label, value in thresholds.items():
        if not 0 < value <= 1:
            raise InputError(f"the {label} threshold must be in (0, 1], got {value}")
    return thresholds

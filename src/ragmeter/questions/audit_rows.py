"""Audit rows: the flags on each question, the set summary, and the files that hold them.

:func:`write_audit` writes ``<name>.jsonl``, ``<name>.csv`` and ``<name>-summary.json``;
:func:`read_audit` reads the JSONL back, or rows a person wrote by hand;
:func:`check_audit_targets` refuses to write over the inputs or over files that are not
audits.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragmeter.errors import InputError
from ragmeter.files.io import dumps, read_jsonl
from ragmeter.files.outputs import check_output_file, write_output
from ragmeter.files.safe_text import csv_text

FLAG_KINDS = (
    "copies",
    "yes-no-restatement",
    "context-dependent",
    "swapped-word",
    "misstated",
    "near-duplicate",
    "unscored",
)

#: the flags a measure raises over a threshold, and so have a strength
MEASURED = ("copies", "yes-no-restatement", "near-duplicate")


@dataclass(frozen=True)
class Flag:
    """One reason to distrust a question. ``source`` is ``"rule"``, ``"llm"`` or ``"hand"``.

    A flag raised by a measure over a threshold (``copies``: the copy ratio,
    ``yes-no-restatement``: the share in one sentence, ``near-duplicate``: the Jaccard
    similarity) keeps ``value`` and ``threshold``; ``phrase`` is the part of the question
    (or passage sentence) that raised it: the copied span, the words a context rule
    matched, the swapped word, the restated sentence.
    """

    kind: str
    reason: str
    source: str = "rule"
    other: str | None = None  # near-duplicate: the earlier question's id
    value: float | None = None
    threshold: float | None = None
    phrase: str = ""

    @property
    def label(self) -> str:
        """``kind``, or ``near-duplicate of <id>``."""
        return f"{self.kind} of {self.other}" if self.other else self.kind

    @property
    def strength(self) -> str | None:
        """``strong`` when the measure is at least halfway from its threshold to 100%
        (a copy ratio of 80% against 60%), ``weak`` below; None for a flag without a
        measure (a wording rule, the model, a person)."""
        if self.value is None or self.threshold is None:
            return None
        return "strong" if self.value >= (self.threshold + 1) / 2 else "weak"

    @property
    def how_strong(self) -> str:
        """The strength as a person reads it: ``weak, 67% >= 60%`` (the measure against
        its threshold), ``wording rule``, ``model`` or ``by hand``."""
        if self.strength is not None:
            assert self.value is not None and self.threshold is not None
            share = self.kind != "near-duplicate"  # a Jaccard similarity stays a number
            shown = (
                f"{self.value:.0%} >= {self.threshold:.0%}"
                if share
                else f"{self.value:.2f} >= {self.threshold:.2f}"
            )
            return f"{self.strength}, {shown}"
        if self.kind in MEASURED and self.source == "rule":
            return "strength not recorded"  # an audit file written before it was
        return {"rule": "wording rule", "llm": "model", "hand": "by hand"}.get(
            self.source, self.source
        )

    def to_dict(self) -> dict[str, Any]:
        out = {"kind": self.kind, "label": self.label, "reason": self.reason, "source": self.source}
        if self.other:
            out["other"] = self.other
        if self.value is not None and self.threshold is not None:
            out.update(value=round(self.value, 4), threshold=self.threshold)
            out["strength"] = self.strength
        if self.phrase:
            out["phrase"] = self.phrase
        return out


@dataclass(frozen=True)
class Flagged:
    """A question, its passage, its copy ratio and the flags raised on it (maybe none)."""

    id: str
    question: str
    passage: str
    doc: str
    start: int
    end: int
    copy_ratio: float | None
    flags: tuple[Flag, ...] = ()
    checks: dict[str, str] = field(default_factory=dict)  # model check -> verdict
    note: str = ""  # a person's note (audit rows written by hand)

    @property
    def flagged(self) -> bool:
        return bool(self.flags)

    @property
    def kinds(self) -> set[str]:
        return {f.kind for f in self.flags}

    @property
    def weak(self) -> bool:
        """Flagged by weak flags only (each a measure just over its threshold)."""
        return bool(self.flags) and all(f.strength == "weak" for f in self.flags)

    @property
    def labels(self) -> list[str]:
        seen: list[str] = []
        for f in self.flags:
            if f.label not in seen:
                seen.append(f.label)
        return seen

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "flags": self.labels,
            "reasons": [f.to_dict() for f in self.flags],
            "copy_ratio": None if self.copy_ratio is None else round(self.copy_ratio, 4),
            "question": self.question,
            "passage": self.passage,
            "doc": self.doc,
            "start": self.start,
            "end": self.end,
            **({"checks": dict(self.checks)} if self.checks else {}),
            **({"note": self.note} if self.note else {}),
        }


@dataclass(frozen=True)
class AuditSummary:
    """The set-level view: mean copy ratio with its interval, and flag counts.

    ``copy_ratio`` is a :class:`ragmeter.stats.Estimate` over the ``n_scored``
    questions that have content words. ``counts`` holds questions per flag kind;
    ``flagged`` the questions with any flag other than ``unscored``.
    """

    n: int
    n_scored: int
    copy_ratio: Any
    flagged: int
    counts: dict[str, int]
    thresholds: dict[str, float]
    llm: str | None = None
    #: model checks that did not run, with why (a count of 0 would read as checked)
    not_run: dict[str, str] = field(default_factory=dict)
    #: flagged questions whose every flag is weak (a measure just over its threshold)
    weak: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "questions": self.n,
            "copy_ratio": self.copy_ratio.to_dict() if self.copy_ratio is not None else None,
            "copy_ratio_questions": self.n_scored,
            "flagged": self.flagged,
            "flagged_weakly_only": self.weak,
            "counts": dict(self.counts),
            "thresholds": dict(self.thresholds),
            "llm": self.llm,
            "checks_not_run": dict(self.not_run),
        }


CSV_COLUMNS = ("id", "flags", "reasons", "copy_ratio", "question", "passage", "doc", "start", "end")


def write_audit(
    flagged: Sequence[Flagged],
    summary: AuditSummary,
    directory: str | Path,
    name: str = "audit",
) -> list[Path]:
    """Write ``<name>.jsonl``, ``<name>.csv`` and ``<name>-summary.json`` (each atomically).

    One row per question (flagged or not), the question text next to its
    passage and every flag with its reason.
    """

    directory = Path(directory)
    jsonl = "".join(json.dumps(f.to_dict(), ensure_ascii=False) + "\n" for f in flagged)
    rows = (
        [
            f.id,
            "; ".join(f.labels),
            " | ".join(f"{x.label}: {x.reason}" for x in f.flags),
            "" if f.copy_ratio is None else f"{f.copy_ratio:.4f}",
            f.question,
            f.passage,
            f.doc,
            f.start,
            f.end,
        ]
        for f in flagged
    )
    paths = [
        directory / f"{name}.jsonl",
        directory / f"{name}.csv",
        directory / f"{name}-summary.json",
    ]
    for path in paths:  # all three checked again before any is written
        check_output_file(path, "question audit")
    texts = (jsonl, csv_text(CSV_COLUMNS, rows), dumps(summary.to_dict()))  # no CSV cell runs
    for path, text in zip(paths, texts, strict=True):
        write_output(path, text, "question audit")
    return paths


def read_audit(path: str | Path, known: Iterable[str] | None = None) -> list[Flagged]:
    """The rows of an audit JSONL file, as :func:`write_audit` writes them or by hand.

    A written row names the question by ``id`` and gives its flags as ``reasons``
    (``{"kind", "reason", "source", "other"?}``). A hand-made row may name it by
    ``question`` and give ``flags`` as labels (a list or one string) with an
    optional ``note``; each label becomes a flag of that kind, source ``hand``.
    An empty ``flags`` list means the question was read and passed. Every problem
    is a one-line :class:`~ragmeter.errors.InputError` naming the file and line,
    so is a question id not in ``known`` (when given).
    """

    path = Path(path)
    known = None if known is None else set(known)
    out: list[Flagged] = []
    for lineno, row in read_jsonl(path):
        where = f"{path}:{lineno}"
        qid = row["id"] if "id" in row else row.get("question")
        if not isinstance(qid, str) or not qid:
            raise InputError(f'{where}: no question id (give "id"); give the audit .jsonl')
        if known is not None and qid not in known:
            raise InputError(f"{where}: question {qid!r} is not in this results directory")
        reasons, labels = row.get("reasons"), row.get("flags")
        if reasons is None and labels is None:
            raise InputError(
                f"{where}: not an audit row (no reasons or flags list); give the audit .jsonl"
            )
        note = row.get("note") or ""
        if not isinstance(note, str):
            raise InputError(f"{where}: note must be text")
        flags: list[Flag] = []
        if reasons:
            if not isinstance(reasons, list) or not all(
                isinstance(r, dict) and isinstance(r.get("kind"), str) for r in reasons
            ):
                raise InputError(f'{where}: reasons must be a list of {{"kind": ...}} objects')
            for r in reasons:
                other = r.get("other")
                value, threshold = r.get("value"), r.get("threshold")
                measured = all(isinstance(x, int | float) for x in (value, threshold))
                flags.append(
                    Flag(
                        r["kind"],
                        str(r.get("reason") or ""),
                        str(r.get("source") or "rule"),
                        None if other is None else str(other),
                        float(value) if measured else None,
                        float(threshold) if measured else None,
                        str(r.get("phrase") or ""),
                    )
                )
        else:
            labels = [labels] if isinstance(labels, str) else labels or []
            if not isinstance(labels, list) or not all(isinstance(x, str) for x in labels):
                raise InputError(f"{where}: flags must be a list of labels")
            flags = [Flag(label, note, "hand") for label in labels]
        text = row.get("question") if "id" in row else ""
        ratio = row.get("copy_ratio")
        checks = row.get("checks") or {}
        out.append(
            Flagged(
                id=qid,
                question=text if isinstance(text, str) else "",
                passage=str(row.get("passage") or ""),
                doc=str(row.get("doc") or ""),
                start=row["start"] if isinstance(row.get("start"), int) else 0,
                end=row["end"] if isinstance(row.get("end"), int) else 0,
                copy_ratio=float(ratio) if isinstance(ratio, int | float) else None,
                flags=tuple(flags),
                checks={str(k): str(v) for k, v in checks.items()}
                if isinstance(checks, dict)
                else {},
                note=note,
            )
        )
    return out


def check_audit_targets(
    out_dir: Path, name: str, corpus_path: str | Path, testset_path: str | Path
) -> None:
    """Refuse audit files that would land on the inputs or on files that are not audits."""

    if not name or Path(name).name != name or name in (".", ".."):
        raise InputError(f"audit name {name!r}: give a plain file name such as 'audit'")

    inputs = (("corpus", corpus_path), ("test set", testset_path))
    for suffix in (".jsonl", ".csv", "-summary.json"):
        check_output_file(out_dir / f"{name}{suffix}", "question audit", inputs)

"""Audit rows: the flags on each question, the set summary, and the files that hold them.

:func:`write_audit` writes ``<name>.jsonl``, ``<name>.csv`` and ``<name>-summary.json``;
:func:`read_audit` reads the JSONL back, or rows a person wrote by hand;
:func:`check_audit_targets` refuses to write over the inputs or over files that are not
audits.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragmeter.errors import InputError
from ragmeter.io import dumps, read_jsonl
from ragmeter.outputs import check_output_file, write_output

FLAG_KINDS = (
    "copies",
    "yes-no-restatement",
    "context-dependent",
    "swapped-word",
    "misstated",
    "near-duplicate",
    "unscored",
)


@dataclass(frozen=True)
class Flag:
    """One reason to distrust a question. ``source`` is ``"rule"`` or ``"llm"``."""

    kind: str
    reason: str
    source: str = "rule"
    other: str | None = None  # near-duplicate: the earlier question's id

    @property
    def label(self) -> str:
        """``kind``, or ``near-duplicate of <id>``."""
        return f"{self.kind} of {self.other}" if self.other else self.kind

    def to_dict(self) -> dict[str, Any]:
        out = {"kind": self.kind, "label": self.label, "reason": self.reason, "source": self.source}
        if self.other:
            out["other"] = self.other
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

    def to_dict(self) -> dict[str, Any]:
        return {
            "questions": self.n,
            "copy_ratio": self.copy_ratio.to_dict() if self.copy_ratio is not None else None,
            "copy_ratio_questions": self.n_scored,
            "flagged": self.flagged,
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
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for f in flagged:
        writer.writerow(
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
        )
    paths = [
        directory / f"{name}.jsonl",
        directory / f"{name}.csv",
        directory / f"{name}-summary.json",
    ]
    for path in paths:  # all three checked again before any is written
        check_output_file(path, "question audit")
    for path, text in zip(paths, (jsonl, buf.getvalue(), dumps(summary.to_dict())), strict=True):
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
                flags.append(
                    Flag(
                        r["kind"],
                        str(r.get("reason") or ""),
                        str(r.get("source") or "rule"),
                        None if other is None else str(other),
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

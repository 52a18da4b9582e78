"""Test questions and their answer keys: exact passages in the corpus.

Our JSONL format, one question per line::

    {"id": "q001", "question": "...", "answers": [{"doc": "a.md", "start": 10, "end": 42,
     "text": "..."}], "source": "reader"}

A span may give only ``text`` (and optionally ``doc``): it is then located in
its document, first as an exact match, then ignoring differences in
whitespace. A span that is missing or matches more than once is an error that
lists the question ids. Importers read Chroma's ``questions_df.csv`` and SQuAD.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ragmeter.corpus import Document
from ragmeter.errors import InputError
from ragmeter.io import read_json, read_jsonl, read_text
from ragmeter.schemas import ChromaReference, QuestionLine, SquadTestSet, check, describe_error


@dataclass(frozen=True, slots=True)
class AnswerSpan:
    """An exact passage: ``docs[doc].text[start:end] == text``."""

    doc: str
    start: int
    end: int
    text: str


@dataclass(frozen=True)
class Question:
    """A test question with the passage(s) that answer it (all of them are needed)."""

    id: str
    text: str
    answers: tuple[AnswerSpan, ...]
    meta: dict = field(default_factory=dict, compare=False)

    def to_dict(self) -> dict:
        out = {
            "id": self.id,
            "question": self.text,
            "answers": [
                {"doc": a.doc, "start": a.start, "end": a.end, "text": a.text} for a in self.answers
            ],
        }
        out.update(self.meta)
        return out


@dataclass(frozen=True)
class TestSet:
    """Questions plus what the import skipped (e.g. SQuAD's unanswerable ones)."""

    questions: list[Question]
    skipped: int = 0
    source: str = ""

    __test__ = False  # not a pytest class

    def __len__(self) -> int:
        return len(self.questions)


def _locate(text: str, doc: Document) -> list[int | tuple[int, int]]:
    """Start offsets of exact matches, else (start, end) of whitespace-insensitive ones."""
    exact = [m.start() for m in re.finditer(re.escape(text), doc.text)]
    if exact:
        return exact
    words = text.split()
    if not words:
        return []
    pattern = r"\s+".join(re.escape(w) for w in words)
    return [(m.start(), m.end()) for m in re.finditer(pattern, doc.text)]


class _Resolver:
    """Resolves spans against the corpus and collects problems per question id."""

    def __init__(self, docs: Sequence[Document], source: str) -> None:
        self.docs = {d.id: d for d in docs}
        self.source = source
        self.missing: list[str] = []
        self.ambiguous: list[str] = []
        self.unknown_doc: list[str] = []
        self.mismatch: list[str] = []

    def span(self, qid: str, raw: dict) -> AnswerSpan | None:
        doc_id = raw.get("doc")
        text = raw.get("text")
        start, end = raw.get("start"), raw.get("end")
        if doc_id is not None and str(doc_id) not in self.docs:
            self.unknown_doc.append(f"{qid} ({doc_id})")
            return None
        if start is not None and end is not None:
            if doc_id is None:
                raise InputError(f"{self.source}: question {qid}: a span with offsets needs a doc")
            doc = self.docs[str(doc_id)]
            start, end = int(start), int(end)
            if not (0 <= start < end <= len(doc.text)) or (
                text is not None and doc.text[start:end] != text
            ):
                self.mismatch.append(qid)
                return None
            return AnswerSpan(doc.id, start, end, doc.text[start:end])
        if not isinstance(text, str) or not text.strip():
            raise InputError(f"{self.source}: question {qid}: a span needs start/end or text")
        candidates = [self.docs[str(doc_id)]] if doc_id is not None else list(self.docs.values())
        found = [(d, m) for d in candidates for m in _locate(text, d)]
        if not found:
            self.missing.append(qid)
            return None
        if len(found) > 1:
            self.ambiguous.append(qid)
            return None
        doc, m = found[0]
        s, e = (m, m + len(text)) if isinstance(m, int) else m
        return AnswerSpan(doc.id, s, e, doc.text[s:e])

    def raise_problems(self) -> None:
        problems = []
        for label, ids, hint in (
            ("answer text not found", self.missing, "copy the passage exactly"),
            ("answer text found more than once", self.ambiguous, "give doc or start/end"),
            ("unknown document", self.unknown_doc, "check the doc ids against the corpus"),
            ("offsets do not match the text", self.mismatch, "fix start/end"),
        ):
            if ids:
                shown = ", ".join(ids[:10]) + (
                    f" and {len(ids) - 10} more" if len(ids) > 10 else ""
                )
                problems.append(f"{label} for {shown} ({hint})")
        if problems:
            raise InputError(f"{self.source}: " + "; ".join(problems))


def load_jsonl_testset(path: Path, docs: Sequence[Document]) -> TestSet:
    """Load ragmeter's JSONL test-set format, resolving spans against ``docs``."""
    resolver = _Resolver(docs, str(path))
    questions: list[Question] = []
    seen: set[str] = set()
    for number, obj in read_jsonl(path):
        raw_id = obj.get("id")
        where = f"{path}:{number}" + (
            f": question {raw_id}" if isinstance(raw_id, str | int) and raw_id is not True else ""
        )
        line = check(
            QuestionLine,
            obj,
            where,
            'each line needs "id", a non-empty "question" and a non-empty "answers" list',
        )
        qid = str(line.id)
        if qid in seen:
            raise InputError(f"{path}:{number}: duplicate question id {qid!r}")
        seen.add(qid)
        spans = []
        for answer in line.answers:
            raw = answer.model_dump(exclude_none=True)
            spans.append(resolver.span(qid, raw))
        text = line.question
        meta = {k: v for k, v in obj.items() if k not in ("id", "question", "answers")}
        if all(s is not None for s in spans):
            questions.append(Question(qid, text, tuple(spans), meta))
    resolver.raise_problems()
    return TestSet(questions, source=str(path))


def load_chroma_csv(path: Path, docs: Sequence[Document]) -> TestSet:
    """Chroma's ``questions_df.csv`` (question, references JSON, corpus_id).

    ``corpus_id`` names a document; ``<corpus_id>.md`` is used when the corpus
    was loaded from Chroma's ``corpora/`` folder. Ids are ``<corpus_id>-<row>``.
    """
    by_id = {d.id: d for d in docs}
    resolver = _Resolver(docs, str(path))
    questions = []
    reader = csv.DictReader(io.StringIO(read_text(path), newline=""))
    missing_cols = {"question", "references", "corpus_id"} - set(reader.fieldnames or [])
    if missing_cols:
        raise InputError(f"{path}: missing column(s) {sorted(missing_cols)}; is this Chroma's CSV?")
    for row_number, row in enumerate(reader, start=1):
        line = reader.line_num
        corpus_id = row["corpus_id"] or ""
        doc_id = corpus_id if corpus_id in by_id else f"{corpus_id}.md"
        qid = f"{corpus_id}-{row_number:03d}"
        where = f"{path}:{line}: question {qid}"
        if None in row.values() or None in row:
            raise InputError(f"{where}: the row has a different number of columns than the header")
        if not row["question"].strip():
            raise InputError(f"{where}: the question is empty; fill it in or remove the row")
        try:
            refs = json.loads(row["references"], parse_constant=_no_constant)
        except ValueError:
            raise InputError(f"{where}: references is not valid JSON") from None
        if not isinstance(refs, list) or not refs:
            raise InputError(f"{where}: references must be a non-empty JSON list")
        spans = []
        for i, raw in enumerate(refs):
            ref = check(
                ChromaReference,
                raw,
                f"{where}: references[{i}]",
                "each reference needs content, start_index and end_index",
            )
            spans.append(
                resolver.span(
                    qid,
                    {
                        "doc": doc_id,
                        "start": ref.start_index,
                        "end": ref.end_index,
                        "text": ref.content,
                    },
                )
            )
        if all(s is not None for s in spans):
            questions.append(Question(qid, row["question"], tuple(spans), {"source": "chroma"}))
    resolver.raise_problems()
    return TestSet(questions, source=str(path))


def load_squad_testset(path: Path, docs: Sequence[Document] | None = None) -> TestSet:
    """SQuAD JSON: answerable questions only; the first listed answer is the key.

    Documents are the paragraphs (ids ``title/index``, as :func:`corpus.load_squad`).
    Unanswerable questions are counted in ``skipped``.
    """
    data = read_json(path)
    squad = _check_squad(path, data)
    questions, skipped = [], 0
    seen: set[str] = set()
    for article in squad.data:
        for i, para in enumerate(article.paragraphs):
            context = para.context
            for qa in para.qas:
                qid = str(qa.id)
                if qid in seen:
                    raise InputError(f"{path}: question {qid}: duplicate question id")
                seen.add(qid)
                if qa.is_impossible or not qa.answers:
                    skipped += 1
                    continue
                a = qa.answers[0]
                start = a.answer_start
                end = start + len(a.text)
                if not a.text or context[start:end] != a.text:
                    raise InputError(
                        f"{path}: question {qid}: answer_start does not match the answer text; "
                        f"fix answer_start"
                    )
                span = AnswerSpan(f"{article.title}/{i}", start, end, a.text)
                questions.append(Question(qid, qa.question, (span,), {"source": "squad"}))
    if docs is not None:
        known = {d.id for d in docs}
        unknown = [q.id for q in questions if q.answers[0].doc not in known]
        if unknown:
            raise InputError(f"{path}: documents not in the corpus for {', '.join(unknown[:10])}")
    return TestSet(questions, skipped=skipped, source=str(path))


def _no_constant(name: str) -> object:
    raise ValueError(f"{name} is not valid JSON")


def _check_squad(path: Path, data: object) -> SquadTestSet:
    """The SQuAD file validated, with errors naming the question id where there is one."""
    from pydantic import ValidationError

    try:
        return SquadTestSet.model_validate(data)
    except ValidationError as exc:
        loc = exc.errors(include_url=False)[0]["loc"]
        where = str(path)
        node: object = data
        for part in loc:  # find the innermost question the problem lies in
            try:
                node = node[part]  # type: ignore[index]
            except (KeyError, IndexError, TypeError):
                break
            if isinstance(node, dict) and "question" in node and "id" in node:
                if isinstance(node["id"], str | int) and not isinstance(node["id"], bool):
                    where = f"{path}: question {node['id']}"
        raise InputError(
            f"{where}: {describe_error(exc)}; SQuAD JSON is "
            '{"data": [{"title", "paragraphs": [{"context", "qas": [{"id", "question", '
            '"answers": [{"text", "answer_start"}]}]}]}]}'
        ) from None


def load_testset(path: str | Path, docs: Sequence[Document], format: str = "auto") -> TestSet:
    """Load a test set (``jsonl``, ``chroma`` CSV or ``squad`` JSON) against ``docs``."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: no such file; give the test-set path")
    if format == "auto":
        format = {".jsonl": "jsonl", ".csv": "chroma", ".json": "squad"}.get(path.suffix, "")
        if not format:
            raise InputError(
                f"{path}: unknown test-set format; use .jsonl, Chroma .csv or SQuAD .json"
            )
    if format == "jsonl":
        ts = load_jsonl_testset(path, docs)
    elif format == "chroma":
        ts = load_chroma_csv(path, docs)
    elif format == "squad":
        ts = load_squad_testset(path, docs)
    else:
        raise InputError(f"unknown test-set format {format!r}; choose jsonl, chroma or squad")
    if not ts.questions:
        raise InputError(f"{path}: no questions; the test set is empty")
    return ts


def save_jsonl_testset(testset: TestSet | Sequence[Question], path: str | Path) -> None:
    """Write questions in ragmeter's JSONL format (written atomically)."""
    from ragmeter.io import atomic_write_text

    questions = testset.questions if isinstance(testset, TestSet) else testset
    lines = [json.dumps(q.to_dict(), ensure_ascii=False, sort_keys=True) for q in questions]
    atomic_write_text(Path(path), "\n".join(lines) + "\n")

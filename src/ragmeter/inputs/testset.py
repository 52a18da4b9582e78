"""Test questions and their answer keys: exact passages in the corpus.

Our JSONL format, one question per line::

    {"id": "q001", "question": "...", "answers": [{"doc": "a.md", "start": 10, "end": 42,
     "text": "..."}], "source": "reader"}

A span may give only ``text`` (and optionally ``doc``): it is then located in
its document, first as an exact match, then ignoring differences in
whitespace. A span that is missing or matches more than once is an error that
lists the question ids. Importers read Chroma's ``questions_df.csv`` and SQuAD.

One loader per test-set format (JSONL, Chroma CSV, SQuAD, BEIR, TREC topics and qrels),
all resolving answer spans through one :class:`_Resolver`, so every format has one error
style. The types they return are :mod:`ragmeter.inputs.answer_keys`.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Sequence
from pathlib import Path

from ragmeter.errors import InputError
from ragmeter.files.io import read_json, read_jsonl, read_text, refuse_lone_surrogates
from ragmeter.files.outputs import write_output
from ragmeter.files.schemas import (
    ChromaReference,
    QuestionLine,
    SquadTestSet,
    describe_error,
    validate,
)
from ragmeter.inputs.answer_keys import AnswerSpan, Question, TestSet
from ragmeter.inputs.corpus import Document
from ragmeter.scoring.trec import read_qrels


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
        self.ambiguous_in_doc: list[str] = []  # the doc was given: only offsets tell
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
            if doc_id is not None:
                self.ambiguous_in_doc.append(f"{qid} ({len(found)} times in {doc_id})")
            else:
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
            (
                "answer text found more than once in its doc",
                self.ambiguous_in_doc,
                "give start/end, or a longer text that occurs once",
            ),
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
        if obj.get("any_of") is not None or obj.get("qrels") is not None:
            question = _other_key(path, number, obj, resolver)
            if question is not None:
                if question.id in seen:
                    raise InputError(f"{path}:{number}: duplicate question id {question.id!r}")
                seen.add(question.id)
                questions.append(question)
            continue
        raw_id = obj.get("id")
        where = f"{path}:{number}" + (
            f": question {raw_id}" if isinstance(raw_id, str | int) and raw_id is not True else ""
        )
        line = validate(
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
        _check_cluster(obj, where)
        meta = {k: v for k, v in obj.items() if k not in ("id", "question", "answers")}
        if all(s is not None for s in spans):
            questions.append(Question(qid, text, tuple(spans), meta))
    resolver.raise_problems()
    return TestSet(questions, source=str(path))


def _other_key(path: Path, number: int, obj: dict, resolver: _Resolver) -> Question | None:
    """A JSONL line with an "any_of" list of alternative spans or "qrels" {doc: grade}."""
    qid, text = obj.get("id"), obj.get("question")
    any_of, judged = obj.get("any_of"), obj.get("qrels")
    if qid is None or not isinstance(text, str):
        raise InputError(f'{path}:{number}: each line needs "id" and "question"')
    qid = str(qid)
    _check_cluster(obj, f"{path}:{number}: question {qid}")
    meta = {
        k: v for k, v in obj.items() if k not in ("id", "question", "answers", "any_of", "qrels")
    }
    if judged is not None:
        if (
            not isinstance(judged, dict)
            or not judged
            or not all(isinstance(g, int) and not isinstance(g, bool) for g in judged.values())
        ):
            raise InputError(
                f'{path}:{number}: "qrels" must map document ids to whole-number grades'
            )
        return Question(qid, text, (), meta, qrels=tuple((str(d), g) for d, g in judged.items()))
    if not isinstance(any_of, list) or not any_of or not all(isinstance(a, dict) for a in any_of):
        raise InputError(f'{path}:{number}: "any_of" must be a non-empty list of span objects')
    spans = [resolver.span(qid, raw) for raw in any_of]
    if any(sp is None for sp in spans):
        return None
    return Question(qid, text, (spans[0],), meta, any_of=tuple(spans))


def _check_cluster(obj: dict, where: str) -> None:
    """A ``cluster`` field, when there is one, is a non-empty text or a whole number."""
    value = obj.get("cluster")
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, str | int) or not str(value).strip():
        raise InputError(
            f'{where}: "cluster" must be a non-empty text or a whole number (the document or '
            f"group the question was written from), got {value!r}"
        )


def question_clusters(
    questions: Sequence[Question], mode: str = "auto"
) -> tuple[tuple[str, ...] | None, str]:
    """``(labels, source)``: each question's cluster, and where the labels came from.

    ``"field"``: every question's ``cluster`` field; ``"document"``: the document of its
    (first) answer passage; ``"auto"``: the fields if any question has one, else the
    documents if every question has an answer passage (qrels name none), else none;
    ``"none"``: none. A field or document a question lacks is an :class:`InputError`.
    """
    if mode == "none" or not questions:
        return None, "none"
    have = [q.cluster is not None for q in questions]
    if mode == "field" or (mode == "auto" and any(have)):
        if not all(have):
            first = questions[have.index(False)].id
            raise InputError(
                f'question {first!r} has no "cluster" field ({have.count(False)} of '
                f"{len(questions)} lack one); give every question one, or use --clusters "
                "document or none"
            )
        return tuple(q.cluster or "" for q in questions), "field"
    documented = [bool(q.answers) for q in questions]
    if not all(documented):
        if mode == "auto":
            return None, "none"
        first = questions[documented.index(False)].id
        raise InputError(
            f"question {first!r} is judged by qrels and names no answer document; give every "
            'question a "cluster" field (--clusters field) or use --clusters none'
        )
    return tuple(q.answers[0].doc for q in questions), "document"


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
        refuse_lone_surrogates(refs, row["references"], path, line)
        if not isinstance(refs, list) or not refs:
            raise InputError(f"{where}: references must be a non-empty JSON list")
        spans = []
        for i, raw in enumerate(refs):
            ref = validate(
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
    """SQuAD JSON: answerable questions only; every annotator's answer is an
    alternative ("any of" key; the first listed is shown).

    Documents are the paragraphs (ids ``title/index``, as :func:`corpus.load_squad`).
    Unanswerable questions are counted in ``skipped`` and listed in ``notes``.
    """
    data = read_json(path)
    squad = _check_squad(path, data)
    questions, skipped_ids = [], []
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
                    skipped_ids.append(qid)
                    continue
                spans: list[AnswerSpan] = []
                for a in qa.answers:
                    start = a.answer_start
                    end = start + len(a.text)
                    if not a.text or context[start:end] != a.text:
                        raise InputError(
                            f"{path}: question {qid}: answer_start does not match the answer "
                            "text; fix answer_start"
                        )
                    span = AnswerSpan(f"{article.title}/{i}", start, end, a.text)
                    if span not in spans:
                        spans.append(span)
                questions.append(
                    Question(
                        qid,
                        qa.question,
                        (spans[0],),
                        {"source": "squad"},
                        any_of=tuple(spans) if len(spans) > 1 else (),
                    )
                )
    skipped = len(skipped_ids)
    if docs is not None:
        known = {d.id for d in docs}
        unknown = [q.id for q in questions if q.answers[0].doc not in known]
        if unknown:
            raise InputError(f"{path}: documents not in the corpus for {', '.join(unknown[:10])}")
    notes = ()
    if skipped:
        shown = ", ".join(skipped_ids[:10]) + (f" and {skipped - 10} more" if skipped > 10 else "")
        notes = (f"{path}: skipped {skipped} unanswerable questions: {shown}",)
    return TestSet(questions, skipped=skipped, source=str(path), notes=notes)


_TOP = re.compile(r"<top>(.*?)</top>", re.S | re.I)
_TOPIC_XML = re.compile(r"<topic\s+number=\"([^\"]+)\"[^>]*>(.*?)</topic>", re.S | re.I)
_NUM = re.compile(r"<num>\s*(?:Number:)?\s*([^<\s]+)", re.I)
_TOPIC_FIELD = {
    "title": re.compile(r"<title>\s*(?:Topic:)?(.*?)(?=<|$)", re.S | re.I),
    "query": re.compile(r"<query>(.*?)(?=<|$)", re.S | re.I),
    "desc": re.compile(r"<desc>\s*(?:Description:)?(.*?)(?=<|$)", re.S | re.I),
}


def read_topics(path: str | Path, field: str = "title") -> dict[str, str]:
    """Query texts by id from a TREC topics file (``<top><num>..<title>..</top>``,
    or ``<topic number="..."><query>..``), a BEIR ``queries.jsonl`` or a TSV of
    ``id<TAB>text`` lines (MS MARCO). ``field`` picks ``title`` or ``desc``."""
    path = Path(path)
    if path.suffix == ".jsonl":
        out = {}
        for number, obj in read_jsonl(path):
            qid, text = obj.get("_id", obj.get("id")), obj.get("text")
            if qid is None or not isinstance(text, str):
                raise InputError(f'{path}:{number}: each query needs "_id" and "text"')
            out[str(qid)] = text
        return out
    raw = read_text(path) if not path.suffix == ".gz" else _gz_text(path)
    out: dict[str, str] = {}
    tops = _TOP.findall(raw)
    if tops:
        pattern = _TOPIC_FIELD.get(field)
        if pattern is None:
            raise InputError(f"topic field {field!r}: choose title or desc")
        for n, body in enumerate(tops, start=1):
            num = _NUM.search(body)
            text = pattern.search(body)
            if num is None or text is None or not text.group(1).strip():
                raise InputError(f"{path}: topic {n} has no <num> or no <{field}>")
            out[num.group(1).strip()] = " ".join(text.group(1).split())
        return out
    xml = _TOPIC_XML.findall(raw)
    if xml:
        for num, body in xml:
            text = _TOPIC_FIELD["query"].search(body) or _TOPIC_FIELD["title"].search(body)
            if text is None:
                raise InputError(f"{path}: topic {num} has no <query> or <title>")
            out[num.strip()] = " ".join(text.group(1).split())
        return out
    for number, line in enumerate(raw.split("\n"), start=1):
        if not line.strip():
            continue
        qid, sep, text = line.partition("\t")
        if not sep or not text.strip():
            raise InputError(
                f"{path}:{number}: not a topics file: expected <top> topics or 'id<TAB>text' lines"
            )
        out[qid.strip()] = text.strip()
    return out


def _gz_text(path: Path) -> str:
    import gzip

    try:
        with gzip.open(path, "rb") as fh:
            return fh.read().decode("utf-8", "replace")
    except (OSError, EOFError) as exc:  # EOFError: a .gz cut short
        raise InputError(
            f"{path}: cannot read ({exc}); if it is cut short, copy or download it again"
        ) from None


def _listed(ids: Sequence[str], limit: int = 10) -> str:
    return ", ".join(ids[:limit]) + (f" and {len(ids) - limit} more" if len(ids) > limit else "")


def load_judged_testset(
    topics: str | Path, qrels: str | Path, docs: Sequence[Document] | None = None
) -> TestSet:
    """Questions from a topics file and their document-level key from qrels.

    Topics without judgments, and judged queries without a topic, are left out and
    named in ``notes``. Judged documents missing from the corpus still count as
    relevant (they cannot be found, as with any retriever that misses them).
    """

    texts = read_topics(topics)
    judged = read_qrels(qrels).to_dict()
    questions = [
        Question(qid, text, (), {"source": "qrels"}, qrels=tuple(judged[qid].items()))
        for qid, text in texts.items()
        if qid in judged
    ]
    notes = []
    unjudged = [q for q in texts if q not in judged]
    if unjudged:
        notes.append(
            f"{topics}: {len(unjudged)} topics have no judgments, left out: {_listed(unjudged)}"
        )
    untitled = [q for q in judged if q not in texts]
    if untitled:
        notes.append(
            f"{qrels}: {len(untitled)} judged queries have no topic, left out: {_listed(untitled)}"
        )
    if docs is not None:
        known = {d.id for d in docs}
        absent = {d for q in questions for d, g in q.qrels if g > 0 and d not in known}
        if absent:
            notes.append(
                f"{qrels}: {len(absent)} relevant documents are not in the corpus; "
                "they count as relevant and are never found"
            )
    no_rel = [q.id for q in questions if not any(g > 0 for _, g in q.qrels)]
    if no_rel:
        notes.append(
            f"{qrels}: {len(no_rel)} queries have no relevant document; they score 0: "
            f"{_listed(no_rel)}"
        )
    return TestSet(questions, skipped=len(unjudged), source=str(topics), notes=tuple(notes))


def load_beir_testset(
    folder: str | Path, docs: Sequence[Document] | None = None, split: str = "test"
) -> TestSet:
    """A BEIR folder as a test set: ``queries.jsonl`` and ``qrels/<split>.tsv``."""
    folder = Path(folder)
    qrels = folder / "qrels" / f"{split}.tsv"
    if not qrels.is_file():
        found = sorted(p.name for p in (folder / "qrels").glob("*.tsv"))
        raise InputError(
            f"{folder}: no qrels/{split}.tsv" + (f" (found {', '.join(found)})" if found else "")
        )
    return load_judged_testset(folder / "queries.jsonl", qrels, docs)


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
    """Load a test set (``jsonl``, ``chroma`` CSV or ``squad`` JSON, or a BEIR
    folder) against ``docs``."""
    path = Path(path)
    if format in ("auto", "beir") and path.is_dir() and (path / "queries.jsonl").is_file():
        return load_beir_testset(path, docs)
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
    """Write questions in ragmeter's JSONL format (atomically, under the output rule:
    an existing file is replaced only when ragmeter wrote it)."""

    questions = testset.questions if isinstance(testset, TestSet) else testset
    lines = [json.dumps(q.to_dict(), ensure_ascii=False, sort_keys=True) for q in questions]
    write_output(Path(path), "\n".join(lines) + "\n", "test set", flag="path")

"""Retrievers that return document spans themselves: ragmeter grades what your
own system returned, without chunking or indexing anything.

* :class:`RunFileRetriever` reads a TREC run file or a JSONL file of ranked ids.
* :class:`CallableRetriever` calls a Python function ``question -> [(item, score)]``.
* :class:`HttpRetriever` POSTs each question to an HTTP endpoint.

An *item* is either a document id (the whole document is the result; this
needs the document texts, see :meth:`set_documents`) or a span id
``docid:start-end`` with character offsets into the document text (end
exclusive). A document id that itself ends in ``:N-M`` is read as a document id
when the documents are known and hold that id.

HTTP contract (one request per question)::

    POST <url>   {"qid": "q1", "question": "how do bloom filters ...", "k": 10}
    200 OK       {"results": [{"doc": "posts/bloom.md", "start": 120, "end": 480,
                               "score": 12.5, "text": "..."}, ...]}

``start``/``end`` may be left out together (the whole document); ``score`` may
be left out (list order is used); ``text`` is optional and ignored for grading.
Results are ordered by score, highest first (equal scores keep the order sent).

Size: three retrievers over one span-resolution core (:class:`_SpanSource`): a run file,
a Python function and an HTTP endpoint differ only in how the ranked list arrives.
"""

from __future__ import annotations

import importlib
import inspect
import math
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import httpx

from ragmeter.errors import BadServerReply, InputError
from ragmeter.files.io import read_jsonl
from ragmeter.http import post_json
from ragmeter.inputs.corpus import load_corpus
from ragmeter.retrieval.base import Hit, SpanRetriever
from ragmeter.retrieval.trec import read_run_lines

_SPAN = re.compile(r"^(?P<doc>.+):(?P<start>\d+)-(?P<end>\d+)$")
JSONL_SUFFIXES = (".jsonl", ".ndjson", ".json")

DocTexts = Mapping[str, str]


def _doc_texts(docs: Any) -> dict[str, str] | None:
    """``{doc_id: text}`` from a mapping or from objects with ``id`` and ``text``."""
    if docs is None:
        return None
    if isinstance(docs, Mapping):
        return {str(k): (v if isinstance(v, str) else v.text) for k, v in docs.items()}
    return {str(d.id): d.text for d in docs}


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


class _SpanSource(SpanRetriever):
    """Shared: document texts and turning items into :class:`Hit` objects."""

    name: str

    def __init__(
        self, docs: Any = None, corpus: str | None = None, corpus_format: str = "auto"
    ) -> None:
        self._docs = _doc_texts(docs)
        self._corpus = corpus
        self._corpus_format = corpus_format

    def set_documents(self, docs: DocTexts | Iterable[Any]) -> None:
        """The corpus: ``{doc_id: text}`` or documents with ``id`` and ``text``.

        Needed for whole-document items (their end offset is the text length)
        and used to check that spans lie inside their documents.
        """
        self._docs = _doc_texts(docs)

    @property
    def docs(self) -> dict[str, str] | None:
        if self._docs is None and self._corpus:
            self._docs = _doc_texts(load_corpus(self._corpus, self._corpus_format))
        return self._docs

    def hit(self, item: Any, score: float, where: str) -> Hit:
        """A :class:`Hit` from a doc id, a span id, a ``(doc, start, end)`` tuple
        or a Hit; ``where`` prefixes error messages (file and line, or question)."""
        docs = self.docs
        if isinstance(item, Hit):
            doc, start, end = item.doc_id, item.start, item.end
        elif isinstance(item, tuple | list) and len(item) == 3:
            doc, start, end = item
            if not isinstance(doc, str) or not all(
                isinstance(x, int) and not isinstance(x, bool) for x in (start, end)
            ):
                raise InputError(f"{where}: span {item!r} must be (doc_id, start, end)")
        elif isinstance(item, str) and item:
            m = _SPAN.match(item)
            if m and not (docs is not None and item in docs):
                doc, start, end = m["doc"], int(m["start"]), int(m["end"])
            else:
                if docs is None:
                    raise InputError(
                        f"{where}: {item!r} is a document id; whole-document results need "
                        f"the document texts (set corpus= on retriever {self.name!r}) "
                        "or give spans as docid:start-end"
                    )
                if item not in docs:
                    raise InputError(f"{where}: document {item!r} is not in the corpus")
                return Hit(item, 0, len(docs[item]), score)
        else:
            raise InputError(
                f"{where}: cannot read result {item!r}: give a document id, "
                "'docid:start-end' or (doc, start, end)"
            )
        if not 0 <= start < end:
            raise InputError(f"{where}: span {doc}:{start}-{end} must have 0 <= start < end")
        if docs is not None:
            if doc not in docs:
                raise InputError(f"{where}: document {doc!r} is not in the corpus")
            if end > len(docs[doc]):
                raise InputError(
                    f"{where}: span {doc}:{start}-{end} ends past the end of "
                    f"the document ({len(docs[doc])} characters)"
                )
        return Hit(doc, start, end, score)


def _order(rows: list[tuple[Any, float, str]], k: int) -> list[tuple[Any, float, str]]:
    """Highest score first, equal scores in the order given; top ``k``."""
    return sorted(rows, key=lambda r: -r[1])[:k]


# ---------------------------------------------------------------------------
# run files


def _sniff_format(path: Path) -> str:
    if path.suffix.lower() in JSONL_SUFFIXES:
        return "jsonl"
    try:
        with open(path, "rb") as fh:
            for line in fh:
                if line.strip():
                    return "jsonl" if line.lstrip().startswith(b"{") else "trec"
    except OSError as exc:
        raise InputError(f"cannot read run file {path}: {exc.strerror or exc}") from None
    return "trec"


def _parse_ranked_entry(entry: Any, where: str) -> tuple[Any, float | None]:
    if isinstance(entry, str):
        return entry, None
    if isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], str):
        score = _number(entry[1])
        if score is None:
            raise InputError(f"{where}: score {entry[1]!r} is not a finite number")
        return entry[0], score
    if isinstance(entry, dict):
        score = None
        if "score" in entry:
            score = _number(entry["score"])
            if score is None:
                raise InputError(f"{where}: score {entry['score']!r} is not a finite number")
        if "id" in entry and isinstance(entry["id"], str):
            return entry["id"], score
        if "doc" in entry and isinstance(entry["doc"], str):
            if "start" in entry or "end" in entry:
                start, end = entry.get("start"), entry.get("end")
                if not all(isinstance(x, int) and not isinstance(x, bool) for x in (start, end)):
                    raise InputError(f"{where}: 'start' and 'end' must both be integers")
                return (entry["doc"], start, end), score
            return entry["doc"], score
    raise InputError(
        f'{where}: cannot read ranked entry {entry!r}; use "id", ["id", score], '
        '{"id": ..., "score": ...} or {"doc", "start", "end", "score"}'
    )


def read_ranked_jsonl(path: str | os.PathLike[str]) -> dict[str, list[tuple[Any, float, str]]]:
    """``{qid: [(item, score, where), ...]}`` from a JSONL file of ranked results.

    Each line is ``{"qid": ..., "ranked": [...]}`` with entries ``"id"``,
    ``["id", score]``, ``{"id": ..., "score": ...}`` or
    ``{"doc": ..., "start": ..., "end": ..., "score": ...}``. Without scores
    the list order is the ranking.
    """
    path = Path(path)
    out: dict[str, list[tuple[Any, float, str]]] = {}
    for n, obj in read_jsonl(path):
        where = f"{path}:{n}"
        if "qid" not in obj or "ranked" not in obj:
            raise InputError(f'{where}: each line needs "qid" and "ranked"')
        qid, ranked = str(obj["qid"]), obj["ranked"]
        if not isinstance(ranked, list):
            raise InputError(f'{where}: "ranked" must be a list')
        if qid in out:
            raise InputError(f"{where}: question {qid!r} appears on two lines")
        parsed = [_parse_ranked_entry(e, where) for e in ranked]
        with_scores = sum(s is not None for _, s in parsed)
        if with_scores not in (0, len(parsed)):
            raise InputError(f"{where}: give a score for every entry or for none")
        seen: set = set()
        rows = []
        for i, (item, score) in enumerate(parsed):
            key = tuple(item) if isinstance(item, list) else item
            if key in seen:
                raise InputError(f"{where}: {item!r} is ranked twice")
            seen.add(key)
            rows.append((item, float(len(parsed) - i) if score is None else score, where))
        out[qid] = rows
    return out


def read_trec_ranked(path: str | os.PathLike[str]) -> dict[str, list[tuple[Any, float, str]]]:
    """``{qid: [(item, score, where), ...]}`` from a TREC run file, by score then rank."""
    return {
        qid: [(r.item, r.score, f"{path}:{r.line}") for r in rows]
        for qid, rows in read_run_lines(path).items()
    }


class RunFileRetriever(_SpanSource):
    """Results your own system produced, read from a file.

    ``format`` is ``"trec"`` (``qid Q0 docid rank score tag`` per line),
    ``"jsonl"`` (see :func:`read_ranked_jsonl`) or ``"auto"`` (by suffix,
    else by the first line). The file is read and checked when the retriever
    is made; bad lines raise :class:`InputError` naming file and line.
    """

    def __init__(
        self,
        name: str = "run-file",
        path: str | os.PathLike[str] | None = None,
        format: str = "auto",
        docs: Any = None,
        corpus: str | None = None,
        corpus_format: str = "auto",
    ) -> None:
        super().__init__(docs, corpus, corpus_format)
        if path is None:
            raise InputError(f"retriever {name!r}: path= (the run file) is required")
        self.name = name
        self.path = Path(path)
        if not self.path.is_file():
            raise InputError(f"retriever {name!r}: run file {self.path} does not exist")
        fmt = _sniff_format(self.path) if format == "auto" else format
        if fmt == "trec":
            self._run = read_trec_ranked(self.path)
        elif fmt == "jsonl":
            self._run = read_ranked_jsonl(self.path)
        else:
            raise InputError(
                f"retriever {name!r}: format must be auto, trec or jsonl, not {format!r}"
            )
        self.format = fmt
        self.missing: list[str] = []

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": "run-file",
            "path": str(self.path),
            "format": self.format,
            "questions_in_file": len(self._run),
            "questions_missing": len(self.missing),
        }

    @property
    def question_ids(self) -> list[str]:
        return list(self._run)

    def search(self, questions: Sequence[tuple[str, str]], k: int) -> list[list[Hit]]:
        qids = [str(qid) for qid, _ in questions]
        self.missing = [q for q in qids if q not in self._run]
        if qids and len(self.missing) == len(qids) and self._run:
            sample = ", ".join(repr(q) for q in list(self._run)[:3])
            raise InputError(
                f"run file {self.path} has results for none of the {len(qids)} questions "
                f"(file ids look like {sample}; test-set ids like {qids[0]!r})"
            )
        return [
            [
                self.hit(item, score, where)
                for item, score, where in _order(self._run.get(qid, []), k)
            ]
            for qid in qids
        ]


# ---------------------------------------------------------------------------
# a Python function


def _accepts_k(fn: Callable) -> bool:
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return False
    positional = [
        p for p in sig.parameters.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    var = any(p.kind == p.VAR_POSITIONAL for p in sig.parameters.values())
    return var or len(positional) >= 2


def load_function(ref: str) -> Callable:
    """``"package.module:function"`` -> the function."""
    module, _, attr = ref.partition(":")
    if not module or not attr:
        raise InputError(f"function {ref!r} must look like 'package.module:function'")
    try:
        obj: Any = importlib.import_module(module)
    except ImportError as exc:
        raise InputError(f"cannot import {module!r} for function {ref!r}: {exc}") from None
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise InputError(f"module {module!r} has no {attr!r}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise InputError(f"{ref!r} is not callable")
    return obj


def _rows_from_results(results: Any, where: str) -> list[tuple[Any, float, str]]:
    if results is None:
        return []
    if not isinstance(results, list | tuple):
        raise InputError(f"{where}: expected a list of (item, score), got {type(results).__name__}")
    rows = []
    for i, entry in enumerate(results):
        if isinstance(entry, Hit):
            rows.append((entry, entry.score, where))
            continue
        if not (isinstance(entry, tuple | list) and len(entry) == 2):
            raise InputError(f"{where}: result {i} ({entry!r}) is not an (item, score) pair")
        item, score = entry
        value = _number(score)
        if value is None:
            raise InputError(f"{where}: result {i} has score {score!r}, not a finite number")
        rows.append((tuple(item) if isinstance(item, list) else item, value, where))
    return rows


class CallableRetriever(_SpanSource):
    """Calls ``fn(question)`` (or ``fn(question, k)`` when it takes two
    arguments) for each question.

    ``fn`` returns a list of ``(item, score)`` pairs, where ``item`` is a
    document id, ``"docid:start-end"``, a ``(doc_id, start, end)`` tuple or a
    :class:`Hit`; a list of Hits also works. ``fn`` may be a
    ``"module:function"`` reference.
    """

    def __init__(
        self,
        fn: Callable | str | None = None,
        name: str = "callable",
        docs: Any = None,
        corpus: str | None = None,
        corpus_format: str = "auto",
        function: str | None = None,
    ) -> None:
        super().__init__(docs, corpus, corpus_format)
        fn = fn if fn is not None else function
        if fn is None:
            raise InputError(f"retriever {name!r}: function= ('module:function') is required")
        self.function = fn if isinstance(fn, str) else getattr(fn, "__qualname__", repr(fn))
        self.fn = load_function(fn) if isinstance(fn, str) else fn
        if not callable(self.fn):
            raise InputError(f"retriever {name!r}: {fn!r} is not callable")
        self.name = name
        self._with_k = _accepts_k(self.fn)

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "kind": "callable", "function": self.function}

    def search(self, questions: Sequence[tuple[str, str]], k: int) -> list[list[Hit]]:
        out = []
        for qid, text in questions:
            where = f"retriever {self.name!r}, question {qid!r}"
            results = self.fn(text, k) if self._with_k else self.fn(text)
            rows = _order(_rows_from_results(results, where), k)
            out.append([self.hit(item, score, w) for item, score, w in rows])
        return out


# ---------------------------------------------------------------------------
# an HTTP endpoint


class HttpRetriever(_SpanSource):
    """POSTs ``{"qid", "question", "k"}`` to ``url`` for each question and reads
    ``{"results": [{"doc", "start", "end", "score"}, ...]}`` (see the module
    docstring). Timeouts, connection errors, 429 and 5xx are retried with
    backoff; headers may carry a key read from the environment variable
    ``api_key_env`` (sent as ``Authorization: Bearer ...``).
    """

    def __init__(
        self,
        name: str = "http",
        url: str | None = None,
        timeout: float = 30.0,
        retries: int = 3,
        backoff: float = 0.5,
        headers: dict[str, str] | None = None,
        api_key_env: str | None = None,
        docs: Any = None,
        corpus: str | None = None,
        corpus_format: str = "auto",
    ) -> None:
        super().__init__(docs, corpus, corpus_format)
        if not url:
            raise InputError(f"retriever {name!r}: url= is required")
        if not url.startswith(("http://", "https://")):
            raise InputError(f"retriever {name!r}: url {url!r} must start with http:// or https://")
        self.name = name
        self.url = url
        self.retries = int(retries)
        self.backoff = float(backoff)
        hdrs = dict(headers or {})
        if api_key_env:
            key = os.environ.get(api_key_env)
            if not key:
                raise InputError(
                    f"retriever {name!r}: environment variable {api_key_env} is not set"
                )
            hdrs["Authorization"] = f"Bearer {key}"
        self._client = httpx.Client(timeout=timeout, headers=hdrs)

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "kind": "http", "url": self.url}

    def close(self) -> None:
        self._client.close()

    def _rows(self, body: Any, where: str) -> list[tuple[Any, float, str]]:
        results = body.get("results") if isinstance(body, dict) else None
        if not isinstance(results, list):
            raise BadServerReply(f'{where}: the answer has no "results" list')
        rows = []
        for i, r in enumerate(results):
            if not isinstance(r, dict) or not isinstance(r.get("doc"), str):
                raise BadServerReply(f'{where}: result {i} has no "doc" string')
            score = _number(r["score"]) if "score" in r else float(len(results) - i)
            if score is None:
                raise BadServerReply(
                    f"{where}: result {i} has score {r['score']!r}, not a finite number"
                )
            has = ("start" in r, "end" in r)
            if has == (True, True):
                start, end = r["start"], r["end"]
                if not all(isinstance(x, int) and not isinstance(x, bool) for x in (start, end)):
                    raise BadServerReply(f"{where}: result {i}: start and end must be integers")
                item: Any = (r["doc"], start, end)
            elif has == (False, False):
                item = r["doc"]
            else:
                raise BadServerReply(f"{where}: result {i} gives only one of start and end")
            rows.append((item, score, where))
        return rows

    def search(self, questions: Sequence[tuple[str, str]], k: int) -> list[list[Hit]]:
        out = []
        for qid, text in questions:
            body = post_json(
                self._client,
                self.url,
                {"qid": qid, "question": text, "k": k},
                retries=self.retries,
                backoff=self.backoff,
                what="retriever",
            )
            where = f"retriever at {self.url}, question {qid!r}"
            rows = _order(self._rows(body, where), k)
            try:
                out.append([self.hit(item, score, w) for item, score, w in rows])
            except InputError as exc:
                raise BadServerReply(str(exc)) from None
        return out


__all__ = [
    "CallableRetriever",
    "HttpRetriever",
    "RunFileRetriever",
    "load_function",
    "read_ranked_jsonl",
    "read_trec_ranked",
]

"""Relevance judgments (qrels) and run files, read fast and scored with ragmeter's measures.

Formats read
------------
* TREC qrels: ``qid iter docid grade`` per line (whitespace-separated).
* BEIR qrels: a TSV with the header ``query-id corpus-id score`` and one
  judgment per line.
* TREC runs: ``qid Q0 docid rank score tag`` per line; fields after the sixth
  are ignored, as trec_eval ignores them. The tag names the system.
* JSON as ranx and ir_measures write it: ``{qid: {docid: grade}}`` for qrels,
  ``{qid: {docid: score}}`` for a run.

Files are parsed with numpy over the raw bytes (no Python loop per line), so
a run of ten million lines reads in seconds. Errors name the file and line.

Scoring (:func:`evaluate_run`)
------------------------------
The queries are those of the qrels. A query the run lacks scores 0 on every
measure (as ``trec_eval -c``); run queries without judgments are left out and
counted. A query whose judgments are all below the relevance level stays in and
scores 0 (as trec_eval). Each query's documents are ordered by score, highest
first; ties go by rank, then file order, or with ``trec_eval_compat`` as
trec_eval breaks them (document id, descending). An unjudged document has
grade 0. A document is relevant when its grade is at least ``level`` (default
1, trec_eval's); every relevant document is one relevant unit for recall, MAP
and R-precision.

Size: the fast TREC readers (memory-mapped qrels and run files) and the evaluation that
uses their in-memory layout; splitting them would expose that layout as an interface.
"""

from __future__ import annotations

import gzip
import json
import mmap
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ragmeter import metrics
from ragmeter.errors import InputError

PathLike = str | os.PathLike[str]

__all__ = [
    "COMPAT_MEASURES",
    "Evaluation",
    "Qrels",
    "Run",
    "evaluate_run",
    "read_qrels",
    "read_run",
]

COMPAT_MEASURES = (
    "map",
    "ndcg@10",
    "precision@10",
    "recall@100",
    "mrr",
    "hit@10",
    "rprec",
)
"""Measures ``ragmeter evaluate`` reports by default."""


# ---------------------------------------------------------------------------
# tokenizing bytes with numpy


def _map_bytes(path: Path, what: str):
    """The file's bytes, memory-mapped (read as a whole for ``.gz`` and empty files)."""
    if path.suffix == ".gz":
        return _read_bytes(path, what)
    try:
        with path.open("rb") as fh:
            if os.fstat(fh.fileno()).st_size == 0:
                return b""
            return mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    except OSError as exc:
        raise InputError(f"cannot read {what} file {path}: {exc.strerror or exc}") from None


def _read_bytes(path: Path, what: str) -> bytes:
    try:
        if path.suffix == ".gz":
            with gzip.open(path, "rb") as fh:
                return fh.read()
        return path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read {what} file {path}: {exc.strerror or exc}") from None


@dataclass
class _Lines:
    """Whitespace-separated fields of every non-blank line."""

    buf: np.ndarray  # uint8 view of the bytes
    starts: np.ndarray  # token start offsets
    ends: np.ndarray  # token end offsets (exclusive)
    first: np.ndarray  # index of each line's first token
    count: np.ndarray  # tokens on each line
    line: np.ndarray  # 1-based line number of each non-blank line

    def field(self, j: int) -> tuple[np.ndarray, np.ndarray]:
        idx = self.first + j
        return self.starts[idx], self.ends[idx]


def _tokenize(data: bytes) -> _Lines:
    buf = np.frombuffer(data, dtype=np.uint8)
    # bytes up to 32 separate fields: space, tab, newline, CR and other controls
    word = (buf > 32).view(np.int8)
    edges = np.flatnonzero(np.diff(word)) + 1  # starts and ends alternate
    parts = [edges]
    if buf.size and word[0]:
        parts.insert(0, np.zeros(1, dtype=edges.dtype))
    if buf.size and word[-1]:
        parts.append(np.array([buf.size], dtype=edges.dtype))
    if len(parts) > 1:
        edges = np.concatenate(parts)
    starts, ends = edges[0::2], edges[1::2]
    del word, edges
    # newlines in the gap before each token: gaps of one byte (nearly all) are
    # read directly, longer ones counted between the newline positions
    n = starts.size
    gap_start = np.empty(n, dtype=np.int64)
    if n:
        gap_start[0] = 0
        gap_start[1:] = ends[:-1]
    gap_len = starts - gap_start
    newlines = np.zeros(n, dtype=np.int64)
    one = gap_len == 1
    newlines[one] = buf[gap_start[one]] == 10
    many = np.flatnonzero(gap_len > 1)
    if many.size:
        nl = np.flatnonzero(buf == 10)
        newlines[many] = np.searchsorted(nl, starts[many]) - np.searchsorted(nl, gap_start[many])
    new_line = newlines > 0
    if n:
        new_line[0] = True
    first = np.flatnonzero(new_line)
    line_of = np.cumsum(newlines)[first]  # 0-based line of each line's first token
    count = np.diff(np.append(first, starts.size))
    return _Lines(buf, starts, ends, first, count, line_of + 1)


BLOCK = 1 << 22
"""Bytes tokenized at a time (cut after a newline): bounds the working memory and
keeps the temporary arrays small enough to be reused rather than mapped anew."""


def _blocks(data: bytes, size: int | None = None):
    """``(lines before, block)`` pieces of ``data``, each ending after a newline."""
    size = size or BLOCK
    at, lines = 0, 0
    while at < len(data):
        end = min(at + size, len(data))
        if end < len(data):
            cut = data.rfind(b"\n", at, end)
            end = cut + 1 if cut >= at else (data.find(b"\n", end) + 1 or len(data))
        block = memoryview(data)[at:end]
        yield lines, block
        lines += int(np.count_nonzero(np.frombuffer(block, dtype=np.uint8) == 10))
        del block
        at = end


def _strings(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Tokens as a fixed-width ``S`` array (zero-padded; compares like strcmp)."""
    lens = ends - starts
    width = max(int(lens.max()) if lens.size else 1, 1)
    mat = np.zeros((starts.size, width), dtype=np.uint8)
    last = max(buf.size - 1, 0)
    for j in range(width):  # one column at a time: no (n x width) index matrix
        live = lens > j
        col = buf[np.minimum(starts + j, last)] if buf.size else np.zeros(starts.size, np.uint8)
        mat[:, j] = np.where(live, col, 0)
    return mat.view(f"S{width}").reshape(-1)


def _words(values: np.ndarray, width: int) -> np.ndarray:
    """Zero-padded byte strings as big-endian 64-bit words, ``(n, ceil(width / 8))``
    uint64: rows compare (lexicographically) as the strings do with strcmp."""
    words = max(-(-width // 8), 1)
    mat = np.zeros((values.size, words * 8), dtype=np.uint8)
    if values.size:
        size = values.dtype.itemsize
        mat[:, :size] = values.view(np.uint8).reshape(values.size, size)
    return mat.view(">u8").astype(np.uint64)


def _mix(h: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser (uint64, wrapping)."""
    h = (h ^ (h >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    h = (h ^ (h >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return h ^ (h >> np.uint64(31))


def _hash(words: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each row of words."""
    h = np.zeros(words.shape[0], dtype=np.uint64)
    for j in range(words.shape[1]):
        h = _mix(h ^ words[:, j] ^ np.uint64(j + 1))
    return h


def _numbers(
    buf: np.ndarray, starts: np.ndarray, ends: np.ndarray, integer: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Parse decimal tokens; returns ``(values, ok)``.

    Tokens of at most 15 significant digits without an exponent are parsed here
    exactly (one correctly rounded division, as strtod's fast path); the rest go
    through Python's float (``ok`` is False only for tokens that are not numbers).
    """
    n = starts.size
    lens = ends - starts
    width = int(lens.max()) if n else 0
    mant = np.zeros(n, dtype=np.int64)
    digits = np.zeros(n, dtype=np.int64)
    frac = np.zeros(n, dtype=np.int64)
    dot = np.zeros(n, dtype=bool)
    slow = np.zeros(n, dtype=bool)
    neg = np.zeros(n, dtype=bool)
    for j in range(width):
        live = lens > j
        c = buf[np.minimum(starts + j, buf.size - 1)].astype(np.int64)
        is_digit = live & (c >= 48) & (c <= 57)
        sign = live & (j == 0) & ((c == 45) | (c == 43))
        neg |= sign & (c == 45)
        is_dot = live & (c == 46) & ~dot
        other = live & ~is_digit & ~sign & ~is_dot
        slow |= other
        mant = np.where(is_digit, mant * 10 + (c - 48), mant)
        digits += is_digit
        frac += is_digit & dot
        dot |= is_dot
    slow |= digits > 15
    slow |= digits == 0
    if integer:
        slow |= dot
    values = mant.astype(np.float64) / np.power(10.0, frac)
    values = np.where(neg, -values, values)
    ok = np.ones(n, dtype=bool)
    for i in np.flatnonzero(slow):
        tok = bytes(buf[starts[i] : ends[i]]).decode("ascii", "replace")
        try:
            v = int(tok) if integer else float(tok)
        except ValueError:
            ok[i] = False
            continue
        if not integer and not np.isfinite(v):
            ok[i] = False
            continue
        values[i] = v
    return values, ok


def _check_numbers(ok: np.ndarray, lines: _Lines, j: int, path: Path, what: str, kind: str) -> None:
    if ok.all():
        return
    i = int(np.flatnonzero(~ok)[0])
    s, e = lines.field(j)
    tok = bytes(lines.buf[s[i] : e[i]]).decode("utf-8", "replace")
    if kind == "a finite number":  # 'high' is not a number; 'nan' is one, but not finite
        try:
            float(tok)
        except ValueError:
            kind = "a number"
    raise InputError(f"{path}:{lines.line[i]}: {what} {tok!r} is not {kind}")


def decode_ids(values: np.ndarray, source: str, what: str) -> list[str]:
    """Byte-string ids as text, in order. An id that is not UTF-8 is an error naming
    the first line of ``source`` (the file they were read from) that is not."""
    uniq, inverse = np.unique(values, return_inverse=True)
    try:
        texts = [v.decode("utf-8") for v in uniq.tolist()]
    except UnicodeDecodeError:
        raise _not_utf8(source, what) from None
    return [texts[j] for j in inverse.tolist()]


def _not_utf8(source: str, what: str) -> InputError:
    if source:
        data = _read_bytes(Path(source), what)
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as exc:
            head = data[: exc.start]  # lines as the reader counts them: LF, CRLF or CR
            line = head.count(b"\n") + head.count(b"\r") - head.count(b"\r\n") + 1
            return InputError(
                f"{source}:{line}: not valid UTF-8 (byte {exc.start}); "
                f"re-save the {what} file as UTF-8"
            )
    return InputError(f"{source or what}: an id is not valid UTF-8; re-save the file as UTF-8")


def _lone_cr(data):
    """``data`` with lone CR line ends (old Mac files) read as LF, as Python's text files
    read them; any other file is returned as it is. Without this, a run whose lines end
    in CR alone would read as one line of many fields, of which only six are used."""
    if data.find(b"\r") < 0 or not re.search(rb"\r(?!\n)", data):
        return data
    return re.sub(rb"\r(?!\n)", b"\n", bytes(data))


# ---------------------------------------------------------------------------
# qrels


@dataclass
class Qrels:
    """Judgments sorted by query, then document: ``grade[i]`` of ``doc[i]`` for
    query ``qids[q[i]]`` (``qids`` sorted, unique)."""

    qids: np.ndarray
    q: np.ndarray
    doc: np.ndarray
    grade: np.ndarray
    source: str = ""

    def __len__(self) -> int:
        return int(self.q.size)

    @classmethod
    def from_dict(cls, judged: Mapping[str, Mapping[str, int]], source: str = "") -> Qrels:
        qs, docs, grades = [], [], []
        for qid, per in judged.items():
            for doc, g in per.items():
                if isinstance(g, bool) or int(g) != g:
                    raise InputError(
                        f"{source or 'qrels'}: grade of {qid}/{doc} is not a whole number"
                    )
                qs.append(str(qid).encode())
                docs.append(str(doc).encode())
                grades.append(int(g))
        return cls._build(
            np.array(qs, dtype="S") if qs else np.zeros(0, "S1"),
            np.array(docs, dtype="S") if docs else np.zeros(0, "S1"),
            np.array(grades, dtype=np.int64),
            np.arange(len(qs)),
            source,
        )

    @classmethod
    def _build(cls, qid, doc, grade, order_key, source) -> Qrels:
        qids, q = np.unique(qid, return_inverse=True)
        # sort by query, document, then line; a repeated judgment keeps the last line
        order = np.lexsort((order_key, doc, q))
        q, doc, grade = q[order], doc[order], grade[order]
        if q.size > 1:
            last = np.ones(q.size, dtype=bool)
            last[:-1] = (q[1:] != q[:-1]) | (doc[1:] != doc[:-1])
            q, doc, grade = q[last], doc[last], grade[last]
        return cls(qids, q.astype(np.int64), doc, grade.astype(np.int64), source)

    def to_dict(self) -> dict[str, dict[str, int]]:
        """``{qid: {docid: grade}}``; an id that is not UTF-8 is an error naming its line."""
        qids = decode_ids(self.qids, self.source, "qrels")
        docs = decode_ids(self.doc, self.source, "qrels")
        out: dict[str, dict[str, int]] = {}
        for q, d, g in zip(self.q.tolist(), docs, self.grade.tolist(), strict=True):
            out.setdefault(qids[q], {})[d] = int(g)
        return out

    def n_relevant(self, level: int = 1) -> np.ndarray:
        """Relevant documents per query (grade >= ``level``)."""
        return np.bincount(self.q[self.grade >= level], minlength=self.qids.size)

    def ideal(self, width: int | None = None) -> np.ndarray:
        """``(queries, w)`` judged grades above 0, high to low (the judged ideal)."""
        pos_mask = self.grade > 0
        q, g = self.q[pos_mask], self.grade[pos_mask]
        order = np.lexsort((-g, q))
        q, g = q[order], g[order]
        rank = _positions(q)
        w = int(rank.max()) + 1 if rank.size else 0
        if width is not None:
            w = width
        out = np.zeros((self.qids.size, w), dtype=np.int64)
        keep = rank < w
        out[q[keep], rank[keep]] = g[keep]
        return out


def _positions(sorted_groups: np.ndarray) -> np.ndarray:
    """0-based position of each element inside its run of equal values."""
    n = sorted_groups.size
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    start = np.empty(n, dtype=bool)
    start[0] = True
    np.not_equal(sorted_groups[1:], sorted_groups[:-1], out=start[1:])
    idx = np.arange(n)
    first = np.maximum.accumulate(np.where(start, idx, 0))
    return idx - first


def read_qrels(path: PathLike, format: str = "auto") -> Qrels:
    """Read TREC qrels, a BEIR qrels TSV or ranx/ir_measures JSON (``auto``
    decides by the suffix and the first line)."""
    path = Path(path)
    if format == "auto":
        format = "json" if path.suffix == ".json" else "text"
    if format == "json":
        return Qrels.from_dict(_read_json_mapping(path, "qrels"), str(path))
    if format not in ("text", "trec", "beir"):
        raise InputError(f"unknown qrels format {format!r}; choose trec, beir or json")
    lines = _tokenize(_lone_cr(_read_bytes(path, "qrels")))
    if lines.first.size == 0:
        raise InputError(f"{path}: no judgments; the qrels file is empty")
    keep = np.ones(lines.first.size, dtype=bool)
    # BEIR: a header line "query-id corpus-id score", then 3 fields per line
    s, e = lines.field(0)
    head = bytes(lines.buf[s[0] : e[0]]).lower()
    if head in (b"query-id", b"query_id", b"qid", b"query"):
        keep[0] = False
    counts = lines.count[keep]
    if counts.size and np.all(counts == 3):
        fields = (0, 1, 2)
    else:
        bad = np.flatnonzero(keep & (lines.count != 4))
        if bad.size:
            i = int(bad[0])
            raise InputError(
                f"{path}:{lines.line[i]}: expected 4 fields 'qid 0 docid grade' (TREC) or 3 "
                f"'query-id corpus-id score' (BEIR TSV), found {lines.count[i]}"
            )
        fields = (0, 2, 3)
    sub = _Lines(
        lines.buf,
        lines.starts,
        lines.ends,
        lines.first[keep],
        lines.count[keep],
        lines.line[keep],
    )
    qid = _strings(lines.buf, *sub.field(fields[0]))
    doc = _strings(lines.buf, *sub.field(fields[1]))
    grade, ok = _numbers(lines.buf, *sub.field(fields[2]), integer=True)
    if not ok.all():
        i = int(np.flatnonzero(~ok)[0])
        s, e = sub.field(fields[2])
        tok = bytes(lines.buf[s[i] : e[i]]).decode("utf-8", "replace")
        raise InputError(f"{path}:{sub.line[i]}: grade {tok!r} is not an integer")
    return Qrels._build(qid, doc, grade.astype(np.int64), sub.line, str(path))


def _read_json_mapping(path: Path, what: str) -> dict:
    try:
        data = json.loads(_read_bytes(path, what).decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(
            f"{path}: not valid JSON ({exc}); expected {{qid: {{docid: value}}}}"
        ) from None
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise InputError(f"{path}: expected a JSON object {{qid: {{docid: value}}}}")
    return data


# ---------------------------------------------------------------------------
# runs


@dataclass
class Run:
    """A run file: one line per retrieved document, in file order."""

    qid: np.ndarray
    doc: np.ndarray
    score: np.ndarray
    rank: np.ndarray | None
    line: np.ndarray
    name: str
    source: str = ""

    def __len__(self) -> int:
        return int(self.qid.size)

    @classmethod
    def from_dict(
        cls, run: Mapping[str, Mapping[str, float]], name: str = "run", source: str = ""
    ) -> Run:
        qs, docs, scores = [], [], []
        for qid, per in run.items():
            for doc, v in per.items():
                qs.append(str(qid).encode())
                docs.append(str(doc).encode())
                scores.append(float(v))
        n = len(qs)
        return cls(
            np.array(qs, dtype="S") if qs else np.zeros(0, "S1"),
            np.array(docs, dtype="S") if docs else np.zeros(0, "S1"),
            np.array(scores, dtype=np.float64),
            np.arange(1, n + 1, dtype=np.int64),
            np.arange(1, n + 1, dtype=np.int64),
            name,
            source,
        )


def read_run(path: PathLike, format: str = "auto", ranks: bool = True) -> Run:
    """Read a TREC run (6 or more fields per line) or ranx/ir_measures JSON.

    The run is named by its tag (the sixth field of its first line) or, for
    JSON or when the lines carry several tags, by the file name without suffix.
    ``ranks=False`` skips parsing the rank field (trec_eval ignores it).
    """
    path = Path(path)
    stem = path.name.removesuffix(".gz")
    stem = stem.rsplit(".", 1)[0] if "." in stem else stem
    if format == "auto":
        format = "json" if path.suffix == ".json" else "trec"
    if format == "json":
        data = _read_json_mapping(path, "run")
        for qid, per in data.items():
            for doc, v in per.items():
                if isinstance(v, bool) or not isinstance(v, int | float) or not np.isfinite(v):
                    raise InputError(f"{path}: score of {qid}/{doc} is not a finite number")
        return Run.from_dict(data, stem, str(path))
    if format != "trec":
        raise InputError(f"unknown run format {format!r}; choose trec or json")
    data = _lone_cr(_map_bytes(path, "run"))
    cols: dict[str, list[np.ndarray]] = {k: [] for k in ("qid", "doc", "score", "rank", "line")}
    name: str | None = None
    one_tag = True
    for before, block in _blocks(data):
        lines = _tokenize(block)
        lines.line = lines.line + before
        short = np.flatnonzero(lines.count < 6)
        if short.size:
            i = int(short[0])
            raise InputError(
                f"{path}:{lines.line[i]}: expected 6 fields 'qid Q0 docid rank score tag', "
                f"found {lines.count[i]}"
            )
        cols["qid"].append(_strings(lines.buf, *lines.field(0)))
        cols["doc"].append(_strings(lines.buf, *lines.field(2)))
        score, ok = _numbers(lines.buf, *lines.field(4), integer=False)
        _check_numbers(ok, lines, 4, path, "score", "a finite number")
        cols["score"].append(score)
        if ranks:
            rank_f, ok = _numbers(lines.buf, *lines.field(3), integer=True)
            _check_numbers(ok, lines, 3, path, "rank", "an integer")
            cols["rank"].append(rank_f.astype(np.int64))
        cols["line"].append(lines.line.astype(np.int64))
        if lines.first.size:
            tags = _strings(lines.buf, *lines.field(5))
            if name is None:
                name = tags[0].decode("utf-8", "replace")
            one_tag = one_tag and bool(np.all(tags == name.encode()))
    if not cols["line"] or not sum(x.size for x in cols["line"]):
        raise InputError(f"{path}: no lines; the run file is empty")
    qid, doc = np.concatenate(cols["qid"]), np.concatenate(cols["doc"])
    score, line = np.concatenate(cols["score"]), np.concatenate(cols["line"])
    rank = np.concatenate(cols["rank"]) if ranks else None
    name = name if one_tag and name else stem
    return Run(qid, doc, score, rank, line, name, str(path))


# ---------------------------------------------------------------------------
# scoring


@dataclass
class Evaluation:
    """Per-query scores of one run against qrels."""

    name: str
    query_ids: list[str]
    scores: dict[str, np.ndarray]
    missing: list[str] = field(default_factory=list)  # judged queries the run lacks
    unjudged: list[str] = field(default_factory=list)  # run queries without judgments
    depth: int = 0
    top: Matrix | None = None  # the top ``keep`` documents, when asked for

    def means(self) -> dict[str, float]:
        return {m: float(v.mean()) if v.size else 0.0 for m, v in self.scores.items()}


@dataclass
class Matrix:
    """One run as a ``(queries x depth)`` grade matrix over the qrels' queries."""

    grades: np.ndarray  # int8/int64, -1 where the run returned nothing
    missing: np.ndarray  # bool per query: the run has no line for it
    unjudged: list[str]
    docs: np.ndarray | None = None  # S array (queries x keep): the top documents
    scores: np.ndarray | None = None  # float64 (queries x keep): their scores


CHUNK = 1 << 20
"""Run lines graded and ordered at a time (cut where a query starts), so that the
temporary arrays stay small."""


def run_matrix(run: Run, qrels: Qrels, trec_eval_compat: bool = False, keep: int = 0) -> Matrix:
    """Grade every retrieved document and lay the run out by query and rank."""
    nq = qrels.qids.size
    idx, known = _query_rows(run.qid, qrels.qids)
    all_known = bool(known.all())
    unjudged = (
        []
        if all_known
        else sorted({x.decode("utf-8", "replace") for x in np.unique(run.qid[~known])})
    )

    def pick(a: np.ndarray | None) -> np.ndarray | None:
        return a if a is None or all_known else a[known]

    q_all, doc_all = pick(idx), pick(run.doc)
    score_all, line_all = pick(run.score), pick(run.line)
    rank_all = None if trec_eval_compat else pick(run.rank)
    width = max(doc_all.dtype.itemsize, qrels.doc.dtype.itemsize)
    judged_w = _words(qrels.doc, width)
    qkey = _pair_hash(qrels.q, judged_w)
    exact = np.unique(qkey).size != qkey.size  # two judgments share a hash
    slot_of = None if exact or not qkey.size else _table(qkey)
    counts = np.bincount(q_all, minlength=nq)
    depth = int(counts.max()) if counts.size else 0
    n = q_all.size
    # cut into chunks where a query starts, when each query's lines are contiguous
    heads = np.flatnonzero(np.diff(q_all, prepend=-1) != 0) if n else np.zeros(0, np.int64)
    contiguous = heads.size == int(np.count_nonzero(counts))
    cuts = [0]
    if contiguous:
        while cuts[-1] + CHUNK < n:
            nxt = int(np.searchsorted(heads, cuts[-1] + CHUNK))
            if nxt >= heads.size:
                break
            cuts.append(int(heads[nxt]))
    cuts.append(n)
    if grade_max := (int(qrels.grade.max()) if qrels.grade.size else 0):
        if grade_max > 32767:
            raise InputError(f"{qrels.source or 'qrels'}: grades above 32767 are not supported")
    gm = np.full((nq, depth), -1, dtype=np.int16)
    present = counts > 0
    docs = scores = None
    if keep:
        docs = np.zeros((nq, min(keep, depth)), dtype=doc_all.dtype)
        scores = np.zeros(docs.shape, dtype=np.float64)
    for a, b in zip(cuts[:-1], cuts[1:], strict=True):
        q, run_doc, score = q_all[a:b], doc_all[a:b], score_all[a:b]
        line = line_all[a:b]
        rank = None if rank_all is None else rank_all[a:b]
        run_w = _words(run_doc, width)  # (n, W) uint64: compares as the ids do
        rkey = _pair_hash(q, run_w)
        # grades: join on a hash of (query, document), each match checked word for word
        grade = np.zeros(q.size, dtype=np.int64)
        if exact:
            grade = _grades_exact(q, run_doc, qrels)
        elif slot_of is not None:
            j = _lookup(qkey, slot_of, rkey)
            hit = j >= 0
            jh = j[hit]
            ok = (qrels.q[jh] == q[hit]) & np.all(judged_w[jh] == run_w[hit], axis=1)
            grade[np.flatnonzero(hit)[ok]] = qrels.grade[jh[ok]]
        # a document listed twice for one query is an error
        if rkey.size > 1:
            srt = np.sort(rkey)
            if np.any(srt[1:] == srt[:-1]):
                _raise_duplicate(run, run_doc, q, run_w, line, qrels)
        # order within each query, on integer keys: the score's bits as an integer
        # that sorts as the float does (-0.0 as 0.0)
        bits = (score + 0.0).view(np.int64)
        skey = bits ^ ((bits >> 63) & np.int64(0x7FFFFFFFFFFFFFFF))
        order = _presorted(q, skey, run_w, rank) if contiguous else False
        if order is False:
            if trec_eval_compat:
                # trec_eval: score descending, then document id descending (strcmp):
                # sort everything ascending and read it backwards
                doc_keys = tuple(run_w[:, j] for j in range(run_w.shape[1] - 1, -1, -1))
                order = np.lexsort((*doc_keys, skey, q))[::-1]
            else:
                # score descending, then rank, then file order (the sorts are stable)
                keys = (-skey - 1, q) if rank is None else (rank, -skey - 1, q)
                order = np.lexsort(keys)
        if order is not None:
            q, grade, score = q[order], grade[order], score[order]
            if keep:
                run_doc = run_doc[order]
        pos = _positions(q)
        gm[q, pos] = np.maximum(grade, 0)
        if keep:
            top = pos < keep
            docs[q[top], pos[top]] = run_doc[top]
            scores[q[top], pos[top]] = score[top]
    return Matrix(gm, ~present, unjudged, docs, scores)


_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def _pair_hash(q: np.ndarray, words: np.ndarray) -> np.ndarray:
    """A 64-bit hash of (query row, document words)."""
    return _mix(_hash(words) ^ (q.astype(np.uint64) * _GOLDEN))


def _table(keys: np.ndarray) -> np.ndarray:
    """An open-addressing table (linear probing) of distinct ``keys``: slot ->
    index into ``keys``, or -1; built a round at a time."""
    cap = 1 << max(int(2 * keys.size).bit_length(), 4)
    mask = np.uint64(cap - 1)
    slot_of = np.full(cap, -1, dtype=np.int64)
    pending = np.arange(keys.size)
    slots = (keys & mask).astype(np.int64)
    while pending.size:
        s = slots[pending]
        free = slot_of[s] < 0
        cand, cs = pending[free], s[free]
        _, first = np.unique(cs, return_index=True)  # one winner per free slot
        slot_of[cs[first]] = cand[first]
        won = np.zeros(pending.size, dtype=bool)
        won[np.flatnonzero(free)[first]] = True
        pending = pending[~won]
        slots[pending] = (slots[pending] + 1) & (cap - 1)
    return slot_of


def _lookup(keys: np.ndarray, slot_of: np.ndarray, probe: np.ndarray) -> np.ndarray:
    """For each of ``probe``, its index in ``keys`` or -1 (``slot_of``: :func:`_table`)."""
    cap = slot_of.size
    mask = np.uint64(cap - 1)
    out = np.full(probe.size, -1, dtype=np.int64)
    active = np.arange(probe.size)
    slot = (probe & mask).astype(np.int64)
    while active.size:
        j = slot_of[slot]
        empty = j < 0
        match = ~empty & (keys[np.maximum(j, 0)] == probe[active])
        out[active[match]] = j[match]
        more = ~empty & ~match
        active = active[more]
        slot = (slot[more] + 1) & (cap - 1)
    return out


def _query_rows(run_qids: np.ndarray, qids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each run line's row in the sorted, unique ``qids`` and whether it has one;
    looked up once per run of equal query ids."""
    n = run_qids.size
    if n == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=bool)
    head = np.empty(n, dtype=bool)
    head[0] = True
    np.not_equal(run_qids[1:], run_qids[:-1], out=head[1:])
    heads = np.flatnonzero(head)
    hv = run_qids[heads]
    if qids.size:
        idx = np.searchsorted(qids, hv)
        idx_c = np.minimum(idx, qids.size - 1)
        known = qids[idx_c] == hv
    else:
        idx_c = np.zeros(hv.size, dtype=np.int64)
        known = np.zeros(hv.size, dtype=bool)
    group = np.cumsum(head) - 1
    return idx_c.astype(np.int64)[group], known[group]


def _raise_duplicate(run, run_doc, q, run_w, line, qrels) -> None:
    dup_order = np.lexsort((*(run_w[:, j] for j in range(run_w.shape[1] - 1, -1, -1)), q))
    qs, ws = q[dup_order], run_w[dup_order]
    same = (qs[1:] == qs[:-1]) & np.all(ws[1:] == ws[:-1], axis=1)
    if not same.any():
        return  # a hash collision, not a duplicate
    i = int(np.flatnonzero(same)[0])
    first, second = dup_order[i], dup_order[i + 1]
    a, b = sorted((int(line[first]), int(line[second])))
    name = run_doc[first].decode("utf-8", "replace")
    raise InputError(
        f"{run.source or run.name}:{b}: {name!r} already listed for query "
        f"{qrels.qids[q[first]].decode('utf-8', 'replace')!r} on line {a}"
    )


def _grades_exact(q: np.ndarray, docs: np.ndarray, qrels: Qrels) -> np.ndarray:
    """Grades by an exact string join (the fallback when hashes collide)."""
    vocab = np.unique(np.concatenate([qrels.doc, docs]))
    span = vocab.size
    qkey = qrels.q * span + np.searchsorted(vocab, qrels.doc)
    korder = np.argsort(qkey)
    qk = qkey[korder]
    rkey = q * span + np.searchsorted(vocab, docs)
    pos = np.minimum(np.searchsorted(qk, rkey), max(qk.size - 1, 0))
    grade = np.zeros(q.size, dtype=np.int64)
    if qk.size:
        hit = qk[pos] == rkey
        grade[hit] = qrels.grade[korder[pos[hit]]]
    return grade


def _presorted(
    q: np.ndarray, skey: np.ndarray, doc: np.ndarray, rank: np.ndarray | None
) -> np.ndarray | None | bool:
    """The order without a full sort when the lines already come grouped by query
    and by descending score (as run files are written): only runs of tied scores
    are sorted; ``None`` when the lines are in order as they are, ``False`` when
    they are not so grouped.

    Wanted: score descending, then document id descending (``rank is None``,
    trec_eval's order), or score descending, then rank ascending, then file order.
    """
    n = q.size
    if n < 2:
        return None
    same = q[1:] == q[:-1]
    if int(np.count_nonzero(~same)) + 1 != int(np.count_nonzero(np.bincount(q))):
        return False  # a query's lines are not contiguous
    if not bool(np.all((skey[1:] <= skey[:-1]) | ~same)):
        return False  # scores rise somewhere within a query
    tie = same & (skey[1:] == skey[:-1])
    if not tie.any():
        return None
    order = np.arange(n)
    # elements in runs of ties: sort just those, within their run
    in_run = np.zeros(n, dtype=bool)
    in_run[1:] |= tie
    in_run[:-1] |= tie
    idx = np.flatnonzero(in_run)
    start = np.ones(idx.size, dtype=bool)
    start[1:] = ~tie[idx[1:] - 1]  # a new run where the previous pair is not a tie
    run_id = np.cumsum(start)
    if rank is None:
        # document id descending: the complement of each word sorts backwards
        words = doc[idx]
        sub = np.lexsort((*(~words[:, j] for j in range(words.shape[1] - 1, -1, -1)), run_id))
    else:
        sub = np.lexsort((rank[idx], run_id))
    order[idx] = idx[sub]
    return order


def measure_names(measures: Iterable[str], trec_eval_compat: bool) -> list[str]:
    """Output names: ragmeter's, or trec_eval's in compatibility mode."""
    out = []
    for m in measures:
        metric = metrics.Metric.parse(m) if isinstance(m, str) else m
        if trec_eval_compat:
            if metric.trec_name is None:
                raise InputError(f"{metric} has no trec_eval name; leave it out in compat mode")
            out.append(metric.trec_name)
        else:
            out.append(str(metric))
    return out


def evaluate_run(
    run: Run,
    qrels: Qrels,
    measures: Sequence[str] = COMPAT_MEASURES,
    *,
    level: int = 1,
    gain: str | None = None,
    ideal: str = "judged",
    trec_eval_compat: bool = False,
    block: int = 4096,
    keep: int = 0,
) -> Evaluation:
    """Score one run against qrels, one value per judged query per measure.

    ``gain`` defaults to ``exponential`` (``linear`` in compat mode, and compat
    mode forces the judged ideal); ``ideal`` is ``judged`` (the qrels' grades,
    as trec_eval) or ``returned`` (the best order of the returned list).
    """
    if gain is None:
        gain = "linear" if trec_eval_compat else "exponential"
    if trec_eval_compat:
        gain, ideal = "linear", "judged"
    if ideal not in ("judged", "returned"):
        raise InputError(f"ideal must be 'judged' or 'returned' for qrels, not {ideal!r}")
    wanted = [metrics.Metric.parse(m) if isinstance(m, str) else m for m in measures]
    names = measure_names(wanted, trec_eval_compat)
    m = run_matrix(run, qrels, trec_eval_compat, keep=keep)
    g = m.grades
    nq, depth = g.shape
    n_rel = qrels.n_relevant(level)
    ks = sorted({x.k for x in wanted if x.k is not None}) or [1]
    ideal_m = None
    if ideal == "judged" and any(x.name == "ndcg" for x in wanted):
        whole = any(x.name == "ndcg" and x.k is None for x in wanted)
        ideal_m = qrels.ideal(None if whole else max(x.k for x in wanted if x.name == "ndcg"))
    parts: dict[str, list[np.ndarray]] = {n: [] for n in names}
    for lo in range(0, max(nq, 1), block):
        hi = min(lo + block, nq)
        if hi <= lo:
            break
        out = metrics.score_questions(
            g[lo:hi],
            None,
            ks=ks,
            ideal=None if ideal_m is None else ideal_m[lo:hi],
            relevant_grade=level,
            n_relevant=n_rel[lo:hi],
            gain=gain,
            measures=wanted,
        )
        for name, metric in zip(names, wanted, strict=True):
            parts[name].append(out[str(metric)])
    scores = {
        n: np.concatenate(v) if v else np.zeros(0, dtype=np.float64) for n, v in parts.items()
    }
    qids = [x.decode("utf-8", "replace") for x in qrels.qids.tolist()]
    missing = [qids[i] for i in np.flatnonzero(m.missing)]
    top = Matrix(g[:, :keep], m.missing, m.unjudged, m.docs, m.scores) if keep else None
    return Evaluation(run.name, qids, scores, missing, m.unjudged, depth, top)

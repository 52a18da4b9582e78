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
"""

from __future__ import annotations

import gzip
import json
import os
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

_SPACE = np.zeros(256, dtype=bool)
_SPACE[[9, 10, 11, 12, 13, 32]] = True


# ---------------------------------------------------------------------------
# tokenizing bytes with numpy


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
    sp = np.empty(buf.size + 2, dtype=bool)
    sp[0] = sp[-1] = True
    sp[1:-1] = _SPACE[buf]
    word = ~sp
    starts = np.flatnonzero(word[1:-1] & sp[:-2])
    ends = np.flatnonzero(word[1:-1] & sp[2:]) + 1
    del sp, word
    newlines = np.flatnonzero(buf == 10)
    line_of = np.searchsorted(newlines, starts)  # 0-based line of each token
    if line_of.size:
        new_line = np.empty(line_of.size, dtype=bool)
        new_line[0] = True
        np.not_equal(line_of[1:], line_of[:-1], out=new_line[1:])
        first = np.flatnonzero(new_line)
    else:
        first = np.zeros(0, dtype=np.int64)
    count = np.diff(np.append(first, starts.size))
    return _Lines(buf, starts, ends, first, count, line_of[first] + 1)


def _strings(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Tokens as a fixed-width ``S`` array (zero-padded; compares like strcmp)."""
    lens = ends - starts
    width = int(lens.max()) if lens.size else 1
    width = max(width, 1)
    cols = np.arange(width)
    pos = starts[:, None] + cols
    mat = buf[np.minimum(pos, buf.size - 1)] if buf.size else np.zeros(pos.shape, np.uint8)
    mat = np.where(cols < lens[:, None], mat, 0).astype(np.uint8)
    return np.ascontiguousarray(mat).view(f"S{width}").reshape(-1)


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
    raise InputError(f"{path}:{lines.line[i]}: {what} {tok!r} is not {kind}")


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
        out: dict[str, dict[str, int]] = {}
        for q, d, g in zip(self.q.tolist(), self.doc.tolist(), self.grade.tolist(), strict=True):
            out.setdefault(self.qids[q].decode(), {})[d.decode()] = int(g)
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
    lines = _tokenize(_read_bytes(path, "qrels"))
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
    lines = _tokenize(_read_bytes(path, "run"))
    if lines.first.size == 0:
        raise InputError(f"{path}: no lines; the run file is empty")
    short = np.flatnonzero(lines.count < 6)
    if short.size:
        i = int(short[0])
        raise InputError(
            f"{path}:{lines.line[i]}: expected 6 fields 'qid Q0 docid rank score tag', "
            f"found {lines.count[i]}"
        )
    qid = _strings(lines.buf, *lines.field(0))
    doc = _strings(lines.buf, *lines.field(2))
    score, ok = _numbers(lines.buf, *lines.field(4), integer=False)
    _check_numbers(ok, lines, 4, path, "score", "a finite number")
    rank = None
    if ranks:
        rank_f, ok = _numbers(lines.buf, *lines.field(3), integer=True)
        _check_numbers(ok, lines, 3, path, "rank", "an integer")
        rank = rank_f.astype(np.int64)
    tags = _strings(lines.buf, *lines.field(5))
    name = tags[0].decode("utf-8", "replace") if np.all(tags == tags[0]) else stem
    return Run(qid, doc, score, rank, lines.line.astype(np.int64), name, str(path))


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


def run_matrix(run: Run, qrels: Qrels, trec_eval_compat: bool = False, keep: int = 0) -> Matrix:
    """Grade every retrieved document and lay the run out by query and rank."""
    nq = qrels.qids.size
    idx = np.searchsorted(qrels.qids, run.qid)
    idx_c = np.minimum(idx, max(nq - 1, 0))
    known = (idx < nq) & (qrels.qids[idx_c] == run.qid) if nq else np.zeros(len(run), bool)
    unjudged = sorted({x.decode("utf-8", "replace") for x in np.unique(run.qid[~known])})
    q = idx[known].astype(np.int64)
    doc = run.doc[known]
    score = run.score[known]
    line = run.line[known]
    # grades: join (query, doc) with the qrels
    vocab = np.unique(qrels.doc)
    d = np.searchsorted(vocab, doc)
    d_c = np.minimum(d, max(vocab.size - 1, 0))
    judged_doc = (d < vocab.size) & (vocab[d_c] == doc) if vocab.size else np.zeros(q.size, bool)
    grade = np.zeros(q.size, dtype=np.int64)
    if judged_doc.any():
        qd = np.searchsorted(vocab, qrels.doc).astype(np.int64)
        qkey = qrels.q * vocab.size + qd
        korder = np.argsort(qkey, kind="stable")
        qkey_sorted = qkey[korder]
        rkey = q[judged_doc] * vocab.size + d[judged_doc]
        pos = np.searchsorted(qkey_sorted, rkey)
        pos_c = np.minimum(pos, qkey_sorted.size - 1)
        hit = (pos < qkey_sorted.size) & (qkey_sorted[pos_c] == rkey)
        g = np.zeros(rkey.size, dtype=np.int64)
        g[hit] = qrels.grade[korder[pos_c[hit]]]
        grade[judged_doc] = g
    # order within each query
    if trec_eval_compat:
        # trec_eval: score descending, then document id descending (strcmp)
        order = np.lexsort((doc, score, q))[::-1]
    else:
        rank = run.rank[known] if run.rank is not None else line
        order = np.lexsort((line, rank, -score, q))
    q, doc, grade, line, score = q[order], doc[order], grade[order], line[order], score[order]
    # a document listed twice for one query is an error
    if q.size > 1:
        dup_order = np.lexsort((doc, q))
        qs, ds = q[dup_order], doc[dup_order]
        same = (qs[1:] == qs[:-1]) & (ds[1:] == ds[:-1])
        if same.any():
            i = int(np.flatnonzero(same)[0])
            a, b = sorted((int(line[dup_order[i]]), int(line[dup_order[i + 1]])))
            raise InputError(
                f"{run.source or run.name}:{b}: {ds[i].decode('utf-8', 'replace')!r} already "
                f"listed for query {qrels.qids[qs[i]].decode('utf-8', 'replace')!r} on line {a}"
            )
    pos = _positions(q)
    depth = int(pos.max()) + 1 if pos.size else 0
    gm = np.full((nq, depth), -1, dtype=np.int64)
    gm[q, pos] = np.maximum(grade, 0)
    present = np.zeros(nq, dtype=bool)
    present[q] = True
    docs = scores = None
    if keep:
        top = pos < keep
        docs = np.zeros((nq, min(keep, depth)), dtype=doc.dtype)
        docs[q[top], pos[top]] = doc[top]
        scores = np.zeros(docs.shape, dtype=np.float64)
        scores[q[top], pos[top]] = score[top]
    return Matrix(gm, ~present, unjudged, docs, scores)


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

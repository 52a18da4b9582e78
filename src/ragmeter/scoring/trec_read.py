"""Relevance judgments (qrels) and run files, read into arrays.

Formats read
------------
* TREC qrels: ``qid iter docid grade`` per line (whitespace-separated).
* BEIR qrels: a TSV with the header ``query-id corpus-id score`` and one
  judgment per line.
* TREC runs: ``qid Q0 docid rank score tag`` per line; fields after the sixth
  are ignored, as trec_eval ignores them. The tag names the system.
* JSON as ranx and ir_measures write it: ``{qid: {docid: grade}}`` for qrels,
  ``{qid: {docid: score}}`` for a run.

Text files are tokenized by :mod:`ragmeter.scoring.trec_bytes`; errors name the file and line.
Scoring a run against qrels is :mod:`ragmeter.scoring.trec`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np

from ragmeter.engine import thread_map
from ragmeter.errors import InputError
from ragmeter.files.io import refuse_lone_surrogates
from ragmeter.files.schemas import MAX_GRADE, whole_grade
from ragmeter.scoring.trec_bytes import (
    _check_numbers,
    _file_blocks,
    _Lines,
    _lone_cr,
    _numbers,
    _read_bytes,
    _strings,
    _tokenize,
    decode_ids,
    give_back_freed_memory,
)

PathLike = str | os.PathLike[str]


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
                g = whole_grade(g, f"{source or 'qrels'}: grade of {qid}/{doc}")
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
    for i in np.flatnonzero(np.abs(grade) > MAX_GRADE)[:1].tolist():  # never wrapped
        whole_grade(float(grade[i]), f"{path}:{sub.line[i]}: grade")
    return Qrels._build(qid, doc, grade.astype(np.int64), sub.line, str(path))


def _read_json_mapping(path: Path, what: str) -> dict:
    try:
        text = _read_bytes(path, what).decode("utf-8")
        data = json.loads(text)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(
            f"{path}: not valid JSON ({exc}); expected {{qid: {{docid: value}}}}"
        ) from None
    refuse_lone_surrogates(data, text, path)
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


def _joined(cols: dict[str, list[np.ndarray]], key: str) -> np.ndarray:
    """``cols[key]``'s pieces as one array; the pieces are let go."""
    out = np.concatenate(cols[key])
    cols[key].clear()
    give_back_freed_memory()
    return out


def _run_block(
    path: Path, ranks: bool, item: tuple[int, bytes]
) -> tuple[dict[str, np.ndarray], bytes | None, bool]:
    """One block of a run file's lines as columns, with its first tag and whether every
    tag of the block is that one (None, True when the block has no line). Blocks are
    read on several threads (:func:`ragmeter.engine.thread_map`), in file order."""
    before, block = item
    lines = _tokenize(block)
    lines.line = lines.line + before
    short = np.flatnonzero(lines.count < 6)
    if short.size:
        i = int(short[0])
        raise InputError(
            f"{path}:{lines.line[i]}: expected 6 fields 'qid Q0 docid rank score tag', "
            f"found {lines.count[i]}"
        )
    piece = {"qid": _strings(lines.buf, *lines.field(0))}
    piece["doc"] = _strings(lines.buf, *lines.field(2))
    piece["score"], ok = _numbers(lines.buf, *lines.field(4), integer=False)
    _check_numbers(ok, lines, 4, path, "score", "a finite number")
    if ranks:
        rank_f, ok = _numbers(lines.buf, *lines.field(3), integer=True)
        _check_numbers(ok, lines, 3, path, "rank", "an integer")
        piece["rank"] = rank_f.astype(np.int64)
    # line numbers, for the errors that name them: 4 bytes each while they fit
    wide = lines.line.size and int(lines.line[-1]) > np.iinfo(np.int32).max
    piece["line"] = lines.line.astype(np.int64 if wide else np.int32)
    if not lines.first.size:
        return piece, None, True
    tags = _strings(lines.buf, *lines.field(5))
    return piece, bytes(tags[0]), bool(np.all(tags == tags[0]))


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
    cols: dict[str, list[np.ndarray]] = {k: [] for k in ("qid", "doc", "score", "rank", "line")}
    name: str | None = None
    one_tag = True
    blocks = _file_blocks(path, "run")
    for piece, first_tag, same in thread_map(partial(_run_block, path, ranks), blocks):
        for key, value in piece.items():
            cols[key].append(value)
        if first_tag is not None:
            if name is None:
                name = first_tag.decode("utf-8", "replace")
            one_tag = one_tag and same and first_tag == name.encode()
    if not cols["line"] or not sum(x.size for x in cols["line"]):
        raise InputError(f"{path}: no lines; the run file is empty")
    # one column at a time, each block's pieces let go as its column is joined
    qid, doc, score, line = (_joined(cols, k) for k in ("qid", "doc", "score", "line"))
    rank = _joined(cols, "rank") if ranks else None
    name = name if one_tag and name else stem
    return Run(qid, doc, score, rank, line, name, str(path))

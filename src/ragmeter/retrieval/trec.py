"""TREC qrels and run files, to cross-check ragmeter with trec_eval, ranx or ir_measures.

A qrels file has one judgement per line, ``qid 0 item_id grade``; a run file
has one ranked item per line, ``qid Q0 item_id rank score tag``. Fields are
separated by whitespace, so ids must not contain any.

Tools that read run files order each question's items by score and break ties
their own way (trec_eval: by item id, descending, on scores held as 32-bit
floats). When a ranking has tied scores, write the scores :func:`ordered_scores`
gives (the retriever's, ties lowered one 32-bit step), or write it with
``scores="rank"``, so that every tool sees ragmeter's order exactly.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ragmeter.errors import InputError
from ragmeter.files.io import atomic_write_text
from ragmeter.retrieval.base import Ranking
from ragmeter.scoring.trec import Run, decode_ids, run_order
from ragmeter.scoring.trec import read_qrels as _read_qrels
from ragmeter.scoring.trec import read_run as _read_run

PathLike = str | os.PathLike[str]


def _check_id(value: str, what: str) -> str:
    value = str(value)
    if not value or any(c.isspace() for c in value):
        raise InputError(
            f"{what} {value!r} cannot be written to a TREC file: "
            "ids must be non-empty and contain no whitespace"
        )
    return value


def _atomic_write(path: PathLike, lines: Iterator[str]) -> None:

    atomic_write_text(Path(path), "".join(lines))


def write_qrels(path: PathLike, qrels: Mapping[str, Mapping[str, int]]) -> None:
    """Write ``{qid: {item_id: grade}}`` as a TREC qrels file."""

    def lines() -> Iterator[str]:
        for qid, judged in qrels.items():
            q = _check_id(qid, "question id")
            for item, grade in judged.items():
                if isinstance(grade, bool) or int(grade) != grade:
                    raise InputError(
                        f"qrels grade for {qid}/{item} must be an integer, got {grade!r}"
                    )
                yield f"{q} 0 {_check_id(item, 'item id')} {int(grade)}\n"

    _atomic_write(path, lines())


def write_run(
    path: PathLike,
    run: Mapping[str, Sequence[tuple[str, float]]],
    tag: str = "ragmeter",
    scores: str = "given",
) -> None:
    """Write ``{qid: [(item_id, score), ...]}`` (best first) as a TREC run file.

    Ranks are the 1-based list positions. ``scores="given"`` writes the scores
    as they are; ``scores="rank"`` writes ``n - rank + 1`` instead, so tools
    that sort by score reproduce the list order even where scores tie.
    """
    if scores not in ("given", "rank"):
        raise InputError(f"scores must be 'given' or 'rank', not {scores!r}")
    tag = _check_id(tag, "run tag")

    def lines() -> Iterator[str]:
        for qid, items in run.items():
            q = _check_id(qid, "question id")
            n = len(items)
            seen: set[str] = set()
            for rank, (item, score) in enumerate(items, start=1):
                item = _check_id(item, "item id")
                if item in seen:
                    raise InputError(f"run for question {qid!r} lists {item!r} twice")
                seen.add(item)
                value = float(n - rank + 1) if scores == "rank" else float(score)
                if not math.isfinite(value):
                    raise InputError(f"run for question {qid!r}: score of {item!r} is {value}")
                yield f"{q} Q0 {item} {rank} {value!r} {tag}\n"

    _atomic_write(path, lines())


def ordered_scores(scores: Sequence[float]) -> tuple[list[float], int] | None:
    """A ranking's scores (best first) made to keep its order in every tool, and how
    many were changed; ``None`` when no such scores exist (a score is not finite, or
    rises along the ranking: the order is not the scores' order).

    Each score is kept as it is unless, held as a 32-bit float (as trec_eval holds
    it), it is not below the score written above it; then it becomes the next
    32-bit float below that one. The values written then fall strictly along the
    ranking as 64-bit and as 32-bit floats, so no tool has a tie to break.
    """
    out: list[float] = []
    changed = 0
    given = math.inf  # the score above, as given
    above32 = np.float32(np.inf)  # the score written above, as a 32-bit float
    for score in scores:
        score = float(score)
        s32 = np.float32(score)
        if not math.isfinite(score) or not np.isfinite(s32) or score > given:
            return None
        given = score
        if s32 >= above32:
            s32 = np.nextafter(above32, np.float32(-np.inf))
            if not np.isfinite(s32):
                return None
            score = float(s32)
            changed += 1
        out.append(score)
        above32 = s32
    return out, changed


@dataclass(frozen=True, slots=True)
class RunLine:
    """One line of a run file, as :func:`read_run_lines` returns it."""

    line: int
    qid: str
    item: str
    rank: int
    score: float


def read_run_lines(path: PathLike) -> dict[str, list[RunLine]]:
    """Parsed lines per question (in the order questions first appear), ordered by
    score (highest first), then rank, then file order: the order of
    :func:`ragmeter.scoring.trec.run_order`, the one home of a run's order.

    The file is parsed by :func:`ragmeter.scoring.trec.read_run` (the one TREC run reader:
    6 or more fields per line, fields after the sixth ignored, ``.gz`` read as such);
    every bad line is a one-line error naming the file and line. An item listed twice
    for one question is an error naming both lines.
    """
    path = Path(path)
    run: Run = _read_run(path, format="trec")
    assert run.rank is not None  # read with ranks
    qids = decode_ids(run.qid, run.source, "run")
    items = decode_ids(run.doc, run.source, "run")
    ranks, scores, lines = run.rank.tolist(), run.score.tolist(), run.line.tolist()
    first: dict[tuple[str, str], int] = {}
    for qid, item, line in zip(qids, items, lines, strict=True):
        key = (qid, item)
        if key in first:
            raise InputError(
                f"{path}:{line}: {item!r} already listed for question {qid!r} on line {first[key]}"
            )
        first[key] = line
    # each question numbered in the order it first appears, so the questions keep that order
    _, head, row = np.unique(run.qid, return_index=True, return_inverse=True)
    appearance = np.empty(head.size, dtype=np.int64)
    appearance[np.argsort(head, kind="stable")] = np.arange(head.size)
    grouped: dict[str, list[RunLine]] = {}
    for i in run_order(appearance[row.reshape(-1)], run.score, run.rank).tolist():
        grouped.setdefault(qids[i], []).append(
            RunLine(lines[i], qids[i], items[i], ranks[i], scores[i])
        )
    return grouped


def read_run(path: PathLike) -> dict[str, list[tuple[str, float]]]:
    """``{qid: [(item_id, score), ...]}`` ordered by score, highest first;
    equal scores keep rank order (then file order)."""
    return {qid: [(r.item, r.score) for r in rows] for qid, rows in read_run_lines(path).items()}


def read_qrels(path: PathLike) -> dict[str, dict[str, int]]:
    """``{qid: {item_id: grade}}`` from a TREC qrels file (or a BEIR qrels TSV), parsed
    by :func:`ragmeter.scoring.trec.read_qrels`; a judgment given twice keeps the last."""
    return _read_qrels(path, format="trec").to_dict()


def ranking_to_run(
    ranking: Ranking,
    question_ids: Sequence[str],
    item_ids: Sequence[str],
    dedupe: bool = True,
) -> dict[str, list[tuple[str, float]]]:
    """A run dict from a :class:`Ranking`.

    ``item_ids[i]`` names indexed text ``i``: a chunk id, or the id of the
    document holding the chunk to get a document-level run. With ``dedupe``
    only the first (best) occurrence of each id is kept, so a chunk ranking
    becomes a document ranking scored by each document's best chunk.
    Padding (id -1) is dropped.
    """
    if len(question_ids) != ranking.ids.shape[0]:
        raise ValueError(f"{len(question_ids)} question ids for {ranking.ids.shape[0]} rows")
    run: dict[str, list[tuple[str, float]]] = {}
    for q, qid in enumerate(question_ids):
        seen: set[str] = set()
        rows: list[tuple[str, float]] = []
        for idx, score in zip(ranking.ids[q].tolist(), ranking.scores[q].tolist(), strict=True):
            if idx < 0:
                continue
            item = item_ids[idx]
            if dedupe:
                if item in seen:
                    continue
                seen.add(item)
            rows.append((item, float(score)))
        run[str(qid)] = rows
    return run

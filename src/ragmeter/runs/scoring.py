"""Scoring one system: its ranked spans graded against the answer keys, then measured.

The pipeline calls :func:`grade_rankings` and :func:`score_system` once per system;
everything between a ranked span and a per-question metric vector (span grades,
units found, character coverage, the ideal ranking for nDCG) happens here, over
:mod:`ragmeter.scoring.grading` and :mod:`ragmeter.scoring.metrics`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from ragmeter.chunking.strategies import Chunk
from ragmeter.inputs.config import Config
from ragmeter.inputs.testset import Question
from ragmeter.runs.reading import RankedItem
from ragmeter.scoring import grading, measurement, metrics

__all__ = ["grade_items", "grade_rankings", "score_system"]

Found = tuple[str, int, int, float, int]
"""A ranked span before grading: ``(doc, start, end, score, words)``."""


def grade_rankings(
    found: Sequence[Sequence[Found]], questions: Sequence[Question]
) -> list[list[RankedItem]]:
    """Every question's ranked spans graded against its key (one row per question)."""
    return [grade_items(row, q) for row, q in zip(found, questions, strict=True)]


def grade_items(
    found: Sequence[tuple[str, int, int, float, int]], question: Question
) -> list[RankedItem]:
    """Grade ranked spans ``(doc, start, end, score, words)`` against a question's key
    (all of its spans, any one of its alternatives, or its relevant documents)."""
    triples = [(d, s, e) for d, s, e, _, _ in found]
    if question.qrels:
        grades = grading.grade_documents(triples, dict(question.qrels))
    elif question.any_of:
        grades = grading.grade_any(triples, [(a.doc, a.start, a.end) for a in question.any_of])
    else:
        spans = [(a.doc, a.start, a.end) for a in question.answers]
        grades = grading.grade_ranking(triples, spans)
    return [
        RankedItem(rank, d, s, e, float(score), int(g), int(words))
        for rank, ((d, s, e, score, words), g) in enumerate(
            zip(found, grades, strict=True), start=1
        )
    ]


def _key_spans(question: Question, doc_lengths: dict[str, int] | None, level: int) -> list:
    """The spans whose characters coverage counts: the key's spans, or the whole
    text of each relevant document of a document-level key."""
    if question.qrels:
        lengths = doc_lengths or {}
        return [(d, 0, lengths[d]) for d, g in question.qrels if g >= level and lengths.get(d)]
    return [(a.doc, a.start, a.end) for a in question.answers]


def _coverage(
    row: Sequence[RankedItem], question: Question, spans: list, ks: Sequence[int]
) -> np.ndarray:
    items = [(it.doc, it.start, it.end) for it in row]
    if not spans:
        return np.zeros(len(ks), dtype=np.float64)
    if question.any_of:
        return np.max(
            [grading.coverage_curve(items, [(a.doc, a.start, a.end)], ks) for a in question.any_of],
            axis=0,
        )
    return grading.coverage_curve(items, spans, ks)


def _index_ideal(
    index: grading.SpanIndex,
    index_items: Sequence[Chunk],
    chunks_per_doc: dict[str, int],
    q: Question,
    row: Sequence[RankedItem],
) -> np.ndarray:
    """Grades above 0 of every item that holds the answer, high to low: the index's
    items, and any returned item the index does not hold (a merged or external
    span), so the ranking can never beat its ideal."""
    if q.qrels:
        judged = {d: g for d, g in q.qrels if g > 0}
        returned: dict[str, int] = {}
        for it in row:
            if it.doc in judged:
                returned[it.doc] = returned.get(it.doc, 0) + 1
        return np.array(
            sorted(
                (
                    g
                    for d, g in judged.items()
                    for _ in range(max(chunks_per_doc.get(d, 0), returned.get(d, 0)))
                ),
                reverse=True,
            ),
            dtype=np.int64,
        )
    keys = (
        [[(a.doc, a.start, a.end)] for a in q.any_of]
        if q.any_of
        else [[(a.doc, a.start, a.end) for a in q.answers]]
    )
    best: dict[int, int] = {}
    for key in keys:
        pos, g = index.nonzero(key)
        for p, x in zip(pos.tolist(), g.tolist(), strict=True):
            best[p] = max(best.get(p, 0), x)
    held: dict[tuple[str, int, int], list[int]] = {}  # item -> its grades in the index
    for p, x in best.items():
        c = index_items[p]
        held.setdefault((c.doc_id, c.start, c.end), []).append(x)
    extra: dict[tuple[str, int, int], list[int]] = {}  # returned beyond the index's copies
    for it in row:
        if it.grade > 0:
            extra.setdefault((it.doc, it.start, it.end), []).append(it.grade)
    grades = [x for xs in held.values() for x in xs]
    for item, xs in extra.items():
        grades += xs[len(held.get(item, ())) :]
    return np.array(sorted(grades, reverse=True), dtype=np.int64)


def _judged_ideal(q: Question) -> np.ndarray:
    if q.qrels:
        return np.array(sorted((g for _, g in q.qrels if g > 0), reverse=True), dtype=np.int64)
    return np.array([2], dtype=np.int64)  # one unit: an item holding the whole passage


def _judged_units(row: Sequence[RankedItem], q: Question, depth: int) -> np.ndarray:
    """The answer unit of each ranked item, as the judged ideal counts them: each
    relevant document of a qrels key, or a span key's one passage (0); -1 pads."""
    out = np.full(depth, -1, dtype=np.int64)
    docs = {d: i for i, (d, g) in enumerate(q.qrels) if g > 0} if q.qrels else {}
    for j, it in enumerate(row[:depth]):
        if it.grade > 0:
            out[j] = docs.get(it.doc, -1) if q.qrels else 0
    return out


def score_system(
    items: Sequence[Sequence[RankedItem]],
    questions: Sequence[Question],
    config: Config,
    index_items: Sequence[Chunk] | None = None,
    k_cap: int | None = None,
    doc_lengths: dict[str, int] | None = None,
) -> dict[str, np.ndarray]:
    """Per-question metric vectors for one system's graded rankings.

    With ``k_cap``, every k above it is scored at ``k_cap`` (a system with fewer items
    than k): the names stay those of ``config.ks``.
    """
    if k_cap is not None and k_cap < max(config.ks):
        ks = sorted({min(k, k_cap) for k in config.ks})
        capped = score_system(
            items, questions, replace(config, ks=tuple(ks)), index_items, doc_lengths=doc_lengths
        )
        out: dict[str, np.ndarray] = {}
        for name in metrics.metric_names(config.ks):
            m = metrics.Metric.parse(name)
            key = name if m.k is None else str(metrics.Metric(m.name, min(m.k, k_cap)))
            if key in capped:
                out[name] = capped[key]
        for key, values in capped.items():  # measures over the whole list have no k to cap
            if metrics.Metric.parse(key).k is None:
                out.setdefault(key, values)
        return out
    depth = config.depth
    n = len(questions)
    settings = measurement.effective_settings(config, questions)  # as meta.json records
    level = settings["relevant_grade"]
    grades = np.zeros((n, depth), dtype=np.int64)
    words = np.zeros((n, depth), dtype=np.int64)
    found = np.zeros((n, depth), dtype=np.int64)
    n_relevant = np.ones(n, dtype=np.int64)
    coverage = np.zeros((n, len(config.ks)), dtype=np.float64)
    for q, (row, question) in enumerate(zip(items, questions, strict=True)):
        m = len(row)
        grades[q, :m] = [it.grade for it in row]
        words[q, :m] = [it.words for it in row]
        by_doc = bool(question.qrels)
        f = grading.found_units(
            [(it.doc, it.start, it.end) for it in row], grades[q, :m].tolist(), level, by_doc
        )
        found[q, :m] = f
        if m:
            found[q, m:] = f[-1]
        if by_doc:
            n_relevant[q] = sum(1 for _, g in question.qrels if g >= level)
        spans = _key_spans(question, doc_lengths, level)
        coverage[q] = _coverage(row, question, spans, config.ks)
    ideal_kind = settings["ideal"]
    ideal = units = None
    if ideal_kind == "index" and index_items is not None:
        index = grading.SpanIndex([(c.doc_id, c.start, c.end) for c in index_items])
        per_doc: dict[str, int] = {}
        for c in index_items:
            per_doc[c.doc_id] = per_doc.get(c.doc_id, 0) + 1
        ideal = [
            _index_ideal(index, index_items, per_doc, q, row)
            for q, row in zip(questions, items, strict=True)
        ]
    elif ideal_kind == "judged":
        ideal = [_judged_ideal(q) for q in questions]
        units = np.vstack(
            [_judged_units(row, q, depth) for q, row in zip(questions, items, strict=True)]
        ).reshape(n, depth)
    return metrics.score_questions(
        grades,
        words,
        ks=config.ks,
        coverage=coverage,
        ideal=ideal,
        relevant_grade=level,
        n_relevant=n_relevant,
        found=found,
        gain=settings["gain"],
        units=units,
    )

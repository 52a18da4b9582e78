"""A search run: corpus + test set + strategies x retrievers -> per-question scores.

Every step is a plain function over plain data: load, chunk, index, rank, grade,
score. :func:`run_search` ties them together and returns a :class:`SearchRun`
that :mod:`ragmeter.results` saves and loads.

Size: one pipeline (rank, grade, score, per system) read top to bottom; the result types
:class:`SearchRun` and :class:`RankedItem` are what its steps return, so they stay beside
them.
"""

from __future__ import annotations

import hashlib
import itertools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ragmeter import chunking, grading, metrics
from ragmeter._memory import release_free_memory
from ragmeter.chunking import Chunk, Chunking
from ragmeter.config import Config
from ragmeter.corpus import Document, load_corpus
from ragmeter.errors import InputError
from ragmeter.retrieval.base import Hit, Retriever, SpanRetriever
from ragmeter.retrieval.registry import make_retriever
from ragmeter.tables import ShowsItself
from ragmeter.testset import Question, TestSet, load_judged_testset, load_testset

if TYPE_CHECKING:
    from ragmeter.summary import Summary

Progress = Callable[[str, int, int], None]


def count_words(text: str) -> int:
    """Words are whitespace-separated tokens (the matches of ``\\S+``).

    ``str.split()`` splits at exactly the characters ``\\s`` matches (``str.isspace``), in C.
    """
    return len(text.split())


class WordCounts(dict):
    """``counts[i]``: :func:`count_words` of ``items[i].text``, counted once per item.

    Chunks are views of their document, so each read of ``text`` slices it anew; an item
    ranked again (by another question) is looked up instead of split again.
    """

    def __init__(self, items: Sequence[Chunk]) -> None:
        super().__init__()
        self.items = items

    def __missing__(self, i: int) -> int:
        n = self[i] = count_words(self.items[i].text)
        return n


def _needs_sentences(strategy) -> bool:
    return isinstance(strategy, chunking.SentenceStrategy | chunking.ParentChildStrategy)


def _release(retriever) -> None:
    """Let a retriever drop its index once its system is ranked (bounds a run's memory)."""
    release = getattr(retriever, "release", None)
    if callable(release):
        release()


@dataclass(frozen=True, slots=True)
class RankedItem:
    """One ranked result of one question: a span of a document, graded.

    ``rank`` counts from 1. ``text`` is the span's text where it was read back from a
    results directory (:attr:`ragmeter.results.Results.runs`, :attr:`SearchRun.runs`);
    items made by a search leave it ``None``, as the documents hold it.
    """

    rank: int
    doc: str
    start: int
    end: int
    score: float
    grade: int
    words: int
    text: str | None = None


@dataclass
class SystemRun:
    """One strategy x retriever: the ranked items and per-question scores."""

    name: str
    strategy: dict
    retriever: dict
    n_items: int
    items: list[list[RankedItem]]  # per question, best first, at most `depth`
    scores: dict[str, np.ndarray]  # metric name -> per-question vector
    k_cap: int | None = None  # set when a k was larger than n_items: scored at n_items

    def __str__(self) -> str:
        return self.name


@dataclass
class SearchRun(ShowsItself):
    """Everything a search produced, in memory.

    It reads like :class:`ragmeter.results.Results`, so a notebook needs no
    disk: ``scores(system, metric)``, ``matrix(metric, systems)``, ``metrics``,
    ``question_ids``, ``questions``, ``runs`` (ranked items with their text) and
    ``summary`` (a :class:`ragmeter.summary.Summary`, computed once on first use);
    :meth:`save` writes the results directory.
    ``systems`` holds :class:`SystemRun` objects whose ``str`` is the system's
    name; every reading method takes a name or one of them. It shows itself as
    a table (``_repr_html_``, ``to_markdown()``, ``to_pandas()``).
    """

    config: Config
    documents: list[Document]
    testset: TestSet
    systems: list[SystemRun]
    timings: dict[str, float] = field(default_factory=dict)
    chunk_keys: dict[str, int] = field(default_factory=dict)  # strategy -> hash of its chunks

    @property
    def questions(self) -> list[Question]:
        return self.testset.questions

    @property
    def question_ids(self) -> list[str]:
        return [q.id for q in self.testset.questions]

    @property
    def metric_names(self) -> list[str]:
        return list(self.systems[0].scores) if self.systems else []

    @property
    def metrics(self) -> list[str]:
        """The metric names, as :attr:`ragmeter.results.Results.metrics`."""
        return self.metric_names

    def system(self, name: str | SystemRun) -> SystemRun:
        """The :class:`SystemRun` of ``name``."""
        for s in self.systems:
            if s is name or s.name == str(name):
                return s
        raise InputError(
            f"unknown system {str(name)!r}; choose one of {[s.name for s in self.systems]}"
        )

    def scores(self, system: str | SystemRun, metric: str) -> np.ndarray:
        """Per-question scores of one system on one metric."""
        found = self.system(system)
        if metric not in found.scores:
            raise InputError(f"unknown metric {metric!r}; choose one of {self.metric_names}")
        return np.asarray(found.scores[metric], dtype=np.float64)

    def matrix(self, metric: str, systems: Sequence[str | SystemRun] | None = None) -> np.ndarray:
        """(systems x questions) scores for one metric (all systems by default)."""
        chosen = self.systems if systems is None else systems
        return np.vstack([self.scores(s, metric) for s in chosen])

    @cached_property
    def summary(self) -> Summary:
        """Intervals, paired comparisons and sample sizes, as ``summary.json`` holds them
        (:func:`ragmeter.summary.summarize_run`; computed on first use)."""
        from ragmeter.summary import summarize_run

        return summarize_run(self)

    @cached_property
    def runs(self) -> dict[str, dict[str, list[RankedItem]]]:
        """``runs[system][question_id]``: the ranked items, best first, with their text,
        as :attr:`ragmeter.results.Results.runs` reads them back."""
        texts = {d.id: d.text for d in self.documents}
        return {
            s.name: {
                q.id: [replace(it, text=texts[it.doc][it.start : it.end]) for it in row]
                for q, row in zip(self.questions, s.items, strict=True)
            }
            for s in self.systems
        }

    def save(self, path: str | Path) -> Path:
        """Write this run as a results directory (:func:`ragmeter.results.save_results`)."""
        from ragmeter.results import save_results

        return save_results(self, path)


def resolve_strategies(config: Config) -> list:
    """Strategy objects for the names in the config (custom ones by their name)."""
    custom = {s["name"]: s for s in config.custom_strategies}
    names = list(config.strategies)
    out = []
    for name in names:
        if name in custom:
            spec = dict(custom[name])
            spec.pop("name")
            kind = spec.pop("kind", None)
            if kind is None:
                raise InputError(f'strategy {name!r}: give its kind, e.g. kind = "fixed"')
            out.append(chunking.make_strategy(name, kind=kind, **spec))
        else:
            out.append(chunking.make_strategy(name))
    return out


def _describe(obj) -> dict:
    describe = getattr(obj, "describe", None)
    return describe() if callable(describe) else {"name": getattr(obj, "name", str(obj))}


def _timed(timings: dict[str, float], stage: str, t0: float) -> float:
    now = time.perf_counter()
    timings[stage] = timings.get(stage, 0.0) + now - t0
    return now


def rank_chunking(
    retriever: Retriever,
    chunked: Chunking,
    questions: Sequence[Question],
    depth: int,
    indexed: bool = False,
) -> tuple[list[list[int]], list[list[float]]]:
    """Rank ``chunked.items`` for every question: indices into items, best first.

    For parent-child chunkings the retriever matches children and each parent
    is returned once, at its best child's rank.
    """
    if not indexed:
        retriever.index([c.text for c in chunked.chunks])
    texts = [q.text for q in questions]
    n = len(chunked.chunks)
    if chunked.parents is None:
        ranking = retriever.rank(texts, min(depth, n))
        ids = [[int(i) for i in row if i >= 0] for row in ranking.ids]
        scores = [
            [float(s) for s, i in zip(srow, irow, strict=True) if i >= 0]
            for srow, irow in zip(ranking.scores, ranking.ids, strict=True)
        ]
        return ids, scores
    n_parents = len(chunked.parents)
    want = min(depth, n_parents)
    k = min(n, depth * 4)
    while True:
        ranking = retriever.rank(texts, k)
        out_ids, out_scores, short = [], [], False
        for irow, srow in zip(ranking.ids, ranking.scores, strict=True):
            seen: dict[int, float] = {}
            for i, s in zip(irow, srow, strict=True):
                if i < 0:
                    continue
                p = chunked.chunks[int(i)].parent
                if p not in seen:
                    seen[p] = float(s)
                    if len(seen) == want:
                        break
            short |= len(seen) < want
            out_ids.append(list(seen))
            out_scores.append(list(seen.values()))
        if not short or k >= n:
            return out_ids, out_scores
        k = min(n, k * 4)


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


def relevance_level(questions: Sequence[Question], config: Config) -> int:
    """The lowest relevant grade: 1 (trec_eval's) for document-level keys, else
    ``config.relevant_grade``."""
    return 1 if any(q.qrels for q in questions) else config.relevant_grade


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
    index: grading.SpanIndex, chunks_per_doc: dict[str, int], q: Question
) -> np.ndarray:
    if q.qrels:
        return np.array(
            sorted(
                (g for d, g in q.qrels if g > 0 for _ in range(chunks_per_doc.get(d, 0))),
                reverse=True,
            ),
            dtype=np.int64,
        )
    if q.any_of:
        best: dict[int, int] = {}
        for a in q.any_of:
            pos, g = index.nonzero([(a.doc, a.start, a.end)])
            for p, x in zip(pos.tolist(), g.tolist(), strict=True):
                best[p] = max(best.get(p, 0), x)
        return np.array(sorted(best.values(), reverse=True), dtype=np.int64)
    return index.ideal_grades([(a.doc, a.start, a.end) for a in q.answers])


def _judged_ideal(q: Question) -> np.ndarray:
    if q.qrels:
        return np.array(sorted((g for _, g in q.qrels if g > 0), reverse=True), dtype=np.int64)
    return np.array([2], dtype=np.int64)  # one unit: an item holding the whole passage


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
    level = relevance_level(questions, config)
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
    ideal_kind = "judged" if config.trec_eval_compat else config.ideal
    ideal = None
    if ideal_kind == "index" and index_items is not None:
        index = grading.SpanIndex([(c.doc_id, c.start, c.end) for c in index_items])
        per_doc: dict[str, int] = {}
        for c in index_items:
            per_doc[c.doc_id] = per_doc.get(c.doc_id, 0) + 1
        ideal = [_index_ideal(index, per_doc, q) for q in questions]
    elif ideal_kind == "judged":
        ideal = [_judged_ideal(q) for q in questions]
    return metrics.score_questions(
        grades,
        words,
        ks=config.ks,
        coverage=coverage,
        ideal=ideal,
        relevant_grade=level,
        n_relevant=n_relevant,
        found=found,
        gain="linear" if config.trec_eval_compat else config.gain,
    )


def chunking_key(chunked: Chunking) -> int:
    """A hash of a chunking's chunks and parents (documents, offsets, parent numbers): equal
    chunkings, equal keys. Made a document at a time, without a tuple per chunk."""
    h = hashlib.blake2b(digest_size=8)
    for group in (chunked.chunks, chunked.parents or ()):
        for doc_id, run in itertools.groupby(group, key=lambda c: c.doc_id):
            name = doc_id.encode("utf-8", "surrogatepass")
            chunks = list(run)
            h.update(len(name).to_bytes(8, "little") + name + len(chunks).to_bytes(8, "little"))
            fields = (
                x for c in chunks for x in (c.start, c.end, -1 if c.parent is None else c.parent)
            )
            h.update(np.fromiter(fields, dtype=np.int64, count=3 * len(chunks)).tobytes())
        h.update(b"|")
    return int.from_bytes(h.digest(), "little")


def system_name(strategy: str, retriever: str, n_retrievers: int) -> str:
    return strategy if n_retrievers == 1 else f"{strategy}/{retriever}"


def run_search(
    config: Config,
    documents: Sequence[Document] | None = None,
    testset: TestSet | None = None,
    progress: Progress | None = None,
) -> SearchRun:
    """Run every strategy x retriever over the test set and score each question."""
    with chunking.run_scope():  # one sentence segmentation per document for the whole run
        try:
            return _run_search(config, documents, testset, progress)
        finally:
            release_free_memory()  # what the run's indexes and token tables held


def _run_search(
    config: Config,
    documents: Sequence[Document] | None,
    testset: TestSet | None,
    progress: Progress | None,
) -> SearchRun:
    config = config.validate()
    timings: dict[str, float] = {}
    t = time.perf_counter()
    if documents is None:
        if not config.corpus:
            raise InputError("no corpus given; set [corpus] path or pass --corpus")
        documents = load_corpus(config.corpus, config.corpus_format)
    if testset is None:
        if not config.testset:
            raise InputError("no test set given; set [testset] path or pass --testset")
        if config.qrels:
            testset = load_judged_testset(config.testset, config.qrels, documents)
        else:
            testset = load_testset(config.testset, documents, config.testset_format)
    questions = testset.questions
    question_texts = [q.text for q in questions]
    t = _timed(timings, "load", t)
    retrievers = [make_retriever(r) for r in config.retrievers]
    strategies = resolve_strategies(config)
    n_steps = len(strategies) * len(retrievers)
    step = 0
    systems: list[SystemRun] = []
    chunk_keys: dict[str, int] = {}
    docs_by_id = {d.id: d for d in documents}
    doc_texts = {d.id: d.text for d in documents}
    doc_lengths = {d.id: len(d.text) for d in documents}
    span_retrievers = [r for r in retrievers if isinstance(r, SpanRetriever)]
    chunk_retrievers = [r for r in retrievers if not isinstance(r, SpanRetriever)]
    engine = None
    if chunk_retrievers and (
        config.engine != "local" or any(_needs_sentences(s) for s in strategies)
    ):
        from ragmeter.engine import make_engine

        engine = make_engine(config.engine, config.engine_address, config.engine_workers or None)
        for r in chunk_retrievers:  # dense retrievers encode on the engine's workers
            if hasattr(r, "engine") and hasattr(engine, "encode_batches"):
                r.engine = engine
    if engine is not None and any(_needs_sentences(s) for s in strategies):
        # One sentence segmentation per document, shared by every strategy, spread over the
        # engine's workers; the strategies below then find it in chunking's run cache.

        def sentences_progress(done: int, total: int) -> None:
            if progress:
                progress(f"sentences ({engine.name})", done, total)

        def prepare_documents() -> None:
            # this process's own per-document work (BM25 tokens) while the workers segment;
            # its time counts as indexing
            t0 = time.perf_counter()
            for r in chunk_retrievers:
                prepare = getattr(r, "prepare_documents", None)
                if callable(prepare):
                    prepare(doc_texts)
            spent = time.perf_counter() - t0
            timings["index"] = timings.get("index", 0.0) + spent
            timings["chunk"] = timings.get("chunk", 0.0) - spent

        chunking.prepare_sentences(
            (d.text for d in documents), engine, sentences_progress, prepare_documents
        )
        release_free_memory()  # the segmentation's and tokenizing's temporaries
        t = _timed(timings, "chunk", t)
    for strategy in strategies if chunk_retrievers else []:
        if progress:
            progress(f"{strategy.name} · chunking", step, n_steps)
        chunked = chunking.chunk_corpus(documents, strategy)
        release_free_memory()  # the chunking's temporaries, before the index is built
        t = _timed(timings, "chunk", t)
        n_items = len(chunked.items)
        chunk_keys[strategy.name] = chunking_key(chunked)
        if n_items == 0:
            raise InputError(
                f"strategy {strategy.name!r} makes no items from the corpus (is it empty?)"
            )
        k_cap = n_items if n_items < max(config.ks) else None
        for retriever in chunk_retrievers:
            if progress:
                progress(f"{strategy.name} · {retriever.name}", step, n_steps)
                _embedding_progress(retriever, progress, f"{strategy.name} · embedding")
            index_chunks = getattr(retriever, "index_chunks", None)
            if callable(index_chunks):  # BM25: only the questions' words are indexed
                index_chunks(chunked.chunks, doc_texts, questions=question_texts)
            else:
                retriever.index([c.text for c in chunked.chunks])
            release_free_memory()  # the index build's temporaries, before ranking
            t = _timed(timings, "index", t)
            ids, scores = rank_chunking(retriever, chunked, questions, config.depth, indexed=True)
            t = _timed(timings, "rank", t)
            words = WordCounts(chunked.items)  # ranked items only, each counted once
            items = []
            for q, question in enumerate(questions):
                found = [
                    (
                        chunked.items[i].doc_id,
                        chunked.items[i].start,
                        chunked.items[i].end,
                        s,
                        words[i],
                    )
                    for i, s in zip(ids[q], scores[q], strict=True)
                ]
                items.append(grade_items(found, question))
            t = _timed(timings, "grade", t)
            per_q = score_system(
                items, questions, config, chunked.items, k_cap, doc_lengths=doc_lengths
            )
            t = _timed(timings, "score", t)
            systems.append(
                SystemRun(
                    name=system_name(strategy.name, retriever.name, len(retrievers)),
                    strategy=_describe(strategy),
                    retriever=retriever.describe(),
                    n_items=n_items,
                    items=items,
                    scores=per_q,
                    k_cap=k_cap,
                )
            )
            step += 1
            _release(retriever)
        del chunked
        release_free_memory()
    for retriever in span_retrievers:
        retriever.set_documents(documents)
        if progress:
            progress(f"{retriever.name}", step, n_steps)
        hits = retriever.search([(q.id, q.text) for q in questions], config.depth)
        t = _timed(timings, "rank", t)
        items = []
        for question, row in zip(questions, hits, strict=True):
            items.append(grade_items([_hit_tuple(h, docs_by_id) for h in row], question))
        t = _timed(timings, "grade", t)
        per_q = score_system(items, questions, config, doc_lengths=doc_lengths)
        t = _timed(timings, "score", t)
        systems.append(
            SystemRun(
                name=retriever.name,
                strategy={"name": "external"},
                retriever=retriever.describe(),
                n_items=0,
                items=items,
                scores=per_q,
            )
        )
        step += 1
    if progress:
        progress("done", n_steps, n_steps)
    return SearchRun(config, list(documents), testset, systems, timings, chunk_keys)


def _embedding_progress(retriever: Retriever, progress: Progress, label: str) -> None:
    """Point the ``progress`` hook of a retriever that embeds (and of a hybrid's parts)
    at ``progress(label, done, total)``, called after each batch of chunk texts."""
    for r in (retriever, *getattr(retriever, "retrievers", ())):
        if hasattr(r, "progress"):
            r.progress = lambda done, total: progress(label, done, total)
        if hasattr(r, "distill_progress"):  # a static model distilled on first use
            what = f"{r.name} · distilling (once)"
            r.distill_progress = lambda done, total, what=what: progress(what, done, total)


def _hit_tuple(hit: Hit, docs: dict[str, Document]) -> tuple[str, int, int, float, int]:
    doc = docs.get(hit.doc_id)
    if doc is None:
        raise InputError(f"retrieved document {hit.doc_id!r} is not in the corpus")
    return (hit.doc_id, hit.start, hit.end, hit.score, count_words(doc.text[hit.start : hit.end]))

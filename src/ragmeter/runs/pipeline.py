"""A search run: corpus + test set + strategies x retrievers -> per-question scores.

Every step is a plain function over plain data: load, chunk, index, rank, grade,
score. :func:`run_search` ties them together and returns a :class:`SearchRun`
that :mod:`ragmeter.runs.saving` writes and :mod:`ragmeter.runs.results` reads back.

The run's data types live in :mod:`ragmeter.runs.search_run` and scoring in
:mod:`ragmeter.runs.scoring`;
this module runs the pipeline and neither summarises nor saves.
"""

from __future__ import annotations

import hashlib
import itertools
import time
from collections.abc import Callable, Sequence

import numpy as np

from ragmeter.chunking import strategies as chunking
from ragmeter.chunking.strategies import Chunk, Chunking
from ragmeter.comparison.families import system_name  # the name a grid is read back from
from ragmeter.errors import InputError
from ragmeter.inputs.config import Config
from ragmeter.inputs.corpus import Document, load_corpus
from ragmeter.inputs.testset import (
    Question,
    TestSet,
    load_judged_testset,
    load_testset,
    question_clusters,
)
from ragmeter.retrieval.base import Hit, Retriever, SpanRetriever
from ragmeter.retrieval.registry import make_retriever
from ragmeter.runs import scoring
from ragmeter.runs.reading import RankedItem, SystemRun  # noqa: F401 (their old home)
from ragmeter.runs.scoring import grade_items, score_system  # noqa: F401
from ragmeter.runs.search_run import SearchRun

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
    """Whether ``strategy`` needs syntok's sentences of every document, segmented up front
    (blingfire's are found in a fraction of the time when the corpus is chunked)."""
    kinds = chunking.SentenceStrategy | chunking.ParentChildStrategy
    return isinstance(strategy, kinds) and strategy.segmenter == "syntok"


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


def run_search(
    config: Config,
    documents: Sequence[Document] | None = None,
    testset: TestSet | None = None,
    progress: Progress | None = None,
) -> SearchRun:
    """Run every strategy x retriever over the test set and score each question."""
    with chunking.run_scope():  # one sentence segmentation per document for the whole run
        return _run_search(config, documents, testset, progress)


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
    question_clusters(questions, config.clusters)  # a missing cluster field: before the search
    question_texts = [q.text for q in questions]
    t = _timed(timings, "load", t)
    retrievers = [make_retriever(r) for r in config.retrievers]
    strategies = resolve_strategies(config)
    step = 0
    systems: list[SystemRun] = []
    chunk_keys: dict[str, int] = {}
    docs_by_id = {d.id: d for d in documents}
    doc_texts = {d.id: d.text for d in documents}
    doc_lengths = {d.id: len(d.text) for d in documents}
    span_retrievers = [r for r in retrievers if isinstance(r, SpanRetriever)]
    chunk_retrievers = [r for r in retrievers if not isinstance(r, SpanRetriever)]
    # one step a system: a chunk retriever per strategy, a span retriever once
    n_steps = len(strategies) * len(chunk_retrievers) + len(span_retrievers)
    engine = None
    if chunk_retrievers and (
        config.engine != "local" or any(_needs_sentences(s) for s in strategies)
    ):
        from ragmeter.engine import make_engine

        engine = make_engine(config.engine, config.engine_address, config.engine_workers or None)
        for r in chunk_retrievers:  # dense retrievers encode on the engine's workers
            r.use_engine(engine)
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
                r.prepare_documents(doc_texts)
            spent = time.perf_counter() - t0
            timings["index"] = timings.get("index", 0.0) + spent
            timings["chunk"] = timings.get("chunk", 0.0) - spent

        chunking.prepare_sentences(
            (d.text for d in documents), engine, sentences_progress, prepare_documents
        )
        t = _timed(timings, "chunk", t)
    for strategy in strategies if chunk_retrievers else []:
        if progress:
            progress(f"{strategy.name} · chunking", step, n_steps)
        chunked = chunking.chunk_corpus(documents, strategy)
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
                retriever.follow_progress(progress, f"{strategy.name} · embedding")
            retriever.index_chunks(chunked.chunks, doc_texts, questions=question_texts)
            t = _timed(timings, "index", t)
            ids, scores = rank_chunking(retriever, chunked, questions, config.depth, indexed=True)
            t = _timed(timings, "rank", t)
            words = WordCounts(chunked.items)  # ranked items only, each counted once
            found = [
                [
                    (
                        chunked.items[i].doc_id,
                        chunked.items[i].start,
                        chunked.items[i].end,
                        s,
                        words[i],
                    )
                    for i, s in zip(ids[q], scores[q], strict=True)
                ]
                for q in range(len(questions))
            ]
            items = scoring.grade_rankings(found, questions)
            t = _timed(timings, "grade", t)
            per_q = scoring.score_system(
                items, questions, config, chunked.items, k_cap, doc_lengths=doc_lengths
            )
            t = _timed(timings, "score", t)
            systems.append(
                SystemRun(
                    name=system_name(strategy.name, retriever.name, len(retrievers)),
                    strategy=strategy.describe(),
                    retriever=retriever.describe(),
                    n_items=n_items,
                    items=items,
                    scores=per_q,
                    k_cap=k_cap,
                )
            )
            step += 1
            retriever.release()  # its index, once its system is ranked
        del chunked
    for retriever in span_retrievers:
        retriever.set_documents(documents)
        if progress:
            progress(f"{retriever.name}", step, n_steps)
        hits = retriever.search([(q.id, q.text) for q in questions], config.depth)
        t = _timed(timings, "rank", t)
        found = [[_hit_tuple(h, docs_by_id) for h in row] for row in hits]
        items = scoring.grade_rankings(found, questions)
        t = _timed(timings, "grade", t)
        per_q = scoring.score_system(items, questions, config, doc_lengths=doc_lengths)
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


def _hit_tuple(hit: Hit, docs: dict[str, Document]) -> tuple[str, int, int, float, int]:
    doc = docs.get(hit.doc_id)
    if doc is None:
        raise InputError(f"retrieved document {hit.doc_id!r} is not in the corpus")
    return (hit.doc_id, hit.start, hit.end, hit.score, count_words(doc.text[hit.start : hit.end]))

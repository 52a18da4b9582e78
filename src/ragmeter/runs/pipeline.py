"""A search run: corpus + test set + strategies x retrievers -> per-question scores.

Every step is a plain function over plain data: load, chunk, index, rank, grade,
score. :func:`run_search` ties them together and returns a :class:`SearchRun`
that :mod:`ragmeter.runs.saving` writes and :mod:`ragmeter.runs.results` reads back.

The run's data types live in :mod:`ragmeter.runs.reading` (``SearchRun`` in
:mod:`ragmeter.runs.search_run`) and scoring in :mod:`ragmeter.runs.scoring`;
this module runs the pipeline and neither summarises nor saves.
"""

from __future__ import annotations

import hashlib
import itertools
import time
from collections.abc import Callable, Sequence
from functools import partial

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


# The segmenter whose sentences are found up front, over the engine's workers: syntok, pure
# Python (ICU's and blingfire's are found in a fraction of the time as the corpus is chunked).
UP_FRONT_SEGMENTER = "syntok"


def _needs_sentences(strategy) -> bool:
    """Whether ``strategy`` needs :data:`UP_FRONT_SEGMENTER`'s sentences of every document."""
    kinds = chunking.SentenceStrategy | chunking.ParentChildStrategy
    return isinstance(strategy, kinds) and strategy.segmenter == UP_FRONT_SEGMENTER


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
        else:  # an unknown name is offered the config's names too
            out.append(chunking.make_strategy(name, defined=list(custom)))
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
    clock = _Clock()
    documents, testset = _inputs(config, documents, testset)
    question_clusters(testset.questions, config.clusters)  # a missing cluster field: first
    clock.lap("load")
    retrievers = [make_retriever(r) for r in config.retrievers]
    strategies = resolve_strategies(config)
    span_retrievers = [r for r in retrievers if isinstance(r, SpanRetriever)]
    chunk_retrievers = [r for r in retrievers if not isinstance(r, SpanRetriever)]
    search = _Search(
        config,
        documents,
        testset.questions,
        clock,
        progress,
        # one step a system: a chunk retriever per strategy, a span retriever once
        n_steps=len(strategies) * len(chunk_retrievers) + len(span_retrievers),
        n_retrievers=len(retrievers),
    )
    engine = _engine_for(config, strategies, chunk_retrievers)
    if engine is not None and any(_needs_sentences(s) for s in strategies):
        search.segment_sentences(engine, chunk_retrievers)
    systems: list[SystemRun] = []
    for strategy in strategies if chunk_retrievers else []:
        systems += search.chunk_systems(strategy, chunk_retrievers)
    for retriever in span_retrievers:
        systems.append(search.span_system(retriever))
    search.show("done", search.n_steps)
    return SearchRun(config, list(documents), testset, systems, clock.timings, search.chunk_keys)


def _inputs(
    config: Config, documents: Sequence[Document] | None, testset: TestSet | None
) -> tuple[Sequence[Document], TestSet]:
    """The corpus and test set: those given, else read from the config's paths."""
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
    return documents, testset


def _engine_for(config: Config, strategies: list, chunk_retrievers: list[Retriever]):
    """The engine of the config when chunk retrievers need one (another engine than the
    local one, or strategies that need every document's sentences); the retrievers then
    encode on its workers. None otherwise."""
    if not chunk_retrievers or (
        config.engine == "local" and not any(_needs_sentences(s) for s in strategies)
    ):
        return None
    from ragmeter.engine import make_engine

    engine = make_engine(config.engine, config.engine_address, config.engine_workers or None)
    for r in chunk_retrievers:  # dense retrievers encode on the engine's workers
        r.use_engine(engine)
    return engine


class _Clock:
    """A run's per-stage timings: :meth:`lap` adds the time since the last lap to a stage."""

    def __init__(self) -> None:
        self.timings: dict[str, float] = {}
        self.t = time.perf_counter()

    def lap(self, stage: str) -> None:
        self.t = _timed(self.timings, stage, self.t)

    def move(self, spent: float, source: str, target: str) -> None:
        """Count ``spent`` seconds of ``source``'s time as ``target``'s."""
        self.timings[target] = self.timings.get(target, 0.0) + spent
        self.timings[source] = self.timings.get(source, 0.0) - spent


class _Search:
    """One search under way: the inputs, the clock, the progress shown, and the steps that
    make its systems (a chunk retriever per strategy, a span retriever once)."""

    def __init__(
        self,
        config: Config,
        documents: Sequence[Document],
        questions: list[Question],
        clock: _Clock,
        progress: Progress | None,
        *,
        n_steps: int,
        n_retrievers: int,
    ) -> None:
        self.config, self.documents, self.questions = config, documents, questions
        self.clock, self.progress = clock, progress
        self.n_steps, self.n_retrievers, self.step = n_steps, n_retrievers, 0
        self.doc_texts = {d.id: d.text for d in documents}
        self.docs_by_id = {d.id: d for d in documents}
        self.question_texts = [q.text for q in questions]
        self.doc_lengths = {d.id: len(d.text) for d in documents}
        self.chunk_keys: dict[str, int] = {}  # strategy -> hash of its chunks

    def show(self, label: str, done: int | None = None) -> None:
        """Progress: ``label`` at step ``done`` (the current step by default)."""
        if self.progress:
            self.progress(label, self.step if done is None else done, self.n_steps)

    def segment_sentences(self, engine, chunk_retrievers: list[Retriever]) -> None:
        """One sentence segmentation per document, shared by every strategy, spread over the
        engine's workers; the strategies then find it in chunking's run cache. Meanwhile
        this process does its own per-document work (BM25 tokens), counted as indexing."""
        shown = partial(self.show_sentences, engine.name)
        meanwhile = partial(self.prepare_documents, chunk_retrievers)
        chunking.prepare_sentences(
            (d.text for d in self.documents), engine, shown, meanwhile, UP_FRONT_SEGMENTER
        )
        self.clock.lap("chunk")

    def show_sentences(self, engine_name: str, done: int, total: int) -> None:
        if self.progress:
            self.progress(f"sentences ({engine_name})", done, total)

    def prepare_documents(self, chunk_retrievers: list[Retriever]) -> None:
        t0 = time.perf_counter()
        for r in chunk_retrievers:
            r.prepare_documents(self.doc_texts, self.question_texts)
        self.clock.move(time.perf_counter() - t0, "chunk", "index")

    def chunk_systems(self, strategy, retrievers: list[Retriever]) -> list[SystemRun]:
        """Every chunk retriever's system over ``strategy``'s chunks of the corpus."""
        self.show(f"{strategy.name} · chunking")
        chunked = chunking.chunk_corpus(self.documents, strategy)
        self.clock.lap("chunk")
        n_items = len(chunked.items)
        self.chunk_keys[strategy.name] = chunking_key(chunked)
        if n_items == 0:
            raise InputError(
                f"strategy {strategy.name!r} makes no items from the corpus (is it empty?)"
            )
        k_cap = n_items if n_items < max(self.config.ks) else None
        out = []
        for retriever in retrievers:
            found = self.rank_chunks(strategy.name, retriever, chunked)
            name = system_name(strategy.name, retriever.name, self.n_retrievers)
            out.append(
                self.scored(name, found, strategy.describe(), retriever, n_items, chunked, k_cap)
            )
            retriever.release()  # its index, once its system is ranked
        return out

    def rank_chunks(self, strategy: str, retriever: Retriever, chunked: Chunking) -> list[list]:
        """``retriever``'s ranked items of ``chunked`` for every question, as
        ``(doc, start, end, score, words)``."""
        if self.progress:
            self.progress(f"{strategy} · {retriever.name}", self.step, self.n_steps)
            retriever.follow_progress(self.progress, f"{strategy} · embedding")
        retriever.index_chunks(chunked.chunks, self.doc_texts, questions=self.question_texts)
        self.clock.lap("index")
        ids, scores = rank_chunking(
            retriever, chunked, self.questions, self.config.depth, indexed=True
        )
        self.clock.lap("rank")
        words = WordCounts(chunked.items)  # ranked items only, each counted once
        items = chunked.items
        return [
            [
                (items[i].doc_id, items[i].start, items[i].end, s, words[i])
                for i, s in zip(ids[q], scores[q], strict=True)
            ]
            for q in range(len(self.questions))
        ]

    def span_system(self, retriever: SpanRetriever) -> SystemRun:
        """The system of a retriever that returns spans of the documents itself."""
        retriever.set_documents(self.documents)
        self.show(f"{retriever.name}")
        hits = retriever.search([(q.id, q.text) for q in self.questions], self.config.depth)
        self.clock.lap("rank")
        found = [[_hit_tuple(h, self.docs_by_id) for h in row] for row in hits]
        return self.scored(retriever.name, found, {"name": "external"}, retriever)

    def scored(
        self,
        name: str,
        found: list[list],
        strategy: dict,
        retriever: Retriever,
        n_items: int = 0,
        chunked: Chunking | None = None,
        k_cap: int | None = None,
    ) -> SystemRun:
        """One system: its ranked ``found`` items graded against each question's key and
        scored (every k above ``k_cap`` at ``k_cap``)."""
        items = scoring.grade_rankings(found, self.questions)
        self.clock.lap("grade")
        per_q = scoring.score_system(
            items,
            self.questions,
            self.config,
            None if chunked is None else chunked.items,
            k_cap,
            doc_lengths=self.doc_lengths,
        )
        self.clock.lap("score")
        self.step += 1
        return SystemRun(
            name=name,
            strategy=strategy,
            retriever=retriever.describe(),
            n_items=n_items,
            items=items,
            scores=per_q,
            k_cap=k_cap,
        )


def _hit_tuple(hit: Hit, docs: dict[str, Document]) -> tuple[str, int, int, float, int]:
    doc = docs.get(hit.doc_id)
    if doc is None:
        raise InputError(f"retrieved document {hit.doc_id!r} is not in the corpus")
    return (hit.doc_id, hit.start, hit.end, hit.score, count_words(doc.text[hit.start : hit.end]))

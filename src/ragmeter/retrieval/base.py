"""The retriever protocols: index texts once, then rank questions against them
(:class:`Retriever`), or return document spans (:class:`SpanRetriever`).

Each protocol declares its optional hooks with a default. A class that
subclasses the protocol inherits the defaults and overrides what it needs, so
callers use every hook directly and never probe for one::

    class MyRetriever(Retriever):
        name = "mine"
        unmatched_score = 0.0          # optional: the score of a text it did not match
        def index(self, texts): ...
        def rank(self, questions, k): ...
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np


@dataclass(frozen=True)
class Ranking:
    """Top-k results for a batch of questions.

    ``ids[q, r]`` is the index (into the indexed texts) of the item at rank ``r``
    for question ``q``; ``scores[q, r]`` its score. Rows are sorted by score,
    highest first; ties keep index order (earlier text first). Rows shorter than
    k (an index with fewer than k texts) are padded with id -1 and score -inf.
    """

    ids: np.ndarray  # (n_questions, k) int64
    scores: np.ndarray  # (n_questions, k) float64


@runtime_checkable
class Retriever(Protocol):
    """Anything that can index a list of texts and rank questions against them.

    Optional hooks, with their defaults: ``unmatched_score`` (the score at or
    below which the retriever did not match a text at all, as BM25 scores a
    text sharing no word with the question 0; ``None``: every text is a match),
    :meth:`describe`, and the run's hooks :meth:`prepare_documents`,
    :meth:`index_chunks`, :meth:`release`, :meth:`use_engine` and
    :meth:`follow_progress`.
    """

    name: str
    unmatched_score: float | None = None

    def index(self, texts: Sequence[str]) -> None:
        """Build the index over ``texts`` (replacing any earlier index)."""
        ...

    def rank(self, questions: Sequence[str], k: int) -> Ranking:
        """Return the top ``k`` indexed texts for each question."""
        ...

    def describe(self) -> dict[str, Any]:
        """What the retriever is, for the results directory (default: its name)."""
        return {"name": self.name}

    def prepare_documents(
        self, documents: Mapping[str, str], questions: Sequence[str] | None = None
    ) -> None:
        """Per-document work done once per run, while sentences are segmented
        (``{doc_id: text}``; ``questions``: the run's; BM25 tokenizes here, keeping
        their terms only). Default: none."""
        return None

    def index_chunks(
        self,
        chunks: Sequence[Any],
        documents: Mapping[str, str],
        questions: Sequence[str] | None = None,
    ) -> None:
        """Index one chunking's chunks (views into ``documents``); ``questions`` are
        the run's, for a retriever that indexes only their words. Default:
        :meth:`index` of the chunks' texts."""
        self.index([c.text for c in chunks])

    def release(self) -> None:
        """Drop the index once the system is ranked (bounds a run's memory). Default:
        nothing to drop."""
        return None

    def use_engine(self, engine: Any) -> None:
        """The run's engine, for a retriever that can spread work over its workers
        (dense encoding). Default: ignored."""
        return None

    def follow_progress(self, progress: Callable[[str, int, int], None], label: str) -> None:
        """Report long work (embedding batches) as ``progress(label, done, total)``.
        Default: nothing to report."""
        return None


def top_k(scores: np.ndarray, k: int) -> Ranking:
    """Top ``k`` columns of a (questions x texts) score matrix, ties by index.

    Stable: among equal scores the lower index ranks first, so the same inputs
    always give the same ranking.
    """
    scores = np.atleast_2d(np.asarray(scores, dtype=np.float64))
    n_q, n_items = scores.shape
    kk = min(k, n_items)
    if kk < n_items:
        # Partition on a key that breaks ties by index, then sort the head.
        part = np.argpartition(-scores, kk - 1, axis=1)[:, :kk]
        # argpartition may cut inside a tie; include every item tied with the k-th.
        kth = np.take_along_axis(scores, part, axis=1).min(axis=1, keepdims=True)
        ids = np.empty((n_q, kk), dtype=np.int64)
        for q in range(n_q):
            cand = np.flatnonzero(scores[q] >= kth[q])
            order = np.lexsort((cand, -scores[q, cand]))[:kk]
            ids[q] = cand[order]
    else:
        ids = np.argsort(-scores, axis=1, kind="stable")[:, :kk].astype(np.int64)
    top = np.take_along_axis(scores, ids, axis=1)
    if kk < k:
        pad = k - kk
        ids = np.hstack([ids, np.full((n_q, pad), -1, dtype=np.int64)])
        top = np.hstack([top, np.full((n_q, pad), -np.inf)])
    return Ranking(ids=ids, scores=top)


@dataclass(frozen=True, slots=True)
class Hit:
    """One ranked result given as a span of a document (for retrievers that
    return their own passages instead of ranking ragmeter's chunks)."""

    doc_id: str
    start: int
    end: int
    score: float
    text: str | None = None


@runtime_checkable
class SpanRetriever(Protocol):
    """A retriever that returns document spans itself (an external system, a
    run file): ragmeter grades its spans directly and does no chunking.

    Optional hooks, with their defaults: :meth:`set_documents` (handed the
    corpus before the search; default: ignored) and :meth:`describe`.
    """

    name: str

    def search(self, questions: Sequence[tuple[str, str]], k: int) -> list[list[Hit]]:
        """For each ``(question_id, question_text)``, the top ``k`` hits, best first."""
        ...

    def set_documents(self, docs: Any | Iterable[Any]) -> None:
        """The corpus (``{doc_id: text}`` or documents), given before :meth:`search`."""
        return None

    def describe(self) -> dict[str, Any]:
        """What the retriever is, for the results directory (default: its name)."""
        return {"name": self.name}

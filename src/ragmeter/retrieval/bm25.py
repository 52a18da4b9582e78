"""BM25 over chunk texts with the bm25s library: no model, no network."""

from __future__ import annotations

from collections.abc import Sequence

import bm25s
import numpy as np

from ragmeter.retrieval.base import Ranking, Retriever, top_k


class BM25Retriever(Retriever):
    """Lexical BM25 (Lucene variant) with English stop words removed.

    Scores every indexed text for each question and breaks score ties by
    index order, so rankings are reproducible. A text sharing no word with the
    question scores 0 (``unmatched_score``).
    """

    unmatched_score = 0.0

    def __init__(
        self, name: str = "bm25", k1: float = 1.5, b: float = 0.75, stopwords: str | None = "en"
    ) -> None:
        self.name = name
        self.k1 = k1
        self.b = b
        self.stopwords = stopwords
        self._model: bm25s.BM25 | None = None
        self._n = 0

    def describe(self) -> dict:
        return {
            "name": self.name,
            "kind": "bm25",
            "k1": self.k1,
            "b": self.b,
            "stopwords": self.stopwords,
            "library": f"bm25s {bm25s.__version__}",
        }

    def index(self, texts: Sequence[str]) -> None:
        tokens = bm25s.tokenize(list(texts), stopwords=self.stopwords, show_progress=False)
        model = bm25s.BM25(k1=self.k1, b=self.b)
        model.index(tokens, show_progress=False)
        self._model = model
        self._n = len(texts)

    def rank(self, questions: Sequence[str], k: int) -> Ranking:
        if self._model is None:
            raise RuntimeError("index() must be called before rank()")
        queries = bm25s.tokenize(
            list(questions), stopwords=self.stopwords, return_ids=False, show_progress=False
        )
        scores = np.empty((len(queries), self._n), dtype=np.float64)
        for i, q in enumerate(queries):
            scores[i] = self._model.get_scores(q) if q else 0.0
        return top_k(scores, k)

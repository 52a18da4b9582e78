"""Retrievers behind one protocol: index texts, rank questions."""

from ragmeter.retrieval.base import Ranking, Retriever, top_k

__all__ = ["Ranking", "Retriever", "top_k"]

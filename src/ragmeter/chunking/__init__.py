"""How documents are cut: the chunk type (offsets into the document), the built-in strategies,
other frameworks' splitters, and sentence segmentation with its cache.

Public names, imported on first use::

    types:        Chunk, Chunking
    strategies:   STRATEGIES, make_strategy, chunk_corpus, WholeStrategy, FixedStrategy,
                  OverlapStrategy, SentenceStrategy, RecursiveStrategy, ParentChildStrategy
    frameworks:   ExternalStrategy, locate_chunks
"""

from __future__ import annotations

from ragmeter._compat import lazy_getattr

_LAZY = {
    "Chunk": "ragmeter.chunking.types",
    "Chunking": "ragmeter.chunking.types",
    "STRATEGIES": "ragmeter.chunking.strategies",
    "make_strategy": "ragmeter.chunking.strategies",
    "chunk_corpus": "ragmeter.chunking.strategies",
    "WholeStrategy": "ragmeter.chunking.strategies",
    "FixedStrategy": "ragmeter.chunking.strategies",
    "OverlapStrategy": "ragmeter.chunking.strategies",
    "SentenceStrategy": "ragmeter.chunking.strategies",
    "RecursiveStrategy": "ragmeter.chunking.strategies",
    "ParentChildStrategy": "ragmeter.chunking.strategies",
    "ExternalStrategy": "ragmeter.chunking.frameworks",
    "locate_chunks": "ragmeter.chunking.frameworks",
}
__all__ = sorted(_LAZY)


__getattr__ = lazy_getattr(__name__, _LAZY)

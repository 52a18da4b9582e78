"""Chunking strategies. Each chunk keeps exact character offsets into its document.

(interface; implementation in progress)
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Chunk:
    """A span of one document: ``doc.text[start:end] == text``."""

    doc_id: str
    start: int
    end: int
    text: str
    parent: int | None = None  # index into Chunking.parents (parent-child strategies)


@dataclass(frozen=True)
class Chunking:
    """What a strategy made of a corpus.

    ``chunks`` are what the retriever indexes and matches. ``parents`` is set for
    parent-child strategies: then the items returned to the reader are the parents,
    and ``chunk.parent`` says which parent each chunk belongs to.
    """

    strategy: str
    chunks: list[Chunk]
    parents: list[Chunk] | None = None

    @property
    def items(self) -> list[Chunk]:
        """What a search returns: parents when present, else the chunks."""
        return self.parents if self.parents is not None else self.chunks

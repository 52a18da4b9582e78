"""What chunking makes: :class:`Chunk` (a span of one document) and :class:`Chunking`.

These types sit below both :mod:`ragmeter.chunking.strategies` (the built-in strategies) and
:mod:`ragmeter.chunking.frameworks` (chunkers from outside ragmeter), so neither imports the other
for them. Every name here is importable from :mod:`ragmeter.chunking.strategies` too.
"""

from __future__ import annotations

from dataclasses import FrozenInstanceError, dataclass
from typing import Protocol


class Chunk:
    """A span of one document: ``doc.text[start:end] == text``.

    ``Chunk(doc_id, start, end, text, parent=None)`` holds the text it is given.
    :meth:`span` makes a view instead: it keeps a reference to the document's text and
    slices it when ``text`` is read, so a chunk costs a couple of hundred bytes at most, not
    a copy of its text (every built-in strategy makes views). Both kinds compare, hash and
    pickle alike; chunks are immutable.
    """

    __slots__ = ("doc_id", "start", "end", "parent", "_text", "_source")

    doc_id: str
    start: int
    end: int
    parent: int | None  # index into Chunking.parents (parent-child strategies)

    def __init__(
        self, doc_id: str, start: int, end: int, text: str, parent: int | None = None
    ) -> None:
        self._fill(doc_id, start, end, parent, text, None)

    @classmethod
    def span(
        cls, doc_id: str, document: str, start: int, end: int, parent: int | None = None
    ) -> Chunk:
        """The chunk ``document[start:end]`` of document ``doc_id``, as a view."""
        chunk = cls.__new__(cls)
        chunk._fill(doc_id, start, end, parent, None, document)
        return chunk

    def _fill(self, *values: object) -> None:
        """Set every slot, in ``__slots__`` order (chunks refuse ``setattr`` otherwise)."""
        for name, value in zip(self.__slots__, values, strict=True):
            object.__setattr__(self, name, value)

    @property
    def text(self) -> str:
        text = self._text
        return text if text is not None else self._source[self.start : self.end]

    def is_span_of(self, document: str) -> bool:
        """Whether this chunk is a view of ``document`` (its text is then, by construction,
        ``document[start:end]``)."""
        return self._source is document

    def _key(self) -> tuple:
        return (self.doc_id, self.start, self.end, self.text, self.parent)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._key() == other._key()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return (
            f"Chunk(doc_id={self.doc_id!r}, start={self.start!r}, end={self.end!r}, "
            f"text={self.text!r}, parent={self.parent!r})"
        )

    def __reduce__(self) -> tuple:
        return (Chunk, (self.doc_id, self.start, self.end, self.text, self.parent))

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")


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


# --------------------------------------------------------------------------- documents


class HasText(Protocol):
    """Anything with an ``id`` and a ``text`` (``ragmeter.inputs.corpus.Document`` is one)."""

    @property
    def id(self) -> str: ...

    @property
    def text(self) -> str: ...

"""Relevance grades from character spans.

Terms
-----
An *item* is a retrieved piece of text named by ``(doc_id, start, end)``: the
characters ``start, start + 1, ..., end - 1`` of document ``doc_id`` (``end`` is
exclusive, ``0 <= start <= end``). Any object with ``doc_id``, ``start`` and ``end``
attributes (such as :class:`ragmeter.chunking.strategies.Chunk`) is accepted as an item too.

A question's *answer key* is a non-empty list of *answer spans*
``(doc_id, start, end)`` with ``0 <= start < end``: together they are the
answering passage. A key usually holds one span; Chroma's questions hold up to 5,
possibly in different documents.

Grade of an item against an answer key
--------------------------------------
* **2** -- the item holds the whole answering passage: *every* answer span lies
  wholly inside the item, that is for each span ``s``:
  ``s.doc_id == item.doc_id and item.start <= s.start and s.end <= item.end``.
  (So an item can only get 2 when all spans are in its document.)
* **1** -- the item holds part of the passage: it is not grade 2, and it shares at
  least one character with at least one answer span, that is for some span ``s``:
  ``s.doc_id == item.doc_id and min(item.end, s.end) - max(item.start, s.start) > 0``.
  Touching is not sharing: an item that ends where a span starts gets 0.
* **0** -- otherwise.

Coverage
--------
``coverage(items, spans)`` is the share of the answer characters that lie inside
the items: ``|A intersect I| / |A|``, where ``A`` is the set of characters
``(doc_id, position)`` of the union of the answer spans (overlapping spans are
counted once) and ``I`` is the set of characters of the union of the items
(overlapping or repeated items are counted once). This is the character-level
recall of Chroma's chunking evaluation. ``coverage@k`` is the coverage of the top
``k`` items (all items when fewer than ``k`` were returned); it never decreases
with ``k``.

"Any of" keys and document-level keys
-------------------------------------
An *any of* key lists alternative spans (SQuAD's annotators): an item's grade is
the best grade it gets against any one alternative, each graded as above.
A *document-level* key (qrels) grades documents ``{doc_id: grade}``: an item
carries its document's grade, whatever part of the document it holds (negative
grades count as 0). Several items of one relevant document are each relevant;
recall counts each relevant document once (:func:`found_units`).

Ideal grades over the index
---------------------------
``ideal_grades(all_items, spans)`` is the list of grades, sorted from high to low,
of every item in the index whose grade is not 0 (an item listed twice in the index
counts twice). nDCG may use it as the best ranking the whole index allows.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from ragmeter.errors import InputError
from ragmeter.scoring.names import check_ks

__all__ = [
    "Span",
    "SpanIndex",
    "coverage",
    "coverage_curve",
    "found_units",
    "grade",
    "grade_any",
    "grade_documents",
    "grade_ranking",
    "ideal_grades",
]

Span = tuple[str, int, int]
"""``(doc_id, start, end)``: characters ``start`` to ``end - 1`` of one document."""


# ---------------------------------------------------------------------------
# input checks


def _triple(x: Any, what: str) -> Span:
    """``(doc_id, start, end)`` from a tuple or an object with those attributes."""
    if hasattr(x, "doc_id") and hasattr(x, "start") and hasattr(x, "end"):
        doc, start, end = x.doc_id, x.start, x.end
    else:
        try:
            doc, start, end = x
        except (TypeError, ValueError):
            raise InputError(
                f"{what} {x!r} is not (doc_id, start, end): give a document id and two offsets"
            ) from None
    try:
        start = operator.index(start)
        end = operator.index(end)
    except TypeError:
        raise InputError(
            f"{what} {x!r} has offsets that are not whole numbers: use integer offsets"
        ) from None
    return str(doc), start, end


def _item(x: Any) -> Span:
    doc, start, end = _triple(x, "item")
    if start < 0 or end < start:
        raise InputError(f"item {x!r} needs 0 <= start <= end (end is exclusive)")
    return doc, start, end


def _spans(spans: Iterable[Any]) -> list[Span]:
    if isinstance(spans, str | bytes):
        raise InputError("answer key must be a list of (doc_id, start, end) spans")
    try:
        out = [_triple(s, "answer span") for s in spans]
    except TypeError:
        raise InputError("answer key must be a list of (doc_id, start, end) spans") from None
    if not out:
        raise InputError("answer key is empty: a question needs at least one answer span")
    for s in out:
        if s[1] < 0 or s[2] <= s[1]:
            raise InputError(
                f"answer span {s!r} needs 0 <= start < end (end is exclusive, span not empty)"
            )
    return out


# ---------------------------------------------------------------------------
# grades


def _grade(doc: str, start: int, end: int, spans: list[Span]) -> int:
    if all(sd == doc and start <= ss and se <= end for sd, ss, se in spans):
        return 2
    for sd, ss, se in spans:
        if sd == doc and min(end, se) > max(start, ss):
            return 1
    return 0


def grade(item: Any, spans: Iterable[Any]) -> int:
    """Grade of one item against one answer key: 2, 1 or 0 (see the module docs)."""
    doc, start, end = _item(item)
    return _grade(doc, start, end, _spans(spans))


def grade_ranking(items: Sequence[Any], spans: Iterable[Any]) -> np.ndarray:
    """Grades of a ranked list of items, in rank order, as an ``int8`` array."""
    sp = _spans(spans)
    out = np.zeros(len(items), dtype=np.int8)
    for i, it in enumerate(items):
        out[i] = _grade(*_item(it), sp)
    return out


def grade_any(items: Sequence[Any], alternatives: Iterable[Any]) -> np.ndarray:
    """Grades against an "any of" key: the best grade over the alternative spans."""
    alts = _spans(alternatives)
    out = np.zeros(len(items), dtype=np.int8)
    for i, it in enumerate(items):
        doc, start, end = _item(it)
        out[i] = max(_grade(doc, start, end, [a]) for a in alts)
    return out


def grade_documents(items: Sequence[Any], judged: dict[str, int]) -> np.ndarray:
    """Grades against a document-level key: each item carries its document's grade."""
    out = np.zeros(len(items), dtype=np.int64)
    for i, it in enumerate(items):
        out[i] = max(int(judged.get(_item(it)[0], 0)), 0)
    return out


def found_units(
    items: Sequence[Any], grades: Sequence[int], level: int, by_document: bool
) -> np.ndarray:
    """Distinct relevant units among the top ``j + 1`` items, for each ``j``.

    With ``by_document`` each relevant document is a unit, however many of its
    items come back; otherwise the key is one unit, found at the first relevant item.
    """
    out = np.zeros(len(items), dtype=np.int64)
    seen: set[str] = set()
    count = 0
    for j, (it, g) in enumerate(zip(items, grades, strict=True)):
        if g >= level:
            if by_document:
                doc = _item(it)[0]
                if doc not in seen:
                    seen.add(doc)
                    count += 1
            else:
                count = 1
        out[j] = count
    return out


# ---------------------------------------------------------------------------
# coverage


def _merge(spans: list[Span]) -> dict[str, list[tuple[int, int]]]:
    """Union of spans per document, as sorted disjoint ``[start, end)`` intervals."""
    by_doc: dict[str, list[tuple[int, int]]] = {}
    for doc, start, end in spans:
        by_doc.setdefault(doc, []).append((start, end))
    merged: dict[str, list[tuple[int, int]]] = {}
    for doc, ivs in by_doc.items():
        ivs.sort()
        out: list[list[int]] = []
        for start, end in ivs:
            if out and start <= out[-1][1]:
                out[-1][1] = max(out[-1][1], end)
            else:
                out.append([start, end])
        merged[doc] = [(a, b) for a, b in out]
    return merged


def coverage_curve(items: Sequence[Any], spans: Iterable[Any], ks: Iterable[int]) -> np.ndarray:
    """``coverage@k`` for each ``k`` in ``ks``, as a float64 array in the order of ``ks``.

    Computed by walking the ranking once and counting the answer characters each
    item adds, so the curve never decreases with ``k`` (for increasing ``ks``).
    """
    sp = _spans(spans)
    cutoffs = check_ks(ks)
    merged = _merge(sp)
    # Lay the answer characters out side by side in one mask; remember where
    # each merged interval begins in it.
    offsets: dict[str, list[tuple[int, int, int]]] = {}
    total = 0
    for doc, ivs in merged.items():
        offsets[doc] = []
        for start, end in ivs:
            offsets[doc].append((start, end, total))
            total += end - start
    covered = np.zeros(total, dtype=bool)
    depth = min(len(items), max(cutoffs))
    counts = np.zeros(depth + 1, dtype=np.int64)  # counts[j]: answer chars in the top j
    n = 0
    for j in range(depth):
        doc, start, end = _item(items[j])
        for a, b, off in offsets.get(doc, ()):
            lo, hi = max(start, a), min(end, b)
            if hi > lo:
                piece = covered[off + lo - a : off + hi - a]
                n += piece.size - int(np.count_nonzero(piece))
                piece[:] = True
        counts[j + 1] = n
    return np.array([counts[min(k, depth)] / total for k in cutoffs], dtype=np.float64)


def coverage(items: Sequence[Any], spans: Iterable[Any]) -> float:
    """Share of the answer characters inside the union of ``items`` (0.0 to 1.0)."""
    return float(coverage_curve(items, spans, [max(len(items), 1)])[0])


# ---------------------------------------------------------------------------
# index-wide ideal


class SpanIndex:
    """Every item of an index, grouped by document and sorted by start.

    Build it once per index; :meth:`nonzero` and :meth:`ideal_grades` then look
    only at the items of the answer's documents whose start lies in a window
    around the answer (``searchsorted`` on the sorted starts).
    """

    def __init__(self, items: Iterable[Any]) -> None:
        rows: dict[str, list[tuple[int, int, int]]] = {}
        n = 0
        for i, it in enumerate(items):
            doc, start, end = _item(it)
            rows.setdefault(doc, []).append((start, end, i))
            n = i + 1
        self._n = n
        # doc -> (starts, ends, positions, longest item length)
        self._docs: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray, int]] = {}
        for doc, r in rows.items():
            arr = np.array(r, dtype=np.int64).reshape(-1, 3)
            order = np.argsort(arr[:, 0], kind="stable")
            arr = arr[order]
            longest = int((arr[:, 1] - arr[:, 0]).max())
            self._docs[doc] = (arr[:, 0].copy(), arr[:, 1].copy(), arr[:, 2].copy(), longest)

    def __len__(self) -> int:
        return self._n

    def nonzero(self, spans: Iterable[Any]) -> tuple[np.ndarray, np.ndarray]:
        """Items with a grade above 0: their positions in the index (ascending,
        ``int64``) and their grades (``int8``)."""
        sp = _spans(spans)
        by_doc: dict[str, list[tuple[int, int]]] = {}
        for doc, start, end in sp:
            by_doc.setdefault(doc, []).append((start, end))
        whole_possible = len(by_doc) == 1
        found_pos: list[np.ndarray] = []
        found_grade: list[np.ndarray] = []
        for doc, ivs in by_doc.items():
            entry = self._docs.get(doc)
            if entry is None:
                continue
            starts, ends, pos, longest = entry
            lo = min(a for a, _ in ivs)
            hi = max(b for _, b in ivs)
            # An item overlapping [a, b) starts before b and ends after a, so it
            # starts after a - longest: only that window of starts can match.
            i0 = int(np.searchsorted(starts, lo - longest, side="left"))
            i1 = int(np.searchsorted(starts, hi, side="left"))
            st, en = starts[i0:i1], ends[i0:i1]
            hit = np.zeros(st.shape, dtype=bool)
            for a, b in ivs:
                hit |= np.minimum(en, b) > np.maximum(st, a)
            g = hit.astype(np.int8)
            if whole_possible:
                g[(st <= lo) & (en >= hi)] = 2
            keep = g > 0
            found_pos.append(pos[i0:i1][keep])
            found_grade.append(g[keep])
        if not found_pos:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int8)
        p = np.concatenate(found_pos)
        g = np.concatenate(found_grade)
        order = np.argsort(p, kind="stable")
        return p[order], g[order]

    def ideal_grades(self, spans: Iterable[Any]) -> np.ndarray:
        """Grades above 0 of every item in the index, sorted high to low (``int8``)."""
        _, g = self.nonzero(spans)
        return np.sort(g)[::-1].copy()


def ideal_grades(all_items: SpanIndex | Iterable[Any], spans: Iterable[Any]) -> np.ndarray:
    """Grades above 0 of every item in the index, sorted high to low (``int8``).

    ``all_items`` is the whole index, or a :class:`SpanIndex` built from it; pass
    the :class:`SpanIndex` when grading many questions, so it is built only once.
    """
    index = all_items if isinstance(all_items, SpanIndex) else SpanIndex(all_items)
    return index.ideal_grades(spans)

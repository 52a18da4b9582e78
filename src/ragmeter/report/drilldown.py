"""The report's drill-down: each question's ranked items, and of each document only the
parts the drill-down shows (spans merged, offsets counted as the browser counts them)."""

from __future__ import annotations

import numpy as np

from ragmeter.report.common import DRILLDOWN_RANKINGS, _r
from ragmeter.runs.results import Results


class _Utf16:
    """Python (code point) offsets to JavaScript (UTF-16 code unit) offsets, per text."""

    def __init__(self, text: str) -> None:
        self.prefix: np.ndarray | None = None
        if len(text.encode("utf-16-le")) != 2 * len(text):
            astral = np.fromiter((ord(ch) > 0xFFFF for ch in text), dtype=np.int64, count=len(text))
            self.prefix = np.concatenate([[0], np.cumsum(astral)])

    def __call__(self, i: int) -> int:
        return int(i) if self.prefix is None else int(i + self.prefix[i])


def drilldown_budget(budget: int | None = None) -> int:
    """The rankings the drill-down holds at most: ``budget``, else
    :data:`DRILLDOWN_RANKINGS`."""
    return DRILLDOWN_RANKINGS if budget is None else budget


def shown_questions(results: Results, metric: str, budget: int | None = None) -> list[int]:
    """Which questions the drill-down shows, by number, in the results' order: all of
    them when questions x systems is at most ``budget`` (:data:`DRILLDOWN_RANKINGS`);
    else the ``budget // systems`` (at least one) on which the systems' ``metric``
    scores spread most, earlier ones first among equals."""
    budget = drilldown_budget(budget)
    n = len(results.question_ids)
    keep = max(1, budget // max(1, len(results.systems)))
    if n <= keep:
        return list(range(n))
    scores = results.matrix(metric)
    spread = scores.max(axis=0) - scores.min(axis=0)
    chosen = np.argsort(-spread, kind="stable")[:keep]
    return sorted(int(i) for i in chosen)


def drilldown_note(
    shown: int, questions: int, metric: str, budget: int | None = None
) -> str | None:
    """The page's line on a drill-down that holds only some questions (None when it holds
    every one)."""
    if shown >= questions:
        return None
    budget = drilldown_budget(budget)
    return (
        f"The page holds {shown:,} of the {questions:,} questions (at most "
        f"{budget:,} rankings, questions x systems): those on which the systems' "
        f"{metric} differs most. Every question's scores are in the results' scores.json."
    )


def drilldown(
    results: Results, metric: str, hit_metric: str, top: int, budget: int | None = None
) -> tuple[list[dict], list[dict]]:
    """Documents (once each) and per-question records pointing into them by index, for
    the questions :func:`shown_questions` picks.

    A document is embedded only as the parts the page shows (the shown items' spans,
    overlapping ones merged): ``parts`` holds ``[start, text]`` pairs in UTF-16 offsets, so
    the page's size follows the questions shown, not the corpus. Only the shown questions'
    rankings and documents are read.
    """
    systems = results.systems
    picked = shown_questions(results, metric, budget)
    questions = results.questions
    runs = results.rankings([questions[i].id for i in picked])
    needed = {a.doc for i in picked for a in questions[i].answers}
    needed |= {it.doc for per in runs.values() for row in per.values() for it in row[:top]}
    texts = results.document_texts(needed)
    doc_index: dict[str, int] = {}
    doc_ids: list[str] = []
    offsets: dict[str, _Utf16] = {}
    shown: dict[str, list[tuple[int, int]]] = {}

    def ref(doc: str) -> int:
        if doc not in doc_index:
            doc_index[doc] = len(doc_ids)
            doc_ids.append(doc)
            offsets[doc] = _Utf16(texts.get(doc, ""))
            shown[doc] = []
        return doc_index[doc]

    main = {s: results.scores(s, metric) for s in systems}
    hits = {s: results.scores(s, hit_metric) for s in systems}
    out = []
    for i in picked:
        q = questions[i]
        answers = []
        for a in q.answers:
            d = ref(a.doc)
            conv = offsets[a.doc]
            answers.append([d, conv(a.start), conv(a.end), a.text])
        items = []
        for s in systems:
            row = []
            for it in runs.get(s, {}).get(q.id, [])[:top]:
                d = ref(it.doc)
                conv = offsets[it.doc]
                shown[it.doc].append((it.start, it.end))
                row.append(
                    [
                        d,
                        conv(it.start),
                        conv(it.end),
                        int(it.grade),
                        int(it.words),
                        round(float(it.score), 4),
                    ]
                )
            items.append(row)
        out.append(
            {
                "id": q.id,
                "text": q.text,
                "answers": answers,
                "score": [_r(main[s][i]) for s in systems],
                "hit": [1 if hits[s][i] > 0 else 0 for s in systems],
                "items": items,
            }
        )
    docs = []
    for doc in doc_ids:
        text, conv = texts.get(doc, ""), offsets[doc]
        docs.append({"id": doc, "parts": [[conv(a), text[a:b]] for a, b in _merged(shown[doc])]})
    return docs, out


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``spans`` sorted, with overlapping or touching ones joined."""
    out: list[list[int]] = []
    for a, b in sorted(spans):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return [(a, b) for a, b in out]


# --------------------------------------------------------------------------- route diagram

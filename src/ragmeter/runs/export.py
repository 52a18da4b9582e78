"""TREC run and qrels files from a results directory, for trec_eval, ranx or
ir_measures (no search is re-run), and the round trip that checks them.

Files. :func:`export_files` writes ``run.SYSTEM.txt`` for every system exported (given
``run.txt``), and ``qrels.SYSTEM.txt`` beside each run: every item that system returned
(``doc#start-end``), graded as the search graded it. With ``documents`` the items are
documents and the qrels is one file, the answer key's documents (the same for every
system), each graded as the search grades an item holding the whole document. A merged
qrels is one file for every system exported (:func:`merged_judgments`): the union of the
systems' judged items, each at its one grade, for tools that score many runs against one
qrels (``ranx.compare``, ``ir_measures``).

Round trip. The run's scores are the retriever's
(:func:`ragmeter.retrieval.trec.ordered_scores` lowers a tied score one 32-bit step so
that every tool keeps ragmeter's order), or ``n - rank + 1`` for a system whose scores do
not fall along its ranking. :func:`export_files` then scores what it wrote as ``ragmeter
evaluate`` would (:func:`ragmeter.scoring.trec.evaluate_run` at the search's relevance
level, gain and ideal) and compares every measure, question by question, with the
search's own scores: :attr:`Export.differs` names the measures that do not carry over.
``ragmeter export`` is this module plus the lines it prints.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ragmeter.errors import InputError, did_you_mean
from ragmeter.files.outputs import check_not_inputs, check_output_file, results_inputs
from ragmeter.inputs.testset import Question
from ragmeter.retrieval.trec import ordered_scores, write_qrels, write_run
from ragmeter.runs.results import Results
from ragmeter.scoring.measurement import relevance_level_of
from ragmeter.scoring.metrics import Metric
from ragmeter.scoring.names import table
from ragmeter.scoring.trec import Qrels, Run, evaluate_run

__all__ = [
    "NOT_IN_TREC",
    "TOLERANCE",
    "Export",
    "doc_id",
    "export_files",
    "export_trec",
    "item_id",
    "merged_judgments",
    "not_in_trec",
    "run_paths",
    "system_path",
]


def not_in_trec() -> tuple[str, ...]:
    """Families a TREC file cannot carry, read from the family table: those trec_eval has
    no measure for (character overlap with the answer, words sent)."""
    return tuple(f.name for f in table().rows if f.trec_cut is None and f.trec_whole is None)


NOT_IN_TREC = not_in_trec()
""":func:`not_in_trec` as the table stood at import (the export calls the function)."""

TOLERANCE = 1e-9
"""How far an evaluated score may be from the search's and still count as the same."""

Ranked = dict[str, list[tuple[str, float]]]
Judged = dict[str, dict[str, int]]


def item_id(doc: str, start: int, end: int) -> str:
    """``doc#start-end`` (whitespace in a document id becomes ``_``: TREC ids have none)."""
    return f"{doc_id(doc)}#{start}-{end}"


def doc_id(doc: str) -> str:
    return re.sub(r"\s", "_", doc)


def _safe(name: str) -> str:
    return re.sub(r"[^\w.+-]", "_", name)


def system_path(path: Path, system: str) -> Path:
    """``run.txt`` -> ``run.SYSTEM.txt`` (the system's name made safe for a file name)."""
    return path.with_name(f"{path.stem}.{_safe(system)}{path.suffix}")


def run_paths(run: Path, systems: list[str]) -> dict[str, Path]:
    """One run file per system, ``STEM.SYSTEM.SUFFIX``, however many systems."""
    return {s: system_path(run, s) for s in systems}


@dataclass
class Export:
    """What :func:`export_files` wrote and how its files score against the search."""

    paths: list[Path]
    runs: dict[str, Path]  # system -> its run file
    qrels: dict[str, Path]  # system -> the qrels to evaluate its run with
    level: int  # the search's relevance level: ``evaluate --level``
    gain: str  # its nDCG gain: ``evaluate --gain``
    ideal: str  # the nDCG ideal that reproduces it: ``evaluate --ideal``
    documents: bool
    rank_scores: list[str] = field(default_factory=list)  # systems written n - rank + 1
    lowered: dict[str, int] = field(default_factory=dict)  # system -> tied scores lowered
    measures: list[str] = field(default_factory=list)  # the search's measures a run can carry
    differs: dict[str, list[str]] = field(default_factory=dict)  # system -> measures not equal
    several: dict[str, int] = field(default_factory=dict)  # system -> questions, see _several

    document_keys: bool = False  # the search was keyed by documents (qrels)
    search_ideal: str = "returned"  # the search's nDCG ideal
    from_runs: bool = False  # results of ``ragmeter evaluate``: top documents only
    k_cap: dict[str, int] = field(default_factory=dict)  # system -> items, when fewer than a k
    run_base: Path | None = None  # --run as given
    qrels_base: Path | None = None  # --qrels as given
    merged: Path | None = None  # --merged-qrels as written
    merged_differs: dict[str, list[str]] = field(default_factory=dict)  # against it

    def evaluate_command(self) -> str:
        """The ``ragmeter evaluate`` command that reproduces the search (``SYSTEM`` in
        the file names when there are several)."""
        name = next(iter(self.differs)) if len(self.differs) == 1 else "SYSTEM"
        run = system_path(self.run_base, name) if self.run_base else Path("RUN")
        qrels = self.qrels_base or Path("QRELS")
        if self.qrels_base and not self.documents:
            qrels = system_path(self.qrels_base, name)
        flags = [f"--level {self.level}"] if self.level != 1 else []
        flags += ["--gain linear"] if self.gain == "linear" else []
        flags += ["--ideal returned"] if self.ideal == "returned" else []
        return " ".join(["ragmeter evaluate", str(run), "--qrels", str(qrels), *flags])


def export_trec(
    results: Path,
    run: Path | None,
    qrels: Path | None,
    systems: list[str] | None = None,
    documents: bool = False,
    merged_qrels: Path | None = None,
) -> list[Path]:
    """Write the run file(s) and the qrels (:func:`export_files`); return the paths written."""
    return export_files(results, run, qrels, systems, documents, merged_qrels).paths


def export_files(
    results: str | Path,
    run: Path | None,
    qrels: Path | None,
    systems: Sequence[str] | None = None,
    documents: bool = False,
    merged_qrels: Path | None = None,
) -> Export:
    """Write ``STEM.SYSTEM.SUFFIX`` run files and the qrels (see the module docstring),
    then score them against the search; nothing is written when any target is refused
    (nor when two systems grade one item differently, see :func:`merged_judgments`).

    Span items are judged per system: every item the system returned, at the grade the
    search gave it (2 holds the whole answer passage, 1 part of it; a document-level
    key's grade for any part of a relevant document). With ``documents``, items are
    documents (each at its best item's rank) judged from the answer key, for every
    system alike. Any of ``run``, ``qrels`` and ``merged_qrels`` may be None (not
    written); the round trip is scored all the same.
    """
    res = Results(results)
    chosen = _chosen(res, systems)
    runs = run_paths(run, chosen) if run is not None else {}
    if qrels is None:
        qrels_at: dict[str, Path] = {}
    elif documents:
        qrels_at = {s: qrels for s in chosen}
    else:
        qrels_at = run_paths(qrels, chosen)
    _check_targets(res, _targets(runs, qrels_at, merged_qrels), _given(run, qrels, merged_qrels))
    shared = _document_judgments(res.questions) if documents else None
    merged = None
    if merged_qrels is not None:
        merged = shared if shared is not None else merged_judgments(res, chosen)
    out = _settings(res, runs, qrels_at, documents)
    out.run_base, out.qrels_base, out.merged = run, qrels, merged_qrels
    if merged_qrels is not None and merged is not None:
        write_qrels(merged_qrels, merged)
        out.paths.append(merged_qrels)
    for system in chosen:
        _export_system(res, system, out, shared, merged)
    return out


def _chosen(res: Results, systems: Sequence[str] | None) -> list[str]:
    """The systems to export (default: every one), each checked against the run's."""
    chosen = list(systems or res.systems)
    for s in chosen:
        if s not in res.systems:
            raise InputError(
                f"unknown system {s!r}{did_you_mean(s, res.systems)}; choose one of {res.systems}"
            )
    return chosen


def _targets(
    runs: dict[str, Path], qrels_at: dict[str, Path], merged_qrels: Path | None
) -> list[tuple[Path, str]]:
    """Every file to write, with the flag that named it (one shared qrels once)."""
    targets = [(p, "--run") for p in runs.values()]
    targets += [(p, "--qrels") for p in dict.fromkeys(qrels_at.values())]
    targets += [(merged_qrels, "--merged-qrels")] if merged_qrels is not None else []
    return targets


def _given(
    run: Path | None, qrels: Path | None, merged_qrels: Path | None
) -> list[tuple[Path, str]]:
    """The paths as given, with their flags."""
    named = ((run, "--run"), (qrels, "--qrels"), (merged_qrels, "--merged-qrels"))
    return [(p, flag) for p, flag in named if p is not None]


def _settings(
    res: Results, runs: dict[str, Path], qrels_at: dict[str, Path], documents: bool
) -> Export:
    """An :class:`Export` with nothing written yet: the search's level, gain and
    ideal, the measures a TREC file can carry, and what explains a difference."""
    ideal = res.meta.ideal or "returned"  # a run that recorded none scored the default
    systems = res.meta.get("systems", [])
    return Export(
        paths=[],
        runs=runs,
        qrels=qrels_at,
        level=relevance_level_of(res.meta),
        gain=res.meta.gain or "exponential",
        # a system's own judgments hold exactly what it returned: their ideal is the returned one
        ideal=("returned" if ideal == "returned" else "judged") if documents else "judged",
        documents=documents,
        measures=[m for m in res.metrics if Metric.parse(m).family not in not_in_trec()],
        document_keys=any(q.qrels for q in res.questions),
        search_ideal=ideal,
        from_runs=any(
            isinstance(s.get("retriever"), dict) and s["retriever"].get("kind") == "run"
            for s in systems
        ),
        k_cap={str(s["name"]): int(s["k_cap"]) for s in systems if "k_cap" in s},
    )


def _export_system(
    res: Results, system: str, out: Export, shared: Judged | None, merged: Judged | None
) -> None:
    """Write one system's run and qrels (where asked for) and record its round trip
    in ``out``."""
    written, lowered = _scored(_ranked(res, system, out.documents))
    if lowered is None:
        out.rank_scores.append(system)
    elif lowered:
        out.lowered[system] = lowered
    judged = shared if shared is not None else _item_judgments(res, system)
    out.several[system] = _several(res, system, out.documents, out.level)
    if system in out.runs:
        write_run(out.runs[system], written, tag=_safe(system))
        out.paths.append(out.runs[system])
    if system in out.qrels and out.qrels[system] not in out.paths:
        write_qrels(out.qrels[system], judged)
        out.paths.append(out.qrels[system])
    out.differs[system] = _round_trip(res, system, written, judged, out)
    if merged is not None:
        out.merged_differs[system] = _round_trip(res, system, written, merged, out)


def _ranked(res: Results, system: str, documents: bool) -> Ranked:
    """Each question's items as TREC ids with the retriever's scores, best first; with
    ``documents``, each document once, at its first (best) item."""
    ranked: Ranked = {}
    for qid, items in res.runs[system].items():
        rows: list[tuple[str, float]] = []
        seen: set[str] = set()
        for it in items:
            name = doc_id(it.doc) if documents else item_id(it.doc, it.start, it.end)
            if name not in seen:
                seen.add(name)
                rows.append((name, it.score))
        ranked[qid] = rows
    return ranked


def _scored(ranked: Ranked) -> tuple[Ranked, int | None]:
    """The scores to write: the retriever's, ties lowered (:func:`ordered_scores`), and
    how many were lowered; ``n - rank + 1`` everywhere, and ``None``, when in some
    question they do not fall along the ranking."""
    out: Ranked = {}
    lowered = 0
    for qid, rows in ranked.items():
        kept = ordered_scores([score for _, score in rows])
        if kept is None:
            return {
                q: [(n, float(len(r) - i)) for i, (n, _) in enumerate(r)] for q, r in ranked.items()
            }, None
        values, changed = kept
        lowered += changed
        out[qid] = [(name, v) for (name, _), v in zip(rows, values, strict=True)]
    return out, lowered


def _item_judgments(res: Results, system: str) -> Judged:
    """Every item the system returned, at the grade the search gave it (0 included: each
    question stays a judged query, as it is a scored question). A question it returned
    nothing for is judged on its key's own passages (documents, for a qrels key), which
    no run holds: it stays judged and scores 0, as in the search."""
    judged: Judged = {}
    keys = {q.id: q for q in res.questions}
    for qid, items in res.runs[system].items():
        per = judged.setdefault(qid, {})
        for it in items:
            per[item_id(it.doc, it.start, it.end)] = max(int(it.grade), 0)
        if not items and qid in keys:
            per.update(_key_items(keys[qid]))
    return judged


def merged_judgments(res: Results, systems: Sequence[str]) -> Judged:
    """One qrels for ``systems``: the union of the items they returned, each at the
    grade the search gave it. A grade is a function of the span and the answer key, so
    two systems that return one span grade it alike; when they do not (results edited
    by hand, or put together from two searches), this is an :class:`InputError` that
    names the question, the item and both grades. A question no system returned anything
    for is judged on its key's passages, as in a system's own qrels."""
    merged: Judged = {}
    by: dict[tuple[str, str], str] = {}
    for system in systems:
        for qid, items in res.runs[system].items():
            per = merged.setdefault(qid, {})
            for it in items:
                name = item_id(it.doc, it.start, it.end)
                grade = max(int(it.grade), 0)
                if name in per and per[name] != grade:
                    raise InputError(
                        f"{res.path / 'runs.jsonl'}: question {qid!r}, item {name}: graded "
                        f"{per[name]} by {by[qid, name]!r} and {grade} by {system!r}; one span "
                        "has one grade under one answer key, so these results were edited or "
                        "mixed from two searches: search again, or export without --merged-qrels"
                    )
                per[name] = grade
                by.setdefault((qid, name), system)
    keys = {q.id: q for q in res.questions}
    for qid, per in merged.items():
        if not per and qid in keys:
            per.update(_key_items(keys[qid]))
    return merged


def _key_items(q: Question) -> dict[str, int]:
    if q.qrels:
        return {doc_id(d): max(int(g), 0) for d, g in q.qrels}
    if q.any_of:
        return {item_id(a.doc, a.start, a.end): 2 for a in q.any_of}
    whole = 2 if len(q.answers) == 1 else 1
    return {item_id(a.doc, a.start, a.end): whole for a in q.answers}


def _document_judgments(questions: Sequence[Question]) -> Judged:
    """Each question's answer documents, graded as the search grades an item holding the
    whole document: 2 when it holds the whole key (every span of it, or one alternative),
    else 1; a document-level key's own grades (its zero judgments only when it has
    no relevant document, so the question stays judged)."""
    judged: Judged = {}
    for q in questions:
        if q.qrels:
            relevant = {doc_id(d): int(g) for d, g in q.qrels if g > 0}
            judged[q.id] = relevant or {doc_id(d): 0 for d, _ in q.qrels}
        elif q.any_of:
            judged[q.id] = {doc_id(a.doc): 2 for a in q.any_of}
        else:
            docs = {doc_id(a.doc) for a in q.answers}
            judged[q.id] = {d: 2 if len(docs) == 1 else 1 for d in docs}
    return judged


def _several(res: Results, system: str, documents: bool, level: int) -> int:
    """Questions where the TREC files count more than the search does: with span items,
    several returned items at the relevance level (trec counts each, the search finds
    the answer once); with documents, a document the ranking holds more than one item of."""
    n = 0
    for items in res.runs[system].values():
        if documents:
            n += len({it.doc for it in items}) < len(items)
        else:
            n += sum(it.grade >= level for it in items) > 1
    return n


def _round_trip(
    res: Results, system: str, written: Ranked, judged: Judged, ex: Export
) -> list[str]:
    """The search's measures that the written files do not reproduce for ``system``,
    scored as ``ragmeter evaluate`` scores them with ``ex``'s settings."""
    run = Run.from_dict({q: dict(rows) for q, rows in written.items()}, name=system)
    qrels = Qrels.from_dict(judged)
    ev = evaluate_run(run, qrels, ex.measures, level=ex.level, gain=ex.gain, ideal=ex.ideal)
    position = {q: i for i, q in enumerate(ev.query_ids)}
    if any(q not in position for q in res.question_ids):
        return list(ex.measures)  # a question without any judged item: not a judged query
    order = np.array([position[q] for q in res.question_ids], dtype=np.int64)
    differs = []
    for m in ex.measures:
        got = ev.scores[m][order] if ev.scores[m].size else np.zeros(0)
        want = res.scores(system, m)
        if got.shape != want.shape or not np.allclose(got, want, rtol=0.0, atol=TOLERANCE):
            differs.append(m)
    return differs


def _check_targets(
    res: Results, targets: list[tuple[Path, str]], given: list[tuple[Path, str]]
) -> None:
    """The output rule for every file to write (``(path, flag)``), before any is written;
    the paths as given may not name an input either (the test set as ``--qrels`` is a
    slip, even though ``STEM.SYSTEM.SUFFIX`` is written)."""
    inputs = results_inputs(res.path, res.meta)
    for path, flag in given:
        check_not_inputs(path, inputs, folder=False, flag=flag)
    seen: set[Path] = set()
    for target, flag in targets:
        key = target.resolve()
        if key in seen:
            raise InputError(f"{target}: would be written twice; give different file names")
        seen.add(key)
        check_output_file(target, "TREC file", inputs, flag)

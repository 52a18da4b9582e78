"""``ragmeter export``: TREC run and qrels files from a results directory, for trec_eval,
ranx or ir_measures (no search is re-run).

Files. ``--run run.txt`` writes ``run.SYSTEM.txt`` for every system exported, one or
many. ``--qrels qrels.txt`` writes ``qrels.SYSTEM.txt`` beside each run: every item
that system returned (``doc#start-end``), graded as the search graded it. With
``--documents`` the items are documents and ``--qrels`` is one file, the answer key's
documents (the same for every system), each graded as the search grades an item
holding the whole document. ``--merged-qrels qrels.txt`` writes one file for every
system exported (:func:`merged_judgments`): the union of the systems' judged items,
each at its one grade, for tools that score many runs against one qrels
(``ranx.compare``, ``ir_measures``).

Round trip. The run's scores are the retriever's (:func:`ordered_scores` lowers a tied
score one 32-bit step so that every tool keeps ragmeter's order), or ``n - rank + 1``
for a system whose scores do not fall along its ranking. :func:`export_files` then
scores what it wrote as ``ragmeter evaluate`` would (:func:`ragmeter.scoring.trec.evaluate_run`
at the search's relevance level, gain and ideal) and compares every measure, question
by question, with the search's own scores: :attr:`Export.differs` names the measures
that do not carry over, and the command prints them with the reason.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated

import numpy as np
import typer
from rich.markup import escape

from ragmeter.cli.app import app, console, handle_errors, plural
from ragmeter.errors import InputError, did_you_mean
from ragmeter.files.outputs import check_not_inputs, check_output_file, results_inputs
from ragmeter.inputs.testset import Question
from ragmeter.retrieval.trec import ordered_scores, write_qrels, write_run
from ragmeter.runs.results import Results
from ragmeter.scoring.metrics import Metric
from ragmeter.scoring.trec import Qrels, Run, evaluate_run

NOT_IN_TREC = ("coverage", "words")
"""Families a TREC file cannot carry: character overlap with the answer, words sent."""

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
    system alike.
    """
    res = Results(results)
    chosen = list(systems or res.systems)
    for s in chosen:
        if s not in res.systems:
            raise InputError(
                f"unknown system {s!r}{did_you_mean(s, res.systems)}; choose one of {res.systems}"
            )
    runs = run_paths(run, chosen) if run is not None else {}
    if qrels is None:
        qrels_at: dict[str, Path] = {}
    elif documents:
        qrels_at = {s: qrels for s in chosen}
    else:
        qrels_at = run_paths(qrels, chosen)
    targets = [(p, "--run") for p in runs.values()]
    targets += [(p, "--qrels") for p in dict.fromkeys(qrels_at.values())]
    targets += [(merged_qrels, "--merged-qrels")] if merged_qrels is not None else []
    given = [
        (p, flag)
        for p, flag in ((run, "--run"), (qrels, "--qrels"), (merged_qrels, "--merged-qrels"))
        if p is not None
    ]
    _check_targets(res, targets, given)
    shared = _document_judgments(res.questions) if documents else None
    merged = None
    if merged_qrels is not None:
        merged = shared if shared is not None else merged_judgments(res, chosen)
    measured = res.meta.get("measurement") or {}
    level = int(measured.get("relevant_grade", res.meta.get("relevant_grade", 2)))
    ideal = str(measured.get("ideal", res.meta.get("ideal", "returned")))
    out = Export(
        paths=[],
        runs=runs,
        qrels=qrels_at,
        level=level,
        gain=str(measured.get("gain", "exponential")),
        # a system's own judgments hold exactly what it returned: their ideal is the returned one
        ideal=("returned" if ideal == "returned" else "judged") if documents else "judged",
        documents=documents,
        measures=[m for m in res.metrics if Metric.parse(m).family not in NOT_IN_TREC],
        document_keys=any(q.qrels for q in res.questions),
        search_ideal=ideal,
        from_runs=any(
            isinstance(s.get("retriever"), dict) and s["retriever"].get("kind") == "run"
            for s in res.meta.get("systems", [])
        ),
        k_cap={
            str(s["name"]): int(s["k_cap"]) for s in res.meta.get("systems", []) if "k_cap" in s
        },
        run_base=run,
        qrels_base=qrels,
        merged=merged_qrels,
    )
    if merged_qrels is not None and merged is not None:
        write_qrels(merged_qrels, merged)
        out.paths.append(merged_qrels)
    for system in chosen:
        ranked = _ranked(res, system, documents)
        written, lowered = _scored(ranked)
        if lowered is None:
            out.rank_scores.append(system)
        elif lowered:
            out.lowered[system] = lowered
        judged = shared if shared is not None else _item_judgments(res, system)
        out.several[system] = _several(res, system, documents, level)
        if system in runs:
            write_run(runs[system], written, tag=_safe(system))
            out.paths.append(runs[system])
        if system in qrels_at and qrels_at[system] not in out.paths:
            write_qrels(qrels_at[system], judged)
            out.paths.append(qrels_at[system])
        out.differs[system] = _round_trip(res, system, written, judged, out)
        if merged is not None:
            out.merged_differs[system] = _round_trip(res, system, written, merged, out)
    return out


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


def _families(measures: Sequence[str], every: Sequence[str]) -> list[str]:
    """``recall@1, recall@3, map`` -> ``recall@k, map`` when those are all of ``every``'s
    recall measures; a family only partly there is listed measure by measure."""
    out: dict[str, None] = {}
    for m in measures:
        metric = Metric.parse(m)
        family = [x for x in every if Metric.parse(x).family == metric.family]
        whole = metric.k is None or all(
            x in measures for x in family if Metric.parse(x).k is not None
        )
        out[f"{metric.family}@k" if metric.k is not None and whole else m] = None
    return list(out)


def _systems(names: Sequence[str], limit: int = 4) -> str:
    shown = ", ".join(escape(n) for n in names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def round_trip_lines(ex: Export) -> list[str]:
    """What the command prints about the round trip: scores, the evaluate command, and
    which of the search's measures it reproduces, for which systems, and why not."""
    systems = list(ex.differs)
    lines = []
    if ex.runs:
        if ex.rank_scores:
            lines.append(
                f"Scores: n - rank + 1 for {_systems(ex.rank_scores)} (its scores do not fall "
                "along its ranking); the retriever's for the others."
                if len(ex.rank_scores) < len(systems)
                else "Scores: n - rank + 1 (the saved scores do not fall along the rankings)."
            )
        else:
            lowered = sum(ex.lowered.values())
            lines.append(
                "Scores: the retriever's"
                + (
                    f"; {plural(lowered, 'tied score')} lowered one 32-bit step, so that "
                    "every tool keeps ragmeter's order."
                    if lowered
                    else "."
                )
            )
    own = bool(ex.qrels) or ex.merged is None  # the per-system round trip is told
    if ex.documents:
        lines.append(
            "Judgments: each question's answer documents (2 holds the whole answer, 1 part "
            "of it; a qrels key's own grades), the same for every system."
        )
    elif own:
        lines.append(
            "Judgments: per system, every item it returned at ragmeter's grade (2 holds the "
            "whole answer passage, 1 part of it)."
        )
    if ex.merged is not None and not ex.documents:
        lines.append(
            "Merged judgments: every item any system returned, at ragmeter's grade (one "
            "span has one grade under the answer key)."
        )
    if own:
        lines.append(f"[bold]{escape(ex.evaluate_command())}[/] gives the search's numbers for:")
        lines += _carried(ex.measures, ex.differs)
        lines.append(NEVER_LINE)
        reasons = _reasons(ex)
        if reasons:
            lines.append("Why not:")
            lines += [f"  {r}" for r in reasons]
    if ex.merged is not None:
        lines.append(
            f"One qrels for every system, {escape(str(ex.merged))}: scoring each run against "
            "it (ranx.compare, ir_measures, trec_eval, ragmeter evaluate"
            + (f" --level {ex.level}" if ex.level != 1 else "")
            + ") gives the search's numbers for:"
        )
        lines += _carried(ex.measures, ex.merged_differs)
        lines.append(NEVER_LINE)
        if not ex.documents and any(ex.merged_differs.values()):
            lines.append(
                "Why not: the merged qrels pool every system's relevant items; recall, map "
                "and rprec count them all, nDCG's ideal takes the best of them, where the "
                "search scores each system on what it returned."
            )
    return lines


NEVER_LINE = (
    f"  never {', '.join(f + '@k' for f in NOT_IN_TREC)}: a TREC file holds neither "
    "the characters found nor the words sent."
)


def _carried(every: Sequence[str], differs: dict[str, list[str]]) -> list[str]:
    """One line per group of measures that carry over for the same systems."""
    systems = list(differs)
    lines = []
    by_group: dict[tuple[str, ...], list[str]] = {}
    for m in every:
        bad = tuple(s for s in systems if m in differs[s])
        by_group.setdefault(bad, []).append(m)
    for bad, measures in sorted(by_group.items(), key=lambda kv: len(kv[0])):
        names = ", ".join(_families(measures, every))
        good = [s for s in systems if s not in bad]
        if not bad:
            lines.append(f"  {names}: every system")
        elif not good:
            lines.append(f"  {names}: no system")
        elif len(bad) <= len(good):
            lines.append(f"  {names}: {len(good)} of {len(systems)} systems, not {_systems(bad)}")
        else:
            lines.append(f"  {names}: {len(good)} of {len(systems)} systems, {_systems(good)} only")
    return lines


def _reasons(ex: Export) -> list[str]:
    """Why the measures that differ differ, one line per cause that applies."""
    bad = {s: {Metric.parse(m).family for m in ms} for s, ms in ex.differs.items() if ms}
    if bad and ex.from_runs:
        return [
            "these are results of ragmeter evaluate, which keep each query's top documents "
            "only: the run files it read are the runs to use."
        ]
    out = []
    units = {"recall", "map", "rprec"}
    if ex.documents:
        n = sum(ex.several.get(s, 0) for s in bad)
        if n:
            out.append(
                f"{plural(n, 'ranking')} hold several items of one document: the search "
                "scores the items, the run lists each document once."
            )
    elif ex.document_keys and any(f & units for f in bad.values()):
        out.append(
            "recall, map, rprec: the search counts relevant documents (returned or not), "
            "the judgments count the items a system returned."
        )
    else:
        n = sum(ex.several.get(s, 0) for s, f in bad.items() if f & units)
        if n:
            out.append(
                f"recall, map, rprec: in {plural(n, 'ranking')} several items are relevant; "
                "trec counts each, the search the answer once (for a span key the search's "
                "recall@k is its hit@k, its map its mrr, and those carry over)."
            )
    if (
        not ex.documents
        and ex.search_ideal != "returned"
        and any("ndcg" in f for f in bad.values())
    ):
        out.append(
            f"ndcg: the search's ideal is {ex.search_ideal!r}; the judgments hold only what "
            "a system returned (the returned ideal)."
        )
    capped = [f"{s} ({c} items)" for s, c in ex.k_cap.items() if "precision" in bad.get(s, ())]
    if capped:
        out.append(
            f"precision@k past a system's item count, {_systems(capped)}: the search divides "
            "by the items there are, trec by k."
        )
    return out


@app.command()
@handle_errors
def export(
    results: Annotated[Path, typer.Argument(help="A results directory")],
    run: Annotated[
        Path | None,
        typer.Option(
            help="Run files, one per system: run.txt writes run.SYSTEM.txt", metavar="PATH"
        ),
    ] = None,
    qrels: Annotated[
        Path | None,
        typer.Option(
            help="Qrels to write: qrels.SYSTEM.txt per system (one file with --documents)",
            metavar="PATH",
        ),
    ] = None,
    system: Annotated[
        str | None, typer.Option(help="Comma-separated systems (default: all)", metavar="NAMES")
    ] = None,
    documents: Annotated[
        bool, typer.Option("--documents", help="Rank and judge documents instead of spans")
    ] = False,
    merged_qrels: Annotated[
        Path | None,
        typer.Option(
            "--merged-qrels",
            help="One qrels file for every system exported (for ranx.compare, ir_measures)",
            metavar="PATH",
        ),
    ] = None,
) -> None:
    """Write TREC run and qrels files from a results directory (for trec_eval, ranx...)."""
    if run is None and qrels is None and merged_qrels is None:
        raise InputError("give --run PATH, --qrels PATH or both, or --merged-qrels PATH")
    systems = [s.strip() for s in system.split(",") if s.strip()] if system else None
    ex = export_files(results, run, qrels, systems, documents, merged_qrels)
    console.print(
        f"Wrote {plural(len(ex.paths), 'file')}: " + ", ".join(escape(str(p)) for p in ex.paths)
    )
    for line in round_trip_lines(ex):
        console.print(line)

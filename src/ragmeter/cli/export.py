"""``ragmeter export``: TREC run and qrels files from a results directory, for trec_eval,
ranx or ir_measures (no search is re-run).

The files and the round trip are :mod:`ragmeter.runs.export` (:func:`export_files`);
this module parses the flags, calls it and prints what it wrote and which of the
search's measures the files reproduce, for which systems, and why not
(:func:`round_trip_lines`). Its library names still import from here.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from ragmeter.cli.app import app, console, handle_errors, plural
from ragmeter.errors import InputError
from ragmeter.runs.export import (
    NOT_IN_TREC,
    TOLERANCE,
    Export,
    doc_id,
    export_files,
    export_trec,
    item_id,
    merged_judgments,
    run_paths,
    system_path,
)
from ragmeter.scoring.metrics import Metric

__all__ = [
    "NOT_IN_TREC",
    "TOLERANCE",
    "Export",
    "doc_id",
    "export",
    "export_files",
    "export_trec",
    "item_id",
    "merged_judgments",
    "round_trip_lines",
    "run_paths",
    "system_path",
]


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

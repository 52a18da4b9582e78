"""``ragmeter export``: TREC run and qrels files from a results directory, for trec_eval,
ranx or ir_measures (no search is re-run)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from ragmeter.cli.app import app, console, handle_errors, plural
from ragmeter.errors import InputError
from ragmeter.outputs import check_output_file, results_inputs
from ragmeter.results import Results
from ragmeter.retrieval.trec import write_qrels, write_run


def item_id(doc: str, start: int, end: int) -> str:
    """``doc#start-end`` (whitespace in a document id becomes ``_``: TREC ids have none)."""
    return f"{doc_id(doc)}#{start}-{end}"


def doc_id(doc: str) -> str:
    return re.sub(r"\s", "_", doc)


def _safe(name: str) -> str:
    return re.sub(r"[^\w.+-]", "_", name)


def run_paths(run: Path, systems: list[str]) -> dict[str, Path]:
    """One run file per system: ``run`` itself for one, ``run.SYSTEM.txt`` style for more."""
    if len(systems) == 1:
        return {systems[0]: run}
    return {s: run.with_name(f"{run.stem}.{_safe(s)}{run.suffix}") for s in systems}


def export_trec(
    results: Path,
    run: Path | None,
    qrels: Path | None,
    systems: list[str] | None = None,
    documents: bool = False,
) -> list[Path]:
    """Write the run file(s) and the qrels; return the paths written.

    Items are ``doc#start-end`` spans, judged with ragmeter's grades (2 holds the whole
    answer passage, 1 part of it) on every item any system returned; with ``documents``,
    items are documents (each at its best item's rank) and the qrels give 1 to every
    document holding an answer passage (for a search keyed by qrels, their own grades).
    """
    res = Results(results)
    systems = systems or res.systems
    for s in systems:
        if s not in res.systems:
            raise InputError(f"unknown system {s!r}; choose one of {res.systems}")
    targets = [(p, "--run") for p in (run_paths(run, systems).values() if run else ())]
    _check_targets(res, targets + ([(qrels, "--qrels")] if qrels is not None else []))
    written: list[Path] = []
    if run is not None:
        for system, path in run_paths(run, systems).items():
            ranked: dict[str, list[tuple[str, float]]] = {}
            for qid, items in res.runs[system].items():
                rows: list[tuple[str, float]] = []
                seen: set[str] = set()
                for it in items:
                    name = doc_id(it.doc) if documents else item_id(it.doc, it.start, it.end)
                    if name not in seen:
                        seen.add(name)
                        rows.append((name, it.score))
                ranked[qid] = rows
            write_run(path, ranked, tag=_safe(system), scores="rank")
            written.append(path)
    if qrels is not None:
        judged: dict[str, dict[str, int]] = {}
        if documents:
            for q in res.questions:
                if q.qrels:  # a search keyed by qrels: their documents and grades
                    judged[q.id] = {doc_id(d): g for d, g in q.qrels if g > 0}
                else:
                    spans = q.any_of or q.answers
                    judged[q.id] = {doc_id(a.doc): 1 for a in spans}
        else:
            for system in res.systems:
                for qid, items in res.runs[system].items():
                    for it in items:
                        if it.grade > 0:
                            judged.setdefault(qid, {})[item_id(it.doc, it.start, it.end)] = it.grade
        write_qrels(qrels, judged)
        written.append(qrels)
    return written


def _check_targets(res: Results, targets: list[tuple[Path, str]]) -> None:
    """The output rule for every file to write (``(path, flag)``), before any is written."""
    inputs = results_inputs(res.path, res.meta)
    seen: set[Path] = set()
    for target, flag in targets:
        key = target.resolve()
        if key in seen:
            raise InputError(f"{target}: would be written twice; give different file names")
        seen.add(key)
        check_output_file(target, None, "TREC file", inputs, flag)


@app.command()
@handle_errors
def export(
    results: Annotated[Path, typer.Argument(help="A results directory")],
    run: Annotated[
        Path | None,
        typer.Option(help="Run file to write (one per system: run.SYSTEM.txt)", metavar="PATH"),
    ] = None,
    qrels: Annotated[Path | None, typer.Option(help="Qrels file to write", metavar="PATH")] = None,
    system: Annotated[
        str | None, typer.Option(help="Comma-separated systems (default: all)", metavar="NAMES")
    ] = None,
    documents: Annotated[
        bool, typer.Option("--documents", help="Rank and judge documents instead of spans")
    ] = False,
) -> None:
    """Write TREC run and qrels files from a results directory (for trec_eval, ranx...)."""
    if run is None and qrels is None:
        raise InputError("give --run PATH, --qrels PATH or both")
    systems = [s.strip() for s in system.split(",") if s.strip()] if system else None
    paths = export_trec(results, run, qrels, systems, documents)
    console.print(
        f"Wrote {plural(len(paths), 'file')}: " + ", ".join(escape(str(p)) for p in paths)
    )
    if qrels is not None and not documents:
        console.print(
            "[dim]Grades: 2 holds the whole answer passage, 1 part of it; "
            "trec_eval -l 2 counts only whole passages, as ragmeter's recall does.[/]"
        )

"""Writing a results directory: every file of a run, atomically, under its lock.

:func:`save_results` is the one writer of a search's (or an evaluation's) results;
:class:`ragmeter.runs.results.Results` reads them back. The layout is described there.
"""

from __future__ import annotations

import json
import platform
import shutil
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import tomli_w

from ragmeter import __version__
from ragmeter.errors import InputError
from ragmeter.files.io import atomic_directory, dumps, json_chunks
from ragmeter.files.outputs import (
    RESULTS_FILES,
    check_results_target,
    results_lock,
    results_marker,
    write_manifest,
)
from ragmeter.files.safe_text import csv_lines, redact
from ragmeter.runs.meta import RunMeta
from ragmeter.scoring.measurement import describe

if TYPE_CHECKING:
    from ragmeter.comparison.summary import Summary
    from ragmeter.runs.reading import SearchedRun

__all__ = ["LATER_STAGES", "meta_record", "save_results"]


def _versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {"ragmeter": __version__, "python": platform.python_version()}
    for pkg in ("numpy", "bm25s", "syntok"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            pass
    return out


def save_results(
    run: SearchedRun,
    path: str | Path,
    summary: Summary | None = None,
    *,
    overwrite: bool = False,
) -> Path:
    """Write a complete results directory atomically (temporary name, then rename).

    ``path`` must not exist yet, or be an empty folder, or (with ``overwrite``)
    hold earlier ragmeter results; it may not be, hold or lie inside the
    corpus or test set. Anything else is an :class:`InputError`. The directory
    is written under its lock (:func:`ragmeter.files.outputs.results_lock`).
    """
    path = Path(path)
    cfg = run.config
    inputs = (("corpus", cfg.corpus), ("test set", cfg.testset))
    check_results_target(path, inputs, overwrite=overwrite)
    with results_lock(path):
        check_results_target(path, inputs, overwrite=overwrite)  # as it is now, under the lock
        return _save_results(run, path, summary)


def meta_record(run: SearchedRun) -> RunMeta:
    """``meta.json`` of ``run``: versions, the corpus and test set, every system, the
    ks, depth, seed and rounds, and what the run measured
    (:func:`ragmeter.scoring.measurement.describe`)."""
    cfg = run.config
    measured = describe(cfg, run.documents, run.questions)
    return RunMeta.from_json(
        {
            **results_marker(),
            "versions": _versions(),
            "corpus": {
                "path": cfg.corpus,
                "documents": len(run.documents),
                "characters": sum(len(d.text) for d in run.documents),
            },
            "testset": {
                "path": cfg.testset,
                "questions": len(run.questions),
                "skipped": run.testset.skipped,
            },
            "systems": [
                {
                    "name": s.name,
                    "strategy": redact(s.strategy, strings=False),  # never a key or URL's
                    "retriever": redact(s.retriever, strings=False),
                    "items": s.n_items,
                    **({"k_cap": s.k_cap} if s.k_cap is not None else {}),
                }
                for s in run.systems
            ],
            "ks": list(cfg.ks),
            "depth": cfg.depth,
            "relevant_grade": measured["relevant_grade"],  # as scored: 1 for qrels keys
            "ideal": measured["ideal"],
            "measurement": measured,
            "seed": cfg.seed,
            "rounds": cfg.rounds,
            "metrics": run.metric_names,
        }
    )


def _save_results(run: SearchedRun, path: Path, summary: Summary | None) -> Path:
    if summary is None:
        summary = run.summary  # computed once per run
    questions = run.questions
    carried = _later_stages(path, [s.name for s in run.systems], [q.id for q in questions])
    meta = meta_record(run)
    with atomic_directory(path) as tmp:
        for name in carried:
            shutil.copytree(path / name, tmp / name)
        _put(tmp, "config.toml", tomli_w.dumps(_toml_safe(run.config.to_dict())))
        _put(tmp, "meta.json", dumps(meta.to_json()))
        _write_lines(tmp / "questions.jsonl", (q.to_dict() for q in questions))
        _write_lines(tmp / "documents.jsonl", _document_lines(run))
        _write_lines(tmp / "runs.jsonl", _run_lines(run))
        _write_scores(tmp, run, summary)
        _put(tmp, "summary.json", dumps(summary.to_json()))
        write_manifest(tmp, RESULTS_FILES)  # what a later save may replace
    return path


def _document_lines(run: SearchedRun) -> Iterator[dict]:
    """``documents.jsonl``: the documents an answer key or a ranked item points into."""
    used = {a.doc for q in run.questions for a in q.answers}
    used |= {it.doc for s in run.systems for row in s.items for it in row}
    for d in run.documents:
        if d.id in used:
            yield {"id": d.id, "text": d.text, **({"title": d.title} if d.title else {})}


def _run_lines(run: SearchedRun) -> Iterator[dict]:
    """``runs.jsonl``: per system and question, the ranked items with their grades."""
    for s in run.systems:
        for q, row in zip(run.questions, s.items, strict=True):
            yield {
                "system": s.name,
                "question": q.id,
                "items": [
                    {
                        "doc": it.doc,
                        "start": it.start,
                        "end": it.end,
                        "score": it.score,
                        "grade": it.grade,
                        "words": it.words,
                    }
                    for it in row
                ],
            }


def _write_scores(folder: Path, run: SearchedRun, summary: Summary) -> None:
    """``scores.json`` and ``scores.csv``: every system's per-question scores."""
    metric_names = run.metric_names
    questions = run.questions
    values = {s.name: {m: s.scores[m] for m in metric_names} for s in run.systems}
    record = {
        "systems": [s.name for s in run.systems],
        "questions": [q.id for q in questions],
        "metrics": metric_names,
        "values": values,
        **_clusters_record(summary),
    }
    _put_pieces(folder, "scores.json", json_chunks(record))  # a system's arrays at a time
    rows = (
        [s.name, q.id, *(repr(float(s.scores[m][i])) for m in metric_names)]
        for s in run.systems
        for i, q in enumerate(questions)
    )
    _put_pieces(folder, "scores.csv", csv_lines(["system", "question", *metric_names], rows))


def _clusters_record(summary: Summary) -> dict:
    """Each question's cluster (in question order) and where the labels came from,
    when the summary measured clusters; nothing otherwise (as before clusters)."""
    info = summary.clusters
    if info is None or summary.cluster_labels is None:
        return {}
    return {"clusters": list(summary.cluster_labels), "cluster_source": info.source}


LATER_STAGES = ("answers", "audit")


def _later_stages(path: Path, systems: list[str], question_ids: list[str]) -> list[str]:
    """Folders of later stages (answers, hand grades, audit) to keep when a search is rerun.

    They are kept when the rerun scores the same systems on the same questions (the
    answer cache then re-answers only what changed); otherwise writing over them would
    lose work such as hand grades, so that is an error.
    """
    present = [name for name in LATER_STAGES if (path / name).is_dir()]
    if not present:
        return []
    try:
        old = json.loads((path / "scores.json").read_text(encoding="utf-8"))
        same = old["systems"] == systems and old["questions"] == question_ids
    except (OSError, ValueError, KeyError, TypeError):
        same = False
    if not same:
        raise InputError(
            f"{path} holds {' and '.join(present)} from a run with other systems or questions; "
            f"write to another --out, or move {path} away first"
        )
    return present


def _toml_safe(d: dict) -> dict:
    return {
        k: _toml_safe(v) if isinstance(v, dict) else v
        for k, v in d.items()
        if v is not None and v != [] and v != {}
    }


def _put(folder: Path, name: str, text: str) -> None:
    """One file of the results directory being built in atomic_directory's temporary."""
    (folder / name).write_text(text, "utf-8")  # ragmeter's own temporary folder


def _put_pieces(folder: Path, name: str, pieces: Iterable[str]) -> None:
    """:func:`_put` of a text made and written a piece at a time."""
    with (folder / name).open("w", encoding="utf-8", newline="\n") as fh:
        fh.writelines(pieces)


def _write_lines(path: Path, rows) -> None:
    with path.open("w", encoding="utf-8", newline="\n") as fh:
        for row in rows:
            fh.write(json.dumps(row, sort_keys=True, ensure_ascii=False) + "\n")

"""Score existing run files against qrels, with no corpus: ``ragmeter evaluate``.

Each run is a system. The result is a :class:`ragmeter.runs.pipeline.SearchRun`,
so the same results directory, intervals, paired comparisons, sample-size rows
and HTML report as a search come out of it (:func:`ragmeter.runs.results.save_results`).
The drill-down keeps each query's top 5 documents (ids, scores, grades; no text).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ragmeter.errors import InputError
from ragmeter.inputs.config import Config
from ragmeter.inputs.corpus import Document
from ragmeter.inputs.testset import Question, TestSet
from ragmeter.runs.reading import RankedItem, SystemRun
from ragmeter.runs.search_run import SearchRun
from ragmeter.scoring import metrics
from ragmeter.scoring.trec import COMPAT_MEASURES, Evaluation, evaluate_run, read_qrels, read_run

TOP = 5
"""Documents kept per query and system for the report's drill-down."""

Progress = Callable[[str, int, int], None]


@dataclass
class EvaluateRun:
    """What :func:`evaluate_files` produced: a search run to save, plus notes."""

    run: SearchRun
    evaluations: list[Evaluation]
    measures: list[str]
    no_relevant: list[str] = field(default_factory=list)  # judged queries with R = 0


def _unique_names(names: list[str]) -> list[str]:
    out, seen = [], {}
    for n in names:
        seen[n] = seen.get(n, 0) + 1
        out.append(n if seen[n] == 1 else f"{n}-{seen[n]}")
    return out


def evaluate_files(
    qrels_path: str | Path,
    run_paths: Sequence[str | Path],
    measures: Sequence[str] = COMPAT_MEASURES,
    *,
    level: int = 1,
    gain: str | None = None,
    ideal: str = "judged",
    trec_eval_compat: bool = False,
    metric: str | None = None,
    seed: int = 1,
    rounds: int = 10_000,
    method: str = "percentile",
    output: str = "ragmeter-results",
    progress: Progress | None = None,
) -> EvaluateRun:
    """Read qrels and runs, score every run on every judged query."""
    if not run_paths:
        raise InputError("give at least one run file")
    qrels = read_qrels(qrels_path)
    if not len(qrels):
        raise InputError(f"{qrels_path}: holds no judgments; give qrels with at least one line")
    wanted = _wanted(measures)
    evaluations = []
    for i, path in enumerate(run_paths):
        if progress:
            progress(f"read {Path(path).name}", i, len(run_paths))
        run = read_run(path, ranks=not trec_eval_compat)
        evaluations.append(
            evaluate_run(
                run,
                qrels,
                wanted,
                level=level,
                gain=gain,
                ideal=ideal,
                trec_eval_compat=trec_eval_compat,
                keep=TOP,
            )
        )
    names = _unique_names([e.name for e in evaluations])
    for e, n in zip(evaluations, names, strict=True):
        e.name = n
    out_names = list(evaluations[0].scores)
    main = metrics.find_metric(metric or out_names[0], out_names)  # either vocabulary
    main_metric = metrics.Metric.parse(main)
    ks = sorted({m.k for m in wanted if m.k is not None}) or [main_metric.k or 10]
    config = Config(
        corpus="",
        testset=str(qrels_path),
        qrels=str(qrels_path),
        strategies=("run",),
        retrievers=tuple(str(p) for p in run_paths),
        ks=tuple(ks),
        depth=max([e.depth for e in evaluations] + [max(ks)]),
        relevant_grade=level,
        ideal=ideal if not trec_eval_compat else "judged",
        gain="linear" if trec_eval_compat else (gain or "exponential"),
        trec_eval_compat=trec_eval_compat,
        seed=seed,
        rounds=rounds,
        method=method,
        metric=main,
        output=output,
    ).validate()
    judged = qrels.to_dict()
    qids = evaluations[0].query_ids
    n_rel = qrels.n_relevant(level)
    no_relevant = [q for q, r in zip(qids, n_rel.tolist(), strict=True) if r == 0]
    questions = [Question(q, q, (), {"qrels": judged.get(q, {})}) for q in qids]
    systems = [_system(e, path, len(qids)) for e, path in zip(evaluations, run_paths, strict=True)]
    doc_ids = {it.doc for s in systems for row in s.items for it in row}
    documents = [Document(d, "") for d in sorted(doc_ids)]
    run = SearchRun(config, documents, TestSet(questions, source=str(qrels_path)), systems)
    return EvaluateRun(run, evaluations, out_names, no_relevant)


def _wanted(measures: Sequence[str]) -> list[metrics.Metric]:
    """The measures asked for, each once (a measure named twice, in either vocabulary, or
    none at all is an :class:`InputError`)."""
    wanted = [metrics.Metric.parse(m) for m in measures]
    for i, m in enumerate(wanted):
        if m in wanted[:i]:
            first = list(measures)[wanted.index(m)]
            raise InputError(
                f"the measures name {m} twice ({first!r} and {list(measures)[i]!r}): "
                "list each measure once"
            )
    if not wanted:
        raise InputError(
            "no measures asked for: give comma-separated measures, e.g. --measures map,P_10"
        )
    return wanted


def _system(e: Evaluation, path: str | Path, n_queries: int) -> SystemRun:
    """One run file as a system: its scores, and each query's top :data:`TOP` documents
    (ids, scores, grades; no text) for the report's drill-down."""
    top = e.top
    items: list[list[RankedItem]] = []
    for qi in range(n_queries):
        row = []
        if top is not None and top.docs is not None:
            for j in range(top.docs.shape[1]):
                if top.grades[qi, j] < 0:
                    break
                doc = top.docs[qi, j].decode("utf-8", "replace")
                score, grade = float(top.scores[qi, j]), int(top.grades[qi, j])
                row.append(RankedItem(j + 1, doc, 0, 0, score, grade, 0))
        items.append(row)
    return SystemRun(
        name=e.name,
        strategy={"name": "run file"},
        retriever={"name": e.name, "kind": "run", "path": str(path)},
        n_items=0,
        items=items,
        scores=e.scores,
    )


def means_table(evaluations: Sequence[Evaluation]) -> dict[str, dict[str, float]]:
    """``{system: {measure: mean}}``."""
    return {e.name: e.means() for e in evaluations}


def per_query_nonzero(e: Evaluation) -> int:
    """Queries on which a run scored above 0 on any measure."""
    if not e.scores:
        return 0
    return int(np.any(np.vstack(list(e.scores.values())) > 0, axis=0).sum())

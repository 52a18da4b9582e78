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
from typing import overload

import numpy as np

from ragmeter.defaults import DEFAULTS
from ragmeter.engine import Engine, LocalEngine, available_cpus, make_engine, workers_from_env
from ragmeter.errors import InputError
from ragmeter.inputs.config import Config
from ragmeter.inputs.corpus import Document
from ragmeter.inputs.testset import Question, TestSet
from ragmeter.runs.reading import RankedItem, SystemRun
from ragmeter.runs.score_cache import ScoreCache, open_cache, run_key
from ragmeter.runs.search_run import SearchRun
from ragmeter.scoring import metrics
from ragmeter.scoring.trec import (
    COMPAT_MEASURES,
    Evaluation,
    Matrix,
    Qrels,
    evaluate_run,
    read_qrels,
    read_run,
)
from ragmeter.scoring.trec_bytes import give_back_freed_memory

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
    from_cache: int = 0  # runs read from the score cache, not scored
    cache: str = ""  # the score cache's file ("" when off)


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
    seed: int = DEFAULTS.seed,
    rounds: int = DEFAULTS.rounds,
    method: str = "percentile",
    output: str = "ragmeter-results",
    progress: Progress | None = None,
    engine: Engine | None = None,
    adjust: str = "maxt",
    baseline: str = "",
    pairs: Sequence[str] = (),
) -> EvaluateRun:
    """Read qrels and runs, score every run on every judged query.

    ``adjust``, ``baseline`` and ``pairs`` choose the comparison table's rule and pairs
    (every pair by default; ``baseline``: each run against the run of that name;
    ``pairs``: ``"A:B"`` strings), as a search's ``[stats]`` settings do.
    ``engine`` scores the run files (:func:`score_runs`): by default one after another in
    this process; a :class:`ragmeter.engine.LocalEngine` with several workers scores them in
    worker processes, a :class:`ragmeter.engine.RayEngine` as Ray tasks. Every engine gives
    the same result, byte for byte.
    """
    if not run_paths:
        raise InputError("give at least one run file")
    qrels = read_qrels(qrels_path)
    if not len(qrels):
        raise InputError(f"{qrels_path}: holds no judgments; give qrels with at least one line")
    wanted = _wanted(measures)
    how = Scoring(tuple(wanted), level, gain, ideal, trec_eval_compat)
    evaluations, from_cache = _score_with_cache(qrels, qrels_path, run_paths, how, engine, progress)
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
        adjust=adjust,
        baseline=baseline,
        pairs=tuple(pairs),
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
    return EvaluateRun(run, evaluations, out_names, no_relevant, *from_cache)


def _score_with_cache(
    qrels: Qrels,
    qrels_path: str | Path,
    run_paths: Sequence[str | Path],
    how: Scoring,
    engine: Engine | None,
    progress: Progress | None,
) -> tuple[list[Evaluation], tuple[int, str]]:
    """:func:`score_runs` through the configured score cache, and (runs read from the
    cache, the cache's file); ``(0, "")`` when the cache is off."""
    store = open_cache()
    if store is None:
        return score_runs(qrels, run_paths, how, engine, progress), (0, "")
    with store:
        evaluations = score_runs(qrels, run_paths, how, engine, progress, (store, qrels_path))
        return evaluations, (store.hits, str(store.path))


@dataclass(frozen=True)
class Scoring:
    """How each run file is scored: the same for every run, sent with every task."""

    wanted: tuple[metrics.Metric, ...]
    level: int = 1
    gain: str | None = None
    ideal: str = "judged"
    trec_eval_compat: bool = False

    def settings(self) -> list:
        """Every setting a score depends on, as plain values (the score cache's key)."""
        names = [str(m) for m in self.wanted]
        return [names, self.level, self.gain, self.ideal, self.trec_eval_compat, TOP]


_SHARED: dict[str, Qrels] = {}
"""The qrels of the scoring under way, for this process and for workers forked from it
(which see its memory as it was when the tasks were sent), so a task need not carry them."""


def score_file(task: tuple[str, Scoring, Qrels | None]) -> Evaluation:
    """One run file's scores: the file read once, as it streams, and scored against the
    task's qrels (or the shared ones). A task of an engine: a pure function of its input."""
    path, how, qrels = task
    scored = evaluate_run(
        read_run(path, ranks=not how.trec_eval_compat),
        qrels if qrels is not None else _SHARED["qrels"],
        list(how.wanted),
        level=how.level,
        gain=how.gain,
        ideal=how.ideal,
        trec_eval_compat=how.trec_eval_compat,
        keep=TOP,
    )
    give_back_freed_memory()  # the run's lines, before the next run is read
    return scored


def score_runs(
    qrels: Qrels,
    run_paths: Sequence[str | Path],
    how: Scoring,
    engine: Engine | None = None,
    progress: Progress | None = None,
    cache: tuple[ScoreCache, str | Path] | None = None,
) -> list[Evaluation]:
    """Every run file's :class:`Evaluation`, in the order of ``run_paths``.

    Each task is one run file, so a worker holds one run (and the qrels) at a time. Workers
    forked from this process read the qrels from the memory they share with it; spawned
    workers and Ray tasks get them with each task (Ray: the run files must be readable at
    the same paths on the cluster's machines). ``cache``: a :class:`ScoreCache` and the
    qrels file's path; a run found there is not scored, and each run scored is stored
    there as its result comes back (:mod:`ragmeter.runs.score_cache`).
    """
    engine = engine or LocalEngine(1)
    store, qrels_path = cache if cache is not None else (None, "")
    keys = [run_key(p, qrels_path, how.settings()) if store else None for p in run_paths]
    out: list[Evaluation | None] = [store.get(k) if store else None for k in keys]
    todo = [i for i, e in enumerate(out) if e is None]
    names = [Path(run_paths[i]).name for i in todo]
    here = isinstance(engine, LocalEngine) and (engine.workers <= 1 or len(todo) <= 1)
    shared = here or (isinstance(engine, LocalEngine) and engine.shares_memory)
    tasks = [(str(run_paths[i]), how, None if shared else qrels) for i in todo]

    def keep(j: int, e: Evaluation) -> None:  # stored as it comes back: a kill loses none
        if store is not None:
            store.put(keys[todo[j]], e)

    _SHARED["qrels"] = qrels
    try:
        if here:  # one after another in this process, each named as it is read
            scored = []
            for j, task in enumerate(tasks):
                if progress:
                    progress(f"read {names[j]}", j, len(tasks))
                scored.append(score_file(task))
                keep(j, scored[-1])
        else:

            def step(done: int, total: int) -> None:
                if progress:
                    progress(f"scored {names[done - 1]}", done, total)

            scored = engine.map(score_file, tasks, progress=step, on_result=keep)
    finally:
        _SHARED.clear()
    for i, e in zip(todo, scored, strict=True):
        out[i] = e
    return [e for e in out if e is not None]


def scoring_engine(
    kind: str = "local", address: str = "auto", workers: int | None = None
) -> Engine:
    """The engine ``ragmeter evaluate`` scores run files with. ``local``: ``workers``
    processes, else ``$RAGMETER_WORKERS``, else 1 (each worker holds a whole run, so more
    are asked for, not assumed); 0 is one per CPU. ``ray``: Ray tasks at ``address``."""
    if kind != "local":
        return make_engine(kind, address)
    if workers is not None and (isinstance(workers, bool) or workers < 0):
        raise InputError(f"--workers must be 0 (one per CPU) or more, got {workers}")
    n = workers if workers is not None else (workers_from_env() or 1)
    return LocalEngine(n or available_cpus())


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


class TopRows(Sequence[list[RankedItem]]):
    """Each query's kept top documents as :class:`RankedItem` rows, made when a row is
    read: the run's arrays hold them (a few bytes a document, where objects for every run
    and query would grow with the runs)."""

    def __init__(self, top: Matrix | None, n_queries: int) -> None:
        self._top = top if top is not None and top.docs is not None else None
        self._n = n_queries

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, qi: int) -> list[RankedItem]: ...

    @overload
    def __getitem__(self, qi: slice) -> list[list[RankedItem]]: ...

    def __getitem__(self, qi):
        if isinstance(qi, slice):
            return [self[i] for i in range(*qi.indices(self._n))]
        if not -self._n <= qi < self._n:
            raise IndexError(qi)
        top, row = self._top, []
        if top is None:
            return row
        docs, scores = top.docs[qi].tolist(), top.scores[qi].tolist()
        for j, grade in enumerate(top.grades[qi].tolist()):
            if grade < 0:
                break
            doc = docs[j].decode("utf-8", "replace")
            row.append(RankedItem(j + 1, doc, 0, 0, scores[j], grade, 0))
        return row


def _system(e: Evaluation, path: str | Path, n_queries: int) -> SystemRun:
    """One run file as a system: its scores, and each query's top :data:`TOP` documents
    (ids, scores, grades; no text) for the report's drill-down."""
    return SystemRun(
        name=e.name,
        strategy={"name": "run file"},
        retriever={"name": e.name, "kind": "run", "path": str(path)},
        n_items=0,
        items=TopRows(e.top, n_queries),
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

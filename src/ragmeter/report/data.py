"""Everything the report page shows, as plain JSON-ready data (no altair needed).

:func:`report_data` reads a results directory through
:class:`ragmeter.runs.results.Results` (nothing is re-run) and shapes the summary, the
comparisons, the headline, the strategy grid, the sample-size reading, the
per-question drill-down and the route diagram; the optional sections come from
:mod:`ragmeter.report.sections`. Charts are made from this data by
:mod:`ragmeter.report.charts`; the page by :mod:`ragmeter.report.page`.

Size: over 500 lines, all of it the shaping of one JSON document; the parts
read each other's intermediate values, so they stay together.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ragmeter import __version__
from ragmeter.comparison.families import grid_views, kind_of, short_verdict
from ragmeter.comparison.formatting import (
    decided_note,
    format_half_width,
    shown_difference,
    shown_half_width,
    shown_interval,
    shown_p,
    unresolved_note,
)
from ragmeter.comparison.summary import Summary
from ragmeter.defaults import DEFAULTS
from ragmeter.errors import InputError
from ragmeter.report.common import (
    PAGE_SIZE,
    TARGET_HALF_WIDTH,
    TOP_ITEMS,
    _est,
    _family,
    _k,
    _r,
    family_order,
    family_titles,
)
from ragmeter.report.drilldown import drilldown, drilldown_note
from ragmeter.report.sections import (
    OPTIONAL_SECTIONS,
    _attach_optional_to_questions,
    shared_answers,
)
from ragmeter.runs.meta import RunMeta
from ragmeter.runs.results import Results
from ragmeter.scoring.names import difference_scale, metric_info, shown_cutoffs
from ragmeter.stats.planning import (
    family_sentence,
    pair_needs,
    planning_inputs,
    questions_needed,
    run_clusters,
)
from ragmeter.stats.validate import alpha_of


def report_data(
    results: Results,
    *,
    target_half_width: float = TARGET_HALF_WIDTH,
    page_size: int = PAGE_SIZE,
    top: int = TOP_ITEMS,
    accuracy_judge: str | None = None,
) -> dict[str, Any]:
    """Everything the page shows, as plain JSON-ready data (charts not included)."""
    summary = results.summary
    metric = summary.metric
    systems = results.systems
    data = _overview(results, page_size, top)
    estimates = data["estimates"]
    data["comparisons"] = _comparisons(results, summary, metric)
    rows = summary.comparisons
    notes = (decided_note(rows), unresolved_note(rows, summary.comparison_rule))
    data["comparison_note"] = " ".join(n for n in notes if n) or None
    rule = summary.comparison_rule
    data["comparison_rule"] = None if rule is None else rule.to_dict()
    data["comparison_grids"] = comparison_grids(summary)
    data["headline"] = _headline(systems, estimates, data["comparisons"], metric)
    data["headline"].update(
        headline_extras(systems, estimates, data["comparisons"], metric, data["main_k"])
    )
    shown = [*data["metrics"], metric, data["headline"]["words_key"]]
    data["metric_info"] = metric_info(dict.fromkeys(shown))  # the page keeps no rules
    data["ranks"] = None if summary.ranks is None else summary.ranks.to_dict()
    data["headline"]["ranks"] = None if summary.ranks is None else summary.ranks.sentence
    data["grid"] = strategy_grid(data["systems"])
    data["k_capped"] = dict(summary.k_capped)
    data["unmatched"] = {s: list(ids) for s, ids in summary.unmatched.items()}
    data["clusters"] = _clusters(summary, systems)
    data["ndcg"] = {**summary.ndcg, "note": summary.ndcg_note(data["ks"])}
    data["sample_size"] = _sample_size(results, summary, metric, target_half_width)
    docs, questions = drilldown(results, metric, data["hit_metric"], top)
    data["docs"] = docs
    data["questions"] = questions
    data["drilldown_note"] = drilldown_note(len(questions), len(results.question_ids), metric)
    data["optional"] = _optional(results, accuracy_judge)
    _attach_optional_to_questions(data)
    data["route"] = _route(data, results.meta)
    return data


def _overview(results: Results, page_size: int, top: int) -> dict[str, Any]:
    """The page's first keys: the title, the metrics and their families, the systems
    and their estimates, the run's statistics, config and versions."""
    summary = results.summary
    meta = results.meta
    metric = summary.metric
    systems = results.systems
    metrics = results.metrics
    estimates = {
        s: {m: _est(e, m) for m, e in summary.estimates.get(s, {}).items()} for s in systems
    }
    sys_meta = {s["name"]: s for s in meta.get("systems", [])}
    ks = list(meta.ks) or sorted({k for m in metrics if (k := _k(m))})
    cutoffs = shown_cutoffs(metrics)  # the terminal's: 5, else the largest k below 5
    main_k = _k(metric) or (cutoffs[1] if cutoffs else None)
    named = f" ({summary.ndcg_label})" if summary.ndcg_label else ""  # nDCG's ideal and gain
    titles = family_titles()
    return {
        "title": f"ragmeter report: {len(results.question_ids)} questions, {len(systems)} systems",
        "metric": metric,
        "hit_metric": f"recall@{main_k}" if f"recall@{main_k}" in metrics else metric,
        "main_k": main_k,
        "ks": ks,
        "metrics": metrics,
        "families": [f for f in family_order() if any(_family(m) == f for m in metrics)],
        "family_titles": {**titles, "ndcg": titles["ndcg"] + named},
        "systems": [
            {
                "name": s,
                "strategy": sys_meta.get(s, {}).get("strategy") or {},
                "retriever": sys_meta.get(s, {}).get("retriever") or {},
                "items": sys_meta.get(s, {}).get("items"),
            }
            for s in systems
        ],
        "estimates": estimates,
        "stats": {
            "seed": summary.seed,
            "rounds": summary.rounds,
            "confidence": summary.confidence,
            "rng": summary.rng,
        },
        "config": {
            "corpus": meta.get("corpus", {}),
            "testset": meta.get("testset", {}),
            "depth": meta.depth,
            "relevant_grade": meta.relevant_grade,  # an older run's default too
            "ideal": meta.ideal,
            "n_questions": len(results.question_ids),
        },
        "versions": {"ragmeter": __version__, **meta.get("versions", {})},
        "page_size": page_size,
        "top": top,
    }


def _optional(results: Results, accuracy_judge: str | None) -> dict[str, Any]:
    """The optional sections the results hold (answers, failures, the audit...); the
    answer and failure sections share one answer set, read once."""
    optional: dict[str, Any] = {}
    answers = shared_answers(results)
    for section in OPTIONAL_SECTIONS:
        if section.key in ("answers", "failures"):
            loaded = section.load(results, judge=accuracy_judge, answers=answers)
        else:
            loaded = section.load(results)
        if loaded is not None:
            optional[section.key] = loaded
    return optional


def _clusters(summary: Summary, systems: list[str]) -> dict[str, Any] | None:
    """How the questions cluster and each system's design effect on the compared
    metric (``{deff, low, high, effective}``), or None for a run without clusters."""
    info = summary.clusters
    if info is None:
        return None
    design = {}
    for s in systems:
        d = summary.design_of(s)
        if d is not None and d.deff is not None:
            design[s] = {"deff": d.deff, "low": d.low, "high": d.high, "effective": d.effective}
    return {**info.to_dict(), "per_cluster": info.per_cluster, "design": design}


def _comparisons(results: Results, summary: Summary, metric: str) -> list[dict]:
    """The comparisons as the page shows them; ``shown`` holds the texts the terminal
    prints (:func:`ragmeter.comparison.verdicts.shown_difference` /
    :func:`~ragmeter.comparison.verdicts.shown_p`)."""

    out = []
    for c in summary.comparisons:
        d = c.difference
        row = {
            "a": c.a,
            "b": c.b,
            "difference": _est(d, metric),
            "p_value": c.p_value,
            "p": c.p,
            "wins": c.wins,
            "ties": c.ties,
            "losses": c.losses,
            "verdict": c.verdict,
            "winner": c.winner,
            "separated": c.separated,
            "identical": c.identical,
            "shown": {
                "difference": shown_difference(c, metric),
                "p": shown_p(c, summary.alpha),
            },
            "to_separate": None,
        }
        for end in ("low", "high"):  # rounding must not move an end onto 0
            v = getattr(d, end)
            if (v > 0) != (row["difference"][end] > 0) or (v < 0) != (row["difference"][end] < 0):
                row["difference"][end] = float(v)
        gap = abs(float(d.mean))
        if not c.separated and gap > 0 and results.question_ids:
            try:
                need = _observed_need(results, summary, metric, c.a, c.b, gap)
                row["to_separate"], row["to_separate_deff"] = need.needed, need.deff
            except InputError:
                row["to_separate"] = None
        out.append(row)
    return out


def _observed_need(results: Results, summary: Summary, metric: str, a: str, b: str, gap: float):
    """The report's "questions to separate" of a tie: the one planner
    (:func:`ragmeter.stats.planning.pair_needs`) for the observed difference, one pair
    alone at the run's level, at the pair's design effect when the comparisons are
    cluster-aware (as ``plan`` plans)."""
    scores = {a: results.scores(a, metric), b: results.scores(b, metric)}
    labels = run_clusters(results)
    alpha = alpha_of(summary.confidence)  # the run's level, as plan takes it
    return pair_needs(scores, [a, b], gap, 1, alpha, clusters=labels, clustered=labels is not None)[
        0
    ]


def comparison_grids(summary: Summary) -> list[dict]:
    """A grid family's comparisons laid out as grids
    (:func:`ragmeter.comparison.families.grid_views`):
    each cell the index of a row of ``comparisons`` and its short verdict; none for
    any other family."""
    rule = summary.comparison_rule
    rows = summary.comparisons
    views = grid_views(rows, kind_of(rule.family) if rule is not None else None)
    return [
        {
            **v.to_dict(),
            "verdicts": [
                [None if i is None else short_verdict(rows[i]) for i in r] for r in v.cells
            ],
        }
        for v in views
    ]


def _headline(
    systems: list[str], estimates: dict, comparisons: list[dict], metric: str
) -> dict[str, Any]:
    ranked = sorted(
        (s for s in systems if metric in estimates[s]),
        key=lambda s: -estimates[s][metric]["mean"],
    )
    if not ranked:
        return {"best": None, "tied_with_best": [], "ties": [], "pairs": len(comparisons)}
    best = ranked[0]
    tied = []
    for c in comparisons:
        if not c["separated"] and best in (c["a"], c["b"]):
            tied.append(c["b"] if c["a"] == best else c["a"])
    ties = [[c["a"], c["b"]] for c in comparisons if not c["separated"]]
    return {
        "best": best,
        "ranking": ranked,
        "tied_with_best": [s for s in ranked if s in tied],
        "ties": ties,
        "pairs": len(comparisons),
    }


def headline_extras(
    systems: list[str], estimates: dict, comparisons: list[dict], metric: str, main_k: int
) -> dict[str, Any]:
    """What the best system costs, and the ties summed up, for a headline that scales.

    * ``words_key``: the words measure beside ``metric`` (``words@k`` at the metric's k);
    * ``next``: the runner-up by mean;
    * ``cheapest_tied``: of the systems no verdict puts below the best, the one that sends
      the fewest words, when it sends fewer than the best;
    * ``tie_count`` / ``pair_count``, ``named_ties`` (a few, those with the best first) and
      ``not_below_best`` (systems no verdict puts below the best); identical systems
      (``identical_count`` pairs) are counted apart, as the rule counts them;
    * ``frontier``: the systems no other system beats on both ``metric`` and words sent
      (higher and fewer, one at least strictly), fewest words first; ``top``: every
      system at the highest mean (more than one is a tie, named as one).
    """
    k = _k(metric) or main_k
    words_key = f"words@{k}"
    ranked = sorted(
        (s for s in systems if metric in estimates[s]),
        key=lambda s: -estimates[s][metric]["mean"],
    )
    out: dict[str, Any] = {
        "words_key": words_key,
        "next": None,
        "cheapest_tied": None,
        "tie_count": 0,
        "pair_count": 0,
        "named_ties": [],
        "not_below_best": [],
        "identical_count": 0,
        "frontier": [],
        "top": [],
    }
    if not ranked:
        return out
    best = ranked[0]
    below_best: set[str] = set()
    ties: list[list[str]] = []
    compared = [c for c in comparisons if not c.get("identical")]
    out["identical_count"] = len(comparisons) - len(compared)
    for c in compared:
        winner = c.get("winner")  # as the comparison decided it, never re-derived here
        if winner is None:
            ties.append([c["a"], c["b"]])
        elif winner == best:
            below_best.add(c["b"] if c["a"] == best else c["a"])
    ties.sort(key=lambda t: best not in t)  # those with the best first (stable otherwise)
    out["tie_count"] = len(ties)
    out["pair_count"] = len(compared)
    out["named_ties"] = ties[:3]
    out["not_below_best"] = [
        s for s in ranked[1:] if s not in below_best and any(best in t and s in t for t in ties)
    ]
    if len(ranked) > 1:
        # The runner-up with another strategy when there is one: the same strategy under
        # another retriever sends the same words, which says nothing about cost.
        strategy = _strategy_of(best)
        others = [s for s in ranked[1:] if _strategy_of(s) != strategy]
        out["next"] = others[0] if others else ranked[1]

    def words(s: str) -> float | None:
        e = estimates[s].get(words_key)
        return None if e is None else e["mean"]

    top = estimates[best][metric]["mean"]
    out["top"] = [s for s in ranked if estimates[s][metric]["mean"] == top]
    out["frontier"] = frontier(ranked, estimates, metric, words_key)
    best_words = words(best)
    candidates = [s for s in out["not_below_best"] if words(s) is not None]
    if best_words is not None and candidates:
        cheapest = min(candidates, key=lambda s: (words(s), ranked.index(s)))
        if words(cheapest) < best_words:
            out["cheapest_tied"] = cheapest
    return out


def frontier(systems: list[str], estimates: dict, metric: str, words_key: str) -> list[str]:
    """The systems no other beats on both ``metric`` (higher) and ``words_key`` (fewer),
    fewest words first; without words, the systems at the highest mean."""
    have = [s for s in systems if metric in estimates[s] and words_key in estimates[s]]
    if not have:
        return []

    def point(s: str) -> tuple[float, float]:
        return estimates[s][metric]["mean"], estimates[s][words_key]["mean"]

    def beaten(s: str) -> bool:
        m, w = point(s)
        return any((om >= m and ow <= w) and (om > m or ow < w) for om, ow in map(point, have))

    return sorted((s for s in have if not beaten(s)), key=lambda s: (point(s)[1], -point(s)[0]))


def _strategy_of(system: str) -> str:
    """The strategy part of a system name (``sentence/bm25`` -> ``sentence``)."""
    return system.split("/", 1)[0]


def strategy_grid(systems: list[dict]) -> dict[str, Any] | None:
    """A strategy x retriever grid of system names, when there are several retrievers."""
    retrievers: list[str] = []
    strategies: list[str] = []
    cells: dict[tuple[str, str], str] = {}
    for s in systems:
        strategy = str((s.get("strategy") or {}).get("name") or s["name"])
        retriever = str((s.get("retriever") or {}).get("name") or "")
        if strategy not in strategies:
            strategies.append(strategy)
        if retriever not in retrievers:
            retrievers.append(retriever)
        cells[(strategy, retriever)] = s["name"]
    if len(retrievers) < 2:
        return None
    return {
        "strategies": strategies,
        "retrievers": retrievers,
        "cells": [[cells.get((st, r)) for r in retrievers] for st in strategies],
    }


def _sample_size(results: Results, summary: Summary, metric: str, target: float) -> dict:
    confidence = summary.confidence
    rows_by_system = summary.sample_size
    out_rows = []
    for s in results.systems:
        scores = results.scores(s, metric)
        n = int(scores.size)
        sd = float(np.std(scores, ddof=1)) if n > 1 else 0.0
        try:
            needed = questions_needed(scores, target, confidence, run_clusters(results))  # as plan
        except InputError:
            needed = None
        rows = [
            {
                "n": int(r.n),
                "mean": _r(r.mean),
                "low": _r(shown_interval(r)[0]),  # exact for 0/1 scores where shown
                "high": _r(shown_interval(r)[1]),
                "half_width": _r(shown_half_width(r)),
                "half_width_text": format_half_width(shown_half_width(r), metric),
            }
            for r in rows_by_system.get(s, [])
            if sd > 0 or r.exact is not None  # no spread and no exact interval: no ± 0
        ]
        observed = next((r for r in rows if r["n"] == n), None)
        out_rows.append(
            {
                "system": s,
                "n": n,
                "sd": _r(sd),
                "half_width": observed["half_width"] if observed else None,
                "half_width_text": observed["half_width_text"] if observed else None,
                "needed": needed,
                "rows": rows,
            }
        )
    return {
        "metric": metric,
        "target": target,
        "confidence": confidence,
        "power": DEFAULTS.power,  # the power the questions to separate a tie are planned at
        "systems": out_rows,
        "family": _family_need(results, metric),
    }


def _family_need(results: Results, metric: str) -> str | None:
    """What the run's family of pairs costs in questions, planned as ``plan`` plans it
    (:func:`ragmeter.stats.planning.planning_inputs`)."""

    names = [str(s) for s in results.systems]
    given = planning_inputs(results)
    if given.pairs < 2 or len(names) < 2:
        return None
    scores = {s: results.scores(s, metric) for s in names}
    info = results.summary.clusters
    needs = pair_needs(
        scores,
        names,
        0.05,
        given.pairs,
        given.alpha,
        level=given.first,
        clusters=getattr(results, "clusters", None),
        clustered=info is not None and info.used,
    )
    scale = difference_scale(metric)[0]
    return family_sentence(
        needs, 0.05, given.pairs, given.rule, given.alpha, scale, first=given.first
    )


def _route(data: dict, meta: RunMeta) -> dict[str, Any]:
    """The steps the run actually took, lane by lane, for the diagram."""
    lanes = [
        {
            "key": "search",
            "title": "Score the search",
            "start": 0,
            "branch": None,
            "steps": _search_steps(data, meta),
        },
        {
            "key": "answer",
            "title": "Grade the answer",
            "start": 3,
            "branch": 2,
            "steps": _answer_steps(data["optional"].get("answers")),
        },
    ]
    audit = data["optional"].get("audit")
    if audit:
        lanes.append(
            {
                "key": "audit",
                "title": "Audit the questions",
                "start": 1,
                "branch": 0,
                "steps": [
                    {"label": "Read each question", "detail": "against its passage", "ran": True},
                    {
                        "label": "Flags",
                        "detail": f"{audit['flagged']} of {audit['questions']} flagged",
                        "ran": True,
                    },
                ],
            }
        )
    return {"lanes": lanes}


def _search_steps(data: dict, meta: RunMeta) -> list[dict[str, Any]]:
    """The search lane: questions, chunking, ranking, grading, scoring, resampling."""
    n = data["config"]["n_questions"]
    systems = data["systems"]
    strategies = sorted({str(s["strategy"].get("name")) for s in systems if s["strategy"]})
    retrievers = sorted(
        {
            str(s["retriever"].get("name") or s["retriever"].get("kind"))
            for s in systems
            if s["retriever"]
        }
    )
    ks = ", ".join(str(k) for k in data["ks"])
    st = data["stats"]
    return [
        {"label": "Questions", "detail": f"{n} with answer keys", "ran": True},
        {
            "label": "Chunk",
            "detail": (
                f"{len(strategies)} strateg{'y' if len(strategies) == 1 else 'ies'}: "
                + ", ".join(strategies)
            )
            if strategies
            else "spans from the retriever",
            "ran": True,
        },
        {
            "label": "Rank",
            "detail": f"{', '.join(retrievers) or 'retriever'}"
            + (f", top {meta.depth}" if meta.depth is not None else ""),
            "ran": True,
        },
        {"label": "Grade items", "detail": "against the key: 2 whole, 1 part, 0", "ran": True},
        {"label": "Score", "detail": f"recall, precision, MRR, nDCG @ {ks}", "ran": True},
        {
            "label": "Resample",
            "detail": f"{st['rounds']} rounds, seed {st['seed']}: intervals",
            "ran": True,
        },
    ]


def _answer_steps(answers: dict | None) -> list[dict[str, Any]]:
    """The answer lane: the chunks a reader gets, its model, the judges, the grade
    (each ``ran`` only when the results hold answers)."""
    judges = answers["judges"] if answers else []
    return [
        {
            "label": f"Top {answers['k'] if answers else TOP_ITEMS}",
            "detail": "the chunks a reader gets",
            "ran": bool(answers),
        },
        {
            "label": "Reader model",
            "detail": (answers or {}).get("reader")
            or ("writes the answer" if answers else "not run"),
            "ran": bool(answers),
        },
        {
            "label": "Judge",
            "detail": ", ".join(judges) if judges else "not run",
            "ran": bool(judges),
        },
        {
            "label": "Answer grade",
            "detail": "correct, partial or wrong" if answers else "not run",
            "ran": bool(answers),
        },
    ]

"""One self-contained HTML page for a results directory.

``write_report(results_dir)`` reads a directory written by ``ragmeter search``
(through :class:`ragmeter.results.Results`, nothing is re-run) and writes
``report.html`` beside it: the summary, every measure with its interval, the
paired comparisons, the sample-size curve, the routes that were run, and a
per-question drill-down. Sections for answer grades and question audits appear
when their files are in the directory (see :data:`OPTIONAL_SECTIONS`).

The page opens offline. The charts are Vega-Lite specifications built with
altair and drawn by the Vega bundle from ``vl-convert-python``, inlined once.
All text that comes from the corpus, the questions or a model travels as JSON
inside ``<script type="application/json">`` (with ``<``, ``>``, ``&``, U+2028
and U+2029 escaped) and is put on the page with ``textContent`` only; a
Content-Security-Policy allows only the page's own scripts (by hash), so
markup inside a document can neither load anything nor run.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from importlib.resources import files
from pathlib import Path
from typing import Any

import numpy as np

from ragmeter import __version__, stats
from ragmeter.errors import InputError, MissingExtra
from ragmeter.io import atomic_write_text
from ragmeter.results import Results

TOP_ITEMS = 5
"""Ranked items shown per system in the drill-down (the cut a reader model gets)."""

PAGE_SIZE = 50
"""Questions per page in the drill-down."""

TARGET_HALF_WIDTH = 0.04
"""Default target for the sample-size reading: an interval of +/- 4 points."""

SHARE_FAMILIES = ("recall", "hit", "precision", "coverage")
FAMILY_ORDER = ("recall", "hit", "mrr", "ndcg", "map", "precision", "coverage", "words")
FAMILY_TITLE = {
    "recall": "recall@k (%; the hit rate for span keys)",
    "hit": "hit rate (hit@k, %)",
    "map": "MAP@k",
    "precision": "precision@k (%)",
    "coverage": "coverage@k (%)",
    "mrr": "MRR@k",
    "ndcg": "nDCG@k",
    "words": "words sent@k",
}
GRADE_LABELS = ("correct", "partial", "wrong", "unscored")

_ASSETS = "assets"
_CHART_IDS = ("chart-forest", "chart-words", "chart-compare", "chart-size")


# the HTML report needs the ``report`` extra (altair and vl-convert-python)
ReportDependencyError = MissingExtra


# --------------------------------------------------------------------------- public API


def write_report(
    results_dir: str | Path,
    out_path: str | Path | None = None,
    *,
    target_half_width: float = TARGET_HALF_WIDTH,
    page_size: int = PAGE_SIZE,
    accuracy_judge: str | None = None,
) -> Path:
    """Write one self-contained HTML report of ``results_dir``; return its path.

    The default path is ``<results_dir>/report.html``. The file is written to a
    temporary name and renamed into place, so a reader never sees half a page.
    ``accuracy_judge`` names the judge whose grades give the answer accuracy
    (default: ``accuracy_judge`` in ``answers/meta.json``, else its first judge).
    """
    from ragmeter.outputs import check_output_file, results_lock

    Results(results_dir)  # a results directory, or a one-line error before any lock
    with results_lock(results_dir):  # no search may replace the directory while it is read
        results = Results(results_dir)
        out = Path(out_path) if out_path is not None else results.path / "report.html"
        if out.is_dir():
            raise InputError(
                f"{out}: is a directory; give a file name such as {out / 'report.html'}"
            )
        if out_path is not None:
            inputs = [(label, _meta_path(results.meta, key)) for label, key in _INPUTS]
            check_output_file(out, is_report_file, "ragmeter report", inputs)
        text = render_report(
            results,
            target_half_width=target_half_width,
            page_size=page_size,
            accuracy_judge=accuracy_judge,
        )
        atomic_write_text(out, text)
    return out


_INPUTS = (("corpus", "corpus"), ("test set", "testset"))


def _meta_path(meta: dict, key: str) -> str | None:
    entry = meta.get(key)
    path = entry.get("path") if isinstance(entry, dict) else None
    return path if isinstance(path, str) else None


def is_report_file(path: Path) -> bool:
    """Whether ``path`` is an HTML report ragmeter wrote (its generator tag)."""
    try:
        with path.open(encoding="utf-8", errors="replace") as fh:
            head = fh.read(4096)
    except OSError:
        return False
    return '<meta name="generator" content="ragmeter">' in head


def render_report(
    results: Results,
    *,
    target_half_width: float = TARGET_HALF_WIDTH,
    page_size: int = PAGE_SIZE,
    accuracy_judge: str | None = None,
) -> str:
    """The report of ``results`` as one HTML string."""
    if not target_half_width > 0:
        raise InputError(f"target half-width must be positive, got {target_half_width}")
    if page_size < 1:
        raise InputError(f"page size must be at least 1, got {page_size}")
    alt = _altair()
    data = report_data(
        results,
        target_half_width=target_half_width,
        page_size=page_size,
        accuracy_judge=accuracy_judge,
    )
    data["charts"] = chart_specs(data, alt)
    vl_version = _vegalite_version(alt)
    data["versions"]["vega-lite"] = vl_version or "bundled"
    data["versions"]["vega"] = _vega_version()
    bundle = vega_bundle(vl_version)
    return _assemble(data, bundle)


# --------------------------------------------------------------------------- data


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
    meta = results.meta
    metric = summary["metric"]
    systems = results.systems
    metrics = results.metrics
    estimates = {
        s: {m: _est(e) for m, e in summary["estimates"].get(s, {}).items()} for s in systems
    }
    sys_meta = {s["name"]: s for s in meta.get("systems", [])}
    ks = [int(k) for k in meta.get("ks", sorted({_k(m) for m in metrics if _k(m)}))]
    main_k = _k(metric) or (5 if 5 in ks else ks[-1])
    hit_metric = f"recall@{main_k}" if f"recall@{main_k}" in metrics else metric
    data: dict[str, Any] = {
        "title": f"ragmeter report: {len(results.question_ids)} questions, {len(systems)} systems",
        "metric": metric,
        "hit_metric": hit_metric,
        "main_k": main_k,
        "ks": ks,
        "metrics": metrics,
        "families": [f for f in FAMILY_ORDER if any(_family(m) == f for m in metrics)],
        "family_titles": FAMILY_TITLE,
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
            "seed": summary.get("seed"),
            "rounds": summary.get("rounds"),
            "confidence": summary.get("confidence", 0.95),
            "rng": _first_rng(summary),
        },
        "config": {
            "corpus": meta.get("corpus", {}),
            "testset": meta.get("testset", {}),
            "depth": meta.get("depth"),
            "relevant_grade": meta.get("relevant_grade"),
            "ideal": meta.get("ideal"),
            "n_questions": len(results.question_ids),
        },
        "versions": {"ragmeter": __version__, **meta.get("versions", {})},
        "page_size": page_size,
        "top": top,
    }
    data["comparisons"] = _comparisons(results, summary, metric)
    data["comparison_rule"] = summary.get("comparison_rule")
    data["headline"] = _headline(systems, estimates, data["comparisons"], metric)
    data["headline"].update(headline_extras(systems, estimates, summary, metric, main_k))
    data["grid"] = strategy_grid(data["systems"])
    data["k_capped"] = summary.get("k_capped", {})
    data["sample_size"] = _sample_size(results, summary, metric, target_half_width)
    docs, questions = _drilldown(results, metric, hit_metric, top)
    data["docs"] = docs
    data["questions"] = questions
    optional: dict[str, Any] = {}
    for section in OPTIONAL_SECTIONS:
        if section.key == "answers":
            loaded = section.load(results, judge=accuracy_judge)
        else:
            loaded = section.load(results)
        if loaded is not None:
            optional[section.key] = loaded
    data["optional"] = optional
    _attach_optional_to_questions(data)
    data["route"] = _route(data, meta)
    return data


def _est(e: dict) -> dict[str, float]:
    return {"mean": _r(e["mean"]), "low": _r(e["low"]), "high": _r(e["high"]), "n": e.get("n")}


def _r(x: float) -> float:
    return round(float(x), 6)


def _k(metric: str) -> int | None:
    _, _, k = metric.partition("@")
    return int(k) if k.isdigit() else None


def _family(metric: str) -> str:
    return metric.partition("@")[0]


def _is_share(metric: str) -> bool:
    return _family(metric) in SHARE_FAMILIES


def _first_rng(summary: dict) -> str | None:
    for per_system in summary.get("estimates", {}).values():
        for e in per_system.values():
            return e.get("rng")
    return None


def _comparisons(results: Results, summary: dict, metric: str) -> list[dict]:
    from ragmeter.verdicts import fmt_end, fmt_p

    rule = summary.get("comparison_rule")
    alpha = rule["alpha"] if rule else 0.05
    share = _is_share(metric)
    out = []
    for c in summary.get("comparisons", []):
        d = c["difference"]
        separated = c.get("separated", d["low"] > 0 or d["high"] < 0)
        p = c.get("p", c.get("p_holm")) if rule else c.get("p_holm", c.get("p_value"))
        scale, digits = (100, 1) if share else (1, 3)
        row = {
            "a": c["a"],
            "b": c["b"],
            "difference": _est(d),
            "p_value": c.get("p_value"),
            "p_holm": c.get("p_holm"),
            "p": p,
            "wins": c.get("wins"),
            "ties": c.get("ties"),
            "losses": c.get("losses"),
            "verdict": c.get("verdict", ""),
            "separated": separated,
            "identical": bool(c.get("identical")),
            # Printed in Python, with the digits that keep each end on its side of 0
            # and p on its side of alpha, so the page shows what the terminal shows.
            "shown": {
                "difference": "identical"
                if c.get("identical")
                else f"{d['mean'] * scale:+.{digits}f} [{fmt_end(d['low'], scale, digits)}, "
                f"{fmt_end(d['high'], scale, digits)}]",
                "p": "" if p is None or c.get("identical") else fmt_p(p, alpha),
            },
            "to_separate": None,
        }
        for end in ("low", "high"):  # rounding must not move an end onto 0
            if (d[end] > 0) != (row["difference"][end] > 0) or (d[end] < 0) != (
                row["difference"][end] < 0
            ):
                row["difference"][end] = float(d[end])
        gap = abs(float(d["mean"]))
        if not separated and gap > 0 and results.question_ids:
            try:
                row["to_separate"] = stats.questions_to_separate(
                    results.scores(c["a"], metric),
                    results.scores(c["b"], metric),
                    gap,
                    confidence=summary.get("confidence", 0.95),
                )
            except InputError:
                row["to_separate"] = None
        out.append(row)
    return out


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


def _verdict_winner(c: dict) -> str | None:
    """The system a comparison's verdict names as better (``"X better"``), else ``None``.

    Verdicts are read as the comparison states them, never re-derived here."""
    verdict = str(c.get("verdict", ""))
    if verdict.endswith(" better"):
        name = verdict[: -len(" better")]
        if name in (c.get("a"), c.get("b")):
            return name
    return None


def headline_extras(
    systems: list[str], estimates: dict, summary: dict, metric: str, main_k: int
) -> dict[str, Any]:
    """What the best system costs, and the ties summed up, for a headline that scales.

    * ``words_key``: the words measure beside ``metric`` (``words@k`` at the metric's k);
    * ``next``: the runner-up by mean;
    * ``cheapest_tied``: of the systems no verdict puts below the best, the one that sends
      the fewest words, when it sends fewer than the best;
    * ``tie_count`` / ``pair_count``, ``named_ties`` (a few, those with the best first) and
      ``not_below_best`` (systems no verdict puts below the best).
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
    }
    if not ranked:
        return out
    best = ranked[0]
    comparisons = summary.get("comparisons", [])
    below_best: set[str] = set()
    ties: list[list[str]] = []
    for c in comparisons:
        winner = _verdict_winner(c)
        if winner is None:
            ties.append([c["a"], c["b"]])
        elif winner == best:
            below_best.add(c["b"] if c["a"] == best else c["a"])
    ties.sort(key=lambda t: best not in t)  # those with the best first (stable otherwise)
    out["tie_count"] = len(ties)
    out["pair_count"] = len(comparisons)
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

    best_words = words(best)
    candidates = [s for s in out["not_below_best"] if words(s) is not None]
    if best_words is not None and candidates:
        cheapest = min(candidates, key=lambda s: (words(s), ranked.index(s)))
        if words(cheapest) < best_words:
            out["cheapest_tied"] = cheapest
    return out


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


def _sample_size(results: Results, summary: dict, metric: str, target: float) -> dict:
    confidence = summary.get("confidence", 0.95)
    rows_by_system = summary.get("sample_size", {})
    out_rows = []
    for s in results.systems:
        scores = results.scores(s, metric)
        n = int(scores.size)
        sd = float(np.std(scores, ddof=1)) if n > 1 else 0.0
        try:
            needed = stats.questions_for_half_width(scores, target, confidence)
        except InputError:
            needed = None
        rows = [
            {
                "n": int(r["n"]),
                "mean": _r(r["mean"]),
                "low": _r(r["low"]),
                "high": _r(r["high"]),
                "half_width": _r(r["half_width"]),
            }
            for r in rows_by_system.get(s, [])
        ]
        observed = next((r for r in rows if r["n"] == n), None)
        out_rows.append(
            {
                "system": s,
                "n": n,
                "sd": _r(sd),
                "half_width": observed["half_width"] if observed else None,
                "needed": needed,
                "rows": rows,
            }
        )
    return {
        "metric": metric,
        "target": target,
        "confidence": confidence,
        "systems": out_rows,
    }


class _Utf16:
    """Python (code point) offsets to JavaScript (UTF-16 code unit) offsets, per text."""

    def __init__(self, text: str) -> None:
        self.prefix: np.ndarray | None = None
        if len(text.encode("utf-16-le")) != 2 * len(text):
            astral = np.fromiter((ord(ch) > 0xFFFF for ch in text), dtype=np.int64, count=len(text))
            self.prefix = np.concatenate([[0], np.cumsum(astral)])

    def __call__(self, i: int) -> int:
        return int(i) if self.prefix is None else int(i + self.prefix[i])


def _drilldown(
    results: Results, metric: str, hit_metric: str, top: int
) -> tuple[list[dict], list[dict]]:
    """Documents (once each) and per-question records pointing into them by index."""
    texts = results.documents
    runs = results.runs
    systems = results.systems
    doc_index: dict[str, int] = {}
    docs: list[dict] = []
    offsets: dict[str, _Utf16] = {}

    def ref(doc: str) -> int:
        if doc not in doc_index:
            doc_index[doc] = len(docs)
            docs.append({"id": doc, "text": texts.get(doc, "")})
            offsets[doc] = _Utf16(texts.get(doc, ""))
        return doc_index[doc]

    main = {s: results.scores(s, metric) for s in systems}
    hits = {s: results.scores(s, hit_metric) for s in systems}
    out = []
    for i, q in enumerate(results.questions):
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
    return docs, out


# --------------------------------------------------------------------------- optional sections


@dataclass(frozen=True)
class OptionalSection:
    """A report section shown only when its files are in the results directory.

    ``load`` returns the section's data, or None when the files are absent (the
    section is then left out silently). Add a loader here for each new kind of
    output that belongs in the report.
    """

    key: str
    title: str
    load: Callable[..., dict[str, Any] | None]


def _read_jsonl(path: Path) -> list[dict]:
    from ragmeter.io import read_jsonl

    return [obj for _, obj in read_jsonl(path, nan_ok=True)]


def _read_json(path: Path) -> dict:
    if not path.is_file():
        return {}
    from ragmeter.io import read_json

    obj = read_json(path, nan_ok=True)
    return obj if isinstance(obj, dict) else {}


def _est_or_none(e: stats.Estimate | None) -> dict[str, float] | None:
    return None if e is None else _est(e.to_dict())


def load_answers(results: Results, judge: str | None = None) -> dict[str, Any] | None:
    """The answer section: :func:`ragmeter.answers.analysis.answer_figures`, as plain data.

    Nothing is computed here: accuracy per system, the judge-corrected accuracy,
    the passage-found x grade table (the reader's top k, answered questions only),
    judge agreement and hand checks are the objects ``ragmeter grade`` and
    ``ragmeter judges`` print. ``judge`` picks the accuracy judge (default:
    ``accuracy_judge`` in ``answers/meta.json``, else the first of its judges).
    """
    from ragmeter.answers.analysis import answer_figures

    figures = answer_figures(results, judge=judge)
    if figures is None:
        return None
    report, aset = figures.report, figures.answers
    accuracy, cross = [], []
    for row in report.systems:
        fixed = row.corrected
        accuracy.append(
            {
                "system": row.system,
                "judge": report.judge,
                "n": row.n,
                "ungraded": row.ungraded,
                "correct": _est_or_none(row.accuracy.correct),
                "counts": dict(row.accuracy.counts),
                "found": _est_or_none(row.hit),
                "corrected": None
                if fixed is None
                else {**_est(fixed.corrected.to_dict()), "n_hand": fixed.n_hand},
            }
        )
        table = {
            kind: {g: row.cross.count(kind, g) for g in GRADE_LABELS}
            for kind in ("found", "missed")
        }
        cross.append({"system": row.system, "table": table})
    agreement = []
    for pair in figures.pairs:
        ag: dict[str, Any] = {"a": pair.a, "b": pair.b, "n": pair.n}
        ag["percent"] = _est_or_none(pair.binary.percent if pair.binary else None)
        ag["kappa"] = _est_or_none(pair.binary.kappa if pair.binary else None)
        if pair.binary is not None:
            ag["more_correct"] = pair.correct_a - pair.correct_b
        agreement.append(ag)
    hand = []
    for check in figures.hand:
        if not check.n:
            continue
        hand.append(
            {
                "a": check.judge,
                "b": "hand",
                "n": check.n,
                "percent": _est_or_none(check.binary.percent if check.binary else None),
                "kappa": _est_or_none(check.binary.kappa if check.binary else None),
                "more_correct": len(check.lenient) - len(check.strict),
                "lenient": len(check.lenient),
                "strict": len(check.strict),
            }
        )
    systems = results.systems
    per_question: dict[str, list] = {}
    for key in aset.ordered_keys():
        s, q = key
        grades = {
            j: aset.grades[j][key].grade for j in aset.judges if key in aset.grades.get(j, {})
        }
        rec: dict[str, Any] = {"answer": aset.answers[key].answer, "grades": grades}
        if key in aset.hand:
            rec["hand"] = aset.hand[key].hand
        per_question.setdefault(q, [None] * len(systems))[systems.index(s)] = rec
    return {
        "reader": report.reader,
        "judges": report.judges,
        "primary": report.judge,
        "k": report.k,
        "hit_metric": f"recall@{report.k}",
        "seed": report.seed,
        "rounds": report.rounds,
        "accuracy": accuracy,
        "cross": cross,
        "agreement": agreement,
        "hand": hand,
        "per_question": per_question,
    }


def _hit_metric(results: Results) -> str:
    metric = results.summary.get("metric", "recall@5")
    k = _k(metric) or 5
    return f"recall@{k}" if f"recall@{k}" in results.metrics else metric


def load_audit(results: Results) -> dict[str, Any] | None:
    """Question audit flags: ``audit/flags.jsonl`` (and optional ``audit/meta.json``).

    One line per audited question, as ``ragmeter questions audit --results`` writes it
    (``{"id": ..., "flags": [...], "reasons": [{"reason": ...}], ...}``) or by hand::

        {"question": "q001", "flags": ["misstated"], "note": "says upper bound; passage: lower"}

    An empty ``flags`` list means the question was read and passed. Flags are
    free labels (e.g. copied, misstated, missing-context, yes-no).
    """
    folder = results.path / "audit"
    path = folder / "flags.jsonl"
    if not path.is_file():
        return None
    meta = _read_json(folder / "meta.json")
    from ragmeter.questions.audit import read_audit

    qids = results.question_ids
    flags: dict[str, dict] = {}
    for row in read_audit(path, qids):
        note = row.note or "; ".join(f.reason for f in row.flags if f.source != "hand")
        flags[row.id] = {"flags": row.labels, "note": note}
    if not flags:
        return None
    counts: dict[str, int] = {}
    for rec in flags.values():
        for f in rec["flags"]:
            counts[f] = counts.get(f, 0) + 1
    clean = np.array([not flags.get(q, {}).get("flags") for q in qids])
    metric = results.summary.get("metric", "recall@5")
    seed = results.summary.get("seed", 1)
    rounds = results.summary.get("rounds", 10_000)
    confidence = results.summary.get("confidence", 0.95)
    by_system = []
    for s in results.systems:
        scores = results.scores(s, metric)
        row = {
            "system": s,
            "all": _est(results.summary["estimates"][s][metric])
            if metric in results.summary["estimates"].get(s, {})
            else None,
            "clean": None,
            "flagged": None,
        }
        if clean.sum() > 0:
            row["clean"] = _est(
                stats.bootstrap(
                    scores[clean], rounds=rounds, seed=seed, confidence=confidence
                ).to_dict()
            )
        if (~clean).sum() > 0:
            row["flagged"] = _est(
                stats.bootstrap(
                    scores[~clean], rounds=rounds, seed=seed, confidence=confidence
                ).to_dict()
            )
        by_system.append(row)
    return {
        "source": meta.get("generator") or meta.get("source"),
        "audited": len(flags),
        "flagged": int((~clean).sum()),
        "questions": len(qids),
        "counts": dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))),
        "metric": metric,
        "by_system": by_system,
        "per_question": flags,
    }


OPTIONAL_SECTIONS: list[OptionalSection] = [
    OptionalSection("answers", "Answer grades", load_answers),
    OptionalSection("audit", "Question audit", load_audit),
]
"""Sections drawn only when present; each loader returns None when its files are absent."""


def _attach_optional_to_questions(data: dict) -> None:
    """Move per-question parts of the optional sections onto the question records."""
    opt = data["optional"]
    answers = opt.get("answers")
    audit = opt.get("audit")
    by_q = answers.pop("per_question") if answers else {}
    flags = audit.pop("per_question") if audit else {}
    for q in data["questions"]:
        if q["id"] in by_q:
            q["model_answers"] = by_q[q["id"]]
        if q["id"] in flags:
            q["audit"] = flags[q["id"]]


# --------------------------------------------------------------------------- route diagram


def _route(data: dict, meta: dict) -> dict[str, Any]:
    """The steps the run actually took, lane by lane, for the diagram."""
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
    search = [
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
            "detail": f"{', '.join(retrievers) or 'retriever'}, top {meta.get('depth', 10)}",
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
    answers = data["optional"].get("answers")
    judges = answers["judges"] if answers else []
    answer = [
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
    lanes = [
        {"key": "search", "title": "Score the search", "start": 0, "branch": None, "steps": search},
        {"key": "answer", "title": "Grade the answer", "start": 3, "branch": 2, "steps": answer},
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


# --------------------------------------------------------------------------- charts


def _altair():
    try:
        import altair
    except ImportError:
        raise ReportDependencyError(
            "the HTML report needs altair and vl-convert-python: pip install 'ragmeter[report]'"
        ) from None
    return altair


def _vegalite_version(alt) -> str | None:
    """The Vega-Lite version altair writes (e.g. "6.4"), if the bundle can provide it."""
    try:
        import vl_convert
    except ImportError:
        raise ReportDependencyError(
            "the HTML report needs vl-convert-python: pip install 'ragmeter[report]'"
        ) from None
    major_minor = ".".join(str(alt.SCHEMA_VERSION).lstrip("v").split(".")[:2])
    available = list(vl_convert.get_vegalite_versions())
    if major_minor in available:
        return major_minor
    same_major = [v for v in available if v.split(".")[0] == major_minor.split(".")[0]]
    return same_major[-1] if same_major else None


def _vega_version() -> str:
    import vl_convert

    try:
        return str(vl_convert.get_vega_version())
    except Exception:  # an older vl-convert without the call
        return "bundled"


def _bundle_ok(js: str) -> bool:
    return "window.vegaEmbed" in js and len(js) > 100_000


@functools.cache
def vega_bundle(vl_version: str | None = None) -> str:
    """Vega, Vega-Lite and vega-embed as one script (from vl-convert), cached on disk.

    The bundle takes a few seconds to build, so it is kept under
    ``$XDG_CACHE_HOME/ragmeter`` (default ``~/.cache/ragmeter``) keyed by the
    vl-convert and Vega-Lite versions; any problem with the cache just rebuilds.
    """
    try:
        import vl_convert
    except ImportError:
        raise ReportDependencyError(
            "the HTML report needs vl-convert-python: pip install 'ragmeter[report]'"
        ) from None
    try:
        vlc_version = metadata.version("vl-convert-python")
    except metadata.PackageNotFoundError:
        vlc_version = "unknown"
    cache_root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    cache = cache_root / "ragmeter" / f"vega-bundle-{vlc_version}-{vl_version or 'default'}.js"
    try:
        js = cache.read_text(encoding="utf-8")
        if _bundle_ok(js):
            return js
    except OSError:
        pass
    js = (
        vl_convert.javascript_bundle(vl_version=vl_version)
        if vl_version
        else vl_convert.javascript_bundle()
    )
    try:
        atomic_write_text(cache, js)
    except OSError:
        pass
    return js


def chart_specs(data: dict, alt=None) -> dict[str, dict]:
    """Vega-Lite specifications (as dicts) for the page's charts, keyed by container id."""
    alt = alt or _altair()
    specs = {
        "chart-forest": _forest_chart(alt, data),
        "chart-words": _words_chart(alt, data),
        "chart-size": _size_chart(alt, data),
    }
    if data["comparisons"]:
        specs["chart-compare"] = _compare_chart(alt, data)
    return {k: v for k, v in specs.items() if v is not None}


def _fmt(est: dict, metric: str) -> str:
    if _is_share(metric):
        return f"{est['mean'] * 100:.1f} [{est['low'] * 100:.1f}, {est['high'] * 100:.1f}]"
    if _family(metric) == "words":
        return f"{est['mean']:.0f} [{est['low']:.0f}, {est['high']:.0f}]"
    return f"{est['mean']:.3f} [{est['low']:.3f}, {est['high']:.3f}]"


def _forest_chart(alt, data: dict) -> dict | None:
    rows = []
    systems = [s["name"] for s in data["systems"]]
    for s in systems:
        for m, e in data["estimates"][s].items():
            fam, k = _family(m), _k(m)
            if fam == "words" or k is None or fam not in FAMILY_TITLE:
                continue
            scale = 100 if _is_share(m) else 1
            rows.append(
                {
                    "system": s,
                    "metric": m,
                    "k": k,
                    "family": FAMILY_TITLE[fam],
                    "order": FAMILY_ORDER.index(fam),
                    "mean": e["mean"] * scale,
                    "low": e["low"] * scale,
                    "high": e["high"] * scale,
                    "label": _fmt(e, m),
                }
            )
    if not rows:
        return None
    ks = sorted({r["k"] for r in rows})
    main_k = data["main_k"] if data["main_k"] in ks else ks[-1]
    k = alt.param(
        name="k", value=main_k, bind=alt.binding_select(options=ks, name="k (top results) ")
    )
    base = alt.Chart().transform_filter("datum.k == k")
    y = alt.Y("system:N", sort=systems, title=None)
    tooltip = [
        alt.Tooltip("system:N"),
        alt.Tooltip("metric:N"),
        alt.Tooltip("label:N", title="mean [95% interval]"),
    ]
    rule = base.mark_rule(strokeWidth=2.5, color="#4c78a8").encode(
        x=alt.X("low:Q", title=None, scale=alt.Scale(zero=False)), x2="high:Q", y=y, tooltip=tooltip
    )
    point = base.mark_point(filled=True, size=70, color="#1d3f6e").encode(
        x="mean:Q", y=y, tooltip=tooltip
    )
    families = [FAMILY_TITLE[f] for f in FAMILY_ORDER if f != "words"]
    chart = (
        alt.layer(rule, point, data=alt.Data(values=rows))
        .properties(width=250, height=max(60, 24 * len(systems)))
        .facet(
            facet=alt.Facet(
                "family:N",
                sort=families,
                title=None,
                header=alt.Header(labelFontSize=13, labelFontWeight="bold"),
            ),
            columns=3,
        )
        .resolve_scale(x="independent")
        .add_params(k)
    )
    return chart.to_dict()


def _words_chart(alt, data: dict) -> dict | None:
    k = data["main_k"]
    hit, words = f"recall@{k}", f"words@{k}"
    rows = []
    for s in data["systems"]:
        e = data["estimates"][s["name"]]
        if hit in e and words in e:
            rows.append(
                {
                    "system": s["name"],
                    "hit": e[hit]["mean"] * 100,
                    "low": e[hit]["low"] * 100,
                    "high": e[hit]["high"] * 100,
                    "words": e[words]["mean"],
                    "label": _fmt(e[hit], hit),
                }
            )
    if not rows:
        return None
    base = alt.Chart(alt.Data(values=rows))
    x = alt.X(
        "words:Q",
        title=f"words sent to the model (mean, top {k})",
        scale=alt.Scale(zero=False, padding=30),
    )
    tooltip = [
        alt.Tooltip("system:N"),
        alt.Tooltip("label:N", title=f"{hit} [95% interval]"),
        alt.Tooltip("words:Q", title=f"words@{k}", format=".0f"),
    ]
    rule = base.mark_rule(strokeWidth=2, opacity=0.6).encode(
        x=x,
        y=alt.Y("low:Q", title=f"hit rate ({hit}, %)", scale=alt.Scale(zero=False)),
        y2="high:Q",
        color=alt.Color("system:N", legend=None),
        tooltip=tooltip,
    )
    point = base.mark_point(filled=True, size=80).encode(
        x=x, y="hit:Q", color=alt.Color("system:N", legend=None), tooltip=tooltip
    )
    text = base.mark_text(align="left", dx=8, dy=-8, fontSize=12).encode(
        x=x, y="hit:Q", text="system:N", color=alt.Color("system:N", legend=None)
    )
    return alt.layer(rule, point, text).properties(width=520, height=300).to_dict()


def _compare_chart(alt, data: dict) -> dict:
    metric = data["metric"]
    scale = 100 if _is_share(metric) else 1
    rows = []
    for c in data["comparisons"]:
        d = c["difference"]
        rows.append(
            {
                "pair": f"{c['a']} − {c['b']}",
                "mean": d["mean"] * scale,
                "low": d["low"] * scale,
                "high": d["high"] * scale,
                "verdict": c["verdict"],
                "kind": "separated" if c["separated"] else "tie (interval crosses 0)",
            }
        )
    pairs = [r["pair"] for r in rows]
    unit = "points" if scale == 100 else "difference"
    base = alt.Chart(alt.Data(values=rows))
    y = alt.Y("pair:N", sort=pairs, title=None)
    color = alt.Color(
        "kind:N",
        title=None,
        scale=alt.Scale(
            domain=["separated", "tie (interval crosses 0)"], range=["#1f5fbf", "#b0b0b0"]
        ),
        legend=alt.Legend(orient="top"),
    )
    tooltip = [
        alt.Tooltip("pair:N", title="A − B"),
        alt.Tooltip("mean:Q", format="+.2f"),
        alt.Tooltip("low:Q", format="+.2f"),
        alt.Tooltip("high:Q", format="+.2f"),
        alt.Tooltip("verdict:N"),
    ]
    x = alt.X("low:Q", title=f"A − B on {metric} ({unit}, paired interval of the table's rule)")
    rule = base.mark_rule(strokeWidth=2.5).encode(
        x=x, x2="high:Q", y=y, color=color, tooltip=tooltip
    )
    point = base.mark_point(filled=True, size=60).encode(
        x="mean:Q", y=y, color=color, tooltip=tooltip
    )
    zero = (
        alt.Chart(alt.Data(values=[{"zero": 0}]))
        .mark_rule(strokeDash=[4, 3], color="#333")
        .encode(x="zero:Q")
    )
    return (
        alt.layer(zero, rule, point).properties(width=560, height=max(60, 20 * len(rows))).to_dict()
    )


def _size_chart(alt, data: dict) -> dict | None:
    ss = data["sample_size"]
    rows, curve = [], []
    for r in ss["systems"]:
        if not r["rows"]:
            continue
        for row in r["rows"]:
            rows.append(
                {
                    "system": r["system"],
                    "n": row["n"],
                    "hw": row["half_width"] * 100,
                    "kind": "bootstrap",
                }
            )
        n0, h0 = r["n"], r["half_width"]
        if h0 is None or n0 < 1:
            continue
        top = max([row["n"] for row in r["rows"]] + [r["needed"] or 0]) * 1.25
        lo = max(2.0, n0 / 4)
        for i in range(25):
            n = lo * (top / lo) ** (i / 24)
            curve.append(
                {
                    "system": r["system"],
                    "n": round(n, 2),
                    "hw": h0 * 100 * math.sqrt(n0 / n),
                    "kind": "1/√n from the observed n",
                }
            )
    if not rows:
        return None
    target = ss["target"] * 100
    systems = [s["name"] for s in data["systems"]]
    x = alt.X("n:Q", scale=alt.Scale(type="log"), title="number of questions (log scale)")
    y = alt.Y("hw:Q", title=f"± half-width of the 95% interval on {ss['metric']} (points)")
    color = alt.Color(
        "system:N",
        sort=systems,
        title="system",
        legend=alt.Legend(symbolOpacity=1, symbolType="stroke"),
    )
    tooltip = [
        alt.Tooltip("system:N"),
        alt.Tooltip("n:Q", format=",.0f", title="questions"),
        alt.Tooltip("hw:Q", format=".2f", title="± points"),
    ]
    boot = (
        alt.Chart(alt.Data(values=rows))
        .mark_line(point=True)
        .encode(x=x, y=y, color=color, tooltip=tooltip)
    )
    sqrt = (
        alt.Chart(alt.Data(values=curve))
        .mark_line(strokeDash=[5, 4], opacity=0.55)
        .encode(x=x, y=y, color=color, detail="system:N")
    )
    rule = (
        alt.Chart(alt.Data(values=[{"hw": target}]))
        .mark_rule(color="#c0392b", strokeDash=[2, 2])
        .encode(y="hw:Q")
    )
    label = (
        alt.Chart(alt.Data(values=[{"hw": target, "text": f"target ± {target:g} points"}]))
        .mark_text(align="left", dy=-7, x=5, color="#c0392b")
        .encode(y="hw:Q", text="text:N")
    )
    return alt.layer(boot, sqrt, rule, label).properties(width=560, height=300).to_dict()


# --------------------------------------------------------------------------- assembly


def json_for_script(obj: Any) -> str:
    """JSON that is safe inside ``<script type="application/json">``.

    ``<``, ``>`` and ``&`` become ``\\u003c``, ``\\u003e``, ``\\u0026``, so no
    ``</script>`` or ``<!--`` can end or confuse the block; U+2028 and U+2029 are
    escaped for older JavaScript parsers. ``JSON.parse`` reads it back unchanged.
    """
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return (
        text.replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def _safe_inline_js(js: str) -> str:
    """Keep a script's text from closing or confusing the ``<script>`` element."""
    return (
        js.replace("</script", "<\\/script")
        .replace("<!--", "\\x3C!--")
        .replace("<script", "\\x3Cscript")
    )


def _asset(name: str) -> str:
    return (files("ragmeter.report") / _ASSETS / name).read_text(encoding="utf-8")


def _sha256(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode()


def _assemble(data: dict, bundle: str) -> str:
    import html as html_lib

    vega = _safe_inline_js(bundle)
    app = _safe_inline_js(_asset("report.js"))
    css = _asset("report.css").replace("</style", "<\\/style")
    csp = (
        "default-src 'none'; "
        f"script-src '{_sha256(vega)}' '{_sha256(app)}' 'unsafe-eval'; "
        "style-src 'unsafe-inline'; img-src data: blob:; font-src data:; "
        "base-uri 'none'; form-action 'none'"
    )
    page = _asset("template.html")
    parts = {
        "{{TITLE}}": html_lib.escape(data["title"]),
        "{{CSP}}": html_lib.escape(csp, quote=True),
        "{{CSS}}": css,
        "{{DATA}}": json_for_script(data),
        "{{VEGA}}": vega,
        "{{APP}}": app,
    }
    out = []
    rest = page
    # Substitute in one pass, in template order, so no value is scanned for placeholders.
    while True:
        hits = [(rest.find(k), k) for k in parts if rest.find(k) >= 0]
        if not hits:
            out.append(rest)
            break
        pos, key = min(hits)
        out.append(rest[:pos])
        out.append(parts[key])
        rest = rest[pos + len(key) :]
    return "".join(out)

"""The judge checked for position bias: a seeded sample of answers graded again in
another order.

``ragmeter grade --position-check N`` draws N answers (a seeded shuffle of the answers
the reader gave, :func:`position_sample`) and has each judge grade them again with the
answer's block before the reference's and a reference of several answer spans given
last span first (:func:`reversed_reference`; :data:`ragmeter.answers.prompts.SWAPPED_ORDER`).
Every other word of the prompt, and the sampling of rerun 0 (temperature, seed), is as
in the grade it is compared with, so a grade that changes changed with the order alone (or with the
judge's own noise, which test-retest measures when the judges are rerun). The calls go
through the same runner and reply cache as every judge call: a stopped check resumes,
and a repeated one costs nothing.

::

    answers/
      position.jsonl  each judge's grade of the sampled answers in the other order: a
                      grade record tied to the answer it graded by "answer_sha"
      meta.json       "position_check": the sample's size, seed and the order

:func:`position_checks` reads them back: per judge, its grades in the given order
against those in the other order (percent agreement and Cohen's kappa on correct-or-not
and on the three grades, the linearly weighted kappa, each with its interval:
:func:`ragmeter.answers.judges.compare_judges`), and how many grades changed.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ragmeter.answers.hand import sample_order
from ragmeter.answers.judges import (
    JudgePair,
    as_answer_set,
    compare_judges,
    interval_settings,
    run_confidence,
)
from ragmeter.answers.prompts import SWAPPED_ORDER, judge_request
from ragmeter.answers.reruns import Reruns
from ragmeter.answers.run import (
    DEFAULT_MAX_TOKENS,
    JudgeRun,
    Progress,
    grade_from_reply,
    judge_settings,
    question_map,
    runner_progress,
    shared_cache,
)
from ragmeter.answers.store import (
    GRADES,
    UNSCORED,
    AnswerSet,
    Grade,
    Key,
    answers_dir,
    jsonl_text,
    load_answer_set,
    read_meta,
    read_saved_lines,
    row_from_line,
    update_meta,
)
from ragmeter.errors import InputError
from ragmeter.files.io import atomic_write_text
from ragmeter.files.outputs import results_lock
from ragmeter.llm import Backend, CallSettings, ReplyCache, open_backend
from ragmeter.runs.results import Results, as_results

__all__ = [
    "GIVEN",
    "OTHER",
    "POSITION",
    "PositionCheck",
    "check_position_size",
    "position_check",
    "position_checks",
    "position_sample",
    "read_position",
    "reversed_reference",
]

POSITION = "position.jsonl"
GIVEN, OTHER = "given order", "other order"
"""The two sides of each :class:`PositionCheck`'s pair, as the tables name them."""


def position_sample(keys: Sequence[Key], n: int, seed: int) -> list[Key]:
    """``n`` of ``keys`` (all when fewer) drawn by the seeded shuffle the hand grades use
    (:func:`ragmeter.answers.hand.sample_order`), kept in ``keys``' order."""
    chosen = set(sample_order(list(keys), seed)[:n])
    return [k for k in keys if k in chosen]


def reversed_reference(res: Results, question: str) -> str:
    """The answer key in the other order: the question's answer spans, one per line, last
    first (:func:`ragmeter.answers.store.reference_text` gives them first first)."""
    for q in res.questions:
        if q.id == question:
            return "\n".join(span.text for span in reversed(q.answers))
    raise KeyError(question)


def check_position_size(n: Any) -> int:
    """The position check's sample size: a whole number of answers, 1 or more, else a
    one-line error (checked before any model call)."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise InputError(
            f"--position-check must be a whole number of answers, 1 or more, got {n!r}"
        )
    return n


def read_position(folder: Path) -> dict[tuple[str, str, str], Grade]:
    """The position check's grades by ``(judge, system, question)``; a later line wins."""
    path = folder / POSITION
    out: dict[tuple[str, str, str], Grade] = {}
    for lineno, obj in read_saved_lines(path):
        g = row_from_line(Grade, path, lineno, obj)
        if g.grade not in (*GRADES, UNSCORED):
            raise InputError(f"{path}:{lineno}: unknown grade {g.grade!r}")
        out[(g.judge, g.system, g.question)] = g
    return out


def _save_position(res: Results, label: str, grades: list[Grade], record: dict) -> None:
    """Replace ``label``'s rows of ``position.jsonl`` with ``grades``; other judges' rows
    stay while they were drawn by the same sample (size and seed), and ``record`` goes to
    ``meta.json``."""
    folder = answers_dir(res)
    with results_lock(res.path):
        before = read_meta(folder).get("position_check") or {}
        same = (before.get("n"), before.get("seed")) == (record["n"], record["seed"])
        kept = {key: g for key, g in read_position(folder).items() if same and g.judge != label}
        kept.update({(g.judge, g.system, g.question): g for g in grades})
        order = {s: i for i, s in enumerate(res.systems)}
        qorder = {q: i for i, q in enumerate(res.question_ids)}
        rows = sorted(
            kept.values(),
            key=lambda g: (g.judge, order.get(g.system, 0), qorder.get(g.question, 0)),
        )
        atomic_write_text(folder / POSITION, jsonl_text(rows))
        update_meta(folder, position_check=record)


def position_check(
    results: Results | str | Path,
    judges: str | Backend | CallSettings | Sequence[str | Backend | CallSettings],
    *,
    n: int,
    seed: int | None = None,
    progress: Progress | None = None,
    **call: Any,
) -> list[JudgeRun]:
    """Have each judge grade a seeded sample of ``n`` answers again in the other order.

    ``judges`` and ``call`` are as for :func:`ragmeter.answers.run.grade_answers`;
    ``seed`` (default: the run's, ``[stats] seed``) draws the sample, recorded with its
    size in ``meta.json``. Only answers the reader gave are drawn. Returns one
    :class:`~ragmeter.answers.run.JudgeRun` per judge with its grades in the other order.
    """
    res = as_results(results)
    check_position_size(n)
    seed = res.summary.seed if seed is None else seed
    settings = judge_settings(res, judges, call)
    aset = load_answer_set(res)
    keys = [k for k in aset.ordered_keys() if aset.answers[k].ok]
    if not keys:
        raise InputError(
            f"{answers_dir(res) / 'reader.jsonl'}: no answers to check; run `ragmeter answer "
            f"{res.path} --reader SPEC` first"
        )
    sample = [aset.answers[k] for k in position_sample(keys, n, seed)]
    reruns = Reruns.from_meta(aset.meta.get("grade_reruns")) or Reruns()
    questions = question_map(res)
    refs = {a.question: reversed_reference(res, a.question) for a in sample}
    record = {"n": n, "seed": seed, "sampled": len(sample), "order": SWAPPED_ORDER}
    out = []
    with contextlib.ExitStack() as stack:
        opened: dict[Any, ReplyCache] = {}
        for judge in settings:
            judge = shared_cache(judge, opened, stack)
            tokens = judge.tokens(DEFAULT_MAX_TOKENS)
            requests = [
                reruns.request(
                    "judge",
                    judge_request(
                        questions[a.question].text, refs[a.question], a.answer, tokens, True
                    ),
                    0,
                )
                for a in sample
            ]
            run = _run(judge, sample, requests, progress)
            _save_position(res, run.judge, run.grades, record)
            out.append(run)
    return out


def _run(judge: CallSettings, sample: Iterable, requests: list, progress: Any) -> JudgeRun:
    """Send one judge the reordered requests; its grades of ``sample``."""
    started = time.perf_counter()
    with open_backend(judge) as calls:
        runner = calls.runner(runner_progress(progress, f"{judge.label} (order)"))
        replies = runner.run(requests)
    seconds = time.perf_counter() - started
    grades = [grade_from_reply(judge.label, a, r) for a, r in zip(sample, replies, strict=True)]
    return JudgeRun(judge.label, grades, runner.stats, seconds)


# --- the two orders compared ---------------------------------------------------------------


@dataclass(frozen=True)
class PositionCheck:
    """One judge's grades of the sampled answers in the given order and in the other.

    ``pair`` compares them (``a`` the given order, ``b`` the other: :data:`GIVEN`,
    :data:`OTHER`) over the answers graded in both, unscored left out; ``changed``
    counts the answers whose grade changed, ``sampled`` the answers drawn, ``n`` and
    ``seed`` the sample asked for (``meta.json``'s ``position_check``).
    """

    judge: str
    pair: JudgePair
    sampled: int
    n: int
    seed: int
    order: str = SWAPPED_ORDER

    @property
    def changed(self) -> int:
        return len(self.pair.differ)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["pair"] = self.pair.to_dict()
        out["changed"] = self.changed
        return out


def position_checks(
    results: Results | str | Path | AnswerSet,
    seed: int | None = None,
    rounds: int | None = None,
) -> list[PositionCheck]:
    """Each judge's position check of the current answers, in the answer set's judge
    order; empty when ``grade --position-check`` has not run. A grade of an answer that
    has changed since is left out. ``seed`` and ``rounds`` (the intervals', default the
    run's) are not the sample's seed, which ``meta.json`` records."""
    aset = as_answer_set(results)
    record = aset.meta.get("position_check")
    if not isinstance(record, dict):
        return []
    seed, rounds = interval_settings(aset.results, seed, rounds)
    conf = run_confidence(aset.results)
    saved = read_position(aset.folder)
    out = []
    for judge in aset.judges:
        other = {
            (s, q): g.grade
            for (j, s, q), g in saved.items()
            if j == judge and (s, q) in aset.answers and g.answer_sha == aset.answers[(s, q)].sha
        }
        if not other:
            continue
        given = aset.labels(judge, other)
        pair = compare_judges(given, other, GIVEN, OTHER, rounds, seed, conf)
        out.append(
            PositionCheck(
                judge,
                pair,
                int(record.get("sampled", len(other))),
                int(record.get("n", len(other))),
                int(record.get("seed", 0)),
                str(record.get("order", SWAPPED_ORDER)),
            )
        )
    return out

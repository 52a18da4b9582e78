"""The spend before any call: ``ragmeter plan --answers`` as a library call.

For a results directory, :func:`plan_answers` says how many questions and reruns reach
a target half-width on the answer accuracy or separate a paired difference between
two systems (:mod:`ragmeter.stats.answer_plan`, on the components measured on the
answers graded so far, the pilot, else assumed), whether another rerun or more
questions buy more for the same spend, and for each option the model calls, the
prompt and completion tokens and the money at ``[prices]``
(:mod:`ragmeter.inputs.prices`). Nothing is called.

* **Prompt tokens** are counted on the prompts the reader and the judges would get:
  the reader's is built from each question and its top ``k`` items
  (:func:`ragmeter.answers.prompts.reader_request`, exactly as ``answer`` builds it),
  the judge's from the question, its answer key and the answer recorded (a question
  not answered yet: the prompt with the answer left out, plus the reader's completion
  tokens). They are counted with the model's tokenizer where ragmeter has it
  (``gguf:``), else estimated, and the plan says which (:mod:`ragmeter.llm.tokens`).
* **Completion tokens** are the mean of the answers and grades recorded (the pilot's),
  else ``max_tokens``, an upper bound, and the plan says so.
* **Calls** per system and question: the reader once, or K times when it is rerun; each
  judge K times (each of the K answers graded once, or one answer graded K times).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ragmeter.answers.flips import rerun_scores
from ragmeter.answers.judges import accuracy_judge
from ragmeter.answers.prompts import judge_request, reader_request
from ragmeter.answers.rerun_store import read_answer_reruns, read_grade_reruns
from ragmeter.answers.reruns import Reruns, rerun_settings
from ragmeter.answers.run import top_passages
from ragmeter.answers.store import (
    UNSCORED,
    AnswerSet,
    as_answer_set,
    reference_text,
)
from ragmeter.defaults import DEFAULTS
from ragmeter.errors import InputError
from ragmeter.inputs.prices import Prices, read_prices
from ragmeter.llm.tokens import TokenCounter, token_counter
from ragmeter.runs.results import Results
from ragmeter.scoring.metrics import check_k
from ragmeter.stats.answer_plan import (
    ASSUMED_JUDGE_DISAGREEMENT,
    MIN_HAND_PAIRS,
    NoiseModel,
    RerunOrQuestion,
    assumed_noise,
    assumed_table,
    hand_grades_for_half_width,
    noise_of,
    predicted_corrected_half_width,
    predicted_half_width,
    questions_for_half_width,
    questions_to_separate,
    rerun_or_question,
    widest,
)
from ragmeter.stats.planning import family_level

__all__ = ["AnswerPlan", "HandNeed", "PlanOption", "RoleTokens", "plan_answers", "run_usage"]

DEFAULT_MAX_TOKENS = 256
"""The reply cap ``answer`` and ``grade`` use unless told (``--max-tokens``)."""

PLANNED_RERUNS = (1, 2, 3, 5)
"""The reruns the plan's options are worked out at (with the run's own)."""


@dataclass(frozen=True)
class RoleTokens:
    """One role's tokens per call (means over its calls): ``prompt`` counted as
    ``prompt_how`` says, ``completion`` as ``completion_how`` says."""

    role: str
    model: str
    prompt: float
    completion: float
    prompt_how: str
    completion_how: str
    prompt_exact: bool
    completion_measured: bool


@dataclass(frozen=True)
class PlanOption:
    """One way to spend: ``questions`` per system at ``reruns`` each, for ``systems``
    systems; the accuracy's predicted half-width; calls, tokens and money in all."""

    label: str
    questions: int
    reruns: int
    half_width: float
    reader_calls: int
    judge_calls: int
    prompt_tokens: int
    completion_tokens: int
    money: float | None

    @property
    def calls(self) -> int:
        return self.reader_calls + self.judge_calls


@dataclass(frozen=True)
class HandNeed:
    """The hand grades per system for the judge-corrected accuracy of ``questions``
    answers to reach the target (``grades``; ``None``: the judge's own noise is wider
    than the target, so more questions come first), the half-width ``grade`` is then
    predicted to print (``half_width``), the hand x judge shares ``table[hand][judge]``
    the prediction rests on, with the population variance of ``hand - judge`` over
    them (``rectifier``), and where they come from."""

    questions: int
    grades: int | None
    rectifier: float
    source: str
    table: list[list[float]] = field(default_factory=list)
    half_width: float | None = None


@dataclass(frozen=True)
class AnswerPlan:
    """What :func:`plan_answers` found (see the module docstring)."""

    results: str
    systems: list[str]
    questions: int
    reruns: Reruns
    judges: list[str]
    reader: RoleTokens
    judge: RoleTokens
    noise: NoiseModel
    pair_noise: NoiseModel | None
    half_width: float
    difference: float
    confidence: float
    alpha: float
    pairs: int
    options: list[PlanOption]
    choice: RerunOrQuestion
    prices: Prices | None = None
    notes: list[str] = field(default_factory=list)
    hand: HandNeed | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain dict (JSON-ready)."""
        out = asdict(self)
        out["reruns"] = self.reruns.to_meta()
        for option, row in zip(self.options, out["options"], strict=True):
            row["calls"] = option.calls
        return out


def _mean(values: Sequence[float]) -> float:
    return float(np.mean(values)) if len(values) else 0.0


def _reader_tokens(
    res: Results, pairs: list[tuple[str, str]], k: int, counter: TokenCounter
) -> list[int]:
    """Each (system, question)'s reader prompt, counted."""
    questions = {q.id: q for q in res.questions}
    return [
        counter.count(reader_request(questions[q].text, top_passages(res, s, q, k)).prompt or "")
        for s, q in pairs
    ]


def plan_answers(
    results: AnswerSet | Results | str | Path,
    *,
    reader: str | None = None,
    judges: Sequence[str] | None = None,
    options: dict[str, Any] | None = None,
    k: int | None = None,
    max_tokens: int | None = None,
    systems: Sequence[str] | None = None,
    limit: int | None = None,
    half_width: float = DEFAULTS.half_width,
    difference: float = DEFAULTS.difference,
    power: float = DEFAULTS.power,
    prices: Prices | str | Path | None = None,
    **reruns: Any,
) -> AnswerPlan:
    """The plan for answering and grading ``results`` (see the module docstring).

    ``reader`` and ``judges`` are model specs (default: those the answers were made and
    graded with; ``gguf:PATH`` is counted with its tokenizer), ``options`` their backend
    options (``chat_format``). ``k``, ``max_tokens``, ``systems`` and ``limit`` are
    ``answer``'s; ``reruns`` takes ``reruns``, ``reruns_of``, ``temperature`` and
    ``top_p`` as :func:`ragmeter.answers.reruns.rerun_settings` does (default: the run's
    config, else what was recorded). ``prices``: a :class:`Prices`, a TOML file with
    ``[prices]``, or ``None`` for the run's ``config.toml``. ``results`` may be the
    pilot's :class:`AnswerSet` already read.
    """
    aset = as_answer_set(results)  # the pilot, read once
    res = aset.results
    meta = aset.meta
    settings = rerun_settings(res, recorded=meta.get("answer_reruns"), **reruns)
    k = check_k(k if k is not None else aset.k, depth=res.meta.depth)  # the pilot's k
    names = _chosen_systems(res, systems)
    qids = res.question_ids if limit is None else res.question_ids[: _check_limit(limit)]
    reader = reader or meta.get("reader")
    judges = list(judges or meta.get("judges") or [reader or ""])
    if prices is None or isinstance(prices, str | Path):
        prices = read_prices(prices if prices is not None else res.path / "config.toml")
    keys = [(s, q) for s in names for q in qids]
    counters: dict[str | None, TokenCounter] = {}  # the reader and judges: often one model

    def counter(spec: str | None) -> TokenCounter:
        if spec not in counters:
            counters[spec] = token_counter(spec, options)
        return counters[spec]

    reader_side = _reader_side(aset, keys, k, reader, counter(reader), max_tokens)
    judge_side = _judge_side(aset, keys, [(j, counter(j)) for j in judges], max_tokens, reader_side)
    noise, pair_noise, notes = _noise(aset, names, settings.k)
    alpha = res.summary.alpha
    pairs = len(names) * (len(names) - 1) // 2
    cost = _Cost(len(names), len(judges), settings, reader_side, judge_side, prices)
    plan_inputs = (noise, pair_noise, half_width, difference, power, alpha, pairs)
    opts = _options(cost, len(qids), settings.k, res.summary.confidence, plan_inputs)
    choice = rerun_or_question(
        noise, len(qids), settings.k, cost.money if prices else cost.calls,
        res.summary.confidence,
    )  # fmt: skip
    hand = _hand_need(aset, names, noise, len(qids), half_width, res.summary.confidence)
    return AnswerPlan(
        str(res.path), names, len(qids), settings, judges, reader_side, judge_side, noise,
        pair_noise, half_width, difference, res.summary.confidence, alpha, pairs, opts, choice,
        prices, notes, hand,
    )  # fmt: skip


def _chosen_systems(res: Results, systems: Sequence[str] | None) -> list[str]:
    if systems is None:
        return list(res.systems)
    names = [s.strip() for s in systems if s.strip()]
    for name in names:
        if name not in res.systems:
            raise InputError(
                f"unknown system {name!r} in {res.path}; choose from {', '.join(res.systems)}"
            )
    return names or list(res.systems)


def _check_limit(limit: int) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise InputError(f"--limit must be a whole number of at least 1, got {limit!r}")
    return limit


def _completions(rows: Sequence[Any]) -> list[int]:
    return [r.tokens_out for r in rows if r.error is None and r.tokens_out > 0]


def _reader_side(
    aset: AnswerSet, keys, k, reader: str | None, counter: TokenCounter, max_tokens
) -> RoleTokens:
    prompts = _reader_tokens(aset.results, keys, k, counter)
    recorded = [*aset.answers.values(), *read_answer_reruns(aset.folder).values()]
    done = _completions(recorded)
    cap = max_tokens or int(aset.meta.get("reader_max_tokens") or DEFAULT_MAX_TOKENS)
    return RoleTokens(
        "reader",
        reader or "(no reader named)",
        _mean(prompts),
        _mean(done) if done else float(cap),
        counter.how,
        f"mean of {len(done):,} recorded answers" if done else f"at most: max tokens {cap}",
        counter.exact,
        bool(done),
    )


def _judge_side(
    aset: AnswerSet, keys, judges: list[tuple[str, TokenCounter]], max_tokens, reader_side
) -> RoleTokens:
    """The judges' tokens per call, averaged over the judges (each judge counted with its
    own tokenizer) and over the answers; an answer not made yet counts the reader's
    completion tokens in the judge's prompt."""
    res = aset.results
    questions = {q.id: q for q in res.questions}
    references = {q: reference_text(res, q) for q in {q for _, q in keys}}
    per_judge, exact, how = [], True, ""
    for _, counter in judges:
        exact, how = exact and counter.exact, how or counter.how
        counts = []
        for s, q in keys:
            made = aset.answers.get((s, q))
            answer = made.answer if made is not None and made.ok else ""
            prompt = judge_request(questions[q].text, references[q], answer).prompt or ""
            extra = 0.0 if made is not None and made.ok else reader_side.completion
            counts.append(counter.count(prompt) + extra)
        per_judge.append(_mean(counts))
    graded = [g for by_key in aset.grades.values() for g in by_key.values()]
    done = _completions([*graded, *read_grade_reruns(aset.folder).values()])
    cap = max_tokens or int(aset.meta.get("judge_max_tokens") or DEFAULT_MAX_TOKENS)
    return RoleTokens(
        "judge",
        ", ".join(j for j, _ in judges if j) or "(no judge named)",
        _mean(per_judge),
        _mean(done) if done else float(cap),
        how,
        f"mean of {len(done):,} recorded grades" if done else f"at most: max tokens {cap}",
        exact,
        bool(done),
    )


def _noise(
    aset: AnswerSet, names: list[str], k: int
) -> tuple[NoiseModel, NoiseModel | None, list[str]]:
    """The accuracy's components (the noisiest system's) and the paired differences'
    (the noisiest pair's), measured on the answers graded so far, else assumed."""
    notes: list[str] = []
    if not any(aset.grades.values()):
        notes.append("no answers graded yet: noise assumed (50% accuracy)")
        pair = assumed_noise("difference") if len(names) > 1 else None
        return assumed_noise(), pair, notes
    scores = rerun_scores(aset, systems=names).scores
    noise = widest([noise_of(scores[s]) for s in names], k)
    if len(names) < 2:
        return noise, None, notes
    pairs = [noise_of(scores[a] - scores[b]) for a, b in itertools.combinations(names, 2)]
    return noise, widest(pairs, k), notes


def _hand_need(
    aset: AnswerSet, names: list[str], noise: NoiseModel, n: int, target: float, conf: float
) -> HandNeed:
    """Hand grades for the judge-corrected accuracy, predicted by the rule ``grade``
    prints it with (:func:`ragmeter.stats.answer_plan.hand_grades_for_half_width`), on
    the hand x judge table of the answers graded both ways (correct 1, otherwise 0, as
    accuracy counts; unscored left out, as ``grade`` leaves them), else assumed."""
    judge = accuracy_judge(aset) if aset.grades else None
    grades = aset.grades.get(judge or "", {})
    both = [
        (int(h.hand == "correct"), int(grades[key].grade == "correct"))
        for key, h in aset.hand.items()
        if key in grades and key[0] in names and UNSCORED not in (h.hand, grades[key].grade)
    ]
    if len(both) >= MIN_HAND_PAIRS:
        table = np.zeros((2, 2))
        for hand, by_judge in both:
            table[hand, by_judge] += 1
        source = f"measured on {len(both)} answers graded by hand and by {judge}"
    else:
        table = assumed_table()
        source = (
            f"assumed: the judge disagrees with a person on {ASSUMED_JUDGE_DISAGREEMENT:.0%} "
            "of answers"
        )
    shares = table / table.sum()
    need = hand_grades_for_half_width(noise.total, shares, n, target, conf)
    half = (
        None if need is None else predicted_corrected_half_width(shares, noise.total, n, need, conf)
    )
    rectifier = float(shares[1, 0] + shares[0, 1] - (shares[1, 0] - shares[0, 1]) ** 2)
    return HandNeed(n, need, rectifier, source, shares.tolist(), half)


@dataclass(frozen=True)
class _Cost:
    """Calls, tokens and money of ``n`` questions per system at ``k`` reruns."""

    systems: int
    judges: int
    settings: Reruns
    reader: RoleTokens
    judge: RoleTokens
    prices: Prices | None

    def counts(self, n: int, k: int) -> tuple[int, int]:
        reader = self.systems * n * (k if self.settings.reruns("reader") else 1)
        return reader, self.systems * n * k * self.judges

    def calls(self, n: int, k: int) -> float:
        return float(sum(self.counts(n, k)))

    def tokens(self, n: int, k: int) -> tuple[int, int]:
        r, j = self.counts(n, k)
        prompt = r * self.reader.prompt + j * self.judge.prompt
        return round(prompt), round(r * self.reader.completion + j * self.judge.completion)

    def money(self, n: int, k: int) -> float:
        if self.prices is None:
            return 0.0
        r, j = self.counts(n, k)
        return self.prices.cost(
            "reader", r * self.reader.prompt, r * self.reader.completion
        ) + self.prices.cost("judge", j * self.judge.prompt, j * self.judge.completion)

    def option(self, label: str, n: int, k: int, half_width: float) -> PlanOption:
        r, j = self.counts(n, k)
        prompt, completion = self.tokens(n, k)
        money = self.money(n, k) if self.prices is not None else None
        return PlanOption(label, n, k, half_width, r, j, prompt, completion, money)


def _options(cost: _Cost, n: int, k: int, confidence: float, inputs: tuple) -> list[PlanOption]:
    """The run as set, then at each planned rerun count the questions for the target
    half-width and (two systems or more) to separate the difference in the family."""
    noise, pair_noise, half_width, difference, power, alpha, pairs = inputs
    out = [cost.option("as set", n, k, predicted_half_width(noise, n, k, confidence))]
    for reruns in sorted({*PLANNED_RERUNS, k}):
        need = questions_for_half_width(noise, reruns, half_width, confidence)
        hw = predicted_half_width(noise, need, reruns, confidence)
        out.append(cost.option("half-width", need, reruns, hw))
    if pair_noise is not None:
        level = family_level(pairs, alpha)
        for reruns in sorted({*PLANNED_RERUNS, k}):
            need = questions_to_separate(pair_noise, reruns, difference, level, power)
            hw = predicted_half_width(noise, need, reruns, confidence)
            out.append(cost.option("difference", need, reruns, hw))
    return out


def run_usage(results: AnswerSet | Results | str | Path) -> dict[str, int]:
    """What the answers and grades recorded used: ``reader_calls``, ``judge_calls``,
    ``prompt_tokens`` and ``completion_tokens`` (from each reply's ``usage``), over every
    rerun; what a plan's "as set" option is checked against."""
    aset = as_answer_set(results)
    folder = aset.folder
    answers = [*aset.answers.values(), *read_answer_reruns(folder).values()]
    grades = [
        *(g for by_key in aset.grades.values() for g in by_key.values()),
        *read_grade_reruns(folder).values(),
    ]
    rows = [*answers, *grades]
    return {
        "reader_calls": sum(1 for a in answers if a.error is None),
        "judge_calls": len(grades),
        "prompt_tokens": sum(r.tokens_in for r in rows),
        "completion_tokens": sum(r.tokens_out for r in rows),
    }

"""Grade a seeded random sample of answers by hand, in the terminal.

The answers are put in a random order by ``random.Random(seed).shuffle`` (over
the answers in results order: systems, then questions) and shown one at a time:
the question, the answer and the reference passage, but not the judges'
grades. The person types ``c`` (correct), ``p`` (partial), ``w`` (wrong), ``s``
(skip: the next answer in the order takes its place) or ``q`` (stop; the next
run resumes). Each key is appended to ``answers/hand.jsonl`` and synced to disk
before the next answer is shown; answers already graded or skipped are not
shown again. ``n`` is the number of hand-graded answers wanted in all.

Answers a judge graded correct while their number changed or was left out
(:func:`ragmeter.answers.failure_counts.leniency_flags`) come first, in the same
seeded order among themselves, unless ``flagged_first=False``. Hand grades taken
that way are not a random sample: the judge-corrected accuracy reads the hand
grades as one, so grade with ``flagged_first=False`` for that number.

The library keeps the sample, the order and the saving; showing an answer and
reading a key is the caller's ``ask`` (the terminal loop is
:func:`ragmeter.cli.answer_views.grade_by_hand`).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from ragmeter.answers.failure_counts import leniency_flags
from ragmeter.answers.store import (
    AnswerSet,
    HandGrade,
    Key,
    append_hand,
    load_answer_set,
    reference_text,
    update_meta,
    write_merged,
)
from ragmeter.defaults import DEFAULTS
from ragmeter.errors import InputError
from ragmeter.runs.results import Results

__all__ = [
    "CHOICES",
    "KEYS",
    "HandItem",
    "HandRun",
    "flagged_first_order",
    "hand_grade",
    "parse_key",
    "sample_order",
]

KEYS = {
    "c": "correct",
    "correct": "correct",
    "p": "partial",
    "partial": "partial",
    "w": "wrong",
    "wrong": "wrong",
    "s": "skip",
    "skip": "skip",
    "q": "quit",
    "quit": "quit",
}
CHOICES = ("correct", "partial", "wrong", "skip", "quit")
PROMPT = "grade: [c]orrect  [p]artial  [w]rong  [s]kip  [q]uit > "


def parse_key(line: str) -> str | None:
    """The choice a typed line stands for (one of :data:`CHOICES`), or None."""
    return KEYS.get(line.strip().lower())


@dataclass(frozen=True)
class HandItem:
    """One answer to grade by hand: what the person sees (never the judges' grades).

    ``position`` counts from 1 up to ``target`` (the sample size, at most the
    number of answers).
    """

    system: str
    question: str
    question_text: str
    answer: str
    reference: str
    position: int
    target: int


@dataclass(frozen=True)
class HandRun:
    """What one :func:`hand_grade` call did.

    ``graded`` and ``skipped`` count this run's keys; ``total`` is the
    number of answers hand-graded so far (all runs); ``stopped`` is True
    when the person typed ``q`` (or the input ended) before reaching ``target``.
    """

    seed: int
    target: int
    graded: int
    skipped: int
    total: int
    stopped: bool
    available: int
    flagged: int = 0

    @property
    def remaining(self) -> int:
        return max(0, min(self.target, self.available) - self.total)


def sample_order(keys: list[Key], seed: int) -> list[Key]:
    """``keys`` in the seeded random order the hand grades walk through."""
    order = list(keys)
    random.Random(seed).shuffle(order)
    return order


def flagged_first_order(order: list[Key], flagged: set[Key]) -> list[Key]:
    """``order`` with the ``flagged`` keys moved to the front, each part keeping its order."""
    return [k for k in order if k in flagged] + [k for k in order if k not in flagged]


def hand_grade(
    results: Results | str | Path,
    n: int = 20,
    seed: int = DEFAULTS.seed,
    *,
    ask: Callable[[HandItem], str],
    flagged_first: bool = True,
) -> HandRun:
    """Hand each sampled answer to ``ask`` and save the choice it returns at once.

    ``ask(item)`` returns one of :data:`CHOICES`; ``"quit"`` stops (the next call
    resumes), ``"skip"`` lets the next answer in the order take this one's place.
    Each grade is appended to ``answers/hand.jsonl`` (one line, synced, under the
    results lock) before the next answer is shown; ``answers/answers.jsonl``, the
    merged view, is rewritten once when the loop ends, however it ends. With
    ``flagged_first`` the answers a judge passed although their number changed or was
    left out come first (``HandRun.flagged`` counts them).
    """
    if n < 1:
        raise InputError("--n must be at least 1")
    aset = load_answer_set(results)
    keys = [k for k in aset.ordered_keys() if aset.answers[k].ok]
    if not keys:
        raise InputError(f"{aset.folder}: no answers to grade; run `ragmeter answer` first")
    folder = aset.folder
    order = sample_order(keys, seed)
    flagged: set[Key] = set()
    described = "random.Random(seed).shuffle"
    if flagged_first:
        flagged = leniency_flags(aset) & set(keys)
        order = flagged_first_order(order, flagged)
        described = (
            "judge-passed answers with a changed or left-out number first, then " + described
        )
    update_meta(folder, hand={"seed": seed, "n": n, "order": described})
    texts = {q.id: q.text for q in aset.results.questions}
    pending = [k for k in order if k not in aset.hand_seen]
    counts = {"graded": 0, "skipped": 0, "total": len(aset.hand)}
    stopped = False
    try:
        stopped = _grade_in_order(aset, pending, n, seed, texts, len(keys), ask, counts)
    finally:
        # each grade went to hand.jsonl as one line when it was given; the merged view
        # (answers.jsonl) is rewritten once, however the loop ended
        if counts["graded"] or counts["skipped"]:
            write_merged(aset.results)
    return HandRun(
        seed=seed,
        target=n,
        graded=counts["graded"],
        skipped=counts["skipped"],
        total=counts["total"],
        stopped=stopped,
        available=len(keys),
        flagged=len(flagged),
    )


def _grade_in_order(
    aset: AnswerSet,
    pending: list[Key],
    n: int,
    seed: int,
    texts: dict[str, str],
    available: int,
    ask: Callable[[HandItem], str],
    counts: dict[str, int],
) -> bool:
    """Ask for each pending answer's grade and append it (one line, under the results
    lock) before the next is shown; ``counts`` is kept current. True when stopped."""
    for key in pending:
        if counts["total"] >= n:
            break
        answer = aset.answers[key]
        item = HandItem(
            system=key[0],
            question=key[1],
            question_text=texts[key[1]],
            answer=answer.answer or "",
            reference=reference_text(aset.results, key[1]),
            position=counts["total"] + 1,
            target=min(n, available),
        )
        choice = ask(item)
        if choice not in CHOICES:
            raise ValueError(f"ask returned {choice!r}, not one of {', '.join(CHOICES)}")
        if choice == "quit":
            return True
        append_hand(
            aset.folder,
            HandGrade(
                system=key[0],
                question=key[1],
                hand=choice,
                answer_sha=answer.sha,
                seed=seed,
                at=datetime.now(UTC).isoformat(timespec="seconds"),
            ),
        )
        if choice == "skip":
            counts["skipped"] += 1
        else:
            counts["graded"] += 1
            counts["total"] += 1
    return False

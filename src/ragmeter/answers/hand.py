"""Grade a seeded random sample of answers by hand, in the terminal.

The answers are put in a random order by ``random.Random(seed).shuffle`` (over
the answers in results order: systems, then questions) and shown one at a time:
the question, the answer and the reference passage, but not the judges'
grades. The person types ``c`` (correct), ``p`` (partial), ``w`` (wrong), ``s``
(skip: the next answer in the order takes its place) or ``q`` (stop; the next
run resumes). Each key is appended to ``answers/hand.jsonl`` and synced to disk
before the next answer is shown; answers already graded or skipped are not
shown again. ``n`` is the number of hand-graded answers wanted in all.
"""

from __future__ import annotations

import random
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO

from rich.console import Console
from rich.panel import Panel
from rich.text import Text

from ragmeter.answers.run import reference_text
from ragmeter.answers.store import (
    AnswerSet,
    HandGrade,
    Key,
    append_hand,
    load_answer_set,
    update_meta,
    write_merged,
)
from ragmeter.errors import InputError
from ragmeter.results import Results

__all__ = ["HandRun", "KEYS", "hand_grade", "sample_order"]

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
PROMPT = "grade: [c]orrect  [p]artial  [w]rong  [s]kip  [q]uit > "


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

    @property
    def remaining(self) -> int:
        return max(0, min(self.target, self.available) - self.total)


def _is_terminal(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def sample_order(keys: list[Key], seed: int) -> list[Key]:
    """``keys`` in the seeded random order the hand grades walk through."""
    order = list(keys)
    random.Random(seed).shuffle(order)
    return order


def _show(console: Console, aset: AnswerSet, key: Key, position: int, target: int) -> None:
    res = aset.results
    system, qid = key
    question = next(q for q in res.questions if q.id == qid)
    body = Text()
    body.append("Question: ", style="bold")
    body.append(question.text + "\n\n")
    body.append("Answer: ", style="bold")
    body.append((aset.answers[key].answer or "(empty)") + "\n\n")
    body.append("Reference passage:\n", style="bold")
    body.append(reference_text(res, qid))
    console.print(Panel(body, title=Text(f"{position}/{target}  {qid}"), title_align="left"))


def hand_grade(
    results: Results | str | Path,
    n: int = 20,
    seed: int = 1,
    input: TextIO | None = None,
    console: Console | None = None,
) -> HandRun:
    """Show sampled answers one at a time and save each typed grade as it comes.

    Reads lines from ``input`` (default ``sys.stdin``); an unknown key is asked
    again, the end of input counts as ``q``. Rewrites ``answers/answers.jsonl``
    after every grade, so the merged view always holds the hand grades.
    """
    if n < 1:
        raise InputError("--n must be at least 1")
    stream = input if input is not None else sys.stdin
    out = console or Console()
    aset = load_answer_set(results)
    keys = [k for k in aset.ordered_keys() if aset.answers[k].ok]
    if not keys:
        raise InputError(f"{aset.folder}: no answers to grade; run `ragmeter answer` first")
    folder = aset.folder
    update_meta(folder, hand={"seed": seed, "n": n, "order": "random.Random(seed).shuffle"})
    total = len(aset.hand)
    graded = skipped = 0
    stopped = False
    pending = [k for k in sample_order(keys, seed) if k not in aset.hand_seen]
    for key in pending:
        if total >= n:
            break
        _show(out, aset, key, total + 1, min(n, len(keys)))
        choice = None
        while choice is None:
            out.print(PROMPT, end="", markup=False, highlight=False)
            line = stream.readline()
            if line == "":  # end of input: stop, resume later
                out.print()
                choice = "quit"
                break
            if not _is_terminal(stream):
                out.print(line.strip(), markup=False, highlight=False)  # echo what was read
            choice = KEYS.get(line.strip().lower())
            if choice is None:
                out.print(Text(f"'{line.strip()}' is not a grade: type c, p, w, s or q"))
        if choice == "quit":
            stopped = True
            break
        answer = aset.answers[key]
        append_hand(
            folder,
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
            skipped += 1
        else:
            graded += 1
            total += 1
        write_merged(aset.results)
    return HandRun(
        seed=seed,
        target=n,
        graded=graded,
        skipped=skipped,
        total=total,
        stopped=stopped,
        available=len(keys),
    )

"""The hand-grading loop's terminal side: an answer in a panel, a key read from a stream.

:func:`grade_by_hand` drives :func:`ragmeter.answers.hand_grade` (which samples,
orders and saves) with :func:`terminal_ask` as its ``ask`` callback.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from rich.console import Console
from rich.panel import Panel
from rich.text import Text

from ragmeter.answers.hand import PROMPT, HandItem, HandRun, hand_grade, parse_key
from ragmeter.answers.store import HAND_BUILT, stale_hand_files
from ragmeter.defaults import DEFAULTS

__all__ = ["grade_by_hand", "print_stale_after_hand_grading", "show_hand_item", "terminal_ask"]


def _is_terminal(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def show_hand_item(console: Console, item: HandItem) -> None:
    """The question, the answer and the reference passage in a panel (no judges' grades)."""
    body = Text()
    body.append("Question: ", style="bold")
    body.append(item.question_text + "\n\n")
    body.append("Answer: ", style="bold")
    body.append((item.answer or "(empty)") + "\n\n")
    body.append("Reference passage:\n", style="bold")
    body.append(item.reference)
    title = Text(f"{item.position}/{item.target}  {item.question}")
    console.print(Panel(body, title=title, title_align="left"))


def terminal_ask(console: Console, stream: TextIO) -> Callable[[HandItem], str]:
    """An ``ask`` for :func:`ragmeter.answers.hand_grade` that reads keys from ``stream``.

    An unknown key is asked again; the end of input counts as ``q``. Lines read from
    a stream that is not a terminal are echoed, so a piped session reads like a typed one.
    """

    def ask(item: HandItem) -> str:
        show_hand_item(console, item)
        while True:
            console.print(PROMPT, end="", markup=False, highlight=False)
            line = stream.readline()
            if line == "":  # end of input: stop, resume later
                console.print()
                return "quit"
            if not _is_terminal(stream):
                console.print(line.strip(), markup=False, highlight=False)  # echo what was read
            choice = parse_key(line)
            if choice is not None:
                return choice
            console.print(Text(f"'{line.strip()}' is not a grade: type c, p, w, s or q"))

    return ask


def grade_by_hand(
    results: str | Path,
    n: int = 20,
    seed: int = DEFAULTS.seed,
    input: TextIO | None = None,
    console: Console | None = None,
) -> HandRun:
    """:func:`ragmeter.answers.hand_grade` in the terminal: panels on ``console``, keys
    from ``input`` (default ``sys.stdin``)."""
    stream = input if input is not None else sys.stdin
    return hand_grade(results, n=n, seed=seed, ask=terminal_ask(console or Console(), stream))


def print_stale_after_hand_grading(results: str | Path, console: Console) -> None:
    """One line naming the answer files whose judge-corrected numbers were built from
    other hand grades (:func:`ragmeter.answers.store.stale_hand_files`) and what
    refreshes them."""
    stale = stale_hand_files(results)
    again = {
        "grade": f"`ragmeter grade {results} --judge ...` (answers already graded are not "
        "sent again)",
        "judges": f"`ragmeter judges {results}`",
    }
    for command, words in again.items():
        files = [f"answers/{name}" for name in stale if HAND_BUILT[name] == command]
        if files:
            console.print(
                Text(
                    f"{' and '.join(files)} {'hold' if len(files) > 1 else 'holds'} "
                    f"judge-corrected numbers from other hand grades: run {words} again to "
                    "refresh them.",
                    style="yellow",
                )
            )

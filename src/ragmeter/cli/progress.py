"""Progress on stderr for every step that takes more than a second or two.

The library reports progress through plain callbacks (``progress(label, done, total)``;
model calls also pass the reply); this module turns them into rich bars. ``--quiet``
silences the bars and the hints, ``--verbose`` lets backend logs (llama.cpp) through.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from rich.progress import (
    BarColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
)
from rich.text import Text

from ragmeter.cli.safe_console import SafeConsole


@dataclass
class Settings:
    quiet: bool = False
    verbose: bool = False


settings = Settings()
bars = SafeConsole(stderr=True)  # progress only: silenced by --quiet (warnings and errors are not)


def set_quiet(quiet: bool) -> None:
    settings.quiet = quiet
    bars.quiet = quiet


def _format_s(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 60}:{seconds % 60:02d}" if seconds >= 60 else f"{seconds}s"


class _CallsColumn(ProgressColumn):
    """``12 cached · 30 new · ETA 1:05`` from the task's fields."""

    def render(self, task: Task) -> Text:
        cached = task.fields.get("cached", 0)
        new = task.fields.get("new", 0)
        parts = [f"{cached} cached", f"{new} new"]
        eta = task.fields.get("eta")
        if eta is not None:
            parts.append(f"ETA {_format_s(eta)}")
        return Text(" · ".join(parts), style="dim")


def new_bar(*extra: ProgressColumn) -> Progress:
    return Progress(
        TextColumn("{task.description:<30}", style="bold", markup=False),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        *extra,
        TimeElapsedColumn(),
        console=bars,
        transient=True,
        # Piped stderr gets no bar (rich would leave a blank line where it was).
        disable=settings.quiet or not bars.is_terminal,
    )


@contextlib.contextmanager
def step_bar(first: str = "starting") -> Iterator[Callable[[str, int, int], None]]:
    """A bar for a staged job (search): ``progress(label, done, total)``.

    Labels ending in ``embedding`` (per batch of texts) or naming a ``distilling``
    (a static model's vocabulary) get a second bar under the steps, removed when
    the count is complete.
    """
    progress = new_bar()
    main = progress.add_task(first, total=1)
    sub: dict[str, Any] = {}

    def update(label: str, done: int, total: int) -> None:
        if label.endswith("embedding") or "distilling" in label:
            if "task" not in sub:
                sub["task"] = progress.add_task(label, total=total)
            progress.update(sub["task"], description=label, completed=done, total=total)
            if done >= total:
                progress.remove_task(sub.pop("task"))
            return
        progress.update(main, description=label, completed=done, total=total)

    with progress:
        yield update


class CallCounter:
    """Cached and new replies, and an ETA from the new ones only (cached ones are instant)."""

    def __init__(self) -> None:
        self.cached = 0
        self.new = 0
        self.first_new: float | None = None
        self.last_new: float | None = None

    def add(self, reply: Any) -> None:
        now = time.monotonic()
        if reply is not None and getattr(reply, "cached", False):
            self.cached += 1
            return
        self.new += 1
        if self.first_new is None:
            self.first_new = now
        self.last_new = now

    def eta(self, done: int, total: int) -> float | None:
        if self.new < 2 or self.first_new is None or self.last_new is None:
            return None
        per_call = (self.last_new - self.first_new) / (self.new - 1)
        return per_call * max(total - done, 0)


@contextlib.contextmanager
def calls_bar() -> Iterator[Callable[..., None]]:
    """A bar for model calls: ``progress(label, done, total, reply=None)``, one task per
    label, each showing how many replies came from the cache, how many are new, and an ETA."""
    progress = new_bar(_CallsColumn())
    tasks: dict[str, Any] = {}
    counters: dict[str, CallCounter] = {}

    def update(label: str, done: int, total: int, reply: Any = None) -> None:
        if label not in tasks:
            tasks[label] = progress.add_task(label[-30:], total=total)
            counters[label] = CallCounter()
        counter = counters[label]
        if done > 0:
            counter.add(reply)
        progress.update(
            tasks[label],
            completed=done,
            total=total,
            cached=counter.cached,
            new=counter.new,
            eta=counter.eta(done, total),
        )

    update.wants_reply = True  # type: ignore[attr-defined]
    with progress:
        yield update


@contextlib.contextmanager
def status(message: str) -> Iterator[None]:
    """A spinner with a message, for one step without a count (building the report)."""
    if settings.quiet or not bars.is_terminal:
        yield
        return
    with bars.status(message, spinner="dots"):
        yield

"""The console every command prints through: no control character from data reaches
the terminal raw."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rich.console import Console, ConsoleDimensions
from rich.segment import Segment

from ragmeter.files.safe_text import printable

__all__ = ["SafeConsole", "TerminalConsole"]


class SafeConsole(Console):
    """A console that shows every control character of its text as ``\\xNN``.

    Ids, paths and messages come from input files; an escape sequence in one
    (clear screen, a moved cursor) must never reach the terminal raw. Rich's
    own control segments (progress bars, live displays) pass unchanged.
    """

    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        return super()._render_buffer(
            seg if seg.control else Segment(printable(seg.text), seg.style, seg.control)
            for seg in buffer
        )


class TerminalConsole(SafeConsole):
    """stdout's console: as wide as :func:`ragmeter.cli.layout.terminal_width` says, read
    at each print (``COLUMNS``, else the terminal the command runs in even when stdout
    is piped, else the default for logs); a ``width`` given to it still wins."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if kwargs.get("width") is None:
            self._width = None  # rich fixes COLUMNS at start; read it at each print instead

    @property
    def size(self) -> ConsoleDimensions:
        found = super().size
        if self._width is not None:
            return found
        from ragmeter.cli.layout import terminal_width

        return ConsoleDimensions(terminal_width(), found.height)

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        Console.size.fset(self, new_size)  # type: ignore[attr-defined]

"""The console every command prints through: no control character from data reaches
the terminal raw."""

from __future__ import annotations

from collections.abc import Iterable

from rich.console import Console
from rich.segment import Segment

from ragmeter._safe_text import printable

__all__ = ["SafeConsole"]


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

"""Hand freed memory back to the operating system between the stages of a large run.

A run allocates and frees many short-lived arrays and strings. glibc's allocator keeps
freed blocks in its heap (and, after a large block is freed, serves more allocations from
the heap rather than from fresh pages), so the process's resident size can stay tens of
megabytes above what it holds. ``malloc_trim(0)`` returns every whole free page; it takes
milliseconds. Elsewhere (macOS, Windows, musl) this does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys
from collections.abc import Callable

_TRIM: list[Callable[[int], int] | None] = []


def _trim_function() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return libc.malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None


def release_free_memory() -> bool:
    """Return the heap's free pages to the operating system; whether it could."""
    if not _TRIM:
        _TRIM.append(_trim_function())
    trim = _TRIM[0]
    if trim is None:
        return False
    trim(0)
    return True

"""Whitespace-separated text files tokenized with numpy over the raw bytes.

The readers of qrels and run files (:mod:`ragmeter.scoring.trec_read`) use this: a file is
read, cut into blocks that end after a newline, and each block's fields are
found, copied out as fixed-width byte strings and parsed as numbers without a Python
loop per line, so a run of ten million lines reads in seconds. Errors name the file
and line.
"""

from __future__ import annotations

import ctypes
import functools
import gzip
import re
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ragmeter.errors import InputError


def _read_bytes(path: Path, what: str) -> bytes:
    try:
        if path.suffix == ".gz":
            with gzip.open(path, "rb") as fh:
                return fh.read()
        return path.read_bytes()
    except (OSError, EOFError, zlib.error) as exc:  # a .gz cut short or spoiled
        raise InputError(
            f"cannot read {what} file {path}: {getattr(exc, 'strerror', None) or exc}; "
            f"if it is cut short, copy or download it again"
        ) from None


@functools.cache
def _malloc_trim():
    """glibc's ``malloc_trim``, or None where the C library has none."""
    try:
        return ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None


def give_back_freed_memory() -> None:
    """Return the heap memory freed so far to the system (glibc's ``malloc_trim``; a
    no-op elsewhere). A run read a block at a time leaves its many small pieces free
    but kept by the allocator; giving them back before the next large array bounds the
    peak near what is in use (three runs of 5,000 queries x 1,000 documents scored one
    after another: a peak of 430 MB without, 310 MB with)."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@dataclass
class _Lines:
    """Whitespace-separated fields of every non-blank line."""

    buf: np.ndarray  # uint8 view of the bytes
    starts: np.ndarray  # token start offsets
    ends: np.ndarray  # token end offsets (exclusive)
    first: np.ndarray  # index of each line's first token
    count: np.ndarray  # tokens on each line
    line: np.ndarray  # 1-based line number of each non-blank line

    def field(self, j: int) -> tuple[np.ndarray, np.ndarray]:
        idx = self.first + j
        return self.starts[idx], self.ends[idx]


def _tokenize(data: bytes) -> _Lines:
    buf = np.frombuffer(data, dtype=np.uint8)
    # bytes up to 32 separate fields: space, tab, newline, CR and other controls
    word = (buf > 32).view(np.int8)
    edges = np.flatnonzero(np.diff(word)) + 1  # starts and ends alternate
    parts = [edges]
    if buf.size and word[0]:
        parts.insert(0, np.zeros(1, dtype=edges.dtype))
    if buf.size and word[-1]:
        parts.append(np.array([buf.size], dtype=edges.dtype))
    if len(parts) > 1:
        edges = np.concatenate(parts)
    starts, ends = edges[0::2], edges[1::2]
    del word, edges
    # newlines in the gap before each token: gaps of one byte (nearly all) are
    # read directly, longer ones counted between the newline positions
    n = starts.size
    gap_start = np.empty(n, dtype=np.int64)
    if n:
        gap_start[0] = 0
        gap_start[1:] = ends[:-1]
    gap_len = starts - gap_start
    newlines = np.zeros(n, dtype=np.int64)
    one = gap_len == 1
    newlines[one] = buf[gap_start[one]] == 10
    many = np.flatnonzero(gap_len > 1)
    if many.size:
        nl = np.flatnonzero(buf == 10)
        newlines[many] = np.searchsorted(nl, starts[many]) - np.searchsorted(nl, gap_start[many])
    new_line = newlines > 0
    if n:
        new_line[0] = True
    first = np.flatnonzero(new_line)
    line_of = np.cumsum(newlines)[first]  # 0-based line of each line's first token
    count = np.diff(np.append(first, starts.size))
    return _Lines(buf, starts, ends, first, count, line_of + 1)


BLOCK = 1 << 20
"""Bytes tokenized at a time (cut after a newline): bounds the working memory and
keeps the temporary arrays small enough to be reused rather than mapped anew."""


def _file_blocks(path: Path, what: str, size: int | None = None):
    """``(lines before, block)`` pieces of the file at ``path`` (gzip by its suffix),
    read ``size`` bytes at a time (:data:`BLOCK`), each ending after a newline, with
    lone CR line ends read as LF as :func:`_lone_cr` reads them: the pieces of
    :func:`_blocks` over ``_lone_cr(_read_bytes(path))`` while holding one block of
    the file, never all of it."""
    size = size or BLOCK
    lines, carry = 0, b""
    try:
        with gzip.open(path, "rb") if path.suffix == ".gz" else open(path, "rb") as fh:
            while True:
                chunk = fh.read(size)
                data = carry + chunk
                # a CR at the end may be the first half of CR LF: decide with the next chunk
                carry = b""
                if chunk and data.endswith(b"\r"):
                    data, carry = data[:-1], b"\r"
                data = _lone_cr(data)
                cut = data.rfind(b"\n") + 1 if chunk else len(data)
                if cut:
                    yield lines, data[:cut]
                    lines += data.count(b"\n", 0, cut)
                carry = data[cut:] + carry
                if not chunk:
                    return
    except (OSError, EOFError, zlib.error) as exc:  # a .gz cut short or spoiled
        raise InputError(
            f"cannot read {what} file {path}: {getattr(exc, 'strerror', None) or exc}; "
            f"if it is cut short, copy or download it again"
        ) from None


def _blocks(data: bytes, size: int | None = None):
    """``(lines before, block)`` pieces of ``data``, each ending after a newline."""
    size = size or BLOCK
    at, lines = 0, 0
    while at < len(data):
        end = min(at + size, len(data))
        if end < len(data):
            cut = data.rfind(b"\n", at, end)
            end = cut + 1 if cut >= at else (data.find(b"\n", end) + 1 or len(data))
        block = memoryview(data)[at:end]
        yield lines, block
        lines += int(np.count_nonzero(np.frombuffer(block, dtype=np.uint8) == 10))
        del block
        at = end


def _strings(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Tokens as a fixed-width ``S`` array (zero-padded; compares like strcmp)."""
    lens = ends - starts
    width = max(int(lens.max()) if lens.size else 1, 1)
    mat = np.zeros((starts.size, width), dtype=np.uint8)
    last = max(buf.size - 1, 0)
    for j in range(width):  # one column at a time: no (n x width) index matrix
        live = lens > j
        col = buf[np.minimum(starts + j, last)] if buf.size else np.zeros(starts.size, np.uint8)
        mat[:, j] = np.where(live, col, 0)
    return mat.view(f"S{width}").reshape(-1)


def _numbers(
    buf: np.ndarray, starts: np.ndarray, ends: np.ndarray, integer: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Parse decimal tokens as Python's ``int`` or ``float`` does; returns ``(values, ok)``
    (``ok`` False for a token that is not a number, or a float that is not finite).

    numpy's conversion of the byte strings parses each as Python does, in C; a token it
    refuses (or an integer past 64 bits) sends the tokens through Python one by one.
    """
    tokens = _strings(buf, starts, ends)
    try:
        values = tokens.astype(np.int64 if integer else np.float64).astype(np.float64)
        return values, np.isfinite(values)
    except (ValueError, OverflowError):
        pass
    values, ok = np.zeros(tokens.size), np.ones(tokens.size, dtype=bool)
    for i, tok in enumerate(tokens.tolist()):
        try:
            values[i] = int(tok) if integer else float(tok)
        except (ValueError, OverflowError):
            ok[i] = False
    return values, ok & np.isfinite(values)


def _check_numbers(ok: np.ndarray, lines: _Lines, j: int, path: Path, what: str, kind: str) -> None:
    if ok.all():
        return
    i = int(np.flatnonzero(~ok)[0])
    s, e = lines.field(j)
    tok = bytes(lines.buf[s[i] : e[i]]).decode("utf-8", "replace")
    if kind == "a finite number":  # 'high' is not a number; 'nan' is one, but not finite
        try:
            float(tok)
        except ValueError:
            kind = "a number"
    raise InputError(f"{path}:{lines.line[i]}: {what} {tok!r} is not {kind}")


def decode_ids(values: np.ndarray, source: str, what: str) -> list[str]:
    """Byte-string ids as text, in order. An id that is not UTF-8 is an error naming
    the first line of ``source`` (the file they were read from) that is not."""
    uniq, inverse = np.unique(values, return_inverse=True)
    try:
        texts = [v.decode("utf-8") for v in uniq.tolist()]
    except UnicodeDecodeError:
        raise _not_utf8(source, what) from None
    return [texts[j] for j in inverse.tolist()]


def _not_utf8(source: str, what: str) -> InputError:
    if source:
        data = _read_bytes(Path(source), what)
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as exc:
            head = data[: exc.start]  # lines as the reader counts them: LF, CRLF or CR
            line = head.count(b"\n") + head.count(b"\r") - head.count(b"\r\n") + 1
            return InputError(
                f"{source}:{line}: not valid UTF-8 (byte {exc.start}); "
                f"re-save the {what} file as UTF-8"
            )
    return InputError(f"{source or what}: an id is not valid UTF-8; re-save the file as UTF-8")


def _lone_cr(data):
    """``data`` with lone CR line ends (old Mac files) read as LF, as Python's text files
    read them; any other file is returned as it is. Without this, a run whose lines end
    in CR alone would read as one line of many fields, of which only six are used."""
    if data.find(b"\r") < 0 or not re.search(rb"\r(?!\n)", data):
        return data
    return re.sub(rb"\r(?!\n)", b"\n", bytes(data))

"""Small file helpers: atomic writes, so nothing is ever left half-written."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ragmeter.errors import InputError
from ragmeter.outputs import atomic_write, clean_stale_temporaries, temp_name


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` via a unique temporary file and a rename, and record
    it in the folder's manifest (:func:`ragmeter.outputs.atomic_write`).

    This writes without checking the target: commands use
    :func:`ragmeter.outputs.write_output`.
    """

    atomic_write(Path(path), text)


def read_text(path: Path) -> str:
    """Read a file as UTF-8 exactly (no newline translation), with one-line errors."""

    try:
        data = Path(path).read_bytes()
    except IsADirectoryError:
        raise InputError(f"{path}: is a folder; give the path of a file") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc}); check the path") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputError(
            f"{path}:{line}: not valid UTF-8 (byte {exc.start}); re-save the file as UTF-8"
        ) from None


def read_jsonl(
    path: Path, *, torn_tail_ok: bool = False, nan_ok: bool = False
) -> Iterator[tuple[int, dict]]:
    """Yield ``(line_number, object)`` for each non-blank line of a JSONL file.

    Every problem is an :class:`~ragmeter.errors.InputError` ``path:line: ...``.
    ``torn_tail_ok``: a last line without its newline that is not valid JSON was
    cut off by a crash mid-append, and is skipped (files ragmeter appends to).
    ``nan_ok``: accept NaN and Infinity (files ragmeter wrote; never user input).
    """

    text = read_text(path)
    lines = text.split("\n")
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line, parse_constant=None if nan_ok else _no_constant)
        except ValueError as exc:
            if torn_tail_ok and number == len(lines):
                continue
            reason = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
            raise InputError(
                f"{path}:{number}: malformed JSON ({reason}); fix or remove the line"
            ) from None
        if not isinstance(obj, dict):
            raise InputError(f"{path}:{number}: expected a JSON object per line")
        yield number, obj


def read_json(path: Path, *, nan_ok: bool = False) -> object:
    """A whole JSON file, with one-line errors naming the file and line."""

    try:
        return json.loads(read_text(path), parse_constant=None if nan_ok else _no_constant)
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}:{exc.lineno}: malformed JSON ({exc.msg})") from None
    except ValueError as exc:
        raise InputError(f"{path}: malformed JSON ({exc})") from None


def _no_constant(name: str) -> object:
    """NaN and Infinity are not JSON; Python's reader accepts them unless told."""
    raise ValueError(f"{name} is not valid JSON")


def dumps(obj: object) -> str:
    """Canonical JSON: sorted keys, UTF-8 kept, trailing newline."""
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, indent=1) + "\n"


@contextmanager
def atomic_directory(path: Path) -> Iterator[Path]:
    """Build a directory under a temporary name; rename it into place on success.

    An existing directory at ``path`` is replaced only once the new one is
    complete; on any error the temporary directory is removed. Temporaries are
    named ``.ragmeter-tmp-<name>.<pid>.…`` so that the next writer recognises
    (and removes) those of a process that was killed.
    """

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    clean_stale_temporaries(path)
    tmp = Path(tempfile.mkdtemp(prefix=temp_name(path, "new-"), dir=path.parent))
    umask = os.umask(0)
    os.umask(umask)
    tmp.chmod(0o777 & ~umask)  # mkdtemp makes it private; results are ordinary files
    try:
        yield tmp
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    old = None
    if path.exists():
        old = path.with_name(temp_name(path, "old"))
        os.replace(path, old)
    os.replace(tmp, path)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)

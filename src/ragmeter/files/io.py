"""Small file helpers: atomic writes, so nothing is ever left half-written."""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from pathlib import Path

from ragmeter.errors import InputError
from ragmeter.files.manifest import MANIFEST, write_manifest
from ragmeter.files.outputs import (
    atomic_write,
    clean_stale_temporaries,
    forget_temporary,
    new_temporary,
    write_failed,
)


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` via a unique temporary file and a rename, and record
    it in the folder's manifest (:func:`ragmeter.files.outputs.atomic_write`).

    This writes without checking the target: commands use
    :func:`ragmeter.files.outputs.write_output`.
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

    for number, line, last in _lines(path):
        if not line.strip():
            continue
        try:
            obj = json.loads(line, parse_constant=None if nan_ok else _no_constant)
        except ValueError as exc:
            if torn_tail_ok and last:
                continue
            reason = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
            raise InputError(
                f"{path}:{number}: malformed JSON ({reason}); fix or remove the line"
            ) from None
        if not isinstance(obj, dict):
            raise InputError(f"{path}:{number}: expected a JSON object per line")
        refuse_lone_surrogates(obj, line, path, number)
        yield number, obj


def _lines(path: Path) -> Iterator[tuple[int, str, bool]]:
    """``(line_number, text, unterminated)`` of each line of a UTF-8 file, read a line at
    a time (split at ``\n`` only, as :func:`read_text` and ``str.split`` split), with
    :func:`read_text`'s one-line errors; ``unterminated`` marks a last line without its
    newline."""
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed below, after the last line
    except IsADirectoryError:
        raise InputError(f"{path}: is a folder; give the path of a file") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc}); check the path") from None
    offset = 0
    with handle:
        for number, raw in enumerate(handle, start=1):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InputError(
                    f"{path}:{number}: not valid UTF-8 (byte {offset + exc.start}); "
                    "re-save the file as UTF-8"
                ) from None
            offset += len(raw)
            ended = text.endswith("\n")
            yield number, text[:-1] if ended else text, not ended


def read_json(path: Path, *, nan_ok: bool = False) -> object:
    """A whole JSON file, with one-line errors naming the file and line."""

    text = read_text(path)
    try:
        obj = json.loads(text, parse_constant=None if nan_ok else _no_constant)
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}:{exc.lineno}: malformed JSON ({exc.msg})") from None
    except ValueError as exc:
        raise InputError(f"{path}: malformed JSON ({exc})") from None
    refuse_lone_surrogates(obj, text, path)
    return obj


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_SURROGATE = re.compile("[\ud800-\udfff]")
_LONE_ESCAPE = re.compile(
    r"(?<!\\)(?:\\\\)*(\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
    r"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2})"
)


def refuse_lone_surrogates(obj: object, raw: str, path: object, line: int | None = None) -> None:
    """Refuse JSON whose text holds a lone surrogate (``"\\ud800"`` written as an escape).

    JSON lets an escape name half of a UTF-16 pair alone; Python reads it as a string no
    UTF-8 file can hold, so the run would fail only when saving. Every JSON input
    (JSONL lines, whole JSON files, JSON inside a CSV cell) is read through this, so
    such a file is refused at load with its path and line. ``raw``: the JSON text
    ``obj`` was read from (``line``: its line number, for one JSONL line).
    """
    if not _SURROGATE_ESCAPE.search(raw) or not _holds_surrogate(obj):
        return  # the common case: no escape of a surrogate at all (a pair is fine)
    if line is None:
        found = _LONE_ESCAPE.search(raw)
        line = raw.count("\n", 0, found.start()) + 1 if found else None
    where = f"{path}:{line}" if line is not None else f"{path}"
    raise InputError(
        f"{where}: a lone surrogate escape (\\ud800-\\udfff without its pair) is no "
        f"character and cannot be saved as UTF-8; fix the text (write the character itself, "
        f"or both halves of its pair)"
    )


def _holds_surrogate(obj: object) -> bool:
    """Whether any string in ``obj`` (keys too) holds a surrogate code point."""
    if isinstance(obj, str):
        return _SURROGATE.search(obj) is not None
    if isinstance(obj, dict):
        return any(_holds_surrogate(k) or _holds_surrogate(v) for k, v in obj.items())
    if isinstance(obj, list):
        return any(_holds_surrogate(v) for v in obj)
    return False


def _no_constant(name: str) -> object:
    """NaN and Infinity are not JSON; Python's reader accepts them unless told."""
    raise ValueError(f"{name} is not valid JSON")


_CANONICAL = {"sort_keys": True, "ensure_ascii": False, "indent": 1}


def dumps(obj: object) -> str:
    """Canonical JSON: sorted keys, UTF-8 kept, trailing newline."""
    return json.dumps(obj, **_CANONICAL) + "\n"


def json_chunks(obj: object) -> Iterator[str]:
    """:func:`dumps`'s text in pieces, as it is encoded, with numpy arrays written as
    the lists ``tolist()`` gives: a large object is written to a file without its whole
    text, or every array as a list of floats, in memory at once."""
    yield from json.JSONEncoder(**_CANONICAL, default=_array_list).iterencode(obj)
    yield "\n"


def _array_list(obj: object) -> list:
    if hasattr(obj, "tolist") and hasattr(obj, "ndim") and obj.ndim == 1:
        return obj.tolist()
    raise TypeError(f"Object of type {type(obj).__name__} is not JSON serializable")


@contextmanager
def atomic_directory(path: Path, *, keep_existing: bool = False) -> Iterator[Path]:
    """Build a directory under a temporary name; rename it into place on success.

    The temporaries (the new directory, and the old one while it is moved aside)
    are recorded in the parent folder's manifest before they are made
    (:func:`ragmeter.files.outputs.new_temporary`), so the next writer removes those of a
    killed process and nothing else. An existing directory at ``path`` is replaced
    only once the new one is complete (the caller has checked that it may be:
    :func:`ragmeter.files.outputs.check_results_target`); with ``keep_existing`` one
    that appeared meanwhile is kept and the new one dropped. On any error the
    temporary directory is removed; a full disk, a size limit or a quota is an
    :class:`~ragmeter.errors.OutputError` naming ``path``.
    """

    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        clean_stale_temporaries(path)
        tmp = new_temporary(path)
        tmp.mkdir(0o777)  # as an ordinary folder: the umask decides
    except OSError as exc:
        raise write_failed(path, exc) from None
    try:
        yield tmp
    except BaseException as exc:
        _discard(tmp)
        if isinstance(exc, OSError):
            raise write_failed(path, exc) from None
        raise
    old = None
    try:
        if os.path.lexists(path):
            if keep_existing:
                _discard(tmp)
                return
            old = new_temporary(path, "old")
            os.replace(path, old)
        os.replace(tmp, path)
    except OSError as exc:
        _discard(tmp)
        raise write_failed(path, exc) from None
    forget_temporary(tmp)
    if old is not None:
        _discard(old)


def _discard(tmp: Path) -> None:
    """Remove a temporary of this process and its record."""
    if tmp.is_dir() and not tmp.is_symlink():
        shutil.rmtree(tmp, ignore_errors=True)
    else:
        with suppress(OSError):
            tmp.unlink(missing_ok=True)
    if not os.path.lexists(tmp):
        with suppress(OSError):
            forget_temporary(tmp)


def write_folder(path: Path, files: Mapping[str, bytes], what: str = "folder") -> Path:
    """Write ``files`` (``{relative name: bytes}``) as a new folder at ``path`` (which
    must not exist yet, or be an empty folder), atomically, recording each file in
    its folder's manifest. A name that is not a plain relative path (absolute, with
    ``..``, empty parts) is an :class:`InputError`: nothing is written outside."""

    path = Path(path)
    for name in files:
        parts = name.split("/")
        if (
            not name
            or name.startswith("/")
            or "\\" in name
            or "\0" in name
            or any(p in ("", ".", "..", MANIFEST) for p in parts)
        ):
            raise InputError(f"{name!r}: not a file name inside a {what}; nothing was written")
    if path.is_symlink() or path.exists() and (not path.is_dir() or any(path.iterdir())):
        raise InputError(f"{path}: not empty; give a new or empty folder for the {what}")
    with atomic_directory(path) as tmp:
        folders = {tmp}
        for name, data in files.items():
            target = tmp.joinpath(*name.split("/"))
            target.parent.mkdir(parents=True, exist_ok=True)
            folders.add(target.parent)
            target.write_bytes(data)
        for folder in folders:
            write_manifest(folder)
    return path

"""Small file helpers: atomic writes (nothing is ever left half-written), and the
text that may be shown or saved (no control characters, no secrets)."""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` via a temporary file and a rename.

    The temporary is named ``.ragmeter-tmp-<name>.<pid>.new-…`` (unique); those
    left by a killed process are removed by the next write of the same file. The
    file is recorded in its folder's manifest as ragmeter's. This writes without
    checking the target: callers use :func:`ragmeter.outputs.write_output`.
    """
    from ragmeter.outputs import clean_stale_temporaries, record_written, temp_name

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    clean_stale_temporaries(path)
    fd, tmp = tempfile.mkstemp(prefix=temp_name(path, "new-"), dir=path.parent)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes it private; this is an ordinary file
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    record_written(path)


def read_text(path: Path) -> str:
    """Read a file as UTF-8 exactly (no newline translation), with one-line errors."""
    from ragmeter.errors import InputError

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
    from ragmeter.errors import InputError

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
    from ragmeter.errors import InputError

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
    from ragmeter.outputs import clean_stale_temporaries, temp_name

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


# --- what may be shown or saved --------------------------------------------------------------

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """``text`` with every control character but newline and tab shown as ``\\xNN``.

    Ids, paths and messages from input files reach the terminal through this,
    so no escape sequence (clear screen, colours, a moved cursor, a title) in
    them is ever sent raw.
    """
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


SECRET_WORDS = ("key", "apikey", "token", "secret", "password", "passwd", "authorization")
REDACTED = "***"


def is_secret_name(name: str) -> bool:
    """Whether an option named ``name`` holds a secret (``api_key``, ``token``,
    ``Authorization``...; not ``max_tokens`` nor ``api_key_env``, which names a variable)."""
    parts = [p for p in re.split(r"[^a-z0-9]+", str(name).lower()) if p]
    if not parts or parts[-1] == "env":
        return False
    return any(p in SECRET_WORDS or p.endswith(("apikey", "password")) for p in parts)


_ASSIGNMENT = re.compile(
    r"""(?P<name>[\w.-]+)(?P<sep>["']?\s*[=:]\s*["']?)(?P<value>[^\s"',;}&?]+)"""
)
_BEARER = re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]+")


def redact_text(text: str) -> str:
    """``text`` with the value of every ``NAME=VALUE`` / ``"NAME": "VALUE"`` whose name
    holds a secret (:func:`is_secret_name`), and every bearer token, replaced by ``***``."""

    def hide(m: re.Match) -> str:
        value = m.group("value")
        if not is_secret_name(m.group("name")) or (value.isalpha() and value.isupper()):
            return m.group()  # not a secret, or a placeholder (KEY=VALUE)
        return m.group("name") + m.group("sep") + REDACTED

    return _ASSIGNMENT.sub(hide, _BEARER.sub(lambda m: f"{m.group(1)} {REDACTED}", text))


def redact(value: object, *, strings: bool = True) -> object:
    """A copy of ``value`` (dicts, lists, strings) with secrets replaced by ``***``:
    values under secret names, and (with ``strings``) secrets written inside
    strings (:func:`redact_text`)."""
    if isinstance(value, dict):
        return {
            k: REDACTED if is_secret_name(k) and v not in (None, "") else redact(v, strings=strings)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return type(value)(redact(v, strings=strings) for v in value)
    if isinstance(value, str) and strings:
        return redact_text(value)
    return value

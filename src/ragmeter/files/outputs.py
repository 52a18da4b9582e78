"""Where ragmeter may write, and one writer at a time per results directory.

The output rule: a command writes a results directory only at a path that
does not exist yet, an empty folder, or an earlier results directory whose
manifest (:mod:`ragmeter.files.manifest`) records every file in it. It never
writes into, over or around its own inputs (the corpus, the test set, run
files and qrels, the results it reads). Files it writes alone (a report, a
generated test set, an audit, an export) go only where no file is, or over a
file the manifest records ragmeter writing, unchanged since. Anything else is
an :class:`InputError` saying what to do. :func:`write_output` is the one call
a file writer goes through: checked, written to a unique temporary, renamed,
recorded.

A results directory is built under a temporary name next to it
(``.ragmeter-tmp-<name>.<pid>.<marker>.new-…``, the marker an unguessable
token of the process) and renamed into place. Every temporary is recorded in
its folder's manifest before it is made; the next writer removes (or, for a
replaced directory whose replacement never arrived, puts back) only recorded
temporaries of a process that no longer runs, never a name a person wrote.
A write the disk refuses (full, a file-size limit, a quota) is an
:class:`OutputError` naming the path, with nothing half-written.

:func:`results_lock` serialises writers of one results directory with a lock
file beside it (``.<name>.ragmeter-lock``) that names its holder; a second
writer waits :data:`LOCK_WAIT_S` seconds, then stops with the holder's name.
The lock is an ``flock``, so a holder that died has released it and the next
writer takes it over.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import socket
import stat
import sys
import threading
import time
from collections.abc import Collection, Iterable, Iterator
from pathlib import Path

from ragmeter.errors import InputError, OutputError
from ragmeter.files.manifest import (
    MANIFEST,
    RESULTS_FILES,
    TMP_PREFIX,
    WRITE_ERRNOS,
    check_replaceable,
    is_recorded,
    record_written,
    temporary_parts,
    updated_manifest,
    write_manifest,
)
from ragmeter.files.safe_text import redact_text

try:  # POSIX; elsewhere the lock is advisory only through the holder file
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "LOCK_WAIT_S",
    "MANIFEST",
    "RESULTS_FILES",
    "RESULTS_FORMAT",
    "RESULTS_FORMAT_VERSION",
    "TMP_PREFIX",
    "check_output_file",
    "check_replaceable",
    "is_recorded",
    "record_written",
    "check_results_target",
    "clean_stale_temporaries",
    "forget_temporary",
    "new_temporary",
    "remove_output",
    "write_failed",
    "is_results_dir",
    "lock_path",
    "pid_alive",
    "results_lock",
    "ResultsInUse",
    "results_inputs",
    "results_marker",
    "atomic_write",
    "write_manifest",
    "write_output",
]

RESULTS_FORMAT = "ragmeter-results"
RESULTS_FORMAT_VERSION = 1
LOCK_SUFFIX = ".ragmeter-lock"
LOCK_WAIT_S = 10.0
"""How long a second writer waits for a results directory before giving up."""

STALE_AGE_S = 24 * 3600.0
"""Temporaries older than this are removed even when their pid is alive (pid reuse)."""

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def results_marker() -> dict[str, object]:
    """The keys that mark a ``meta.json`` as ragmeter's."""
    return {"format": RESULTS_FORMAT, "format_version": RESULTS_FORMAT_VERSION}


def is_results_dir(path: str | Path) -> bool:
    """Whether ``path`` is a results directory ragmeter wrote.

    Recognised by the marker in ``meta.json``; directories written before the
    marker existed are recognised by ``meta.json``'s ragmeter version next to a
    ``scores.json``.
    """
    path = Path(path)
    meta = path / "meta.json"
    if not path.is_dir() or not meta.is_file():
        return False
    try:
        data = json.loads(meta.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if not isinstance(data, dict):
        return False
    if data.get("format") == RESULTS_FORMAT:
        return True
    versions = data.get("versions")
    return (
        isinstance(versions, dict) and "ragmeter" in versions and (path / "scores.json").is_file()
    )


def _resolve(path: str | Path) -> Path:
    return Path(os.path.abspath(Path(path).expanduser())).resolve()


Inputs = Iterable[tuple[str, str | Path | None]]


def check_not_inputs(out: str | Path, inputs: Inputs, *, folder: bool, flag: str = "--out") -> None:
    """Refuse an output that is one of ``inputs`` (``(label, path)`` pairs) or lies inside one.

    ``folder``: the output is a whole folder that gets replaced, so it must not
    contain an input either.
    """
    target = _resolve(out)
    for label, raw in inputs:
        if not raw:
            continue
        source = _resolve(raw)
        if target == source:
            problem = f"is the {label}"
        elif source in target.parents:
            problem = f"is inside the {label} {raw}"
        elif folder and target in source.parents:
            problem = f"contains the {label} {raw}"
        else:
            continue
        raise InputError(
            f"{out}: {problem}; ragmeter never writes into its inputs, give another {flag}"
        )


def results_inputs(path: str | Path, meta: object) -> list[tuple[str, str | Path | None]]:
    """The inputs of a command reading the results directory ``path``: the directory
    itself and the corpus and test set its ``meta.json`` names."""
    inputs: list[tuple[str, str | Path | None]] = [("results directory", path)]
    for label, key in (("corpus", "corpus"), ("test set", "testset")):
        entry = meta.get(key) if isinstance(meta, dict) else None
        if isinstance(entry, dict) and isinstance(entry.get("path"), str):
            inputs.append((label, entry["path"]))
    return inputs


def check_results_target(
    path: str | Path,
    inputs: Inputs = (),
    *,
    overwrite: bool = True,
    flag: str = "--out",
) -> None:
    """Raise :class:`InputError` unless a results directory may be written at ``path``.

    Allowed: a path that does not exist, an empty folder, or (with
    ``overwrite``) an earlier results directory. What a directory holds is read
    under its lock (:func:`results_lock`). While another writer holds that lock,
    the files in it are changing (a report half-written, a file renamed into
    place and not yet recorded), so whether each is ragmeter's is left to the
    check the write itself makes under the lock; the rest is checked at once.
    """
    path = Path(path)
    check_not_inputs(path, inputs, folder=True, flag=flag)
    if path.is_symlink():
        raise InputError(
            f"{path}: is a symbolic link, and ragmeter would replace it; give the folder "
            f"itself, or a new folder name, as {flag}"
        )
    if not path.exists():
        return
    if not path.is_dir():
        raise InputError(
            f"{path}: is a file; {flag} takes a folder that does not exist yet "
            f"(or an earlier results directory), e.g. ragmeter-results"
        )
    try:
        with results_lock(path, wait_s=0):
            _check_contents(path, overwrite, flag, settled=True)
    except ResultsInUse:  # another writer is at work: which files are ours is decided later
        _check_contents(path, overwrite, flag, settled=False)


def _check_contents(path: Path, overwrite: bool, flag: str, *, settled: bool) -> None:
    """Raise unless the existing folder ``path`` may be replaced by results. Whether it
    holds results does not change while a writer works on it; whether each of its files
    is ragmeter's does, so that is read only when ``settled`` (under the lock)."""
    if is_results_dir(path):
        if overwrite:
            if settled:
                check_replaceable(path, flag)
            return
        raise InputError(
            f"{path}: already holds ragmeter results; pass overwrite=True to replace them, "
            f"or choose another path"
        )
    with contextlib.suppress(OSError):
        if not any(path.iterdir()):
            return
    raise InputError(
        f"{path}: is a folder that does not hold ragmeter results, and ragmeter would "
        f"replace it; give a new folder name as {flag}, or move {path} away"
    )


def check_output_file(
    path: str | Path,
    kind: str = "file",
    inputs: Inputs = (),
    flag: str | None = "--out",
    names: Collection[str] | None = None,
) -> None:
    """Raise unless ``path`` is a free file name, an empty file, or a file ragmeter wrote.

    A file counts as ragmeter's only when its folder's manifest records it as it
    is now (:func:`is_recorded`), never by its content: a file of the user's can
    look like ours. ``names``: the only names ragmeter writes in that folder (an
    entry under any other name is ignored).
    """
    path = Path(path)
    check_not_inputs(path, inputs, folder=False, flag=flag)
    if names is None and is_results_dir(path.parent):
        names = RESULTS_FILES  # in a results directory, only its own names are ever ours
        if path.name not in names:  # a rerun could neither replace it nor keep it
            raise InputError(
                f"{path}: ragmeter writes only its own files directly in the results "
                f"directory {path.parent}; give a path outside it" + (f" as {flag}" if flag else "")
            )
    if path.is_dir():
        what = f"{flag} takes a file name for the {kind}" if flag else "move it away"
        raise InputError(f"{path}: is a folder where ragmeter writes its {kind}; {what}")
    if (
        path.is_symlink()
        or (names is not None and path.name not in names and os.path.lexists(path))
        or (path.exists() and not is_empty_file(path) and not is_recorded(path, names))
    ):
        what = f"give another {flag}, or move the file away" if flag else "move it away"
        raise InputError(
            f"{path}: exists and is not a {kind} written by ragmeter (or it changed since); "
            f"{what}, then run again"
        )


def write_output(
    path: str | Path,
    text: str,
    kind: str,
    inputs: Inputs = (),
    flag: str | None = "--out",
    *,
    check: bool = True,
    names: Collection[str] | None = None,
) -> Path:
    """Write ``text`` to ``path`` the one safe way: checked, atomic, recorded.

    ``check``: apply :func:`check_output_file` first (``False`` only for files
    ragmeter reads, merges and writes back whole, such as ``answers/reader.jsonl``).
    The file is written to a recorded temporary in its folder, renamed into place
    and recorded in the folder's manifest. A write the disk refuses (full, a
    size limit, a quota) is an :class:`OutputError` naming ``path``; the file
    that was there is unchanged.
    """
    path = Path(path)
    if check:
        check_output_file(path, kind, inputs, flag, names)
    atomic_write(path, text)
    return path


def remove_output(path: str | Path, names: Collection[str] | None = None) -> bool:
    """Delete ``path`` only when it is a file ragmeter recorded writing, unchanged (or
    empty); anything else is left as it is. Returns whether it was removed."""
    path = Path(path)
    if path.is_symlink() or not path.is_file():
        return False
    if not (is_empty_file(path) or is_recorded(path, names)):
        return False
    path.unlink(missing_ok=True)
    with updated_manifest(path.parent, create=False):
        pass  # drops the entry of the file now gone
    return True


def write_failed(path: str | Path, exc: OSError) -> OSError:
    """The error to raise for ``exc`` met writing ``path``: an :class:`OutputError`
    (one line naming ``path``) for a full disk, a size limit or a quota, else ``exc``."""
    if exc.errno not in WRITE_ERRNOS:
        return exc
    reason = exc.strerror or os.strerror(exc.errno or 0)
    return OutputError(
        f"{path}: could not be written ({reason}); nothing was half-written and what was "
        f"there is unchanged. Free some space (or raise the file-size limit or quota), "
        f"then run again"
    )


def atomic_write(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` via a recorded temporary file and a rename; record it.

    The temporary (:func:`new_temporary`) is recorded in the folder's manifest
    before it is made, so one left by a killed process is removed by the next
    write of the same file. The file is then recorded in its folder's manifest.
    """
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        clean_stale_temporaries(path)
        tmp = new_temporary(path)
    except OSError as exc:
        raise write_failed(path, exc) from None
    try:
        _write_new(tmp, text)
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            forget_temporary(tmp)
        if isinstance(exc, OSError):
            raise write_failed(path, exc) from None
        raise
    try:
        record_written(path, temporary=tmp.name)
    except OSError as exc:  # written whole; only its record is missing (it stays unclaimed)
        with contextlib.suppress(OSError):
            forget_temporary(tmp)
        if exc.errno not in WRITE_ERRNOS:
            raise
        raise OutputError(
            f"{path}: written, but its record in {path.parent / MANIFEST} could not be "
            f"({exc.strerror}), so ragmeter will not write over it again (move it away for "
            f"that); free some space, then run again"
        ) from None


def _write_new(tmp: Path, text: str) -> None:
    """Create ``tmp`` (never an existing name, never through a link) holding ``text``, synced."""
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o666)
    with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())


def is_empty_file(path: Path) -> bool:
    try:
        st = path.lstat()
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and st.st_size == 0


# --- temporaries -----------------------------------------------------------------------------

_marks: dict[int, str] = {}


def _mark() -> str:
    """This process's unguessable marker (a new one in a forked child)."""
    pid = os.getpid()
    mark = _marks.get(pid)
    if mark is None:
        mark = _marks[pid] = secrets.token_hex(8)
    return mark


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` runs (this one does; one of another user counts as running)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True


def temp_name(path: Path, role: str) -> str:
    """``.ragmeter-tmp-<name>.<pid>.<marker>.<role>-<random>``: tied to this process by
    its pid and a marker no one can guess, unique by its random end."""
    return f"{TMP_PREFIX}{path.name}.{os.getpid()}.{_mark()}.{role}-{secrets.token_hex(4)}"


def new_temporary(path: str | Path, role: str = "new") -> Path:
    """A fresh temporary name beside ``path`` (``role``: ``new`` for what is being
    written, ``old`` for what it replaces), recorded in the folder's manifest before
    anything is made at it, so that a crash leaves a record for the next writer."""
    path = Path(path)
    tmp = path.parent / temp_name(path, role)
    with updated_manifest(path.parent) as state:
        if state is not None:
            state["temporaries"][tmp.name] = {"pid": os.getpid(), "since": round(time.time())}
    return tmp


def forget_temporary(tmp: str | Path) -> None:
    """Drop the record of the temporary ``tmp`` (renamed into place, or removed)."""
    tmp = Path(tmp)
    with updated_manifest(tmp.parent, create=False) as state:
        if state is not None:
            state["temporaries"].pop(tmp.name, None)


def clean_stale_temporaries(path: str | Path) -> list[Path]:
    """Remove the recorded temporaries of ``path`` left by processes that no longer run.

    Only names the folder's manifest records as ragmeter's temporaries of
    ``path`` (with their pid and marker) are touched; a file or folder of the
    user's, however it is named, never is. A replaced directory whose
    replacement never arrived (the process died between the two renames) is
    put back first. Returns what was removed.
    """
    path = Path(path)
    parent = path.parent
    if not parent.is_dir():
        return []
    removed: list[Path] = []
    with updated_manifest(parent, create=False) as state:
        if state is None:
            return []
        temps = state["temporaries"]
        now = time.time()
        stale_old: list[Path] = []
        stale_other: list[Path] = []
        for name in sorted(temps):
            tail = temporary_parts(name)
            if tail is None or tail["target"] != path.name:
                continue  # another target's, or not a name ragmeter makes: never touched
            entry = parent / name
            try:
                age = now - entry.lstat().st_mtime
            except FileNotFoundError:
                del temps[name]  # gone already: only the record was left
                continue
            except OSError:
                continue
            if pid_alive(int(tail["pid"])) and age < STALE_AGE_S:
                continue
            (stale_old if tail["role"] == "old" else stale_other).append(entry)
        if stale_old and not os.path.lexists(path):
            newest = max(stale_old, key=lambda p: p.lstat().st_mtime)
            os.replace(newest, path)
            stale_old.remove(newest)
            del temps[newest.name]
        for entry in stale_old + stale_other:
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                entry.unlink(missing_ok=True)
            if not os.path.lexists(entry):
                del temps[entry.name]
                removed.append(entry)
    return removed


# --- the lock --------------------------------------------------------------------------------


class ResultsInUse(InputError):
    """Another process holds the lock of a results directory (:func:`results_lock`)."""


def lock_path(results: str | Path) -> Path:
    """``<parent>/.<name>.ragmeter-lock``: beside the directory, so it outlives a replacement."""
    path = _resolve(results)
    return path.parent / f".{path.name}{LOCK_SUFFIX}"


_held: dict[tuple[str, int], int] = {}
_held_guard = threading.Lock()


def _holder_text(lock: Path) -> str:
    try:
        info = json.loads(lock.read_text(encoding="utf-8"))
        command = redact_text(str(info["command"]))
        return f"pid {info['pid']} on {info['host']} ({command}, since {info['since']})"
    except (OSError, ValueError, KeyError, TypeError):
        return "another ragmeter process"


def _command() -> str:
    argv = [Path(sys.argv[0]).name if sys.argv else "python", *sys.argv[1:]]
    text = redact_text(" ".join(argv))  # never a key given as --option api_key=...
    return text if len(text) <= 160 else text[:157] + "..."


@contextlib.contextmanager
def results_lock(
    results: str | Path, command: str | None = None, wait_s: float | None = None
) -> Iterator[Path]:
    """Hold the lock of the results directory ``results`` (re-entrant within a thread).

    Waits up to ``wait_s`` (default :data:`LOCK_WAIT_S`) for another holder,
    then raises :class:`ResultsInUse` (an :class:`InputError`) naming it.
    """
    lock = lock_path(results)
    key = (str(lock), threading.get_ident())
    with _held_guard:
        if key in _held:
            _held[key] += 1
            reentered = True
        else:
            reentered = False
    if reentered:
        try:
            yield lock
        finally:
            with _held_guard:
                _held[key] -= 1
        return
    if fcntl is None:  # pragma: no cover
        yield lock
        return
    lock.parent.mkdir(parents=True, exist_ok=True)
    if not os.access(lock.parent, os.W_OK):
        # nobody can write beside it (read-only results read for a report elsewhere):
        # there is nothing to guard, and a lock file cannot be made
        yield lock
        return
    wait = LOCK_WAIT_S if wait_s is None else wait_s
    deadline = time.monotonic() + wait
    while True:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            if time.monotonic() >= deadline:
                raise ResultsInUse(
                    f"{results}: in use by {_holder_text(lock)}; wait until it finishes "
                    f"(or stop it), then run again"
                ) from None
            time.sleep(0.05)
            continue
        try:
            same = os.stat(lock).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if not same:  # the holder before us removed the file: lock the new one
            os.close(fd)
            continue
        break
    info = {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "command": command or _command(),
        "since": time.strftime("%Y-%m-%dT%H:%M:%S"),
    }
    os.ftruncate(fd, 0)
    os.write(fd, (json.dumps(info) + "\n").encode("utf-8"))
    with _held_guard:
        _held[key] = 1
    try:
        yield lock
    finally:
        with _held_guard:
            del _held[key]
        with contextlib.suppress(OSError):
            os.unlink(lock)
        os.close(fd)

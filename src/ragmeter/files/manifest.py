"""The manifest: what ragmeter wrote in a folder, so that only that is ever replaced.

Each folder ragmeter writes into gets ``.ragmeter-manifest.json``, naming every
file it wrote there with its size and the SHA-256 of the whole file (any size),
and every temporary it is using there (so that a crash leaves a record, and the
next writer removes only what was recorded). A file counts as ragmeter's only
when it is still the file recorded; a results directory may be replaced only
when every file in it is one ragmeter writes there under that name
(:data:`RESULTS_FILES`), recorded and unchanged (``answers/`` and ``audit/``
are carried over by the save).

Each entry is sealed: ``[size, sha256, seal]``, the seal an HMAC-SHA256 of the name,
size and digest under a key of the user's own (:func:`manifest_key`, kept in the
user's ragmeter state folder, never in the folder written). A manifest written by
hand, copied from elsewhere or made by an older ragmeter has no valid seal, so no
entry of it ever makes a file ragmeter's: a file it names is never overwritten.

A manifest counts only when it is a regular file with one link, opened without
following a symbolic link: a link to (or a hard link of) another folder's
manifest, a fifo, or a folder at that name is no manifest, and nothing is
recorded in it. An entry counts only when its name is a plain file name (no
``/``, not ``..``) and, where the caller says which names ragmeter writes
there, one of them.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import hmac
import json
import os
import re
import secrets
import stat
from collections.abc import Collection, Iterator
from pathlib import Path

from ragmeter.errors import InputError

try:  # POSIX; elsewhere the manifest is updated without a lock
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "CARRIED",
    "MANIFEST",
    "RESULTS_FILES",
    "TMP_PREFIX",
    "temporary_parts",
    "check_replaceable",
    "is_recorded",
    "manifest_key",
    "read_manifest",
    "record_written",
    "updated_manifest",
    "write_manifest",
]


MANIFEST = ".ragmeter-manifest.json"
MANIFEST_FORMAT = "ragmeter-manifest"
CARRIED = ("answers", "audit")
"""Folders of later stages a rerun carries over whole (or refuses), never deletes."""

RESULTS_FILES = frozenset(
    {
        "config.toml",
        "meta.json",
        "questions.jsonl",
        "documents.jsonl",
        "runs.jsonl",
        "scores.json",
        "scores.csv",
        "summary.json",
        "report.html",
    }
)
"""The files ragmeter writes directly in a results directory: the only names there a
replacement may delete."""

TMP_PREFIX = ".ragmeter-tmp-"
_TEMPORARY = re.compile(
    r"\.ragmeter-tmp-(?P<target>[^/]+)"
    r"\.(?P<pid>[0-9]+)\.(?P<mark>[0-9a-f]{16})\.(?P<role>new|old)-[0-9a-f]{8}"
)


def temporary_parts(name: str) -> re.Match[str] | None:
    """``name`` read as a temporary's, ``.ragmeter-tmp-<target>.<pid>.<marker>.<role>-<random>``
    (groups ``target``, ``pid``, ``mark``, ``role``), or ``None`` for any other name."""
    return _TEMPORARY.fullmatch(name)


_PART = 1 << 20
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # a fifo at the manifest's name must not hang us


def _entry(path: Path) -> list | None:
    """``[size, sha256]`` of a regular file (not a link), or ``None`` (the entry
    recorded adds its seal, :func:`_sealed`).

    The whole file is hashed, whatever its size (about 0.7 GB/s on one core, so
    1.5 s for 1 GiB: docs/files.md), so an edit anywhere is seen. The same bytes give
    the same entry whenever and wherever they were written, so the manifest of a
    results directory is as reproducible as the results, and a copy that lost its
    modification times (``cp -r``) is still recognised.
    """
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _NONBLOCK)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None
        digest = hashlib.sha256()
        size = 0
        while chunk := os.read(fd, _PART):
            digest.update(chunk)
            size += len(chunk)
    except OSError:
        return None
    finally:
        os.close(fd)
    return [size, digest.hexdigest()]


KEY_ENV = "RAGMETER_STATE_DIR"
KEY_FILE = "manifest.key"
_KEYS: dict[str, bytes] = {}


def _state_dir() -> Path:
    """``$RAGMETER_STATE_DIR``, else ``$XDG_STATE_HOME/ragmeter``, else
    ``~/.local/state/ragmeter``: where the user's own ragmeter keeps what is not shared."""
    named = os.environ.get(KEY_ENV, "").strip()
    if named:
        return Path(named).expanduser()
    root = os.environ.get("XDG_STATE_HOME", "").strip()
    return (Path(root) if root else Path.home() / ".local" / "state") / "ragmeter"


def manifest_key() -> bytes:
    """The user's key that seals manifest entries: 32 random bytes in
    ``<state folder>/manifest.key`` (made on first use, readable by the user only).

    Where that folder cannot be written (a read-only home), a key of this process
    only: what it writes is ragmeter's for the rest of the run, and a later run
    treats it as a file it did not write (it is kept, never replaced).
    """
    path = _state_dir() / KEY_FILE
    cached = _KEYS.get(str(path))
    if cached is not None:
        return cached
    key = _read_key(path)
    if key is None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            tmp = path.with_name(f".{KEY_FILE}.{os.getpid()}.{secrets.token_hex(8)}")
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600)
            try:
                os.write(fd, secrets.token_hex(32).encode("ascii") + b"\n")
                os.fsync(fd)
            finally:
                os.close(fd)
            with contextlib.suppress(FileExistsError):  # another process made it first
                os.link(tmp, path)
            os.unlink(tmp)
        except OSError:
            pass
        key = _read_key(path)
    if key is None:
        key = secrets.token_bytes(32)
    _KEYS[str(path)] = key
    return key


def _read_key(path: Path) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _NONBLOCK)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        raw = os.read(fd, 256).strip()
    except OSError:
        return None
    finally:
        os.close(fd)
    try:
        key = bytes.fromhex(raw.decode("ascii"))
    except (UnicodeDecodeError, ValueError):
        return None
    return key if len(key) >= 16 else None


def _seal(name: str, size: int, digest: str) -> str:
    message = f"{name}\0{size}\0{digest}".encode("utf-8", "surrogatepass")
    return hmac.new(manifest_key(), message, hashlib.sha256).hexdigest()


def _sealed(name: str, entry: list | None) -> list | None:
    """``[size, sha256, seal]`` of the file ``name`` whose ``[size, sha256]`` is ``entry``."""
    return None if entry is None else [*entry, _seal(name, *entry)]


def _matches(entry: object, path: Path) -> bool:
    """Whether ``path`` is still the file ``entry`` recorded (same size and digest), and
    the entry carries this user's seal for that name (so ragmeter wrote it)."""
    if not isinstance(entry, list) or len(entry) != 3 or not isinstance(entry[2], str):
        return False
    try:
        if path.lstat().st_size != entry[0]:  # cheap first
            return False
    except OSError:
        return False
    content = _entry(path)
    if content is None or content != entry[:2]:
        return False
    return hmac.compare_digest(entry[2], _seal(path.name, *content))


def _plain(name: object) -> bool:
    """A file name directly in the folder: no path, not the manifest itself."""
    return (
        isinstance(name, str)
        and name not in ("", ".", "..", MANIFEST)
        and "/" not in name
        and "\\" not in name
        and "\0" not in name
    )


def _parse_manifest(raw: bytes) -> dict[str, dict] | None:
    """``{"files": {...}, "temporaries": {...}}``; empty for an empty file, ``None``
    when it is not a manifest. Entries that are not plain names are dropped."""
    if not raw.strip():
        return {"files": {}, "temporaries": {}}
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("format") != MANIFEST_FORMAT:
        return None
    files = data.get("files")
    if not isinstance(files, dict):
        return None
    temps = data.get("temporaries")
    return {
        "files": {k: v for k, v in files.items() if _plain(k) and isinstance(v, list)},
        "temporaries": {
            k: v
            for k, v in (temps.items() if isinstance(temps, dict) else ())
            if _plain(k) and isinstance(v, dict)
        },
    }


def _open_regular(path: Path, flags: int) -> int | None:
    """An fd of ``path`` when it is a regular file with one link (not followed through a
    symbolic link, never blocking on a fifo), else ``None``."""
    try:
        fd = os.open(path, flags | _NOFOLLOW | _NONBLOCK, 0o666)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
    except OSError:
        os.close(fd)
        return None
    if not stat.S_ISREG(st.st_mode) or st.st_nlink > 1:  # 0: just replaced, read again
        os.close(fd)
        return None
    return fd


def _read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 1 << 16):
        chunks.append(chunk)
    return b"".join(chunks)


def _state(folder: str | Path) -> dict[str, dict]:
    fd = _open_regular(Path(folder) / MANIFEST, os.O_RDONLY)
    if fd is None:
        return {"files": {}, "temporaries": {}}
    try:
        raw = _read_all(fd)
    except OSError:
        return {"files": {}, "temporaries": {}}
    finally:
        os.close(fd)
    return _parse_manifest(raw) or {"files": {}, "temporaries": {}}


def read_manifest(folder: str | Path, names: Collection[str] | None = None) -> dict[str, list]:
    """What ragmeter recorded writing in ``folder``: ``{name: [size, sha256]}``.

    ``names``: the only names ragmeter writes there (others are ignored).
    """
    files = _state(folder)["files"]
    return {k: v for k, v in files.items() if names is None or k in names}


def recorded_temporaries(folder: str | Path) -> dict[str, dict]:
    """The temporaries recorded in ``folder``: ``{name: {"pid": ..., "since": ...}}``."""
    return _state(folder)["temporaries"]


def is_recorded(path: str | Path, names: Collection[str] | None = None) -> bool:
    """Whether the manifest beside ``path`` records it, unchanged since ragmeter wrote it.

    ``names``: the names ragmeter writes in that folder; any other is never ours.
    """
    path = Path(path)
    return _matches(read_manifest(path.parent, names).get(path.name), path)


def _manifest_text(state: dict[str, dict]) -> str:
    data: dict[str, object] = {"format": MANIFEST_FORMAT, "files": state["files"]}
    if state["temporaries"]:
        data["temporaries"] = state["temporaries"]
    return json.dumps(data, sort_keys=True, indent=1) + "\n"


@contextlib.contextmanager
def updated_manifest(folder: str | Path, *, create: bool = True) -> Iterator[dict | None]:
    """Read, change and write back ``folder``'s manifest as one step under its lock.

    Yields ``{"files": ..., "temporaries": ...}`` to change in place, or ``None``
    when there is no manifest to write (a file of another kind at its name, a
    link, a fifo; or none yet and not ``create``): nothing is written then. The
    new text replaces the manifest through a temporary file and a rename, so a
    full disk leaves the old one whole; a manifest left empty is removed.
    """
    folder = Path(folder)
    path = folder / MANIFEST
    while True:
        fd = _open_regular(path, os.O_RDWR | (os.O_CREAT if create else 0))
        if fd is None:
            yield None
            return
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            same = os.stat(path, follow_symlinks=False).st_ino == os.fstat(fd).st_ino
        except OSError:
            same = False
        if same:
            break
        os.close(fd)  # replaced (or removed) by the writer before us: open the new one
    try:
        state = _parse_manifest(_read_all(fd))
        if state is None:
            yield None
            return
        before = _manifest_text(state)
        yield state
        state["files"] = {k: v for k, v in state["files"].items() if os.path.lexists(folder / k)}
        text = _manifest_text(state)
        if text == before:  # nothing changed: nothing written (nor an empty file removed)
            return
        if not state["files"] and not state["temporaries"]:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
            return
        _replace_manifest(path, text)
    finally:
        os.close(fd)


def _replace_manifest(path: Path, text: str) -> None:
    tmp = path.with_name(f"{MANIFEST}.{os.getpid()}.{secrets.token_hex(8)}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o666)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(text.encode("utf-8"))
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def record_written(path: str | Path, *, temporary: str | None = None) -> None:
    """Record ``path``, just written by ragmeter, in its folder's manifest.

    ``temporary``: the recorded temporary it was written as, whose record goes in
    the same step. Entries of files that are gone are dropped. A file at the
    manifest's name that is not a manifest is left alone (nothing is recorded).
    """
    path = Path(path)
    if not _plain(path.name):
        return
    stamp = _sealed(path.name, _entry(path))
    with updated_manifest(path.parent) as state:
        if state is None:
            return
        if temporary is not None:
            state["temporaries"].pop(temporary, None)
        if stamp is not None:
            state["files"][path.name] = stamp


def write_manifest(folder: str | Path, names: Collection[str] | None = None) -> None:
    """Record every file directly in ``folder`` (a folder being built under a temporary
    name, so nothing else writes in it); ``names``: only these."""
    folder = Path(folder)
    files = {}
    for entry in folder.iterdir():
        if not _plain(entry.name) or (names is not None and entry.name not in names):
            continue
        stamp = _sealed(entry.name, _entry(entry))
        if stamp is not None:
            files[entry.name] = stamp
    (folder / MANIFEST).write_text(
        _manifest_text({"files": files, "temporaries": {}}), encoding="utf-8"
    )


def check_replaceable(path: str | Path, flag: str = "--out") -> None:
    """Raise unless the results directory ``path`` holds only what ragmeter wrote there.

    Its manifest must record ``meta.json`` and every other file, each under a name
    ragmeter writes in a results directory (:data:`RESULTS_FILES`) and unchanged;
    ``answers/`` and ``audit/`` are carried into the new directory. A
    ``meta.json`` marker alone (a folder made by hand, or by a ragmeter too old
    to write a manifest) is not enough. A temporary the manifest records (one a
    killed writer left) is ragmeter's too, and goes with the replaced directory.
    """
    path = Path(path)
    state = _state(path)
    recorded = {k: v for k, v in state["files"].items() if k in RESULTS_FILES}
    temporaries = state["temporaries"]
    if not _matches(recorded.get("meta.json"), path / "meta.json"):
        raise InputError(
            f"{path}: has a meta.json but no record that ragmeter wrote the folder (made by "
            f"hand, or by an older ragmeter); ragmeter would replace it, so move {path} away "
            f"or give another {flag}"
        )
    foreign = []
    for entry in sorted(path.iterdir(), key=lambda p: p.name):
        name = entry.name
        if name in CARRIED and entry.is_dir() and not entry.is_symlink():
            continue
        if name == MANIFEST and _open_ok(entry):
            continue
        parts = temporary_parts(name) if name in temporaries else None
        if parts is not None and parts["target"] in RESULTS_FILES:
            continue  # recorded as the temporary of a file of ours: a killed writer's
        if not _matches(recorded.get(name), entry):
            foreign.append(name)
    if foreign:
        shown = ", ".join(foreign[:3]) + (
            f" and {len(foreign) - 3} more" if len(foreign) > 3 else ""
        )
        raise InputError(
            f"{path}: holds {shown}, which ragmeter did not write (or which changed since), "
            f"and replacing the results would delete it; move it out of {path}, "
            f"or give another {flag}"
        )


def _open_ok(path: Path) -> bool:
    """Whether ``path`` is a manifest ragmeter may replace (a regular file, one link)."""
    fd = _open_regular(path, os.O_RDONLY)
    if fd is None:
        return False
    try:
        return _parse_manifest(_read_all(fd)) is not None
    except OSError:
        return False
    finally:
        os.close(fd)


WRITE_ERRNOS = frozenset(
    {errno.ENOSPC, errno.EFBIG, errno.EDQUOT, errno.EROFS, errno.EIO, errno.EMLINK}
)
"""Failures of a write that are no bad input: the disk, a quota or a size limit."""

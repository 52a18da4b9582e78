"""The manifest: what ragmeter wrote in a folder, so that only that is ever replaced.

Each folder ragmeter writes into gets ``.ragmeter-manifest.json``, naming every
file it wrote there with its size, modification time and (up to
:data:`HASH_MAX`) SHA-256. A file counts as ragmeter's only when it is still
the file recorded; a results directory may be replaced only when every file in
it is (``answers/`` and ``audit/`` are carried over by the save).
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path

from ragmeter.errors import InputError

try:  # POSIX; elsewhere the manifest is updated without a lock
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "CARRIED",
    "MANIFEST",
    "check_replaceable",
    "is_recorded",
    "read_manifest",
    "record_written",
    "write_manifest",
]


MANIFEST = ".ragmeter-manifest.json"
MANIFEST_FORMAT = "ragmeter-manifest"
CARRIED = ("answers", "audit")
"""Folders of later stages a rerun carries over whole (or refuses), never deletes."""


HASH_MAX = 16 << 20
"""Files up to this size are also recorded by content (SHA-256), so a copy that lost
its modification time (``cp -r``, a checkout) is still recognised."""


def _stamp(path: Path) -> list[int] | None:
    """``[size, mtime_ns]`` of a regular file (not a link), or ``None``."""
    try:
        st = path.lstat()
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return [st.st_size, st.st_mtime_ns]


def _sha256(path: Path) -> str | None:
    digest = hashlib.sha256()
    try:
        with path.open("rb") as fh:
            while chunk := fh.read(1 << 20):
                digest.update(chunk)
    except OSError:
        return None
    return digest.hexdigest()


def _entry(path: Path) -> list | None:
    """What the manifest records of ``path``: its stamp, and its hash when small."""
    stamp = _stamp(path)
    if stamp is None or stamp[0] > HASH_MAX:
        return stamp
    return [*stamp, _sha256(path)]


def _matches(entry: object, path: Path) -> bool:
    """Whether ``path`` is still the file ``entry`` recorded: same size and time, or
    (for a small file whose time changed in a copy) the same content."""
    stamp = _stamp(path)
    if stamp is None or not isinstance(entry, list) or len(entry) < 2:
        return False
    if entry[:2] == stamp:
        return True
    return len(entry) > 2 and entry[0] == stamp[0] and entry[2] == _sha256(path)


def _parse_manifest(raw: bytes) -> dict[str, list] | None:
    """The recorded files, ``{}`` for an empty file, ``None`` when it is not a manifest."""
    if not raw.strip():
        return {}
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("format") != MANIFEST_FORMAT:
        return None
    files = data.get("files")
    if not isinstance(files, dict):
        return None
    return {k: v for k, v in files.items() if isinstance(v, list)}


def read_manifest(folder: str | Path) -> dict[str, list]:
    """What ragmeter recorded writing in ``folder``: ``{name: [size, mtime_ns]}``."""
    try:
        raw = (Path(folder) / MANIFEST).read_bytes()
    except OSError:
        return {}
    return _parse_manifest(raw) or {}


def is_recorded(path: str | Path) -> bool:
    """Whether the manifest beside ``path`` records it, unchanged since ragmeter wrote it."""
    path = Path(path)
    return _matches(read_manifest(path.parent).get(path.name), path)


def _manifest_text(files: dict[str, list]) -> str:
    return json.dumps({"format": MANIFEST_FORMAT, "files": files}, sort_keys=True, indent=1) + "\n"


def record_written(path: str | Path) -> None:
    """Record ``path``, just written by ragmeter, in its folder's manifest.

    Entries of files that are gone are dropped. A file at the manifest's name
    that is not a manifest is left alone (nothing is recorded then).
    """
    path = Path(path)
    stamp = _entry(path)
    manifest = path.parent / MANIFEST
    if stamp is None or path.name == MANIFEST or manifest.is_symlink():
        return
    if manifest.exists() and not manifest.is_file():
        return
    fd = os.open(manifest, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        chunks = []
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
        files = _parse_manifest(b"".join(chunks))
        if files is None:
            return
        files = {k: v for k, v in files.items() if (path.parent / k).exists()}
        files[path.name] = stamp
        data = _manifest_text(files).encode("utf-8")
        os.lseek(fd, 0, os.SEEK_SET)
        os.ftruncate(fd, 0)
        os.write(fd, data)
    finally:
        os.close(fd)


def write_manifest(folder: str | Path) -> None:
    """Record every file directly in ``folder`` (a results directory being built)."""
    folder = Path(folder)
    files = {}
    for entry in folder.iterdir():
        stamp = _entry(entry)
        if stamp is not None and entry.name != MANIFEST:
            files[entry.name] = stamp
    (folder / MANIFEST).write_text(_manifest_text(files), encoding="utf-8")


def check_replaceable(path: str | Path, flag: str = "--out") -> None:
    """Raise unless the results directory ``path`` holds only what ragmeter wrote there.

    Its manifest must record ``meta.json`` and every other file, unchanged;
    ``answers/`` and ``audit/`` are carried into the new directory. A
    ``meta.json`` marker alone (a folder made by hand, or by a ragmeter too old
    to write a manifest) is not enough.
    """
    path = Path(path)
    recorded = read_manifest(path)
    if not _matches(recorded.get("meta.json"), path / "meta.json"):
        raise InputError(
            f"{path}: has a meta.json but no record that ragmeter wrote the folder (made by "
            f"hand, or by an older ragmeter); ragmeter would replace it, so move {path} away "
            f"or give another {flag}"
        )
    foreign = []
    for entry in sorted(path.iterdir(), key=lambda p: p.name):
        name = entry.name
        if name == MANIFEST or (name in CARRIED and entry.is_dir() and not entry.is_symlink()):
            continue
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

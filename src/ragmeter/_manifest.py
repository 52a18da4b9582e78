"""The manifest: what ragmeter wrote in a folder, so that only that is ever replaced.

Each folder ragmeter writes into gets ``.ragmeter-manifest.json``, naming every
file it wrote there with its size and SHA-256 (of the whole file up to
:data:`WHOLE_MAX`). A file counts as ragmeter's only when it is still the
file recorded; a results directory may be replaced only when every file in
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


WHOLE_MAX = 16 << 20
"""Files up to this size are hashed whole; larger ones by their size, first and last MiB."""

_PART = 1 << 20


def _entry(path: Path) -> list | None:
    """``[size, sha256]`` of a regular file (not a link), or ``None``.

    The same bytes give the same entry whenever and wherever they were written,
    so the manifest of a results directory is as reproducible as the results,
    and a copy that lost its modification times (``cp -r``) is still recognised.
    """
    try:
        st = path.lstat()
        if not stat.S_ISREG(st.st_mode):
            return None
        digest = hashlib.sha256()
        with path.open("rb") as fh:
            if st.st_size <= WHOLE_MAX:
                while chunk := fh.read(_PART):
                    digest.update(chunk)
            else:
                digest.update(fh.read(_PART))
                fh.seek(st.st_size - _PART)
                digest.update(fh.read(_PART))
    except OSError:
        return None
    return [st.st_size, digest.hexdigest()]


def _matches(entry: object, path: Path) -> bool:
    """Whether ``path`` is still the file ``entry`` recorded (same size and digest)."""
    if not isinstance(entry, list) or len(entry) != 2:
        return False
    try:
        if path.lstat().st_size != entry[0]:  # cheap first
            return False
    except OSError:
        return False
    return _entry(path) == entry


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
    """What ragmeter recorded writing in ``folder``: ``{name: [size, sha256]}``."""
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

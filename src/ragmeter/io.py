"""Small file helpers: atomic writes, so nothing is ever left half-written."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` via a temporary file and a rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
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

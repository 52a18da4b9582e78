"""The run history's file: is it a run history of this ragmeter, and is it whole?

:mod:`ragmeter.history.store` opens the file; the checks and the one-line messages for a
file that is someone else's, newer, damaged, or in a read-only folder are here.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from ragmeter.errors import CacheError, InputError, RagmeterError

APPLICATION_ID = 0x52474D48  # "RGMH": a ragmeter run history
SCHEMA_VERSION = 1


def _check_header(path: Path) -> None:
    """Refuse, before SQLite opens it for writing, a file marked as someone else's."""
    if not path.exists():
        return
    try:
        with path.open("rb") as fh:
            head = fh.read(100)
    except OSError as exc:
        raise InputError(f"{path}: cannot read the run history ({exc.strerror or exc})") from None
    if not head:
        return  # a new or empty file
    if len(head) < 100 or not head.startswith(b"SQLite format 3\x00"):
        raise InputError(
            f"{path}: is not a ragmeter run history (not an SQLite file); give another "
            f"--history folder, or move the file away"
        )
    app = int.from_bytes(head[68:72], "big")
    version = int.from_bytes(head[60:64], "big")
    if app != 0 or version != 0:
        _refuse_foreign(path, app, version)


def damaged(path: Path, what: object) -> InputError:
    """The one line for a run history whose file is damaged, and what to do."""
    return InputError(
        f"{path}: the run history is damaged ({what}); move the file away (the next run "
        f"starts a new history) or put back a copy; `sqlite3 {path} .recover` may save "
        f"the runs it still holds"
    )


def _is_damage(exc: BaseException | None) -> bool:
    name = getattr(exc, "sqlite_errorname", "")
    return isinstance(exc, sqlite3.DatabaseError) and (
        name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB"))
        or "malformed" in str(exc)
        or "not a database" in str(exc)
    )


def _read_only(path: Path) -> bool:
    folder = path.parent
    return not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK))


def _read_error(path: Path, exc: sqlite3.DatabaseError) -> RagmeterError:
    if _is_damage(exc):
        return damaged(path, exc)
    if _read_only(path):
        return _open_error(path, CacheError(str(exc)))
    return InputError(f"{path}: cannot read the run history ({exc}); try again, or check the file")


def _open_error(path: Path, exc: RagmeterError) -> RagmeterError:
    """What failing to open or write the history file means: damage, a read-only
    folder, or the store's own message."""
    cause = exc.__context__
    if _is_damage(cause):
        return damaged(path, cause)
    if _read_only(path) and os.access(path.parent, os.W_OK):  # the file, not its folder
        return InputError(
            f"{path}: cannot open the run history: the file is read-only; make it writable "
            f"(chmod u+w), or copy it to a writable folder and give that as --history"
        )
    if _read_only(path):
        return InputError(
            f"{path}: cannot open the run history: {path.parent} is read-only, and SQLite "
            f"writes its journal beside the file; make the folder writable, or copy the "
            f"history to a writable folder and give that as --history"
        )
    return exc


def _refuse_foreign(path: Path, app: int, version: int) -> None:
    if app != APPLICATION_ID:
        raise InputError(
            f"{path}: is an SQLite file that is not a ragmeter run history "
            f"(application_id {app:#x}); give another --history folder, or move the file away"
        )
    if version > SCHEMA_VERSION:
        raise InputError(
            f"{path}: run history of a newer ragmeter (schema {version}, this one reads "
            f"{SCHEMA_VERSION}); upgrade ragmeter"
        )

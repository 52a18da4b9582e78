"""Where ragmeter writes and what it reads back safely: the output rule, manifests, atomic
writes, text safe to show, the SQLite store and the schemas of every file read.

Public names, imported on first use::

    io:           atomic_write_text, read_text, read_jsonl, read_json, atomic_directory
    outputs:      check_output_file, check_results_target, write_output, results_lock,
                  is_results_dir
    safe_text:    printable, redact
    sqlite:       SQLiteStore
    schemas:      check
"""

from __future__ import annotations

from ragmeter._compat import lazy_getattr

_LAZY = {
    "atomic_write_text": "ragmeter.files.io",
    "read_text": "ragmeter.files.io",
    "read_jsonl": "ragmeter.files.io",
    "read_json": "ragmeter.files.io",
    "atomic_directory": "ragmeter.files.io",
    "check_output_file": "ragmeter.files.outputs",
    "check_results_target": "ragmeter.files.outputs",
    "write_output": "ragmeter.files.outputs",
    "results_lock": "ragmeter.files.outputs",
    "is_results_dir": "ragmeter.files.outputs",
    "printable": "ragmeter.files.safe_text",
    "redact": "ragmeter.files.safe_text",
    "SQLiteStore": "ragmeter.files.sqlite",
    "check": "ragmeter.files.schemas",
}
__all__ = sorted(_LAZY)


__getattr__ = lazy_getattr(__name__, _LAZY)

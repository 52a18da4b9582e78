"""The mutation runner's own lists stay true to the code: an equivalent mutant is argued
for a line that exists, and every test file it runs for a module exists."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "ragmeter"


def _runner():
    spec = importlib.util.spec_from_file_location("mutation_runner", ROOT / "bench" / "mutation.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def stale_equivalents(equivalent, package: Path = PACKAGE) -> list[tuple]:
    """The entries whose line text no longer stands in the module they name."""
    stale = []
    for entry in sorted(equivalent, key=str):
        module, text = entry[0], entry[1]
        path = package / module
        lines = path.read_text(encoding="utf-8").splitlines() if path.is_file() else []
        if text not in {line.strip() for line in lines}:
            stale.append(entry[:4])
    return stale


def test_every_equivalent_mutant_names_a_line_its_module_holds():
    assert stale_equivalents(_runner().EQUIVALENT) == []


def test_a_moved_or_deleted_line_is_found_stale(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\nif y < 2:\n    pass\n")
    kept = ("a.py", "if y < 2:", 3, "`<` -> `<=`")
    moved = ("a.py", "z = 3", 4, "3 -> 4")
    gone = ("b.py", "x = 1", 4, "1 -> 2")
    assert sorted(stale_equivalents({kept, moved, gone}, tmp_path)) == sorted([moved, gone])


def test_every_test_file_the_runner_names_exists():
    runner = _runner()
    named = {f for files in runner.TARGETS.values() for f in files}
    assert sorted(f for f in named if not (ROOT / f).is_file()) == []


def test_no_module_names_a_test_file_twice():
    # a test file folded into another left the other named twice, and the module one file
    # short of its tests: each list names each file once
    twice = {
        module: sorted({f for f in files if files.count(f) > 1})
        for module, files in _runner().TARGETS.items()
        if len(set(files)) != len(files)
    }
    assert twice == {}

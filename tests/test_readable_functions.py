"""A function a reviewer can hold in one screen: at most 80 lines, or a comment saying why.

A longer function must say, in a comment starting ``# long:`` within its first lines,
why it cannot be cut into named steps (a table of cases read top to bottom, say).
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "ragmeter"
MAX_LINES = 80
REASON = "# long:"


def long_functions(package: Path = PACKAGE, limit: int = MAX_LINES) -> list[str]:
    """``path:function (lines)`` for each function over ``limit`` lines with no reason given."""
    found = []
    for path in sorted(package.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        lines = source.splitlines()
        for node in ast.walk(ast.parse(source)):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            length = node.end_lineno - node.lineno + 1
            head = lines[node.lineno - 1 : node.lineno + 12]
            if length > limit and not any(REASON in line for line in head):
                rel = path.relative_to(package).as_posix()
                found.append(f"{rel}:{node.name} ({length} lines)")
    return found


def test_no_library_function_is_over_80_lines_without_a_reason():
    assert long_functions() == []


def test_the_length_check_finds_a_long_function_and_accepts_a_reason(tmp_path):
    body = "".join(f"    x{i} = {i}\n" for i in range(85))
    (tmp_path / "a.py").write_text(f"def short():\n    return 1\n\n\ndef long():\n{body}")
    (tmp_path / "b.py").write_text(f"def kept():\n    # long: one table of cases\n{body}")
    assert long_functions(tmp_path) == ["a.py:long (86 lines)"]

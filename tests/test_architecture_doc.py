"""docs/architecture.md stays true: every module is in its table, every named home exists."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
PACKAGE = ROOT / "src" / "ragmeter"


def _table_names() -> set[str]:
    section = DOC.split("## Modules", 1)[1].split("\n## ", 1)[0]
    return {m.group(1) for m in re.finditer(r"^\| `([^`]+)` \|", section, re.M)}


def test_every_module_has_a_row_and_every_row_a_module():
    names = _table_names()
    covered_by_folder = {n.rstrip("/") for n in names if n.endswith("/")}
    missing = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        folder = rel.split("/")[0] if "/" in rel else None
        if rel in names or folder in covered_by_folder or rel.endswith("__main__.py"):
            continue
        if rel.endswith("/__init__.py"):
            continue  # a package is described by its modules' rows
        missing.append(rel)
    assert missing == []
    stale = [n for n in names if not (PACKAGE / n).exists()]
    assert stale == []


def test_every_home_named_for_a_rule_exists():
    section = DOC.split("## One home for each rule", 1)[1].split("\n## ", 1)[0]
    homes = re.findall(r"`([a-z_.]+)\.([A-Za-z_]+)`", section)
    assert len(homes) >= 10
    for module, name in homes:
        assert hasattr(importlib.import_module(f"ragmeter.{module}"), name), (module, name)


def test_the_layers_named_here_are_the_structure_test_s():
    import sys

    sys.path.insert(0, str(ROOT / "tests"))
    from test_structure import LAYERS

    section = DOC.split("## Modules", 1)[1].split("\n## ", 1)[0]
    shown = re.findall(r"^\| \*\*([a-z]+)\*\* \|", section, re.M)
    assert shown == [name for name, _ in LAYERS]

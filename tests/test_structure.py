"""The shape of the code: rooms, not behaviour.

* The library never imports rich: only ``ragmeter.cli`` talks to the terminal.
* No import cycle between ragmeter modules (module-level imports; an import inside
  a function or under ``if TYPE_CHECKING:`` runs later or never, so it cannot close
  a cycle at import time).
* No module over 500 lines unless its docstring says why, in a paragraph that
  starts with ``Size:``.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import textwrap
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "ragmeter"
MAX_LINES = 500
LINE_COUNT_EXEMPT: tuple[str, ...] = ()


# --- no rich in the library -------------------------------------------------------------------

# Runs in a fresh interpreter where rich cannot be imported at all (third-party
# packages that use it when present, such as httpx's command line, fall back).
# Every library module is imported; one that fails for want of rich is a finding,
# one that fails for want of an optional extra is skipped.
_IMPORT_ALL = textwrap.dedent(
    """
    import importlib, json, pkgutil, sys

    class NoRich:
        def find_spec(self, name, path=None, target=None):
            if name == "rich" or name.startswith("rich."):
                raise ModuleNotFoundError(f"No module named {name!r}", name="rich")
            return None

    sys.meta_path.insert(0, NoRich())

    import ragmeter
    from ragmeter.errors import MissingExtra

    def walk(path, prefix):
        # pkgutil.walk_packages imports every package to recurse into it, ragmeter.cli
        # included; this walk never enters the command line.
        for info in pkgutil.iter_modules(path, prefix):
            if info.name == "ragmeter.cli" or info.name.endswith(".__main__"):
                continue
            yield info.name
            if info.ispkg:
                module = importlib.import_module(info.name)
                yield from walk(module.__path__, info.name + ".")

    imported, needs_rich, skipped = [], [], []
    for name in walk(ragmeter.__path__, "ragmeter."):
        try:
            importlib.import_module(name)
            imported.append(name)
        except MissingExtra as exc:
            skipped.append([name, str(exc)])
        except ImportError as exc:
            (needs_rich if exc.name == "rich" else skipped).append([name, str(exc)])
    print(json.dumps({
        "imported": imported,
        "needs_rich": needs_rich,
        "skipped": skipped,
        "rich_loaded": sorted(m for m in sys.modules if m.split(".")[0] == "rich"),
        "cli_loaded": sorted(m for m in sys.modules if m.startswith("ragmeter.cli")),
    }))
    """
)


def _import_everything() -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", _IMPORT_ALL],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"},
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


def test_every_library_module_imports_without_rich():
    seen = _import_everything()
    assert seen["needs_rich"] == []
    assert "rich" not in seen["rich_loaded"] and seen["rich_loaded"] == []
    assert seen["cli_loaded"] == []  # the library never reaches up into the command line
    # the walk really covered the library: the rooms that used to print are in it
    for name in (
        "ragmeter.answers.hand",
        "ragmeter.answers.run",
        "ragmeter.questions.audit",
        "ragmeter.questions.compare",
        "ragmeter.questions.generate",
        "ragmeter.results",
        "ragmeter.stats",
    ):
        assert name in seen["imported"]
    assert len(seen["imported"]) > 40


def _library_files() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "cli" not in p.relative_to(PACKAGE).parts)


def test_no_library_module_mentions_rich_in_an_import():
    """Also the imports inside functions, which the import test above cannot reach."""
    found = []
    for path in _library_files():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            if any(n.split(".")[0] in ("rich", "typer") for n in names):
                found.append(f"{path.relative_to(SRC)}:{node.lineno}")
    assert found == []


# --- no import cycle --------------------------------------------------------------------------


def _module_name(path: Path, src: Path) -> str:
    parts = list(path.relative_to(src).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _module_level_imports(body: list[ast.stmt]):
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If):
            test = node.test
            if (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
                isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
            ):
                continue
            yield from _module_level_imports(node.body)
            yield from _module_level_imports(node.orelse)
        elif isinstance(node, ast.Try):
            yield from _module_level_imports(node.body)
            for handler in node.handlers:
                yield from _module_level_imports(handler.body)
            yield from _module_level_imports(node.orelse)
            yield from _module_level_imports(node.finalbody)


def import_graph(src: Path, package: str = "ragmeter") -> dict[str, set[str]]:
    """Module -> the package's modules it imports at module level.

    ``from a.b import c`` is an edge to ``a.b.c`` when that is a module, else to ``a.b``;
    relative imports are resolved against the importing module.
    """
    paths = {_module_name(p, src): p for p in (src / package).rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        is_package = path.name == "__init__.py"
        edges: set[str] = set()
        for node in _module_level_imports(ast.parse(path.read_text(encoding="utf-8")).body):
            if isinstance(node, ast.Import):
                edges.update(a.name for a in node.names if a.name in paths)
                continue
            if node.level:
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                if sub in paths:
                    edges.add(sub)
                elif target in paths:
                    edges.add(target)
        edges.discard(name)
        graph[name] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycle_between_ragmeter_modules():
    graph = import_graph(SRC)
    assert len(graph) > 50 and sum(map(len, graph.values())) > 100  # the graph was read
    assert graph["ragmeter.cli.answers"] >= {"ragmeter.cli.app", "ragmeter.cli.progress"}
    assert cycles(graph) == []


def test_the_cycle_finder_finds_cycles(tmp_path):
    pkg = tmp_path / "ragmeter"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from ragmeter.sub import b\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "b.py").write_text("from .c import x\n")
    (pkg / "sub" / "c.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from ragmeter import d\n"
        "def f():\n    from ragmeter import d\n"
        "from .. import a\n"
    )
    (pkg / "d.py").write_text("import ragmeter.a\n")
    graph = import_graph(tmp_path)
    assert graph["ragmeter.sub.b"] == {"ragmeter.sub.c"}
    assert graph["ragmeter.sub.c"] == {"ragmeter.a"}  # lazy and TYPE_CHECKING imports left out
    assert cycles(graph) == [["ragmeter.a", "ragmeter.sub.b", "ragmeter.sub.c"]]
    assert cycles({"x": {"y"}, "y": set()}) == []


# --- module size ------------------------------------------------------------------------------


def long_modules_without_reason(package: Path = PACKAGE) -> list[str]:
    missing = []
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(package).as_posix()
        if rel.startswith(LINE_COUNT_EXEMPT):
            continue
        text = path.read_text(encoding="utf-8")
        lines = text.count("\n")
        if lines <= MAX_LINES:
            continue
        doc = ast.get_docstring(ast.parse(text)) or ""
        paragraphs = [p.strip() for p in doc.split("\n\n")]
        if not any(p.startswith("Size:") and len(p) > 40 for p in paragraphs):
            missing.append(f"{rel} ({lines} lines)")
    return missing


def test_long_modules_say_why_they_are_one_module(tmp_path):
    assert long_modules_without_reason() == []
    (tmp_path / "big.py").write_text('"""A module."""\n' + "x = 1\n" * MAX_LINES)
    assert long_modules_without_reason(tmp_path) == ["big.py (501 lines)"]
    (tmp_path / "big.py").write_text(
        '"""A module.\n\nSize: one table of rules read top to bottom; split, it reads worse.\n"""\n'
        + "x = 1\n" * MAX_LINES
    )
    assert long_modules_without_reason(tmp_path) == []

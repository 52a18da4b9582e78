"""The shape of the code: rooms, not behaviour.

* The library never imports rich: only ``ragmeter.cli`` talks to the terminal.
* No import loop between ragmeter modules, counting every import statement wherever it
  stands: at module level, inside a function or method, under ``if``/``try``, and under
  ``if TYPE_CHECKING:`` too (a loop only a type checker follows is still a loop between
  the rooms). The one exception is the root package's block of names resolved on first
  use: each import there must name a module and name of its ``_LAZY`` table.
* Every module sits in one layer of :data:`LAYERS` and imports only from its own layer or
  the ones below; an import running up the layers is allowed only when
  :data:`UPWARD_ALLOWED` names it with its reason (two at most).
* No module over 600 lines, no exemptions.

Imports inside functions are allowed for start-up time and optional extras only: a heavy
third-party library (numpy, torch, altair, ray, llama_cpp, sentence-transformers) or a
costly library module (sentence segmentation, the engine's process pools) imported where
it is first needed, so that ``import ragmeter`` and the command line start fast, and an
extra that may not be installed. Such an import is read like any other, so it must point
down the layers and close no loop: a lazy import that only hides a loop is a finding.
The root package's names resolved on first use (``ragmeter.__getattr__``, module names
held as strings in ``ragmeter._LAZY``) are not import statements and are not read, nor is
its ``if TYPE_CHECKING:`` block while that block imports exactly ``_LAZY``'s names; at
import time the root defines only ``__version__``, so it sits in the base layer.
"""

from __future__ import annotations

import ast
import fnmatch
import json
import subprocess
import sys
import textwrap
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "ragmeter"
MAX_LINES = 600


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
        "ragmeter.runs.results",
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


# --- no import loop, and layers ---------------------------------------------------------------


def _module_name(path: Path, src: Path) -> str:
    parts = list(path.relative_to(src).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(nodes: Iterable[ast.AST]) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import under ``nodes``, at any depth, the body of ``if TYPE_CHECKING:`` included.

    ``import_module("ragmeter.x")`` with the name written out counts as ``import ragmeter.x``.
    """
    for node in nodes:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        else:
            if (
                isinstance(node, ast.Call)
                and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module"
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                yield ast.Import(names=[ast.alias(name=node.args[0].value)])
            yield from _imports(ast.iter_child_nodes(node))


def _type_only_blocks(tree: ast.Module) -> Iterator[ast.If]:
    """The module-level ``if TYPE_CHECKING:`` blocks of ``tree``."""
    for node in tree.body:
        if isinstance(node, ast.If) and _type_checking(node.test):
            yield node


def lazy_names_exempt(tree: ast.Module) -> set[int]:
    """The imports of the root package's ``if TYPE_CHECKING:`` block that name a module
    and name of its ``_LAZY`` table (``{"Name": "ragmeter.module"}``), by ``id``: the names
    it resolves on first use, shown to type checkers. Any other import there counts."""
    table: dict[str, str] = {}
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and [getattr(t, "id", None) for t in node.targets] == ["_LAZY"]
            and isinstance(node.value, ast.Dict)
        ):
            table = {
                k.value: v.value
                for k, v in zip(node.value.keys, node.value.values, strict=True)
                if isinstance(k, ast.Constant) and isinstance(v, ast.Constant)
            }
    exempt = set()
    for block in _type_only_blocks(tree):
        for node in block.body:
            if (
                isinstance(node, ast.ImportFrom)
                and node.level == 0
                and all(table.get(a.name) == node.module and not a.asname for a in node.names)
            ):
                exempt.add(id(node))
    return exempt


def import_graph(src: Path, package: str = "ragmeter") -> dict[str, set[str]]:
    """Module -> the package's modules it imports, wherever the import stands.

    ``from a.b import c`` is an edge to ``a.b.c`` when that is a module, else to ``a.b``;
    relative imports are resolved against the importing module. Importing ``a.b.c`` from
    outside the package ``a.b`` runs ``a/b/__init__.py`` first, so it is an edge to
    ``a.b`` as well (the root package, always loaded first, excepted). Imports under
    ``if TYPE_CHECKING:`` count, except the root package's names of ``_LAZY``
    (:func:`lazy_names_exempt`).
    """
    paths = {_module_name(p, src): p for p in (src / package).rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        is_package = path.name == "__init__.py"
        edges: set[str] = set()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        exempt = lazy_names_exempt(tree) if name == package else set()
        for node in _imports(tree.body):
            if id(node) in exempt:
                continue
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
        for target in list(edges):  # importing a.b.c from outside a.b runs a/b/__init__.py
            parts = target.split(".")
            for i in range(2, len(parts)):
                parent = ".".join(parts[:i])
                if parent in paths and not (name + ".").startswith(parent + "."):
                    edges.add(parent)
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


# The library's layers, lowest first: (name, the modules in it). A module may import from
# its own layer and the ones below. Names are relative to ``ragmeter`` (``__init__`` is the
# root package); a name covers its submodules, and ``*`` matches as in a file name.
LAYERS: tuple[tuple[str, str], ...] = (
    # errors; files written and read (the output rule, manifests, SQLite); HTTP; process pools
    ("base", "__init__ _compat defaults errors files http engine"),
    # statistics; grades, metrics and trec_eval semantics
    ("numbers", "stats scoring"),
    # what a run reads, and how documents are cut
    ("data", "inputs chunking"),
    # retrievers and chat models
    ("services", "retrieval llm"),
    # the comparison of systems, verdicts, summaries, tables and how every number prints
    ("analysis", "comparison"),
    # a search run: the pipeline, scored, saved, read back
    ("runs", "runs"),
    # what is built on saved results: history and the gate, audits, answers
    ("results", "history questions answers"),
    # the notebook API and the report
    ("views", "api report"),
    ("cli", "cli __main__"),
)

# Imports that run up the layers, each with its reason: (importer, imported) -> why.
UPWARD_ALLOWED: dict[tuple[str, str], str] = {}
MAX_UPWARD = 2


def layer_of(module: str, layers=LAYERS, package: str = "ragmeter") -> list[int]:
    """The indexes of the layers that claim ``module`` (exactly one when all is well)."""
    rel = module[len(package) + 1 :] if module != package else "__init__"
    found = []
    for i, (_, names) in enumerate(layers):
        if any(fnmatch.fnmatchcase(rel, n) or rel.startswith(n + ".") for n in names.split()):
            found.append(i)
    return found


def upward_imports(graph: dict[str, set[str]], layers=LAYERS) -> list[tuple[str, str]]:
    """(importer, imported) pairs where the imported module sits in a higher layer."""
    out = []
    for module, targets in sorted(graph.items()):
        for target in sorted(targets):
            here, there = layer_of(module, layers), layer_of(target, layers)
            if here and there and there[0] > here[0]:  # unplaced ones: see the test above
                out.append((module, target))
    return out


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    found = import_graph(SRC)
    assert len(found) > 50 and sum(map(len, found.values())) > 100  # the graph was read
    assert found["ragmeter.cli.answers"] >= {"ragmeter.cli.app", "ragmeter.cli.progress"}
    # imports inside functions are read too
    assert "ragmeter.engine" in found["ragmeter.llm.settings"]
    return found


def test_no_import_loop_between_ragmeter_modules(graph):
    assert cycles(graph) == []


def test_every_module_sits_in_one_layer(graph):
    placed = {m: layer_of(m) for m in graph}
    assert {m: where for m, where in placed.items() if len(where) != 1} == {}


def test_imports_run_down_the_layers(graph):
    assert len(UPWARD_ALLOWED) <= MAX_UPWARD
    assert all(len(why) > 20 for why in UPWARD_ALLOWED.values())  # each with its reason
    upward = upward_imports(graph)
    assert [pair for pair in upward if pair not in UPWARD_ALLOWED] == []
    assert [pair for pair in UPWARD_ALLOWED if pair not in upward] == []  # none left stale


def test_the_graph_reader_and_the_checks_find_what_they_should(tmp_path):
    pkg = tmp_path / "ragmeter"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from ragmeter.sub import b\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "b.py").write_text("from .c import x\n")
    (pkg / "sub" / "c.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from ragmeter import d\n"
        "else:\n    from ragmeter import e\n"
        "from .. import a\n"
    )
    (pkg / "d.py").write_text("import ragmeter.a\n")
    (pkg / "e.py").write_text(
        "import importlib\n"
        "class K:\n    def m(self):\n        try:\n            from ragmeter import d\n"
        "        except ImportError:\n            pass\n"
        "def f():\n    return importlib.import_module('ragmeter.sub')\n"
    )
    graph = import_graph(tmp_path)
    assert graph["ragmeter.a"] == {"ragmeter.sub.b", "ragmeter.sub"}  # the package runs too
    assert graph["ragmeter.sub.b"] == {"ragmeter.sub.c"}  # its own package: already running
    # TYPE_CHECKING's body counts as its else does
    assert graph["ragmeter.sub.c"] == {"ragmeter.a", "ragmeter.d", "ragmeter.e"}
    assert graph["ragmeter.e"] == {"ragmeter.d", "ragmeter.sub"}  # lazy imports read
    assert cycles(graph) == [
        ["ragmeter.a", "ragmeter.d", "ragmeter.e", "ragmeter.sub.b"] + ["ragmeter.sub.c"]
    ]
    assert cycles({"x": {"y"}, "y": set()}) == []
    layers = (("low", "__init__ sub e"), ("high", "a d"))
    assert layer_of("ragmeter", layers) == [0] and layer_of("ragmeter.sub.c", layers) == [0]
    assert layer_of("ragmeter.zz", layers) == []
    assert upward_imports(graph, layers) == [
        ("ragmeter.e", "ragmeter.d"),
        ("ragmeter.sub.c", "ragmeter.a"),
        ("ragmeter.sub.c", "ragmeter.d"),
    ]


# --- module size ------------------------------------------------------------------------------


def long_modules(package: Path = PACKAGE) -> list[str]:
    """Modules over :data:`MAX_LINES` lines, whatever their docstring says."""
    found = []
    for path in sorted(package.rglob("*.py")):
        lines = path.read_text(encoding="utf-8").count("\n")
        if lines > MAX_LINES:
            found.append(f"{path.relative_to(package).as_posix()} ({lines} lines)")
    return found


def test_no_module_over_600_lines(tmp_path):
    assert long_modules() == []
    (tmp_path / "big.py").write_text(
        '"""A module.\n\nSize: one table of rules read top to bottom; split, it reads worse.\n"""\n'
        + "x = 1\n" * MAX_LINES
    )
    assert long_modules(tmp_path) == ["big.py (604 lines)"]  # a reason no longer exempts
    (tmp_path / "big.py").write_text("x = 1\n" * MAX_LINES)
    assert long_modules(tmp_path) == []


# --- imports kept inside functions ------------------------------------------------------------

# Every import of a ragmeter module that stands inside a function, (importer, imported), by
# the reason docs/architecture.md gives ("Imports kept lazy"). A new one must be added here
# and there with its reason; one that is no longer lazy must leave both.
LAZY_ALLOWED: dict[str, set[tuple[str, str]]] = {
    "worker processes and Ray only when a run needs them": {
        ("chunking.strategies", "engine"),
        ("runs.pipeline", "engine"),
        ("llm.settings", "engine"),
    },
    "the model layer only when a model is called": {
        ("questions.audit", "llm"),
        ("questions.generate", "llm"),
        ("questions.generate", "llm.fence"),
    },
    "the search pipeline only when questions are compared by searching": {
        ("questions.compare", "runs.pipeline"),
    },
    "a report section only when the results hold it": {
        ("report.charts", "report.history"),
        ("report.history", "history.store"),
        ("report.history", "history.ancestry"),
        ("report.history", "history.baseline"),
        ("report.history", "history.trend"),
        ("report.sections", "answers.analysis"),
        ("report.sections", "answers.failure_counts"),
        ("report.sections", "answers.failures"),
        ("report.sections", "answers.flips"),
        ("report.sections", "answers.judges"),
        ("report.sections", "answers.position"),
        ("report.sections", "answers.numbers"),
        ("report.sections", "answers.paired"),
        ("report.sections", "answers.store"),
        ("report.sections", "questions.flagged"),
        ("report.sections", "report.corrected"),
    },
    "a retriever kind (and torch) only when the config names it": {
        ("retrieval.dense", "retrieval.remote"),
        ("retrieval.registry", "retrieval.bm25"),
        ("retrieval.registry", "retrieval.dense"),
        ("retrieval.registry", "retrieval.external"),
        ("retrieval.registry", "retrieval.hybrid"),
        ("retrieval.registry", "retrieval.static"),
    },
}


def lazy_imports(package: Path = PACKAGE) -> set[tuple[str, str]]:
    """(importer, imported) for imports of the package's modules made inside a function, in
    the library (the command line excepted), names relative to the package."""
    paths = {_module_name(p, package.parent): p for p in package.rglob("*.py")}
    root = package.name
    found = set()
    for name, path in paths.items():
        if name.startswith(f"{root}.cli"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        top = {id(node) for node in tree.body}  # and a module-level TYPE_CHECKING block's
        top |= {id(node) for block in _type_only_blocks(tree) for node in _imports(block.body)}
        for node in _imports(tree.body):
            if id(node) in top or not isinstance(node, ast.ImportFrom) or node.level:
                continue
            module = node.module or ""
            targets = [f"{module}.{a.name}" for a in node.names]
            targets = [t for t in targets if t in paths] or ([module] if module in paths else [])
            for target in targets:
                found.add((name[len(root) + 1 :], target[len(root) + 1 :]))
    return found


def test_imports_inside_functions_are_the_listed_ones():
    listed = set().union(*LAZY_ALLOWED.values())
    assert sorted(lazy_imports() - listed) == []  # a new lazy import says why, here and in docs
    assert sorted(listed - lazy_imports()) == []  # none left stale
    doc = (PACKAGE.parents[1] / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = doc.split("## Imports kept lazy", 1)[1].split("\n## ", 1)[0]
    for reason, pairs in LAZY_ALLOWED.items():
        assert reason in section
        for importer, imported in pairs:
            assert f"`{importer}` → `{imported}`" in section, (importer, imported)


# --- private names stay in their package ----------------------------------------------------


def _unit(module: str) -> str:
    """The top-level room of a dotted module name: ``ragmeter.stats.draws`` -> ``stats``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def private_reaches(package: Path = PACKAGE) -> list[str]:
    """Where a module uses another room's private name: ``from ragmeter.x.y import _z``, or
    ``_z`` read off a module of another room (``from ragmeter import x`` ... ``x._z``)."""
    found = []
    for path in sorted(package.rglob("*.py")):
        here = _module_name(path, package.parent)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        aliases: dict[str, str] = {}  # a local name -> the ragmeter module it is bound to
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                if not node.module.startswith("ragmeter"):
                    continue
                for a in node.names:
                    if a.name.startswith("_") and not a.name.startswith("__"):
                        if _unit(node.module) != _unit(here):
                            found.append(f"{here}: {node.module}.{a.name}")
                    aliases[a.asname or a.name] = f"{node.module}.{a.name}"
            elif isinstance(node, ast.Import):
                for a in node.names:
                    if a.name.startswith("ragmeter.") and a.asname:
                        aliases[a.asname] = a.name
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in aliases
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
                and _unit(aliases[node.value.id]) != _unit(here)
            ):
                found.append(f"{here}: {aliases[node.value.id]}.{node.attr}")
    return sorted(set(found))


def test_no_module_reaches_for_another_rooms_private_names(tmp_path):
    assert private_reaches() == []
    pkg = tmp_path / "ragmeter"
    (pkg / "a").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a" / "__init__.py").write_text("")
    (pkg / "a" / "x.py").write_text("from ragmeter.a.y import _ok\n")  # its own room: fine
    (pkg / "b.py").write_text("from ragmeter.a.x import _hidden\n")
    (pkg / "c.py").write_text("from ragmeter.a import x\n\ndef f():\n    return x._inner\n")
    assert private_reaches(pkg) == [
        "ragmeter.b: ragmeter.a.x._hidden",
        "ragmeter.c: ragmeter.a.x._inner",
    ]


def test_a_newcomer_reads_the_rooms_from_the_folder_names(graph):
    rooms = {_unit(m) for m in graph}
    assert len(rooms) <= 25 and len(LAYERS) <= 12
    flat = sorted(p.stem for p in PACKAGE.glob("*.py") if p.stem not in ("__init__", "__main__"))
    # beside the sub-packages only the base pieces and the notebook API stand alone
    assert flat == ["_compat", "api", "defaults", "engine", "errors", "http"]

"""The package's names on first use, pinned: each public name is imported from its
module when first read and kept (the next read is a plain lookup); an unknown name is an
AttributeError naming it; ``dir(ragmeter)`` lists every public name, sorted."""

from __future__ import annotations

import pytest

import ragmeter
from ragmeter._compat import MOVED

MODULES = {
    "Config": "ragmeter.inputs.config",
    "Results": "ragmeter.runs.results",
    "SearchRun": "ragmeter.runs.search_run",
    "Summary": "ragmeter.comparison.summary",
    "bootstrap": "ragmeter.stats",
    "compare": "ragmeter.api",
    "load_corpus": "ragmeter.inputs.corpus",
    "load_testset": "ragmeter.inputs.testset",
    "search": "ragmeter.api",
}


@pytest.mark.parametrize("name", sorted(MODULES))
def test_a_name_is_imported_on_first_use_and_kept(name, monkeypatch):
    import importlib

    expected = getattr(importlib.import_module(MODULES[name]), name)
    monkeypatch.delitem(vars(ragmeter), name, raising=False)  # as if never read
    assert name not in vars(ragmeter)
    assert getattr(ragmeter, name) is expected
    assert vars(ragmeter)[name] is expected  # kept: the next read does not import


def test_an_unknown_name_is_an_attribute_error_naming_it():
    with pytest.raises(AttributeError) as caught:
        ragmeter.no_such_name  # noqa: B018
    assert str(caught.value) == "module 'ragmeter' has no attribute 'no_such_name'"
    assert not hasattr(ragmeter, "Chunk")
    assert getattr(ragmeter, "nothing", "fallback") == "fallback"


def test_dir_lists_every_public_name_sorted(monkeypatch):
    monkeypatch.delitem(vars(ragmeter), "search", raising=False)
    names = dir(ragmeter)
    assert names == sorted(names)
    assert set(ragmeter.__all__) <= set(names)  # "search" too, before it is read
    assert "__version__" in names and "__getattr__" in names


# --- the flat module paths of earlier versions


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_module_path_still_imports_and_says_where_it_moved(old):
    import importlib
    import sys

    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=f"{old} has moved to {MOVED[old]}"):
        module = importlib.import_module(old)
    home = importlib.import_module(MOVED[old])
    public = [n for n in dir(home) if not n.startswith("_")]
    assert public and all(getattr(module, n) is getattr(home, n) for n in public)


def test_the_old_paths_users_hold_reach_the_same_objects():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from ragmeter.results import Results as OldResults
        from ragmeter.verdicts import compare_family as old_compare_family

    from ragmeter.comparison.verdicts import compare_family
    from ragmeter.runs.results import Results

    assert OldResults is Results and old_compare_family is compare_family
    from ragmeter import stats
    from ragmeter.stats.bootstrap import bootstrap

    assert stats.bootstrap is bootstrap  # ragmeter.stats is the statistics package itself


# --- names a package held when it was one module (chunking.py, history.py, ...)

# The public names of the modules that became packages (read from their last versions),
# which no longer resolve at the package's top without a forward.
OLD_PACKAGE_NAMES = {
    "ragmeter.chunking": (
        "BATCH_CHARS KINDS PARALLEL_MIN_CHARS ROUND_CHARS Span Strategy prepare_sentences run_scope"
    ),
    "ragmeter.comparison": "family_of",
    "ragmeter.history": (
        "DEFAULT_DIR ENV EXTRA_FILES FILE_NAME RESULT_FILES git_state history_path "
        "read_results_files record_if_enabled"
    ),
    "ragmeter.scoring": "Found grade_items grade_rankings score_system",
}
OLD_NAMES = [(pkg, n) for pkg, names in OLD_PACKAGE_NAMES.items() for n in names.split()]


@pytest.mark.parametrize(("package", "name"), OLD_NAMES)
def test_a_name_a_package_held_as_one_module_resolves_and_says_where_it_moved(package, name):
    import importlib

    from ragmeter._compat import MOVED_NAMES

    home = MOVED_NAMES[f"{package}.{name}"]
    with pytest.warns(DeprecationWarning, match=rf"{package}\.{name} has moved to {home}\."):
        value = getattr(importlib.import_module(package), name)
    assert value is getattr(importlib.import_module(home), name)


# The internals ragmeter.stats re-exported before it kept them in their modules.
STATS_INTERNALS = (
    "_kappa_from_counts _block_sums _estimate _order_stat _plan _tails _BLOCK _CHUNK "
    "_DRAW_CACHE_BYTES _DRAWS _draw_indices _DrawCache _index_blocks _sign_blocks _TIE "
    "_flip_p_values _shared_stream_means _as_vector _check_int _check_seed _finite"
).split()


def test_the_stats_package_holds_no_internal_of_its_modules():
    from ragmeter import stats

    assert [n for n in vars(stats) if n.startswith("_") and not n.endswith("__")] == []
    assert not set(stats.__all__) & set(STATS_INTERNALS)


@pytest.mark.parametrize("name", STATS_INTERNALS)
def test_a_stats_internal_the_package_once_re_exported_forwards_with_a_warning(name):
    import importlib

    from ragmeter import stats
    from ragmeter._compat import MOVED_NAMES

    home = MOVED_NAMES[f"ragmeter.stats.{name}"]
    with pytest.warns(DeprecationWarning, match=rf"ragmeter\.stats\.{name} has moved to {home}"):
        value = getattr(stats, name)
    assert value is getattr(importlib.import_module(home), name)


def test_a_name_no_package_ever_held_is_still_an_attribute_error():
    import warnings

    from ragmeter import chunking

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning on the way to the error
        with pytest.raises(AttributeError, match="'ragmeter.chunking' has no attribute 'Nope'"):
            chunking.Nope  # noqa: B018


def own_lazy_imports(package_dir) -> list[str]:
    """The package ``__init__`` files that define a ``__getattr__`` of their own instead of
    :func:`ragmeter._compat.lazy_getattr`."""
    import ast

    found = []
    for init in sorted(package_dir.rglob("__init__.py")):
        tree = ast.parse(init.read_text(encoding="utf-8"))
        if any(isinstance(n, ast.FunctionDef) and n.name == "__getattr__" for n in tree.body):
            found.append(init.relative_to(package_dir).as_posix())
    return found


def test_every_package_loads_its_names_through_the_one_lazy_import():
    from pathlib import Path

    assert own_lazy_imports(Path(ragmeter.__file__).parent) == []


def test_the_lazy_import_check_finds_a_package_with_its_own(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text(
        "def __getattr__(name):\n    raise AttributeError(name)\n"
    )
    (tmp_path / "ok").mkdir()
    (tmp_path / "ok" / "__init__.py").write_text("__getattr__ = lazy_getattr(__name__, {})\n")
    assert own_lazy_imports(tmp_path) == ["pkg/__init__.py"]

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

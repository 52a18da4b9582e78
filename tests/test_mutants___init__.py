"""The package's names on first use, pinned: each public name is imported from its
module when first read and kept (the next read is a plain lookup); an unknown name is an
AttributeError naming it; ``dir(ragmeter)`` lists every public name, sorted."""

from __future__ import annotations

import pytest

import ragmeter

MODULES = {
    "Config": "ragmeter.config",
    "Results": "ragmeter.results",
    "SearchRun": "ragmeter.runs",
    "Summary": "ragmeter.summary",
    "bootstrap": "ragmeter.stats",
    "compare": "ragmeter.api",
    "load_corpus": "ragmeter.corpus",
    "load_testset": "ragmeter.testset",
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

"""locate_chunks (ragmeter.chunking.frameworks): where an outside splitter's pieces lie in
the text."""

from __future__ import annotations

from types import SimpleNamespace as S

import pytest

from ragmeter.chunking.frameworks import locate_chunks
from ragmeter.errors import InputError

TEXT = "ab ab\n\n  \ncd"


def spans(pieces):
    return [(c.start, c.end) for c in locate_chunks("d", TEXT, pieces, "x")]


def test_strings_are_found_in_order_repeats_included():
    assert spans(["ab", "ab", "cd"]) == [(0, 2), (3, 5), (10, 12)]
    # a piece that starts where the previous one did (an overlap) is found there
    assert spans(["ab ab", "ab"]) == [(0, 5), (3, 5)]
    assert spans(["ab ab", "ab ab"]) == [(0, 5), (0, 5)]
    assert [c.text for c in locate_chunks("d", TEXT, ["cd"], "x")] == ["cd"]
    assert locate_chunks("d", TEXT, ["cd"], "x")[0].doc_id == "d"


def test_empty_and_whitespace_only_chunks_are_dropped():
    assert spans(["ab", "", "  \n", "cd"]) == [(0, 2), (10, 12)]
    assert spans([(0, 2), (7, 10), (5, 5), (10, 12)]) == [(0, 2), (10, 12)]
    assert spans([S(text="\n\n  \n", start_index=5, end_index=10)]) == []


def test_offsets_are_checked():
    assert spans([(0, len(TEXT))]) == [(0, len(TEXT))]
    for bad in [(-1, 2), (3, 2), (0, len(TEXT) + 1), (True, 2), (0, 2.0), ("0", 2)]:
        with pytest.raises(InputError, match="chunk 1: offsets"):
            spans([bad])
    with pytest.raises(InputError, match="chunk 2: offsets"):
        spans([(0, 2), (0, 99)])


def test_objects_use_their_offsets_only_when_they_hold_their_text():
    chonkie = S(text="ab", start_index=3, end_index=5)
    llama = S(get_content=lambda: "cd", start_char_idx=10, end_char_idx=12)
    assert spans([chonkie, llama]) == [(3, 5), (10, 12)]
    wrong = S(text="cd", start_index=0, end_index=2)  # offsets of other text: found by text
    assert spans([wrong]) == [(10, 12)]
    reversed_ = S(text="", start_index=5, end_index=3)
    assert spans([reversed_]) == []
    with pytest.raises(InputError, match="expected a string or a .start, end. pair, got int"):
        spans([3])
    with pytest.raises(InputError, match="expected a list of strings"):
        locate_chunks("d", TEXT, "ab", "x")
    with pytest.raises(InputError, match="expected a list of strings"):
        locate_chunks("d", TEXT, iter(["ab"]), "x")


def test_a_rewritten_piece_is_refused_naming_it():
    with pytest.raises(InputError, match=r"document 'd', chunk 2: the text 'AB' is not"):
        spans(["ab", "AB"])
    with pytest.raises(InputError, match=r"'x{57}\.\.\.'"):
        spans(["x" * 70])
    with pytest.raises(InputError, match="is not in the document at or after"):
        spans(["cd", "ab"])


def test_a_python_splitter_beside_the_config_is_found_and_a_missing_one_named(
    tmp_path, monkeypatch
):
    import sys

    from ragmeter.chunking.frameworks import make_strategy

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    (tmp_path / "my_split_mod.py").write_text("def split(text, n=1):\n    return [text[:n]]\n")
    strategy = make_strategy("mine", "python", function="my_split_mod:split", n=2)
    assert [(c.start, c.end) for c in strategy.split("d", "abcd")] == [(0, 2)]
    assert str(tmp_path) not in sys.path  # the folder is put on the path only to import
    with pytest.raises(InputError, match=r"cannot import no_such_mod_xyz .*; put it on PYTHONPATH"):
        make_strategy("gone", "python", function="no_such_mod_xyz:split")
    (tmp_path / "needs_dep_mod.py").write_text("import no_such_dep_xyz\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(InputError, match=r"cannot import needs_dep_mod: No module named") as err:
        make_strategy("dep", "python", function="needs_dep_mod:split")
    assert "PYTHONPATH" not in str(err.value)
    with pytest.raises(InputError, match="has no function 'nope'"):
        make_strategy("mine", "python", function="my_split_mod:nope")
    with pytest.raises(InputError, match='give function = "module:function"'):
        make_strategy("mine", "python", function="my_split_mod")

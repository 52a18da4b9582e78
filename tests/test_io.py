"""``ragmeter.files.io``: strict JSON unless asked, canonical dumps to the character, and a
directory written atomically: beside its target, with ordinary permissions, under
missing parents, and the body's own error kept."""

from __future__ import annotations

import math
import os
import shutil

import pytest

from ragmeter.errors import InputError
from ragmeter.files.io import atomic_directory, dumps, read_json


def test_read_json_refuses_nan_unless_asked(tmp_path):
    path = tmp_path / "x.json"
    path.write_text('{"a": NaN}')
    with pytest.raises(InputError, match="NaN is not valid JSON"):
        read_json(path)
    assert math.isnan(read_json(path, nan_ok=True)["a"])


def test_dumps_is_canonical():
    assert dumps({"b": 1, "a": [1, "é"]}) == '{\n "a": [\n  1,\n  "é"\n ],\n "b": 1\n}\n'


def test_atomic_directory_builds_beside_its_target(tmp_path):
    target = tmp_path / "missing" / "parents" / "out"
    umask = os.umask(0o022)
    os.umask(umask)
    with atomic_directory(target) as tmp:
        assert tmp.parent == target.parent and tmp.name.startswith(".ragmeter-tmp-")
        (tmp / "f.txt").write_text("x")
        assert not target.exists()
    assert (target / "f.txt").read_text() == "x"
    assert target.stat().st_mode & 0o777 == 0o777 & ~umask
    assert [p.name for p in target.parent.iterdir()] == ["out"]


def test_the_bodys_error_is_raised_even_if_its_temporary_is_gone(tmp_path):
    target = tmp_path / "out"
    with pytest.raises(ValueError, match="the body's own"):
        with atomic_directory(target) as tmp:
            shutil.rmtree(tmp)
            raise ValueError("the body's own")
    assert not target.exists() and list(tmp_path.iterdir()) == []

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


# --- a lone surrogate escape: refused at load with the file and line ---------------------

LONE = '"text": "snow \\ud800 removal"'  # JSON's escape of half a UTF-16 pair, alone


def _surrogate_loaders(root):
    """Every JSON loader's file with a lone surrogate escape on its second line."""
    from ragmeter.inputs.corpus import Document, load_corpus
    from ragmeter.inputs.testset import load_testset

    (root / "corpus.jsonl").write_text(f'{{"id": "a", "text": "snow"}}\n{{"id": "b", {LONE}}}\n')
    beir = root / "beir"
    beir.mkdir()
    (beir / "corpus.jsonl").write_text(f'{{"_id": "a", "text": "x"}}\n{{"_id": "b", {LONE}}}\n')
    (root / "squad.json").write_text(
        '{"data": [{"title": "t", "paragraphs": [\n{"context": "snow \\udfff", "qas": []}]}]}'
    )
    (root / "questions.jsonl").write_text(
        '{"id": "q1", "question": "snow?", "answers": [{"doc": "a", "text": "snow"}]}\n'
        '{"id": "q2", "question": "snow \\udc00?", "answers": [{"doc": "a", "text": "snow"}]}\n'
    )
    docs = [Document("a", "snow removal")]
    return {
        "corpus.jsonl": lambda: load_corpus(root / "corpus.jsonl"),
        "beir/corpus.jsonl": lambda: load_corpus(beir),
        "squad.json": lambda: load_corpus(root / "squad.json"),
        "questions.jsonl": lambda: load_testset(root / "questions.jsonl", docs),
    }


@pytest.mark.parametrize(
    "name", ["corpus.jsonl", "beir/corpus.jsonl", "squad.json", "questions.jsonl"]
)
def test_a_lone_surrogate_escape_is_refused_at_load_with_file_and_line(tmp_path, name):
    # regression: the whole search ran, then saving failed with a UnicodeEncodeError
    with pytest.raises(InputError) as err:
        _surrogate_loaders(tmp_path)[name]()
    message = str(err.value)
    assert f"{name}:2:" in message and "lone surrogate" in message
    assert "\n" not in message


def test_a_surrogate_pair_and_an_escaped_backslash_are_text(tmp_path):
    from ragmeter.files.io import read_jsonl

    path = tmp_path / "c.jsonl"
    path.write_text('{"id": "a", "text": "snow \\ud83d\\ude00 and \\\\ud800"}\n')
    [(_, obj)] = list(read_jsonl(path))
    assert obj["text"] == "snow \U0001f600 and \\ud800"


def test_surrogate_bytes_in_a_markdown_file_are_refused_as_not_utf8(tmp_path):
    from ragmeter.inputs.corpus import load_corpus

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_bytes(b"snow\nremoval \xed\xa0\x80 here\n")
    with pytest.raises(InputError, match=r"a\.md:2: not valid UTF-8"):
        load_corpus(tmp_path / "docs")


def test_a_lone_surrogate_in_a_chroma_reference_is_refused(tmp_path):
    from ragmeter.inputs.corpus import Document
    from ragmeter.inputs.testset import load_chroma_csv

    path = tmp_path / "questions_df.csv"
    refs = '[{""content"": ""snow \\ud800"", ""start_index"": 0, ""end_index"": 4}]'
    path.write_text(f'question,references,corpus_id\nsnow?,"{refs}",a\n')
    with pytest.raises(InputError, match=r"questions_df\.csv:2: a lone surrogate"):
        load_chroma_csv(path, [Document("a", "snow")])


def test_search_and_chunk_refuse_a_lone_surrogate_before_any_work(tmp_path):
    from typer.testing import CliRunner

    from ragmeter.cli import app

    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(f'{{"id": "a", "text": "snow"}}\n{{"id": "b", {LONE}}}\n')
    questions = tmp_path / "q.jsonl"
    questions.write_text(
        '{"id": "q1", "question": "snow?", "answers": [{"doc": "a", "text": "snow"}]}\n'
    )
    out = tmp_path / "res"
    runner = CliRunner()
    for args in (
        ["search", "--corpus", str(corpus), "--testset", str(questions), "--out", str(out)],
        ["chunk", str(corpus)],
    ):
        result = runner.invoke(app, args)
        assert result.exit_code == 2, result.output
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and "corpus.jsonl:2:" in lines[0] and "Traceback" not in lines[0]
    assert not out.exists()


def test_json_chunks_are_dumps_in_pieces_with_arrays_as_lists():
    import numpy as np

    from ragmeter.files.io import json_chunks

    listed = {"b": [0.1, float("nan"), 3.0], "a": {"z": [1.5], "é": "x"}, "n": None}
    arrays = {"b": np.array([0.1, float("nan"), 3.0]), "a": {"z": np.array([1.5]), "é": "x"}}
    arrays["n"] = None
    pieces = list(json_chunks(arrays))
    assert len(pieces) > 5  # written as encoded, not as one text
    assert "".join(pieces) == dumps(listed)
    with pytest.raises(TypeError, match="not JSON serializable"):
        list(json_chunks({"m": np.zeros((2, 2))}))  # only vectors are lists here


def test_csv_lines_are_csv_text_a_line_at_a_time():
    from ragmeter.files.safe_text import csv_lines, csv_text

    rows = [["a", "=1+1"], {"x": "b"}, ["c", "d,e"]]
    pieces = list(csv_lines(["x", "y"], rows))
    assert len(pieces) == 4 and all(p.endswith("\n") for p in pieces)
    assert "".join(pieces) == csv_text(["x", "y"], rows)
    assert pieces[1] == "a,'=1+1\n"  # a formula is never a formula

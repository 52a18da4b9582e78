"""Corpus loaders: folders, JSONL, BEIR, SQuAD; exact text; one-line errors."""

import json

import pytest

from ragmeter.corpus import load_corpus
from ragmeter.errors import InputError


def test_folder_ids_are_relative_paths_and_text_is_exact(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.md").write_bytes("Hello\r\nwörld “quoted”\n".encode())
    (tmp_path / "sub" / "b.txt").write_text("second", encoding="utf-8")
    (tmp_path / "ignored.bin").write_bytes(b"\x00\x01")
    docs = load_corpus(tmp_path)
    assert [d.id for d in docs] == ["a.md", "sub/b.txt"]
    # No newline translation: offsets stay valid against the bytes on disk.
    assert docs[0].text == "Hello\r\nwörld “quoted”\n"


def test_jsonl_and_beir(tmp_path):
    p = tmp_path / "c.jsonl"
    p.write_text('{"id": "d1", "text": "one", "title": "T"}\n\n{"id": 2, "text": "two"}\n')
    docs = load_corpus(p)
    assert [(d.id, d.text, d.title) for d in docs] == [("d1", "one", "T"), ("2", "two", None)]
    beir = tmp_path / "beir"
    beir.mkdir()
    (beir / "corpus.jsonl").write_text(json.dumps({"_id": "x", "title": "", "text": "t"}) + "\n")
    assert [d.id for d in load_corpus(beir)] == ["x"]


def test_squad_contexts_are_documents(tmp_path):
    p = tmp_path / "s.json"
    p.write_text(
        json.dumps(
            {
                "data": [
                    {
                        "title": "T",
                        "paragraphs": [{"context": "c0", "qas": []}, {"context": "c1", "qas": []}],
                    }
                ]
            }
        )
    )
    assert [(d.id, d.text) for d in load_corpus(p)] == [("T/0", "c0"), ("T/1", "c1")]


@pytest.mark.parametrize(
    "content, message",
    [
        (b'{"id": "a", "text": "x"}\n{"id": "b", "text": \n', r"c\.jsonl:2: malformed JSON"),
        (b'{"id": "a"}\n', r"c\.jsonl:1: text is missing; each line needs"),
        (b'{"id": "a", "text": "x"}\n{"id": "a", "text": "y"}\n', "duplicate document id 'a'"),
        (
            b'{"id": "a", "text": "ok"}\n{"id": "b", "text": "\xff"}\n',
            r"c\.jsonl:2: not valid UTF-8",
        ),
        (b'{"id": "a", "text": "  "}\n', "the corpus is empty"),
    ],
)
def test_bad_jsonl_names_file_and_line(tmp_path, content, message):
    p = tmp_path / "c.jsonl"
    p.write_bytes(content)
    with pytest.raises(InputError, match=message):
        load_corpus(p)


def test_missing_and_empty(tmp_path):
    with pytest.raises(InputError, match="no such file or folder"):
        load_corpus(tmp_path / "nope")
    with pytest.raises(InputError, match="the corpus is empty"):
        load_corpus(tmp_path)

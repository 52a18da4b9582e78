"""Corpus loaders: folders, JSONL, BEIR, SQuAD; exact text; one-line errors."""

import gzip
import json

import pytest

from ragmeter.errors import InputError
from ragmeter.inputs.corpus import load_corpus, load_jsonl, load_trec_sgml, looks_like_trec


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


# ``ragmeter.inputs.corpus``: TREC SGML read field by field (plain, gzip, a folder), its errors
# at the right line, BEIR ids, one text file, and the format found for a folder.

SGML = """\
<DOC>
<DOCNO> FT-1 </DOCNO>
<HEADLINE>Cats &amp; dogs</HEADLINE>
<TEXT>Cats <b>sleep</b> a lot.</TEXT>
</DOC>
<DOC>
<DOCNO>FT-2</DOCNO>
Just words after the number.
</DOC>
"""


def test_trec_sgml_fields_titles_and_entities(tmp_path):
    path = tmp_path / "ft.sgml"
    path.write_text(SGML)
    docs = load_trec_sgml(path)
    assert [(d.id, d.title) for d in docs] == [("FT-1", "Cats & dogs"), ("FT-2", None)]
    assert docs[0].text == "Cats & dogs\n\nCats  sleep  a lot."
    assert docs[1].text == "Just words after the number."
    assert [d.id for d in load_corpus(path)] == ["FT-1", "FT-2"]  # found by its <DOC>


def test_trec_sgml_gzip_and_folders(tmp_path):
    (tmp_path / "disk").mkdir()
    with gzip.open(tmp_path / "disk" / "a.gz", "wt") as fh:
        fh.write(SGML)
    (tmp_path / "disk" / "b").write_text(SGML.replace("FT-", "LA-"))
    (tmp_path / "disk" / "readme").write_text("not a corpus file")
    assert looks_like_trec(tmp_path / "disk" / "a.gz")
    assert not looks_like_trec(tmp_path / "disk" / "readme")
    assert not looks_like_trec(tmp_path / "missing")
    (tmp_path / "bad.gz").write_bytes(b"not gzip at all")
    assert not looks_like_trec(tmp_path / "bad.gz")
    ids = [d.id for d in load_corpus(tmp_path / "disk")]  # no .txt/.md: read as TREC
    assert ids == ["FT-1", "FT-2", "LA-1", "LA-2"]
    assert [d.id for d in load_trec_sgml(tmp_path / "disk" / "a.gz")] == ["FT-1", "FT-2"]
    with pytest.raises(InputError, match="cannot read"):
        load_trec_sgml(tmp_path / "bad.gz")


def test_a_folder_with_text_files_is_read_as_text(tmp_path):
    (tmp_path / "a.md").write_text("# A\n\nSome text.")
    (tmp_path / "b.sgml").write_text(SGML)
    assert [d.id for d in load_corpus(tmp_path)] == ["a.md"]


def test_trec_sgml_errors_name_the_line(tmp_path):
    path = tmp_path / "bad.sgml"
    path.write_text("\n\n<DOC>\n<TEXT>no number</TEXT>\n</DOC>\n")
    with pytest.raises(InputError, match=r"bad\.sgml:3: a <DOC> without a <DOCNO>"):
        load_trec_sgml(path)
    path.write_text("<DOC><DOCNO>  </DOCNO><TEXT>x</TEXT></DOC>\n")
    with pytest.raises(InputError, match=r"bad\.sgml:1: a <DOC> without a <DOCNO>"):
        load_trec_sgml(path)
    path.write_text("no documents here\n")
    with pytest.raises(InputError, match="no <DOC> ... </DOC> documents found"):
        load_trec_sgml(path)


def test_trec_sgml_in_latin_1(tmp_path):
    path = tmp_path / "old.sgml"
    path.write_bytes("<DOC><DOCNO>X</DOCNO><TEXT>café</TEXT></DOC>".encode("latin-1"))
    assert load_trec_sgml(path)[0].text == "café"


def test_beir_ids_and_a_line_without_any(tmp_path):
    path = tmp_path / "corpus.jsonl"
    path.write_text('{"_id": "d1", "text": "a", "title": "T"}\n{"id": "d2", "text": "b"}\n')
    docs = load_jsonl(path)
    assert [(d.id, d.text, d.title) for d in docs] == [("d1", "a", "T"), ("d2", "b", None)]
    path.write_text('{"text": "a"}\n')
    with pytest.raises(InputError, match=r"corpus\.jsonl:1: id is missing"):
        load_jsonl(path)


def test_one_text_file_and_an_unknown_format(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("Some notes.")
    (doc,) = load_corpus(path, "file")
    assert (doc.id, doc.text) == ("notes.txt", "Some notes.")
    with pytest.raises(InputError, match="unknown corpus format 'xml'"):
        load_corpus(path, "xml")

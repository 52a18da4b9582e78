"""Answer spans given by text: located exactly, else with whitespace as whitespace.

The whitespace-insensitive match lets any run of whitespace stand for any other
(``"forty two"`` finds ``"forty\\n  two"``), but never for no whitespace at all:
``"forty two"`` must not find ``"fortytwo"``.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from ragmeter.errors import InputError
from ragmeter.inputs.corpus import Document
from ragmeter.inputs.testset import load_testset


def locate(tmp_path, text: str, docs: list[Document], **span) -> tuple[str, int, int]:
    path = tmp_path / "q.jsonl"
    row = {"id": "q1", "question": "?", "answers": [{"text": text, **span}]}
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    [q] = load_testset(path, docs).questions
    [a] = q.answers
    return a.doc, a.start, a.end


def test_words_glued_together_are_not_a_match(tmp_path):
    docs = [Document("a.md", "The answer is fortytwo, not forty-two.")]
    with pytest.raises(InputError, match="answer text not found for q1"):
        locate(tmp_path, "forty two", docs)
    with pytest.raises(InputError, match="answer text not found for q1"):
        locate(tmp_path, "is forty two", docs)


def test_any_whitespace_run_stands_for_any_other(tmp_path):
    text = "Intro.\nThe answer is\tforty \n\n two.\r\nOutro."
    docs = [Document("a.md", text)]
    doc, start, end = locate(tmp_path, "answer is forty two.", docs)
    assert doc == "a.md" and text[start:end] == "answer is\tforty \n\n two."
    # leading and trailing whitespace in the key is not part of the passage
    assert locate(tmp_path, "  forty two  ", docs)[1:] == (
        text.index("forty"),
        text.index("two.") + 3,
    )


def test_an_exact_match_wins_over_a_whitespace_variant(tmp_path):
    text = "forty  two, and later forty two."
    docs = [Document("a.md", text)]
    # the exact text occurs once; the loose pattern would find two places
    assert locate(tmp_path, "forty two", docs)[1:] == (22, 31)


def test_a_glued_copy_does_not_make_a_spaced_key_ambiguous(tmp_path):
    docs = [Document("a.md", "fortytwo here; forty\ntwo there")]
    assert locate(tmp_path, "forty two", docs)[1:] == (15, 24)


_word = st.text(alphabet="abcdefghij", min_size=1, max_size=5)
_space = st.text(alphabet=" \t\n\r\u00a0\u2003", min_size=1, max_size=3)


@given(words=st.lists(_word, min_size=2, max_size=5), data=st.data())
@example(words=["forty", "two"], data=None)
def test_spaced_key_finds_any_spacing_but_never_none(tmp_path_factory, words, data):
    tmp = tmp_path_factory.mktemp("loc")
    if data is None:  # the explicit example: one tab, one newline
        seps = ["\t\n"]
    else:
        seps = [data.draw(_space) for _ in words[1:]]
    spaced = words[0] + "".join(s + w for s, w in zip(seps, words[1:], strict=True))
    key = " ".join(words)
    text = f"0. {spaced} 9."
    doc, start, end = locate(tmp, key, [Document("d", text)])
    assert (start, end) == (3, 3 + len(spaced))
    glued = f"0. {''.join(words)} 9."
    with pytest.raises(InputError, match="not found"):
        locate(tmp, key, [Document("d", glued)])

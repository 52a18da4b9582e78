"""``ragmeter._segment``: blingfire's sentences never begin or end with whitespace, even where
blingfire itself keeps a NEL or an Ogham space in the sentence."""

from __future__ import annotations

from ragmeter import _segment
from ragmeter.doc_index import sentence_spans


def test_blingfire_sentences_leave_out_whitespace_blingfire_keeps():
    # blingfire counts NEL (U+0085) and the Ogham space (U+1680) as part of the sentence they
    # begin or end; ragmeter's sentences start at the first letter and end after the last
    text = "\x85Hello there. Bye now.\u1680"
    assert sentence_spans(text, "blingfire") == [(1, 13), (14, 22)]
    assert _segment.blingfire_sentences("\u1680\u1680Hello there.") == (2, 14)

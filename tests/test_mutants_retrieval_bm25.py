"""``ragmeter.retrieval.bm25``: the paths the usual tests do not take: texts bm25s tokenizes
itself (a character whose lower case is longer), with a stemmer."""

from __future__ import annotations

import numpy as np
import pytest

from ragmeter.retrieval.bm25 import BM25Retriever


def test_a_stemmer_also_applies_where_bm25s_tokenizes_the_texts():
    pytest.importorskip("Stemmer")
    # "İ".lower() is two characters: the token table leaves such a text to bm25s itself
    texts = ["İstanbul runners keep running", "cats sleep all day", "dogs bark at night"]
    assert len(texts[0].lower()) != len(texts[0])
    stemmed = BM25Retriever(stemmer="english")
    stemmed.index(texts)
    ranking = stemmed.rank(["run"], 3)
    assert ranking.ids[0, 0] == 0 and ranking.scores[0, 0] > 0
    plain = BM25Retriever()
    plain.index(texts)
    assert np.all(plain.rank(["run"], 3).scores == 0)  # no stems: "run" is in no text

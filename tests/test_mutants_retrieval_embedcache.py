"""``ragmeter.retrieval.embedcache``: a damaged row of no dimensions is a miss, counts per
model, ``EmbeddingCache.embed`` passing its texts and batch size on, the batch size
checked first, and no texts giving an empty array of the encoder's width."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest

from ragmeter.retrieval.embedcache import DB_NAME, EmbeddingCache, embed_texts, text_key


class Encoder:
    """A vector per text from its length and first letter; records each batch."""

    def __init__(self, model_id: str = "toy/v1", dim: int | None = 3) -> None:
        self.model_id = model_id
        if dim is not None:
            self.dim = dim
        self.batches: list[list[str]] = []

    def encode(self, texts):
        self.batches.append(list(texts))
        return np.array([[len(t), ord(t[0]), 1.0] for t in texts], dtype=np.float64)


def test_a_cache_names_its_file_when_printed(tmp_path):
    with EmbeddingCache(tmp_path) as cache:
        assert repr(cache) == f"EmbeddingCache({str(cache.path)!r})"
        assert DB_NAME in repr(cache)


def test_a_row_of_no_dimensions_is_a_miss_and_is_encoded_again(tmp_path):
    with EmbeddingCache(tmp_path) as cache:
        cache.put("toy/v1", [text_key("ab")], np.ones((1, 3)))
        path = cache.path
    conn = sqlite3.connect(path)
    with conn:  # damage the row: no dimensions, no bytes
        conn.execute("UPDATE vectors SET dim = 0, vec = ?", (b"",))
    conn.close()
    with EmbeddingCache(tmp_path) as cache:
        assert cache.get("toy/v1", [text_key("ab")]) == {}
        enc = Encoder()
        vecs = cache.embed(enc, ["ab"])
    assert enc.batches == [["ab"]]
    assert vecs.tolist() == [[2.0, 97.0, 1.0]]


def test_counts_are_per_model_or_over_all(tmp_path):
    with EmbeddingCache(tmp_path) as cache:
        cache.put("a", [text_key("x"), text_key("y")], np.ones((2, 3)))
        cache.put("b", [text_key("x")], np.ones((1, 3)))
        assert (cache.count(), cache.count("a"), cache.count("b"), cache.count("c")) == (3, 2, 1, 0)


def test_embed_passes_its_texts_and_batch_size_on(tmp_path):
    texts = ["apple", "fig", "kiwi", "banana", "fig"]
    with EmbeddingCache(tmp_path) as cache:
        enc = Encoder()
        vecs = cache.embed(enc, texts, batch_size=2)
        assert [len(b) for b in enc.batches] == [2, 2]  # four distinct texts, two a batch
        assert vecs.dtype == np.float32
        assert vecs[:, 0].tolist() == [5.0, 3.0, 4.0, 6.0, 3.0]
        assert cache.count("toy/v1") == 4
        again = Encoder()
        assert np.array_equal(cache.embed(again, texts, batch_size=2), vecs)
        assert again.batches == []


@pytest.mark.parametrize("size", [0, -1])
def test_a_batch_size_below_one_is_refused_before_any_work(tmp_path, size):
    enc = Encoder()
    with pytest.raises(ValueError, match="batch_size must be at least 1"):
        embed_texts(enc, ["a", "b"], batch_size=size)
    assert enc.batches == []


def test_no_texts_give_an_empty_array_of_the_encoders_width():
    assert embed_texts(Encoder(dim=7), []).shape == (0, 7)
    assert embed_texts(Encoder(dim=None), []).shape == (0, 0)
    assert embed_texts(Encoder(dim=None), []).dtype == np.float32

"""The embedding cache: hits, partial re-encoding, and survival of a killed run."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from ragmeter.retrieval.dense import DenseRetriever
from ragmeter.retrieval.embedcache import (
    DB_NAME,
    EmbeddingCache,
    default_cache_dir,
    embed_texts,
    text_key,
)

FAKE_ENCODER = textwrap.dedent(
    '''
    import hashlib
    import time

    import numpy as np


    def vector(text, dim=16):
        seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
        return np.random.default_rng(seed).standard_normal(dim).astype(np.float32)


    class FakeEncoder:
        """Deterministic vectors per text; counts calls and texts."""

        def __init__(self, model_id="fake/v1", dim=16, delay=0.0):
            self.model_id = model_id
            self.dim = dim
            self.delay = delay
            self.calls = 0
            self.texts = []

        def encode(self, texts):
            self.calls += 1
            self.texts.extend(texts)
            if self.delay:
                time.sleep(self.delay)
            return np.stack([vector(t, self.dim) for t in texts])
    '''
)


@pytest.fixture()
def fake(tmp_path, monkeypatch):
    mod_dir = tmp_path / "mods"
    mod_dir.mkdir()
    (mod_dir / "fakeenc.py").write_text(FAKE_ENCODER)
    monkeypatch.syspath_prepend(str(mod_dir))
    import importlib

    import fakeenc

    importlib.reload(fakeenc)
    return fakeenc


def corpus(n: int) -> list[str]:
    return [f"chunk number {i} about topic {i % 7}" for i in range(n)]


def test_second_identical_run_encodes_nothing(tmp_path, fake):
    texts = corpus(50)
    cache = EmbeddingCache(tmp_path / "cache")
    first = fake.FakeEncoder()
    v1 = embed_texts(first, texts, batch_size=8, cache=cache)
    assert first.calls == 7 and len(first.texts) == 50
    second = fake.FakeEncoder()
    v2 = embed_texts(second, texts, batch_size=8, cache=cache)
    assert second.calls == 0 and second.texts == []
    np.testing.assert_array_equal(v1, v2)
    expected = np.stack([fake.vector(t) for t in texts])
    np.testing.assert_array_equal(v2, expected)


def test_changed_chunk_reencodes_only_that_text(tmp_path, fake):
    texts = corpus(30)
    cache = EmbeddingCache(tmp_path / "cache")
    embed_texts(fake.FakeEncoder(), texts, batch_size=4, cache=cache)
    changed = list(texts)
    changed[13] = "a rewritten chunk that was never embedded"
    enc = fake.FakeEncoder()
    vecs = embed_texts(enc, changed, batch_size=4, cache=cache)
    assert enc.texts == [changed[13]]
    np.testing.assert_array_equal(vecs[13], fake.vector(changed[13]))
    np.testing.assert_array_equal(vecs[12], fake.vector(texts[12]))


def test_model_id_separates_entries_and_duplicates_encode_once(tmp_path, fake):
    cache = EmbeddingCache(tmp_path / "cache")
    texts = ["same", "same", "other", "same"]
    enc = fake.FakeEncoder("model-a")
    vecs = embed_texts(enc, texts, batch_size=10, cache=cache)
    assert enc.texts == ["same", "other"]
    np.testing.assert_array_equal(vecs[0], vecs[3])
    other = fake.FakeEncoder("model-b")
    embed_texts(other, texts, batch_size=10, cache=cache)
    assert other.texts == ["same", "other"]
    assert cache.models() == {"model-a": 2, "model-b": 2}


def test_progress_counts_cached_texts_as_done(tmp_path, fake):
    cache = EmbeddingCache(tmp_path / "cache")
    texts = corpus(10)
    embed_texts(fake.FakeEncoder(), texts[:4], batch_size=3, cache=cache)
    seen = []
    embed_texts(
        fake.FakeEncoder(),
        texts,
        batch_size=3,
        cache=cache,
        progress=lambda d, t: seen.append((d, t)),
    )
    assert seen == [(4, 10), (7, 10), (10, 10)]


def test_default_location_follows_env(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGMETER_CACHE", str(tmp_path / "envcache"))
    assert default_cache_dir() == tmp_path / "envcache"
    cache = EmbeddingCache()
    assert cache.path == tmp_path / "envcache" / DB_NAME
    monkeypatch.delenv("RAGMETER_CACHE")
    assert default_cache_dir() == Path.home() / ".cache" / "ragmeter" / "embeddings"


def test_dense_retriever_uses_cache_across_instances(tmp_path, fake):
    texts = corpus(20)
    enc1 = fake.FakeEncoder()
    r1 = DenseRetriever(encoder=enc1, cache=tmp_path / "c", batch_size=6)
    r1.index(texts)
    first = r1.rank(["chunk number 3"], 5)
    enc2 = fake.FakeEncoder()
    r2 = DenseRetriever(encoder=enc2, cache=tmp_path / "c", batch_size=6)
    r2.index(texts)
    second = r2.rank(["chunk number 3"], 5)
    assert enc1.calls == 4 + 1  # 20 texts in batches of 6, then the question
    assert enc2.calls == 0
    np.testing.assert_array_equal(first.ids, second.ids)


def test_damaged_row_is_a_miss(tmp_path, fake):
    cache = EmbeddingCache(tmp_path / "cache")
    embed_texts(fake.FakeEncoder(), ["a", "b"], cache=cache)
    with sqlite3.connect(cache.path) as conn:
        conn.execute("UPDATE vectors SET vec = x'0000' WHERE key = ?", (text_key("a"),))
    enc = fake.FakeEncoder()
    vecs = embed_texts(enc, ["a", "b"], cache=cache)
    assert enc.texts == ["a"]
    np.testing.assert_array_equal(vecs[0], fake.vector("a"))


WORKER = textwrap.dedent(
    """
    import sys

    sys.path.insert(0, sys.argv[1])
    from fakeenc import FakeEncoder
    from ragmeter.retrieval.embedcache import EmbeddingCache, embed_texts

    texts = [f"{sys.argv[5]}chunk number {i} about topic {i % 7}" for i in range(int(sys.argv[3]))]
    cache = EmbeddingCache(sys.argv[2])

    def progress(done, total):
        print(f"progress {done} {total}", flush=True)

    print("started", flush=True)
    embed_texts(FakeEncoder(delay=float(sys.argv[4])), texts, batch_size=10, cache=cache,
                progress=progress)
    print("finished", flush=True)
    """
)


def _start_worker(tmp_path: Path, n: int, delay: float, prefix: str = "") -> subprocess.Popen:
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    return subprocess.Popen(
        [
            sys.executable,
            str(script),
            str(tmp_path / "mods"),
            str(tmp_path / "cache"),
            str(n),
            str(delay),
            prefix,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def _check_complete(tmp_path: Path, fake, n: int, prefix: str = "") -> int:
    """Run to completion in this process; return how many texts had to be encoded."""
    cache = EmbeddingCache(tmp_path / "cache")
    with sqlite3.connect(cache.path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    texts = [prefix + t for t in corpus(n)]
    enc = fake.FakeEncoder()
    vecs = embed_texts(enc, texts, batch_size=10, cache=cache)
    np.testing.assert_array_equal(vecs, np.stack([fake.vector(t) for t in texts]))
    again = fake.FakeEncoder()
    embed_texts(again, texts, batch_size=10, cache=cache)
    assert again.calls == 0
    cache.close()
    return len(enc.texts)


def test_killed_run_leaves_a_usable_cache(tmp_path, fake):
    n = 200
    proc = _start_worker(tmp_path, n, delay=0.05)
    done = 0
    try:
        for line in proc.stdout:
            if line.startswith("progress"):
                done = int(line.split()[1])
                if done >= 50:
                    break
        else:
            pytest.fail(f"worker ended early: {proc.stderr.read()}")
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == -signal.SIGKILL
    encoded = _check_complete(tmp_path, fake, n)
    # The kill came after at least 5 committed batches and before the last one.
    assert encoded <= n - done
    assert 0 < encoded < n


def test_kills_at_arbitrary_moments_never_corrupt(tmp_path, fake):
    n = 1000
    rng = np.random.default_rng(7)
    rounds = [f"round {r}: " for r in range(4)]
    for prefix, delay in zip(rounds, rng.uniform(0.0, 0.4, size=4), strict=True):
        # Each round embeds new texts into the same cache, so each is killed mid-run.
        proc = _start_worker(tmp_path, n, delay=0.005, prefix=prefix)
        try:
            assert proc.stdout.readline().strip() == "started"
            time.sleep(float(delay))
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        assert proc.returncode == -signal.SIGKILL  # killed, not finished
        with sqlite3.connect(tmp_path / "cache" / DB_NAME) as conn:
            assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    encoded = [_check_complete(tmp_path, fake, n, prefix) for prefix in rounds]
    assert sum(encoded) < n * len(rounds)


# ``ragmeter.retrieval.embedcache``: a damaged row of no dimensions is a miss, counts per model,
# ``EmbeddingCache.embed`` passing its texts and batch size on, the batch size checked first,
# and no texts giving an empty array of the encoder's width.


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

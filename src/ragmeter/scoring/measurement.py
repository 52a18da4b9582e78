"""What a run measured: the settings its scores used, and fingerprints to compare by.

Two runs may be compared (``ragmeter check``, run history) only if they measured
the same thing: the same corpus, the same questions with the same answer keys,
and the same measurement settings. The system under test may change; these may
not. :func:`describe` is what ``meta.json`` records under ``measurement``;
:func:`differences` names what two such records disagree on.

The settings are the *effective* ones: a run keyed by TREC qrels counts grade 1
as relevant whatever ``relevant_grade`` says, and trec_eval's mode uses the
judged ideal ranking and linear gain.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ragmeter.scoring.names import cutoff

__all__ = [
    "corpus_fingerprint",
    "describe",
    "differences",
    "effective_settings",
    "ndcg_settings",
    "relevance_level",
    "relevance_level_of",
    "testset_fingerprint",
]


def relevance_level(questions: Sequence[Any], relevant_grade: int) -> int:
    """The lowest relevant grade: 1 (trec_eval's) for document-level keys, else
    ``relevant_grade``."""
    return 1 if any(q.qrels for q in questions) else relevant_grade


def relevance_level_of(meta: Mapping[str, Any]) -> int:
    """The relevance level a saved run scored at, read back from its ``meta.json``: its
    ``measurement``'s, else the top-level ``relevant_grade`` (older runs), else 2."""
    measured = meta.get("measurement")
    measured = measured if isinstance(measured, Mapping) else {}
    return int(measured.get("relevant_grade", meta.get("relevant_grade", 2)))


def ndcg_settings(config: Any) -> dict[str, str]:
    """nDCG's ideal and gain as a run's scores used them (trec_eval's mode: judged, linear)."""
    compat = bool(config.trec_eval_compat)
    return {
        "ideal": "judged" if compat else str(config.ideal),
        "gain": "linear" if compat else str(config.gain),
    }


def effective_settings(config: Any, questions: Sequence[Any]) -> dict[str, Any]:
    """The settings a run's scores were computed with (see the module docstring)."""
    compat = bool(config.trec_eval_compat)
    return {
        "relevant_grade": relevance_level(questions, config.relevant_grade),
        **ndcg_settings(config),
        "depth": int(config.depth),
        "ks": [int(k) for k in config.ks],
        "trec_eval_compat": compat,
    }


def _digest(chunks: Iterable[bytes]) -> str:
    h = hashlib.blake2b(digest_size=16)
    for chunk in chunks:
        h.update(len(chunk).to_bytes(8, "little"))
        h.update(chunk)
    return h.hexdigest()


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def corpus_fingerprint(documents: Iterable[Any]) -> str:
    """A digest of every document's id and text, in id order."""
    docs = sorted(documents, key=lambda d: d.id)
    return _digest(b for d in docs for b in (_utf8(d.id), _utf8(d.text)))


def testset_fingerprint(questions: Iterable[Any]) -> str:
    """A digest of every question: id, text and answer key (spans, alternatives, qrels)."""
    return _digest(
        _utf8(json.dumps(q.to_dict(), sort_keys=True, ensure_ascii=False)) for q in questions
    )


def describe(config: Any, documents: Sequence[Any], questions: Sequence[Any]) -> dict[str, Any]:
    """``meta.json``'s ``measurement``: effective settings and the two fingerprints."""
    return {
        **effective_settings(config, questions),
        "corpus": corpus_fingerprint(documents),
        "testset": testset_fingerprint(questions),
    }


_NAMES = {
    "corpus": "the corpus (document ids or texts)",
    "testset": "the test set (questions or answer keys)",
    "relevant_grade": "relevant_grade",
    "ideal": "the ideal ranking (ideal)",
    "gain": "the gain",
    "depth": "the ranking depth",
    "trec_eval_compat": "trec_eval's mode",
}


def differences(a: Mapping[str, Any], b: Mapping[str, Any], metric: str = "") -> list[str]:
    """What two ``measurement`` records disagree on for ``metric``, as readable phrases
    (``[]``: the same measurement). The ranking depth counts only for a measure over
    the whole list (``map``, no ``@k``); the ks only say which metrics exist. A key
    only one record has (an older run) is not compared."""
    out = []
    for key, name in _NAMES.items():
        if key == "depth" and cutoff(metric) is not None:
            continue
        if key in a and key in b and a[key] != b[key]:
            shown = "" if key in ("corpus", "testset") else f": {a[key]!r} vs {b[key]!r}"
            out.append(f"{name}{shown}")
    return out

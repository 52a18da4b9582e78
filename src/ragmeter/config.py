"""The run configuration: ``ragmeter.toml`` or flags, with sensible defaults.

Example::

    [corpus]
    path = "posts"            # folder, .jsonl, BEIR folder or SQuAD .json
    [testset]
    path = "questions.jsonl"  # ragmeter JSONL, Chroma .csv or SQuAD .json
    [search]
    strategies = ["fixed", "sentence", "recursive", "parent-400"]
    retrievers = ["bm25"]
    ks = [1, 3, 5, 10]
    [stats]
    seed = 1
    rounds = 10000
    metric = "recall@5"
    [[strategy]]              # a strategy of your own, usable by name above
    name = "fixed-300"
    kind = "fixed"
    size = 300

Relative paths are resolved against the config file's folder.
"""

from __future__ import annotations

import tomllib
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from ragmeter.errors import InputError

DEFAULT_STRATEGIES = (
    "whole",
    "fixed",
    "overlap",
    "sentence",
    "recursive",
    "parent-400",
    "parent-200",
)


@dataclass(frozen=True)
class Config:
    """Everything a search run needs; every field has a default but the paths."""

    corpus: str = ""
    corpus_format: str = "auto"
    testset: str = ""
    testset_format: str = "auto"
    strategies: tuple[str, ...] = DEFAULT_STRATEGIES
    custom_strategies: tuple[dict, ...] = ()
    retrievers: tuple[str | dict, ...] = ("bm25",)
    ks: tuple[int, ...] = (1, 3, 5, 10)
    depth: int = 10
    relevant_grade: int = 2
    ideal: str = "returned"
    gain: str = "exponential"  # or "linear" (trec_eval)
    trec_eval_compat: bool = False
    qrels: str = ""  # document-level judgments: the answer key with [testset] topics
    seed: int = 1
    rounds: int = 10_000
    confidence: float = 0.95
    method: str = "percentile"  # or "bca"
    metric: str = ""  # default: recall@5, or recall at the largest k below 5
    output: str = "ragmeter-results"
    extra: dict = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """A TOML-ready nested dict of this config (the form it is saved in)."""
        d = asdict(self)
        return {
            "corpus": {"path": d["corpus"], "format": d["corpus_format"]},
            "testset": {"path": d["testset"], "format": d["testset_format"], "qrels": d["qrels"]},
            "search": {
                "strategies": list(d["strategies"]),
                "retrievers": [r for r in d["retrievers"] if isinstance(r, str)],
                "ks": list(d["ks"]),
                "depth": d["depth"],
                "relevant_grade": d["relevant_grade"],
                "ideal": d["ideal"],
                "gain": d["gain"],
                "trec_eval_compat": d["trec_eval_compat"],
            },
            "strategy": [dict(s) for s in d["custom_strategies"]],
            "retriever": [dict(r) for r in d["retrievers"] if isinstance(r, dict)],
            "stats": {
                "seed": d["seed"],
                "rounds": d["rounds"],
                "confidence": d["confidence"],
                "method": d["method"],
                "metric": d["metric"],
            },
            "output": {"dir": d["output"]},
            **d["extra"],
        }

    def with_overrides(self, **changes: Any) -> Config:
        """A copy with the given fields replaced (``None`` values are ignored)."""
        return replace(self, **{k: v for k, v in changes.items() if v is not None})

    def validate(self) -> Config:
        if not self.ks or any(k < 1 for k in self.ks):
            raise InputError(f"ks must be positive integers, got {list(self.ks)}")
        if self.depth < max(self.ks):
            object.__setattr__(self, "depth", max(self.ks))
        if self.relevant_grade not in (1, 2):
            raise InputError("relevant_grade must be 1 (part of the passage) or 2 (all of it)")
        if self.ideal not in ("returned", "index", "judged"):
            raise InputError("ideal must be 'returned' (as the seed), 'index' or 'judged'")
        if self.gain not in ("exponential", "linear"):
            raise InputError("gain must be 'exponential' (2^grade - 1, the seed) or 'linear'")
        if self.rounds < 100:
            raise InputError("rounds must be at least 100 (10000 is the default)")
        if not 0.5 < self.confidence < 1:
            raise InputError("confidence must be between 0.5 and 1, e.g. 0.95")
        if self.method not in ("percentile", "bca"):
            raise InputError(f"method must be 'percentile' or 'bca', got {self.method!r}")
        if not self.strategies:
            raise InputError("no strategies given")
        if not self.metric:
            k = max([k for k in self.ks if k <= 5] or [min(self.ks)])
            object.__setattr__(self, "metric", f"recall@{k}")
        from ragmeter.metrics import Metric

        metric = Metric.parse(self.metric)
        if metric.k is not None and metric.k not in self.ks:
            raise InputError(f"metric {self.metric!r} needs k={metric.k} in ks {list(self.ks)}")
        return self


_SECTIONS = {
    ("corpus", "path"): "corpus",
    ("corpus", "format"): "corpus_format",
    ("testset", "path"): "testset",
    ("testset", "format"): "testset_format",
    ("testset", "qrels"): "qrels",
    ("search", "strategies"): "strategies",
    ("search", "retrievers"): "retrievers",
    ("search", "ks"): "ks",
    ("search", "depth"): "depth",
    ("search", "relevant_grade"): "relevant_grade",
    ("search", "ideal"): "ideal",
    ("search", "gain"): "gain",
    ("search", "trec_eval_compat"): "trec_eval_compat",
    ("stats", "seed"): "seed",
    ("stats", "rounds"): "rounds",
    ("stats", "confidence"): "confidence",
    ("stats", "method"): "method",
    ("stats", "metric"): "metric",
    ("output", "dir"): "output",
}


def load_config(path: str | Path) -> Config:
    """Read ``ragmeter.toml``; unknown keys are an error naming the key."""
    path = Path(path)
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"{path}: no such config file") from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{path}: invalid TOML ({exc})") from None
    values: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    base = path.resolve().parent
    custom = raw.pop("strategy", [])
    named_retrievers = raw.pop("retriever", [])
    for section, body in raw.items():
        if not isinstance(body, dict):
            raise InputError(f"{path}: top-level key {section!r} must be a [table]")
        if section not in {s for s, _ in _SECTIONS}:
            extra[section] = body  # sections for later stages (answers, questions...)
            continue
        for key, value in body.items():
            name = _SECTIONS.get((section, key))
            if name is None:
                raise InputError(f"{path}: unknown key [{section}] {key}")
            values[name] = tuple(value) if isinstance(value, list) else value
    for name in ("corpus", "testset", "qrels", "output"):
        if name in values and values[name]:
            values[name] = (
                str((base / values[name]).resolve())
                if name != "output"
                else str(base / values[name])
            )
    retrievers = list(values.get("retrievers", ("bm25",)))
    for r in named_retrievers:
        if not isinstance(r, dict) or "name" not in r:
            raise InputError(f"{path}: each [[retriever]] needs a name")
        if r["name"] not in retrievers:
            retrievers.append(r["name"])
    # Named retrievers replace their bare names in the list; their file paths are
    # relative to the config file, and a hybrid's parts may name other retrievers.
    by_name = {r["name"]: _resolve_retriever(r, base) for r in named_retrievers}
    for r in by_name.values():
        if isinstance(r.get("of"), list):
            r["of"] = [
                by_name.get(part, part) if isinstance(part, str) else part for part in r["of"]
            ]
    values["retrievers"] = tuple(by_name.get(r, r) if isinstance(r, str) else r for r in retrievers)
    for s in custom:
        if not isinstance(s, dict) or "name" not in s:
            raise InputError(f"{path}: each [[strategy]] needs a name")
    values["custom_strategies"] = tuple(custom)
    values["extra"] = extra
    return Config(**values).validate()


_PATH_KEYS = ("path", "corpus")


def _resolve_retriever(spec: dict, base: Path) -> dict:
    """A copy of a ``[[retriever]]`` entry with its file paths made absolute."""
    spec = dict(spec)
    for key in _PATH_KEYS:
        value = spec.get(key)
        if isinstance(value, str) and value and not Path(value).is_absolute():
            spec[key] = str((base / value).resolve())
    return spec

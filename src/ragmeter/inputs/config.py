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
    [answers]
    judge = "ollama:gpt-oss:20b"  # whose grades give answer accuracy (default: the first)
    reruns = 1                # ask the reader and/or judge K times per question
    reruns_of = "both"        # "reader", "judge" or "both"
    temperature = 0.8         # their sampling settings (default 0, top_p the model's)
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

from ragmeter.defaults import DEFAULTS
from ragmeter.errors import InputError, did_you_mean
from ragmeter.files.safe_text import redact
from ragmeter.inputs.family_names import FAMILY_CHOICES, FAMILY_LABELS
from ragmeter.inputs.prices import PRICE_TYPES
from ragmeter.inputs.reruns import check_reruns
from ragmeter.scoring.names import Metric, check_ks, metric_names
from ragmeter.stats.clusters import CLUSTER_MODES
from ragmeter.stats.validate import check_confidence

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
    seed: int = DEFAULTS.seed
    rounds: int = DEFAULTS.rounds
    confidence: float = DEFAULTS.confidence
    method: str = "percentile"  # or "bca"
    metric: str = ""  # default: recall@5, or recall at the largest k below 5
    adjust: str = "maxt"  # step-down max-T; "holm"; "fdr": Benjamini-Hochberg; "none": per pair
    baseline: str = ""  # compare every system with this one
    pairs: tuple[str, ...] = ()  # planned comparisons, "A:B"
    # questions sharing a document: "auto", "none", "document", "field"
    clusters: str = DEFAULTS.clusters
    # "auto": a strategy x retriever grid's families on a grid run, else every pair;
    # "all", "grid", "retrievers" (within each strategy), "strategies" (within each retriever)
    family: str = DEFAULTS.family
    output: str = "ragmeter-results"
    engine: str = "local"  # or "ray" (see ragmeter.engine)
    engine_address: str = "auto"  # ray: "auto", a cluster address, or "" for a local Ray
    engine_workers: int = 0  # local: worker processes (0: one per available CPU)
    accuracy_judge: str = ""  # [answers] judge: whose grades give accuracy ("": as recorded)
    reruns: int = 1  # [answers] reruns: calls per question of the model(s) rerun
    reruns_of: str = "both"  # [answers] reruns_of: "reader", "judge" or "both"
    temperature: float | None = None  # [answers] temperature of the rerun model(s) (None: 0)
    top_p: float | None = None  # [answers] top_p of the rerun model(s) (None: the model's)
    extra: dict = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """A TOML-ready nested dict of this config (the form it is saved in); the values
        of secret-named keys (``api_key``, ``token``...) are ``***``."""
        return redact(self._as_dict(), strings=False)  # type: ignore[return-value]

    def _as_dict(self) -> dict[str, Any]:
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
                "adjust": d["adjust"],
                "baseline": d["baseline"],
                "pairs": list(d["pairs"]),
                "clusters": d["clusters"],
                "family": d["family"],
            },
            "output": {"dir": d["output"]},
            **(
                {"engine": {"kind": d["engine"], "address": d["engine_address"]}}
                if d["engine"] != "local"
                else {}
            ),
            **({"answers": answers} if (answers := _answers_section(d)) else {}),
            **d["extra"],
        }

    def with_overrides(self, **changes: Any) -> Config:
        """A copy with the given fields replaced (``None`` values are ignored)."""
        return replace(self, **{k: v for k, v in changes.items() if v is not None})

    def validate(self) -> Config:
        _check_field_types(self)

        object.__setattr__(self, "ks", tuple(check_ks(self.ks, what="ks")))
        if self.depth < 1:
            raise InputError(f"depth must be at least 1, got {self.depth}; e.g. depth = 10")
        if self.depth < max(self.ks):
            object.__setattr__(self, "depth", max(self.ks))
        if self.relevant_grade not in (1, 2):
            raise InputError("relevant_grade must be 1 (part of the passage) or 2 (all of it)")
        if self.ideal not in ("returned", "index", "judged"):
            raise InputError("ideal must be 'returned' (as the seed), 'index' or 'judged'")
        if self.gain not in ("exponential", "linear"):
            raise InputError("gain must be 'exponential' (2^grade - 1, the seed) or 'linear'")
        check_seed(self.seed)
        check_rounds(self.rounds)
        check_confidence(self.confidence, 0.5)
        if self.method not in ("percentile", "bca"):
            raise InputError(f"method must be 'percentile' or 'bca', got {self.method!r}")
        if self.adjust not in ADJUST_CHOICES:
            raise InputError(
                f"adjust must be one of {', '.join(ADJUST_CHOICES)}, got {self.adjust!r}"
            )
        if self.baseline and self.pairs:
            raise InputError("give a baseline or planned pairs, not both")
        if self.clusters not in CLUSTER_MODES:
            raise InputError(
                f"clusters must be one of {', '.join(CLUSTER_MODES)} "
                f"({DEFAULTS.clusters} is the default), "
                f"got {self.clusters!r}"
            )
        check_family(self.family, "[stats] family")
        check_reruns(self.reruns, self.reruns_of, self.temperature, self.top_p, "[answers] ")
        if self.family not in ("auto", "all"):
            one_family(self.family, self.baseline, self.pairs)
        if not self.strategies:
            raise InputError("no strategies given")
        if self.engine not in ("local", "ray"):
            raise InputError(f"[engine] kind must be 'local' or 'ray', got {self.engine!r}")
        if isinstance(self.engine_workers, bool) or not isinstance(self.engine_workers, int):
            raise InputError(
                f"[engine] workers must be a whole number, got {self.engine_workers!r}"
            )
        if self.engine_workers < 0:
            raise InputError(
                f"[engine] workers must be 0 (auto) or more, got {self.engine_workers}"
            )
        if not self.metric:
            k = max([k for k in self.ks if k <= 5] or [min(self.ks)])
            object.__setattr__(self, "metric", f"recall@{k}")

        try:
            metric = Metric.parse(self.metric)
        except InputError as exc:  # a misspelt name: the nearest measure this run computes
            raise InputError(f"{exc}{did_you_mean(self.metric, metric_names(self.ks))}") from None
        object.__setattr__(self, "metric", str(metric))  # RECALL@5, P_5: recall@5, precision@5
        if metric.k is not None and metric.k not in self.ks:
            raise InputError(f"metric {self.metric!r} needs k={metric.k} in ks {list(self.ks)}")
        if self.trec_eval_compat:  # trec_eval's nDCG; the saved config says what was used
            return replace(self, ideal="judged", gain="linear")
        return self


#: The rules a table can name (``--adjust``): max-T, Holm, Benjamini-Hochberg ("fdr"), none.
ADJUST_CHOICES = ("holm", "maxt", "fdr", "none")


def check_family(family: str, what: str = "family") -> str:
    """``family`` when it is one of :data:`FAMILY_CHOICES`, else one line naming them."""
    if family not in FAMILY_CHOICES:
        raise InputError(
            f"{what} must be one of {', '.join(FAMILY_CHOICES)} (grid: {FAMILY_LABELS['grid']}; "
            f"main-effects: those and each retriever over all strategies, each strategy over "
            f"all retrievers), got {family!r}"
        )
    return family


def one_family(family: str | None, baseline: Any, pairs: Any) -> None:
    """One line when a named ``family`` comes with a ``baseline`` or planned ``pairs``:
    each chooses the table's pairs, so only one may be given."""
    if family and (baseline or pairs):
        raise InputError(
            f"family {family!r} chooses its own pairs; give a family, a baseline or "
            f"planned pairs (--family, --baseline, --pairs), not more than one"
        )


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
    ("stats", "adjust"): "adjust",
    ("stats", "baseline"): "baseline",
    ("stats", "pairs"): "pairs",
    ("stats", "clusters"): "clusters",
    ("stats", "family"): "family",
    ("output", "dir"): "output",
    ("engine", "kind"): "engine",
    ("engine", "address"): "engine_address",
    ("engine", "workers"): "engine_workers",
    ("answers", "judge"): "accuracy_judge",
    ("answers", "reruns"): "reruns",
    ("answers", "reruns_of"): "reruns_of",
    ("answers", "temperature"): "temperature",
    ("answers", "top_p"): "top_p",
}


EXTRA_SECTIONS: dict[str, dict[str, Any]] = {"prices": PRICE_TYPES}  # read by plan --answers
"""Sections read by later stages: ``{section: {key: type}}``, declared with
:func:`declare_section`. A section or key declared nowhere is an error."""

NAMED_ENTRIES = ("strategy", "retriever")
"""Arrays of tables (``[[strategy]]``, ``[[retriever]]``): each entry needs a ``name``;
their other keys are checked by the strategy and retriever that read them."""


def declare_section(name: str, keys: dict[str, Any]) -> None:
    """Declare a ``[name]`` section for a later stage: its keys and their types.

    Its values end up in ``Config.extra[name]``, type-checked like every other key.
    """
    EXTRA_SECTIONS[name] = dict(keys)


MAX_ROUNDS = 10_000_000
"""More bootstrap rounds than this add no precision and only cost memory and time."""


def check_rounds(rounds: object, what: str = "rounds") -> int:
    """Bootstrap rounds: a whole number from 100 to :data:`MAX_ROUNDS`."""
    if isinstance(rounds, bool) or not isinstance(rounds, int) or not 100 <= rounds <= MAX_ROUNDS:
        raise InputError(
            f"{what} must be at least 100 and at most {MAX_ROUNDS:,}, a whole number "
            f"({DEFAULTS.rounds} is the default), got {rounds!r}"
        )
    return rounds


def check_seed(seed: object, what: str = "seed") -> int:
    """A bootstrap seed must be a whole number in 0..2**32-1 (mulberry32 has 32 bits)."""
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= 2**32 - 1:
        raise InputError(
            f"{what} must be a whole number from 0 to {2**32 - 1} (mulberry32 takes 32 bits), "
            f"got {seed!r}"
        )
    return seed


def load_config(path: str | Path) -> Config:
    """Read ``ragmeter.toml``: unknown sections and keys are errors (with a did-you-mean),
    and every value is type-checked; each error is one line naming the file and key."""
    path = Path(path)
    raw = _read_toml(path)
    values: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    base = path.resolve().parent
    sections = _section_keys()
    known = sorted({*sections, *EXTRA_SECTIONS, *NAMED_ENTRIES})
    custom = _named_entries(path, raw.pop("strategy", []), "strategy")
    custom = [_resolve_strategy(s, base) for s in custom]  # python files: beside the config
    named_retrievers = _named_entries(path, raw.pop("retriever", []), "retriever")
    for section, body in raw.items():
        if section not in sections and section not in EXTRA_SECTIONS:
            raise InputError(
                f"{path}: unknown section [{section}]{_did_you_mean(section, known)}; "
                f"sections are {', '.join(_header(k) for k in known)}"
            )
        if not isinstance(body, dict):
            raise InputError(f"{path}: {section} must be a [{section}] table, got {body!r}")
        keys = sections.get(section) or EXTRA_SECTIONS[section]
        for key, value in body.items():
            if key not in keys:
                raise InputError(
                    f"{path}: unknown key [{section}] {key}{_did_you_mean(key, keys)}; "
                    f"[{section}] takes {', '.join(sorted(keys))}"
                )
            _check_value(path, section, key, value, keys[key])
        if section in EXTRA_SECTIONS:
            extra[section] = body
            continue
        for key, value in body.items():
            values[_SECTIONS[(section, key)]] = tuple(value) if isinstance(value, list) else value
    for name in ("corpus", "testset", "qrels", "output"):
        if name in values and values[name]:
            values[name] = (
                str((base / values[name]).resolve())
                if name != "output"
                else str(base / values[name])
            )
    retrievers = list(values.get("retrievers", ("bm25",)))
    for r in named_retrievers:
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
    values["custom_strategies"] = tuple(custom)
    values["extra"] = extra
    try:
        return Config(**values).validate()
    except InputError as exc:
        raise InputError(f"{path}: {exc}") from None


def answers_judge(path: str | Path) -> str:
    """``[answers] judge`` of a config file, type-checked; ``""`` when the file or key is absent.

    Read on its own (not through :func:`load_config`), so a results directory's
    ``config.toml`` from another version still gives its judge.
    """
    path = Path(path)
    if not path.is_file():
        return ""
    body = _read_toml(path).get("answers")
    if not isinstance(body, dict) or "judge" not in body:
        return ""
    _check_value(path, "answers", "judge", body["judge"], _section_keys()["answers"]["judge"])
    return body["judge"].strip()


def _answers_section(d: dict[str, Any]) -> dict[str, Any]:
    """``[answers]`` as saved: only the keys that differ from their defaults, so a run
    that sets none of them saves the config it always did."""
    defaults = {"judge": "", "reruns": 1, "reruns_of": "both", "temperature": None, "top_p": None}
    values = {
        "judge": d["accuracy_judge"],
        "reruns": d["reruns"],
        "reruns_of": d["reruns_of"],
        "temperature": d["temperature"],
        "top_p": d["top_p"],
    }
    return {k: v for k, v in values.items() if v != defaults[k]}


def answers_reruns(path: str | Path) -> dict[str, Any]:
    """The reruns keys of ``[answers]`` in a config file that sets them (``reruns``,
    ``reruns_of``, ``temperature``, ``top_p``), type-checked and checked with
    :func:`check_reruns`; ``{}`` when the file or the keys are absent. Read on its own,
    as :func:`answers_judge` is."""
    path = Path(path)
    if not path.is_file():
        return {}
    body = _read_toml(path).get("answers")
    if not isinstance(body, dict):
        return {}
    keys = _section_keys()["answers"]
    given = {k: body[k] for k in ("reruns", "reruns_of", "temperature", "top_p") if k in body}
    for key, value in given.items():
        _check_value(path, "answers", key, value, keys[key])
    try:
        check_reruns(**given, prefix="[answers] ")
    except InputError as exc:
        raise InputError(f"{path}: {exc}") from None
    return given


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{path}: no such config file; give the path of ragmeter.toml") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a folder; give the path of a ragmeter.toml file") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read the config ({exc.strerror or exc})") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputError(
            f"{path}:{line}: not valid UTF-8 (byte {exc.start}); save the config as UTF-8"
        ) from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{path}: invalid TOML ({exc})") from None


def _section_keys() -> dict[str, dict[str, Any]]:
    """``{section: {key: type}}`` from ``_SECTIONS`` and the types of Config's fields."""
    hints = _field_hints()
    out: dict[str, dict[str, Any]] = {}
    for (section, key), name in _SECTIONS.items():
        out.setdefault(section, {})[key] = _toml_type(hints[name])
    return out


def _field_hints() -> dict[str, Any]:
    import typing

    return typing.get_type_hints(Config)


def _toml_type(hint: Any) -> Any:
    """The type a TOML value must have for a field typed ``hint`` (tuples are arrays)."""
    import typing

    if typing.get_origin(hint) is tuple:
        return list[_toml_type(typing.get_args(hint)[0])]
    return hint


_ADAPTERS: dict[Any, Any] = {}


def _adapter(hint: Any) -> Any:
    from pydantic import ConfigDict, TypeAdapter

    if hint not in _ADAPTERS:
        _ADAPTERS[hint] = TypeAdapter(hint, config=ConfigDict(strict=True))
    return _ADAPTERS[hint]


def _describe(hint: Any) -> str:
    import typing

    if typing.get_origin(hint) in (list, tuple):
        return "a list of " + _describe(typing.get_args(hint)[0]).removeprefix("a ") + "s"
    names = {int: "a whole number", float: "a number", str: "a string", bool: "true or false"}
    if hint in names:
        return names[hint]
    if typing.get_origin(hint) in (typing.Union, __import__("types").UnionType):
        return " or ".join(_describe(a) for a in typing.get_args(hint))
    return f"a {getattr(hint, '__name__', hint)}"


def _type_error(hint: Any, value: Any) -> str | None:
    import typing

    from pydantic import ValidationError

    given = value
    if isinstance(value, list) and typing.get_origin(hint) is tuple:
        value = tuple(value)  # a list given in Python (or TOML) is the tuple the field holds
    try:
        _adapter(hint).validate_python(value)
    except ValidationError:
        return f"must be {_describe(hint)}, got {given!r}"
    return None


def _check_value(path: Path, section: str, key: str, value: Any, hint: Any) -> None:
    problem = _type_error(hint, value)
    if problem:
        raise InputError(f"{path}: [{section}] {key} {problem}; fix the value")


def _check_field_types(cfg: Config) -> None:
    """Config built in Python gets the same type checks as a config file."""
    import typing

    hints = _field_hints()
    for name in _SECTIONS.values():
        problem = _type_error(hints[name], getattr(cfg, name))
        if problem:
            raise InputError(f"{name} {problem}")
        value = getattr(cfg, name)
        if isinstance(value, list) and typing.get_origin(hints[name]) is tuple:
            object.__setattr__(cfg, name, tuple(value))  # frozen: the tuple the field holds


def _named_entries(path: Path, entries: Any, kind: str) -> list[dict]:
    if isinstance(entries, dict):
        raise InputError(f"{path}: write [[{kind}]] (an array of tables), not [{kind}]")
    if not isinstance(entries, list):
        raise InputError(f"{path}: {kind} must be [[{kind}]] tables, got {entries!r}")
    for i, entry in enumerate(entries, start=1):
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise InputError(f"{path}: [[{kind}]] number {i} needs a name (a string)")
        if not entry["name"].strip():
            raise InputError(f"{path}: [[{kind}]] number {i} has an empty name")
        for key in _NUMBER_KEYS.get(kind, ()):
            value = entry.get(key)
            number = isinstance(value, int | float) and not isinstance(value, bool)
            if value is not None and not number:
                raise InputError(
                    f"{path}: [[{kind}]] {entry['name']!r}: {key} = {value!r} must be a number, "
                    f"e.g. {key} = {_NUMBER_KEYS[kind][key]}"
                )
        earlier = [e["name"] for e in entries[: i - 1]]
        if entry["name"] in earlier:
            raise InputError(
                f"{path}: [[{kind}]] number {i} has the name {entry['name']!r} of number "
                f"{earlier.index(entry['name']) + 1}; give each {kind} its own name"
            )
    return entries


_NUMBER_KEYS = {"retriever": {"k1": 1.5, "b": 0.75, "alpha": 0.5}}
"""Keys of named entries that must be numbers whatever reads them."""


def _header(name: str) -> str:
    return f"[[{name}]]" if name in NAMED_ENTRIES else f"[{name}]"


_did_you_mean = did_you_mean


_PATH_KEYS = ("path", "corpus")


def _resolve_strategy(spec: dict, base: Path) -> dict:
    """A ``[[strategy]]`` entry whose ``function = "file.py:name"`` names its file
    relative to the config file, made absolute (so it runs from any folder)."""
    fn = spec.get("function")
    if spec.get("kind") != "python" or not isinstance(fn, str) or ":" not in fn:
        return spec
    file, _, attr = fn.rpartition(":")
    if not file.endswith(".py") or Path(file).is_absolute():
        return spec
    return {**spec, "function": f"{(base / file).resolve()}:{attr}"}


def _resolve_retriever(spec: dict, base: Path) -> dict:
    """A copy of a ``[[retriever]]`` entry with its file paths made absolute."""
    spec = dict(spec)
    for key in _PATH_KEYS:
        value = spec.get(key)
        if isinstance(value, str) and value and not Path(value).is_absolute():
            spec[key] = str((base / value).resolve())
    return spec


declare_section("history", {"path": str, "enabled": bool})  # read by ragmeter.history.store

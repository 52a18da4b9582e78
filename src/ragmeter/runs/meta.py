"""``meta.json``, read once: :class:`RunMeta`.

A results directory's ``meta.json`` records the versions, the corpus and test set
(paths and sizes), every system's strategy and retriever, the ks, depth, seed and
rounds, and what the run measured (``measurement``: the relevance level, the ideal
ranking, the gain, the depth and the corpus and test-set fingerprints).
:meth:`RunMeta.from_json` is the one place where a file written by an earlier
version gets its defaults:

* ``measurement``: ``{}`` (written since runs record what they measured);
* ``relevant_grade``: the measurement's, else the top-level key, else 2 (the whole
  passage);
* ``ideal`` and ``gain``: the measurement's, else the top-level ``ideal``; ``None``
  where not recorded;
* ``systems``, ``ks`` and ``metrics``: empty; ``depth``, ``seed`` and ``rounds``:
  ``None`` (the summary holds the seed and rounds);
* ``corpus``, ``testset`` and ``versions``: ``{}``.

A :class:`RunMeta` is also the record itself, read-only: ``meta["x"]``,
``meta.get("x")`` and ``"x" in meta`` read the file as written, so code that reads
the mapping (or writes it as JSON) reads what it always read.
:func:`ragmeter.runs.saving.meta_record` builds the record a search writes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NoReturn

from ragmeter.scoring.measurement import relevance_level_of

__all__ = ["DEFAULT_RELEVANT_GRADE", "RunMeta"]

DEFAULT_RELEVANT_GRADE = 2
"""The relevance level of a run that did not record one: the whole passage."""


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _int(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    try:
        return int(value)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return None


def _text(value: object) -> str | None:
    return None if value is None else str(value)


@dataclass(frozen=True, eq=False, repr=False)
class RunMeta(dict):
    """One run's ``meta.json``: typed fields with the defaults of older files (see the
    module docstring), over the record as written (a read-only ``dict``). Made by
    :meth:`from_json`; equal to any mapping with the same record."""

    versions: Mapping[str, Any] = field(default_factory=dict)
    corpus: Mapping[str, Any] = field(default_factory=dict)
    testset: Mapping[str, Any] = field(default_factory=dict)
    systems: tuple[Mapping[str, Any], ...] = ()
    ks: tuple[int, ...] = ()
    depth: int | None = None
    seed: int | None = None
    rounds: int | None = None
    metrics: tuple[str, ...] = ()
    measurement: Mapping[str, Any] = field(default_factory=dict)
    relevant_grade: int = DEFAULT_RELEVANT_GRADE
    ideal: str | None = None
    gain: str | None = None

    @classmethod
    def from_json(cls, data: object) -> RunMeta:
        """Read a ``meta.json`` record (a mapping; anything else reads as an empty
        record); keys an earlier version did not write take their defaults here."""
        if isinstance(data, RunMeta):
            return data
        raw = _mapping(data)
        measured = _mapping(raw.get("measurement"))
        systems = raw.get("systems")
        ks = raw.get("ks")
        metrics = raw.get("metrics")
        try:
            grade = relevance_level_of(raw)
        except (TypeError, ValueError):  # not a whole number: the default, as when missing
            grade = None
        meta = cls(
            versions=_mapping(raw.get("versions")),
            corpus=_mapping(raw.get("corpus")),
            testset=_mapping(raw.get("testset")),
            systems=tuple(e for e in systems if isinstance(e, Mapping) and "name" in e)
            if isinstance(systems, list)
            else (),
            ks=tuple(k for k in map(_int, ks) if k is not None) if isinstance(ks, list) else (),
            depth=_int(raw.get("depth")),
            seed=_int(raw.get("seed")),
            rounds=_int(raw.get("rounds")),
            metrics=tuple(str(m) for m in metrics) if isinstance(metrics, list) else (),
            measurement=measured,
            relevant_grade=DEFAULT_RELEVANT_GRADE if grade is None else grade,
            ideal=_text(measured.get("ideal", raw.get("ideal"))),
            gain=_text(measured.get("gain")),
        )
        dict.update(meta, raw)
        return meta

    def to_json(self) -> dict[str, Any]:
        """The record as written (a plain ``dict``, JSON-ready)."""
        return dict(self)

    @property
    def corpus_path(self) -> str | None:
        """The corpus path the run read (``None`` when not recorded)."""
        return _path(self.corpus)

    @property
    def testset_path(self) -> str | None:
        """The test-set path the run read (``None`` when not recorded)."""
        return _path(self.testset)

    @property
    def system_entries(self) -> dict[str, Mapping[str, Any]]:
        """``{name: entry}`` of :attr:`systems` (each entry: name, strategy, retriever...)."""
        return {str(e["name"]): e for e in self.systems}

    @property
    def ndcg(self) -> dict[str, str]:
        """nDCG's ideal and gain as recorded (``{}`` when neither is)."""
        named = {"ideal": self.ideal or "", "gain": self.gain or ""}
        return {k: v for k, v in named.items() if v} if self.ideal else {}

    def __repr__(self) -> str:
        return f"RunMeta({dict.__repr__(self)})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (RunMeta.from_json, (dict(self),))

    def _read_only(self, *args: object, **kwargs: object) -> NoReturn:
        raise TypeError("a run's meta.json record is read-only")

    __setitem__ = __delitem__ = _read_only
    clear = pop = popitem = setdefault = update = __ior__ = _read_only


def _path(entry: Mapping[str, Any]) -> str | None:
    path = entry.get("path")
    return path if isinstance(path, str) else None

"""Reruns: the reader, the judge or both asked K times per question.

``[answers] reruns = K`` (``--reruns K``) with ``reruns_of`` (``reader``, ``judge`` or
``both``) asks that model K times per question with its sampling settings
(``temperature``, default 0, and ``top_p``, default the model's own), each rerun with
its own seed: :func:`rerun_seed` of the run's seed (``[stats] seed``) and the rerun
index. Rerun 0 keeps seed 0, the seed every single call has always had, so K = 1 with
no sampling settings sends exactly the requests of a run without reruns, and finds
their replies in the cache. A model that is not rerun answers (or grades) each
question once, at temperature 0, as always.

Every rerun is one more request through the same runner and reply cache, so a
stopped run resumes with nothing lost or asked twice. Rerun 0 lands in the files it
always did (``reader.jsonl``, ``grades.jsonl``); the others beside them
(:mod:`ragmeter.answers.rerun_store`).
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragmeter.defaults import DEFAULTS, EARLIER
from ragmeter.errors import InputError
from ragmeter.inputs.config import answers_reruns, check_reruns
from ragmeter.runs.results import Results, as_results

if TYPE_CHECKING:  # a type only: reading reruns back loads no model code
    from ragmeter.llm import ChatRequest

__all__ = ["Reruns", "rerun_seed", "rerun_settings"]


def rerun_seed(seed: int, rerun: int) -> int:
    """The seed of rerun ``rerun`` in a run seeded ``seed``: 0 for rerun 0 (the seed of
    every single call), else 31 bits of SHA-256 over both, never 0."""
    if rerun == 0:
        return 0
    digest = hashlib.sha256(f"ragmeter-rerun:{seed}:{rerun}".encode()).digest()
    return int.from_bytes(digest[:4], "big") % (2**31 - 1) + 1


@dataclass(frozen=True)
class Reruns:
    """How often, and how, the reader and the judges are asked per question.

    ``k`` reruns of ``of`` (``reader``, ``judge`` or ``both``) at ``temperature``
    (``None``: 0) and ``top_p`` (``None``: the model's own), seeded from ``seed``: the
    run's seed, which :func:`rerun_settings` fills in (give it when building one by hand).
    """

    k: int = 1
    of: str = "both"
    temperature: float | None = None
    top_p: float | None = None
    seed: int = DEFAULTS.seed

    def __post_init__(self) -> None:
        check_reruns(self.k, self.of, self.temperature, self.top_p)

    @property
    def active(self) -> bool:
        """Whether anything differs from a run without reruns."""
        return self.k > 1 or self.temperature is not None or self.top_p is not None

    def reruns(self, role: str) -> bool:
        """Whether ``role`` (``reader`` or ``judge``) is the model asked again."""
        return self.of in (role, "both")

    def count(self, role: str) -> int:
        """How many times ``role`` is asked per question (1 for the model not rerun)."""
        return self.k if self.reruns(role) else 1

    def seeds(self) -> list[int]:
        return [rerun_seed(self.seed, r) for r in range(self.k)]

    def request(self, role: str, request: ChatRequest, rerun: int) -> ChatRequest:
        """``request`` as rerun ``rerun`` of ``role`` sends it: with the sampling settings
        and the rerun's seed when ``role`` is rerun, else unchanged."""
        if not (self.active and self.reruns(role)):
            return request
        return dataclasses.replace(
            request,
            prompt=None,  # the messages already hold it
            system=None,
            temperature=float(self.temperature or 0.0),
            top_p=self.top_p,
            seed=rerun_seed(self.seed, rerun),
        )

    def to_meta(self) -> dict[str, Any]:
        """What ``meta.json`` records of these settings."""
        return {
            "k": self.k,
            "of": self.of,
            "temperature": self.temperature,
            "top_p": self.top_p,
            "seed": self.seed,
            "seeds": self.seeds(),
        }

    @classmethod
    def from_meta(cls, meta: Any) -> Reruns | None:
        """The settings :meth:`to_meta` recorded, or ``None`` when there are none."""
        if not isinstance(meta, dict):
            return None
        try:
            return cls(
                k=meta.get("k", 1),
                of=meta.get("of", "both"),
                temperature=meta.get("temperature"),
                top_p=meta.get("top_p"),
                seed=meta.get("seed", EARLIER.seed),
            )
        except InputError:
            return None


FLAGS = ("reruns", "reruns_of", "temperature", "top_p")


def rerun_settings(
    results: Results | str | Path,
    *,
    recorded: dict[str, Any] | None = None,
    **flags: Any,
) -> Reruns:
    """The reruns of a command on ``results``: each setting from ``flags`` (``reruns``,
    ``reruns_of``, ``temperature``, ``top_p``; ``None`` is not given), else ``[answers]``
    of the run's ``config.toml``, else ``recorded`` (what an earlier step recorded, the
    form of :meth:`Reruns.to_meta`), else the default; seeded with the run's seed.
    Every value is checked (one line naming the flag or the file) before any model call.
    """
    given = {k: v for k, v in flags.items() if v is not None}
    unknown = set(given) - set(FLAGS)
    if unknown:
        raise TypeError(f"unknown reruns setting {sorted(unknown)[0]!r}")
    check_reruns(**given, prefix="--")
    res = as_results(results)
    config = answers_reruns(res.path / "config.toml")
    old = Reruns.from_meta(recorded)
    earlier = (
        {"reruns": old.k, "reruns_of": old.of, "temperature": old.temperature, "top_p": old.top_p}
        if old is not None and not config
        else {}
    )
    values = {**earlier, **config, **given}
    return Reruns(
        k=values.get("reruns", 1),
        of=values.get("reruns_of", "both"),
        temperature=values.get("temperature"),
        top_p=values.get("top_p"),
        seed=res.summary.seed,
    )

"""The defaults every signature, the configuration and the command line read: one record.

Changing a default is a one-line change here: the notebook API (``ragmeter.bootstrap``,
``ragmeter.compare``...), every library function that takes these settings, ``Config``
(``ragmeter.toml``) and every command's flags read :data:`DEFAULTS`, and no other module
writes these values as literals (``tests/test_architecture_doc.py`` looks for copies).

:data:`EARLIER` is a second record, and it never changes: what a file written before a
setting was recorded used (a summary without ``rounds`` was made with 10,000 rounds, a
strategy described without a segmenter was cut with syntok's sentences, a saved run that
names no family compared every pair, answers whose record names no k were made from the
top 5 passages), whatever the defaults of new runs become.

Imports nothing, so every layer may read it.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DEFAULTS", "EARLIER", "Defaults"]


@dataclass(frozen=True)
class Defaults:
    """The settings a run, a comparison or an interval takes when none is given."""

    rounds: int  # bootstrap rounds (and sign flips of a paired test)
    confidence: float  # the level of every interval
    seed: int  # the seed of every draw (mulberry32)
    clusters: str  # whether questions cluster by document: "auto", "none", "document", "field"
    segmenter: str  # whose sentences the sentence strategies cut at: "icu", "syntok", "blingfire"
    family: str  # the comparison family: "auto" (a grid's families on a grid run, else "all")
    reader_k: int  # the top k passages a reader answers from
    half_width: float  # planning's target ± half-width, a fraction of the scale (4 points)
    difference: float  # the paired difference planning separates, a fraction (5 points)
    power: float  # the power planning separates it with


DEFAULTS = Defaults(
    rounds=10_000,
    confidence=0.95,
    seed=1,
    clusters="auto",
    segmenter="icu",
    family="auto",
    reader_k=5,
    half_width=0.04,
    difference=0.05,
    power=0.8,
)
"""The defaults of new runs, comparisons and intervals."""

EARLIER = Defaults(
    rounds=10_000,
    confidence=0.95,
    seed=1,
    clusters="auto",
    segmenter="syntok",
    family="all",
    reader_k=5,
    half_width=0.04,  # never read from a file: planning targets are not recorded
    difference=0.05,
    power=0.8,
)
"""What files written before a setting was recorded used; fixed, whatever :data:`DEFAULTS`
become."""

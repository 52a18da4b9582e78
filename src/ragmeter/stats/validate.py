"""Input checks shared by the statistics modules: each bad value is a one-line InputError.

Also the two types every statistics function takes: :data:`Seed` (an integer for
mulberry32, or a numpy Generator) and :data:`Method` (the interval method).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

from ragmeter.errors import InputError

Method = Literal["percentile", "bca"]
Seed = int | np.random.Generator

_METHODS = ("percentile", "bca")


def _check_int(value: object, name: str, minimum: int | None = None) -> None:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise InputError(f"{name} must be an integer, got {value!r}")
    if minimum is not None and value < minimum:
        raise InputError(f"{name} must be at least {minimum}, got {value}")


def _check_seed(seed: object) -> None:
    if isinstance(seed, np.random.Generator):
        return
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
        raise InputError(f"seed must be an integer or a numpy Generator, got {seed!r}")


def seed_record(seed: Seed) -> int | None:
    return None if isinstance(seed, np.random.Generator) else int(seed)


def check_fraction(value: float, name: str) -> None:
    if not 0.0 < value < 1.0:
        raise InputError(f"{name} must lie strictly between 0 and 1, got {value}")


def check_common(rounds: int, seed: Seed, method: str, confidence: float) -> None:
    _check_int(rounds, "rounds", minimum=1)
    _check_seed(seed)
    if method not in _METHODS:
        raise InputError(f"method must be one of {_METHODS}, got {method!r}")
    check_confidence(confidence)


def check_confidence(confidence: float, lowest: float = 0.0, what: str = "confidence") -> None:
    """``confidence`` strictly between ``lowest`` and 1, with a level
    (:func:`alpha_of`) above 0: ``0.9999999999999999`` is refused here, not later as
    "alpha 0". Every confidence a run or a comparison takes is checked here."""
    if not lowest < confidence < 1.0:
        raise InputError(f"{what} must be between {lowest:g} and 1, got {confidence}; e.g. 0.95")
    if alpha_of(confidence) <= 0.0:
        raise InputError(
            f"{what} {confidence!r} is too close to 1: its level, 1 - {what}, rounds to 0 "
            f"(no interval can reach it); give at most 0.999999999999, e.g. 0.99"
        )


def check_names(names: Sequence[str], count: int) -> None:
    if isinstance(names, str) or len(names) != count:
        raise InputError(f"need {count} names, got {names!r}")
    if len(set(names)) != count:
        raise InputError(f"names must be distinct, got {list(names)!r}")


def _finite(arr: np.ndarray, name: str) -> np.ndarray:
    if not np.all(np.isfinite(arr)):
        raise InputError(f"{name} must be finite numbers (found NaN or infinity)")
    return arr + 0.0  # also turns -0.0 into 0.0


def _as_vector(values: ArrayLike, name: str) -> np.ndarray:
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{name} must be numbers: {exc}") from None
    if arr.ndim != 1:
        raise InputError(f"{name} must be a flat list of per-question scores")
    if arr.size == 0:
        raise InputError(f"{name} must not be empty")
    return _finite(arr, name)


def as_matrix(values: ArrayLike, name: str) -> np.ndarray:
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(
            f"{name} must be a table of numbers with equal-length rows: {exc}"
        ) from None
    if arr.ndim != 2:
        raise InputError(f"{name} must be 2-D (systems x questions)")
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise InputError(f"{name} must not be empty")
    return _finite(arr, name)


def alpha_of(confidence: float) -> float:
    """The level at ``confidence``: ``1 - confidence``, rounded so that 0.95 gives exactly
    0.05. Every level a comparison uses comes from here or from its rule."""
    return round(1.0 - confidence, 12)

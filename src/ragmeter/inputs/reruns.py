"""The checks of the reruns settings (``[answers] reruns``, ``reruns_of``, ``temperature``,
``top_p`` and their flags), shared by the config and the command line: each bad value
is one line naming where it came from, before any model call."""

from __future__ import annotations

import math

from ragmeter.errors import InputError, did_you_mean

__all__ = ["MAX_RERUNS", "RERUNS_OF", "check_reruns"]

RERUNS_OF = ("reader", "judge", "both")
"""Which model ``[answers] reruns`` asks again (``reruns_of``, ``--reruns-of``)."""

MAX_RERUNS = 1000
"""More reruns per question than this is a typo, not a plan."""


def check_reruns(
    reruns: object = 1,
    reruns_of: object = "both",
    temperature: object = None,
    top_p: object = None,
    prefix: str = "",
) -> None:
    """One line for a bad reruns setting: ``reruns`` a whole number from 1 to
    :data:`MAX_RERUNS`, ``reruns_of`` one of :data:`RERUNS_OF`, ``temperature`` 0 or
    more, ``top_p`` in (0, 1]. ``prefix`` names where they came from (``[answers] ``
    for a config; ``--`` for flags, whose names use dashes)."""

    def name(key: str) -> str:
        return prefix + (key.replace("_", "-") if prefix == "--" else key)

    if isinstance(reruns, bool) or not isinstance(reruns, int) or not 1 <= reruns <= MAX_RERUNS:
        raise InputError(
            f"{name('reruns')} must be a whole number from 1 (one call per question, the "
            f"default) to {MAX_RERUNS}, got {reruns!r}"
        )
    if reruns_of not in RERUNS_OF:
        raise InputError(
            f"{name('reruns_of')} must be one of {', '.join(RERUNS_OF)}, got {reruns_of!r}"
            f"{did_you_mean(str(reruns_of), RERUNS_OF)}"
        )
    if temperature is not None and not (_number(temperature) and 0 <= temperature < math.inf):
        raise InputError(
            f"{name('temperature')} must be a number, 0 (no sampling) or more, e.g. 0.8; "
            f"got {temperature!r}"
        )
    if top_p is not None and not (_number(top_p) and 0 < top_p <= 1):
        raise InputError(
            f"{name('top_p')} must be a number above 0 and at most 1, e.g. 0.95; got {top_p!r}"
        )


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)

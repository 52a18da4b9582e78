"""What model calls cost: ``[prices]`` of ``ragmeter.toml``, per million tokens.

::

    [prices]                  # per million tokens, as providers quote them
    currency = "USD"          # a label printed beside the amounts (default USD)
    reader_prompt = 0.15      # the reader's prompt tokens
    reader_completion = 0.60  # the reader's completion tokens
    judge_prompt = 2.50       # each judge's prompt tokens
    judge_completion = 10.00  # each judge's completion tokens

A key left out costs nothing; a section left out means no money is shown (the plan
still counts calls and tokens). An unknown key or a negative price is one line naming
the file and key, exit code 2.
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragmeter.errors import InputError, did_you_mean

__all__ = ["PRICE_KEYS", "PRICE_TYPES", "Prices", "check_prices", "read_prices"]

PRICE_KEYS = ("reader_prompt", "reader_completion", "judge_prompt", "judge_completion")
"""The prices ``[prices]`` takes, each per million tokens; ``currency`` beside them."""

PRICE_TYPES: dict[str, Any] = {**dict.fromkeys(PRICE_KEYS, float | int), "currency": str}
"""``[prices]``'s keys and their TOML types, for the configuration's own checks (names and
types when ``ragmeter.toml`` is read; :func:`check_prices` checks the values when the
prices are read for a plan)."""


@dataclass(frozen=True)
class Prices:
    """Per million tokens, by role (``reader`` or ``judge``) and kind of token."""

    reader_prompt: float = 0.0
    reader_completion: float = 0.0
    judge_prompt: float = 0.0
    judge_completion: float = 0.0
    currency: str = "USD"

    def cost(self, role: str, prompt_tokens: float, completion_tokens: float) -> float:
        """What ``role``'s tokens cost, in :attr:`currency`."""
        prompt = getattr(self, f"{role}_prompt")
        completion = getattr(self, f"{role}_completion")
        return (prompt * prompt_tokens + completion * completion_tokens) / 1e6


def check_prices(body: Any, where: str = "[prices]") -> Prices:
    """``[prices]`` as read from TOML, checked: one line naming ``where`` and the key
    for an unknown key, a value that is not a number, or a negative price."""
    if not isinstance(body, dict):
        raise InputError(f"{where} must be a table of prices, got {body!r}")
    known = (*PRICE_KEYS, "currency")
    values: dict[str, Any] = {}
    for key, value in body.items():
        if key not in known:
            raise InputError(
                f"{where}: unknown key {key!r}{did_you_mean(key, known)}; [prices] takes "
                f"{', '.join(known)} (per million tokens)"
            )
        if key == "currency":
            if not isinstance(value, str) or not value.strip():
                raise InputError(f'{where}: currency must be a name such as "USD", got {value!r}')
            values[key] = value.strip()
            continue
        number = isinstance(value, int | float) and not isinstance(value, bool)
        if not number or not math.isfinite(value) or value < 0:
            raise InputError(
                f"{where}: {key} must be a price of 0 or more per million tokens, got {value!r}"
            )
        values[key] = float(value)
    return Prices(**values)


def read_prices(path: str | Path) -> Prices | None:
    """``[prices]`` of the TOML file at ``path``, checked; ``None`` when the file or the
    section is absent."""
    path = Path(path)
    if not path.is_file():
        return None
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise InputError(f"{path}: cannot read the prices ({exc})") from None
    if "prices" not in raw:
        return None
    return check_prices(raw["prices"], f"{path}: [prices]")

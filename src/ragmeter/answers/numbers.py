"""Numbers in text, and whether two statements of a number say the same.

:func:`numbers` finds every number a text states: digits with decimals, thousands
separators (``1,000``, and no-break or thin spaces), percentages (``95%``, ``95 percent``), simple
fractions (``1/4``), scale words and units after them (``2 million``, ``10 ms``,
``4 GiB``) and English number words (``twelve``, ``twenty-one``, ``two hundred``).
Each :class:`Number` carries every value it can mean (``95%`` is 95 and 0.95;
``10 ms`` is 10 and 0.01 s; ``2 million`` is 2 and 2,000,000) and the precision it
was stated with. Passage citations (``[2]``, ``passage 3``) and digits glued to a
letter before them (``h1``, ``v2``) are not numbers.

:func:`same_number` says whether a stated number matches a reference one: some
value of each agrees within the stated number's own rounding (``10`` for 9.6,
``0.8`` for 0.81), and by no more than 5% of the reference (so ``1%`` is not
``0.8%`` and ``48`` is never ``4.8``).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

__all__ = ["Number", "numbers", "same_as_written", "same_number", "stated_in"]

RELATIVE = 0.05
"""Largest relative difference still read as the same number, rounded."""

_SEP = "[,\u00a0\u202f\u2009]"  # thousands separators: comma, (narrow) no-break, thin space
_DIGITS = rf"(?:\d{{1,3}}(?:{_SEP}\d{{3}})+(?!\d)|\d+)(?:\.\d+)?|\.\d+"
_PERCENT = r"%|\s?(?:percent|per\s?cent|prozent|pour\s?cent|por\s?ciento)\b"

# scale words and units after a number: factor to a base unit (seconds, bytes) or plain scale
_SCALES = {
    "thousand": 1e3,
    "k": 1e3,
    "million": 1e6,
    "m": 1e6,
    "mn": 1e6,
    "billion": 1e9,
    "bn": 1e9,
    "trillion": 1e12,
}
_UNITS = {
    "ns": 1e-9,
    "nanoseconds": 1e-9,
    "µs": 1e-6,
    "us": 1e-6,
    "microseconds": 1e-6,
    "ms": 1e-3,
    "milliseconds": 1e-3,
    "s": 1.0,
    "sec": 1.0,
    "seconds": 1.0,
    "second": 1.0,
    "min": 60.0,
    "minutes": 60.0,
    "minute": 60.0,
    "h": 3600.0,
    "hours": 3600.0,
    "hour": 3600.0,
    "days": 86400.0,
    "day": 86400.0,
    "kb": 1e3,
    "mb": 1e6,
    "gb": 1e9,
    "tb": 1e12,
    "kib": 2.0**10,
    "mib": 2.0**20,
    "gib": 2.0**30,
    "tib": 2.0**40,
}
_AFTER = "|".join(sorted((re.escape(u) for u in {*_SCALES, *_UNITS}), key=len, reverse=True))

_NUMBER = re.compile(
    rf"(?<![\w.\[])(?P<num>{_DIGITS})(?:/(?P<den>\d+(?:\.\d+)?))?"
    rf"(?P<pct>{_PERCENT})?(?:\s?(?P<after>{_AFTER})\b)?",
    re.IGNORECASE,
)
_CITATION = re.compile(r"\[\s*\d+(?:\s*[,-]\s*\d+)*\s*\]|\bpassages?\s+\d+", re.IGNORECASE)

_ONES = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen "
    "fourteen fifteen sixteen seventeen eighteen nineteen"
).split()
_WORDS = {w: float(i) for i, w in enumerate(_ONES)}
_WORDS.update(
    {
        w: float(10 * i)
        for i, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split(), 2)
    }
)
_WORDS["dozen"] = 12.0
_WORD_SCALES = {"hundred": 1e2, "thousand": 1e3, "million": 1e6, "billion": 1e9}
_WORD_ALT = "|".join(sorted([*_WORDS, *_WORD_SCALES], key=len, reverse=True))
_WORD_RUN = re.compile(rf"\b(?:(?:{_WORD_ALT})(?:[\s-]+(?:and[\s-]+)?)?)+\b", re.IGNORECASE)


@dataclass(frozen=True)
class Number:
    """A number stated in a text: its words, where they are, every value they can mean.

    ``tolerance`` is half the last stated digit, per value (``4.8`` is +/- 0.05);
    ``weak`` marks a lone "one" (mostly a pronoun): it can match a reference number,
    but is never reported as a changed one.
    """

    text: str
    start: int
    end: int
    values: tuple[float, ...]
    tolerances: tuple[float, ...]
    weak: bool = False
    percent: bool = False


def _decimals(digits: str) -> int:
    return len(digits.split(".", 1)[1]) if "." in digits else 0


def _digit_number(m: re.Match[str]) -> Number | None:
    raw = re.sub(_SEP, "", m.group("num"))
    value = float(raw)
    tol = 0.5 * 10.0 ** -_decimals(raw)
    den = m.group("den")
    pairs: list[tuple[float, float]] = []
    if den is not None:
        d = float(den)
        if d == 0:
            return None
        # a fraction is exact; its parts count too ("1 in 4" states "1/4")
        pairs += [(value / d, 0.0), (value, tol), (d, 0.5 * 10.0 ** -_decimals(den))]
    else:
        pairs.append((value, tol))
    if m.group("pct"):
        pairs.append((pairs[0][0] / 100.0, pairs[0][1] / 100.0))
    after = (m.group("after") or "").lower()
    factor = _SCALES.get(after) or _UNITS.get(after)
    if factor is not None and not (after == "m" and m.group("after") == "m"):
        # "m" is million only as "M"; a lower-case "m" is metres or minutes: plain value
        pairs.append((pairs[0][0] * factor, pairs[0][1] * factor))
    values = tuple(v for v, _ in pairs)
    tolerances = tuple(t for _, t in pairs)
    return Number(m.group(0), m.start(), m.end(), values, tolerances, percent=bool(m.group("pct")))


def _word_value(words: list[str]) -> float:
    total = current = 0.0
    for w in words:
        if w in _WORDS:
            current += _WORDS[w]
        elif w == "hundred":
            current = max(current, 1.0) * 100.0
        else:
            total += max(current, 1.0) * _WORD_SCALES[w]
            current = 0.0
    return total + current


def _word_numbers(text: str, taken: list[tuple[int, int]]) -> list[Number]:
    out = []
    for m in _WORD_RUN.finditer(text):
        words = [w for w in re.split(r"[\s-]+", m.group(0).lower()) if w and w != "and"]
        if not words or all(w in _WORD_SCALES for w in words):
            continue  # "thousand" alone is a scale word after digits, not a number
        if any(s <= m.start() < e for s, e in taken):
            continue
        value = _word_value(words)
        end = m.start() + len(m.group(0).rstrip(" -\t\n"))
        weak = words == ["one"]
        out.append(Number(text[m.start() : end], m.start(), end, (value,), (0.0,), weak))
    return out


def numbers(text: str) -> list[Number]:
    """Every number stated in ``text``, in order (citations like ``[2]`` left out)."""
    cited = [(m.start(), m.end()) for m in _CITATION.finditer(text)]
    out: list[Number] = []
    for m in _NUMBER.finditer(text):
        if any(s <= m.start("num") < e for s, e in cited):
            continue
        n = _digit_number(m)
        if n is not None:
            out.append(n)
    out.extend(_word_numbers(text, [(n.start, n.end) for n in out]))
    return sorted(out, key=lambda n: n.start)


def _close(a: float, a_tol: float, r: float) -> bool:
    if math.isclose(a, r, rel_tol=1e-9, abs_tol=1e-12):
        return True
    diff = abs(a - r)
    return diff <= a_tol * (1 + 1e-9) and diff <= RELATIVE * abs(r)


def same_number(stated: Number, reference: Number) -> bool:
    """Whether ``stated`` says ``reference``: some value of each within ``stated``'s rounding."""
    for a, tol in zip(stated.values, stated.tolerances, strict=True):
        for r in reference.values:
            if _close(a, tol, r):
                return True
    return False


def same_as_written(a: Number, b: Number) -> bool:
    """Stricter than :func:`same_number`: the same value as written, both percentages or
    neither (``8%`` is not the ``8`` of "8 bits")."""
    return a.percent == b.percent and _close(a.values[0], a.tolerances[0], b.values[0])


def stated_in(stated: Number, references: list[Number]) -> bool:
    """Whether ``stated`` matches any of ``references``."""
    return any(same_number(stated, r) for r in references)

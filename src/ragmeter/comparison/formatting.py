"""How every number is printed: one home for each format.

Estimates (``80.7 [74.1, 87.4]``), interval ends and p-values that never round
across a decision boundary, and a comparison's difference and p columns. The
terminal, the report, the notebook tables and ``ragmeter check`` all print
through these functions, so a rule about printing changes here once.

:func:`format_interval` (a mean and its interval) is defined with the estimates it
prints, in :mod:`ragmeter.stats.bootstrap` (:meth:`ragmeter.stats.Estimate.format`
calls it there, below this layer), and is importable from here.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ragmeter.defaults import DEFAULTS, EARLIER
from ragmeter.scoring.names import difference_scale, metric_scale
from ragmeter.stats.bootstrap import format_interval, spread_digits
from ragmeter.stats.paired_tests import rounds_for_level
from ragmeter.stats.validate import alpha_of

__all__ = [
    "BOOTSTRAP",
    "EXACT",
    "EXACT_MARK",
    "EXACT_NOTE",
    "NO_SPREAD",
    "RULE_NAMES",
    "column_labels",
    "difference_interval",
    "exact_note",
    "fmt_end",
    "fmt_p",
    "format_difference",
    "format_estimate",
    "format_half_width",
    "format_interval",
    "level_label",
    "shown_difference",
    "shown_half_width",
    "shown_interval",
    "shown_p",
]


#: Each adjusting rule's short name, as a column header and a p label print it.
RULE_NAMES = {"holm": "Holm", "maxt": "max-T", "fdr": "BH"}


def _getter(value: Any) -> Any:
    """Read a field of an estimate or of its dict alike."""
    return value.get if isinstance(value, dict) else lambda name: getattr(value, name, None)


def level_label(estimates: Iterable[Any]) -> str:
    """``"95%"``: the confidence level the estimates share, as a header names it; ``""``
    when they differ (runs recorded at other levels) or none is given. An estimate saved
    without a level was made at 95%."""
    levels = set()
    for est in estimates:
        if est is not None:
            level = _getter(est)("confidence")
            levels.add(round(float(EARLIER.confidence if level is None else level), 12))
    return f"{levels.pop() * 100:g}%" if len(levels) == 1 else ""


NO_SPREAD = "no spread: interval not estimable"
EXACT_MARK = "exact"
EXACT_NOTE = (
    "exact: 0/1 scores on fewer than 30 questions or with fewer than 5 hits or misses, "
    "where resampling understates the uncertainty: the exact binomial (Clopper-Pearson) "
    "interval is shown; summary.json keeps the bootstrap interval, with this one beside "
    "it (exact)."
)

EXACT_CLUSTER_NOTE = (
    "exact: 0/1 scores whose questions share documents, on fewer than 30 effective "
    "questions (questions / design effect, at least 1) or with fewer than 5 hits or misses "
    "among them: the exact binomial (Clopper-Pearson) interval at the effective number of "
    "questions (Korn and Graubard) is shown; summary.json keeps the cluster bootstrap's "
    "interval, with this one beside it (exact)."
)


EXACT = "exact"
BOOTSTRAP = "bootstrap"


def shown_interval(est: Any) -> tuple[float, float, str]:
    """The interval every view shows for an estimate, and which one it is: the exact
    binomial (Clopper-Pearson) interval where the estimate carries one (``"exact"``;
    :func:`ragmeter.stats.exact.exact_interval` decides where), else the bootstrap's
    ends (``"bootstrap"``). ``est`` is a :class:`ragmeter.stats.Estimate`, a
    :class:`ragmeter.stats.SizeRow` or their dicts.

    The terminal and Markdown (:func:`format_estimate`), the CSV and JSON records, the
    history export, the plan and the report read the interval here, so none of them
    decides again between the two.
    """
    get = _getter(est)
    exact = get("exact")
    if exact is not None:
        return float(exact[0]), float(exact[1]), EXACT
    return get("low"), get("high"), BOOTSTRAP


def shown_half_width(est: Any) -> float:
    """The ``±`` of the sample-size tables: half the width of the exact interval where
    :func:`shown_interval` gives that one, else the row's own ``half_width`` (half the
    bootstrap's width)."""
    low, high, which = shown_interval(est)
    stored = est.get("half_width") if isinstance(est, dict) else getattr(est, "half_width", None)
    if which == BOOTSTRAP and stored is not None:
        return stored
    return (high - low) / 2.0


def format_half_width(half_width: float, metric: Any = "") -> str:
    """A half-width (``±``) as the sample-size tables print it, at the scale and digits
    of a difference of ``metric`` (points for a share), with more digits where it would
    print as 0 (:func:`ragmeter.stats.bootstrap.spread_digits`)."""
    scale, digits = difference_scale(metric)
    return f"{half_width * scale:.{spread_digits(half_width, scale, digits)}f}"


def format_estimate(est: Any, metric: Any = "") -> str:
    """An estimate as printed everywhere: ``"80.7 [74.1, 87.4]"`` for a share (percent),
    ``"0.612 [0.552, 0.671]"`` for MRR, nDCG, MAP, ``"885 [842, 930]"`` for words.

    An estimate carrying an exact binomial interval prints that one, marked
    ``"100.0 [83.2, 100.0] exact"``; an interval of zero width otherwise prints as
    ``"1.000 (no spread: interval not estimable)"``: no view shows ``[x, x]``.
    ``est`` is a :class:`ragmeter.stats.Estimate` or its dict. The terminal tables,
    the report's data and charts, and the notebook tables all call this.
    """
    get = _getter(est)
    scale, digits = metric_scale(metric)
    low, high, which = shown_interval(est)
    if which == EXACT:
        return f"{format_interval(get('mean'), low, high, scale, digits)} {EXACT_MARK}"
    if low == high:
        return f"{get('mean') * scale:.{digits}f} ({NO_SPREAD})"
    return format_interval(get("mean"), low, high, scale, digits)


def exact_note(estimates: Any) -> str | None:
    """The footnote for tables where some estimate printed its exact interval (the
    cluster-aware one's, at the effective number of questions, when clustered)."""
    for est in estimates:
        if shown_interval(est)[2] == EXACT:
            clustered = str(_getter(est)("method") or "").startswith("cluster")
            return EXACT_CLUSTER_NOTE if clustered else EXACT_NOTE
    return None


def fmt_end(x: float, scale: float = 100.0, digits: int = 1) -> str:
    """A signed interval end, with extra digits when rounding would move it onto 0.

    ``fmt_end(0.0003)`` is ``"+0.03"``, not ``"+0.0"``: a printed end reads as 0 only
    when it is exactly 0, so a printed interval excludes 0 exactly when the real one does.
    """
    v = x * scale
    if v == 0:
        return f"{0.0:.{digits}f}"
    d = digits
    while float(f"{v:.{d}f}") == 0.0 and d < 12:
        d += 1
    text = f"{v:+.{d}f}"
    return text if float(text) != 0.0 else f"{v:+.1e}"


def fmt_p(p: float | None, alpha: float = alpha_of(DEFAULTS.confidence)) -> str:
    """A p-value to 3 significant digits, with more when rounding would cross ``alpha``."""
    if p is None:
        return ""
    d = 3
    text = f"{p:.{d}g}"
    while (float(text) < alpha) != (p < alpha) and d < 17:
        d += 1
        text = f"{p:.{d}g}"
    return text


def difference_interval(d: Any, scale: float = 100.0, digits: int = 1) -> str:
    """``[+1.8, +24.4]``: a difference's interval as printed, each end signed and never
    rounded onto 0 (:func:`fmt_end`). ``d`` is a :class:`ragmeter.stats.Estimate` or its
    dict; ``scale`` 100 prints points."""
    get = _getter(d)
    return f"[{fmt_end(get('low'), scale, digits)}, {fmt_end(get('high'), scale, digits)}]"


def format_difference(d: Any, scale: float = 100.0, digits: int = 1) -> str:
    """``+12.6 [+1.8, +24.4]``: a difference as printed, its mean signed and its interval
    as :func:`difference_interval` prints it (``d`` as there)."""
    return f"{_getter(d)('mean') * scale:+.{digits}f} {difference_interval(d, scale, digits)}"


DECIDED_MARK = "*"
DECIDED_NOTE = (
    "*: an interval end set by the decision at 0, not by the interval's own test: the "
    "rule's test of 0 (McNemar's exact test for 0/1 scores; the sign flips, which leave "
    "the questions or documents where the two systems tie unchanged only at exactly 0) "
    "and the test the interval inverts (Tango's score test; the same flips at any other "
    "shift) disagree about 0, so the end is put at 0, on the side the decision says: a "
    "tie's interval reaches 0, a 'better' one's stops just short of it."
)
_AT_ZERO = 1e-300  # an end this close to 0 was put there by the decision (flip_ends, _ends)


def decided_end(row: Any) -> bool:
    """Whether a comparison's interval has an end set by the decision rather than by
    the test it inverts: an end at 0 (exactly, or the smallest double on the decided
    side) while the difference is not 0, in a table whose rule has a test (under the
    seed's per-pair rule the interval is the decision, so none is). ``row`` is a
    :class:`ragmeter.comparison.verdicts.Row` or its dict."""
    get = _getter(row)
    if get("identical") or get("p") is None:
        return False
    d = _getter(get("difference"))
    mean, low, high = d("mean"), d("low"), d("high")
    return bool((mean > 0 and abs(low) < _AT_ZERO) or (mean < 0 and abs(high) < _AT_ZERO))


def decided_note(rows: Iterable[Any]) -> str | None:
    """The footnote for comparison tables where some interval has an end set by the
    decision (:func:`decided_end`), marked ``*``."""
    return DECIDED_NOTE if any(decided_end(r) for r in rows) else None


def unresolved_note(rows: Iterable[Any], rule: Any) -> str | None:
    """The footnote for sign-flip intervals at a level finer than the table's rounds
    resolve: each is the whole scale. Every rule's level is about alpha / pairs or more,
    so the note names the rounds that resolve alpha / (pairs + 1)."""
    if rule is None or rule.adjust == "none" or not rule.interval.startswith("sign-flip"):
        return None
    levels = [r.level for r in rows if not r.identical and rule.rounds < rounds_for_level(r.level)]
    if not levels:
        return None
    them = "it" if len(levels) == 1 else "them"
    return (
        f"{len(levels)} of these intervals span the whole scale: the level the rule gave "
        f"{them} (down to {min(levels):.2g}) is finer than {rule.rounds:,} rounds resolve; "
        f"--rounds {rounds_for_level(rule.alpha / (rule.pairs + 1)):,} gives {them} ends"
    )


def shown_difference(row: Any, metric: str, *, share: bool | None = None) -> str:
    """A comparison's difference as every view prints it: ``+12.6 [+1.8, +24.4]`` in
    points for shares (``metric`` a share, or ``share`` given), three decimals
    otherwise, ``identical`` for identical systems; no end is rounded onto 0
    (:func:`format_difference`). An end set by the decision at 0 (:func:`decided_end`)
    is marked ``*`` (``+10.9 [0.0*, +22.6]``; a "better" row's end kept just off 0 prints
    as :func:`fmt_end` prints it, ``+4.9e-322*``), explained by :data:`DECIDED_NOTE`."""
    if row.identical:
        return "identical"
    scale, digits = difference_scale(metric, share)
    if decided_end(row):  # the end at 0 as fmt_end prints it (never rounded onto 0), marked
        d = row.difference
        low, high = fmt_end(d.low, scale, digits), fmt_end(d.high, scale, digits)
        low, high = (low + DECIDED_MARK, high) if d.mean > 0 else (low, high + DECIDED_MARK)
        return f"{d.mean * scale:+.{digits}f} [{low}, {high}]"
    return format_difference(row.difference, scale, digits)


def shown_p(row: Any, alpha: float) -> str:
    """The rule's p-value of a comparison as every view prints it (empty when the rule
    has none or the systems are identical)."""
    return "" if row.p is None or row.identical else fmt_p(row.p, alpha)


def column_labels(rule: Any) -> tuple[str, str | None]:
    """The headers of the difference and p columns under ``rule`` (``None``: a summary
    saved before the rule was recorded, whose p-values are Holm's)."""
    if rule is None:
        return "A - B [95% CI]", "p (Holm)"
    if rule.adjust == "none":
        return f"A - B [{(1 - rule.alpha) * 100:g}% CI]", None
    if rule.pairs == 1:
        return f"A - B [{(1 - rule.alpha) * 100:g}% CI]", "p"
    name = RULE_NAMES.get(rule.adjust, "Holm")
    return f"A - B [{name}-level CI]", f"p ({name})"

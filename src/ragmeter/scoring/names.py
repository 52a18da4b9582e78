"""What a measure is called: :class:`Metric` names that parse and print back the same
(``ndcg@10``, ``map``, trec_eval's ``P_10``), :data:`FAMILIES` (every family's rules, one
row each: cutoff, trec_eval names, share or cost, scale and digits, the report's title;
the answer half's measures, ``correct`` and the failure rates, are rows of it too),
the default cutoffs, and :func:`find_metric`, the one place a name asked for is matched to
the name a run stores. How each measure is computed is :mod:`ragmeter.scoring.metrics`.
"""

from __future__ import annotations

import contextlib
import functools
import operator
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ragmeter.errors import InputError, did_you_mean


@dataclass(frozen=True, slots=True)
class Family:
    """One metric family and every rule a view needs about it: one row of :data:`FAMILIES`.

    ``cutoff`` is ``"always"`` (``recall@5``), ``"never"`` (``rprec``) or ``"either"``
    (``map`` over the whole list, ``map@10`` over the top 10); ``trec_cut`` and
    ``trec_whole`` are trec_eval's names at a cutoff (``{k}`` filled in) and over the
    whole list; a ``share`` (of questions or characters) prints in percent, a ``cost`` is
    where lower is better; ``scale`` and ``digits`` are how a value prints; ``title``
    heads the family's rows in the report and ``order`` places them there (``None``: the
    report's measures table leaves the family out). ``half`` is ``"search"`` for a
    retrieval measure and ``"answers"`` for an answer measure (``correct``, a failure
    rate): scored per answer, never at a cutoff, named by its ``title`` wherever it is
    shown, and no name a search computes or lists.
    """

    name: str
    cutoff: str = "either"
    trec_cut: str | None = None
    trec_whole: str | None = None
    share: bool = False
    cost: bool = False
    scale: int = 1
    digits: int = 3
    title: str | None = None
    order: int | None = None
    computed_as: str | None = None
    """Another family whose computation this one reuses (``success``, computed as
    ``hit``): an alias family is one row, with no code of its own."""
    half: str = "search"
    passes: tuple[str, ...] = ()
    """An answer measure's grades that count as a 1 (``correct or partial``: both)."""

    @property
    def basis(self) -> str:
        """The family whose computation gives this one's values."""
        return self.computed_as or self.name


_SHARE: dict[str, Any] = {"cutoff": "always", "share": True, "scale": 100, "digits": 1}
"""What every share family has in common: a cutoff, printed in percent."""

_ANSWER: dict[str, Any] = {"half": "answers", "cutoff": "never", "share": True,
                           "scale": 100, "digits": 1}  # fmt: skip
"""What every answer measure has in common: a share of answers, in percent, no cutoff."""

FAMILIES: tuple[Family, ...] = (
    Family("recall", **_SHARE, trec_cut="recall_{k}", order=1,
           title="recall@k (%; the hit rate for span keys)"),
    Family("hit", **_SHARE, trec_cut="success_{k}", title="hit rate (hit@k, %)", order=2),
    Family("precision", **_SHARE, trec_cut="P_{k}", title="precision@k (%)", order=6),
    Family("mrr", trec_whole="recip_rank", title="MRR@k", order=3),
    Family("ndcg", trec_cut="ndcg_cut_{k}", trec_whole="ndcg", title="nDCG@k", order=4),
    Family("map", trec_cut="map_cut_{k}", trec_whole="map", title="MAP@k", order=5),
    Family("rprec", cutoff="never", trec_whole="Rprec"),  # not in the report's table
    Family("coverage", **_SHARE, title="coverage@k (%)", order=7),
    Family("words", cutoff="always", cost=True, digits=0, title="words sent@k", order=8),
    # the answer half: shares of answers, per answer, never at a cutoff
    Family("correct", **_ANSWER, title="correct", passes=("correct",)),
    Family(
        "correct or partial", **_ANSWER, title="correct or partial", passes=("correct", "partial")
    ),
    # each failure rate: a share of answers where lower is better
    Family("refused", **_ANSWER, cost=True, title="refused with the passage"),
    Family("number_changed", **_ANSWER, cost=True, title="number changed"),
    Family("number_left_out", **_ANSWER, cost=True, title="number left out"),
    Family("unsupported", **_ANSWER, cost=True, title="unsupported statement"),
    Family("without_passage", **_ANSWER, cost=True, title="correct without the passage"),
    Family("any", **_ANSWER, cost=True, title="any failure"),
)  # fmt: skip
"""Every metric family and its rules, in the order :func:`score_questions` reports
them (the search half's) and the answer views show them (the answer half's): adding a
family is one row here (a search family's computation is in
:mod:`ragmeter.scoring.metrics`, or another family's, named by ``computed_as``; an
answer measure's is :data:`ragmeter.answers.corrected.PASSING`, a failure rate's
:mod:`ragmeter.answers.failures`).
Every rule reads the table through :func:`table`; the constants below are the table
as it stood at import."""


class _Table:
    """Every lookup derived from one :data:`FAMILIES` tuple, built once per tuple, so a
    row added to the table (a test's, say) reaches every lookup at once."""

    def __init__(self, rows: tuple[Family, ...]) -> None:
        self.rows = rows
        self.by_name = {f.name: f for f in rows}
        self.search = tuple(f.name for f in rows if f.half == "search")
        self.answers = tuple(f.name for f in rows if f.half == "answers")
        self.needs_k = frozenset(f.name for f in rows if f.cutoff == "always")
        self.no_k = frozenset(f.name for f in rows if f.cutoff == "never")
        ordered = sorted((f for f in rows if f.order is not None), key=lambda f: f.order)
        self.report_order = tuple(f.name for f in ordered)
        self.titles = {f.name: f.title or f.name for f in ordered}
        self.trec = {f.name: f.trec_cut for f in rows if f.trec_cut}
        self.trec_no_k = {f.name: f.trec_whole for f in rows if f.trec_whole}
        self.from_trec_cut = {p.partition("_{")[0]: n for n, p in self.trec.items()}  # P
        self.trec_pattern = re.compile(rf"^({'|'.join(self.from_trec_cut)})[_.]([0-9]+)$")
        self.from_trec = {v: k for k, v in self.trec_no_k.items()}


_CURRENT: list[_Table] = []


def table() -> _Table:
    """The lookups of :data:`FAMILIES` as it stands now: every rule here reads them."""
    if not _CURRENT or _CURRENT[0].rows is not FAMILIES:
        _CURRENT[:] = [_Table(FAMILIES)]
    return _CURRENT[0]


FAMILY: dict[str, Family] = table().by_name
"""Each family's row by name (as the table stood at import: rules read :func:`table`)."""

REPORT_ORDER: tuple[str, ...] = table().report_order
"""The families the report's measures table groups rows by, in its order."""

METRIC_NAMES: tuple[str, ...] = table().search
"""Every search metric family, in the order :func:`score_questions` reports them."""

NEEDS_K = table().needs_k
"""Families that always take a cutoff (``recall@5``)."""
NO_K = table().no_k
"""Families that never take one (``rprec``); the others work both ways
(``map`` over the whole returned list, ``map@10`` over the top 10)."""

DEFAULT_KS: tuple[int, ...] = (1, 3, 5, 10)

GAINS = ("exponential", "linear")

# trec_eval's names (ir_measures and ranx names are in docs/metrics.md) are in table().


def _bad_metric(text: object) -> InputError:
    return InputError(
        f"unknown metric {text!r}: use NAME@K, NAME one of {', '.join(table().search)}"
        " and K a whole number >= 1 (e.g. ndcg@10), or map, mrr, ndcg, rprec without a"
        " cutoff, or a trec_eval name (P_10 or P.10, ndcg_cut_10, recip_rank, Rprec)"
    )


@dataclass(frozen=True, slots=True)
class Metric:
    """A metric at a cutoff (or over the whole list); prints as ``name@k`` or
    ``name`` and parses back. trec_eval names parse too (``P_10``)."""

    name: str
    k: int | None = None

    def __post_init__(self) -> None:
        t = table()
        if self.name not in t.by_name or isinstance(self.k, bool):
            raise _bad_metric(self._text())
        if self.k is None:
            if self.name in t.needs_k:
                raise _bad_metric(self._text())
            return
        if self.name in t.no_k:
            raise _bad_metric(self._text())
        try:
            k = operator.index(self.k)
        except TypeError:
            raise _bad_metric(self._text()) from None
        if k < 1:
            raise _bad_metric(self._text())
        object.__setattr__(self, "k", k)

    def _text(self) -> str:
        return self.name if self.k is None else f"{self.name}@{self.k}"

    def __str__(self) -> str:
        return self._text()

    @property
    def family(self) -> str:
        """The measure without its cutoff: ``"ndcg"`` for ``ndcg@10``."""
        return self.name

    @property
    def rules(self) -> Family:
        """Its family's row of :data:`FAMILIES`: every rule a view reads about it."""
        return table().by_name[self.name]

    @property
    def share(self) -> bool:
        """Whether it is a share of questions or characters (printed in percent)."""
        return self.rules.share

    @property
    def cost(self) -> bool:
        """Whether lower is better (what a result costs, not how good it is)."""
        return self.rules.cost

    @property
    def trec_name(self) -> str | None:
        """trec_eval's name for this measure (``P_10``), or ``None`` when it has none."""
        if self.k is None:
            return table().trec_no_k.get(self.name)
        pattern = table().trec.get(self.name)
        return pattern.format(k=self.k) if pattern else None

    @classmethod
    def parse(cls, text: str) -> Metric:
        """``Metric.parse("ndcg@10") == Metric("ndcg", 10)``; surrounding spaces and upper
        case are accepted, and so are trec_eval's names, in its case (``P_10``, ``P.10``)."""
        if not isinstance(text, str):
            raise _bad_metric(text)
        raw, t = text.strip(), table()
        if raw in t.from_trec:
            return cls(t.from_trec[raw])
        m = t.trec_pattern.match(raw)
        if m:
            return cls(t.from_trec_cut[m.group(1)], int(m.group(2)))
        name, sep, k = raw.partition("@")
        name, k = name.strip().lower(), k.strip()
        if name not in t.by_name:
            raise _bad_metric(text)
        if not sep:
            if name in t.needs_k:
                raise _bad_metric(text)
            return cls(name)
        if not k.isascii() or not k.isdigit():
            raise _bad_metric(text)
        return cls(name, int(k))


def find_metric(text: str, available: Iterable[str]) -> str:
    """The name in ``available`` (a run's) for the measure ``text`` names, in either
    vocabulary (``P_5`` finds ``precision@5``, ``precision@5`` finds ``P_5``): the one
    matcher every ``--metric``, summary, comparison and plan goes through."""
    names = [str(n) for n in available]
    if text in names:
        return text
    try:
        wanted = Metric.parse(text)
    except InputError as exc:  # no measure's name: say which of the run's is nearest
        hint = did_you_mean(text, names)
        if not hint:
            raise
        raise InputError(f"{exc}{hint}") from None
    for name in names:
        with contextlib.suppress(InputError):  # a run's own odd name matches nothing
            if Metric.parse(name) == wanted:
                return name
    raise InputError(
        f"metric {text!r} was not computed{did_you_mean(text, names)}; "
        f"choose one of {sorted(names)}"
    )


SHARE_FAMILIES = tuple(f.name for f in FAMILIES if f.share and f.half == "search")
"""Search families that are shares of questions or characters: shown in percent."""


COST_FAMILIES = frozenset(f.name for f in FAMILIES if f.cost and f.half == "search")
"""Search families where lower is better: what a result costs, not how good it is."""


@functools.lru_cache(maxsize=4096)
def _parsed(text: str, _table: _Table) -> Metric | None:
    try:
        return Metric.parse(text)
    except InputError:
        return None


def metric_of(metric: str | Metric) -> Metric | None:
    """The :class:`Metric` a stored name means, in either vocabulary (``"ndcg@10"``,
    ``"P_5"``), an answer measure's row (``"correct"``), or ``None`` for a name that is
    no measure's: the one reading of a name every view goes through, so none splits it
    on ``@`` again."""
    return metric if isinstance(metric, Metric) else _parsed(str(metric), table())


def _row(metric: object) -> Family | None:
    """The rules of the family ``metric`` names; a bare family name (``"hit"``) or an
    odd cutoff reads as its family's."""
    found = metric_of(metric) if isinstance(metric, str | Metric) else None
    return found.rules if found else table().by_name.get(str(metric).partition("@")[0])


def family(metric: str | Metric) -> str:
    """The family of a metric name: ``"ndcg"`` for ``"ndcg@10"``, ``"precision"`` for
    trec_eval's ``"P_5"``, ``"map"`` for ``"map"``; a name that is no measure's, up to
    its ``@``."""
    found = metric_of(metric)
    return found.name if found else str(metric).partition("@")[0]


def cutoff(metric: str | Metric) -> int | None:
    """The cutoff of a metric name: ``10`` for ``"ndcg@10"`` and for ``"ndcg_cut_10"``;
    ``None`` over the whole list (``"map"``) or for a name that is no measure's."""
    found = metric_of(metric)
    return found.k if found else None


def answer_measures(*, costs: bool = False) -> tuple[str, ...]:
    """The answer half's rows of the table, in its order: the measures ``ragmeter grade``
    compares systems on (``correct``, ``correct or partial``: higher is better), or with
    ``costs`` the failure rates (lower is better)."""
    t = table()
    return tuple(n for n in t.answers if t.by_name[n].cost == costs)


def passing_grades(measure: str) -> tuple[str, ...]:
    """The grades an answer measure counts as a 1 (its row's ``passes``)."""
    return table().by_name[answer_measure(measure) or measure].passes


def answer_measure(name: str) -> str | None:
    """The answer measure (:func:`answer_measures`) that ``name`` names, as the table
    spells it (``correct_or_partial`` spells ``correct or partial`` without spaces),
    else None."""
    spelled = " ".join(str(name).replace("_", " ").split()).lower()
    return spelled if spelled in answer_measures() else None


ANSWER_SHARES = frozenset(answer_measures())
"""The answer measures ``ragmeter grade`` compares systems on, as the table stood at
import (the views call :func:`answer_measures`)."""


def metric_label(metric: str | Metric) -> str:
    """What a view calls ``metric``: an answer measure by its row's ``title``
    (``correct or partial``), any other name as it is written (``ndcg@10``, ``P_5``)."""
    row = _row(metric)
    if row is not None and row.half == "answers" and row.title:
        return row.title
    return str(metric)


def is_share(metric: str | Metric) -> bool:
    """Whether ``metric`` is a share (recall, hit rate, precision, coverage, in either
    vocabulary, or an answer measure): percent."""
    row = _row(metric)
    return row is not None and row.share


def lower_is_better(metric: str | Metric) -> bool:
    """Whether a lower score is the better one (a cost, not a score: words sent, a
    failure rate)."""
    row = _row(metric)
    return row is not None and row.cost


def metric_scale(metric: object) -> tuple[int, int]:
    """Scale and digits a metric prints with: its row's (percent for shares, whole
    words); any other name with 3 decimals."""
    row = _row(metric)
    return (row.scale, row.digits) if row is not None else (1, 3)


def points_digits(metric: object) -> int:
    """Decimals a difference in points (hundredths of the scale) prints with: a
    share's own digits (its row's), one for the rest."""
    row = _row(metric)
    return row.digits if row is not None and row.share else 1


def difference_scale(metric: object, share: bool | None = None) -> tuple[int, int]:
    """Scale and digits a difference (or a margin) of ``metric`` prints with: points
    (:func:`points_digits` decimals) for a share (``share``, when given, says whether it
    is one); three decimals for the rest (words sent included)."""
    shared = is_share(metric) if share is None else share
    return (100, points_digits(metric)) if shared else (1, 3)


def difference_unit(metric: object, share: bool | None = None) -> str:
    """What a difference of ``metric`` printed at :func:`difference_scale` is in:
    ``"points"`` (hundredths of the scale) for a share, nothing for the rest."""
    return "points" if difference_scale(metric, share)[0] == 100 else ""


def metric_info(metrics: Iterable[str]) -> dict[str, dict[str, object]]:
    """For a page's script: each name's family, cutoff, whether a share or a cost,
    scale and digits, and the scale, digits and unit a difference of it prints with, so
    the page reads them and keeps no list or factor of its own."""
    out: dict[str, dict[str, object]] = {}
    for m in metrics:
        scale, digits = metric_scale(m)
        d_scale, d_digits = difference_scale(m)
        out[str(m)] = {
            "family": family(m),
            "k": cutoff(m),
            "share": is_share(m),
            "cost": lower_is_better(m),
            "scale": scale,
            "digits": digits,
            "difference_scale": d_scale,
            "difference_digits": d_digits,
            "difference_unit": difference_unit(m),
        }
    return out


def held(metrics: Iterable[str], wanted: Iterable[str | Metric]) -> list[str]:
    """The names in ``metrics`` (a run's, in either vocabulary) of the ``wanted`` measures
    it holds, in ``wanted``'s order: ``held(["P_5", "map"], ["precision@5"]) == ["P_5"]``."""
    by: dict[Metric, str] = {}
    for name in metrics:
        found = metric_of(name)
        if found is not None:
            by.setdefault(found, str(name))
    return [by[w] for w in map(metric_of, wanted) if w in by]


def shown_cutoffs(metrics: Iterable[str]) -> tuple[int, int] | None:
    """The cutoffs the default views show the rank-aware measures at, ``(top, mid)``:
    MRR and nDCG at 10, else at the largest k there is; precision and coverage at 5, else
    at the largest k below 5 (or the smallest k). None when no metric has a cutoff."""
    ks = sorted({k for k in map(cutoff, metrics) if k is not None})
    if not ks:
        return None
    top = 10 if 10 in ks else ks[-1]
    mid = 5 if 5 in ks else max([k for k in ks if k < 5] or [ks[0]])
    return top, mid


DEFAULT_WHOLE = ("map", "rprec")
"""Measures without a cutoff that :func:`score_questions` reports by default."""


def metric_names(
    ks: Iterable[int] = DEFAULT_KS,
    *,
    coverage: bool = True,
    words: bool = True,
    whole: Iterable[str] = DEFAULT_WHOLE,
) -> list[str]:
    """The names :func:`score_questions` returns for these cutoffs, in its order:
    each family at every cutoff, then the family over the whole list when it is
    in ``whole``."""
    ks, t = _ks(ks), table()
    whole = set(whole)
    out = []
    for row in t.rows:
        if row.half != "search":
            continue
        name, basis = row.name, row.basis
        if (basis == "coverage" and not coverage) or (basis == "words" and not words):
            continue
        if name not in t.no_k:
            out.extend(str(Metric(name, k)) for k in ks)
        if name in whole and name not in t.needs_k:
            out.append(name)
    return out


# ---------------------------------------------------------------------------
# scalar reference versions (one question; transcriptions of the TypeScript)


def check_k(k: int, *, depth: int | None = None, what: str = "cutoff k") -> int:
    """``k`` as an int, checked: a whole number >= 1, and at most ``depth`` when given.

    The one validator of a single cutoff (see :func:`check_ks` for a list).
    """
    try:
        k = operator.index(k)
    except TypeError:
        raise InputError(f"{what}={k!r} must be a whole number >= 1") from None
    if k < 1:
        raise InputError(f"{what}={k!r} must be a whole number >= 1")
    if depth is not None and k > depth:
        raise InputError(
            f"{what}={k} is past the depth {depth} (items kept per question); "
            f"use a k of at most {depth}, or search again with a larger depth"
        )
    return k


_check_k = check_k


def check_ks(ks: Iterable[int], *, depth: int | None = None, what: str = "cutoffs") -> list[int]:
    """``ks`` as a list of ints, checked: non-empty, whole numbers >= 1, each once,
    and at most ``depth`` when given.

    The one validator of a list of cutoffs: the config's ``ks``, the metrics'
    and the coverage curve's all go through it.
    """
    try:
        out = [operator.index(k) for k in ks]
    except TypeError:
        raise InputError(f"{what} {ks!r} must be whole numbers >= 1") from None
    if not out or any(k < 1 for k in out):
        raise InputError(f"{what} must be positive whole numbers (>= 1), got {out!r}")
    if len(set(out)) != len(out):
        raise InputError(f"{what} {out!r} repeat a value: list each cutoff once")
    if depth is not None and max(out) > depth:
        raise InputError(
            f"{what} {out!r} go past the depth {depth} (items kept per question); "
            f"use cutoffs of at most {depth}, or a larger depth"
        )
    return out


_ks = check_ks

"""Results that show themselves: a notebook table, Markdown, or a pandas frame.

:class:`ShowsItself` is mixed into :class:`ragmeter.runs.pipeline.SearchRun` and
:class:`ragmeter.runs.results.Results`: anything with a ``summary`` (a
:class:`ragmeter.comparison.summary.Summary`), ``systems`` and ``scores(system, metric)`` renders as
one table of every system with its intervals (``_repr_html_`` in Jupyter,
:meth:`~ShowsItself.to_markdown`) and converts to a tidy
:meth:`~ShowsItself.to_pandas` frame. :class:`Comparisons` does the same for a
list of paired comparisons. Plain Python only: no rich, no pandas unless asked.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ragmeter.comparison.formatting import (  # the one formatter
    decided_note,
    format_estimate,
    shown_difference,
    shown_interval,
    shown_p,
)
from ragmeter.comparison.verdicts import rule_alpha
from ragmeter.errors import MissingExtra
from ragmeter.scoring.metrics import is_share
from ragmeter.scoring.names import cutoff, family, held, shown_cutoffs

if TYPE_CHECKING:
    from ragmeter.comparison.summary import Summary

__all__ = [
    "ESTIMATE_COLUMNS",
    "Comparisons",
    "ShowsItself",
    "estimate_records",
    "format_estimate",
    "is_share",
]


def _pandas():
    try:
        import pandas
    except ImportError:
        raise MissingExtra(
            "to_pandas() needs pandas: pip install pandas (or pip install 'ragmeter[notebook]')"
        ) from None
    return pandas


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[str]], right: set[int]) -> str:
    rows = [list(r) for r in rows]
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows, strict=True)]

    def line(cells: Sequence[str]) -> str:
        out = []
        for i, (cell, width) in enumerate(zip(cells, widths, strict=True)):
            text = str(cell).replace("|", "\\|")
            out.append(text.rjust(width) if i in right else text.ljust(width))
        return "| " + " | ".join(out) + " |"

    rule = (
        "|"
        + "|".join(
            "-" * (w + 1) + ":" if i in right else "-" * (w + 2) for i, w in enumerate(widths)
        )
        + "|"
    )
    return "\n".join([line(header), rule, *(line(r) for r in rows)])


def _html(header: Sequence[str], rows: Iterable[Sequence[str]], caption: str) -> str:
    esc = html.escape
    head = "".join(f"<th>{esc(str(h))}</th>" for h in header)
    body = "".join(
        "<tr>" + "".join(f"<td>{esc(str(c))}</td>" for c in row) + "</tr>" for row in rows
    )
    return (
        f"<table><caption style='caption-side: bottom; text-align: left'>{esc(caption)}"
        f"</caption><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
    )


ESTIMATE_COLUMNS = (
    "system", "metric", "mean", "low", "high", "n", "confidence", "method", "seed", "rounds",
    "interval",
)  # fmt: skip


def estimate_records(
    summary: Summary,
    systems: Sequence[str] | None = None,
    columns: Sequence[str] = ESTIMATE_COLUMNS,
) -> list[dict[str, Any]]:
    """One record per system and metric: the mean and the interval the tables show
    (shares as fractions: 0.807 is 80.7%), with ``columns`` of :data:`ESTIMATE_COLUMNS`.
    ``low`` and ``high`` are the exact binomial interval where the tables print one
    (``interval`` is ``exact``), else the bootstrap's (``bootstrap``; ``method`` names
    the bootstrap); summary.json keeps both."""
    out = []
    for system in summary.estimates if systems is None else systems:
        for metric, est in summary.estimates[system].items():
            low, high, which = shown_interval(est)
            row = {"system": system, "metric": metric, **est.to_dict()}
            row.update(low=low, high=high, interval=which)
            out.append({c: row[c] for c in columns})
    return out


class ShowsItself:
    """Mixin for the two shapes of search results (in memory and on disk).

    Needs ``summary`` (a :class:`ragmeter.comparison.summary.Summary`), ``systems``
    (names, or objects whose ``str`` is the name), ``metrics``,
    ``question_ids`` and ``scores(system, metric)``.
    """

    summary: Summary
    systems: Sequence[Any]
    metrics: list[str]
    question_ids: list[str]

    def scores(self, system: Any, metric: str) -> Any:  # pragma: no cover - provided
        raise NotImplementedError

    def default_metrics(self) -> list[str]:
        """The columns shown by default, as the terminal shows them: recall at every k,
        MRR and nDCG at 10 (else the largest k), precision and coverage at 5 (else the
        largest k below 5, or the smallest), and the words sent at the comparison
        metric's k."""
        metrics = list(self.metrics)
        k = cutoff(self.summary.metric)
        recall = [m for m in metrics if family(m) == "recall" and cutoff(m) is not None]
        cutoffs = shown_cutoffs(metrics)
        if cutoffs is None:
            return recall or metrics
        top, mid = cutoffs
        wanted = (f"precision@{mid}", f"mrr@{top}", f"ndcg@{top}", f"coverage@{mid}", f"words@{k}")
        return recall + held(metrics, wanted) or metrics

    def _caption(self) -> str:
        s = self.summary
        return (
            f"{len(self.question_ids)} questions; {s.confidence:.0%} "
            f"{s.method} bootstrap intervals, seed {s.seed}, "
            f"{s.rounds} rounds; recall, hit rate, precision and coverage in %"
            + (f"; {s.ndcg_label}" if s.ndcg_label else "")
        )

    def _table(self, metrics: Sequence[str] | None) -> tuple[list[str], list[list[str]]]:
        metrics = list(metrics) if metrics is not None else self.default_metrics()
        estimates = self.summary.estimates
        header = ["system", *metrics]
        rows = [
            [str(system), *(format_estimate(estimates[str(system)][m], m) for m in metrics)]
            for system in self.systems
        ]
        return header, rows

    def to_markdown(self, metrics: Sequence[str] | None = None) -> str:
        """Every system's mean and 95% interval per metric, as a Markdown table."""
        header, rows = self._table(metrics)
        table = markdown_table(header, rows, right=set(range(1, len(header))))
        return f"{table}\n\n{self._caption()}"

    def __repr__(self) -> str:
        """``<Results 'out': 7 systems x 135 questions, compared on recall@5>``."""
        try:
            where = getattr(self, "path", None)
            head = type(self).__name__ + (f" {str(where)!r}" if where is not None else "")
            return (
                f"<{head}: {len(self.systems)} systems x {len(self.question_ids)} questions, "
                f"compared on {self.comparison_plan.metric}>"  # no bootstrap for a repr
            )
        except Exception:  # a repr never raises: fall back to the plain one
            return object.__repr__(self)

    def _repr_html_(self) -> str:
        header, rows = self._table(None)
        return _html(header, rows, self._caption())

    def to_pandas(self, per_question: bool = False):
        """A tidy frame: one row per system and metric (``mean``, ``low``, ``high``,
        ``n``, ``confidence``, ``method``, ``seed``, ``rounds``); with
        ``per_question=True``, one row per system, question and metric (``score``).

        Needs pandas (:class:`~ragmeter.errors.MissingExtra` otherwise).
        """
        pd = _pandas()
        if per_question:
            records = [
                {"system": str(system), "question": qid, "metric": metric, "score": float(v)}
                for system in self.systems
                for metric in self.metrics
                for qid, v in zip(self.question_ids, self.scores(system, metric), strict=True)
            ]
            return pd.DataFrame.from_records(
                records, columns=["system", "question", "metric", "score"]
            )
        records = estimate_records(self.summary, [str(s) for s in self.systems])
        columns = list(ESTIMATE_COLUMNS)
        return pd.DataFrame.from_records(records, columns=columns)


class Comparisons(list):
    """Paired comparisons (:class:`ragmeter.comparison.verdicts.Row`) on one metric under one
    decision rule (``rule``), with the seed and rounds they were drawn with, and where
    each system ranks (``ranks``, :class:`ragmeter.comparison.ranks.Ranks`, when given);
    shows itself like :class:`ShowsItself`."""

    def __init__(
        self,
        items: Iterable[Any],
        metric: str,
        seed: int,
        rounds: int,
        rule: Any = None,
        ranks: Any = None,
    ) -> None:
        super().__init__(items)
        self.metric = metric
        self.seed = seed
        self.rounds = rounds
        self.rule = rule
        self.ranks = ranks

    def _rows(self) -> list[list[str]]:

        alpha = rule_alpha(self.rule)
        rows = []
        for c in self:
            row = [c.a, c.b, shown_difference(c, self.metric), f"{c.wins}/{c.ties}/{c.losses}"]
            if self._p_label() is not None:
                row.append(shown_p(c, alpha))
            rows.append([*row, c.verdict])
        return rows

    def _p_label(self) -> str | None:
        return self.rule.p_label if self.rule is not None else "p"

    def _header(self) -> list[str]:
        unit = " (points)" if is_share(self.metric) else ""
        head = ["A", "B", f"A - B{unit} [CI]", "win/tie/loss"]
        if self._p_label() is not None:
            head.append(self._p_label())
        return [*head, "verdict"]

    def _caption(self) -> str:
        rule = f"{self.rule.header}; " if self.rule is not None else ""
        note = decided_note(self)
        text = f"Paired comparisons on {self.metric}. {rule}seed {self.seed}, {self.rounds} rounds"
        return f"{text}. {note}" if note else text

    def to_markdown(self) -> str:
        table = markdown_table(self._header(), self._rows(), right={2, 3, 4})
        return f"{table}\n\n{self._caption()}"

    def _repr_html_(self) -> str:
        return _html(self._header(), self._rows(), self._caption())

    def to_pandas(self):
        """One row per comparison: a, b, the difference and its interval, counts, the raw
        p-value and the rule's (``p``), and the verdict."""
        pd = _pandas()
        records = [
            {
                "a": c.a,
                "b": c.b,
                "metric": self.metric,
                "difference": c.difference.mean,
                "low": c.difference.low,
                "high": c.difference.high,
                "wins": c.wins,
                "ties": c.ties,
                "losses": c.losses,
                "p_value": c.p_value,
                "p": c.p,
                "verdict": c.verdict,
                "seed": self.seed,
                "rounds": self.rounds,
            }
            for c in self
        ]
        return pd.DataFrame.from_records(records)

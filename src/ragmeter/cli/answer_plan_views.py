"""What ``ragmeter plan --answers`` prints: the spend before any call
(:func:`ragmeter.answers.cost.plan_answers`): tokens per call and how they were
counted, the noise the plan rests on, the options (questions x reruns, predicted
half-width, calls, tokens, money) and whether another rerun or more questions buy
more."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console

from ragmeter.answers.cost import AnswerPlan, PlanOption, plan_answers
from ragmeter.cli.layout import Grid, print_grids, render
from ragmeter.comparison.formatting import format_half_width
from ragmeter.defaults import DEFAULTS

__all__ = ["answer_plan_command", "options_grid", "plan_lines"]

LABELS = {
    "as set": "as set",
    "half-width": "± {target} pts",
    "difference": "separate {difference}",
}


def _points(x: float) -> str:
    """A half-width of the accuracy (``correct``) in points, as its row prints one."""
    return format_half_width(x, "correct")


def _tokens(x: float) -> str:
    """Tokens in thousands (``547k``), below 1,000 as they are."""
    return f"{x:,.0f}" if x < 1000 else f"{x / 1000:,.0f}k"


def _money(option: PlanOption) -> str:
    return "" if option.money is None else f"{option.money:,.2f}"


def options_grid(plan: AnswerPlan) -> Grid:
    """The options: questions per system, reruns, predicted half-width, calls, tokens
    and money (a column only with ``[prices]``)."""
    priced = plan.prices is not None
    target, difference = _points(plan.half_width), _points(plan.difference)
    header = ["option", "questions", "K", "± pts", "calls", "prompt\ntokens", "reply\ntokens"]
    if priced:
        header.append(plan.prices.currency if plan.prices else "")
    grid = Grid(
        f"Answer plan: {len(plan.systems)} system{'s' if len(plan.systems) != 1 else ''}, "
        f"{len(plan.judges)} judge{'s' if len(plan.judges) != 1 else ''} "
        f"(nothing was called)",
        header,
        right=set(range(1, len(header))),
        key="options",
        caption=(
            f"questions are per system, each asked K times; ± pts: predicted half-width of "
            f"the {plan.confidence:.0%} accuracy interval (noisiest system); reply tokens: "
            f"completion tokens"
            + (f"; separate: a {difference}-point paired difference, power {DEFAULTS.power:g}"
               if plan.pairs
               else "")
        ),
    )  # fmt: skip
    for o in plan.options:
        label = LABELS[o.label].format(target=target, difference=difference)
        row = [label, f"{o.questions:,}", str(o.reruns), _points(o.half_width), f"{o.calls:,}"]
        row += [_tokens(o.prompt_tokens), _tokens(o.completion_tokens)]
        if priced:
            row.append(_money(o))
        grid.rows.append(row)
    return grid


def plan_lines(plan: AnswerPlan) -> list[str]:
    """The lines around the table: how tokens were counted, the noise, the choice."""
    out = []
    for side in (plan.reader, plan.judge):
        out.append(
            f"{side.role} {side.model}: {side.prompt:,.0f} prompt tokens a call "
            f"({side.prompt_how}); {side.completion:,.0f} completion tokens a call "
            f"({side.completion_how})"
        )
    n = plan.noise
    source = n.source + (f", {n.questions} questions x {n.reruns} reruns" if n.questions else "")
    out.append(
        f"noise: between questions {n.between:.3f}, within a question's reruns "
        f"{n.within:.3f} ({source})"
    )
    c = plan.choice
    better = "another rerun buys" if c.better == "rerun" else "more questions buy"
    spend = (
        f"{c.rerun_cost:,.2f} {plan.prices.currency}"
        if plan.prices
        else f"{c.rerun_cost:,.0f} calls"
    )
    out.append(
        f"at {c.questions:,} questions x {c.reruns} rerun{'s' if c.reruns != 1 else ''} "
        f"(± {_points(c.now)}): one more rerun ({spend}) gives ± {_points(c.with_rerun)}; "
        f"the same spend on {c.more_questions:,} more questions gives "
        f"± {_points(c.with_questions)}: {better} more"
    )
    hand = plan.hand
    if hand is not None:
        reach = (
            f"{hand.grades:,} hand grades per system bring the judge-corrected accuracy of "
            f"{hand.questions:,} questions to ± {_points(hand.half_width)}"
            if hand.grades is not None and hand.half_width is not None
            else f"no number of hand grades brings the judge-corrected accuracy of "
            f"{hand.questions:,} questions to ± {_points(plan.half_width)}: more questions first"
        )
        out.append(f"hand grades: {reach} (hand - judge variance {hand.rectifier:.3f}, "
                   f"{hand.source})")  # fmt: skip
    return out + plan.notes


def answer_plan_command(
    results: Path, console: Console, chosen: str = "table", **kwargs: Any
) -> str | None:
    """Plan, then print (``table``) or return the text of ``chosen`` (markdown, csv,
    json)."""
    plan = plan_answers(results, **kwargs)
    grid = options_grid(plan)
    if chosen != "table":
        records = [
            {k: v for k, v in {**o.__dict__, "calls": o.calls}.items()} for o in plan.options
        ]
        return render([grid], chosen, records, plan.to_dict())
    print_grids(console, grid)
    for line in plan_lines(plan):
        console.print(line, markup=False, highlight=False)
    return None

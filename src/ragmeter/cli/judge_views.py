"""What ``ragmeter judges`` prints about agreement: each pair of judges, the judges
against the hand grades, and the agreement beyond pairs.

Each pair shows percent agreement and Cohen's kappa on correct-or-not and on the three
grades, and beside the latter the kappa weighted linearly over correct / partial /
wrong (:data:`ragmeter.answers.judges.WEIGHTS`); :func:`print_judge_reliability` adds
Krippendorff's alpha over three or more judges and each judge's test-retest agreement
when ``grade`` reran the judges, and :func:`print_position_checks` each judge's grades
of a sample in the given order against the other order (``grade --position-check``).
The numbers come from :mod:`ragmeter.answers.judges` and :mod:`ragmeter.answers.position`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.text import Text

from ragmeter.answers.judges import HandCheck, JudgePair, JudgeReliability
from ragmeter.answers.position import PositionCheck
from ragmeter.cli.layout import Grid, print_grids
from ragmeter.comparison.formatting import format_estimate, level_label

__all__ = [
    "WEIGHTED_NOTE",
    "print_hand_checks",
    "print_judge_pairs",
    "print_judge_reliability",
    "print_position_checks",
]

WEIGHTED_NOTE = (
    "weighted kappa: linear weights over correct / partial / wrong, one step apart "
    "(partial against correct or wrong counts half a disagreement)"
)


def _level(*held: Any) -> str:
    """The level of the agreements ``held`` (judge pairs or hand checks) show."""
    ags = [a for h in held for a in (getattr(h, "binary", None), getattr(h, "three", None))]
    return level_label(e for a in ags if a is not None for e in (a.percent, a.kappa)) or "95%"


def _agree(ag: Any) -> tuple[str, str]:
    if ag is None:
        return "-", "-"
    return format_estimate(ag.percent, "hit"), format_estimate(ag.kappa, "kappa")


def _kappa(est: Any) -> str:
    return "-" if est is None else format_estimate(est, "kappa")


def print_judge_pairs(
    pairs: Sequence[JudgePair], console: Console, seed_rounds: tuple[int, int] | None = None
) -> None:
    for p in pairs:
        level = _level(p)
        grid = Grid(
            f"{p.a} vs {p.b}: {p.n} answers both scored",
            [
                "agreement on",
                f"percent [{level} CI]",
                f"Cohen's kappa [{level} CI]",
                f"weighted kappa, linear [{level} CI]",
            ],
            [
                ["correct or not", *_agree(p.binary), "-"],
                ["correct / partial / wrong", *_agree(p.three), _kappa(p.three_weighted)],
            ],
            right={1, 2, 3},
            caption=WEIGHTED_NOTE,
            key="agreement",
        )
        print_grids(console, grid)
        if p.three is not None:
            conf = Grid(
                f"rows: {p.a}; columns: {p.b}",
                ["", *(str(c) for c in p.three.classes)],
                right=set(range(1, len(p.three.classes) + 1)),
                key="confusion",
            )
            for c, counts in zip(p.three.classes, p.three.confusion, strict=True):
                conf.rows.append([str(c), *(str(v) for v in counts)])
            print_grids(console, conf)
        if p.lenient is None:
            console.print(f"Both marked {p.correct_a} answers correct.")
        else:
            console.print(
                Text.assemble(
                    (p.lenient, "bold"),
                    f" is more lenient: it marked {p.margin} more answers correct "
                    f"({p.correct_a} by {p.a}, {p.correct_b} by {p.b}).",
                )
            )
        if p.unscored_a or p.unscored_b:
            console.print(
                Text(
                    f"Left out as unscored: {p.unscored_a} by {p.a}, {p.unscored_b} by {p.b}.",
                    style="dim",
                )
            )
        if p.differ:
            console.print(Text(f"Graded differently ({len(p.differ)}):"))
            for d in p.differ:
                console.print(Text(f"  {d.key}: {p.a} {d.a}, {p.b} {d.b}"))
    if pairs and seed_rounds:
        console.print(
            f"[dim]{_level(*pairs)} percentile bootstrap intervals, seed {seed_rounds[0]}, "
            f"{seed_rounds[1]} rounds.[/]"
        )


def print_hand_checks(checks: Sequence[HandCheck], console: Console) -> None:
    grid = Grid(
        "Judges against the hand grades",
        ["judge", "matched", f"kappa [{_level(*checks)} CI]", "exact", "lenient", "strict"],
        right={1, 2, 3, 4, 5},
        caption=(
            "matched: same correct-or-not; exact: same of the 3 grades; lenient: judge "
            "correct, hand not; strict: hand correct, judge not"
        ),
        key="hand_checks",
    )
    for c in checks:
        grid.rows.append(
            [
                c.judge,
                f"{c.matched}/{c.n}",
                _agree(c.binary)[1],
                f"{c.exact}/{c.n}",
                str(len(c.lenient)),
                str(len(c.strict)),
            ]
        )
    print_grids(console, grid)
    for c in checks:
        for name, keys in (
            ("lenient (judge correct, hand not)", c.lenient),
            ("strict (hand correct, judge not)", c.strict),
        ):
            if keys:
                console.print(Text(f"  {c.judge} {name}: {' '.join(keys)}"))


def print_judge_reliability(rel: JudgeReliability, console: Console) -> None:
    """Krippendorff's alpha over all judges (three or more) in one line, then each
    judge's test-retest agreement when the judges were rerun; nothing otherwise."""
    if rel.alpha is not None:
        a = rel.alpha
        console.print(
            Text(
                f"Krippendorff's alpha (ordinal), all {len(rel.judges)} judges "
                f"[{level_label([a]) or '95%'} CI]: {format_estimate(a, 'kappa')}, "
                f"over the {a.n} answers graded by two or more."
            )
        )
    if not rel.retest:
        return
    first = next(iter(rel.retest.values()))
    level = level_label([first.percent, first.alpha]) or "95%"
    grid = Grid(
        f"Each judge against itself: rerun 0 vs the other {rel.reruns - 1} "
        f"{'rerun' if rel.reruns == 2 else 'reruns'} of the same answers",
        ["judge", "answers", f"same grade [{level} CI]", f"alpha, ordinal [{level} CI]"],
        [
            [
                j,
                str(r.items),
                format_estimate(r.percent, "hit"),
                format_estimate(r.alpha, "kappa"),
            ]
            for j, r in rel.retest.items()
        ],
        right={1, 2, 3},
        caption="same grade: the share of pairs of reruns that agree, per answer graded twice",
        key="retest",
    )
    print_grids(console, grid)
    console.print(
        f"[dim]{level} percentile bootstrap intervals over the answers, seed "
        f"{first.percent.seed}, {first.percent.rounds} rounds.[/]"
    )


def print_position_checks(checks: Sequence[PositionCheck], console: Console) -> None:
    """Each judge's sampled answers graded in the given order and in the other: answers,
    grades changed, kappa and weighted kappa on the three grades; then which order marked
    more answers correct and the answers whose grade changed. Nothing without a check."""
    if not checks:
        return
    level = _level(*(c.pair for c in checks))
    first = checks[0]
    grid = Grid(
        f"Position check: {first.sampled} sampled answers (seed {first.seed}) graded again "
        f"with {first.order}",
        ["judge", "answers", "changed", f"kappa [{level} CI]", f"weighted kappa [{level} CI]"],
        [
            [
                c.judge,
                str(c.pair.n),
                str(c.changed),
                _agree(c.pair.three)[1],
                _kappa(c.pair.three_weighted),
            ]
            for c in checks
        ],
        right={1, 2, 3, 4},
        caption="kappa on correct / partial / wrong, given order against the other; "
        "weighted: linear, partial half a disagreement",
        key="position",
    )
    print_grids(console, grid)
    for c in checks:
        p = c.pair
        if p.lenient is not None:
            console.print(
                Text(
                    f"{c.judge}: the {p.lenient} marked {p.margin} more answers correct "
                    f"({p.correct_a} in the given order, {p.correct_b} in the other)."
                )
            )
        for d in p.differ:
            console.print(
                Text(f"  {c.judge} {d.key}: {d.a} in the given order, {d.b} in the other")
            )
    seeds = first.pair.three.kappa if first.pair.three is not None else None
    if seeds is not None:
        console.print(
            f"[dim]{level} percentile bootstrap intervals over the answers, seed "
            f"{seeds.seed}, {seeds.rounds} rounds; the sample's seed is its own.[/]"
        )

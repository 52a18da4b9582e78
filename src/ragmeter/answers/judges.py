"""How the judges agree: judge against judge, and judge against hand grades.

:func:`compare_judges` and :func:`check_against_hand` work on plain grade mappings;
:func:`judge_pairs` and :func:`hand_checks` read them from a results directory. Cohen's
kappa and percent agreement carry bootstrap intervals with the results' own seed and
rounds unless given. Beside each pair's plain kappa on the three grades sits the
linearly weighted kappa (:data:`WEIGHTS`): correct / partial / wrong one step apart, so
partial against correct counts as half a disagreement. :func:`judge_reliability` adds
Krippendorff's alpha over three or more judges and, when ``grade`` reran the judges,
each judge's agreement with itself. The small helpers at the top are shared with
:mod:`ragmeter.answers.analysis`.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ragmeter import stats
from ragmeter.answers.rerun_store import read_grade_reruns
from ragmeter.answers.reruns import Reruns
from ragmeter.answers.store import GRADES, UNSCORED, AnswerSet, answers_dir, load_answer_set
from ragmeter.defaults import DEFAULTS
from ragmeter.errors import InputError
from ragmeter.inputs.config import answers_judge
from ragmeter.runs.results import Results
from ragmeter.stats.ordinal_agreement import (
    RetestAgreement,
    krippendorff_alpha,
    retest_agreement,
    weighted_kappa,
)

__all__ = [
    "BINARY",
    "HandCheck",
    "JudgePair",
    "JudgeReliability",
    "WEIGHTS",
    "accuracy_judge",
    "as_answer_set",
    "binary_label",
    "check_against_hand",
    "compare_judges",
    "hand_checks",
    "interval_settings",
    "judge_pairs",
    "judge_reliability",
    "key_text",
    "run_confidence",
]

BINARY = ("correct", "not correct")
WEIGHTS = "linear"
"""The weighted kappa's weights: disagreement |i - j| / 2 over correct, partial, wrong."""


def binary_label(label: str) -> str:
    return "correct" if label == "correct" else "not correct"


def key_text(key: Hashable) -> str:
    if isinstance(key, tuple):
        return "/".join(str(p) for p in key)
    return str(key)


def interval_settings(res: Results, seed: int | None, rounds: int | None) -> tuple[int, int]:
    s = seed if seed is not None else res.summary.seed
    r = rounds if rounds is not None else res.summary.rounds
    return s, r


def run_confidence(res: Results) -> float:
    return res.summary.confidence


def as_answer_set(results: Results | str | Path | AnswerSet) -> AnswerSet:
    return results if isinstance(results, AnswerSet) else load_answer_set(results)


def accuracy_judge(aset: AnswerSet, judge: str | None = None) -> str | None:
    """The judge whose grades give the accuracy, the first of these that names one:

    ``judge`` (``--accuracy-judge``), ``[answers] judge`` in the run's ``config.toml``
    (written by ``ragmeter search`` from ``ragmeter.toml``), ``accuracy_judge`` in
    ``answers/meta.json`` (recorded by ``ragmeter grade --accuracy-judge``), else the
    first of its ``judges`` (the first judge ever graded with). A name no judge
    graded under is a one-line error listing the judges that did.
    """
    where = ""
    if judge is None:
        config = aset.results.path / "config.toml"
        judge = answers_judge(config) or None
        where = f"{config}: [answers] judge: "
    if judge is None:
        judge = aset.meta.get("accuracy_judge")
        where = f"{answers_dir(aset.results) / 'meta.json'}: accuracy_judge: "
    if judge is None:
        return aset.judges[0] if aset.judges else None
    judge = str(judge)
    if judge not in aset.judges:
        graded = ", ".join(aset.judges) or "no judge yet"
        raise InputError(
            f"{where}no grades by judge {judge!r}; graded by {graded}; name one of those"
        )
    return judge


# --- judge against judge ---------------------------------------------------------------------


@dataclass(frozen=True)
class Disagreement:
    key: str
    a: str
    b: str


@dataclass(frozen=True)
class JudgePair:
    """How two raters compare on the items both scored.

    ``binary`` is agreement on correct-or-not, ``three`` on correct / partial /
    wrong (percent and Cohen's kappa with intervals, confusion matrix);
    ``three_weighted`` the kappa on those three grades with :data:`WEIGHTS` weights,
    its interval on the same resamples as ``three``'s.
    ``lenient`` names the rater that marked more answers correct (``None`` on a
    tie) and ``margin`` by how many; ``a_only`` / ``b_only`` list the items only
    one of them marked correct, ``differ`` every item graded differently.
    """

    a: str
    b: str
    n: int
    binary: stats.Agreement | None
    three: stats.Agreement | None
    correct_a: int
    correct_b: int
    a_only: list[str]
    b_only: list[str]
    differ: list[Disagreement]
    unscored_a: int = 0
    unscored_b: int = 0
    three_weighted: stats.Estimate | None = None

    @property
    def lenient(self) -> str | None:
        if self.correct_a == self.correct_b:
            return None
        return self.a if self.correct_a > self.correct_b else self.b

    @property
    def margin(self) -> int:
        return abs(self.correct_a - self.correct_b)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["lenient"], out["margin"] = self.lenient, self.margin
        return out


def compare_judges(
    a: Mapping[Hashable, str],
    b: Mapping[Hashable, str],
    name_a: str = "a",
    name_b: str = "b",
    rounds: int = DEFAULTS.rounds,
    seed: int = DEFAULTS.seed,
    confidence: float = DEFAULTS.confidence,
) -> JudgePair:
    """Compare two raters' grades over the keys both scored (unscored left out)."""
    both = [k for k in a if k in b and a[k] != UNSCORED and b[k] != UNSCORED]
    la = [a[k] for k in both]
    lb = [b[k] for k in both]
    binary = three = weighted = None
    if both:
        binary = stats.agreement(
            [binary_label(x) for x in la],
            [binary_label(y) for y in lb],
            classes=BINARY,
            rounds=rounds,
            seed=seed,
            confidence=confidence,
        )
        three = stats.agreement(
            la, lb, classes=GRADES, rounds=rounds, seed=seed, confidence=confidence
        )
        weighted = weighted_kappa(la, lb, GRADES, WEIGHTS, rounds, seed, confidence)
    return JudgePair(
        a=name_a,
        b=name_b,
        n=len(both),
        binary=binary,
        three=three,
        correct_a=la.count("correct"),
        correct_b=lb.count("correct"),
        a_only=[key_text(k) for k in both if a[k] == "correct" and b[k] != "correct"],
        b_only=[key_text(k) for k in both if b[k] == "correct" and a[k] != "correct"],
        differ=[Disagreement(key_text(k), a[k], b[k]) for k in both if a[k] != b[k]],
        unscored_a=sum(1 for k in a if a[k] == UNSCORED),
        unscored_b=sum(1 for k in b if b[k] == UNSCORED),
        three_weighted=weighted,
    )


def judge_pairs(
    results: Results | str | Path | AnswerSet,
    seed: int | None = None,
    rounds: int | None = None,
) -> list[JudgePair]:
    """Every pair of judges in ``meta.json`` order, over all answers both scored."""
    aset = as_answer_set(results)
    seed, rounds = interval_settings(aset.results, seed, rounds)
    keys = aset.ordered_keys()
    labels = {j: aset.labels(j, keys) for j in aset.judges}
    conf = run_confidence(aset.results)
    return [
        compare_judges(labels[ja], labels[jb], ja, jb, rounds, seed, conf)
        for i, ja in enumerate(aset.judges)
        for jb in aset.judges[i + 1 :]
    ]


# --- all judges together, and each judge against itself ---------------------------------------


@dataclass(frozen=True)
class JudgeReliability:
    """Agreement beyond pairs of judges.

    ``alpha`` is Krippendorff's alpha (ordinal, over correct / partial / wrong) of all
    ``judges`` on the answers, unscored and ungraded ones left out; ``None`` with fewer
    than three judges. ``retest`` gives each judge's agreement with itself when
    ``grade`` reran the judges: rerun 0 and the ``reruns - 1`` others of the same
    answers (a rerun whose answer differs from rerun 0's is left out); empty without
    judge reruns, and a judge no answer of which was graded twice is left out.
    """

    judges: list[str]
    alpha: stats.Estimate | None
    retest: dict[str, RetestAgreement]
    reruns: int = 1

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _grade_or_none(grade: str | None) -> str | None:
    return None if grade in (None, UNSCORED) else grade


def _retest_rows(aset: AnswerSet, judge: str, k: int, graded: Mapping) -> list[list[str | None]]:
    """Per answer, ``judge``'s grade at rerun 0 and each rerun, of that same answer."""
    rows = []
    first = aset.grades.get(judge, {})
    for key in aset.ordered_keys():
        sha = aset.answers[key].sha
        row = [_grade_or_none(first[key].grade) if key in first else None]
        for r in range(1, k):
            g = graded.get((judge, *key, r))
            row.append(_grade_or_none(g.grade) if g is not None and g.answer_sha == sha else None)
        rows.append(row)
    return rows


def judge_reliability(
    results: Results | str | Path | AnswerSet,
    seed: int | None = None,
    rounds: int | None = None,
) -> JudgeReliability:
    """Krippendorff's alpha over three or more judges and each judge's test-retest
    agreement when the judges were rerun, with the run's seed and rounds unless given."""
    aset = as_answer_set(results)
    seed, rounds = interval_settings(aset.results, seed, rounds)
    conf = run_confidence(aset.results)
    keys = aset.ordered_keys()
    alpha = None
    if len(aset.judges) >= 3:
        ratings = [[_grade_or_none(aset.labels(j, keys).get(k)) for k in keys] for j in aset.judges]
        try:
            alpha = krippendorff_alpha(ratings, GRADES, "ordinal", rounds, seed, conf)
        except InputError:  # no answer graded by two judges
            alpha = None
    reruns = Reruns.from_meta(aset.meta.get("grade_reruns")) or Reruns()
    retest: dict[str, RetestAgreement] = {}
    if reruns.k > 1 and reruns.reruns("judge") and keys:
        graded = read_grade_reruns(answers_dir(aset.results))
        for j in aset.judges:
            try:
                rows = _retest_rows(aset, j, reruns.k, graded)
                retest[j] = retest_agreement(rows, GRADES, "ordinal", rounds, seed, conf)
            except InputError:  # no answer graded twice by this judge
                continue
    return JudgeReliability(list(aset.judges), alpha, retest, reruns.k)


# --- judge against hand ------------------------------------------------------------------


@dataclass(frozen=True)
class HandCheck:
    """A judge against the hand grades, over the answers both graded.

    ``matched`` counts agreement on correct-or-not, ``exact`` on all three
    grades. A miss is ``lenient`` (the judge said correct, the hand did not) or
    ``strict`` (the hand said correct, the judge did not); ``partial_wrong``
    lists the remaining three-class differences (partial against wrong).
    """

    judge: str
    n: int
    matched: int
    exact: int
    binary: stats.Agreement | None
    three: stats.Agreement | None
    lenient: list[str]
    strict: list[str]
    partial_wrong: list[str]
    unscored: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def check_against_hand(
    judge: Mapping[Hashable, str],
    hand: Mapping[Hashable, str],
    name: str = "judge",
    rounds: int = DEFAULTS.rounds,
    seed: int = DEFAULTS.seed,
    confidence: float = DEFAULTS.confidence,
) -> HandCheck:
    """Agreement of one judge with the hand grades, and its misses by direction."""
    pair = compare_judges(judge, hand, name, "hand", rounds, seed, confidence)
    both = [k for k in judge if k in hand and judge[k] != UNSCORED and hand[k] != UNSCORED]
    return HandCheck(
        judge=name,
        n=pair.n,
        matched=sum(1 for k in both if binary_label(judge[k]) == binary_label(hand[k])),
        exact=sum(1 for k in both if judge[k] == hand[k]),
        binary=pair.binary,
        three=pair.three,
        lenient=pair.a_only,
        strict=pair.b_only,
        partial_wrong=[
            key_text(k)
            for k in both
            if judge[k] != hand[k] and "correct" not in (judge[k], hand[k])
        ],
        unscored=sum(1 for k in hand if k in judge and judge[k] == UNSCORED),
    )


def hand_checks(
    results: Results | str | Path | AnswerSet,
    seed: int | None = None,
    rounds: int | None = None,
) -> list[HandCheck]:
    """Each judge against the hand grades of the current answers."""
    aset = as_answer_set(results)
    seed, rounds = interval_settings(aset.results, seed, rounds)
    hand = {k: h.hand for k, h in aset.hand.items()}
    keys = [k for k in aset.ordered_keys() if k in hand]
    conf = run_confidence(aset.results)
    return [
        check_against_hand(aset.labels(j, keys), hand, j, rounds, seed, conf) for j in aset.judges
    ]

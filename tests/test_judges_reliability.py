"""What ``ragmeter judges`` adds to plain kappa: the linearly weighted kappa of each pair,
Krippendorff's alpha over three or more judges, and each judge's test-retest agreement
when ``grade`` reran the judges."""

from __future__ import annotations

import pytest
from test_answers import (  # noqa: F401  (results: a fixture)
    A,
    B,
    Scripted,
    judge_by_question,
    labelled,
    quiet,
    reader,
    results,
    text_of,
)
from test_answers_reruns import Sampling, seeded_judge, seeded_reader

from ragmeter.answers import answer_questions, grade_answers
from ragmeter.answers.judges import compare_judges, judge_reliability
from ragmeter.answers.rerun_store import read_grade_reruns
from ragmeter.answers.reruns import Reruns
from ragmeter.answers.store import GRADES, answers_dir, load_answer_set
from ragmeter.cli.answer_views import judges_command
from ragmeter.comparison.formatting import format_estimate
from ragmeter.stats.ordinal_agreement import krippendorff_alpha, retest_agreement, weighted_kappa


def test_a_pairs_weighted_kappa_is_linear_over_the_three_grades_by_hand():
    pair = compare_judges(labelled(A), labelled(B), "judge-a", "judge-b", rounds=300, seed=2)
    # confusion (rows a: correct, partial, wrong) [[4, 1, 1], [0, 1, 0], [1, 0, 2]], n = 10;
    # linear disagreement weights 0, 1/2, 1. Observed: (1 * .5 + 1 * 1 + 1 * 1) / 10 = .25.
    # Expected from row sums 6, 1, 3 and column sums 5, 2, 3: (6 * (2 * .5 + 3 * 1)
    # + 1 * (5 * .5 + 3 * .5) + 3 * (5 * 1 + 2 * .5)) / 100 = 46 / 100 -> 1 - 25 / 46.
    w = pair.three_weighted
    assert w.mean == pytest.approx(21 / 46)
    assert pair.three.kappa.mean == pytest.approx(0.29 / 0.59)  # the plain one, beside it
    # the same resamples as the plain kappa's: the library's own weighted kappa, same seed
    same = weighted_kappa(list(labelled(A).values()), list(labelled(B).values()), GRADES,
                          "linear", rounds=300, seed=2)  # fmt: skip
    assert (w.low, w.high, w.seed, w.rounds) == (same.low, same.high, same.seed, 300)
    assert pair.to_dict()["three_weighted"]["mean"] == pytest.approx(21 / 46)


def _graded(results, *tables):  # noqa: F811
    answer_questions(results, Scripted("reader", reader))
    grade_answers(
        results,
        [
            Scripted(n, judge_by_question(t))
            for n, t in zip("abc"[: len(tables)], tables, strict=True)
        ],
    )


def test_judges_prints_the_weighted_kappa_beside_the_plain_one_and_no_alpha_for_two(
    results,  # noqa: F811
):
    _graded(results, {"Bloom": "wrong"}, {"Bloom": "partial"})
    out = quiet()
    [pair] = judges_command(results, console=out)
    printed = text_of(out)
    assert "weighted kappa, linear" in printed and "linear weights over correct" in printed
    assert pair.three_weighted is not None
    assert format_estimate(pair.three_weighted, "kappa") in printed
    assert pair.three_weighted.mean != pair.three.kappa.mean  # partial counts half
    assert "Krippendorff" not in printed and "against itself" not in printed
    rel = judge_reliability(results)
    assert rel.alpha is None and rel.retest == {}


def test_with_three_judges_one_line_gives_krippendorffs_alpha_over_all_of_them(
    results,  # noqa: F811
):
    _graded(results, {"Bloom": "wrong"}, {"Bloom": "partial"}, {"Raft": "wrong"})
    out = quiet()
    judges_command(results, console=out)
    printed = text_of(out)
    [line] = [x for x in printed.splitlines() if "Krippendorff" in x]
    aset = load_answer_set(results)
    keys = aset.ordered_keys()
    ratings = [[aset.labels(j, keys).get(k) for k in keys] for j in aset.judges]
    ratings = [[None if g == "unscored" else g for g in r] for r in ratings]
    summary = aset.results.summary
    alpha = krippendorff_alpha(ratings, GRADES, "ordinal", summary.rounds, summary.seed,
                               summary.confidence)  # fmt: skip
    assert "all 3 judges" in line and format_estimate(alpha, "kappa") in line
    assert judge_reliability(results).alpha == alpha
    assert "against itself" not in printed


def test_with_judge_reruns_each_judge_gets_its_test_retest_agreement(results):  # noqa: F811
    answer_questions(results, Sampling("reader", seeded_reader))
    grade_answers(results, [Sampling("j", seeded_judge)], reruns=Reruns(k=3, of="judge", seed=1))
    out = quiet()
    judges_command(results, console=out)
    printed = text_of(out)
    assert "Each judge against itself: rerun 0 vs the other 2 reruns" in printed
    rel = judge_reliability(results)
    aset = load_answer_set(results)
    graded = read_grade_reruns(answers_dir(results))
    rows = [
        [aset.grades["test:j"][key].grade] + [graded[("test:j", *key, r)].grade for r in (1, 2)]
        for key in aset.ordered_keys()
    ]
    s = aset.results.summary
    expected = retest_agreement(rows, GRADES, "ordinal", s.rounds, s.seed, s.confidence)
    assert rel.retest == {"test:j": expected} and rel.reruns == 3
    assert format_estimate(expected.percent, "hit") in printed
    assert format_estimate(expected.alpha, "kappa") in printed
    assert "Krippendorff" not in printed  # one judge: no alpha across judges


def test_reader_reruns_alone_give_no_test_retest_line(results):  # noqa: F811
    reruns = Reruns(k=2, of="reader", seed=1)
    answer_questions(results, Sampling("reader", seeded_reader), reruns=reruns)
    grade_answers(results, [Sampling("j", seeded_judge)], reruns=reruns)
    out = quiet()
    judges_command(results, console=out)
    assert "against itself" not in text_of(out)
    assert judge_reliability(results).retest == {}


def test_the_reports_agreement_row_keeps_the_weighted_kappa_the_terminal_prints(
    results,  # noqa: F811
):
    from ragmeter.report.sections import load_answers
    from ragmeter.runs.results import Results

    _graded(results, {"Bloom": "wrong"}, {"Bloom": "partial"})
    out = quiet()
    [pair] = judges_command(results, console=out)
    [row] = load_answers(Results(results))["agreement"]
    shown = format_estimate(pair.three_weighted, "kappa")
    assert row["kappa_weighted"]["shown"] == shown and shown in text_of(out)
    assert row["kappa_weighted"]["mean"] == pytest.approx(pair.three_weighted.mean, abs=1e-3)

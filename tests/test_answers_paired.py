"""Paired verdicts on answers (``ragmeter.answers.paired``, printed by ``grade``).

Each system's answers become 0/1 per question (correct; correct or partial), an unscored
answer counting as not correct as in the accuracy, over the questions every compared
system has a graded answer for; the verdicts come from the search half's one comparison
under the run's rule and family or the one chosen (``--adjust``, ``--baseline``,
``--pairs``, ``--family``), and ``answers/verdicts.json`` keeps them. Grades are written
by hand into ``answers/answers.jsonl`` (the merged format), so each case is known
question by question; ``grade`` itself runs with a scripted judge.
"""

from __future__ import annotations

import io
import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from conftest import SMALL_EXAMPLE_SETTINGS, copy_results, save_example
from rich.console import Console
from test_answers import Scripted, reader

from ragmeter.answers.paired import (
    MEASURES,
    answer_verdicts,
    read_answer_verdicts,
    write_answer_verdicts,
)
from ragmeter.answers.store import answers_dir
from ragmeter.cli.answer_verdict_views import print_answer_verdicts
from ragmeter.cli.answer_views import answer_command, grade_command
from ragmeter.errors import InputError
from ragmeter.llm.fence import fenced
from ragmeter.runs.results import Results
from ragmeter.scoring.names import ANSWER_SHARES
from ragmeter.stats.paired_tests import mcnemar_exact

GRADE = {"c": "correct", "p": "partial", "w": "wrong", "u": "unscored"}


def write_grades(results: Path, grades: dict[str, str], judge: str = "j") -> None:
    """``{system: "ccpw..."}``: one letter per question in results order (``-``: no
    answer, ``.``: an answer the judge has not graded), as ``answers/answers.jsonl``."""
    ids = Results(results).question_ids
    lines = []
    for system, letters in grades.items():
        for q, letter in zip(ids, letters, strict=False):
            if letter == "-":
                continue
            row = {"system": system, "question": q, "answer": f"{system} on {q}"}
            if letter != ".":
                row["grades"] = {judge: GRADE[letter]}
            lines.append(json.dumps(row))
    answers_dir(results).mkdir(exist_ok=True)
    (answers_dir(results) / "answers.jsonl").write_text("\n".join(lines) + "\n")


def console() -> Console:
    return Console(file=io.StringIO(), width=200, force_terminal=False)


def printed(c: Console) -> str:
    return " ".join(c.file.getvalue().split())


@pytest.fixture
def results(small_example_results_copy):
    """8 questions, two systems: ``sentence`` and ``fixed-40``."""
    return small_example_results_copy


# --- the numbers -----------------------------------------------------------------------------


def test_a_hand_computed_pair_gives_its_difference_counts_p_and_verdict(results):
    write_grades(results, {"sentence": "cccccpww", "fixed-40": "cwwwwcpw"})
    v = answer_verdicts(results)
    assert v.systems == ["sentence", "fixed-40"] and len(v.questions) == 8
    [row] = v.tables["correct"].rows
    # correct: sentence 6 of 8, fixed-40 2 of 8; sentence alone on q2..q5, fixed-40 on q6
    assert (row.a, row.b) == ("sentence", "fixed-40")
    assert row.difference.mean == pytest.approx(5 / 8 - 2 / 8)
    assert (row.wins, row.ties, row.losses) == (4, 3, 1)
    assert row.p == pytest.approx(mcnemar_exact(4, 1)) == pytest.approx(2 * 6 / 32)
    assert row.verdict == "tie: too few differing questions (5 of 8 differ; at least 6 needed)"
    assert not row.separated and row.difference.low < 0 < row.difference.high
    [either] = v.tables["correct or partial"].rows
    # correct or partial: sentence 6 of 8 (q6 partial), fixed-40 3 of 8 (q7 partial)
    assert either.difference.mean == pytest.approx(6 / 8 - 3 / 8)
    assert (either.wins, either.ties, either.losses) == (4, 3, 1)
    # a family of one pair: no adjustment, the run's seed and rounds
    assert v.tables["correct"].rule.pairs == 1
    assert (v.seed, v.rounds) == (Results(results).summary.seed, Results(results).summary.rounds)
    assert v.tables["correct"].rule.rounds == v.rounds


def test_a_system_clearly_better_on_every_question_is_better(results):
    write_grades(results, {"sentence": "wwwwwwww", "fixed-40": "cccccccc"})
    v = answer_verdicts(results)
    for measure in MEASURES:
        [row] = v.tables[measure].rows
        assert row.verdict == "fixed-40 better" and row.separated
        assert row.difference.mean == -1.0 and row.difference.high < 0
        assert row.p == pytest.approx(2 / 2**8)


def test_identical_answers_are_identical_and_equal_shares_on_other_questions_a_tie(results):
    write_grades(results, {"sentence": "ccppwwcc", "fixed-40": "ccppwwcc"})
    [row] = answer_verdicts(results).tables["correct"].rows
    assert row.identical and not row.separated and row.verdict.startswith("identical")
    write_grades(results, {"sentence": "ccccwwww", "fixed-40": "wwwwcccc"})
    for measure in MEASURES:
        [row] = answer_verdicts(results).tables[measure].rows
        assert row.difference.mean == 0 and not row.separated and row.verdict.startswith("tie")


def test_unscored_counts_as_not_correct_and_ungraded_or_unanswered_is_left_out(results):
    # sentence: q1 unscored (0 on both measures), q8 not graded yet; fixed-40: no q7
    write_grades(results, {"sentence": "uccccpw.", "fixed-40": "cwwwwc-c"})
    v = answer_verdicts(results)
    ids = Results(results).question_ids
    assert v.questions == ids[:6]  # q7: no answer by fixed-40; q8: sentence's is ungraded
    assert v.unscored == {"sentence": 1, "fixed-40": 0}
    assert v.left_out == {"sentence": 1, "fixed-40": 1}  # each one's graded answer to q7 / q8
    assert v.ungraded == {"sentence": 1, "fixed-40": 0}
    [row] = v.tables["correct"].rows
    assert (row.wins, row.ties, row.losses) == (4, 0, 2)  # q1 unscored lost to a correct one
    assert row.difference.mean == pytest.approx(4 / 6 - 2 / 6)
    c = console()
    print_answer_verdicts(v, c)
    text = printed(c)
    assert (
        "an unscored answer counts as not correct, as in the accuracy (unscored: sentence 1)"
        in text
    )
    assert "Pairs over the 6 questions every compared system has a graded answer for" in text
    assert "another system has no graded answer for: sentence 1, fixed-40 1" in text
    assert "not graded yet by j: sentence 1" in text


def test_one_system_prints_a_sentence_and_no_table(results):
    write_grades(results, {"sentence": "cccccccc"})
    v = answer_verdicts(results)
    assert v.tables == {} and v.systems == ["sentence"]
    c = console()
    print_answer_verdicts(v, c)
    text = printed(c)
    assert text == (
        "One system (sentence) has answers graded by j: paired verdicts need two; answer "
        "and grade another system to compare."
    )
    write_grades(results, {"sentence": "cccccccc", "fixed-40": "cccccccc"})
    assert answer_verdicts(results, systems=["fixed-40"]).tables == {}


def test_the_saved_verdicts_read_back_equal(results):
    write_grades(results, {"sentence": "ucccwpw.", "fixed-40": "cwwwwcc-"})
    v = answer_verdicts(results)
    path = write_answer_verdicts(v, results)
    assert path == answers_dir(results) / "verdicts.json"
    back = read_answer_verdicts(results)
    assert back == v and back.to_dict() == v.to_dict()
    data = json.loads(path.read_text())
    assert [c["measure"] for c in data["comparisons"]] == list(MEASURES)
    row = data["comparisons"][0]["rows"][0]
    for key in ("a", "b", "difference", "p", "p_value", "verdict", "separated"):
        assert key in row
    assert {"low", "high", "mean", "seed", "rounds"} <= set(row["difference"])
    assert data["comparisons"][0]["rule"]["adjust"] == "maxt"
    assert (data["seed"], data["rounds"]) == (v.seed, v.rounds)
    assert "unscored answer counts as not correct" in data["basis"]
    assert read_answer_verdicts(answers_dir(results).parent / "nowhere") is None


def test_the_measures_print_in_points():
    assert set(MEASURES) == ANSWER_SHARES


# --- the family and the rule -----------------------------------------------------------------


@pytest.fixture
def three(example_results_copy):
    """Three systems (whole, sentence, recursive), every pair the run's family."""
    n = len(Results(example_results_copy).question_ids)
    write_grades(
        example_results_copy,
        {"whole": "c" * n, "sentence": "cw" * (n // 2) + "c" * (n % 2), "recursive": "w" * n},
    )
    return example_results_copy


@pytest.mark.parametrize(
    ("choice", "adjust", "family", "pairs"),
    [
        ({}, "maxt", "all pairs", [("whole", "sentence"), ("whole", "recursive"),
                                    ("sentence", "recursive")]),
        ({"adjust": "holm"}, "holm", "all pairs", 3),
        ({"adjust": "none"}, "none", "all pairs", 3),
        ({"baseline": "recursive"}, "maxt", "every system against recursive",
         [("whole", "recursive"), ("sentence", "recursive")]),
        ({"pairs": "recursive:whole"}, "maxt", "a single chosen pair", [("recursive", "whole")]),
        ({"pairs": "whole:sentence,sentence:recursive", "adjust": "holm"}, "holm",
         "planned pairs", [("whole", "sentence"), ("sentence", "recursive")]),
    ],
)  # fmt: skip
def test_the_rule_and_family_are_the_run_s_or_the_chosen_ones(three, choice, adjust, family, pairs):
    v = answer_verdicts(three, **choice)
    for measure in MEASURES:
        table = v.tables[measure]
        assert (table.rule.adjust, table.rule.family) == (adjust, family)
        got = [(r.a, r.b) for r in table.rows]
        assert got == pairs if isinstance(pairs, list) else len(got) == pairs
        if adjust == "none":
            assert all(r.p is None for r in table.rows)
        else:
            assert all(r.p is not None for r in table.rows)
    if "pairs" in choice:  # the questions of the systems the pairs name
        assert v.systems == sorted({s for p in pairs for s in p}, key=v.systems.index)


def test_answers_rank_on_each_measure_and_the_ranks_are_saved_and_printed(three):
    # whole right on every question, sentence on half, recursive on none
    v = answer_verdicts(three)
    for measure in MEASURES:
        ranks = v.ranks[measure]
        assert ranks.order == ["whole", "sentence", "recursive"]
        assert ranks.sentence == "whole ahead of every other system; recursive below all"
        assert [r.shown for r in ranks.ranges] == ["1", "2", "3"] and ranks.own
    # a baseline table compares two pairs: the ranges still rest on all three, under max-T
    based = answer_verdicts(three, baseline="recursive", adjust="holm").ranks["correct"]
    assert not based.own and based.rule.pairs == 3 and based.rule.adjust == "maxt"
    assert based.top == ["whole", "sentence"]  # the baseline table never compares them
    write_answer_verdicts(v, three)
    assert read_answer_verdicts(three).ranks == v.ranks
    c = console()
    print_answer_verdicts(v, c)
    out = printed(c)
    assert out.count("Ranks on correct") == 2  # correct, and correct or partial
    assert "whole ahead of every other system; recursive below all" in out


def test_the_run_s_rule_is_the_search_s_and_a_wrong_choice_is_one_line(three):
    res = Results(three)
    v = answer_verdicts(three)
    assert v.tables["correct"].rule.adjust == res.comparison_plan.adjust
    with pytest.raises(InputError, match="needs a strategy x retriever grid"):
        answer_verdicts(three, family="retrievers")
    with pytest.raises(InputError, match="baseline or planned pairs, not both"):
        answer_verdicts(three, baseline="whole", pairs="whole:sentence")
    with pytest.raises(InputError, match="unknown system 'wole'.*whole"):
        grade_command(three, [], choice={"baseline": "wole"}, console=console())


@pytest.fixture(scope="module")
def grid(tmp_path_factory):
    """Two strategies x two BM25 settings on 8 questions: a 2 x 2 grid, its family named."""
    retrievers = ("bm25", {"name": "b03", "kind": "bm25", "b": 0.3})
    return save_example(
        tmp_path_factory.mktemp("grid") / "res",
        8,
        strategies=("sentence", "fixed-40"),
        custom_strategies=({"name": "fixed-40", "kind": "fixed", "size": 40},),
        retrievers=retrievers,
        ks=(1, 5),
        rounds=200,
        family="grid",
    )


def test_a_grid_is_compared_by_the_grid_s_families_as_in_the_search(grid, tmp_path):
    results = copy_results(grid, tmp_path / "res")
    names = Results(results).systems
    write_grades(results, {s: "ccccwwww"[i:] + "cccc"[:i] for i, s in enumerate(names)})
    v = answer_verdicts(results)
    rule = v.tables["correct"].rule
    assert rule.family == Results(results).summary.comparison_rule.family
    assert rule.family.startswith("retrievers within each strategy") and rule.pairs <= 4
    assert len(v.tables["correct"].rows) == 4
    alone = answer_verdicts(results, family="retrievers").tables["correct"]
    assert alone.rule.family == "retrievers within each strategy" and len(alone.rows) == 2
    # graded for three of the four systems: no grid, so every pair, and a note says why
    write_grades(results, {s: "ccccwwww" for s in names[:3]})
    partial = answer_verdicts(results)
    assert partial.tables["correct"].rule.family == "all pairs"
    assert any("form no strategy x retriever grid" in n for n in partial.notes)


def test_a_run_whose_questions_cluster_flips_whole_documents_as_its_search_did(tmp_path):
    results = save_example(tmp_path / "res", 20, **SMALL_EXAMPLE_SETTINGS, clusters="document")
    searched = Results(results).summary.comparison_rule
    write_grades(results, {"sentence": "c" * 14 + "w" * 6, "fixed-40": "w" * 20})
    rule = answer_verdicts(results).tables["correct"].rule
    assert rule.clusters == searched.clusters > 1
    assert rule.test == searched.test == "sign-flip test of whole clusters (200 rounds)"
    # the first 14 questions span only a few posts: 14 wins are not 14 independent ones
    [row] = answer_verdicts(results).tables["correct"].rows
    assert row.wins == 14 and row.difference.method == "cluster sign-flip inversion"


# --- grade prints them and keeps them --------------------------------------------------------


def by_answer(prompt: str) -> str:
    """A judge that passes answers quoting a passage of a chunk that opens with '#'
    (``sentence`` chunks keep a post's heading more often than 40-word ones)."""
    answer = fenced(prompt, "answer")
    grade = "correct" if answer.startswith("#") else "wrong"
    return json.dumps({"grade": grade, "reason": "by its first character"})


def test_grade_prints_the_paired_verdicts_and_saves_them(results):
    answer_command(results, Scripted("reader", reader), console=console())
    c = console()
    grade_command(results, [Scripted("j", by_answer)], console=c)
    text = printed(c)
    assert "Paired verdicts on the answers, judged by test:j" in text
    for measure in MEASURES:
        assert f"Paired comparisons on {measure} (A - B, points; seed 1, 200 rounds)" in text
    assert "A - B [95% CI]" in text and "win/tie/loss" in text
    assert "Rule: a family of one pair (all pairs), so no adjustment" in text
    saved = read_answer_verdicts(results)
    assert saved is not None and saved.judge == "test:j" and set(saved.tables) == set(MEASURES)
    [row] = saved.tables["correct"].rows
    assert row.verdict in text and row.difference.n == 8


def test_grade_with_one_system_prints_the_sentence_and_saves_no_table(results):
    answer_command(results, Scripted("reader", reader), systems="sentence", console=console())
    c = console()
    grade_command(results, [Scripted("j", by_answer)], console=c)
    text = printed(c)
    assert "One system (sentence) has answers graded by test:j: paired verdicts need two" in text
    assert "Paired comparisons" not in text
    assert read_answer_verdicts(results).tables == {}


def test_grade_checks_a_chosen_family_before_any_model_call(results):
    answer_command(results, Scripted("reader", reader), console=console())
    judge = Scripted("j", by_answer)
    with pytest.raises(InputError, match="--pairs: unknown system 'sentense'"):
        grade_command(results, [judge], choice={"pairs": "sentense:fixed-40"}, console=console())
    assert judge.calls == 0
    grade_command(results, [judge], choice={"adjust": "none"}, console=(c := console()))
    assert "Rule: the seed's per-pair rule" in printed(c)
    assert read_answer_verdicts(results).tables["correct"].rule.adjust == "none"


# --- reruns ----------------------------------------------------------------------------------


def test_with_reruns_each_question_scores_its_mean_over_reruns_in_the_one_comparison(results):
    from test_answers_reruns import Sampling, seeded_judge, seeded_reader

    from ragmeter.answers.flips import rerun_scores
    from ragmeter.answers.reruns import Reruns
    from ragmeter.comparison.systems import compare_systems

    answer_command(results, Sampling("reader", seeded_reader), console=console())
    c = console()
    reruns = Reruns(k=3, of="judge", temperature=0.8)
    grade_command(results, [Sampling("j", seeded_judge)], console=c, reruns=reruns)
    saved = read_answer_verdicts(results)
    assert saved.reruns == 3 and saved.systems == ["sentence", "fixed-40"]
    data = json.loads((answers_dir(results) / "verdicts.json").read_text())
    assert data["reruns"] == 3 and "means over 3 reruns" in data["rerun_basis"]
    assert "scores are means over 3 reruns" in printed(c)
    plan = Results(results).comparison_plan
    for measure in MEASURES:
        scores = rerun_scores(results, measure=measure.replace(" ", "_"))
        means = np.array([np.nanmean(scores.scores[s], axis=1) for s in saved.systems])
        assert not np.isin(means, (0.0, 1.0)).all()  # the reruns disagree somewhere
        want = compare_systems({measure: means}, saved.systems, replace(plan, metric=measure))
        [row] = saved.tables[measure].rows
        assert row == want.rows[0]
        assert row.difference.mean == pytest.approx(np.mean(means[0] - means[1]))


def test_without_reruns_the_saved_verdicts_name_no_reruns(results):
    answer_command(results, Scripted("reader", reader), console=console())
    grade_command(results, [Scripted("j", by_answer)], console=(c := console()))
    data = json.loads((answers_dir(results) / "verdicts.json").read_text())
    assert "reruns" not in data and "rerun_basis" not in data
    assert read_answer_verdicts(results).reruns == 1 and "reruns" not in printed(c)

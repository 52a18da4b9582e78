"""Answer failures checked without a model: each check by hand, then counted on a run.

The checks are plain functions, tested here on hand-written answers (the spec's own
examples among them: 4.8 read as 48, 4.8 multiplied by 9, a measured number left out,
"not in the context" with the passage present) and on answers that must not be
flagged (95% and 0.95, "1,000" and "1000", "twelve" and "12"). A scripted reader and
judges then make a results directory with answers, on which the counts, the
intervals, ``failures.json``, the commands and the report are checked.
"""

from __future__ import annotations

import io
import json
import re
import shlex
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from conftest import EXAMPLE, save_example
from rich.console import Console
from test_answers import Scripted, question_of

from ragmeter import stats
from ragmeter.answers import answer_questions, grade_answers, hand_grade, load_answer_set
from ragmeter.answers.analysis import search_hits
from ragmeter.answers.failure_counts import ANY, failure_report, leniency_flags, write_failures
from ragmeter.answers.failures import (
    FAILURES,
    CheckSettings,
    asks_quantity,
    check_answer,
    check_number_changed,
    check_number_left_out,
    check_refused,
    check_unsupported,
    check_without_passage,
    refuses,
    sentences,
)
from ragmeter.answers.hand import sample_order
from ragmeter.answers.numbers import numbers, same_number
from ragmeter.answers.store import HandGrade, answers_dir, append_hand
from ragmeter.cli.answer_views import grade_command, handgrade_command, judges_command
from ragmeter.cli.failure_views import failures_command
from ragmeter.errors import InputError
from ragmeter.runs.results import Results

# the passage of the seed's example: "a flat 4.8 more bits per item"
BITS = (
    "Every additional 4.8 bits per item divides the false-positive rate by ten, so 0.1% "
    "costs roughly 14.4 bits per item."
)
BITS_Q = "How many more bits per item does each tenfold cut in the false-positive rate cost?"


def one(text: str):
    [n] = numbers(text)
    return n


# --- numbers --------------------------------------------------------------------------------


def test_numbers_read_decimals_separators_percentages_units_and_words():
    found = {
        n.text: n.values
        for n in numbers(
            "4.8 bits, 95% of it, 1,000 keys, 10 ms, 2 million, p = 1/4, twelve, twenty-one, "
            "two hundred, 95 percent"
        )
    }
    assert found["4.8"] == (4.8,)
    assert found["95%"] == (95.0, 0.95) and found["95 percent"] == (95.0, 0.95)
    assert found["1,000"] == (1000.0,)
    assert found["10 ms"] == (10.0, 0.01)
    assert found["2 million"] == (2.0, 2e6)
    assert found["1/4"][0] == 0.25
    assert (found["twelve"], found["twenty-one"], found["two hundred"]) == (
        (12.0,),
        (21.0,),
        (200.0,),
    )


def test_citations_and_identifiers_are_not_numbers():
    assert [n.text for n in numbers("As [1] and [2, 3] say, passage 4 shows h1 + i·h2.")] == []
    [lone] = numbers("The one that wins.")
    assert lone.weak


@pytest.mark.parametrize(
    ("stated", "reference"),
    [
        ("95%", "0.95"),
        ("0.95", "95%"),
        ("1,000", "1000"),
        ("1000", "1,000"),
        ("twelve", "12"),
        ("12", "twelve"),
        ("0.01 s", "10 ms"),
        ("2,000,000", "2 million"),
        ("0.25", "1/4"),
        ("10", "9.6"),
        ("0.81", "0.812"),
    ],
)
def test_the_same_number_stated_another_way(stated, reference):
    assert same_number(one(stated), one(reference))


@pytest.mark.parametrize(
    ("stated", "reference"),
    [("48", "4.8"), ("43.2", "4.8"), ("1%", "0.8%"), ("8%", "0.8%"), ("95", "0.95"), ("13", "12")],
)
def test_a_changed_number_is_not_the_same(stated, reference):
    assert not same_number(one(stated), one(reference))


# --- the checks, one by one -----------------------------------------------------------------


def test_number_changed_4_8_read_as_48():
    [change] = check_number_changed("Each tenfold cut costs 48 more bits per item.", [BITS], BITS_Q)
    assert (change.stated, change.reference) == ("48", "4.8")


def test_number_changed_4_8_multiplied_by_9():
    answer = "A flat 4.8 more bits per item, so nine cuts cost 43.2 bits."
    changed = check_number_changed(answer, [BITS], BITS_Q)
    assert [c.stated for c in changed] == ["nine", "43.2"]
    assert answer[changed[1].start : changed[1].end] == "43.2"


def test_a_number_copied_from_another_passage_is_not_changed_but_left_out():
    other = "Hitting exactly 1% needs about 9.6 bits."
    answer = "It costs 9.6 bits."
    assert check_number_changed(answer, [BITS], BITS_Q, seen=[BITS, other]) == []
    assert [c.stated for c in check_number_changed(answer, [BITS], BITS_Q, seen=[BITS])] == ["9.6"]
    check = check_answer("s", "q", answer, [BITS], [BITS, other], BITS_Q, hit=True)
    assert check.failures == ("number_left_out",)
    # copied means as written: 8% is not the 8 of "8 bits"
    assert check_number_changed("About 8%.", ["About 0.8%."], "", seen=["8 bits"]) != []


@pytest.mark.parametrize(
    ("answer", "reference"),
    [
        ("About 0.95 of its capacity.", "It fills to about 95% of its capacity."),
        ("About 95% of it.", "The load reaches 0.95 before inserts fail."),
        ("It held 1000 keys.", "It held 1,000 keys."),
        ("It uses 12 levels.", "It uses twelve levels."),
        ("It uses twelve levels.", "It uses 12 levels."),
        ("Each cut costs 4.8 more bits per item [1].", BITS),
        ("Roughly ten bits and seven hashes give 0.8%.", "10 bits and 7 hashes: about 0.8%."),
        ("Kirsch and Mitzenmacher, in 2006.", "In 2006 Adam Kirsch and Michael Mitzenmacher."),
    ],
)
def test_numbers_stated_the_same_are_not_flagged(answer, reference):
    assert check_number_changed(answer, [reference], "") == []


def test_a_lone_one_is_never_a_changed_number():
    assert check_number_changed("The one it keeps costs 4.8 bits.", [BITS], BITS_Q) == []
    assert check_number_left_out("One more bit.", [BITS], BITS_Q)  # and states nothing


def test_numbers_the_question_gives_are_not_changed_ones():
    q = "What error rate should I expect with ten bits and seven hashes?"
    ref = "A filter that spends 10 bits per item and uses 7 hash functions has about 0.8%."
    assert check_number_changed("With 10 bits and 7 hashes, about 0.8%.", [ref], q) == []
    assert [c.stated for c in check_number_changed("About 8%.", [ref], q)] == ["8%"]
    # the question's numbers may be repeated even when the reference does not state them
    short = "The false-positive rate is about 0.8%."
    assert check_number_changed("Ten bits and 7 hashes give about 0.8%.", [short], q) == []
    # a reference without numbers has none to change
    assert check_number_changed("It took 3 tries.", ["It took a few tries."], "") == []


def test_number_left_out():
    assert check_number_left_out("Each cut costs a few more bits per item.", [BITS], BITS_Q)
    assert not check_number_left_out("Each cut costs 4.8 more bits.", [BITS], BITS_Q)
    # not a quantity question: nothing to leave out
    q = "Why does each cut cost more bits?"
    assert not check_number_left_out("Because of the math.", [BITS], q)
    # the question's own numbers do not count as stating the measured one
    q2 = "What error rate should I expect if I give each element ten bits and use seven hashes?"
    ref = "A filter that spends 10 bits per item and uses 7 hash functions has about 0.8%."
    assert check_number_left_out("With ten bits and seven hashes it works well.", [ref], q2)
    assert not check_number_left_out("About 0.8%.", [ref], q2)
    # a reference whose numbers are all in the question leaves nothing to state
    assert not check_number_left_out("Yes.", ["Ten bits."], "How many bits, ten?")


@pytest.mark.parametrize(
    "question",
    [
        BITS_Q,
        "What percentage of slots fill?",
        "In what year was it published?",
        "What error rate should I expect?",
        "Wie viele Bits braucht es?",
        "Combien de bits ?",
        "¿Cuántos bits hacen falta?",
    ],
)
def test_quantity_questions(question):
    assert asks_quantity(question)


def test_questions_that_ask_no_quantity():
    assert not asks_quantity("Who came up with the Bloom filter?")
    assert not asks_quantity("Why do two hash values suffice?")


@pytest.mark.parametrize(
    "answer",
    [
        "not in the context",
        "Not in the context.",
        "The passages do not contain the answer.",
        "The provided passages don't mention it.",
        "I cannot answer this from the passages.",
        "Die Antwort ist nicht im Kontext.",
        "Die Passagen enthalten keine Informationen dazu.",
        "Ce n'est pas dans le contexte.",
        "Les passages ne mentionnent pas cette valeur.",
        "No está en el contexto.",
        "No hay información sobre eso.",
    ],
)
def test_refusals_in_four_languages(answer):
    assert refuses(answer)
    assert check_refused(answer, hit=True)
    assert not check_refused(answer, hit=False)  # declining without the passage is right


def test_not_refusals():
    assert not refuses("Burton Howard Bloom, in 1970.")
    # a refusal phrase after a first sentence that answers is not a refusal
    assert not refuses("Bloom described it in 1970. The passages do not say where.")
    # more patterns can be given
    settings = CheckSettings().with_refusals([r"\bkeine ahnung\b"])
    assert refuses("Keine Ahnung.", settings.refusals) and not refuses("Keine Ahnung.")


def test_sentences_keep_decimals_whole():
    assert sentences("It costs 4.8 bits. Then 9.6 more!\nDone") == [
        "It costs 4.8 bits.",
        "Then 9.6 more!",
        "Done",
    ]


def test_unsupported_statement():
    seen = ["Burton Howard Bloom described the structure in 1970, in a paper about hyphenation."]
    q = "Who came up with the Bloom filter, and in what year?"
    answer = "Burton Howard Bloom described it in 1970. Aliens built the pyramids on Mars quickly."
    [u] = check_unsupported(answer, seen, q)
    assert u.sentence == "Aliens built the pyramids on Mars quickly." and u.support == 0.0
    # stems and the question's words count as support
    assert check_unsupported("Bloom's filters were described in papers.", seen, q) == []
    # the question's words are support: restating the question is no false claim
    assert check_unsupported("Someone came up with the filter that year.", seen, q) == []
    assert check_unsupported("Someone came up with the filter that year.", seen, "") != []
    # too short to judge
    assert check_unsupported("Mars, surely.", seen, q) == []


def test_unsupported_threshold_is_the_share_of_content_words():
    seen = ["alpha beta gamma delta"]
    answer = "alpha beta omega sigma."  # 2 of 4 content words found: 50%
    assert check_unsupported(answer, seen, threshold=0.5) == []
    [u] = check_unsupported(answer, seen, threshold=0.51)
    assert u.support == 0.5


def test_answered_without_the_passage():
    assert check_without_passage("correct", hit=False)
    assert not check_without_passage("correct", hit=True)
    assert not check_without_passage("partial", hit=False)
    assert not check_without_passage(None, hit=False)


def test_check_answer_names_each_failure_once():
    refused = check_answer("s", "q", "not in the context", [BITS], [BITS], BITS_Q, hit=True)
    assert refused.failures == ("refused",)  # a refusal is not also a number left out
    changed = check_answer("s", "q", "It costs 48 bits.", [BITS], [BITS], BITS_Q, hit=True)
    assert changed.failures == ("number_changed",) and changed.number_flag
    fine = check_answer(
        "s", "q", "Each cut costs 4.8 more bits per item.", [BITS], [BITS], BITS_Q, True, "correct"
    )
    assert fine.failures == () and not fine.number_flag
    lucky = check_answer("s", "q", "4.8 more bits per item.", [BITS], [], BITS_Q, False, "correct")
    assert lucky.failures == ("unsupported", "without_passage") or lucky.failures == (
        "without_passage",
    )


# --- counted on a results directory -------------------------------------------------------------

ANSWERS = {
    "q001": "Burton Howard Bloom came up with it.",  # the year left out
    "q002": "About 8%.",  # 0.8% changed
    "q003": "not in the context",
    "q005": "Its false-positive rate quietly climbs. Elephants never forget a face at the zoo.",
    "q007": "About 0.95 of its capacity.",  # 95%, stated another way
    "q008": "Below roughly 3 percent.",
}


def scripted_reader(results):
    refs = {q.text: q for q in Results(results).questions}

    def respond(prompt: str) -> str:
        q = refs[question_of(prompt)]
        return ANSWERS.get(q.id, " ".join(a.text for a in q.answers))

    return Scripted("reader", respond)


def judge(strict: tuple[str, ...] = ()):
    def respond(prompt: str) -> str:
        q = question_of(prompt)
        wrong = any(word in q for word in strict)
        return json.dumps({"grade": "wrong" if wrong else "correct", "reason": "r"})

    return respond


@pytest.fixture
def answered(small_example_results_copy):
    path = small_example_results_copy
    answer_questions(path, scripted_reader(path))
    # "lenient" passes everything; "strict" fails the year and the error-rate answers
    grade_answers(
        path,
        [Scripted("lenient", judge()), Scripted("strict", judge(("what year", "error rate")))],
    )
    return path


def quiet() -> Console:
    return Console(file=io.StringIO(), width=250, force_terminal=False)


def flat(text: str) -> str:
    """Printed text with table rules and runs of spaces taken out."""
    return " ".join(re.sub(r"[│┃║]", " ", text).split())


def test_failures_counted_per_system_with_intervals(answered):
    res = Results(answered)
    report = failure_report(answered)
    assert report.judge == "test:lenient"
    assert (report.seed, report.rounds) == (res.summary.seed, res.summary.rounds)
    by_key = {c.key: c for c in report.checks}
    for system in res.systems:
        hits = search_hits(res, system, 5)
        assert by_key[(system, "q001")].failures[:1] == ("number_left_out",)
        [change] = by_key[(system, "q002")].changed
        assert (change.stated, change.reference) == ("8%", "0.8%")
        assert ("refused" in by_key[(system, "q003")].failures) == hits["q003"]
        unsupported = {u.sentence: u.support for u in by_key[(system, "q005")].unsupported}
        assert unsupported["Elephants never forget a face at the zoo."] < 0.5
        assert not by_key[(system, "q007")].number_flag  # 0.95 is 95%
        assert not by_key[(system, "q008")].number_flag  # 3 percent is 3%
        for q in res.question_ids:
            correct_missed = not hits[q] and by_key[(system, q)].grade == "correct"
            assert ("without_passage" in by_key[(system, q)].failures) == correct_missed
    for row in report.systems:
        mine = [c for c in report.checks if c.system == row.system]
        assert row.n == len(mine) == 8
        for kind in FAILURES:
            flags = np.array([kind in c.failures for c in mine], dtype=np.float64)
            assert row.counts[kind] == int(flags.sum())
            expected = stats.bootstrap(flags, rounds=report.rounds, seed=report.seed)
            assert row.rates[kind] == expected
        assert row.counts["any"] == sum(1 for c in mine if c.failures)
    [comparison] = report.comparisons.rows
    assert {comparison.a, comparison.b} == set(res.systems)
    assert report.comparisons.rule.adjust == res.comparison_plan.adjust


def test_failure_comparisons_agree_with_their_rule():
    """Six failures against none, twice among three systems: each pair's own exact p is
    0.031, but over three pairs it is no difference. The verdict, the interval and the
    adjusted p say so together (a percentile interval alone would call it)."""
    from rich.console import Console

    from ragmeter.answers.failure_counts import _comparisons
    from ragmeter.cli.failure_views import print_comparisons

    n = 40
    any_by_q = {
        "a": {f"q{i}": float(i < 6) for i in range(n)},
        "b": {f"q{i}": 0.0 for i in range(n)},
        "c": {f"q{i}": float(6 <= i < 12) for i in range(n)},
    }
    seed_rule = stats.compare_all(
        np.array([list(any_by_q[s].values()) for s in "abc"]), list("abc"), rounds=2000, seed=3
    )
    assert seed_rule[0].difference.low > 0  # the per-pair percentile interval excludes 0
    for adjust in ("maxt", "holm"):
        verdicts = _comparisons(any_by_q, 2000, 3, 0.95, adjust)
        assert verdicts.rule.adjust == adjust and verdicts.rule.pairs == 3
        ab = next(r for r in verdicts.rows if {r.a, r.b} == {"a", "b"})
        assert ab.p_value == pytest.approx(2 / 2**6)
        assert ab.p >= 0.05 and not ab.separated
        for r in verdicts.rows:
            excludes = r.difference.low > 0 or r.difference.high < 0
            assert r.separated == (r.p < 0.05) == excludes
        report = SimpleNamespace(comparisons=verdicts)
        console = Console(width=200, record=True)
        print_comparisons(report, console)
        text = console.export_text()
        assert ("max-T" if adjust == "maxt" else "Holm") in text
        assert f"a - b (points) [{'max-T' if adjust == 'maxt' else 'Holm'}-level CI]" in text
        cells = [x.replace("│", " ").split() for x in text.splitlines()]
        line = next(c for c in cells if c[:2] == ["a", "b"])
        assert line[-1] == "tie" and "fails less" not in text


def test_judge_leniency_flags(answered):
    report = failure_report(answered)
    lenient, strict = report.leniency
    assert lenient.judge == "test:lenient" and strict.judge == "test:strict"
    expected = sorted(f"{s}/{q}" for s in ("sentence", "fixed-40") for q in ("q001", "q002"))
    assert sorted(lenient.passed) == expected and lenient.flagged == 4
    assert strict.passed == [] and strict.flagged == 4
    assert lenient.rate.mean == 1.0 and strict.rate.mean == 0.0
    assert leniency_flags(load_answer_set(answered)) == {
        (s, q) for s in ("sentence", "fixed-40") for q in ("q001", "q002")
    }


def test_failures_command_prints_and_writes_json(answered):
    from typer.testing import CliRunner

    from ragmeter.cli import app

    result = CliRunner().invoke(app, ["failures", str(answered), "--show", "0"])
    assert result.exit_code == 0, result.output
    out = flat(result.output)
    assert "Answer failures" in out and "number changed" in out
    assert "sentence/q002: 8% (reference: 0.8%)" in out
    assert "Judges passing a changed or left-out number" in out
    data = json.loads((answers_dir(answered) / "failures.json").read_text())
    res = Results(answered)
    assert (data["seed"], data["rounds"]) == (res.summary.seed, res.summary.rounds)
    assert [s["system"] for s in data["systems"]] == res.systems
    row = data["systems"][0]
    assert set(row["rates"]) == {*FAILURES, "any"}
    assert row["rates"]["number_changed"]["seed"] == res.summary.seed
    assert row["counts"]["number_changed"] == 1
    keys = {(a["system"], a["question"]) for a in data["answers"]}
    assert ("sentence", "q002") in keys and ("sentence", "q007") not in keys
    lenient = data["leniency"][0]
    assert lenient["judge"] == "test:lenient" and len(lenient["passed"]) == 4

    # a chosen seed and rounds are used and recorded
    result = CliRunner().invoke(app, ["failures", str(answered), "--seed", "7", "--rounds", "300"])
    assert result.exit_code == 0, result.output
    data = json.loads((answers_dir(answered) / "failures.json").read_text())
    assert (data["seed"], data["rounds"]) == (7, 300)
    assert data["systems"][0]["rates"]["any"]["rounds"] == 300


def test_failures_command_bad_input_is_one_line(answered, tmp_path):
    from typer.testing import CliRunner

    from ragmeter.cli import app

    runner = CliRunner()
    for args, needle in (
        (["--refusal", "("], "--refusal"),
        (["--refusal", "(a+)+$"], "repeats a group that itself repeats"),
        (["--support", "0"], "--support"),
        (["--accuracy-judge", "nobody"], "nobody"),
    ):
        result = runner.invoke(app, ["failures", str(answered), *args])
        assert result.exit_code == 2, result.output
        assert needle in result.output and len(result.output.strip().splitlines()) == 1


def test_failures_need_answers(small_example_results_copy):
    from typer.testing import CliRunner

    from ragmeter.cli import app

    path = small_example_results_copy
    result = CliRunner().invoke(app, ["failures", str(path)])
    assert result.exit_code == 2 and "ragmeter answer" in result.output


def test_extra_refusal_and_support_settings_change_the_checks(answered):
    settings = CheckSettings().with_refusals([r"^about\b"])
    report = failures_command(answered, settings=settings, console=quiet())
    by_key = {c.key: c for c in report.checks}
    assert by_key[("sentence", "q002")].refused and by_key[("sentence", "q007")].refused
    strict = CheckSettings(threshold=1.0)
    report = failure_report(answered, settings=strict)
    assert sum(r.counts["unsupported"] for r in report.systems) > 2


def test_grade_and_judges_show_failures(answered):
    out = quiet()
    grade_command(answered, [Scripted("lenient", judge())], console=out)
    printed = out.file.getvalue()
    assert "Answer failures (checked without a model" in printed
    assert "1 number changed, 1 number left out" in printed
    assert (answers_dir(answered) / "failures.json").is_file()
    out = quiet()
    judges_command(answered, console=out)
    printed = flat(out.file.getvalue())
    assert "Judges passing a changed or left-out number" in printed
    assert "test:lenient 4 4 100.0" in printed and "test:strict 4 0 0.0" in printed


def test_handgrade_offers_flagged_answers_first(answered):
    aset = load_answer_set(answered)
    flagged = leniency_flags(aset)
    order = sample_order(aset.ordered_keys(), seed=3)
    assert [k for k in order[:4] if k in flagged] != order[:4]  # random order mixes them
    seen = []

    def ask(item):
        seen.append((item.system, item.question))
        return "wrong" if len(seen) <= 5 else "quit"

    run = hand_grade(answered, n=8, seed=3, ask=ask)
    assert run.flagged == 4 and run.stopped
    assert set(seen[:4]) == flagged
    assert seen[:4] == [k for k in order if k in flagged]  # the seeded order among them
    assert seen[4] == next(k for k in order if k not in flagged)
    meta = json.loads((answers_dir(answered) / "meta.json").read_text())
    assert meta["hand"]["order"].startswith("judge-passed answers")


def test_handgrade_random_order_keeps_the_plain_sample(answered):
    order = sample_order(load_answer_set(answered).ordered_keys(), seed=3)
    out = quiet()
    handgrade_command(
        answered, n=2, seed=3, input=io.StringIO("c\nw\n"), console=out, flagged_first=False
    )
    hand = load_answer_set(answered).hand
    assert set(hand) == set(order[:2])
    assert "came first" not in out.file.getvalue()

    from typer.testing import CliRunner

    from ragmeter.cli import app

    result = CliRunner().invoke(
        app, ["handgrade", str(answered), "--n", "3", "--seed", "3", "--random-order"], input="c\n"
    )
    assert result.exit_code == 0, result.output
    assert set(load_answer_set(answered).hand) == set(order[:3])


def test_precision_against_hand_grades(answered):
    aset = load_answer_set(answered)
    folder = answers_dir(answered)
    # the changed 8% is wrong by hand; the answer without the year is called correct
    for key, label in (
        (("sentence", "q002"), "wrong"),
        (("fixed-40", "q002"), "wrong"),
        (("sentence", "q001"), "correct"),
    ):
        append_hand(folder, HandGrade(key[0], key[1], label, aset.answers[key].sha))
    report = failures_command(answered, console=(out := quiet()))
    by_kind = {p.failure: p for p in report.precision}
    assert (by_kind["number_changed"].hand_graded, by_kind["number_changed"].confirmed) == (2, 2)
    assert by_kind["number_changed"].precision == 1.0
    assert (by_kind["number_left_out"].hand_graded, by_kind["number_left_out"].confirmed) == (1, 0)
    assert by_kind["refused"].precision is None or by_kind["refused"].hand_graded == 0
    printed = flat(out.file.getvalue())
    assert "Checks against the hand grades" in printed
    assert "number changed 2 2 100%" in printed and "number left out 1 0 0%" in printed


def test_report_has_the_failure_section_with_marked_numbers(answered):
    from ragmeter.report.data import report_data

    data = report_data(Results(answered))
    f = data["optional"]["failures"]
    assert f["order"] == [*FAILURES, "any"] and f["judge"] == "test:lenient"
    assert [r["system"] for r in f["systems"]] == Results(answered).systems
    assert f["systems"][0]["rates"]["number_changed"]["shown"]
    case = next(c for c in f["cases"] if (c["system"], c["question"]) == ("sentence", "q002"))
    assert ["8%", "changed"] in case["answer"]
    assert ["0.8%", "missing"] in case["reference"]
    assert ["10", "number"] in case["reference"]  # the question gives it ("ten bits")
    assert (
        "".join(p for p, _ in case["reference"]) == Results(answered).questions[1].answers[0].text
    )
    case = next(c for c in f["cases"] if (c["system"], c["question"]) == ("sentence", "q005"))
    assert ["Elephants never forget a face at the zoo.", "unsupported"] in case["answer"]
    assert {j["judge"]: j["passed"] for j in f["leniency"]} == {"test:lenient": 4, "test:strict": 0}


# --- the worked example of docs/answers.md ------------------------------------------------------


def _docs_example() -> tuple[list[list[str]], str, str]:
    """The worked example's commands, its answers.jsonl and its printed output."""

    text = (Path(__file__).resolve().parents[1] / "docs" / "answers.md").read_text()
    section = text.split("## How answers fail: `ragmeter failures`", 1)[1]
    example = section.split("### Worked example", 1)[1]
    bash = example.split("```bash\n", 1)[1].split("```", 1)[0]
    shown = example.split("```text\n", 1)[1].split("```", 1)[0]
    jsonl = bash.split("<<'EOF'\n", 1)[1].split("EOF\n", 1)[0]
    commands = [shlex.split(line)[1:] for line in bash.splitlines() if line.startswith("ragmeter ")]
    return commands, jsonl, shown


def test_docs_worked_example_runs_as_shown(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from ragmeter.cli import app

    commands, jsonl, shown = _docs_example()
    assert [c[0] for c in commands] == ["search", "failures"]
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    done = runner.invoke(app, commands[0])
    assert done.exit_code == 0, done.output
    (tmp_path / "ex" / "answers").mkdir()
    (tmp_path / "ex" / "answers" / "answers.jsonl").write_text(jsonl)
    done = runner.invoke(app, commands[1])
    assert done.exit_code == 0, done.output
    printed = flat(done.output)
    for line in shown.splitlines():
        line = flat(line)
        if line and not set(line) <= set("┏┓┗┛┡┩└┘┳┻╇┴━─ "):
            assert line in printed, line


def test_the_shipped_passages_as_answers_are_never_flagged():
    """Each question of the shipped example answered with its own answer passage: no
    check may fire, and no sentence of the corpus reads as a refusal."""

    root = Path(__file__).resolve().parents[1] / EXAMPLE
    for line in (root / "questions.jsonl").read_text().splitlines():
        q = json.loads(line)
        refs = [a["text"] for a in q["answers"]]
        check = check_answer("s", q["id"], " ".join(refs), refs, refs, q["question"], True)
        assert check.failures == () and not check.refused, q["id"]
    for post in sorted((root / "posts").glob("*.md")):
        assert not [s for s in sentences(post.read_text()) if refuses(s)], post.name


@pytest.mark.parametrize(
    "pattern", [r"(a+)+$", r"(\w*\s?)*x", r"(?:no|none+)*!", r"((ab)+c?)*d", r"(a|b*)+$"]
)
def test_a_refusal_pattern_that_can_backtrack_without_bound_is_refused_at_once(pattern):
    import time

    from ragmeter.answers.failures import check_pattern

    t = time.perf_counter()
    with pytest.raises(InputError, match="repeats a group that itself repeats"):
        CheckSettings().with_refusals([pattern])
    with pytest.raises(InputError, match="^--refusal "):
        check_pattern(pattern, "--refusal")
    assert time.perf_counter() - t < 1.0


@pytest.mark.parametrize(
    "pattern", [r"(?>a+)+$", r"a+b*$", r"(?:foo|bar)+", r"(ab){3}+", r"(?:x\d{2})+", r"no+"]
)
def test_patterns_without_nested_repeats_and_the_built_in_ones_are_kept(pattern):
    from ragmeter.answers.failures import QUANTITY_PATTERNS, REFUSAL_PATTERNS

    settings = CheckSettings().with_refusals([pattern, *REFUSAL_PATTERNS, *QUANTITY_PATTERNS])
    assert pattern in settings.refusals


def test_failures_never_overwrite_a_file_ragmeter_did_not_write(answered):
    # regression: `ragmeter failures` wrote over an answers/failures.json of the user's
    from typer.testing import CliRunner

    from ragmeter.cli import app

    mine = answers_dir(answered) / "failures.json"
    mine.write_text('{"my": "notes"}\n')
    result = CliRunner().invoke(app, ["failures", str(answered), "--show", "0"])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "failures.json" in lines[0] and "move it away" in lines[0]
    assert mine.read_text() == '{"my": "notes"}\n'
    mine.unlink()
    assert CliRunner().invoke(app, ["failures", str(answered), "--show", "0"]).exit_code == 0
    assert CliRunner().invoke(app, ["failures", str(answered), "--show", "0"]).exit_code == 0


def test_the_merged_answers_file_is_never_written_over_a_users(answered):
    from ragmeter.answers.store import write_merged
    from ragmeter.errors import InputError

    merged = answers_dir(answered) / "answers.jsonl"
    write_merged(answered)  # its own: rewritten
    merged.write_text("my edits\n")
    with pytest.raises(InputError, match="answers.jsonl"):
        write_merged(answered)
    assert merged.read_text() == "my edits\n"


# ``ragmeter.answers.failure_counts``: which answers ``failures.json`` lists, the comparisons
# over the questions every system answered, and every interval at the run's own seed, rounds and
# confidence (a single system: no comparison at all).


def test_failures_json_lists_each_answer_with_a_failure_or_a_number_flag(answered):  # noqa: F811
    report = failure_report(answered)
    listed = {(a["system"], a["question"]) for a in report.to_dict()["answers"]}
    assert listed == {c.key for c in report.checks if c.failures or c.number_flag}
    # a failure without a changed or left-out number is listed too (the unsupported
    # sentence of q005), and an answer with neither is not (q007 states 95% as 0.95)
    without_flag = {c.key for c in report.checks if c.failures and not c.number_flag}
    assert ("sentence", "q005") in without_flag and ("sentence", "q005") in listed
    assert ("sentence", "q007") not in listed


def test_only_the_questions_every_system_answered_are_compared(answered):  # noqa: F811
    aset = load_answer_set(answered)
    first, second = Results(answered).systems
    for q in ("q003", "q004", "q005", "q006", "q007", "q008"):
        del aset.answers[(first, q)]  # as if those reader calls had failed
    report = failure_report(aset)
    assert [(r.system, r.n) for r in report.systems] == [(first, 2), (second, 8)]
    [row] = report.comparisons.rows
    assert {row.a, row.b} == {first, second} and row.difference.n == 2
    del aset.answers[(first, "q002")]  # one question in common: nothing to compare
    report = failure_report(aset)
    assert report.comparisons is None and report.to_dict()["comparisons"] is None


@pytest.fixture(scope="module")
def one_system(tmp_path_factory):
    path = tmp_path_factory.mktemp("failures-one") / "results"
    save_example(path, 8, strategies=("sentence",), ks=(1, 5), confidence=0.9)
    answer_questions(path, scripted_reader(path))
    grade_answers(path, [Scripted("lenient", judge())])
    return path


def test_one_system_has_no_comparison_and_the_runs_interval_settings(one_system):
    res = Results(one_system)
    assert res.summary.confidence == 0.9 and res.systems == ["sentence"]
    report = failure_report(one_system)
    assert report.comparisons is None and report.confidence == 0.9
    [row] = report.systems
    for est in row.rates.values():
        assert (est.seed, est.rounds, est.confidence) == (res.summary.seed, 200, 0.9)
    [lenient] = report.leniency
    assert lenient.flagged == 2 and lenient.rate.mean == 1.0
    assert (lenient.rate.seed, lenient.rate.rounds, lenient.rate.confidence) == (
        res.summary.seed,
        200,
        0.9,
    )
    path = write_failures(report, one_system)
    assert path == answers_dir(one_system) / "failures.json"
    data = json.loads(path.read_text())
    assert data["comparisons"] is None and data["confidence"] == 0.9
    assert data["systems"][0]["rates"][ANY]["confidence"] == 0.9
    assert data["leniency"][0]["rate"]["rounds"] == 200


def test_a_run_made_at_90_percent_names_90_percent_in_its_failure_tables(tmp_path):
    from conftest import SMALL_EXAMPLE_QUESTIONS, SMALL_EXAMPLE_SETTINGS

    from ragmeter.cli.failure_views import print_failure_table, print_leniency

    path = save_example(
        tmp_path / "results", SMALL_EXAMPLE_QUESTIONS, **SMALL_EXAMPLE_SETTINGS, confidence=0.9
    )
    answer_questions(path, scripted_reader(path))
    grade_answers(
        path,
        [Scripted("lenient", judge()), Scripted("strict", judge(("what year", "error rate")))],
    )
    report = failure_report(path)
    console = quiet()
    print_failure_table(report, console)
    print_leniency(report.leniency, console)
    shown = flat(console.file.getvalue())
    assert "% of answers [90% CI]" in shown and "95%" not in shown
    rates = [r.rate for r in report.leniency if r.rate is not None]
    assert all(r.confidence == 0.9 for r in rates)
    if rates:
        assert "passed (%) [90% CI]" in shown

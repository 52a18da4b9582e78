"""The spend before any call (``plan --answers``): calls and tokens counted on the
prompts the reader and the judges will get, checked against what a run then used; the
money at ``[prices]``; and bad input as one line, exit code 2.

The stand-in model counts a prompt's tokens by the plan's own estimate (as a server
counts with its tokenizer) and answers with a fixed number of tokens, so the plan's
"as set" row must match the run exactly; the real tokenizer is checked against a real
model in ``test_answer_cost_integration.py``.
"""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from ragmeter.answers import answer_questions, grade_answers
from ragmeter.answers.cost import plan_answers, run_usage
from ragmeter.answers.reruns import Reruns
from ragmeter.errors import InputError
from ragmeter.inputs.config import load_config
from ragmeter.inputs.prices import Prices, check_prices
from ragmeter.llm.tokens import estimate_tokens
from ragmeter.stats.answer_plan import predicted_corrected_half_width

ANSWER_TOKENS = 7
GRADE_TOKENS = 11


class CountingModel:
    """A ``count:NAME`` backend: prompt tokens by the estimate, a fixed reply."""

    base_url = None
    max_concurrency = None
    calls = 0

    def __init__(self, model: str, **options) -> None:
        self.kind = "count"
        self.model = model

    def complete(self, request, timeout_s):
        from ragmeter.llm.client import Completion

        CountingModel.calls += 1
        prompt = request.message_dicts()[-1]["content"]
        if request.json_schema is not None:
            return Completion('{"grade": "correct", "reason": "ok"}', estimate_tokens(prompt),
                              GRADE_TOKENS)  # fmt: skip
        return Completion(f"answer at seed {request.seed}", estimate_tokens(prompt), ANSWER_TOKENS)

    def close(self) -> None:
        pass


@pytest.fixture
def counting(monkeypatch):
    from ragmeter.llm import backends

    monkeypatch.setitem(backends.KINDS, "count", CountingModel)
    monkeypatch.setattr(CountingModel, "calls", 0)


def run(results, limit: int, reruns: Reruns) -> None:
    answer_questions(results, "count:reader", limit=limit, reruns=reruns)
    grade_answers(results, ["count:judge"], limit=limit, reruns=reruns)


def test_nothing_is_called_and_the_counts_say_they_are_estimates(small_example_results):
    plan = plan_answers(small_example_results, reader="ollama:some-model")
    assert plan.reader.prompt_exact is False and "estimate" in plan.reader.prompt_how
    assert plan.reader.completion_how == "at most: max tokens 256"
    assert plan.noise.source == "assumed"
    as_set = plan.options[0]
    systems, questions = len(plan.systems), plan.questions
    assert (as_set.reader_calls, as_set.judge_calls) == (systems * questions,) * 2


@pytest.mark.parametrize("of", ["both", "reader", "judge"])
def test_the_plans_calls_and_tokens_are_what_the_run_then_uses(
    small_example_results_copy, counting, of
):
    results = small_example_results_copy
    reruns = Reruns(k=2, of=of, temperature=0.5, seed=1)
    run(results, 2, reruns)  # the pilot: its completions and noise feed the plan
    plan = plan_answers(
        results, reader="count:reader", judges=["count:judge"], limit=5, reruns=2, reruns_of=of
    )
    assert plan.reader.completion == ANSWER_TOKENS and plan.judge.completion == GRADE_TOKENS
    assert plan.noise.source == "pilot"
    CountingModel.calls = 0
    run(results, 5, reruns)
    used = run_usage(results)
    as_set = plan.options[0]
    assert (as_set.reader_calls, as_set.judge_calls) == (used["reader_calls"], used["judge_calls"])
    assert as_set.completion_tokens == used["completion_tokens"]
    # the judge's prompt for questions not answered at planning time holds a predicted answer
    assert as_set.prompt_tokens == pytest.approx(used["prompt_tokens"], rel=0.02)


def test_money_is_per_million_tokens_at_the_prices_given(small_example_results):
    prices = Prices(reader_prompt=1.0, reader_completion=2.0, judge_prompt=3.0,
                    judge_completion=4.0)  # fmt: skip
    plan = plan_answers(small_example_results, prices=prices)
    o = plan.options[0]
    expected = (
        o.reader_calls * (plan.reader.prompt * 1.0 + plan.reader.completion * 2.0)
        + o.judge_calls * (plan.judge.prompt * 3.0 + plan.judge.completion * 4.0)
    ) / 1e6
    assert o.money == pytest.approx(expected)
    assert plan_answers(small_example_results).options[0].money is None  # no [prices]


def test_an_unknown_price_key_names_the_key_and_the_nearest_one():
    with pytest.raises(InputError, match=r"unknown key 'reader_promt'.*reader_prompt"):
        check_prices({"reader_promt": 1.0})


def test_a_negative_price_is_refused():
    with pytest.raises(InputError, match="judge_prompt must be a price of 0 or more"):
        check_prices({"judge_prompt": -0.5})


def test_the_config_takes_prices_and_refuses_a_misspelt_key(tmp_path):
    good = tmp_path / "ragmeter.toml"
    good.write_text('[prices]\ncurrency = "EUR"\nreader_prompt = 0.15\njudge_completion = 2\n')
    assert load_config(good).extra["prices"]["reader_prompt"] == 0.15
    bad = tmp_path / "bad.toml"
    bad.write_text("[prices]\nreader_promt = 0.15\n")
    with pytest.raises(InputError, match=r"bad.toml.*reader_promt"):
        load_config(bad)


def cli(*args: str):
    from ragmeter.cli import app

    return CliRunner().invoke(app, [*args], env={"COLUMNS": "80"})


def test_the_terminal_plan_fits_80_columns(small_example_results, tmp_path):
    prices = tmp_path / "prices.toml"
    prices.write_text("[prices]\nreader_prompt = 0.15\nreader_completion = 0.6\n")
    out = cli("plan", str(small_example_results), "--answers", "--prices", str(prices))
    assert out.exit_code == 0, out.output
    assert "separate 5.0" in out.output and "USD" in out.output
    assert max(len(line) for line in out.output.splitlines()) <= 80


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--reruns", "-1"], "--reruns must be a whole number"),
        (["--reruns-of", "juge"], "--reruns-of must be one of"),
        (["--limit", "0"], "--limit must be a whole number of at least 1"),
    ],
)
def test_bad_plan_flags_are_one_line_and_exit_2(small_example_results, args, message):
    out = cli("plan", str(small_example_results), "--answers", *args)
    assert out.exit_code == 2
    assert message in out.output and len(out.output.strip().splitlines()) == 1


def test_a_misspelt_price_key_is_one_line_and_exit_2(small_example_results, tmp_path):
    prices = tmp_path / "prices.toml"
    prices.write_text("[prices]\nreader_promt = 0.15\n")
    out = cli("plan", str(small_example_results), "--answers", "--prices", str(prices))
    assert out.exit_code == 2
    assert "reader_promt" in out.output and len(out.output.strip().splitlines()) == 1


def test_hand_grades_are_planned_on_the_judges_measured_disagreement(
    small_example_results_copy, counting
):
    from ragmeter.answers.store import HandGrade, answers_dir, append_hand, load_answer_set

    results = small_example_results_copy
    run(results, 3, Reruns())
    assumed = plan_answers(results, half_width=0.2).hand
    assert assumed.source.startswith("assumed") and assumed.rectifier == 0.15
    folder = answers_dir(results)
    answers = list(load_answer_set(results).answers.values())
    for i, a in enumerate(answers):  # the judge said correct to all; a person to half
        append_hand(folder, HandGrade(a.system, a.question, "correct" if i % 2 else "wrong", a.sha))
    hand = plan_answers(results, half_width=0.2).hand
    assert hand.source == f"measured on {len(answers)} answers graded by hand and by count:judge"
    assert hand.rectifier == pytest.approx(0.25)  # var of [-1, 0] x 3 (population)
    assert hand.table == [[0.0, 0.5], [0.0, 0.5]]  # [hand][judge]
    # 3 questions a system: even all 3 graded by hand (t on 2 degrees of freedom) are
    # predicted wider than +/- 20 points, as grade would print them
    every = predicted_corrected_half_width(hand.table, 0.25, hand.questions, hand.questions)
    assert every > 0.2 and hand.grades is None and hand.half_width is None


def test_answer_dry_run_prints_the_plan_and_calls_nothing(small_example_results, counting):
    out = cli("answer", str(small_example_results), "--reader", "count:reader", "--dry-run",
              "--reruns", "2", "--reruns-of", "judge")  # fmt: skip
    assert out.exit_code == 0, out.output
    assert CountingModel.calls == 0
    assert "nothing was called" in out.output and "count:reader" in out.output
    assert not (small_example_results / "answers").exists()

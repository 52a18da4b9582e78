"""The spend planned before any call against what a real model then used: gemma-3 270M
(the GGUF of the test extra) answers and grades a pilot, ``plan --answers`` plans the
whole run, the run is made, and the plan's calls and tokens are checked against the
``usage`` each reply recorded. Skipped, with the reason, when llama-cpp-python or the
model package is missing.
"""

from __future__ import annotations

import json

import pytest
from conftest import save_example
from llm_fixtures import gguf_model_path, llama_cpp_missing
from typer.testing import CliRunner

from ragmeter.answers import answer_questions, grade_answers
from ragmeter.answers.cost import plan_answers, run_usage
from ragmeter.llm import make_backend
from ragmeter.llm.tokens import token_counter

QUESTIONS = 6
PILOT = 3
OPTIONS = {"n_ctx": 2048, "n_threads": 2, "chat_format": "gemma"}
MAX_TOKENS = 24

pytestmark = pytest.mark.skipif(llama_cpp_missing() is not None, reason=str(llama_cpp_missing()))


@pytest.fixture(scope="module")
def model():
    backend = make_backend(f"gguf:{gguf_model_path()}", **OPTIONS)
    yield backend
    backend.close()


def test_the_tokenizer_counts_a_prompt_as_the_model_then_reports_it(model):
    from ragmeter.llm import ChatRequest

    counter = token_counter(f"gguf:{gguf_model_path()}", {"chat_format": "gemma"})
    assert counter.exact and "gemma chat format" in counter.how
    prompt = "Answer in one word: what colour is the sky on a clear day?"
    used = model.complete(ChatRequest(prompt=prompt, max_tokens=4), 60.0)
    assert counter.count(prompt) == used.tokens_in


def test_the_plan_for_the_shipped_example_is_within_10_percent_of_the_run(model, tmp_path):
    results = save_example(
        tmp_path / "results",
        QUESTIONS,
        strategies=("sentence-60",),
        custom_strategies=({"name": "sentence-60", "kind": "sentence", "size": 60},),
        ks=(1, 3, 5),
    )
    spec = f"gguf:{gguf_model_path()}"
    answer_questions(results, model, limit=PILOT, max_tokens=MAX_TOKENS)
    grade_answers(results, [model], limit=PILOT, max_tokens=MAX_TOKENS)
    out = CliRunner().invoke(
        __import__("ragmeter.cli", fromlist=["app"]).app,
        ["plan", str(results), "--answers", "--reader", spec, "--judge", spec,
         "--option", "chat_format=gemma", "--format", "json"],
    )  # fmt: skip
    assert out.exit_code == 0, out.output
    planned = json.loads(out.output)
    assert planned["reader"]["prompt_exact"] and planned["judge"]["prompt_exact"]
    library = plan_answers(results, reader=spec, judges=[spec], options={"chat_format": "gemma"})
    as_set = planned["options"][0]
    assert as_set["prompt_tokens"] == library.options[0].prompt_tokens  # one computation
    answer_questions(results, model, max_tokens=MAX_TOKENS)
    grade_answers(results, [model], max_tokens=MAX_TOKENS)
    used = run_usage(results)
    assert (as_set["reader_calls"], as_set["judge_calls"]) == (
        used["reader_calls"],
        used["judge_calls"],
    )
    for what in ("prompt_tokens", "completion_tokens"):
        assert as_set[what] == pytest.approx(used[what], rel=0.10), what

"""The question audit at its boundaries, and its model checks with a real model.

* The copy rule flags a question whose copy ratio is *at least* the threshold:
  a ratio exactly at it is flagged, one just under it is not.
* The model checks run against the packaged gemma-3 270M GGUF model, in
  process. The model is tiny and its verdicts are not worth much; what the
  plumbing guarantees is checked: every reply parses (grammar-constrained
  decoding), every question gets each verdict or an explicit ``unscored``, and
  a second audit is answered from the reply cache without calling the model.
  Skipped with the reason (failed in CI) when llama-cpp-python or the model
  package is missing.
"""

from __future__ import annotations

import pytest
from llm_fixtures import gguf_model_path, llama_cpp_missing

from ragmeter.inputs.corpus import Document
from ragmeter.inputs.testset import AnswerSpan, Question
from ragmeter.questions import audit_questions, summarize_audit
from ragmeter.questions.audit import copy_ratio

PASSAGE = "A bloom filter sets bits with several hash functions and never forgets a key."
DOC = Document("bloom.md", PASSAGE)


def question(qid: str, text: str) -> Question:
    return Question(qid, text, (AnswerSpan(DOC.id, 0, len(PASSAGE), PASSAGE),))


def copies(text: str, **thresholds) -> bool:
    [result] = audit_questions([question("q", text)], [DOC], **thresholds)
    return "copies" in result.kinds


# --------------------------------------------------------------------------- copy threshold


def test_a_copy_ratio_exactly_at_the_threshold_is_flagged():
    # content words: bloom, filter, hash, tree, root -> 3 of 5 in the passage
    text = "Bloom filter hash tree root?"
    assert copy_ratio(text, PASSAGE) == 0.6
    assert copies(text)  # the default threshold is 0.6
    assert copies(text, copy_threshold=0.6)
    assert not copies(text, copy_threshold=0.61)


def test_a_copy_ratio_just_under_the_threshold_is_not_flagged():
    # 2 of 5: 0.4
    text = "Bloom filter tree root branch?"
    assert copy_ratio(text, PASSAGE) == 0.4
    assert not copies(text)
    assert copies(text, copy_threshold=0.4)
    assert not copies(text, copy_threshold=0.41)


def test_the_flag_names_the_ratio_and_the_threshold():
    [result] = audit_questions([question("q", "Bloom filter hash tree root?")], [DOC])
    [flag] = [f for f in result.flags if f.kind == "copies"]
    assert "60%" in flag.reason and "threshold 60%" in flag.reason
    assert result.copy_ratio == 0.6


# --------------------------------------------------------------------------- real model

QUESTIONS = [
    question("q1", "What does a bloom filter use to set its bits?"),
    question("q2", "Does a bloom filter forget keys?"),
    question("q3", "Why does this structure need it?"),
]
VERDICTS = {"misstated": {"answers", "contradicts", "does not answer"}, "context": {"yes", "no"}}
GGUF_OPTIONS = {"n_ctx": 2048, "n_threads": 2, "chat_format": "gemma"}


class Counting:
    """A backend that forwards to another one and counts the model calls."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.calls = 0

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def complete(self, request, timeout_s):
        self.calls += 1
        return self.inner.complete(request, timeout_s)


@pytest.fixture(scope="module")
def gguf_backend():
    if llama_cpp_missing():
        pytest.skip(llama_cpp_missing())
    from ragmeter.llm import make_backend

    backend = make_backend(f"gguf:{gguf_model_path()}", **GGUF_OPTIONS)
    yield backend
    backend.close()


def test_model_checks_with_the_real_model_parse_and_cache(gguf_backend, tmp_path):
    cache = tmp_path / "audit-cache.sqlite"
    first = Counting(gguf_backend)
    results = audit_questions(QUESTIONS, [DOC], llm=first, cache_path=cache, max_tokens=24)
    assert first.calls == 2 * len(QUESTIONS)  # two checks per question, one call each
    assert [r.id for r in results] == ["q1", "q2", "q3"]
    for r in results:
        # every question has both verdicts: a valid one, or an explicit "unscored"
        assert set(r.checks) == {"misstated", "context"}, r.checks
        for check, verdict in r.checks.items():
            assert verdict in VERDICTS[check] | {"unscored"}, (r.id, check, verdict)
        unscored = [f for f in r.flags if f.kind == "unscored"]
        assert len(unscored) == list(r.checks.values()).count("unscored")
        # the model's verdicts become flags exactly when they say so
        misstated = r.checks["misstated"] in {"contradicts", "does not answer"}
        assert ("misstated" in r.kinds) == misstated
        model_context = [f for f in r.flags if f.kind == "context-dependent" and f.source == "llm"]
        assert bool(model_context) == (r.checks["context"] == "no")
    # grammar-constrained decoding: every reply parses, none is unscored
    assert all(v != "unscored" for r in results for v in r.checks.values())
    # the rule-based check flags q3 whatever the model says ("this structure", "it")
    assert any(f.source != "llm" for f in results[2].flags if f.kind == "context-dependent")

    again = Counting(gguf_backend)
    rerun = audit_questions(QUESTIONS, [DOC], llm=again, cache_path=cache, max_tokens=24)
    assert again.calls == 0  # answered from the cache
    assert [r.checks for r in rerun] == [r.checks for r in results]
    assert summarize_audit(rerun).counts == summarize_audit(results).counts

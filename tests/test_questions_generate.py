"""Question generation: passages, requests, skipped replies, cache and resume.

Most tests use a scripted in-process backend; the last ones run the small
gemma-3 270M GGUF model (skipped, with the reason, when llama-cpp-python or the
model package is missing).
"""

from __future__ import annotations

import json
import time
from collections import Counter

import pytest
from conftest import EXAMPLE
from llm_fixtures import gguf_model_path, llama_cpp_missing

from ragmeter.errors import InputError
from ragmeter.inputs.corpus import load_corpus
from ragmeter.inputs.testset import load_testset
from ragmeter.llm import Completion, RunStats, make_backend, model_label
from ragmeter.questions import (
    generate_file,
    generate_questions,
    passages_from_testset,
    sample_passages,
)
from ragmeter.questions.generate import QUESTION_SCHEMA, subset


@pytest.fixture(scope="module")
def example():
    docs = load_corpus(EXAMPLE / "posts")
    return docs, load_testset(EXAMPLE / "questions.jsonl", docs)


class ScriptedBackend:
    """Answers from a function of the prompt; records every prompt it is sent."""

    kind = "scripted"
    model = "m"
    base_url = None
    max_concurrency = 1

    def __init__(self, answer=None, delay_s: float = 0.0):
        self.answer = answer or (lambda prompt: '{"question": "Which structure is described?"}')
        self.delay_s = delay_s
        self.prompts: list[str] = []

    def complete(self, request, timeout_s):
        self.prompts.append(request.messages[-1].content)
        time.sleep(self.delay_s)
        return Completion(self.answer(request.messages[-1].content), 10, 5)

    def close(self):
        pass


def test_passages_from_a_test_set_keep_every_answer_span(example):
    _, testset = example
    passages = passages_from_testset(testset)
    assert len(passages) == 135
    multi = next(p for p in passages if len(p.spans) > 1)
    assert multi.text == "\n".join(s.text for s in multi.spans) and multi.origin == multi.id


def test_sampled_passages_follow_the_seeded_rule(example):
    docs, _ = example
    first = sample_passages(docs, 12, seed=3)
    assert first == sample_passages(docs, 12, seed=3)
    assert first != sample_passages(docs, 12, seed=4)
    by_id = {d.id: d for d in docs}
    for p in first:
        [span] = p.spans
        assert by_id[span.doc].text[span.start : span.end] == span.text
        assert "\n\n" not in span.text and len(span.text.split()) >= 12
        assert p.rule == {"rule": "sentence-window", "seed": 3, "window": 2, "min_words": 12}
    assert len({(p.spans[0].doc, p.spans[0].start) for p in first}) == 12  # no repeats
    assert [p.id for p in first[:2]] == ["g001", "g002"]
    with pytest.raises(InputError, match="ask for at most"):
        sample_passages(docs[:1], 10_000)


def test_seeded_subset_keeps_order_and_size(example):
    _, testset = example
    passages = passages_from_testset(testset)
    chosen = subset(passages, 40, seed=0)
    assert len(chosen) == 40 and chosen == subset(passages, 40, seed=0)
    order = [passages.index(p) for p in chosen]
    assert order == sorted(order)


def test_generated_questions_carry_source_model_and_the_same_span(example, tmp_path):
    _, testset = example
    passages = passages_from_testset(testset)[:4]
    backend = ScriptedBackend(lambda p: '{"question": "Who described it in 1970?"}')
    result = generate_questions(passages, backend, tmp_path / "c.sqlite", seed=7)
    assert [q.id for q in result.testset.questions] == [f"{p.id}-gen" for p in passages]
    for q, p in zip(result.testset.questions, passages, strict=True):
        assert q.answers == p.spans and q.text == "Who described it in 1970?"
        assert q.meta == {
            "source": "generated",
            "model": "scripted:m",
            "seed": 7,
            "passage_of": p.id,
        }
    # the request carries the schema, the seed and the passage
    assert all(p.text in prompt for p, prompt in zip(passages, backend.prompts, strict=True))
    assert result.calls == 4 and result.cache_hits == 0


def test_unreadable_replies_are_skipped_with_reasons(example, tmp_path):
    _, testset = example
    passages = passages_from_testset(testset)[:5]
    replies = iter(
        [
            '{"question": "What year was the Bloom filter described?"}',
            "Sure! Here is a question about Bloom filters.",  # no JSON
            '{"question": "   "}',  # blank
            '{"question": "..."}',  # no words
            '{"answer": "1970"}',  # wrong key
        ]
    )
    backend = ScriptedBackend(lambda p: next(replies))
    result = generate_questions(passages, backend, None)
    assert [q.id for q in result.testset.questions] == ["q001-gen"]
    assert result.testset.skipped == 4
    reasons = [s.reason.split(":")[0] for s in result.skipped]
    assert reasons == ["unparseable", "empty", "no words", "unparseable"]
    assert result.skipped[0].raw.startswith("Sure!")
    assert result.skip_reasons() == {"unparseable": 2, "empty": 1, "no words": 1}


def test_reply_cut_off_at_max_tokens_is_skipped_not_repaired(example, tmp_path):
    _, testset = example
    passages = passages_from_testset(testset)[:2]
    texts = iter(['{"question": "What is the cost of a node with a node with a node', '{"q'])

    class CutOff(ScriptedBackend):
        def complete(self, request, timeout_s):
            return Completion(next(texts), 50, request.max_tokens)

    result = generate_questions(passages, CutOff(), None, max_tokens=16)
    assert len(result.testset) == 0
    assert [s.reason.split(":")[0] for s in result.skipped] == ["truncated", "unparseable"]
    assert "node with a node" in result.skipped[0].raw


def test_rerun_costs_no_calls_and_interrupted_run_resumes(example, tmp_path):
    _, testset = example
    passages = passages_from_testset(testset)[:6]
    # each call takes a while, as a model's would, so the run stops with calls left to make
    backend = ScriptedBackend(lambda p: json.dumps({"question": f"Q about {p[-40:]}?"}), 0.1)

    def stop_after_2(done, total, reply):
        if done == 2:
            raise KeyboardInterrupt

    cache = tmp_path / "c.sqlite"
    with pytest.raises(KeyboardInterrupt):
        generate_questions(passages, backend, cache, progress=stop_after_2)
    asked = len(backend.prompts)
    assert 2 <= asked < 6  # a call already in flight when the run stopped finishes and is kept
    resumed = generate_questions(passages, backend, cache)
    assert (resumed.calls, resumed.cache_hits) == (6 - asked, asked)
    assert len(resumed.testset) == 6
    assert sorted(Counter(backend.prompts).values()) == [1] * 6  # each passage asked once
    again = generate_questions(passages, backend, cache)
    assert (again.calls, again.cache_hits) == (0, 6)
    assert [q.text for q in again.testset.questions] == [q.text for q in resumed.testset.questions]


def test_generate_file_writes_the_test_set_and_the_skipped(tmp_path, monkeypatch):
    answers = iter(['{"question": "How big is it?"}', "no json here"] * 3)
    backend = ScriptedBackend(lambda p: next(answers))
    import ragmeter.llm.settings

    monkeypatch.setattr(ragmeter.llm.settings, "make_backend", lambda spec, **kw: backend)
    out = tmp_path / "gen.jsonl"
    result = generate_file(EXAMPLE / "posts", out, "ollama:fake", sample=4, seed=1)
    docs = load_corpus(EXAMPLE / "posts")
    saved = load_testset(out, docs)
    assert [q.id for q in saved.questions] == ["g001", "g003"]
    assert saved.questions[0].meta["model"] == "ollama:fake"
    assert saved.questions[0].meta["passage_rule"]["seed"] == 1
    skipped = [
        json.loads(line) for line in (tmp_path / "gen.skipped.jsonl").read_text().splitlines()
    ]
    assert [s["passage"] for s in skipped] == ["g002", "g004"] and result.testset.skipped == 2
    assert (tmp_path / "gen.llm-cache.sqlite").is_file()
    with pytest.raises(InputError, match="either a test set"):
        generate_file(EXAMPLE / "posts", out, "ollama:fake")


def test_parse_options():
    from ragmeter.llm import parse_options

    assert parse_options(["n_ctx=2048", "chat_format=gemma", "verbose=false"]) == {
        "n_ctx": 2048,
        "chat_format": "gemma",
        "verbose": False,
    }
    with pytest.raises(InputError, match="KEY=VALUE"):
        parse_options(["n_ctx"])


def test_model_label_drops_the_local_path():
    assert model_label("gguf:/models/x/gemma.gguf") == "gguf:gemma.gguf"
    assert model_label("ollama:llama3.2:1b") == "ollama:llama3.2:1b"


# --------------------------------------------------------------------------- the real model

needs_llama = pytest.mark.skipif(llama_cpp_missing() is not None, reason=str(llama_cpp_missing()))


class Counting:
    """Wraps a backend and counts the prompts it is sent."""

    def __init__(self, inner):
        self.inner = inner
        self.kind, self.model = inner.kind, inner.model
        self.cache_model = inner.cache_model
        self.base_url, self.max_concurrency = None, 1
        self.prompts: list[str] = []

    def complete(self, request, timeout_s):
        self.prompts.append(request.messages[-1].content)
        return self.inner.complete(request, timeout_s)

    def close(self):
        pass


@needs_llama
def test_gguf_generates_one_question_per_passage_cached_and_resumable(example, tmp_path):
    _, testset = example
    passages = subset(passages_from_testset(testset), 5, seed=0)
    model = make_backend(f"gguf:{gguf_model_path()}", n_ctx=2048, n_threads=1, chat_format="gemma")
    backend = Counting(model)
    cache = tmp_path / "gen.sqlite"
    stats = RunStats()

    def stop_after_2(done, total, reply):
        if done == 2:
            raise KeyboardInterrupt

    try:
        with pytest.raises(KeyboardInterrupt):
            generate_questions(
                passages, backend, cache, max_tokens=96, progress=stop_after_2, stats=stats
            )
        asked = stats.calls
        assert 2 <= asked < 5  # the call in flight when the run stopped finishes and is kept
        first = generate_questions(passages, backend, cache, max_tokens=96)
        again = generate_questions(passages, backend, cache, max_tokens=96)
    finally:
        model.close()
    assert (first.calls, first.cache_hits) == (5 - asked, asked)
    assert sorted(Counter(backend.prompts).values()) == [1] * 5  # each passage asked once
    assert (again.calls, again.cache_hits) == (0, 5)
    # every reply was grammar-constrained JSON with a question string
    assert first.skipped == [] and len(first.testset) == 5, first.skipped
    for q, p in zip(first.testset.questions, passages, strict=True):
        assert q.answers == p.spans and q.text.strip() and q.meta["model"].startswith("gguf:")
    assert QUESTION_SCHEMA["required"] == ["question"]
    print("\n" + "\n".join(f"{q.id}: {q.text}" for q in first.testset.questions))


def test_the_skipped_list_is_removed_only_when_ragmeter_wrote_it(tmp_path, monkeypatch):
    import ragmeter.llm.settings

    replies = ['{"question": "How big is it?"}', "no json here"]
    backend = ScriptedBackend(lambda p: replies[len(backend.prompts) % 2])
    monkeypatch.setattr(ragmeter.llm.settings, "make_backend", lambda spec, **kw: backend)
    out, skipped = tmp_path / "gen.jsonl", tmp_path / "gen.skipped.jsonl"
    posts = EXAMPLE / "posts"
    generate_file(posts, out, "ollama:fake", sample=4, seed=1, cache_path=tmp_path / "1")
    assert skipped.is_file()
    replies[1] = replies[0]  # every passage gets a question now
    generate_file(posts, out, "ollama:fake", sample=4, seed=2, cache_path=tmp_path / "2")
    assert not skipped.exists()  # ragmeter's own list, unchanged: removed

    # regression: a file of the user's at that name, made while the model ran, was deleted
    def slow(prompt):
        if not skipped.exists():
            skipped.write_text("my notes\n")
        return replies[0]

    backend = ScriptedBackend(slow)
    monkeypatch.setattr(ragmeter.llm.settings, "make_backend", lambda spec, **kw: backend)
    generate_file(posts, out, "ollama:fake", sample=4, seed=3, cache_path=tmp_path / "3")
    assert skipped.read_text() == "my notes\n"

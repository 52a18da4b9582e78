"""``ragmeter.questions.generate``: sampled passages are windows of exactly ``window``
sentences, one passage and exactly every window may be asked for, requests default to
temperature 0 and seed 1, and a passage limit below one is refused."""

from __future__ import annotations

import re

import pytest
from conftest import EXAMPLE

from ragmeter.chunking.strategies import sentence_spans
from ragmeter.errors import InputError
from ragmeter.inputs.corpus import load_corpus
from ragmeter.inputs.testset import load_testset
from ragmeter.llm import Completion, RunStats
from ragmeter.questions.generate import (
    generate_file,
    generate_questions,
    generation_requests,
    sample_passages,
    subset,
)


@pytest.fixture(scope="module")
def docs():
    return load_corpus(EXAMPLE / "posts")


def test_a_sampled_passage_is_window_consecutive_sentences(docs):
    by_id = {d.id: d for d in docs}
    for window in (1, 2, 3):
        for p in sample_passages(docs, 8, seed=2, window=window):
            [span] = p.spans
            sents = sentence_spans(by_id[span.doc].text, "syntok")  # the recorded rule's
            first = [s for s, _ in sents].index(span.start)
            assert sents[first + window - 1][1] == span.end, (window, p.id)


def test_one_passage_or_every_window_may_be_asked_for(docs):
    one = docs[:1]
    [single] = sample_passages(one, 1)
    assert single.id == "g001"
    with pytest.raises(InputError, match="ask for at most") as info:
        sample_passages(one, 10_000)
    total = int(re.search(r"the corpus has (\d+) windows", str(info.value)).group(1))
    every = sample_passages(one, total)
    assert len({p.spans[0].start for p in every}) == total
    with pytest.raises(InputError, match="give a positive number of passages"):
        sample_passages(one, 0)


class _Backend:
    kind = "scripted"
    model = "m"
    base_url = None
    max_concurrency = 1

    def __init__(self):
        self.requests: list = []

    def complete(self, request, timeout_s):
        self.requests.append(request)
        return Completion('{"question": "Which structure is described?"}', 10, 5)

    def close(self):
        pass


def test_requests_default_to_temperature_0_and_seed_1(docs):
    passages = sample_passages(docs, 2)
    assert [(r.temperature, r.seed) for r in generation_requests(passages)] == [(0.0, 1)] * 2
    backend = _Backend()
    result = generate_questions(passages, backend)
    assert [(r.temperature, r.seed) for r in backend.requests] == [(0.0, 1)] * 2
    assert all(q.meta["seed"] == 1 for q in result.testset.questions)


def test_a_passage_limit_below_one_is_refused(docs):
    passages = sample_passages(docs, 3)
    for bad in (0, -1):
        with pytest.raises(InputError, match="the passage limit must be positive"):
            subset(passages, bad, seed=1)
    assert subset(passages, 1, seed=1)[0] in passages


def test_calls_count_this_run_only_when_the_stats_run_on(docs):
    passages = sample_passages(docs, 2)
    stats = RunStats()
    first = generate_questions(passages, _Backend(), stats=stats)
    second = generate_questions(sample_passages(docs, 3, seed=5), _Backend(), stats=stats)
    assert (first.calls, second.calls) == (2, 3) and stats.calls == 5


def test_generate_file_asks_about_a_test_sets_answer_passages(tmp_path):
    out = tmp_path / "gen.jsonl"
    result = generate_file(
        EXAMPLE / "posts", out, _Backend(), testset_path=EXAMPLE / "questions.jsonl", limit=3
    )
    docs = load_corpus(EXAMPLE / "posts")
    reader = {q.id: q for q in load_testset(EXAMPLE / "questions.jsonl", docs).questions}
    saved = load_testset(out, docs).questions
    assert len(saved) == 3 and [q.id for q in saved] == [q.id for q in result.testset.questions]
    for q in saved:
        origin = q.meta["passage_of"]
        assert q.id == f"{origin}-gen" and q.answers == reader[origin].answers


def test_generate_file_writes_only_jsonl(tmp_path):
    with pytest.raises(InputError, match=r"end --out with \.jsonl"):
        generate_file(EXAMPLE / "posts", tmp_path / "gen.csv", _Backend(), sample=2)
    assert list(tmp_path.iterdir()) == []


def test_a_generation_built_without_counts_made_no_model_calls():
    # a Generation put together from saved questions (not from a run) cost nothing
    from ragmeter.inputs.testset import TestSet
    from ragmeter.questions.generate import Generation

    made = Generation(testset=TestSet([]), skipped=[], model="m")
    assert (made.calls, made.cache_hits) == (0, 0)

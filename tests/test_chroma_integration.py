"""Every strategy over Chroma's five corpora and 472 questions (790 answer spans)."""

import numpy as np
import pytest

from ragmeter.inputs.config import DEFAULT_STRATEGIES, Config
from ragmeter.inputs.corpus import load_corpus
from ragmeter.inputs.testset import load_testset
from ragmeter.runs.pipeline import run_search

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def chroma_run(shared_data):
    chroma = shared_data / "chroma"
    docs = load_corpus(chroma / "corpora")
    testset = load_testset(chroma / "questions_df.csv", docs)
    # Five documents: k stops at 5 so that whole documents stay a valid strategy.
    cfg = Config(strategies=DEFAULT_STRATEGIES, ks=(1, 3, 5), rounds=200)
    return run_search(cfg, docs, testset)


def test_every_span_resolves(chroma_run):
    spans = [a for q in chroma_run.questions for a in q.answers]
    assert len(chroma_run.questions) == 472 and len(spans) == 790
    texts = {d.id: d.text for d in chroma_run.documents}
    assert all(texts[a.doc][a.start : a.end] == a.text for a in spans)


def test_every_metric_in_range_and_coverage_monotone(chroma_run):
    assert [s.name for s in chroma_run.systems] == list(DEFAULT_STRATEGIES)
    for system in chroma_run.systems:
        for name, values in system.scores.items():
            assert values.shape == (472,)
            if not name.startswith("words"):
                assert np.all((values >= 0) & (values <= 1)), (system.name, name)
        cov = np.vstack([system.scores[f"coverage@{k}"] for k in (1, 3, 5)])
        assert np.all(np.diff(cov, axis=0) >= 0), system.name
        recall = np.vstack([system.scores[f"recall@{k}"] for k in (1, 3, 5)])
        assert np.all(np.diff(recall, axis=0) >= 0), system.name


def test_whole_documents_find_every_answer_in_five(chroma_run):
    whole = chroma_run.systems[0]
    # Five documents, five results: every answer is in front of the model.
    assert whole.scores["recall@5"].mean() == 1.0
    # One answering document per question: precision@5 is exactly 0.2.
    assert np.all(whole.scores["precision@5"] == 0.2)


def test_items_are_real_chunks_with_offsets(chroma_run):
    texts = {d.id: d.text for d in chroma_run.documents}
    for system in chroma_run.systems:
        for row in system.items[:50]:
            assert len(row) == 10 or system.name == "whole"
            for item in row:
                assert 0 <= item.start < item.end <= len(texts[item.doc])

"""``ragmeter.questions.audit``: the restatement threshold at its edge, the summary's
defaults (10,000 rounds, the three thresholds), and ``audit_files`` passing every
setting through (thresholds up to 1, the duplicate threshold, the progress callback)."""

from __future__ import annotations

import json

import pytest

from ragmeter.corpus import Document
from ragmeter.errors import InputError
from ragmeter.llm import Completion
from ragmeter.questions.audit import audit_files, audit_questions, summarize_audit
from ragmeter.testset import AnswerSpan, Question

PASSAGE = (
    "A bloom filter sets bits with several hash functions and never forgets a key. "
    "It answers membership queries quickly."
)
DOC = Document("bloom.md", PASSAGE)


def _question(qid: str, text: str) -> Question:
    return Question(qid, text, (AnswerSpan(DOC.id, 0, len(PASSAGE), PASSAGE),))


def test_a_restatement_exactly_at_the_threshold_is_flagged():
    # {bloom, filter, set, bit, hash, function, key, tree, root, branch}: 7 of the 10 are
    # in the first sentence, 0.7, the default threshold ("at least")
    text = "Does a bloom filter set bits with hash functions for every key, tree, root and branch?"
    [at] = audit_questions([_question("q", text)], [DOC])
    assert "yes-no-restatement" in at.kinds
    [above] = audit_questions([_question("q", text)], [DOC], restate_threshold=0.71)
    assert "yes-no-restatement" not in above.kinds


def test_the_summary_defaults_to_10000_rounds_and_the_default_thresholds():
    flagged = audit_questions([_question("q", "Does a bloom filter forget keys?")], [DOC])
    saved = summarize_audit(flagged).to_dict()
    assert saved["copy_ratio"]["rounds"] == 10_000
    assert saved["thresholds"] == {"copy": 0.6, "restate": 0.7, "duplicate": 0.8}
    given = {"copy": 0.5, "restate": 0.9, "duplicate": 0.95}
    assert summarize_audit(flagged, rounds=200, thresholds=given).thresholds == given


def _files(tmp_path, *texts: str):
    corpus = tmp_path / "posts"
    corpus.mkdir()
    (corpus / "bloom.md").write_text(PASSAGE, encoding="utf-8")
    span = {"doc": "bloom.md", "start": 0, "end": len(PASSAGE), "text": PASSAGE}
    testset = tmp_path / "q.jsonl"
    testset.write_text(
        "".join(
            json.dumps({"id": f"q{i}", "question": t, "answers": [span]}) + "\n"
            for i, t in enumerate(texts, 1)
        ),
        encoding="utf-8",
    )
    return testset, corpus


def test_audit_files_takes_thresholds_up_to_one_and_passes_them_on(tmp_path):
    # {bloom, filter, forget, key} and {bloom, filter, forget, key, quickly}: Jaccard 0.8
    testset, corpus = _files(
        tmp_path, "Does a bloom filter forget keys?", "Does a bloom filter forget keys quickly?"
    )
    done = audit_files(testset, corpus, rounds=200)
    assert done.flagged[1].labels[-1] == "near-duplicate of q1"
    done = audit_files(
        testset,
        corpus,
        rounds=200,
        copy_threshold=1.0,
        restate_threshold=1.0,
        duplicate_threshold=0.81,
    )
    assert all("near-duplicate" not in f.kinds for f in done.flagged)
    assert done.summary.thresholds == {"copy": 1.0, "restate": 1.0, "duplicate": 0.81}
    saved = json.loads((tmp_path / "audit-summary.json").read_text())
    assert saved["thresholds"]["duplicate"] == 0.81
    for bad in (0, 1.01):
        with pytest.raises(InputError, match=r"the copy threshold must be in \(0, 1\]"):
            audit_files(testset, corpus, copy_threshold=bad)


class _Backend:
    kind = "scripted"
    model = "m"
    base_url = None
    max_concurrency = 1

    def complete(self, request, timeout_s):
        prompt = request.messages[-1].content
        answer = (
            '{"verdict": "answers"}' if "<<<passage " in prompt else '{"understandable": "yes"}'
        )
        return Completion(answer)

    def close(self):
        pass


def test_audit_files_reports_the_model_calls_to_the_progress_callback(tmp_path):
    testset, corpus = _files(tmp_path, "Does a bloom filter forget keys?")
    seen: list[tuple[int, int]] = []
    done = audit_files(
        testset,
        corpus,
        llm=_Backend(),
        rounds=200,
        progress=lambda done, total, reply: seen.append((done, total)),
    )
    assert done.flagged[0].checks == {"misstated": "answers", "context": "yes"}
    assert seen[-1] == (2, 2)  # one question, two checks

"""``ragmeter.questions.flagged``: each side is bootstrapped with the run's own seed and
confidence, an empty side is None, labels are counted most frequent first (ties by
name), and a results directory without an audit has none."""

from __future__ import annotations

import json

import pytest
from conftest import save_example

from ragmeter import stats
from ragmeter.questions.flagged import results_audit
from ragmeter.runs.results import Results


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    path = tmp_path_factory.mktemp("flagged") / "results"
    return Results(save_example(path, 30, strategies=("sentence",), seed=7, confidence=0.9))


def _audit(res: Results, labels_of) -> None:
    (res.path / "audit").mkdir(exist_ok=True)
    (res.path / "audit" / "flags.jsonl").write_text(
        "".join(
            json.dumps({"question": q, "flags": labels_of(i)}) + "\n"
            for i, q in enumerate(res.question_ids)
        )
    )


def test_each_side_uses_the_runs_seed_and_confidence_and_labels_count_by_frequency(results):
    # odd-wording on every 2nd question, misstated and context-dependent on every 5th
    def labels(i):
        return (["odd-wording"] if i % 2 == 0 else []) + (
            ["misstated", "context-dependent"] if i % 5 == 0 else []
        )

    _audit(results, labels)
    audit = results_audit(results.path)
    # most frequent first, equal counts by name
    assert list(audit.counts.items()) == [
        ("odd-wording", 15),
        ("context-dependent", 6),
        ("misstated", 6),
    ]
    [split] = audit.systems
    scores = results.scores("sentence", audit.metric)
    flagged = [i % 2 == 0 or i % 5 == 0 for i in range(30)]
    clean = [not f for f in flagged]
    assert split.clean == stats.bootstrap(scores[clean], rounds=200, seed=7, confidence=0.9)
    assert split.flagged == stats.bootstrap(scores[flagged], rounds=200, seed=7, confidence=0.9)


def test_a_side_without_questions_is_none_and_no_audit_file_is_no_audit(results):
    (results.path / "audit" / "flags.jsonl").unlink(missing_ok=True)
    assert results_audit(results.path) is None
    _audit(results, lambda i: [])  # every question read and passed
    audit = results_audit(results)
    assert audit.flagged == [] and audit.counts == {}
    [split] = audit.systems
    assert split.flagged is None and split.clean.n == 30

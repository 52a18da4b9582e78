"""``ragmeter check`` decides on the interval's lower end, and says what the
questions can support when a check fails."""

from __future__ import annotations

import json

import numpy as np
from test_check import IDS, _results

from ragmeter.history.gate import check_noninferior

N = len(IDS)


def _pair(tmp_path, drop: int):
    base = np.full(N, 0.5)
    cand = base.copy()
    cand[:drop] = 0.25  # a graded score: 0.25 points lower on `drop` questions
    b = _results(tmp_path / "b", {"s": base.tolist()}, IDS)
    c = _results(tmp_path / "c", {"s": cand.tolist()}, IDS)
    return b, c


def test_the_gate_reads_the_lower_end_not_the_mean(tmp_path):
    b, c = _pair(tmp_path, 5)
    at = check_noninferior(b, c, "s", "recall@5", margin=0.01)
    d = at.difference
    # the mean (-0.6 points) is inside the margin, the lower end (-1.2) is not
    assert -1.0 < d.mean * 100 < 0 and d.low * 100 < -1.0
    assert not at.passed and at.line.startswith("FAIL")
    assert "lower end <= -1 (margin)" in at.line
    assert (at.wins, at.ties, at.losses) == (0, N - 5, 5)
    assert abs(at.baseline - 0.5) < 1e-12 and abs(at.candidate - (0.5 - 5 * 0.25 / N)) < 1e-12
    wide = check_noninferior(b, c, "s", "recall@5", margin=0.015)
    assert wide.passed and wide.line.startswith("PASS") and "lower end > -1.5" in wide.line


def test_an_unchanged_graded_candidate_supports_any_margin_above_zero(tmp_path):
    from ragmeter.comparison.systems import ComparisonPlan
    from ragmeter.history.gate import supported_margin

    # an unchanged candidate differs by exactly 0 on every question: interval [0, 0]
    y = np.full(N, 0.5)
    plan = ComparisonPlan("recall@5", 1, 1000, 0.95, pairs=(("candidate", "baseline"),))
    assert supported_margin(y, y.copy(), plan) == (0.0, "unchanged")
    b, _ = _pair(tmp_path, 5)
    at_zero = check_noninferior(b, b, "s", "recall@5", margin=0.0)
    assert at_zero.passed and at_zero.identical  # and the gate passes it at a margin of 0
    assert '"supported_margin": null' in json.dumps(at_zero.to_dict())


def test_a_fail_with_an_observed_loss_names_it_and_the_smallest_margin_that_passes(tmp_path):
    # 0/1 scores on 200 questions: the baseline finds 100, the candidate loses 40 of them
    n = 200
    ids = [f"q{i}" for i in range(n)]
    y = np.zeros(n)
    y[:100] = 1.0
    x = y.copy()
    x[:40] = 0.0
    b = _results(tmp_path / "b40", {"s": y.tolist()}, ids)
    c = _results(tmp_path / "c40", {"s": x.tolist()}, ids)
    res = check_noninferior(b, c, "s", "recall@5", margin=0.03)
    assert not res.passed
    assert res.line.endswith(
        "lower end <= -3 (margin); observed loss 20.0 points: only a margin above 26.1 points "
        "would pass it (a margin is set before the result, never raised to pass one)"
    )
    assert "support a margin" not in res.line  # what the questions support is beside the point
    assert (
        "Observed loss 20.0 points: only a margin above 26.1 points would pass it" in res.markdown()
    )
    # the margin named is the interval's lower end: just above it passes, at it fails
    low = -res.difference.low
    assert f"{low * 100:.1f}" == "26.1"
    assert check_noninferior(b, c, "s", "recall@5", margin=low + 0.0001).passed
    assert not check_noninferior(b, c, "s", "recall@5", margin=low).passed


def test_a_missing_system_or_metric_is_named_with_what_the_run_has(tmp_path):
    import pytest

    from ragmeter.errors import InputError

    b, c = _pair(tmp_path, 5)
    with pytest.raises(InputError, match=r"no system 'other' in the baseline run; it has \['s'\]"):
        check_noninferior(b, c, "other", "recall@5", margin=0.01)
    with pytest.raises(InputError, match=r"no metric 'mrr@10' in the baseline run"):
        check_noninferior(b, c, "s", "mrr@10", margin=0.01)
    with pytest.raises(InputError, match="margin must be a non-negative"):
        check_noninferior(b, c, "s", "recall@5", margin=-0.01)
    with pytest.raises(InputError, match="margin must be a non-negative"):
        check_noninferior(b, c, "s", "recall@5", margin=float("inf"))
    only = _results(tmp_path / "only", {"t": [0.5] * N}, IDS)
    with pytest.raises(InputError, match="no system 's' in the candidate run"):
        check_noninferior(b, only, "s", "recall@5", margin=0.01)


def test_different_question_sets_are_refused_naming_a_question(tmp_path):
    import pytest

    from ragmeter.errors import InputError

    b, _ = _pair(tmp_path, 0)
    extra = _results(tmp_path / "extra", {"s": [0.5] * (N + 1)}, [*IDS, "new"])
    with pytest.raises(InputError, match=r"'new' is only in the candidate"):
        check_noninferior(b, extra, "s", "recall@5", margin=0.01)
    with pytest.raises(InputError, match=r"'new' is only in the baseline"):
        check_noninferior(extra, b, "s", "recall@5", margin=0.01)
    texts = {q: f"question {q}?" for q in IDS} | {IDS[3]: "another question?"}
    reworded = _results(tmp_path / "reworded", {"s": [0.5] * N}, IDS, texts)
    with pytest.raises(InputError, match=rf"question '{IDS[3]}' reads differently"):
        check_noninferior(b, reworded, "s", "recall@5", margin=0.01)


def test_a_run_without_its_questions_file_is_still_compared(tmp_path):
    b, c = _pair(tmp_path, 0)
    (c / "questions.jsonl").unlink()  # texts unknown: compared by id only
    assert check_noninferior(b, c, "s", "recall@5", margin=0.02).passed
    assert check_noninferior(c, b, "s", "recall@5", margin=0.02).passed

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
    at = check_noninferior(b, c, "s", "recall@5", margin=1.0)
    d = at.difference
    # the mean (-0.6 points) is inside the margin, the lower end (-1.2) is not
    assert -1.0 < d.mean * 100 < 0 and d.low * 100 < -1.0
    assert not at.passed and at.line.startswith("FAIL")
    assert "lower end <= -1 (margin)" in at.line
    assert (at.wins, at.ties, at.losses) == (0, N - 5, 5)
    assert abs(at.baseline - 0.5) < 1e-12 and abs(at.candidate - (0.5 - 5 * 0.25 / N)) < 1e-12
    wide = check_noninferior(b, c, "s", "recall@5", margin=1.5)
    assert wide.passed and wide.line.startswith("PASS") and "lower end > -1.5" in wide.line


def test_a_graded_score_unchanged_supports_any_margin_above_zero(tmp_path):
    b, _ = _pair(tmp_path, 5)
    failed = check_noninferior(b, b, "s", "recall@5", margin=0.0)
    # an unchanged candidate differs by exactly 0 on every question: interval [0, 0]
    assert not failed.passed and failed.supported_margin == 0.0
    assert '"supported_margin": 0.0' in json.dumps(failed.to_dict())  # never -0.0
    assert failed.line.endswith(f"; these {N} questions support any margin above 0")
    assert f"These {N} questions support any margin above 0." in failed.markdown()
    assert "reaches" not in failed.line


def test_a_missing_system_or_metric_is_named_with_what_the_run_has(tmp_path):
    import pytest

    from ragmeter.errors import InputError

    b, c = _pair(tmp_path, 5)
    with pytest.raises(InputError, match=r"no system 'other' in the baseline run; it has \['s'\]"):
        check_noninferior(b, c, "other", "recall@5", margin=1.0)
    with pytest.raises(InputError, match=r"no metric 'mrr@10' in the baseline run"):
        check_noninferior(b, c, "s", "mrr@10", margin=1.0)
    with pytest.raises(InputError, match="margin must be a non-negative"):
        check_noninferior(b, c, "s", "recall@5", margin=-1.0)
    with pytest.raises(InputError, match="margin must be a non-negative"):
        check_noninferior(b, c, "s", "recall@5", margin=float("inf"))
    only = _results(tmp_path / "only", {"t": [0.5] * N}, IDS)
    with pytest.raises(InputError, match="no system 's' in the candidate run"):
        check_noninferior(b, only, "s", "recall@5", margin=1.0)


def test_different_question_sets_are_refused_naming_a_question(tmp_path):
    import pytest

    from ragmeter.errors import InputError

    b, _ = _pair(tmp_path, 0)
    extra = _results(tmp_path / "extra", {"s": [0.5] * (N + 1)}, [*IDS, "new"])
    with pytest.raises(InputError, match=r"'new' is only in the candidate"):
        check_noninferior(b, extra, "s", "recall@5", margin=1.0)
    with pytest.raises(InputError, match=r"'new' is only in the baseline"):
        check_noninferior(extra, b, "s", "recall@5", margin=1.0)
    texts = {q: f"question {q}?" for q in IDS} | {IDS[3]: "another question?"}
    reworded = _results(tmp_path / "reworded", {"s": [0.5] * N}, IDS, texts)
    with pytest.raises(InputError, match=rf"question '{IDS[3]}' reads differently"):
        check_noninferior(b, reworded, "s", "recall@5", margin=1.0)


def test_a_run_without_its_questions_file_is_still_compared(tmp_path):
    b, c = _pair(tmp_path, 0)
    (c / "questions.jsonl").unlink()  # texts unknown: compared by id only
    assert check_noninferior(b, c, "s", "recall@5", margin=2.0).passed
    assert check_noninferior(c, b, "s", "recall@5", margin=2.0).passed

"""check's FAIL line says the smallest margin the questions can support: the lower end
of the interval an unchanged candidate gets on them."""

from __future__ import annotations

import numpy as np
from test_check import IDS, _results

from ragmeter.gate import check_noninferior
from ragmeter.paired_tests import tango_interval

N = len(IDS)


def test_a_margin_below_what_the_questions_support_fails_and_says_so(tmp_path):
    base = (np.arange(N) % 3 != 0).astype(float)
    path = _results(tmp_path / "base", {"sentence": base.tolist()}, IDS)
    # an unchanged run on N questions: Tango's interval of 0 discordant pairs
    low, _ = tango_interval(0, 0, N, 0.05)
    floor = -low * 100
    assert 1.0 < floor < 3.0
    failed = check_noninferior(path, path, "sentence", "recall@5", margin=1.0)
    assert not failed.passed
    assert abs(failed.supported_margin - floor) < 1e-9
    assert f"these {N} questions support a margin above {floor:.1f} points" in failed.line
    assert f"These {N} questions support a margin above {floor:.1f} points" in failed.markdown()
    passed = check_noninferior(path, path, "sentence", "recall@5", margin=floor + 0.5)
    assert passed.passed and passed.supported_margin is None
    assert "support" not in passed.line and "support" not in passed.markdown()

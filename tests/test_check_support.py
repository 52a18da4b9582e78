"""check passes a candidate identical to the baseline on every question; any other goes
through the interval, and a FAIL with no observed loss says the smallest margin the
questions can support: the lower end of the interval of a candidate with no net change."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from test_check import IDS, _results

from ragmeter.history.gate import check_noninferior
from ragmeter.stats.paired_tests import tango_interval

N = len(IDS)


def test_an_identical_candidate_passes_saying_so_where_its_interval_would_fail(tmp_path):
    # a change to the docs: every per-question score as in the baseline. The interval of
    # an unchanged candidate on N questions (Tango's, 0 discordant pairs) reaches below
    # -1 point, so the interval alone would fail a 1-point margin
    base = (np.arange(N) % 3 != 0).astype(float)
    path = _results(tmp_path / "base", {"sentence": base.tolist()}, IDS)
    copy = _results(tmp_path / "copy", {"sentence": base.tolist()}, IDS)
    low, _ = tango_interval(0, 0, N, 0.05)
    assert -low * 100 > 1.0
    res = check_noninferior(path, copy, "sentence", "recall@5", margin=0.01)
    assert res.passed and res.identical and res.supported_margin is None
    assert res.line == (
        f"PASS recall@5 sentence: candidate - baseline = +0.0 points, identical on all {N} "
        f"questions (each question scores as in the baseline: no loss to test against the "
        f"margin of 1)"
    )
    assert "[" not in res.line  # no interval to misread as a near-fail
    md = res.markdown()
    assert md.startswith("### ragmeter check passed: recall@5, sentence")
    assert f"Identical on all {N} questions: each question scores as in the baseline" in md
    assert "% interval |" not in md and f"| questions better / same / worse | 0 / {N} / 0 |" in md
    assert res.to_dict()["identical"] is True and res.to_dict()["passed"] is True
    # a margin of 0 too: an identical candidate is no worse at all
    assert check_noninferior(path, copy, "sentence", "recall@5", margin=0.0).passed


@pytest.mark.parametrize("changed", [[0], [0, 1]], ids=["one gained", "one each way"])
def test_a_candidate_differing_on_any_question_goes_through_the_interval(tmp_path, changed):
    # one question gained (no loss), or one gained and one lost (the same mean as an
    # identical candidate): neither is identical, both are decided by the interval
    base = (np.arange(N) % 3 != 0).astype(float)
    cand = base.copy()
    cand[changed] = 1.0 - cand[changed]  # q0 scored 0, q1 scored 1
    b = _results(tmp_path / "b", {"s": base.tolist()}, IDS)
    c = _results(tmp_path / "c", {"s": cand.tolist()}, IDS)
    res = check_noninferior(b, c, "s", "recall@5", margin=0.01)
    low = res.difference.low  # Tango's interval of 1 win and 0 or 1 loss: below -1 point
    assert low * 100 < -1.0 and (res.wins, res.losses) == (1, len(changed) - 1)
    assert not res.passed and not res.identical and res.line.startswith("FAIL")
    assert "identical" not in res.line and "identical" not in res.markdown()
    assert f"these {N} questions support a margin above" in res.line  # no loss: the support
    wide = check_noninferior(b, c, "s", "recall@5", margin=-low + 0.005)
    assert wide.passed and not wide.identical and "lower end > -" in wide.line


def _graded_pair(tmp_path, n: int, changed: int, seed: int):
    """Graded scores (reciprocal ranks) of a baseline, and a candidate that reranks
    ``changed`` questions at random."""
    rng = np.random.default_rng(seed)
    ids = [f"q{i}" for i in range(n)]
    ranks = np.array([0.0, 1.0, 1 / 2, 1 / 3, 1 / 4])
    y = rng.choice(ranks, n)
    x = y.copy()
    x[:changed] = rng.choice(ranks, changed)
    b = _results(tmp_path / f"b{seed}", {"s": y.tolist()}, ids)
    c = _results(tmp_path / f"c{seed}", {"s": x.tolist()}, ids)
    return b, c


def test_a_graded_fail_names_a_margin_the_spread_of_its_differences_supports(tmp_path):
    # graded scores: an unchanged candidate's interval is [0, 0], so "any margin above 0"
    # would contradict a FAIL with no observed loss; the margin named is what a candidate
    # with these differences moved to a mean of 0 would pass
    b, c = _graded_pair(tmp_path, 30, 12, 3)
    res = check_noninferior(b, c, "s", "recall@5", margin=0.05)
    d = res.difference
    assert not res.passed and d.mean > 0 and res.support_basis == "spread"
    assert res.supported_margin > 0.05
    assert abs(res.supported_margin - (d.mean - d.low)) < 0.0005  # the interval, moved
    assert "any margin above 0" not in res.line
    assert f"support a margin above {res.supported_margin * 100:.1f} points" in res.line
    assert "per-question differences spread as these do" in res.line


def test_a_fail_never_names_a_supported_margin_below_the_margin_it_failed(tmp_path):
    """A sweep over graded and 0/1 candidates: whenever a candidate with no observed loss
    fails, the margin the line names as supported is at least the margin it failed."""
    seen = 0
    for seed in range(12):
        rng = np.random.default_rng(seed)
        n = int(rng.integers(20, 120))
        ids = [f"q{i}" for i in range(n)]
        binary = seed % 2 == 0
        y = (rng.random(n) < 0.6).astype(float) if binary else rng.choice([0, 0.25, 0.5, 1.0], n)
        x = y.copy()
        k = int(rng.integers(1, n // 2))
        x[:k] = (rng.random(k) < 0.6).astype(float) if binary else rng.choice([0, 0.5, 1.0], k)
        b = _results(tmp_path / f"b{seed}", {"s": y.tolist()}, ids)
        c = _results(tmp_path / f"c{seed}", {"s": x.tolist()}, ids)
        for margin in (0.005, 0.02, 0.05, 0.10):
            res = check_noninferior(b, c, "s", "recall@5", margin=margin)
            if res.passed or res.difference.mean < 0:
                continue
            seen += 1
            assert res.supported_margin >= margin, res.line
            assert res.support_basis == ("changed" if binary else "spread")
    assert seen >= 10


def test_too_few_questions_support_no_margin_and_say_so(tmp_path):
    ids = ["q0", "q1", "q2", "q3"]
    b = _results(tmp_path / "b", {"s": [0.5, 0.25, 1.0, 0.0]}, ids)
    c = _results(tmp_path / "c", {"s": [1.0, 0.0, 0.5, 0.25]}, ids)
    res = check_noninferior(b, c, "s", "recall@5", margin=0.05)
    assert not res.passed and res.supported_margin >= 1
    assert "these 4 questions support no margin below the whole scale" in res.line
    assert "add questions" in res.line


def test_a_binary_fail_with_changed_questions_counts_them(tmp_path):
    n = 200
    ids = [f"q{i}" for i in range(n)]
    y = (np.arange(n) % 2 == 0).astype(float)
    x = y.copy()
    x[np.flatnonzero(y == 0)[:10]] = 1.0  # 10 wins
    x[np.flatnonzero(y == 1)[:8]] = 0.0  # 8 losses
    b = _results(tmp_path / "b", {"s": y.tolist()}, ids)
    c = _results(tmp_path / "c", {"s": x.tolist()}, ids)
    res = check_noninferior(b, c, "s", "recall@5", margin=0.03)
    # an unchanged candidate's interval (0 of 200 changed) reaches about -1.9: naming that
    # would say 3 points is supported while this check fails at 3
    unchanged, _ = tango_interval(0, 0, n, 0.05)
    assert -unchanged * 100 < 3
    even, _ = tango_interval(9, 9, n, 0.05)
    assert not res.passed and abs(res.supported_margin + even) < 1e-11
    assert res.supported_margin > 0.03 and res.support_basis == "changed"
    assert "changes as many questions, with no net change, reaches" in res.line


def test_a_supported_margin_just_under_the_whole_scale_is_named_as_a_number(tmp_path):
    ids = ["q0", "q1", "q2", "q3"]
    b = _results(tmp_path / "b", {"s": [0.5, 0.25, 1.0, 0.0]}, ids)
    c = _results(tmp_path / "c", {"s": [1.0, 0.0, 0.5, 0.25]}, ids)
    res = check_noninferior(b, c, "s", "recall@5", margin=0.05)
    near = replace(res, supported_margin=0.995)
    assert "below the whole scale" not in near.line and "-99.5" in near.line
    assert "below the whole scale" in replace(res, supported_margin=1.0).line


def test_mrr_is_checked_at_its_table_scale_and_a_share_in_points(tmp_path):
    # MRR's scale is not a share: its differences, losses and margins print as the metric
    # table says (three decimals, no unit), as the report prints them; the gate once
    # printed every metric in points (+5.6 points of MRR)
    ids = [f"q{i}" for i in range(40)]
    rng = np.random.default_rng(5)
    ranks = np.array([0.0, 1.0, 1 / 2, 1 / 3, 1 / 4])
    y = rng.choice(ranks, len(ids))
    x = y.copy()
    x[:16] = rng.choice(ranks, 16)
    lost = y.copy()
    lost[np.flatnonzero(y > 0)[:15]] = 0.0  # a candidate that finds nothing on 15
    found = {}
    for metric in ("mrr@10", "recall@5"):
        where = tmp_path / metric
        b = _results(where / "b", {"s": y.tolist()}, ids, metric=metric)
        c = _results(where / "c", {"s": x.tolist()}, ids, metric=metric)
        w = _results(where / "w", {"s": lost.tolist()}, ids, metric=metric)
        found[metric] = (
            check_noninferior(b, c, "s", metric, margin=0.02),
            check_noninferior(b, w, "s", metric, margin=0.02),
            check_noninferior(b, b, "s", metric, margin=0.02),
        )
    spread, loss, same = found["mrr@10"]
    d = spread.difference
    assert not spread.passed and spread.support_basis == "spread"
    assert f"candidate - baseline = {d.mean:+.3f} [{d.low:+.3f}, {d.high:+.3f}] (95% " in (
        spread.line
    )
    assert "lower end <= -0.02 (margin)" in spread.line
    s = spread.supported_margin
    assert (
        f"support a margin above {s:.3f} (" in spread.line and f"reaches -{s:.3f})" in spread.line
    )
    assert "points" not in spread.line and "points" not in spread.markdown()
    md = spread.markdown()
    assert f"| baseline | {spread.baseline:.3f} |" in md and "| margin | -0.02 |" in md
    assert f"| candidate - baseline | {d.mean:+.3f} |" in md
    assert "is above -0.02. Interval" in md
    ld = loss.difference
    assert f"observed loss {-ld.mean:.3f}: only a margin above {-ld.low:.3f} would" in loss.line
    assert "points" not in loss.line
    assert same.line.startswith("PASS mrr@10 s: candidate - baseline = +0.000, identical")
    assert same.line.endswith("no loss to test against the margin of 0.02)")
    # the same scores as a share print in points, as they always did
    spread, loss, same = found["recall@5"]
    d = spread.difference
    assert f"= {d.mean * 100:+.1f} [{d.low * 100:+.1f}, {d.high * 100:+.1f}] points (95% " in (
        spread.line
    )
    assert "lower end <= -2 (margin)" in spread.line
    assert f"observed loss {-loss.difference.mean * 100:.1f} points: only" in loss.line
    assert "+0.0 points, identical" in same.line and same.line.endswith("margin of 2)")
    assert "is above -2 points. Interval" in spread.markdown()

"""Edges the mutation runner (bench/mutation.py) found untested in modules with their own
tests elsewhere: a zero among tiny numbers, a boundary met exactly, a draw where the
reference's double arithmetic rounds up, a hook on a path with no work, an interval's
last digits."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ragmeter.errors import InputError


def test_qrels_hash_is_splitmix64s_finaliser():
    from ragmeter.scoring.trec import _mix

    # splitmix64 seeded with 0: state += 0x9E3779B97F4A7C15, then the finaliser; its first
    # three outputs (the reference values of the generator's public domain C code)
    gamma = 0x9E3779B97F4A7C15
    states = np.array([(gamma * i) % 2**64 for i in (1, 2, 3)], dtype=np.uint64)
    assert [int(x) for x in _mix(states)] == [
        0xE220A8397B1DCDAF,
        0x6E789E6AA1B965F4,
        0x06C45D188009454F,
    ]


def test_tango_interval_reproduces_to_the_last_digit():
    from ragmeter.stats.paired_tests import tango_interval

    # A published interval must come out the same, bit for bit, from the same counts:
    # these are the ends after the documented 40 bisection steps.
    assert tango_interval(10, 4, 50) == (-0.02921946050173574, 0.27036693152389496)
    assert tango_interval(5, 1, 20) == (-0.049128593595014536, 0.4369082633929793)
    assert tango_interval(2, 0, 12) == (-0.11624300776384189, 0.44803086225268396)


def test_a_stated_zero_stands_for_a_zero_before_any_tiny_number():
    from ragmeter.answers.failures import _nearest
    from ragmeter.answers.numbers import numbers

    stated = numbers("0")[0]
    for text in ("0.0000000000015 and 0", "0 and 0.0000000000015"):
        refs = numbers(text)
        assert len(refs) == 2
        assert _nearest(stated, refs).values == (0.0,)
    tiny = numbers("0.0000000000015")[0]
    assert _nearest(tiny, numbers("0 and 0.0000000000015")).values == (1.5e-12,)


def test_a_number_exactly_five_percent_off_still_counts_as_rounded():
    from ragmeter.answers.numbers import RELATIVE, Number, same_number

    assert RELATIVE == 0.05
    stated = Number("2,100", 0, 5, (2100.0,), (500.0,), False)  # a rounding of +/- 500
    assert same_number(stated, Number("2000", 0, 4, (2000.0,), (0.5,), False))  # 5% exactly
    assert not same_number(stated, Number("1999", 0, 4, (1999.0,), (0.5,), False))  # over 5%


def test_sample_size_ceiling_absorbs_float_noise_only():
    from ragmeter.stats.size import _ceil

    assert _ceil(306.00000000000006) == 306  # noise of a formula: absorbed
    assert _ceil(3.0000000003) == 3  # under 1e-9: absorbed
    assert _ceil(3.000000003) == 4  # 3e-9 above a whole number counts
    assert _ceil(0.2) == 1


def test_empty_scores_are_refused_by_name_in_paired():
    from ragmeter.stats.paired import paired

    with pytest.raises(InputError, match="a must not be empty"):
        paired([], [])
    with pytest.raises(InputError, match="b must not be empty"):
        paired([1.0], [])


def test_cached_draws_are_handed_out_read_only():
    from ragmeter.stats.draws import _draw_indices

    first = _draw_indices(37, 37, 5, 11, 0)
    again = _draw_indices(37, 37, 5, 11, 0)  # from the cache
    np.testing.assert_array_equal(first, again)
    assert not again.flags.writeable
    with pytest.raises(ValueError):
        again[0, 0] = 0  # a caller cannot change the draws of the next one


def test_draws_follow_the_references_double_arithmetic_past_2_to_the_21():
    from ragmeter.stats.draws import _mulberry32_chunks, resample_indices

    # Draw 1090 of seed 1 with n = 2,472,477 questions: the exact product t * n / 2**32
    # lies 2**-32 below a whole number, and the reference's double product rounds up onto
    # it; the integer shortcut (exact below 2**21 questions) would give one less.
    n, at = 2_472_477, 1090
    t = next(iter(_mulberry32_chunks(1, at + 1, 0)))[1][at].item()
    assert (t * n) >> 32 == 2_402_121
    want = math.floor(t / 4294967296.0 * n)
    assert want == 2_402_122
    assert resample_indices(n, 1, seed=1)[0, at] == want


def test_an_interval_touching_zero_is_a_tie():
    from ragmeter.stats.paired import paired

    up = paired([1] * 3 + [0] * 77, [0] * 80, names=("A", "B"))
    assert up.difference.low == 0.0 and up.verdict.startswith("tie")
    down = paired([0] * 80, [1] * 3 + [0] * 77, names=("A", "B"))
    assert down.difference.high == 0.0 and down.verdict.startswith("tie")


def test_meanwhile_runs_even_with_nothing_to_segment():
    from ragmeter.chunking.strategies import prepare_sentences

    calls: list[int] = []
    assert prepare_sentences([], meanwhile=lambda: calls.append(1), cache=False) == 0
    assert calls == [1]


def test_answer_report_pools_every_system_for_the_corrected_accuracy(tmp_path):
    from test_answers_ppi import search_with_lenient_answers

    from ragmeter.answers.analysis import answer_report, corrected_accuracy
    from ragmeter.answers.store import load_merged_answer_set

    res, judge, hand = search_with_lenient_answers(tmp_path)
    report = answer_report(load_merged_answer_set(res), rounds=200, seed=1)
    overall = report.corrected
    assert overall is not None
    n_questions = len(res.question_ids)
    assert (overall.n, overall.n_hand) == (2 * n_questions, 24)
    expect = corrected_accuracy(judge, hand, "judge-a", None, rounds=200, seed=1)
    assert overall.corrected.mean == pytest.approx(expect.corrected.mean, abs=1e-12)
    assert (overall.corrected.low, overall.corrected.high) == pytest.approx(
        (expect.corrected.low, expect.corrected.high), abs=1e-12
    )
    assert overall.corrected.mean < overall.raw.mean  # the judge was lenient

"""PPI++: the tuned rectifier weight, the asymptotic interval and the effective number of
hand grades, checked against the PPI authors' own library (``ppi_py``) on the same data."""

from __future__ import annotations

import numpy as np
import pytest

from ragmeter.answers.analysis import ppi_accuracy
from ragmeter.errors import InputError
from ragmeter.stats import ppi


def _draw(seed, n=60, big=500, truth=0.6, miss=0.1, lenient=0.3):
    """Hand grades of n answers, the judge's on them, and the judge's on `big` others."""
    rng = np.random.default_rng(seed)
    right = rng.random(n + big) < truth
    u = rng.random(n + big)
    judge = np.where(right, u > miss, u < lenient).astype(float)
    return right[:n].astype(float), judge[:n], judge[n:]


def _one(x) -> float:
    """ppi_py's answer for a one-dimensional mean, as a float (it returns 1-element arrays)."""
    (value,) = np.ravel(x)
    return float(value)


def _ppi_py():
    return pytest.importorskip(
        "ppi_py",
        reason="ppi-python (the PPI authors' library) is in the test extra: "
        "pip install -c constraints.txt -e .[test]",
    )


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_tuned_weight_estimate_and_interval_equal_ppi_py(seed):
    ppi_py = _ppi_py()
    from ppi_py.ppi import _calc_lam_glm

    h, jh, ja = _draw(seed)
    mine = ppi.tuned_weight(h, jh, ja)
    theta1 = ppi.ppi_mean(h, jh, ja, 1.0)
    theirs = _calc_lam_glm(h - theta1, jh - theta1, ja - theta1, np.eye(1), clip=True)
    assert mine == pytest.approx(_one(theirs), rel=1e-12)
    assert ppi.ppi_mean(h, jh, ja, mine) == pytest.approx(
        _one(ppi_py.ppi_mean_pointestimate(h, jh, ja)), rel=1e-12
    )
    low, high = ppi_py.ppi_mean_ci(h, jh, ja, alpha=0.05)
    assert ppi.ppi_interval(h, jh, ja, mine) == pytest.approx((_one(low), _one(high)), rel=1e-10)
    for lam in (0.0, 1.0):  # hand grades alone, and plain PPI
        low, high = ppi_py.ppi_mean_ci(h, jh, ja, alpha=0.1, lam=lam)
        assert ppi.ppi_interval(h, jh, ja, lam, 0.9) == pytest.approx(
            (_one(low), _one(high)), rel=1e-10
        )


def test_tuned_weight_is_the_variance_minimum_and_clipped():
    h, jh, ja = _draw(4)
    lam = ppi.tuned_weight(h, jh, ja)
    grid = np.linspace(0, 1, 201)
    best = grid[np.argmin([ppi.ppi_variance(h, jh, ja, g) for g in grid])]
    assert abs(lam - best) < 0.02
    # a judge that is the hand grade: close to 1 / (1 + n / N); one that disagrees: 0
    assert ppi.tuned_weight(h, h, ja) == pytest.approx(1.0, abs=0.25)
    assert ppi.tuned_weight(h, 1.0 - h, ja) == 0.0
    assert ppi.tuned_weight(h, np.ones_like(h), np.ones(50)) == 0.0  # a judge with one grade
    with pytest.raises(InputError, match="rectifier weight"):
        ppi.weight_of("best", h, jh, ja)
    with pytest.raises(InputError, match="between 0 and 1"):
        ppi.weight_of(1.5, h, jh, ja)


def test_effective_hand_is_n_for_hand_alone_and_more_for_a_good_judge():
    h, jh, ja = _draw(5, miss=0.03, lenient=0.05)
    assert ppi.effective_hand(h, jh, ja, 0.0) == pytest.approx(h.size)
    tuned = ppi.effective_hand(h, jh, ja, ppi.tuned_weight(h, jh, ja))
    assert tuned > 2 * h.size
    # a poor judge: plain PPI costs hand grades, the tuned weight never much below n
    h, jh, ja = _draw(6, miss=0.35, lenient=0.45)
    assert ppi.effective_hand(h, jh, ja, 1.0) < h.size
    assert ppi.effective_hand(h, jh, ja, ppi.tuned_weight(h, jh, ja)) > 0.95 * h.size


def test_tuned_interval_is_never_wider_than_hand_alone_on_average():
    widths = {"hand": [], "tuned": [], "plain": []}
    for seed in range(60):
        h, jh, ja = _draw(seed, miss=0.3, lenient=0.35)  # agrees on about 67%
        for name, lam in (("hand", 0.0), ("tuned", ppi.tuned_weight(h, jh, ja)), ("plain", 1.0)):
            low, high = ppi.ppi_interval(h, jh, ja, lam)
            widths[name].append(high - low)
    assert np.mean(widths["tuned"]) <= np.mean(widths["hand"]) * 1.005
    assert np.mean(widths["tuned"]) < np.mean(widths["plain"])


@pytest.mark.parametrize("seed", [7, 8])
def test_printed_interval_is_ppi_pys_widened_and_on_the_adjusted_variance(seed):
    # What `grade` prints: ppi_py's estimate, and ppi_py's half-width scaled by the
    # widening for n hand grades and by the adjusted over the plain standard error.
    ppi_py = _ppi_py()
    h, jh, ja = _draw(seed, n=40, big=600)
    lam = ppi.tuned_weight(h, jh, ja)
    est = ppi_accuracy(ja, jh, h, rounds=4000, seed=1)
    assert est.mean == pytest.approx(_one(ppi_py.ppi_mean_pointestimate(h, jh, ja)), rel=1e-12)
    low, high = ppi_py.ppi_mean_ci(h, jh, ja, alpha=0.05)
    scale = ppi.widening_for(40) * np.sqrt(
        ppi.ppi_variance(h, jh, ja, lam, adjusted=True) / ppi.ppi_variance(h, jh, ja, lam)
    )
    half = (_one(high) - _one(low)) / 2 * scale
    assert (est.low, est.high) == pytest.approx((est.mean - half, est.mean + half), rel=1e-10)
    assert (est.low, est.high) == ppi.ppi_interval(h, jh, ja, lam, adjusted=True, widen=True)
    assert scale > 1.0  # wider than ppi_py's: 40 hand grades are few


def test_rectifier_variance_leaves_room_for_errors_never_seen():
    h = np.array([1.0] * 30 + [0.0] * 10)
    assert np.var(h - h) == 0.0  # the judge never caught wrong: no spread at all
    # a quarter answer in each cell: the two error cells hold 0.25 of 41 answers each
    assert ppi.rectifier_variance(h, h, 1.0) == pytest.approx(0.5 / 41, rel=1e-12)
    # with many grades the half answers no longer matter
    rng = np.random.default_rng(0)
    h, j = (rng.random(5000) < 0.6).astype(float), (rng.random(5000) < 0.5).astype(float)
    assert ppi.rectifier_variance(h, j, 0.7) == pytest.approx(np.var(h - 0.7 * j), rel=0.01)

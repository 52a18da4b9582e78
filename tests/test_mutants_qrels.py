"""The qrels route (ragmeter.qrels*): per-query means and what a run file holds."""

from __future__ import annotations

import numpy as np

from ragmeter.qrels import Evaluation


def test_evaluation_means_are_per_measure_and_zero_without_queries():
    ev = Evaluation("run", ["1", "2"], {"map": np.array([0.5, 1.0]), "p@5": np.array([0.2, 0])})
    assert ev.means() == {"map": 0.75, "p@5": 0.1}
    assert Evaluation("run", [], {"map": np.zeros(0)}).means() == {"map": 0.0}
    assert (ev.missing, ev.unjudged, ev.depth, ev.top) == ([], [], 0, None)

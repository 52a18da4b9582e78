"""No comparison table can print a verdict that its own p-value or interval contradicts.

Random score matrices (0/1 and graded, 2-6 systems, 5-80 questions), every family
(all pairs, a baseline, planned pairs) and every rule; the check reads what is
printed (the terminal rows, the HTML report's cells) and what is saved
(summary.json), not the internals.
"""

from __future__ import annotations

import json
import re

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.console import Console

from ragmeter.cli.search_views import comparison_table
from ragmeter.comparison.summary import Summary
from ragmeter.files.io import dumps
from ragmeter.report import html
from ragmeter.runs.results import summarize

ROUNDS = 400


@st.composite
def tables(draw):
    m = draw(st.integers(2, 6))
    n = draw(st.integers(5, 80))
    binary = draw(st.booleans())
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    spread = draw(st.sampled_from([0.0, 0.03, 0.06, 0.1, 0.2, 0.5]))
    base = rng.random(n)
    noise = rng.random((m, n)) < draw(st.sampled_from([0.05, 0.3, 0.8]))
    # Shifts near the noise level, so that many rows sit near the decision boundary.
    x = np.where(noise, rng.random((m, n)), base) + rng.normal(0, spread, size=(m, 1))
    if draw(st.booleans()) and m > 2:
        x[-1] = x[0]  # an identical pair
    x = (x > 0.5).astype(float) if binary else np.clip(x, 0, 1).round(3)
    names = [f"s{i}" for i in range(m)]
    family = draw(st.sampled_from(["all", "baseline", "pairs"]))
    options = {}
    if family == "baseline":
        options["baseline"] = names[draw(st.integers(0, m - 1))]
    elif family == "pairs":
        all_pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1 :]]
        chosen = draw(st.lists(st.sampled_from(all_pairs), min_size=1, unique=True))
        options["pairs"] = [(b, a) if draw(st.booleans()) else (a, b) for a, b in chosen]
    adjust = draw(st.sampled_from(["holm", "holm", "maxt", "maxt", "none"]))
    seed = draw(st.integers(1, 1000))
    return x, names, options, adjust, seed


def _number(text: str) -> float:
    """A printed number; an interval end set by the decision carries a mark (``0.0*``)."""
    return float(text.replace("−", "-").removesuffix("*"))


def _check(verdict: str, a: str, b: str, low: float, high: float, p: float | None, alpha: float):
    better = "better" in verdict
    excludes = low > 0 or high < 0
    assert better == excludes, (verdict, low, high)
    if p is not None:
        assert better == (p < alpha), (verdict, p)
    if better:
        winner = verdict.removesuffix(" better")
        assert winner == (a if low > 0 else b), (verdict, low, high)
    else:
        assert low <= 0 <= high


class _Stub:
    question_ids: list[str] = []


@settings(
    max_examples=200,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(tables())
def test_no_row_contradicts_itself(case):
    x, names, options, adjust, seed = case
    summary = summarize({"recall@5": x}, names, "recall@5", seed, ROUNDS, adjust=adjust, **options)
    saved = json.loads(dumps(summary.to_json()))  # what summary.json holds
    assert Summary.from_json(saved) == summary  # read back, typed, unchanged
    rule = saved["comparison_rule"]
    alpha = rule["alpha"]
    assert rule["seed"] == seed and rule["rounds"] == ROUNDS and rule["adjust"] == adjust
    assert rule["family"] in ("all pairs", "planned pairs", "a single chosen pair") or rule[
        "family"
    ].startswith("every system against ")
    # summary.json
    for c in saved["comparisons"]:
        d = c["difference"]
        _check(c["verdict"], c["a"], c["b"], d["low"], d["high"], c["p"], alpha)
        assert c["separated"] == ("better" in c["verdict"])
        if adjust == "none":
            assert c["p"] is None
    # the terminal
    console = Console(width=400, record=True)
    console.print(
        comparison_table(summary.comparisons, "recall@5", seed, ROUNDS, summary.comparison_rule)
    )
    text = console.export_text()
    assert " ".join(rule["header"].split()) in " ".join(text.split())  # the rule is named
    head = [c.strip() for c in next(x for x in text.splitlines() if x.startswith("┃")).split("┃")]
    if adjust == "none":
        assert not any(h.startswith("p") for h in head)
    else:  # a family of one is not labelled as adjusted
        name = "max-T" if adjust == "maxt" else "Holm"
        assert ("p" if rule["pairs"] == 1 else f"p ({name})") in head
    rows = [line for line in text.splitlines() if line.startswith("│")]
    assert len(rows) == len(saved["comparisons"])
    for line in rows:
        cells = [c.strip() for c in line.strip("│").split("│")]
        a, b, diff = cells[0], cells[1], cells[2]
        verdict = cells[-1]
        p = None
        if adjust != "none":
            p = _number(cells[4]) if cells[4] else None
        if diff == "identical":
            assert verdict.startswith("identical") and not p
            continue
        low, high = (_number(v) for v in re.search(r"\[(.+), (.+)\]", diff).groups())
        _check(verdict, a, b, low, high, p, alpha)
    # the HTML report's cells
    for row in html._comparisons(_Stub(), summary, "recall@5"):
        if row["identical"]:
            continue
        shown = row["shown"]
        low, high = (_number(v) for v in re.search(r"\[(.+), (.+)\]", shown["difference"]).groups())
        p = _number(shown["p"]) if shown["p"] else None
        _check(row["verdict"], row["a"], row["b"], low, high, p, alpha)
        _check(
            row["verdict"],
            row["a"],
            row["b"],
            row["difference"]["low"],
            row["difference"]["high"],
            None,
            alpha,
        )
        assert row["separated"] == ("better" in row["verdict"])

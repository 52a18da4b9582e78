"""A table whose rule's level is finer than its rounds resolve says so, and names the
rounds that give every interval ends of its own."""

from __future__ import annotations

import re

import numpy as np
import pytest

from ragmeter.comparison.formatting import unresolved_note
from ragmeter.comparison.verdicts import compare_family
from ragmeter.stats.paired_tests import _hits_needed, rounds_for_level


def _table(adjust: str, rounds: int, binary: bool = False):
    rng = np.random.default_rng(12)
    x = rng.random((12, 150))  # 66 pairs of graded scores, no real difference
    x = (x < 0.5) * 1.0 if binary else np.round(x, 3)
    return compare_family(x, [f"s{i}" for i in range(12)], adjust=adjust, rounds=rounds, seed=2)


@pytest.mark.parametrize("adjust", ["maxt", "holm", "fdr"])
def test_a_table_at_too_few_rounds_says_which_rounds_give_its_intervals_ends(adjust):
    table = _table(adjust, 300)
    spans = [r for r in table.rows if r.difference.low == -1.0 and r.difference.high == 1.0]
    note = unresolved_note(table.rows, table.rule)
    assert spans and note.startswith(f"{len(spans)} of these intervals span the whole scale")
    need = int(re.search(r"--rounds ([\d,]+)", note).group(1).replace(",", ""))
    assert need == rounds_for_level(0.05 / 67)
    again = _table(adjust, need)
    assert unresolved_note(again.rows, again.rule) is None
    assert not [r for r in again.rows if (r.difference.low, r.difference.high) == (-1.0, 1.0)]


def test_no_note_where_the_rounds_resolve_the_level_or_no_rounds_are_used():
    assert unresolved_note(_table("maxt", 2000).rows, _table("maxt", 2000).rule) is None
    binary = _table("maxt", 300, binary=True)  # Tango's intervals use no rounds
    assert unresolved_note(binary.rows, binary.rule) is None
    none = _table("none", 300)  # the percentile bootstrap's own interval
    assert unresolved_note(none.rows, none.rule) is None


@pytest.mark.parametrize("level", [0.05, 0.01, 1e-4, 6.4e-5, 1 / 3])
def test_rounds_for_level_is_the_fewest_that_resolve_it(level):
    rounds = rounds_for_level(level)
    assert _hits_needed(level, rounds) >= 1 and _hits_needed(level, rounds - 1) < 1


def test_evaluate_and_its_page_say_so_at_too_few_rounds(tmp_path):
    from typer.testing import CliRunner

    from ragmeter.cli import app
    from ragmeter.report.data import report_data
    from ragmeter.runs.results import Results

    rng = np.random.default_rng(5)
    qrels = [f"{q} 0 D{q}-{j} {int(rng.integers(0, 3))}\n" for q in range(40) for j in range(6)]
    (tmp_path / "qrels.txt").write_text("".join(qrels))
    runs = []
    for name in "abcd":
        lines = []
        for q in range(40):
            for r, j in enumerate(rng.permutation(8), start=1):
                lines.append(f"{q} Q0 D{q}-{j} {r} {10 - r} {name}\n")
        (tmp_path / f"{name}.run").write_text("".join(lines))
        runs.append(str(tmp_path / f"{name}.run"))
    out = tmp_path / "res"
    args = ["evaluate", "--qrels", str(tmp_path / "qrels.txt"), *runs, "--measures", "ndcg@5"]
    args += ["--rounds", "100", "--no-history", "-o", str(out)]
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 0, r.output
    flat = " ".join(r.stdout.split())
    assert "intervals span the whole scale" in flat
    assert f"--rounds {rounds_for_level(0.05 / 7):,} gives" in flat
    note = report_data(Results(out))["comparison_note"]
    assert "intervals span the whole scale" in note


def test_rounds_for_a_vanishing_level_is_a_number_at_once():
    assert rounds_for_level(np.finfo(float).tiny) > 10**300  # no search step by step

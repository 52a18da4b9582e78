"""One rule per comparison table: exact tests, Holm, matching intervals, families."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from rich.console import Console
from typer.testing import CliRunner

from ragmeter import stats
from ragmeter.cli import app
from ragmeter.cli.search_views import comparison_table
from ragmeter.comparison import verdicts
from ragmeter.comparison.verdicts import (
    compare_family,
    fmt_end,
    fmt_p,
    identical_groups,
    mcnemar_exact,
    min_differing,
    parse_pairs,
    tango_interval,
    tango_z,
)
from ragmeter.errors import InputError
from ragmeter.runs.results import summarize
from ragmeter.stats import paired_tests


def _binary_pair(wins: int, losses: int, n: int) -> np.ndarray:
    """Two 0/1 rows over n questions with the given wins and losses (rest tied at 1)."""
    a = np.ones(n)
    b = np.ones(n)
    b[:wins] = 0.0
    a[wins : wins + losses] = 0.0
    return np.stack([a, b])


# --------------------------------------------------------------------------- exact tests


def test_mcnemar_exact_by_hand():
    assert mcnemar_exact(4, 0) == 0.125  # 2 * (1/2)^4
    assert mcnemar_exact(6, 0) == 0.03125
    assert mcnemar_exact(5, 1) == 2 * (1 + 6) / 64  # N = 6: P(X <= 1) = 7/64
    assert mcnemar_exact(1, 5) == mcnemar_exact(5, 1)
    assert mcnemar_exact(3, 3) == 1.0
    assert mcnemar_exact(0, 0) == 1.0
    # Large counts stay exact: 2 * P(X <= 40) for Binomial(100, 1/2).
    expect = 2 * sum(math.comb(100, i) for i in range(41)) / 2**100
    assert mcnemar_exact(60, 40) == pytest.approx(expect, rel=1e-12)


def test_min_differing_from_the_exact_test():
    assert min_differing(0.05) == 6  # 2/32 = 0.0625 is not below 0.05, 2/64 is
    assert min_differing(0.05 / 21) == 10  # 2/1024 < 0.00238 <= 2/512
    for level in (0.05, 0.01, 0.001, 0.0123):
        need = min_differing(level)
        assert mcnemar_exact(need, 0) < level <= mcnemar_exact(need - 1, 0)


def _constrained_mle(w: int, lo: int, n: int, delta: float) -> float:
    """P(loss) maximising the multinomial likelihood with P(win) - P(loss) = delta, by grid."""
    q = np.linspace(max(0.0, -delta), (1.0 - delta) / 2.0, 400_001)[1:-1]
    ll = w * np.log(q + delta) + lo * np.log(q) + (n - w - lo) * np.log(1.0 - 2.0 * q - delta)
    return float(q[np.argmax(ll)])


@pytest.mark.parametrize(
    "w, lo, n, delta", [(4, 1, 25, 0.1), (8, 3, 80, -0.05), (20, 2, 135, 0.2), (5, 6, 40, 0.0)]
)
def test_tango_statistic_uses_the_constrained_mle(w, lo, n, delta):
    q = _constrained_mle(w, lo, n, delta)
    z = (w - lo - n * delta) / math.sqrt(n * (2 * q + delta * (1 - delta)))
    assert float(tango_z(w, lo, n, delta)) == pytest.approx(z, rel=1e-4)


def test_tango_interval_does_not_collapse_without_losses():
    low, high = tango_interval(4, 0, 25)
    assert 0 < low < 4 / 25 < high  # the percentile interval here is [0.04, 0.28]...
    low0, high0 = tango_interval(0, 0, 25)
    assert low0 < 0 < high0  # nothing differs: still an honest width
    # The ends are where the score test's |Z| reaches the 97.5% normal quantile.
    assert abs(float(tango_z(4, 0, 25, high))) == pytest.approx(1.959964, abs=1e-6)
    assert abs(float(tango_z(4, 0, 25, low))) == pytest.approx(1.959964, abs=1e-6)


def test_signflip_raw_p_equals_compare_all():
    rng = np.random.default_rng(3)
    m = rng.random((4, 30)).round(2)
    table = compare_family(m, list("abcd"), rounds=2000, seed=7)
    old = {(c.a, c.b): c.p_value for c in stats.compare_all(m, list("abcd"), rounds=2000, seed=7)}
    for r in table.rows:
        assert r.p_value == old[(r.a, r.b)]


# --------------------------------------------------------------------------- one rule


def _agree(row: verdicts.Row, alpha: float = 0.05) -> None:
    d = row.difference
    excludes = d.low > 0 or d.high < 0
    assert row.separated == excludes == (row.p < alpha) == ("better" in row.verdict)
    if excludes:
        assert (d.low > 0) == (d.mean > 0)


@pytest.mark.parametrize("kind", ["binary", "graded"])
def test_holm_rows_agree_with_themselves(kind):
    rng = np.random.default_rng(11)
    for trial in range(15):
        k, n = 3 + trial % 4, 20 + 7 * trial
        base = rng.random(n)
        shift = rng.normal(0, 0.15, size=(k, 1))
        noise = rng.random((k, n)) < 0.25
        m = np.where(noise, rng.random((k, n)), base) + shift
        m = (m > 0.5).astype(float) if kind == "binary" else np.clip(m, 0, 1).round(3)
        table = compare_family(
            m, [f"s{i}" for i in range(k)], adjust="holm", rounds=500, seed=trial
        )
        assert table.rule.adjust == "holm"
        p_adj = stats.holm([r.p_value for r in table.rows if not r.identical])
        for r, p in zip([r for r in table.rows if not r.identical], p_adj, strict=True):
            assert r.p == p
            _agree(r)
            # The interval is at the level Holm used for this pair, never wider than alpha.
            assert r.level <= 0.05 and r.difference.confidence == pytest.approx(1 - r.level)
            assert r.difference.low <= r.difference.mean <= r.difference.high


def test_issue_example_four_wins_no_losses():
    table = compare_family(
        _binary_pair(4, 0, 25), ["fixed", "sentence"], pairs=[("fixed", "sentence")]
    )
    (row,) = table.rows
    assert row.p == 0.125 and not row.separated
    assert row.verdict == "tie: too few differing questions (4 of 25 differ; at least 6 needed)"
    assert row.difference.low <= 0 < row.difference.high
    six = compare_family(_binary_pair(6, 0, 25), ["fixed", "sentence"]).rows[0]
    assert six.verdict == "fixed better" and six.difference.low > 0


def test_adjust_none_is_the_seeds_percentile_rule_bit_for_bit():
    rng = np.random.default_rng(5)
    m = (rng.random((4, 40)) < 0.6).astype(float)
    names = ["w", "x", "y", "z"]
    table = compare_family(m, names, adjust="none", rounds=1000, seed=3)
    assert "the seed's per-pair rule" in table.rule.header and table.rule.p_label is None
    for r in table.rows:
        single = stats.paired(m[names.index(r.a)], m[names.index(r.b)], rounds=1000, seed=3)
        assert r.difference == single.difference  # the reference pairedDifference, bit for bit
        assert r.verdict == single.verdict and r.p is None


def test_holm_can_overrule_the_unadjusted_interval():
    # 7 wins, 0 losses of 25: the per-pair percentile interval excludes 0, but with
    # 21 pairs in the family the first Holm step needs at least 10 differing questions.
    rng = np.random.default_rng(2)
    base = (rng.random(25) < 0.5).astype(float)
    rows = [base.copy() for _ in range(7)]
    rows[0][np.flatnonzero(base == 0)[:7]] = 1.0
    for i in range(1, 7):
        rows[i][np.flatnonzero(base == 1)[i - 1]] = 0.0  # make the others distinct
    m = np.stack(rows)
    names = [f"s{i}" for i in range(7)]
    none = compare_family(m, names, adjust="none", rounds=2000)
    holm = compare_family(m, names, adjust="holm", rounds=2000)
    assert none.rows[0].verdict == "s0 better"
    assert holm.rows[0].p >= 0.05 and "too few differing questions" in holm.rows[0].verdict
    # The default, max-T, does not pay for the 20 pairs that differ on one or two
    # questions (none of them can ever reach a small p): s0's wins are enough.
    maxt = compare_family(m, names, rounds=2000)
    assert maxt.rule.adjust == "maxt"
    assert maxt.rows[0].p < 0.05 and maxt.rows[0].verdict == "s0 better"
    assert maxt.rows[0].level > holm.rows[0].level


# --------------------------------------------------------------------------- families


def test_families_baseline_pairs_and_identical():
    rng = np.random.default_rng(8)
    m = (rng.random((5, 50)) < 0.5).astype(float)
    m[3] = m[1]  # d is identical to b
    names = list("abcde")
    base = compare_family(m, names, baseline="c")
    assert base.rule.family == "every system against c" and base.rule.pairs == 3
    pairs = {(r.a, r.b): r for r in base.rows}
    assert set(pairs) == {("a", "c"), ("b", "c"), ("e", "c"), ("d", "b")}
    assert pairs[("d", "b")].identical and pairs[("d", "b")].verdict.startswith("identical")
    planned = compare_family(m, names, pairs=[("a", "b"), ("e", "c")])
    assert planned.rule.family == "planned pairs" and planned.rule.pairs == 2
    everything = compare_family(m, names)
    assert everything.rule.pairs == 6  # 4 distinct systems
    assert [(r.a, r.b) for r in everything.rows if r.identical] == [("b", "d")]
    assert everything.rule.identical == [["b", "d"]]
    with pytest.raises(InputError, match="unknown system 'zz'"):
        compare_family(m, names, baseline="zz")
    with pytest.raises(InputError, match="not both"):
        compare_family(m, names, baseline="a", pairs=[("b", "c")])


def test_identical_groups_need_every_metric():
    a = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    b = np.array([[0.5, 0.1], [0.5, 0.2], [0.0, 1.0]])
    assert identical_groups([a], ["x", "y", "z"]) == [["x", "y"]]
    assert identical_groups([a, b], ["x", "y", "z"]) == []


def test_parse_pairs():
    assert parse_pairs("a:b, c:d") == [("a", "b"), ("c", "d")]
    assert parse_pairs([["a", "b"]]) == [("a", "b")]
    for bad in ("a", "a:a", "a:b:c", ""):
        with pytest.raises(InputError):
            parse_pairs(bad)


# --------------------------------------------------------------------------- printing


def test_printing_never_rounds_across_the_decision():
    assert fmt_end(0.0003) == "+0.03"
    assert fmt_end(-0.0000004) == "-0.00004"
    assert fmt_end(0.0) == "0.0"
    assert fmt_end(0.123) == "+12.3"
    assert fmt_p(0.04996) == "0.04996"
    assert fmt_p(0.05) == "0.05"
    assert fmt_p(0.0123) == "0.0123"
    assert fmt_p(None) == ""


def test_summary_and_terminal_name_the_rule(tmp_path):
    rng = np.random.default_rng(4)
    m = (rng.random((3, 60)) < 0.5).astype(float)
    m[0, :15] = 1.0
    summary = summarize(
        {"recall@5": m}, ["a", "b", "c"], "recall@5", seed=2, rounds=500, adjust="holm"
    )
    rule = summary.comparison_rule
    assert (rule.adjust, rule.family, rule.pairs, rule.seed, rule.rounds) == (
        "holm",
        "all pairs",
        3,
        2,
        500,
    )
    json.dumps(summary.to_json())  # JSON-ready
    console = Console(width=200, record=True)
    console.print(comparison_table(summary.comparisons, "recall@5", 2, 500, rule))
    text = console.export_text()
    assert "Holm over 3 pairs (all pairs)" in text and "p (Holm)" in text
    none = summarize({"recall@5": m}, ["a", "b", "c"], "recall@5", 2, 500, adjust="none")
    console = Console(width=200, record=True)
    console.print(comparison_table(none.comparisons, "recall@5", 2, 500, none.comparison_rule))
    text = console.export_text()
    assert "the seed's per-pair rule" in text and "p (Holm)" not in text


def test_cli_compare_one_pair_is_a_family_of_one(tmp_path):
    runner = CliRunner()
    out = tmp_path / "res"
    result = runner.invoke(
        app,
        ["search", "--strategies", "fixed,sentence,parent-400", "--rounds", "300", "-o", str(out)],
    )
    assert result.exit_code == 0, result.output
    one = runner.invoke(app, ["compare", str(out), "--a", "parent-400", "--b", "fixed"])
    assert one.exit_code == 0, one.output
    assert "a family of one pair (a single chosen pair)" in one.stdout
    assert "p (Holm)" not in one.stdout
    base = runner.invoke(app, ["compare", str(out), "--baseline", "fixed"])
    assert base.exit_code == 0, base.output
    assert "max-T over 2 pairs (every system against fixed)" in base.stdout  # the default
    holm = runner.invoke(app, ["compare", str(out), "--baseline", "fixed", "--adjust", "holm"])
    assert "Holm over 2 pairs (every system against fixed)" in holm.stdout
    bad = runner.invoke(app, ["compare", str(out), "--baseline", "nope"])
    assert bad.exit_code == 2 and "unknown system 'nope'" in bad.output
    none = runner.invoke(app, ["compare", str(out), "--adjust", "none"])
    assert none.exit_code == 0 and "the seed's per-pair rule" in none.stdout


def test_interval_side_is_fixed_by_the_decision():
    # A test that accepts every shift cannot put a rejected pair's interval across 0:
    # the decision, not the inverted test, says on which side of 0 each end lies.
    def always(delta, idx):
        return np.ones(delta.shape, dtype=bool)

    est = np.array([0.5, -0.2, 0.3])
    reject = np.array([True, True, False])
    low, high = paired_tests._ends(est, reject, always, np.full(3, -1.0), np.full(3, 1.0))
    assert 0 < low[0] <= 0.5 and high[0] == 1.0
    assert high[1] < 0 and low[1] == -1.0
    assert low[2] == -1.0 and high[2] == 1.0


def test_signflip_interval_ends_are_where_the_test_turns():
    # The exact ends (h-th smallest root) equal what a search over shifts finds: the
    # test of a shift just inside an end accepts, just outside it rejects.
    rng = np.random.default_rng(12)
    for trial in range(25):
        n = int(rng.integers(5, 60))
        a = rng.random(n).round(2)
        b = np.where(rng.random(n) < 0.5, a, rng.random(n).round(2)) + 0.1 * rng.normal()
        p, low, high = verdicts.signflip_interval(a, b, level=0.05, rounds=999, seed=trial)
        flips = paired_tests.Flips((a - b)[:, None], 999, trial)

        def pv(x, flips=flips):
            return flips.p_values(np.array([x]), np.array([0]))[0]

        assert p == pv(0.0) and low <= (a - b).mean() <= high
        eps = 1e-9
        assert pv(low + eps) >= 0.05 and pv(high - eps) >= 0.05
        assert low == 0.0 or low <= -1.0 or pv(low - eps) < 0.05
        assert high == 0.0 or high >= 1.0 or pv(high + eps) < 0.05
        assert (p < 0.05) == (low > 0 or high < 0)


def test_stats_config_keys_choose_rule_and_family(tmp_path):
    from ragmeter.inputs.config import load_config

    toml = tmp_path / "ragmeter.toml"
    toml.write_text('[stats]\nadjust = "none"\npairs = ["fixed:sentence", "a:b"]\n')
    cfg = load_config(toml)
    assert cfg.adjust == "none" and cfg.pairs == ("fixed:sentence", "a:b")
    assert parse_pairs(cfg.pairs) == [("fixed", "sentence"), ("a", "b")]
    toml.write_text('[stats]\nbaseline = "fixed"\n')
    assert load_config(toml).baseline == "fixed"
    for bad in ('adjust = "bonferroni"', 'baseline = "a"\npairs = ["a:b"]'):
        toml.write_text(f"[stats]\n{bad}\n")
        with pytest.raises(InputError):
            load_config(toml)


def test_search_with_a_baseline_saves_the_family(tmp_path):
    out = tmp_path / "res"
    result = CliRunner().invoke(
        app,
        ["search", "--strategies", "fixed,sentence,recursive", "--baseline", "fixed"]
        + ["--rounds", "300", "-o", str(out)],
    )
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text())
    rule = summary["comparison_rule"]
    assert rule["family"] == "every system against fixed" and rule["pairs"] == 2
    assert {(c["a"], c["b"]) for c in summary["comparisons"]} == {
        ("sentence", "fixed"),
        ("recursive", "fixed"),
    }
    assert rule["adjust"] == "maxt"  # the default rule
    shown = " ".join(result.stdout.split())
    assert "Westfall-Young step-down max-T over 2 pairs (every system against fixed)" in shown


def test_mcnemar_large_counts_and_other_confidence():
    n, k = 2100, 1000
    exact = 2 * sum(math.comb(n, i) for i in range(k + 1)) / 2**n
    assert mcnemar_exact(n - k, k) == pytest.approx(exact, rel=1e-9)
    rng = np.random.default_rng(1)
    m = (rng.random((3, 50)) < 0.5).astype(float)
    none = compare_family(m, list("abc"), adjust="none", alpha=0.1, rounds=500)
    assert "90% paired percentile" in none.rule.header
    for r in none.rows:
        single = stats.paired(m[ord(r.a) - 97], m[ord(r.b) - 97], 500, confidence=0.9)
        assert r.difference == single.difference and r.level == 0.1


def test_a_rule_over_clusters_records_how_many_documents_its_flips_kept_whole():
    rng = np.random.default_rng(3)
    m = rng.integers(0, 2, size=(3, 40)).astype(float)
    codes = np.repeat(np.arange(8), 5)  # 8 documents of 5 questions
    rule = compare_family(m, list("abc"), rounds=500, seed=1, clusters=codes).rule
    assert rule.clusters == 8
    assert rule.to_dict()["clusters"] == 8
    assert "sign flips of whole clusters (8 documents)" in rule.header
    plain = compare_family(m, list("abc"), rounds=500, seed=1).rule
    assert plain.clusters == 0 and "clusters" not in plain.to_dict()  # as written before


def test_a_rule_saved_before_constraints_were_recorded_reads_without_them():
    rng = np.random.default_rng(4)
    m = rng.random((3, 30))
    saved = compare_family(m, list("abc"), rounds=500, seed=1).rule.to_dict()
    saved.pop("constraints")
    rule = verdicts.Rule.from_dict(saved)
    assert rule.constraints is False
    assert "each step over the pairs that can be true together" not in rule.header


def test_the_per_pair_rule_over_one_pair_says_pair_not_pairs():
    rng = np.random.default_rng(5)
    m = rng.random((2, 30))
    header = compare_family(m, ["a", "b"], adjust="none", rounds=500, seed=1).rule.header
    assert "no adjustment for the 1 pair (" in header
    three = compare_family(rng.random((3, 30)), list("abc"), adjust="none", rounds=500, seed=1)
    assert "no adjustment for the 3 pairs (" in three.rule.header


# --------------------------------------------------------------------------- who won


def _every_rule_s_table():
    """Tables under every rule (with and without clusters) over systems that differ,
    tie and are identical."""
    rng = np.random.default_rng(21)
    m = (rng.random((4, 80)) < [[0.2], [0.5], [0.55], [0.9]]).astype(float)
    m = np.vstack([m, m[1]])  # e is identical to b
    names = list("abcde")
    codes = np.repeat(np.arange(16), 5)
    for adjust in ("maxt", "holm", "none"):
        yield compare_family(m, names, adjust=adjust, rounds=500)
        yield compare_family(m, names, adjust=adjust, rounds=500, clusters=codes)


def test_a_row_carries_who_won_and_its_verdict_is_worded_from_it():
    kinds = set()
    for table in _every_rule_s_table():
        for r in table.rows:
            assert (r.winner is not None) == r.separated
            if r.identical:
                assert r.winner is None and r.verdict.startswith("identical")
            elif r.separated:
                assert r.winner == (r.a if r.difference.mean > 0 else r.b)
                assert r.verdict == stats.verdict_text(r.winner, "")
            else:
                assert r.verdict.startswith("tie")
            kinds.add("identical" if r.identical else "won" if r.separated else "tie")
    assert kinds == {"identical", "won", "tie"}


def test_an_older_row_without_a_winner_reads_back_with_the_one_the_rule_decided():
    for table in _every_rule_s_table():
        for r in table.rows:
            data = json.loads(json.dumps(r.to_dict()))
            assert data["winner"] == r.winner
            del data["winner"]  # a summary written before rows carried it
            assert verdicts.Row.from_dict(data) == r

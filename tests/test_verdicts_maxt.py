"""The step-down max-T rule: a direct transcription of Westfall and Young's algorithm
decides the same rows, the flips are shared by every pair, and pairs that move
together are not paid for twice."""

from __future__ import annotations

import numpy as np
import pytest

from ragmeter.comparison.formatting import column_labels
from ragmeter.comparison.verdicts import compare_family
from ragmeter.stats.draws import _sign_blocks
from ragmeter.stats.maxt import null_p_values, step_down
from ragmeter.stats.paired_tests import Flips, mcnemar_exact


def _signs(n: int, rounds: int, seed: int) -> np.ndarray:
    return np.concatenate([s for _, s in _sign_blocks(n, rounds, seed)])


def _set_partitions(items):
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for p in _set_partitions(rest):
        yield [[first], *p]
        for i in range(len(p)):
            yield [*p[:i], [first, *p[i]], *p[i + 1 :]]


def _true_together(pairs, m):
    """Each partition of the systems, as the set of pairs (by position) it makes true."""
    out = []
    for part in _set_partitions(list(range(m))):
        group = {s: g for g, members in enumerate(part) for s in members}
        out.append({c for c, (i, j) in enumerate(pairs) if group[i] == group[j]})
    return out


def _reference(
    x: np.ndarray, pairs, rounds: int, seed: int, alpha: float, binary: bool, constraints=True
):
    """Westfall-Young step-down min-p with Shaffer's logical constraints, loop by loop.

    Up to the first pair not rejected, step j takes each round's smallest p over every
    set of pairs that can be true together, holds pair j and no rejected pair, and
    uses the set with the most rounds reaching pair j's p (and the lowest level);
    later steps use every pair not yet passed.
    """
    n = x.shape[1]
    signs = _signs(n, rounds, seed)
    d = np.stack([x[i] - x[j] for i, j in pairs], axis=1)
    k = len(pairs)
    if binary:
        raw = [mcnemar_exact(int((d[:, c] > 0).sum()), int((d[:, c] < 0).sum())) for c in range(k)]
        null = np.empty((rounds, k))
        for b in range(rounds):
            flipped = signs[b][:, None] * d
            for c in range(k):
                null[b, c] = mcnemar_exact(
                    int((flipped[:, c] > 0).sum()), int((flipped[:, c] < 0).sum())
                )
    else:
        sums = np.abs(signs @ d)
        obs = np.abs(d.sum(axis=0))
        tol = 1e-9 * np.abs(d).sum(axis=0)
        raw = [((sums[:, c] >= obs[c] - tol[c]).sum() + 1) / (rounds + 1) for c in range(k)]
        null = np.empty((rounds, k))
        for c in range(k):
            for b in range(rounds):
                v = sums[b, c] - tol[c]
                null[b, c] = ((sums[:, c] >= v).sum() + (obs[c] >= v)) / (rounds + 1)
    adj, levels = _step_down_written_out(raw, null, pairs, x.shape[0], alpha, constraints)
    return np.array(raw), adj, levels


def _step_down_written_out(raw, null, pairs, m: int, alpha: float, constraints: bool = True):
    """The step-down of :func:`_reference` on given p-values: (adjusted p, levels)."""
    rounds, k = null.shape
    order = sorted(range(k), key=lambda c: raw[c])
    adj = [0.0] * k
    levels = [0.0] * k
    running = 0.0
    h = next(h for h in range(rounds + 1) if (h + 1) / (rounds + 1) >= alpha)
    crit = []  # each step's level: the h-th smallest of the rounds' smallest p
    together = _true_together(pairs, m)
    for j, c in enumerate(order):
        if constraints and running < alpha:  # every earlier pair rejected: constrained sets
            sets = [s for s in together if c in s and not s & set(order[:j])]
        else:
            sets = [set(order[j:])]
        hits, level = 0, 1.0
        for rest in sets:
            smallest = sorted(min(null[b, r] for r in rest) for b in range(rounds))
            level = min(level, smallest[h - 1])
            hits = max(hits, sum(1 for v in smallest if v <= raw[c] * (1 + 1e-9)))
        crit.append(min(level, alpha))
        running = max(running, (hits + 1) / (rounds + 1))
        adj[c] = running
    stop = next((j for j, c in enumerate(order) if adj[c] >= alpha), None)
    for j, c in enumerate(order):
        levels[c] = crit[j if stop is None or j < stop else stop]
    return np.array(adj), np.array(levels)


def _table(rng, m, n, binary, share=0.3, lift=0.0):
    base = rng.random(n)
    x = np.where(rng.random((m, n)) < share, rng.random((m, n)), base)
    x[0] = np.minimum(1.0, x[0] + lift)
    return (x > 0.4).astype(float) if binary else x.round(2)


@pytest.mark.parametrize("binary", [True, False])
@pytest.mark.parametrize("case", range(4))
def test_matches_the_algorithm_written_out(binary, case):
    rng = np.random.default_rng(case)
    m, n, rounds = (4, 30, 300) if case % 2 else (3, 60, 250)
    x = _table(rng, m, n, binary, lift=0.15 * case)
    names = [f"s{i}" for i in range(m)]
    got = compare_family(x, names, adjust="maxt", rounds=rounds, seed=case + 1, identical=[])
    pairs = [(i, j) for i in range(m) for j in range(i + 1, m)]
    raw, adj, levels = _reference(x, pairs, rounds, case + 1, 0.05, binary)
    assert [r.p_value for r in got.rows] == pytest.approx(raw, rel=1e-12)
    assert [r.p for r in got.rows] == pytest.approx(adj, rel=1e-12)
    assert [r.level for r in got.rows] == pytest.approx(levels, rel=1e-12)
    for r in got.rows:
        assert r.separated == (r.p < 0.05)
        assert ("better" in r.verdict) == (r.difference.low > 0 or r.difference.high < 0)


@pytest.mark.parametrize("case", range(6))
def test_many_rejections_match_the_algorithm_written_out(case, monkeypatch):
    """Five systems, two of them better: several steps run under the constraints, and
    with them switched off (more than MAX_SYSTEMS) the plain step-down is exact too."""
    import ragmeter.stats.maxt as maxt

    rng = np.random.default_rng(100 + case)
    binary = case % 2 == 0
    m, n, rounds = 5, 80, 300
    x = _table(rng, m, n, binary, share=0.3)
    if binary:  # misses turned into hits, and hits into misses
        x[0] = np.maximum(x[0], rng.random(n) < 0.9)
        x[1] = np.maximum(x[1], rng.random(n) < 0.5)
        x[4] = np.minimum(x[4], rng.random(n) < 0.3)
    else:
        x[0] = np.minimum(1.0, x[0] + 0.5)
        x[1] = np.minimum(1.0, x[1] + 0.25)
        x[4] = np.maximum(0.0, x[4] - 0.4)
    names = [f"s{i}" for i in range(m)]
    pairs = [(i, j) for i in range(m) for j in range(i + 1, m)]
    for constraints in (True, False):
        monkeypatch.setattr(maxt, "MAX_SYSTEMS", 8 if constraints else 4)
        got = compare_family(x, names, adjust="maxt", rounds=rounds, seed=case, identical=[])
        _, adj, levels = _reference(x, pairs, rounds, case, 0.05, binary, constraints)
        assert got.rule.constraints == constraints
        assert sum(r.separated for r in got.rows) >= 3  # the constraints had steps to act on
        assert [r.p for r in got.rows] == pytest.approx(adj, rel=1e-12)
        assert [r.level for r in got.rows] == pytest.approx(levels, rel=1e-12)


def test_tiny_graded_scores_tie_as_the_algorithm_written_out():
    """The tie tolerance scales with the pair's differences: scores a millionth of the
    usual size give the same decisions, and the written-out rule's p-values."""
    rng = np.random.default_rng(21)
    x = _table(rng, 3, 40, False, lift=0.2) * 1e-6
    names = ["s0", "s1", "s2"]
    got = compare_family(x, names, adjust="maxt", rounds=300, seed=4, identical=[])
    raw, adj, levels = _reference(x, [(0, 1), (0, 2), (1, 2)], 300, 4, 0.05, False)
    assert [r.p_value for r in got.rows] == pytest.approx(raw, rel=1e-12)
    assert [r.p for r in got.rows] == pytest.approx(adj, rel=1e-12)
    assert min(adj) < 0.05 < max(adj)
    scaled = compare_family(x * 1e6, names, adjust="maxt", rounds=300, seed=4, identical=[])
    assert [r.p for r in scaled.rows] == [r.p for r in got.rows]


@pytest.mark.parametrize("seed", range(4))
def test_step_down_on_continuous_p_values_matches_the_written_out_rule(seed):
    """No ties among the rounds' p-values: each step's level is exactly the h-th
    smallest of its set's minima, and each count is exact."""
    rng = np.random.default_rng(seed)
    m, rounds = 4, 200
    pairs = [(i, j) for i in range(m) for j in range(i + 1, m)]
    null = rng.random((rounds, len(pairs)))
    raw = np.array([1e-4, 2e-4, 3e-3, 0.02, 0.3, 0.6])[rng.permutation(len(pairs))]
    adj, reject, levels = step_down(raw, null, 0.05, pairs)
    want_adj, want_levels = _step_down_written_out(raw, null, pairs, m, 0.05)
    assert reject.sum() >= 2
    assert adj == pytest.approx(want_adj, rel=1e-12)
    assert levels == pytest.approx(want_levels, rel=1e-12)


@pytest.mark.parametrize("seed", [16, 25])
def test_each_steps_level_is_the_exact_order_statistic(seed):
    """A step's level is the h-th smallest of the rounds' minima, not a neighbour that
    a partial partition leaves at that place (seeds where np.partition at h - 2 or h
    puts another value at index h - 1, at 10,000 rounds)."""
    from ragmeter.stats.paired_tests import _hits_needed

    rounds, h = 10_000, _hits_needed(0.05, 10_000)
    q = np.random.default_rng(seed).random(rounds) * 0.9  # its h-th smallest below alpha
    null = np.ones((rounds, 3))
    null[:, 0] = q  # the smallest p of every round over any set holding pair 0
    for pairs in ([(0, 1), (0, 2), (1, 2)], None):  # constrained, and plain
        _, _, levels = step_down(np.array([1e-6, 0.5, 0.6]), null, 0.05, pairs)
        assert levels[0] == np.sort(q)[h - 1] < 0.05


def test_a_round_at_the_threshold_counts_as_reaching_it():
    """A round whose smallest p equals the pair's p (within the relative tolerance)
    counts, under the constraints as in the plain step-down."""
    pairs = [(0, 1), (0, 2), (1, 2)]
    raw = np.array([0.001, 0.5, 0.6])
    null = np.full((99, 3), 0.9)
    null[:4, 0] = 0.001 * (1.0 + 1e-9)  # four rounds exactly at the first pair's threshold
    for family in (pairs, None):  # constrained, and plain
        adj, _, _ = step_down(raw, null, 0.05, family)
        assert adj[0] == pytest.approx(5 / 100)


def test_the_constraints_hold_for_every_step_up_to_the_first_pair_kept():
    """The first pair is rejected with the most rounds a rejection allows (3 of 99:
    (3 + 1) / 100 < 0.05); the next step still takes only the pairs that can be true
    with it, so rounds where the third pair alone is small do not count against it."""
    pairs = [(0, 1), (0, 2), (1, 2)]
    raw = np.array([0.001, 0.01, 0.5])
    null = np.ones((99, 3))
    null[:3, 0] = 0.0005
    null[10:15, 2] = 0.005
    adj, reject, _ = step_down(raw, null, 0.05, pairs)
    assert list(reject[:2]) == [True, True] and adj[1] == pytest.approx(0.04)
    plain, kept, _ = step_down(raw, null, 0.05)  # all pairs left: 5 more rounds count
    assert plain[1] == pytest.approx(0.06) and not kept[1]


def test_partitions_are_listed_once_each():
    from ragmeter.stats.maxt import _partitions

    bell = [1, 2, 5, 15, 52, 203, 877, 4140]
    for m, count in enumerate(bell, start=1):
        groups = _partitions(m)
        assert groups.shape == (count, m)
        assert len({tuple(g) for g in groups}) == count
        first = groups[:, 0]
        assert np.all(first == 0)  # canonical labels: each group opens in order
        assert np.all(groups.max(axis=1) < m)


def test_constraints_apply_from_three_to_eight_systems_with_rounds_to_reject():
    from ragmeter.stats.maxt import MAX_SYSTEMS, constrained

    def every(m):
        return [(i, j) for i in range(m) for j in range(i + 1, m)]

    assert MAX_SYSTEMS == 8
    assert constrained(every(3), 1000, 0.05) and constrained(every(8), 1000, 0.05)
    assert not constrained(every(9), 1000, 0.05)  # 21,147 partitions: plain max-T
    assert not constrained(every(2), 1000, 0.05)  # one pair
    assert not constrained([(0, 1), (0, 2), (0, 3)][:1], 1000, 0.05)
    assert not constrained(every(4), 10, 0.05)  # too few rounds to reject anything
    assert not constrained(None, 1000, 0.05)


def test_flips_are_shared_by_every_pair():
    """Round b flips question i's whole row: one pair's flipped wins follow from the signs."""
    rng = np.random.default_rng(7)
    x = _table(rng, 3, 40, True)
    pairs = [(0, 1), (0, 2), (1, 2)]
    d = np.stack([x[i] - x[j] for i, j in pairs], axis=1)
    counts = [
        (int((d[:, c] > 0).sum()), int((d[:, c] == 0).sum()), int((d[:, c] < 0).sum()))
        for c in range(3)
    ]
    flips = Flips(d, 200, 5)
    _, null = null_p_values(flips, True, counts)
    signs = _signs(40, 200, 5)
    for b in (0, 17, 199):
        f = signs[b][:, None] * d
        for c in range(3):
            assert null.column(c)[b] == mcnemar_exact(
                int((f[:, c] > 0).sum()), int((f[:, c] < 0).sum())
            )


def test_pairs_that_move_together_are_paid_for_once():
    """Two copies of one comparison: max-T's adjusted p stays near the raw p, Holm doubles it."""
    a = np.array([1.0] * 9 + [0.0] * 31)
    b = np.array([0.0] * 40)
    x = np.stack([a, b, b.copy()])
    names = ["a", "b", "c"]
    pairs = [("a", "b"), ("a", "c")]
    holm = compare_family(x, names, adjust="holm", pairs=pairs, identical=[], rounds=4000, seed=3)
    maxt = compare_family(x, names, adjust="maxt", pairs=pairs, identical=[], rounds=4000, seed=3)
    raw = mcnemar_exact(9, 0)  # 2 / 2**9
    assert [r.p for r in holm.rows] == [2 * raw, 2 * raw]
    for r in maxt.rows:
        assert r.p_value == raw
        assert r.p == pytest.approx(raw, abs=0.003)  # Monte Carlo, 4000 rounds
        assert r.verdict == "a better"
    # the level max-T used is about alpha itself, not alpha / 2
    assert maxt.rows[0].level > 0.04


def test_step_down_is_monotone_and_levels_match_the_decision():
    rng = np.random.default_rng(11)
    for _ in range(20):
        k = int(rng.integers(2, 8))
        null = rng.random((500, k))  # valid p-values: uniform under the null
        raw = rng.random(k) ** 3
        adj, reject, levels = step_down(raw, null, 0.05)
        order = np.argsort(raw, kind="stable")
        assert np.all(np.diff(adj[order]) >= 0)
        assert np.all(adj >= 1 / 501)
        assert np.all(levels <= 0.05) and np.all(levels > 0)
        for c in range(k):
            if reject[c]:
                assert raw[c] < levels[c]
            assert reject[c] == (adj[c] < 0.05)


def test_a_family_of_one_is_its_own_exact_test():
    rng = np.random.default_rng(2)
    x = _table(rng, 2, 50, True, lift=0.2)
    holm = compare_family(x, ["a", "b"], adjust="holm", rounds=500, seed=1)
    maxt = compare_family(x, ["a", "b"], adjust="maxt", rounds=500, seed=1)
    assert maxt.rows == holm.rows
    assert maxt.rule.p_label == "p"


def test_max_t_is_the_default():
    x = _table(np.random.default_rng(1), 3, 30, True)
    assert compare_family(x, ["a", "b", "c"], rounds=200).rule.adjust == "maxt"


def test_rule_is_named_everywhere():
    rng = np.random.default_rng(4)
    x = _table(rng, 4, 30, False)
    v = compare_family(x, ["a", "b", "c", "d"], adjust="maxt", rounds=300, seed=1)
    assert v.rule.adjust == "maxt"
    assert v.rule.header.startswith("Rule: Westfall-Young step-down max-T over 6 pairs (all pairs)")
    assert "300 sign flips of whole questions" in v.rule.header
    assert v.rule.p_label == "p (max-T)"
    assert column_labels(v.rule) == ("A - B [max-T-level CI]", "p (max-T)")
    assert v.rule.to_dict()["header"] == v.rule.header


def test_max_t_is_never_stricter_than_holm_on_these_tables():
    """Each step's level is at least Holm's (Bonferroni bounds it), up to Monte Carlo error."""
    rng = np.random.default_rng(5)
    for case in range(6):
        x = _table(rng, 5, 120, case % 2 == 0, share=0.2, lift=0.1)
        names = [f"s{i}" for i in range(5)]
        holm = compare_family(x, names, adjust="holm", rounds=2000, seed=case + 1)
        maxt = compare_family(x, names, adjust="maxt", rounds=2000, seed=case + 1)
        for h, t in zip(holm.rows, maxt.rows, strict=True):
            assert t.level >= h.level * 0.9
            if h.separated:
                assert t.separated

"""Questions that share a document: design effects, cluster bootstrap, cluster flips."""

from __future__ import annotations

import numpy as np
import pytest

from ragmeter import stats
from ragmeter.comparison.verdicts import compare_family
from ragmeter.errors import InputError
from ragmeter.stats.clusters import (
    MIN_CLUSTERS,
    Design,
    cluster_bootstrap_many,
    cluster_codes,
    clusters_matter,
    design_effects,
    documents_to_separate,
    variance_parts,
    widening,
)
from ragmeter.stats.paired_tests import Flips


def test_cluster_codes_number_clusters_by_first_appearance():
    codes, groups = cluster_codes(["b.md", "a.md", "b.md", 3, "3"])
    assert codes.tolist() == [0, 1, 0, 2, 2]  # 3 and "3" are one label
    assert groups == 3


def test_widening_is_students_t_over_normal_with_the_plug_in_correction():
    # t(9, 0.975) = 2.2622, t(29, 0.975) = 2.0452 (tables)
    assert widening(10) == pytest.approx(2.2622 / 1.95996 * np.sqrt(10 / 9), rel=1e-4)
    assert widening(30) == pytest.approx(2.0452 / 1.95996 * np.sqrt(30 / 29), rel=1e-4)
    assert widening(10) > widening(30) > widening(1000) > 1.0


def test_one_question_per_cluster_resamples_exactly_as_the_question_bootstrap():
    rng = np.random.default_rng(3)
    x = (rng.random(60) < 0.6).astype(float)
    q = stats.bootstrap(x, rounds=2000, seed=5)
    c = cluster_bootstrap_many(x[None, :], np.arange(60), rounds=2000, seed=5)[0]
    w = widening(60)
    assert c.mean == q.mean
    assert c.low == pytest.approx(q.mean - w * (q.mean - q.low), abs=1e-12)
    assert c.high == pytest.approx(q.mean + w * (q.high - q.mean), abs=1e-12)
    assert (c.seed, c.rounds, c.rng, c.n) == (5, 2000, "mulberry32", 60)
    assert c.method == "cluster percentile, t-widened"


def test_cluster_interval_stays_within_the_scores_range():
    x = np.array([1.0] * 18 + [0.0] * 2)
    est = cluster_bootstrap_many(x[None, :], np.repeat(np.arange(10), 2), rounds=1000)[0]
    assert 0.0 <= est.low <= est.mean <= est.high <= 1.0


def test_design_effect_is_one_without_clustering_and_m_when_clusters_agree_inside():
    rng = np.random.default_rng(1)
    x = rng.random(40)
    one = design_effects(x[None, :], np.arange(40), rounds=500)[0]
    assert one.deff == pytest.approx(1.0)
    assert one.low == pytest.approx(1.0) and one.high == pytest.approx(1.0)
    per_doc = np.repeat(rng.random(10), 4)  # every question of a document scores alike
    full = design_effects(per_doc[None, :], np.repeat(np.arange(10), 4), rounds=500)[0]
    assert full.deff == pytest.approx(4.0)
    assert full.effective == pytest.approx(10.0)
    assert (full.clusters, full.questions, full.seed, full.rounds) == (10, 40, 1, 500)


def test_design_effect_is_none_when_every_score_is_equal():
    d = design_effects(np.ones((1, 12)), np.repeat(np.arange(4), 3), rounds=200)[0]
    assert d.deff is None and d.effective is None and not d.above_one


def test_design_effect_round_trips_through_its_dict():
    d = design_effects(np.arange(12.0)[None, :] % 5, np.repeat(np.arange(4), 3), rounds=200)[0]
    again = Design.from_dict(d.to_dict())
    assert again == d
    assert d.to_dict()["effective"] == pytest.approx(d.effective)


def test_one_cluster_is_refused_with_a_line_saying_so():
    with pytest.raises(InputError, match="at least two clusters"):
        design_effects(np.ones((1, 5)), np.zeros(5, dtype=int))
    with pytest.raises(InputError, match="one label per question"):
        cluster_bootstrap_many(np.ones((1, 5)), np.zeros(4, dtype=int))


def test_auto_rule_needs_enough_clusters_and_an_interval_above_one():
    above = Design(40, 200, 2.0, 1.3, 2.8, 1000, 1)
    around = Design(40, 200, 1.2, 0.8, 1.7, 1000, 1)
    assert clusters_matter([around, above], MIN_CLUSTERS)
    assert not clusters_matter([around], 60)
    assert not clusters_matter([above], MIN_CLUSTERS - 1)


def test_cluster_flips_with_one_question_per_cluster_equal_question_flips():
    rng = np.random.default_rng(2)
    d = rng.normal(size=(30, 2))
    q = Flips(d, 500, 7)
    c = Flips(d, 500, 7, clusters=np.arange(30))
    assert all(np.array_equal(q.column(i), c.column(i)) for i in range(2))
    assert np.array_equal(q.b, c.b)


def test_cluster_flips_flip_every_question_of_a_document_together():
    d = np.array([[1.0], [2.0], [4.0], [8.0]])
    f = Flips(d, 200, 3, clusters=np.array([0, 0, 1, 1]))
    # each round's flipped sum is +-3 +- 12: never a mix within a document
    assert set(np.abs(f.column(0)).tolist()) <= {9.0, 15.0}
    assert set(np.abs(f.b).tolist()) <= {0.0, 4.0}


def test_question_level_calls_better_where_whole_documents_say_tie():
    # 4 documents of 10 questions: A wins every question of 3 documents, loses all of 1.
    codes = np.repeat(np.arange(4), 10)
    a = np.ones(40)
    b = np.where(codes == 3, 1.0, 0.0)
    a = np.where(codes == 3, 0.0, a)
    m = np.vstack([a, b])
    plain = compare_family(m, ["A", "B"], rounds=2000, seed=1)
    assert plain.rows[0].verdict == "A better"  # 30 wins, 10 losses: McNemar p ~ 0.002
    clustered = compare_family(m, ["A", "B"], rounds=2000, seed=1, clusters=codes)
    assert not clustered.rows[0].separated  # 4 documents: 16 sign patterns, p >= 1/8
    assert clustered.rule.clusters == 4
    assert "whole clusters" in clustered.rule.test
    assert clustered.rows[0].difference.method == "cluster sign-flip inversion"
    assert clustered.rows[0].difference.low <= 0 <= clustered.rows[0].difference.high


def test_max_t_over_clusters_names_documents_in_its_header():
    rng = np.random.default_rng(4)
    m = rng.random((3, 60))
    table = compare_family(m, ["a", "b", "c"], rounds=500, clusters=np.repeat(np.arange(12), 5))
    assert "sign flips of whole clusters (12 documents)" in table.rule.header
    assert table.rule.to_dict()["clusters"] == 12
    plain = compare_family(m, ["a", "b", "c"], rounds=500)
    assert "clusters" not in plain.rule.to_dict()  # question-level: as before


def test_seed_rule_with_clusters_reads_the_cluster_bootstrap_of_the_difference():
    rng = np.random.default_rng(5)
    m = rng.random((2, 40))
    codes = np.repeat(np.arange(8), 5)
    table = compare_family(m, ["a", "b"], adjust="none", rounds=500, clusters=codes)
    diff = cluster_bootstrap_many((m[0] - m[1])[None, :], codes, rounds=500, confidence=0.95)[0]
    row = table.rows[0]
    assert (row.difference.low, row.difference.high) == (diff.low, diff.high)
    assert "cluster bootstrap" in table.rule.interval


def test_variance_parts_split_between_and_within_documents():
    codes = np.repeat(np.arange(3), 4)
    same_inside = np.repeat([0.0, 1.0, 2.0], 4)
    between, within = variance_parts(same_inside, codes)
    assert within == 0.0 and between == pytest.approx(1.0)
    no_doc = np.tile([0.0, 1.0, 0.0, 1.0], 3)
    between, within = variance_parts(no_doc, codes)
    assert between == 0.0 and within > 0


def test_documents_to_separate_say_when_more_questions_on_the_same_documents_cannot():
    rng = np.random.default_rng(6)
    codes = np.repeat(np.arange(10), 5)
    doc_effect = np.repeat(rng.normal(0, 0.3, 10), 5)
    need = documents_to_separate(doc_effect + rng.normal(0, 0.1, 50), codes, 0.05)
    assert need.more_questions is None  # the documents' own spread stays
    assert need.floor > 0.05
    assert need.documents > 10 and need.more_documents == need.documents - 10
    flat = documents_to_separate(rng.normal(0, 0.3, 50), codes, 0.5)
    assert flat.more_questions is not None
    assert flat.per_document == 5.0


# --------------------------------------------------------------- edges, auto, one cluster


def _unequal_codes(n: int = 92, groups: int = 26, seed: int = 0) -> np.ndarray:
    """Unequal clusters (1 to 9 questions), as documents written from."""
    rng = np.random.default_rng(seed)
    return cluster_codes(np.sort(rng.integers(0, groups, n)))[0]


def test_a_clustered_interval_at_the_edge_is_never_narrower_than_the_question_level_one():
    from ragmeter.comparison.formatting import shown_interval
    from ragmeter.stats.clusters import effective_questions
    from ragmeter.stats.exact import clopper_pearson, clopper_pearson_effective

    codes = _unequal_codes()
    for misses in ([3, 40, 77], [], [0]):  # 96.7%, 100%, one miss
        x = np.ones(92)
        x[misses] = 0.0
        plain = stats.bootstrap_many([x], rounds=2000)[0]
        clustered = cluster_bootstrap_many([x], codes, rounds=2000)[0]
        q_low, q_high, _ = shown_interval(plain)
        c_low, c_high, which = shown_interval(clustered)
        assert which == "exact"
        assert c_low <= q_low and c_high >= q_high  # grouping never claims more certainty
        assert (q_low, q_high) == clopper_pearson(92 - len(misses), 92)
        deff = design_effects([x], codes, rounds=200)[0].deff
        e = effective_questions(92, deff, int(codes.max()) + 1)
        assert e < 92
        assert clustered.exact == clopper_pearson_effective((92 - len(misses)) * e / 92, e)
    # 89 of 92: exact [90.8, 99.3] by question; by document wider, never [93.2, 100]
    x = np.ones(92)
    x[[3, 40, 77]] = 0.0
    low, high = cluster_bootstrap_many([x], codes, rounds=2000)[0].exact
    assert round(low * 100, 1) <= 90.8 and high > 0.993


def test_effective_questions_count_a_design_effect_below_one_as_one():
    from ragmeter.stats.clusters import effective_questions

    z_over_t = 1.959964 / 2.0595  # t(25, 0.975)
    assert effective_questions(92, 0.6, 26) == pytest.approx(92 * z_over_t**2, rel=1e-4)
    assert effective_questions(92, None, 26) == effective_questions(92, 1.0, 26)
    assert effective_questions(92, 2.0, 26) == pytest.approx(effective_questions(92, 1.0, 26) / 2)


def test_auto_always_resamples_from_30_documents_and_pretests_below():
    from ragmeter.stats.clusters import AUTO_CLUSTERS, decide_clusters

    rng = np.random.default_rng(5)
    m = (rng.random((4, 150)) < 0.6).astype(float)  # no document structure
    for groups in (AUTO_CLUSTERS, 60):
        labels = [f"d{i % groups}" for i in range(150)]
        info, codes = decide_clusters(m, labels, "auto", 1, 300)
        assert info.used and codes is not None and int(codes.max()) + 1 == groups
    labels = [f"d{i % 29}" for i in range(150)]
    info, codes = decide_clusters(m, labels, "auto", 1, 300)
    assert not info.used and codes is None and "fewer than 30" in info.reason


def test_one_cluster_asked_for_is_said_not_silently_question_level():
    from ragmeter.stats.clusters import decide_clusters

    m = (np.random.default_rng(2).random((2, 20)) < 0.5).astype(float)
    for mode, word in (("document", "one document"), ("field", "one cluster")):
        source = "document" if mode == "document" else "field"
        info, codes = decide_clusters(m, ["x"] * 20, mode, 1, 100, source=source)
        assert codes is None and not info.used and info.count == 1
        assert f"all 20 questions are in {word}" in info.reason
    assert decide_clusters(m, ["x"] * 20, "auto", 1, 100) == (None, None)


def test_a_design_effect_present_only_in_a_difference_is_planned_for():
    from ragmeter.stats.clusters import pair_design_effect

    codes = np.repeat(np.arange(20), 5)
    doc = np.repeat(np.random.default_rng(1).normal(0, 1, 20), 5)
    noise = np.random.default_rng(2).normal(0, 0.2, (2, 100))
    a = doc + noise[0]  # each system clusters by document...
    b = doc + noise[1]  # ...the same way, so their difference does not
    c = noise[1] + np.repeat(np.random.default_rng(3).normal(0, 1, 20), 5)
    assert design_effects([a], codes, rounds=100)[0].deff > 3
    assert pair_design_effect(a - b, codes) < 1.5  # the shared effect cancels
    assert pair_design_effect(a - c, codes) > 3  # a difference of two document effects
    need = documents_to_separate(a - c, codes, 0.1)
    assert need.deff == pair_design_effect(a - c, codes)
    assert need.documents == int(np.ceil(need.questions / 5))
    flat = documents_to_separate(np.r_[np.zeros(99), 1.0], codes, 0.1)
    assert flat.deff >= 1.0  # never fewer questions than planning without clusters

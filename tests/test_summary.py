"""The typed summary: one object from computation to summary.json and back, read by every view."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
from conftest import search_example
from rich.console import Console

from ragmeter import stats
from ragmeter.cli import search_views as terminal
from ragmeter.comparison import verdicts
from ragmeter.comparison.summary import Summary, summarize
from ragmeter.errors import InputError
from ragmeter.files.io import dumps
from ragmeter.inputs.config import Config
from ragmeter.report.data import _comparisons
from ragmeter.runs.pipeline import RankedItem
from ragmeter.runs.results import Results, save_results
from ragmeter.stats import Estimate, SizeRow


def _matrix(seed: int = 3) -> np.ndarray:
    rng = np.random.default_rng(seed)
    m = (rng.random((3, 80)) < 0.6).astype(float)
    m[0, :20] = 1.0  # a is better
    return m


def test_summarize_returns_typed_objects_that_round_trip_through_json():
    m = _matrix()
    s = summarize({"recall@5": m, "mrr@5": m * 0.5}, ["a", "b", "c"], "recall@5", 4, 400)
    assert isinstance(s.estimate("a"), Estimate) and s.estimate("a", "mrr@5").seed == 4
    assert all(isinstance(r, verdicts.Row) for r in s.comparisons) and len(s.comparisons) == 3
    assert isinstance(s.comparison_rule, verdicts.Rule) and s.comparison_rule.pairs == 3
    assert all(isinstance(r, SizeRow) for r in s.sample_size["b"])
    assert s.rng == "mulberry32" and s.alpha == pytest.approx(0.05)
    text = dumps(s.to_json())
    back = Summary.from_json(json.loads(text))
    assert back == s  # every number, rule and row, unchanged
    assert dumps(back.to_json()) == text  # and written back byte for byte
    assert "k_capped" not in s.to_json()  # written only when some system was capped


def test_a_summary_without_keys_takes_the_defaults_in_one_place():
    s = Summary.from_json({})
    assert (s.metric, s.seed, s.rounds, s.confidence, s.method) == (
        "recall@5",
        1,
        10_000,
        0.95,
        "percentile",
    )
    assert s.comparisons == [] and s.comparison_rule is None and s.rng is None


def _legacy_row(low: float, high: float, p_holm: float | None) -> dict:
    """A comparison as summaries wrote them before the rule was recorded."""
    diff = {
        "mean": (low + high) / 2,
        "low": low,
        "high": high,
        "n": 50,
        "rounds": 1000,
        "seed": 1,
        "method": "percentile",
        "rng": "mulberry32",
        "confidence": 0.95,
    }
    return {
        "a": "x",
        "b": "y",
        "difference": diff,
        "p_value": 0.2,
        "p_holm": p_holm,
        "wins": 9,
        "ties": 38,
        "losses": 3,
        "verdict": "x better" if low > 0 else "tie (interval crosses 0)",
    }


def test_an_earlier_summary_reads_with_its_holm_p_and_interval_verdict():
    better = Summary.from_json({"comparisons": [_legacy_row(0.02, 0.2, 0.03)]})
    [row] = better.comparisons
    assert row.p == 0.03 and row.separated and not row.identical
    assert (row.differ, row.level) == (12, pytest.approx(0.05))
    [tie] = Summary.from_json({"comparisons": [_legacy_row(-0.1, 0.2, None)]}).comparisons
    assert tie.p == 0.2 and not tie.separated  # no Holm p: the pair's own
    console = Console(file=io.StringIO(), width=200)
    console.print(terminal.comparison_table(better.comparisons, "recall@5", 1, 1000))
    out = console.file.getvalue()
    assert "p (Holm)" in out and "0.03" in out and "+2.0" in out


@pytest.mark.parametrize(
    "damaged",
    [
        {"estimates": {"a": {"recall@5": {"mean": 0.5}}}},  # an estimate cut short
        {"comparisons": [{"a": "x"}]},
        {"sample_size": {"a": [{"n": "many"}]}},
        {"estimates": ["not", "a", "mapping"]},
    ],
)
def test_a_damaged_summary_is_one_line_naming_the_file(damaged):
    with pytest.raises(InputError, match=r"^r/summary\.json: not a summary") as err:
        Summary.from_json(damaged, "r/summary.json")
    assert "\n" not in str(err.value)


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    run = search_example(strategies=["fixed", "sentence"], rounds=300)
    path = save_results(run, tmp_path_factory.mktemp("s") / "r")
    return run, Results(path)


def test_the_run_in_memory_and_on_disk_hold_equal_summaries_and_items(saved):
    run, res = saved
    assert res.summary == run.summary
    assert res.summary.comparisons[0].verdict == run.summary.comparisons[0].verdict
    for system in res.systems:
        for qid in res.question_ids:
            mine, theirs = run.runs[system][qid], res.runs[system][qid]
            assert mine == theirs  # one item type, with rank and text alike
            assert [it.rank for it in mine] == list(range(1, len(mine) + 1))
            assert all(isinstance(it, RankedItem) and it.text for it in mine)
    # an item made by a search leaves the text to its document
    first = run.systems[0].items[0][0]
    assert first.text is None and first.rank == 1


def test_terminal_report_and_notebook_print_each_comparison_alike(saved):
    run, res = saved
    summary = res.summary
    metric = summary.metric
    console = Console(file=io.StringIO(), width=250)
    console.print(
        terminal.comparison_table(
            summary.comparisons, metric, summary.seed, summary.rounds, summary.comparison_rule
        )
    )
    printed = console.file.getvalue()
    page = _comparisons(res, summary, metric)
    import ragmeter

    notebook = ragmeter.compare(res).to_markdown()
    for row, shown in zip(summary.comparisons, page, strict=True):
        text = verdicts.shown_difference(row, metric)
        assert shown["shown"]["difference"] == text
        assert text in printed and text in notebook


# --------------------------------------------------------------------------- clusters


def _clustered(groups: int, per_doc: int, seed: int = 2) -> tuple[np.ndarray, list[str]]:
    """Three systems whose scores move together within each document."""
    rng = np.random.default_rng(seed)
    doc = rng.normal(size=(3, groups)).repeat(per_doc, axis=1)
    z = doc + 0.3 * rng.normal(size=(3, groups * per_doc))
    labels = [f"d{g}" for g in range(groups) for _ in range(per_doc)]
    return (z < 0.5).astype(float), labels


def test_clusters_none_keeps_the_question_level_numbers_bit_for_bit():
    m, labels = _clustered(12, 5)
    plain = summarize({"recall@5": m}, ["a", "b", "c"], "recall@5", 1, 500)
    none = summarize(
        {"recall@5": m}, ["a", "b", "c"], "recall@5", 1, 500, clusters=labels, cluster_mode="none"
    )
    assert none == plain and none.clusters is None and "clusters" not in none.to_json()


def test_auto_makes_numbers_cluster_aware_when_the_design_effect_is_measurably_above_one():
    m, labels = _clustered(12, 5)
    s = summarize({"recall@5": m}, ["a", "b", "c"], "recall@5", 1, 500, clusters=labels)
    plain = summarize({"recall@5": m}, ["a", "b", "c"], "recall@5", 1, 500)
    assert s.clusters.used and s.clusters.count == 12 and s.clusters.source == "document"
    assert "design effect on recall@5" in s.clusters.reason
    est, q = s.estimate("a"), plain.estimate("a")
    assert est.method == "cluster percentile, t-widened"
    assert est.high - est.low > q.high - q.low  # documents, not questions, are the sample
    # 60 questions in 12 documents weigh as fewer than 30: the exact interval there,
    # wider than the question-level one
    low, high = est.exact
    assert low < est.mean < high and high - low > q.high - q.low
    assert s.comparison_rule.clusters == 12
    assert s.design_of("a").deff > 2 and s.design_of("a").low > 1
    assert s.compared_by == tuple(labels)


def test_auto_stays_question_level_with_too_few_clusters_or_no_design_effect():
    m, labels = _clustered(6, 10)  # strongly clustered, but 6 documents
    few = summarize({"recall@5": m}, ["a", "b", "c"], "recall@5", 1, 500, clusters=labels)
    assert not few.clusters.used and "fewer than 10 clusters" in few.clusters.reason
    plain = summarize({"recall@5": m}, ["a", "b", "c"], "recall@5", 1, 500)
    assert few.estimate("a") == plain.estimate("a")
    assert few.design_of("a") is not None  # still measured and shown
    rng = np.random.default_rng(9)
    flat = (rng.random((3, 116)) < 0.6).astype(float)
    labels = [f"d{i // 4}" for i in range(116)]  # 29 documents: below auto's 30
    s = summarize({"recall@5": flat}, ["a", "b", "c"], "recall@5", 1, 500, clusters=labels)
    assert not s.clusters.used and "measurably above 1" in s.clusters.reason


def test_auto_resamples_documents_from_30_on_whatever_their_design_effect():
    rng = np.random.default_rng(9)
    flat = (rng.random((3, 120)) < 0.6).astype(float)  # no document structure at all
    labels = [f"d{i // 4}" for i in range(120)]  # 30 documents
    s = summarize({"recall@5": flat}, ["a", "b", "c"], "recall@5", 1, 500, clusters=labels)
    assert s.clusters.used and s.clusters.reason == "30 clusters (auto resamples them from 30 on)"
    assert s.estimate("a").method == "cluster percentile, t-widened"
    assert s.comparison_rule.clusters == 30
    fewer = summarize(
        {"recall@5": flat[:, :116]}, ["a", "b", "c"], "recall@5", 1, 500, clusters=labels[:116]
    )
    assert not fewer.clusters.used  # 29 documents: the pre-test, which finds nothing


def test_one_document_asked_for_is_said_in_one_line_and_in_summary_json():
    rng = np.random.default_rng(4)
    m = (rng.random((2, 40)) < 0.7).astype(float)
    plain = summarize({"recall@5": m}, ["a", "b"], "recall@5", 1, 500)
    for mode, source in (("document", "document"), ("field", "field")):
        s = summarize(
            {"recall@5": m},
            ["a", "b"],
            "recall@5",
            1,
            500,
            clusters=["only"] * 40,
            cluster_mode=mode,
            cluster_source=source,
        )
        assert s.estimates == plain.estimates and s.comparisons == plain.comparisons
        saved = s.to_json()["clusters"]
        assert (saved["count"], saved["used"], saved["mode"]) == (1, False, mode)
        assert "all 40 questions are in one" in saved["reason"]
        assert "question-level" in saved["reason"]
        line = terminal.cluster_note(s)
        assert line.count("\n") == 0 and line.startswith("Question-level intervals and comparisons")
    auto = summarize({"recall@5": m}, ["a", "b"], "recall@5", 1, 500, clusters=["only"] * 40)
    assert auto.clusters is None  # auto: nothing to say, nothing resampled


def test_document_mode_makes_numbers_cluster_aware_even_with_few_clusters():
    m, labels = _clustered(6, 10)
    s = summarize(
        {"recall@5": m},
        ["a", "b", "c"],
        "recall@5",
        1,
        500,
        clusters=labels,
        cluster_mode="document",
    )
    assert s.clusters.used and s.clusters.reason == "asked for (clusters = document)"
    assert s.estimate("a").method == "cluster percentile, t-widened"


def test_clusters_and_design_effects_round_trip_through_summary_json():
    m, labels = _clustered(12, 5)
    s = summarize({"recall@5": m}, ["a", "b", "c"], "recall@5", 1, 500, clusters=labels)
    data = json.loads(dumps(s.to_json()))
    assert data["design"]["a"]["recall@5"]["effective"] == pytest.approx(s.design_of("a").effective)
    again = Summary.from_json(data)
    assert again.clusters == s.clusters and again.design == s.design
    assert again.cluster_labels is None  # scores.json keeps the labels


def test_shipped_example_saves_each_questions_document_and_shows_every_design_effect(saved):
    run, res = saved
    assert res.clusters == tuple(q.answers[0].doc for q in run.questions)
    raw = json.loads((res.path / "scores.json").read_text(encoding="utf-8"))
    assert raw["cluster_source"] == "document" and len(raw["clusters"]) == 135
    info = res.summary.clusters
    assert (info.count, info.questions, info.used) == (25, 135, False)
    for system in res.systems:
        d = res.summary.design_of(system)
        assert d.deff > 0 and d.low < d.deff < d.high and d.effective == 135 / d.deff
    line = terminal.cluster_note(res.summary)
    assert line.startswith("135 questions in 25 documents (5.4 each)")
    assert all(f"{s} " in line for s in res.systems)
    # the saved labels go with the plan, and its comparison decides as summary.json did:
    # question-level here, as a run in memory decides
    from ragmeter.comparison.systems import compare_run

    assert res.comparison_plan == run.comparison_plan
    assert res.comparison_plan.clusters == res.clusters
    assert not compare_run(res, res.comparison_plan).rule.clusters


def test_results_saved_before_clusters_still_load(saved, tmp_path):
    import shutil

    _, res = saved
    old = tmp_path / "old"
    shutil.copytree(res.path, old)
    for name in ("scores.json", "summary.json"):
        data = json.loads((old / name).read_text(encoding="utf-8"))
        for key in ("clusters", "cluster_source", "design"):
            data.pop(key, None)
        (old / name).write_text(dumps(data), encoding="utf-8")
    back = Results(old)
    assert back.clusters is None and back.summary.clusters is None
    assert terminal.cluster_note(back.summary) is None
    assert back.summary.estimates == res.summary.estimates


def test_a_clusters_list_of_the_wrong_length_is_one_line_naming_scores_json(saved, tmp_path):
    import shutil

    _, res = saved
    bad = tmp_path / "bad"
    shutil.copytree(res.path, bad)
    data = json.loads((bad / "scores.json").read_text(encoding="utf-8"))
    data["clusters"] = data["clusters"][:-1]
    (bad / "scores.json").write_text(dumps(data), encoding="utf-8")
    with pytest.raises(InputError, match=r"scores\.json: clusters: expected 135 labels"):
        Results(bad)


def test_the_report_shows_every_systems_design_effect_and_effective_questions(saved):
    from ragmeter.report.data import report_data

    _, res = saved
    data = report_data(res)
    clusters = data["clusters"]
    assert (clusters["count"], clusters["questions"], clusters["used"]) == (25, 135, False)
    assert set(clusters["design"]) == set(res.systems)
    for system, shown in clusters["design"].items():
        d = res.summary.design_of(system)
        assert shown == {"deff": d.deff, "low": d.low, "high": d.high, "effective": d.effective}


def test_summary_json_names_the_ndcg_ideal_and_gain_and_an_older_one_still_loads(saved, tmp_path):
    import shutil

    from ragmeter.report.data import report_data

    run, res = saved
    raw = json.loads((res.path / "summary.json").read_text())
    assert raw["ndcg"] == {"ideal": "returned", "gain": "exponential"}
    assert res.summary.ndcg_label == "nDCG: returned ideal, exponential gain"
    # every table that shows nDCG names them
    grid = terminal.rank_grid(res.summary)
    assert "ndcg@10" in grid.header and "nDCG: returned ideal, exponential gain" in grid.title
    assert "nDCG: returned ideal" in terminal.comparison_title(
        "ndcg@10", 1, 300, None, res.summary.ndcg_label
    )
    assert "nDCG" not in terminal.comparison_title("recall@5", 1, 300, None, "nDCG: x")
    assert "nDCG: returned ideal, exponential gain" in res.to_markdown()  # the notebook's
    data = report_data(res)
    assert "returned ideal, exponential gain" in data["family_titles"]["ndcg"]
    assert data["ndcg"]["ideal"] == "returned"
    # written before summary.json named them: meta.json says which ideal and gain
    old = tmp_path / "old"
    shutil.copytree(res.path, old)
    del raw["ndcg"]
    (old / "summary.json").write_text(json.dumps(raw))
    assert Results(old).summary.ndcg == {"ideal": "returned", "gain": "exponential"}
    assert Summary.from_json(raw).ndcg == {} and Summary.from_json(raw).ndcg_label == ""


def test_the_report_says_what_the_returned_ideal_measures_where_ndcg_and_recall_disagree():
    from ragmeter.comparison.summary import RETURNED_IDEAL_NOTE

    def est(mean):
        return Estimate(mean, mean, mean, 10, 100, 1, "percentile", "mulberry32")

    def summary(ideal, ndcg_a, ndcg_b):
        estimates = {
            "a": {"recall@10": est(0.5), "ndcg@10": est(ndcg_a)},
            "b": {"recall@10": est(0.7), "ndcg@10": est(ndcg_b)},
        }
        return Summary(estimates=estimates, ndcg={"ideal": ideal, "gain": "exponential"})

    # a lower recall but a higher nDCG: the returned ideal scores the order only
    assert summary("returned", 0.9, 0.6).ndcg_note([10]) == RETURNED_IDEAL_NOTE
    assert "not what it missed" in RETURNED_IDEAL_NOTE
    assert summary("returned", 0.5, 0.6).ndcg_note([10]) is None  # agree
    assert summary("returned", 0.9, 0.6).ndcg_note([5]) is None  # no such k
    assert summary("index", 0.9, 0.6).ndcg_note([10]) is None


# summarize(): every setting a run was given reaches the numbers it prints.

RNG = np.random.default_rng(7)
N = 60
SYSTEMS = ["a", "b", "c"]
RECALL = (RNG.random((3, N)) < [[0.5], [0.7], [0.9]]).astype(float)
MRR = RNG.random((3, N))
MATRICES = {"recall@5": RECALL, "mrr@10": MRR}


def test_confidence_seed_rounds_and_method_reach_every_interval():
    s = summarize(
        MATRICES, SYSTEMS, "mrr@10", seed=3, rounds=500, confidence=0.9, method="bca", adjust="holm"
    )
    assert (s.metric, s.seed, s.rounds, s.confidence, s.method) == ("mrr@10", 3, 500, 0.9, "bca")
    for i, name in enumerate(SYSTEMS):
        for metric, matrix in MATRICES.items():
            est = s.estimate(name, metric)
            want = stats.bootstrap(matrix[i], rounds=500, seed=3, confidence=0.9, method="bca")
            assert (est.low, est.high, est.confidence) == (want.low, want.high, 0.9)
    # the comparisons are at the run's level, not a fixed 0.05
    assert s.alpha == pytest.approx(0.1)
    assert s.comparison_rule.alpha == pytest.approx(0.1)
    assert s.comparison_rule.seed == 3 and s.comparison_rule.rounds == 500
    # Holm over 3 pairs: each difference interval at 1 - 0.1 / 3 (simultaneous)
    assert s.comparison_rule.adjust == "holm" and s.comparison_rule.pairs == 3
    assert all(r.difference.confidence == pytest.approx(1 - 0.1 / 3) for r in s.comparisons)


def test_the_default_rule_is_the_runs_default():
    """Called directly, summarize() decides as a run does by default: step-down max-T."""

    s = summarize(MATRICES, SYSTEMS, "recall@5", seed=3, rounds=300)
    assert s.comparison_rule.adjust == Config().adjust == "maxt"


def test_sample_sizes_are_of_the_comparison_metric_at_the_runs_level():
    s = summarize(MATRICES, SYSTEMS, "mrr@10", seed=2, rounds=300, confidence=0.8)
    for i, name in enumerate(SYSTEMS):
        want = stats.sample_size(MRR[i], rounds=300, seed=2, confidence=0.8)
        assert [(r.n, r.low, r.high, r.confidence) for r in s.sample_size[name]] == [
            (r.n, r.low, r.high, 0.8) for r in want
        ]


def test_family_rule_and_capped_systems_pass_through():
    base = summarize(MATRICES, SYSTEMS, "recall@5", 1, 200, adjust="none", baseline="a")
    assert base.comparison_rule.adjust == "none"
    assert {(r.a, r.b) for r in base.comparisons} == {("b", "a"), ("c", "a")}
    planned = summarize(
        MATRICES, SYSTEMS, "recall@5", 1, 200, pairs=[("c", "b")], k_capped={"a": 3}
    )
    assert [(r.a, r.b) for r in planned.comparisons] == [("c", "b")]
    assert planned.k_capped == {"a": 3} and planned.to_json()["k_capped"] == {"a": 3}
    assert "k_capped" not in base.to_json()
    alone = summarize({"recall@5": RECALL[:1]}, ["a"], "recall@5", 1, 200, confidence=0.8)
    assert alone.comparisons == [] and alone.comparison_rule is None
    assert alone.alpha == pytest.approx(0.2)
    with pytest.raises(InputError, match="metric 'ndcg@10' was not computed"):
        summarize(MATRICES, SYSTEMS, "ndcg@10", 1, 200)


def test_summary_json_round_trip_keeps_every_setting():
    s = summarize(MATRICES, SYSTEMS, "recall@5", 4, 200, confidence=0.9, k_capped={"b": 2})
    back = Summary.from_json(s.to_json())
    assert back.to_json() == s.to_json()
    assert back.rng == s.rng == "mulberry32"
    assert Summary().rng is None
    assert Summary().confidence == 0.95 and Summary().alpha == 0.05  # an empty summary
    with pytest.raises(InputError, match="where.json"):
        Summary.from_json({"estimates": {"a": 3}}, where="where.json")


def _run(**cfg):
    from types import SimpleNamespace as S

    base = dict(metric="recall@5", seed=2, rounds=200, confidence=0.9, method="percentile")
    base |= dict(adjust="none", baseline="", pairs="", family="auto")
    base |= dict(adjust="none", baseline="", pairs="")
    base |= dict(ideal="returned", gain="exponential", trec_eval_compat=False)
    return S(
        config=S(**(base | cfg)),
        metric_names=list(MATRICES),
        matrix=lambda m: MATRICES[m],
        systems=[S(name="a", k_cap=None), S(name="b", k_cap=2), S(name="c", k_cap=None)],
    )


def test_summarize_run_uses_the_runs_own_settings():
    from ragmeter.comparison.summary import summarize_run

    s = summarize_run(_run())
    assert (s.seed, s.rounds, s.confidence) == (2, 200, 0.9)
    assert s.comparison_rule.adjust == "none" and s.comparison_rule.family == "all pairs"
    assert s.k_capped == {"b": 2}
    based = summarize_run(_run(baseline="a", adjust="holm"))
    assert based.comparison_rule.adjust == "holm"
    assert {(r.a, r.b) for r in based.comparisons} == {("b", "a"), ("c", "a")}
    planned = summarize_run(_run(pairs="c:b"))
    assert [(r.a, r.b) for r in planned.comparisons] == [("c", "b")]


def test_the_returned_ideal_note_compares_every_pair_of_systems_that_has_both_metrics():
    from ragmeter.comparison.summary import RETURNED_IDEAL_NOTE

    def est(mean):
        return Estimate(mean, mean, mean, 10, 100, 1, "percentile", "mulberry32")

    def note(*means):
        estimates = {
            name: {
                f"{m}@10": est(v)
                for m, v in zip(("ndcg", "recall"), pair, strict=True)
                if v is not None
            }
            for name, pair in zip("abcd"[: len(means)], means, strict=True)
        }
        ndcg = {"ideal": "returned", "gain": "exponential"}
        return Summary(estimates=estimates, ndcg=ndcg).ndcg_note([10])

    # only the first and third of four disagree: nDCG puts a above c, recall c above a
    assert note((0.50, 0.60), (0.1, 0.1), (0.55, 0.55), (0.9, 0.9)) == RETURNED_IDEAL_NOTE
    assert note((0.50, 0.50), (0.1, 0.1), (0.55, 0.55), (0.9, 0.9)) is None
    # a system with nDCG@10 but no recall@10 takes no part
    assert note((0.9, 0.5), (0.6, None), (0.6, 0.7)) == RETURNED_IDEAL_NOTE
    assert note((0.9, 0.5), (0.6, None)) is None


def test_summarize_run_compares_the_family_the_run_names():
    from types import SimpleNamespace as S

    from ragmeter.comparison.summary import summarize_run

    names = ["x/bm25", "x/dense", "y/bm25", "y/dense"]
    scores = {"recall@5": np.random.default_rng(1).random((4, 30))}
    cfg = _run().config.__dict__ | dict(family="retrievers")
    run = S(
        config=S(**cfg),
        metric_names=list(scores),
        matrix=lambda m: scores[m],
        systems=[S(name=n, k_cap=None) for n in names],
    )
    s = summarize_run(run)
    assert s.comparison_rule.family == "retrievers within each strategy"
    assert [(r.a, r.b) for r in s.comparisons] == [("x/bm25", "x/dense"), ("y/bm25", "y/dense")]

"""``ragmeter.report.data``: the report's plain data. A tie says how many questions would
separate it; a headline over systems without the metric names nothing and counts nothing."""

from __future__ import annotations

import json

from conftest import copy_results, save_example

from ragmeter import stats
from ragmeter.report.data import headline_extras, report_data
from ragmeter.runs.results import Results


def test_a_tie_says_how_many_questions_would_separate_its_gap(example_results):
    close = Results(example_results)  # sentence and recursive: a close pair (a tie)
    data = report_data(close)
    metric = data["metric"]
    ties = [c for c in data["comparisons"] if not c["separated"]]
    assert ties, "the example's sentence and recursive are a tie"
    for c in ties:
        gap = abs(close.summary.comparisons[data["comparisons"].index(c)].difference.mean)
        want = stats.questions_to_separate(
            close.scores(c["a"], metric),
            close.scores(c["b"], metric),
            gap,
            confidence=close.summary.confidence,
        )
        assert c["to_separate"] == want and want > len(close.question_ids)
    # a separated pair needs no more questions
    assert all(c["to_separate"] is None for c in data["comparisons"] if c["separated"])


def test_a_headline_over_systems_without_the_metric_names_and_counts_nothing():
    estimates = {"a": {"mrr@5": {"mean": 0.5, "low": 0.4, "high": 0.6}}, "b": {}}
    comparisons = [{"a": "a", "b": "b", "verdict": "tie", "separated": False}]
    h = headline_extras(["a", "b"], estimates, comparisons, "recall@5", 5)
    assert h == {
        "words_key": "words@5",
        "next": None,
        "cheapest_tied": None,
        "tie_count": 0,
        "pair_count": 0,
        "named_ties": [],
        "not_below_best": [],
        "identical_count": 0,
        "frontier": [],
        "top": [],
    }


def _est(mean):
    return {"mean": mean, "low": mean - 0.05, "high": mean + 0.05}


def test_a_tied_system_sending_as_many_words_as_the_best_is_not_cheaper():
    estimates = {
        "whole": {"recall@5": _est(0.9), "words@5": _est(1000)},
        "parent": {"recall@5": _est(0.85), "words@5": _est(1000)},
    }
    tie = [{"a": "whole", "b": "parent", "verdict": "tie (interval includes 0)"}]
    h = headline_extras(list(estimates), estimates, tie, "recall@5", 5)
    assert h["not_below_best"] == ["parent"] and h["cheapest_tied"] is None
    estimates["parent"]["words@5"] = _est(999)
    h = headline_extras(list(estimates), estimates, tie, "recall@5", 5)
    assert h["cheapest_tied"] == "parent"


def test_the_frontier_leaves_out_a_system_scoring_lower_for_the_same_words():
    estimates = {
        "whole": {"recall@5": _est(0.9), "words@5": _est(1000)},
        "fixed": {"recall@5": _est(0.8), "words@5": _est(1000)},
        "small": {"recall@5": _est(0.9), "words@5": _est(1200)},
    }
    h = headline_extras(list(estimates), estimates, [], "recall@5", 5)
    assert h["frontier"] == ["whole"]


def test_the_route_diagram_marks_what_the_run_took(example_results, tmp_path):
    close = Results(example_results)
    route = report_data(close)["route"]
    search, answer = route["lanes"]
    assert (search["key"], search["start"], search["branch"]) == ("search", 0, None)
    assert [s["label"] for s in search["steps"]] == [
        "Questions",
        "Chunk",
        "Rank",
        "Grade items",
        "Score",
        "Resample",
    ]
    assert all(s["ran"] for s in search["steps"])  # every search step ran
    assert search["steps"][0]["detail"] == f"{len(close.question_ids)} with answer keys"
    assert search["steps"][1]["detail"] == "3 strategies: recursive, sentence, whole"
    assert search["steps"][2]["detail"] == "bm25, top 10"
    # no answers: the answer lane branches off "Grade items" and none of it ran
    assert (answer["key"], answer["start"], answer["branch"]) == ("answer", 3, 2)
    assert not any(s["ran"] for s in answer["steps"])
    assert [s["detail"] for s in answer["steps"][1:]] == ["not run"] * 3

    # a question audit: its lane branches off "Questions", one column in
    path = copy_results(close.path, tmp_path / "r")
    (path / "audit").mkdir()
    qids = close.question_ids
    (path / "audit" / "flags.jsonl").write_text(
        "".join(
            json.dumps({"question": q, "flags": ["misstated"] if i % 3 == 0 else []}) + "\n"
            for i, q in enumerate(qids)
        ),
        encoding="utf-8",
    )
    lanes = report_data(Results(path))["route"]["lanes"]
    assert [lane["key"] for lane in lanes] == ["search", "answer", "audit"]
    audit = lanes[2]
    assert (audit["start"], audit["branch"]) == (1, 0)
    assert audit["steps"][1]["detail"] == f"{len(qids[::3])} of {len(qids)} flagged"


def test_two_pairs_against_a_baseline_on_mrr_are_costed_in_mrr_units(tmp_path):
    strategies = ("whole", "sentence", "recursive")
    res = Results(
        save_example(tmp_path / "r", strategies=strategies, baseline="whole", metric="mrr@10")
    )
    assert res.summary.comparison_rule.pairs == 2
    family = report_data(res)["sample_size"]["family"]
    # a difference of 0.05 in MRR (not in points) over the table's two pairs
    assert family.startswith("Separating a difference of 0.05 at power 0.8")
    assert "table of 2 pairs" in family


def test_the_page_s_half_widths_are_the_terminal_s_text(example_results):
    """The sample-size table's ± cells come printed with the data
    (``comparison.formatting.format_half_width``, as the terminal's), so a half-width too
    narrow for the metric's digits gets its digits on the page too."""
    from ragmeter.comparison.formatting import format_half_width

    data = report_data(Results(example_results))
    ss = data["sample_size"]
    rows = [row for system in ss["systems"] for row in system["rows"]]
    assert rows
    for row in rows:
        assert row["half_width_text"] == format_half_width(row["half_width"], data["metric"])
    for system in ss["systems"]:
        observed = next((r for r in system["rows"] if r["n"] == system["n"]), None)
        assert system["half_width_text"] == (observed["half_width_text"] if observed else None)

"""The report's drill-down past its budget: the questions the systems split on most, only
their rankings and documents read, and a line on the page saying how many it holds."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ragmeter.errors import InputError
from ragmeter.report import drilldown as drill
from ragmeter.report.data import report_data
from ragmeter.runs.results import Results


def _spread_order(res: Results, metric: str) -> list[int]:
    """Question numbers by falling spread of ``metric`` over the systems, written out."""
    rows = [res.scores(s, metric) for s in res.systems]
    spread = [max(r[i] for r in rows) - min(r[i] for r in rows) for i in range(len(rows[0]))]
    return sorted(range(len(spread)), key=lambda i: (-spread[i], i))


def test_within_its_budget_the_drilldown_holds_every_question(example_results):
    res = Results(example_results)
    data = report_data(res)
    assert [q["id"] for q in data["questions"]] == res.question_ids
    assert data["drilldown_note"] is None


def test_past_its_budget_the_drilldown_keeps_the_questions_the_systems_split_on_most(
    example_results,
):
    res = Results(example_results)
    metric = res.summary.metric
    systems = len(res.systems)
    keep = 4
    picked = drill.shown_questions(res, metric, budget=keep * systems + systems - 1)
    want = sorted(_spread_order(res, metric)[:keep])
    assert picked == want
    assert len(picked) == keep and len(res.question_ids) > keep
    docs, questions = drill.drilldown(res, metric, metric, 5, budget=keep * systems)
    ids = [res.question_ids[i] for i in want]
    assert [q["id"] for q in questions] == ids  # in the results' order
    for q, i in zip(questions, want, strict=True):
        assert q["score"] == [round(float(res.scores(s, metric)[i]), 6) for s in res.systems]
        for s, row in zip(res.systems, q["items"], strict=True):
            assert [docs[r[0]]["id"] for r in row] == [it.doc for it in res.runs[s][q["id"]][:5]]
    used = {r[0] for q in questions for row in q["items"] for r in row}
    used |= {a[0] for q in questions for a in q["answers"]}
    assert used == set(range(len(docs)))  # every embedded document is one a question shows


def test_a_budget_below_the_systems_still_shows_one_question(example_results):
    res = Results(example_results)
    metric = res.summary.metric
    assert drill.shown_questions(res, metric, budget=1) == [_spread_order(res, metric)[0]]


def test_rankings_of_some_questions_are_those_of_every_question(example_results):
    res = Results(example_results)
    some = res.question_ids[1::3]
    part = res.rankings(some)
    assert set(part) == set(res.systems)
    for s in res.systems:
        assert part[s] == {q: res.runs[s][q] for q in some}


def test_a_drilldown_reads_neither_rankings_nor_documents_it_does_not_show(
    example_results_copy,
):
    res = Results(example_results_copy)
    metric = res.summary.metric
    picked = drill.shown_questions(res, metric, budget=len(res.systems))
    shown = res.question_ids[picked[0]]
    runs = res.rankings([shown])
    needed = {it.doc for per in runs.values() for it in per[shown][:5]}
    needed |= {a.doc for a in res.questions[picked[0]].answers}
    # damage a ranking of another question, and a document no shown item points into
    lines = (example_results_copy / "runs.jsonl").read_text().splitlines()
    other = next(i for i, ln in enumerate(lines) if json.loads(ln)["question"] != shown)
    lines[other] = '{"system": 1}'
    (example_results_copy / "runs.jsonl").write_text("\n".join(lines) + "\n")
    docs = (example_results_copy / "documents.jsonl").read_text().splitlines()
    spare = [i for i, ln in enumerate(docs) if json.loads(ln)["id"] not in needed]
    assert spare
    docs[spare[0]] = json.dumps({"id": json.loads(docs[spare[0]])["id"], "text": 7})
    (example_results_copy / "documents.jsonl").write_text("\n".join(docs) + "\n")
    fresh = Results(example_results_copy)
    _, questions = drill.drilldown(fresh, metric, metric, 5, budget=len(res.systems))
    assert [q["id"] for q in questions] == [shown]
    with pytest.raises(InputError, match=r"runs\.jsonl:\d+"):
        _ = Results(example_results_copy).runs  # reading every ranking finds the damage


def test_the_page_says_how_many_questions_it_holds(example_results, monkeypatch):
    res = Results(example_results)
    monkeypatch.setattr(drill, "DRILLDOWN_RANKINGS", 2 * len(res.systems))
    data = report_data(res)
    assert len(data["questions"]) == 2
    note = data["drilldown_note"]
    assert note.startswith(f"The page holds 2 of the {len(res.question_ids)} questions")
    assert f"at most {2 * len(res.systems)} rankings" in note
    assert res.summary.metric in note


def test_a_question_with_equal_scores_everywhere_is_shown_last():
    class Two:
        systems = ["a", "b"]
        question_ids = ["q0", "q1", "q2"]

        def matrix(self, metric):
            return np.array([[0.5, 0.0, 1.0], [0.5, 1.0, 0.0]])

    assert drill.shown_questions(Two(), "m", budget=4) == [1, 2]  # q0's spread is 0
    assert drill.shown_questions(Two(), "m", budget=6) == [0, 1, 2]

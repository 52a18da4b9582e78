"""``ragmeter.runs.warnings.run_warnings``: capped k (one system or several), identical chunks,
identical rankings, and when the second is already said by the first."""

from __future__ import annotations

from types import SimpleNamespace

from ragmeter.runs.search_run import RankedItem
from ragmeter.runs.warnings import _plural, capped_ks, identical_systems, run_warnings


def _items(*docs):
    return [[RankedItem(1, d, 0, 5, 1.0, 0, 3)] for d in docs]


def _system(name, strategy, docs, k_cap=None):
    return SimpleNamespace(name=name, strategy={"name": strategy}, items=_items(*docs), k_cap=k_cap)


def test_plural():
    assert [_plural(n, "item") for n in (0, 1, 2)] == ["0 items", "1 item", "2 items"]


def test_capped_k_is_one_warning_per_cap():
    run = SimpleNamespace(
        systems=[
            _system("a", "whole", ["x"], 3),
            _system("b", "fixed", ["y"], 3),
            _system("c", "sentence", ["z"], 1),
            _system("d", "recursive", ["w"]),
        ],
        chunk_keys={},
    )
    assert capped_ks(run) == {"a": 3, "b": 3, "c": 1}
    assert run_warnings(run) == [
        "a, b make only 3 items each: k above 3 is scored at 3 (marked * in the tables)",
        "c makes only 1 item: k above 1 is scored at 1 (marked * in the tables)",
    ]


def test_identical_rankings_and_chunks():
    a, b = _system("fixed", "fixed", ["x", "y"]), _system("fixed2", "fixed2", ["x", "y"])
    c = _system("other", "other", ["y", "x"])
    assert identical_systems([a, b, c]) == [["fixed", "fixed2"]]
    assert identical_systems([a, c]) == []
    # the same chunks: said once, about the strategies
    same = SimpleNamespace(systems=[a, b, c], chunk_keys={"fixed": 1, "fixed2": 1, "other": 2})
    assert run_warnings(same) == ["strategies fixed, fixed2 make identical chunks of this corpus"]
    # other chunks, the same rankings: said about the systems
    other = SimpleNamespace(systems=[a, b, c], chunk_keys={"fixed": 1, "fixed2": 3, "other": 2})
    assert run_warnings(other) == [
        "systems fixed, fixed2 rank identically on every question "
        "(every comparison between them is a tie)"
    ]


def test_two_retrievers_of_one_strategy_ranking_alike_are_named():
    bm25 = _system("fixed/bm25", "fixed", ["x"])
    dense = _system("fixed/dense", "fixed", ["x"])
    run = SimpleNamespace(systems=[bm25, dense], chunk_keys={"fixed": 1, "whole": 1})
    assert run_warnings(run) == [
        "strategies fixed, whole make identical chunks of this corpus",
        "systems fixed/bm25, fixed/dense rank identically on every question "
        "(every comparison between them is a tie)",
    ]


# --- questions nothing matched ------------------------------------------------------------


def _scored(name, *scores_per_question):
    rows = [
        [RankedItem(i + 1, "d", 0, 1, s, 0, 1) for i, s in enumerate(q)]
        for q in scores_per_question
    ]
    return SimpleNamespace(name=name, items=rows)


def test_a_question_no_item_scored_above_0_for_is_unmatched():
    from ragmeter.comparison.summary import unmatched_questions

    questions = [SimpleNamespace(id=q) for q in ("q1", "q2", "q3")]
    systems = [
        _scored("bm25", [2.0, 0.5], [0.0, 0.0], []),  # q2: all 0, q3: nothing returned
        _scored("dense", [0.9], [0.1], [0.2]),  # matched every one
        _scored("logprob", [-1.0], [-2.0], [-3.0]),  # another scale: never listed
        _scored("tiny", [1e-12], [0.0], [-0.5]),
    ]
    assert unmatched_questions(systems, questions) == {
        "bm25": ("q2", "q3"),
        "tiny": ("q2", "q3"),
    }
    assert unmatched_questions(systems[1:3], questions) == {}


def test_unmatched_questions_are_one_line_per_set_naming_them():
    from ragmeter.runs.warnings import unmatched_lines

    lines = unmatched_lines({"a": ("q2",), "b": ("q2",), "c": tuple(f"q{i}" for i in range(12))})
    assert len(lines) == 2
    assert lines[0].startswith("1 question matched nothing in a, b (") and lines[0].endswith(": q2")
    assert lines[1].startswith("12 questions matched nothing in c") and "and 2 more" in lines[1]
    assert unmatched_lines({}) == []


def test_a_question_sharing_no_term_is_counted_in_the_terminal_summary_and_report(tmp_path):
    # regression: "Is there help shovelling for seniors?" shares no term with the corpus;
    # every system returned items scored 0 in alphabetical order, and nothing said so
    import json

    from typer.testing import CliRunner

    from ragmeter.cli import app
    from ragmeter.report.data import report_data
    from ragmeter.runs.results import Results

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "snow.md").write_text("Sidewalks must be cleared of snow within 24 hours.")
    (docs / "parking.md").write_text("Winter parking bans start on December first.")
    rows = [
        ("q1", "When must sidewalks be cleared of snow?", "snow.md", "24 hours"),
        ("q2", "Is there help shovelling for seniors?", "snow.md", "Sidewalks"),
        ("q3", "When do winter parking bans start?", "parking.md", "December first"),
    ]
    (tmp_path / "q.jsonl").write_text(
        "".join(
            json.dumps({"id": q, "question": t, "answers": [{"doc": d, "text": a}]}) + "\n"
            for q, t, d, a in rows
        )
    )
    out = tmp_path / "res"
    result = CliRunner().invoke(
        app,
        ["search", "--corpus", str(docs), "--testset", str(tmp_path / "q.jsonl"), "--out", str(out)]
        + ["--rounds", "200"],
    )
    assert result.exit_code == 0, result.output
    said = " ".join(result.stderr.split())
    assert "1 question matched nothing in" in said and said.count(": q2") == 1
    summary = json.loads((out / "summary.json").read_text())
    assert summary["unmatched"] and all(ids == ["q2"] for ids in summary["unmatched"].values())
    assert report_data(Results(out))["unmatched"] == summary["unmatched"]

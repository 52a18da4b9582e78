"""``ragmeter.retrieval.trec``: run files written with rank scores (``n - rank + 1``, so
every tool that sorts by score keeps the list order)."""

from __future__ import annotations

from ragmeter.retrieval.trec import write_run


def test_rank_scores_count_down_to_one(tmp_path):
    path = tmp_path / "r.trec"
    write_run(path, {"q1": [("a", 0.5), ("b", 0.5), ("c", 0.1)], "q2": [("d", 9.0)]}, "t", "rank")
    assert path.read_text().splitlines() == [
        "q1 Q0 a 1 3.0 t",
        "q1 Q0 b 2 2.0 t",
        "q1 Q0 c 3 1.0 t",
        "q2 Q0 d 1 1.0 t",
    ]
    write_run(path, {"q1": [("a", 0.5), ("b", 0.25)]})
    assert path.read_text().splitlines() == ["q1 Q0 a 1 0.5 ragmeter", "q1 Q0 b 2 0.25 ragmeter"]

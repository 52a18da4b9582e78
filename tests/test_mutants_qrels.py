"""The qrels route (ragmeter.qrels*): per-query means and what a run file holds."""

from __future__ import annotations

import numpy as np

from ragmeter.qrels import Evaluation


def test_evaluation_means_are_per_measure_and_zero_without_queries():
    ev = Evaluation("run", ["1", "2"], {"map": np.array([0.5, 1.0]), "p@5": np.array([0.2, 0])})
    assert ev.means() == {"map": 0.75, "p@5": 0.1}
    assert Evaluation("run", [], {"map": np.zeros(0)}).means() == {"map": 0.0}
    assert (ev.missing, ev.unjudged, ev.depth, ev.top) == ([], [], 0, None)


def test_a_repeated_document_in_a_later_query_is_named(tmp_path):
    import pytest

    from ragmeter.errors import InputError
    from ragmeter.qrels import run_matrix
    from ragmeter.qrels_read import Qrels, read_run

    rp = tmp_path / "r.txt"
    rp.write_text("1 Q0 a 1 3 t\n2 Q0 b 1 2 t\n2 Q0 c 2 1 t\n2 Q0 b 3 0 t\n")
    q = Qrels.from_dict({"1": {"a": 1}, "2": {"b": 1}})
    with pytest.raises(InputError, match=r"r.txt:4: 'b' already listed for query '2' on line 2"):
        run_matrix(read_run(rp), q)


def test_an_empty_run_misses_every_judged_query(tmp_path):
    import pytest

    from ragmeter.errors import InputError
    from ragmeter.qrels import evaluate_run
    from ragmeter.qrels_read import Qrels, Run, read_run

    rp = tmp_path / "empty.txt"
    rp.write_text("")
    with pytest.raises(InputError, match="empty.txt: no lines; the run file is empty"):
        read_run(rp)
    # a run built in Python may hold no lines: every judged query is missing
    none = np.zeros(0, dtype="S1")
    run = Run(none, none, np.zeros(0), np.zeros(0, np.int64), np.zeros(0, np.int64), "r", "")
    q = Qrels.from_dict({"1": {"a": 1}, "2": {"b": 2}})
    ev = evaluate_run(run, q, ["map", "P_5"])
    assert ev.missing == ["1", "2"]
    assert {m: v.tolist() for m, v in ev.scores.items()} == {
        "map": [0.0, 0.0],
        "precision@5": [0.0, 0.0],
    }


def test_the_judged_ideal_holds_only_grades_above_zero():
    from ragmeter.qrels_read import Qrels

    q = Qrels.from_dict({"1": {"a": 2, "b": -1, "c": 0, "d": 1}, "2": {"e": 0}})
    assert q.ideal().tolist() == [[2, 1], [0, 0]]
    assert q.ideal(width=3).tolist() == [[2, 1, 0], [0, 0, 0]]
    assert q.n_relevant().tolist() == [2, 0] and q.n_relevant(2).tolist() == [1, 0]
    assert Qrels.from_dict({"1": {"c": 0}}).ideal().shape == (1, 0)


def test_no_judgments_is_an_empty_qrels():
    from ragmeter.qrels_read import Qrels

    empty = Qrels.from_dict({})
    assert len(empty) == 0 and empty.to_dict() == {} and empty.ideal().shape == (0, 0)


def test_qrels_files_read_gzipped_unterminated_and_spaced(tmp_path):
    import gzip

    from ragmeter.qrels_read import read_qrels

    text = "1 0 a 1\n1 0 bbbbbb 2\n2 0 c 0"  # no newline at the end, a short last token
    plain = tmp_path / "q.txt"
    plain.write_text(text)
    want = {"1": {"a": 1, "bbbbbb": 2}, "2": {"c": 0}}
    assert read_qrels(plain).to_dict() == want
    packed = tmp_path / "q.txt.gz"
    packed.write_bytes(gzip.compress(text.encode()))
    assert read_qrels(packed).to_dict() == want
    from ragmeter.qrels_read import read_run

    run = "1 Q0 a 1 2.5 t\n1 Q0 bb 2 1 t\n"
    (tmp_path / "r.txt.gz").write_bytes(gzip.compress(run.encode()))
    (tmp_path / "r.txt").write_text(run)
    packed_run, plain_run = read_run(tmp_path / "r.txt.gz"), read_run(tmp_path / "r.txt")
    assert packed_run.doc.tolist() == plain_run.doc.tolist() == [b"a", b"bb"]
    assert packed_run.score.tolist() == [2.5, 1.0]


def test_errors_name_the_right_line_after_blank_lines_and_wide_gaps(tmp_path):
    import pytest

    from ragmeter.errors import InputError
    from ragmeter.qrels_read import read_qrels

    path = tmp_path / "q.txt"
    path.write_text("1   0\t\ta  1\n\n\n1 0 b 1\n   \n2 0 c x\n")
    with pytest.raises(InputError, match=r"q.txt:6:"):
        read_qrels(path)
    path.write_text("1 0 a 1\n1 0 b 1-2\n")
    with pytest.raises(InputError, match=r"q.txt:2:"):
        read_qrels(path)
    path.write_text("1 0 a -2\n1 0 b +3\n")
    assert read_qrels(path).to_dict() == {"1": {"a": -2, "b": 3}}


def test_keep_returns_the_top_documents_graded(tmp_path):
    from ragmeter.qrels import evaluate_run
    from ragmeter.qrels_read import Qrels, read_run

    rp = tmp_path / "r.txt"
    rp.write_text("1 Q0 a 1 3 t\n1 Q0 x 2 2 t\n1 Q0 b 3 1 t\n")
    q = Qrels.from_dict({"1": {"a": 2, "b": 1}, "2": {"c": 1}})
    ev = evaluate_run(read_run(rp), q, ["map"], keep=2)
    assert ev.top.grades.tolist() == [[2, 0], [-1, -1]]
    assert ev.top.missing.tolist() == [False, True]
    assert ev.top.docs.tolist() == [[b"a", b"x"], [b"", b""]]
    assert evaluate_run(read_run(rp), q, ["map"]).top is None

"""One reader for audit files: what write_audit writes reads back; hand rows too."""

from __future__ import annotations

import json

import pytest
from conftest import EXAMPLE, save_example

from ragmeter.errors import InputError
from ragmeter.inputs.corpus import load_corpus
from ragmeter.inputs.testset import load_testset
from ragmeter.questions.audit import audit_questions, read_audit, summarize_audit, write_audit
from ragmeter.questions.compare import unfit_ids


def test_written_audit_reads_back_row_for_row(tmp_path):
    docs = load_corpus(f"{EXAMPLE}/posts")
    questions = load_testset(f"{EXAMPLE}/questions.jsonl", docs).questions
    flagged = audit_questions(questions, docs)
    assert any(f.flagged for f in flagged)  # something to read back
    write_audit(flagged, summarize_audit(flagged), tmp_path)
    back = read_audit(tmp_path / "audit.jsonl")
    assert [f.to_dict() for f in back] == [f.to_dict() for f in flagged]
    assert unfit_ids(back) == unfit_ids(flagged)


def test_hand_rows_and_line_numbered_errors(tmp_path):
    path = tmp_path / "flags.jsonl"
    path.write_text(
        "\n"  # a blank first line: errors still name the file's own line numbers
        + json.dumps({"question": "q1", "flags": ["misstated"], "note": "says upper"})
        + "\n"
        + json.dumps({"question": "q2", "flags": []})
        + "\n"
        + json.dumps({"question": "q3", "flags": "yes-no-restatement"})
        + "\n"
    )
    rows = read_audit(path)
    assert [(r.id, r.labels, r.note) for r in rows] == [
        ("q1", ["misstated"], "says upper"),
        ("q2", [], ""),
        ("q3", ["yes-no-restatement"], ""),
    ]
    assert rows[0].flags[0].source == "hand" and rows[0].flags[0].reason == "says upper"
    assert unfit_ids(rows) == ["q1", "q3"]
    with pytest.raises(InputError, match=r"flags\.jsonl:3: question 'q2' is not in this"):
        read_audit(path, known=["q1", "q3"])
    for bad, why in (
        ({"question": "q1"}, "not an audit row"),
        ({"flags": ["x"]}, "no question id"),
        ({"id": "q1", "reasons": [{"reason": "r"}]}, "reasons must be a list"),
        ({"id": "q1", "flags": [3]}, "flags must be a list of labels"),
        ({"id": "q1", "flags": [], "note": 4}, "note must be text"),
    ):
        path.write_text('{"id": "q0", "flags": []}\n' + json.dumps(bad) + "\n")
        with pytest.raises(InputError, match=rf"flags\.jsonl:2: {why}"):
            read_audit(path)
    path.write_text("[1]\n")
    with pytest.raises(InputError, match=r"flags\.jsonl:1: expected a JSON object"):
        read_audit(path)


def test_questions_compare_drops_what_the_audit_file_flags(tmp_path):
    from ragmeter.questions.compare import compare_files

    qs = f"{EXAMPLE}/questions.jsonl"
    first, second = [json.loads(line)["id"] for line in open(qs, encoding="utf-8")][:2]
    audit = tmp_path / "flags.jsonl"
    audit.write_text(
        json.dumps({"question": first, "flags": ["misstated"]})
        + "\n"
        + json.dumps({"question": second, "flags": ["odd-wording"]})  # not an unfit kind
        + "\n"
    )
    result = compare_files(qs, qs, f"{EXAMPLE}/posts", audit_path=audit, rounds=200)
    assert result.dropped == [first]
    audit.write_text('{"id": "x", "reasons": "none"}\n')
    with pytest.raises(InputError, match=r"flags\.jsonl:1: reasons must be a list"):
        compare_files(qs, qs, f"{EXAMPLE}/posts", audit_path=audit, rounds=200)


def test_audit_scores_split_the_run_and_the_report_shows_them(tmp_path):
    import numpy as np

    from ragmeter import stats
    from ragmeter.questions.flagged import results_audit
    from ragmeter.report.data import report_data
    from ragmeter.runs.results import Results

    path = save_example(tmp_path / "results", strategies=("sentence",))
    res = Results(path)
    qids = res.question_ids
    (path / "audit").mkdir()
    (path / "audit" / "flags.jsonl").write_text(
        "".join(
            json.dumps({"question": q, "flags": ["misstated"] if i % 3 == 0 else []}) + "\n"
            for i, q in enumerate(qids)
        )
    )
    audit = results_audit(path)
    assert audit.flagged == qids[::3] and audit.counts == {"misstated": len(qids[::3])}
    [split] = audit.systems
    scores = res.scores("sentence", audit.metric)
    mask = np.array([i % 3 != 0 for i in range(len(qids))])
    assert split.clean == stats.bootstrap(scores[mask], rounds=200, seed=1)
    assert split.flagged == stats.bootstrap(scores[~mask], rounds=200, seed=1)
    shown = report_data(res)["optional"]["audit"]
    assert shown["flagged"] == len(audit.flagged) and shown["counts"] == audit.counts
    [row] = shown["by_system"]
    assert row["clean"]["mean"] == pytest.approx(split.clean.mean, abs=1e-6)
    assert row["flagged"]["high"] == pytest.approx(split.flagged.high, abs=1e-6)

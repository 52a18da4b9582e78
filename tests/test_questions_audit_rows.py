"""``ragmeter.questions.audit_rows``: the CSV's copy-ratio column (four decimals, empty
for a question without content words) and what a hand-written row without spans reads as."""

from __future__ import annotations

import csv
import json

from ragmeter.inputs.testset import AnswerSpan, Question
from ragmeter.questions.audit import audit_questions, read_audit, summarize_audit, write_audit

PASSAGE = "A bloom filter sets bits with several hash functions and never forgets a key."


def _question(qid: str, text: str) -> Question:
    return Question(qid, text, (AnswerSpan("bloom.md", 0, len(PASSAGE), PASSAGE),))


def test_the_csv_copy_ratio_has_four_decimals_and_is_empty_without_content_words(tmp_path):
    flagged = audit_questions(
        [
            _question("q1", "Which hash trick makes bloom lookups cheap?"),  # 2 of 6 words
            _question("q2", "What is it?"),  # no content word: no ratio
        ]
    )
    write_audit(flagged, summarize_audit(flagged, rounds=200), tmp_path)
    with (tmp_path / "audit.csv").open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["copy_ratio"] for r in rows] == [f"{flagged[0].copy_ratio:.4f}", ""]
    assert flagged[0].copy_ratio is not None and flagged[1].copy_ratio is None
    saved = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    assert saved[1]["copy_ratio"] is None


def test_a_hand_row_without_spans_reads_as_no_span_and_no_ratio(tmp_path):
    path = tmp_path / "flags.jsonl"
    path.write_text(json.dumps({"question": "q1", "flags": ["misstated"]}) + "\n")
    [row] = read_audit(path)
    assert (row.doc, row.start, row.end, row.copy_ratio, row.passage) == ("", 0, 0, None, "")
    assert row.checks == {} and row.question == ""  # "question" named the id here

"""Test-set loading at its edges: what each format accepts, rejects and writes.

Written against the public loaders (load_testset, save_jsonl_testset), one
behaviour per test, so that each guards one rule the docs state.
"""

from __future__ import annotations

import csv
import json

import pytest

from ragmeter.errors import InputError
from ragmeter.inputs.corpus import Document
from ragmeter.inputs.testset import AnswerSpan, Question, TestSet, load_testset, save_jsonl_testset

DOCS = [
    Document("a.md", "Alpha beta gamma.\nThe answer is forty two. Déjà vu."),
    Document("b.md", "Another doc with Alpha in it."),
]


def write_jsonl(tmp_path, rows, name="q.jsonl"):
    p = tmp_path / name
    p.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return p


# --------------------------------------------------------------------------- JSONL


def test_a_loaded_test_set_skipped_nothing(tmp_path):
    p = write_jsonl(tmp_path, [{"id": "q1", "question": "?", "answers": [{"text": "beta"}]}])
    ts = load_testset(p, DOCS)
    assert ts.skipped == 0 and len(ts) == 1 and ts.source == str(p)
    assert TestSet([]).skipped == 0


def test_a_start_without_an_end_locates_the_span_by_its_text(tmp_path):
    row = {"id": "q1", "question": "?", "answers": [{"doc": "a.md", "start": 0, "text": "gamma"}]}
    [q] = load_testset(write_jsonl(tmp_path, [row]), DOCS).questions
    assert (q.answers[0].start, q.answers[0].end) == (11, 16)


@pytest.mark.parametrize("start, end", [(3, 3), (5, 4), (-1, 3), (0, 10_000)])
def test_empty_reversed_or_outside_offsets_do_not_match(tmp_path, start, end):
    row = {"id": "q1", "question": "?", "answers": [{"doc": "a.md", "start": start, "end": end}]}
    # a negative start is refused as the line is read; the others when the offsets are
    # checked against the document
    match = (
        "q1: answers.0..start must not be negative"
        if start < 0
        else ("offsets do not match the text for q1")
    )
    with pytest.raises(InputError, match=match):
        load_testset(write_jsonl(tmp_path, [row]), DOCS)


def test_offsets_up_to_the_end_of_the_document_are_fine(tmp_path):
    n = len(DOCS[0].text)
    row = {"id": "q1", "question": "?", "answers": [{"doc": "a.md", "start": n - 3, "end": n}]}
    [q] = load_testset(write_jsonl(tmp_path, [row]), DOCS).questions
    assert q.answers[0].text == "vu."


@pytest.mark.parametrize("span", [{"text": "   "}, {"doc": "a.md"}, {"text": 42}, {}])
def test_a_span_needs_offsets_or_some_text(tmp_path, span):
    row = {"id": "q1", "question": "?", "answers": [span]}
    match = (
        "q1: answers.0..text must be a string"
        if span == {"text": 42}
        else "q1: a span needs start/end or text"
    )
    with pytest.raises(InputError, match=match):
        load_testset(write_jsonl(tmp_path, [row]), DOCS)


@pytest.mark.parametrize(
    "row",
    [
        {"question": "?", "answers": [{"text": "beta"}]},
        {"id": "q1", "answers": [{"text": "beta"}]},
        {"id": "q1", "question": 3, "answers": [{"text": "beta"}]},
        {"id": "q1", "question": "?", "answers": {"text": "beta"}},
        {"id": "q1", "question": "?", "answers": []},
    ],
)
def test_each_line_needs_id_question_and_answers(tmp_path, row):
    good = {"id": "q0", "question": "?", "answers": [{"text": "beta"}]}
    with pytest.raises(InputError, match=r"q\.jsonl:2: .*each line needs"):
        load_testset(write_jsonl(tmp_path, [good, row]), DOCS)


def test_questions_are_equal_whatever_their_metadata():
    span = (AnswerSpan("a.md", 0, 5, "Alpha"),)
    assert Question("q", "?", span, {"source": "reader"}) == Question("q", "?", span)
    assert Question("q", "?", span) != Question("q", "!", span)


def test_saved_jsonl_keeps_unicode_and_sorts_keys(tmp_path):
    row = {"id": "q1", "question": "Déjà?", "answers": [{"text": "Déjà vu."}], "source": "x"}
    ts = load_testset(write_jsonl(tmp_path, [row]), DOCS)
    out = tmp_path / "out.jsonl"
    save_jsonl_testset(ts, out)
    line = out.read_text(encoding="utf-8").splitlines()[0]
    assert "Déjà vu." in line and "\\u00e9" not in line
    assert list(json.loads(line)) == ["answers", "id", "question", "source"]
    assert line.index('"answers"') < line.index('"id"') < line.index('"question"')
    again = load_testset(out, DOCS)
    assert again.questions == ts.questions and again.questions[0].meta == {"source": "x"}


# --------------------------------------------------------------------------- Chroma CSV


def write_chroma(tmp_path, rows) -> object:
    p = tmp_path / "questions_df.csv"
    with open(p, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["question", "references", "corpus_id"])
        w.writerows(rows)
    return p


def ref(doc: Document, text: str) -> dict:
    s = doc.text.index(text)
    return {"content": text, "start_index": s, "end_index": s + len(text)}


def test_chroma_ids_number_the_rows_from_one(tmp_path):
    docs = [Document("a.md", DOCS[0].text)]
    p = write_chroma(
        tmp_path,
        [
            ["first?", json.dumps([ref(docs[0], "beta")]), "a"],
            ["second?", json.dumps([ref(docs[0], "forty two")]), "a"],
        ],
    )
    ts = load_testset(p, docs)
    assert [q.id for q in ts.questions] == ["a-001", "a-002"]
    assert [q.meta for q in ts.questions] == [{"source": "chroma"}] * 2


def test_chroma_bad_references_name_the_file_row(tmp_path):
    docs = [Document("a.md", DOCS[0].text)]
    p = write_chroma(
        tmp_path,
        [["ok?", json.dumps([ref(docs[0], "beta")]), "a"], ["bad?", "[{oops", "a"]],
    )
    # the header is line 1, so the second question is on line 3
    with pytest.raises(
        InputError, match=r"questions_df\.csv:3: question a-002: references is not valid"
    ):
        load_testset(p, docs)


# --------------------------------------------------------------------------- SQuAD


def squad(tmp_path, qas, context="Rollo was the first ruler of Normandy in 911."):
    data = {"data": [{"title": "Normans", "paragraphs": [{"context": context, "qas": qas}]}]}
    p = tmp_path / "squad.json"
    p.write_text(json.dumps(data), encoding="utf-8")
    return p


def test_squad_keys_each_question_to_its_first_answer(tmp_path):
    p = squad(
        tmp_path,
        [
            {
                "id": "s1",
                "question": "Who?",
                "answers": [
                    {"text": "Rollo", "answer_start": 0},
                    {"text": "911", "answer_start": 41},
                ],
            }
        ],
    )
    ts = load_testset(p, [Document("Normans/0", "x")])
    [q] = ts.questions
    assert q.answers == (AnswerSpan("Normans/0", 0, 5, "Rollo"),)


def test_squad_skips_impossible_and_unanswered_questions(tmp_path):
    p = squad(
        tmp_path,
        [
            {"id": "s1", "question": "Who?", "answers": [{"text": "Rollo", "answer_start": 0}]},
            # v2.0: impossible, even if an answer is listed
            {
                "id": "s2",
                "question": "When?",
                "is_impossible": True,
                "answers": [{"text": "911", "answer_start": 41}],
            },
            {"id": "s3", "question": "Why?", "is_impossible": False, "answers": []},
        ],
    )
    ts = load_testset(p, [Document("Normans/0", "x")])
    assert [q.id for q in ts.questions] == ["s1"] and ts.skipped == 2


def test_squad_answers_must_be_in_the_corpus_given(tmp_path):
    p = squad(
        tmp_path, [{"id": "s1", "question": "?", "answers": [{"text": "Rollo", "answer_start": 0}]}]
    )
    with pytest.raises(InputError, match="documents not in the corpus for s1"):
        load_testset(p, [Document("Other/0", "x")])


@pytest.mark.parametrize(
    "n, shown, more", [(10, 10, ""), (11, 10, " and 1 more"), (12, 10, " and 2 more")]
)
def test_an_error_lists_ten_question_ids_then_counts_the_rest(tmp_path, n, shown, more):
    rows = [
        {"id": f"q{i:02d}", "question": "?", "answers": [{"text": "not there"}]} for i in range(n)
    ]
    with pytest.raises(InputError) as info:
        load_testset(write_jsonl(tmp_path, rows), DOCS)
    ids = ", ".join(f"q{i:02d}" for i in range(shown))
    assert f"answer text not found for {ids}{more} (copy the passage exactly)" in str(info.value)

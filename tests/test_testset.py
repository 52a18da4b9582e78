"""Test sets: our JSONL (spans by offsets or by text), Chroma CSV, SQuAD."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragmeter.errors import InputError
from ragmeter.inputs.corpus import Document, load_corpus
from ragmeter.inputs.testset import load_testset, save_jsonl_testset

DOCS = [
    Document("a.md", "Alpha beta gamma.\nThe answer is  forty\ntwo. Alpha again."),
    Document("b.md", "Another doc with Alpha in it."),
]


def write(tmp_path, rows):
    p = tmp_path / "q.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return p


def test_span_by_text_exact_then_whitespace_insensitive(tmp_path):
    p = write(
        tmp_path,
        [
            {"id": "q1", "question": "?", "answers": [{"doc": "a.md", "text": "beta gamma"}]},
            {"id": "q2", "question": "?", "answers": [{"text": "The answer is forty two."}]},
        ],
    )
    ts = load_testset(p, DOCS)
    q1, q2 = ts.questions
    assert (q1.answers[0].start, q1.answers[0].end) == (6, 16)
    span = q2.answers[0]
    assert span.doc == "a.md"
    assert DOCS[0].text[span.start : span.end] == "The answer is  forty\ntwo."
    assert span.text == DOCS[0].text[span.start : span.end]


def test_missing_and_ambiguous_spans_list_question_ids(tmp_path):
    p = write(
        tmp_path,
        [
            {"id": "q1", "question": "?", "answers": [{"text": "not there"}]},
            {"id": "q2", "question": "?", "answers": [{"text": "Alpha"}]},
            {"id": "q3", "question": "?", "answers": [{"doc": "a.md", "text": "Alpha"}]},
            {"id": "q4", "question": "?", "answers": [{"doc": "zzz.md", "text": "Alpha"}]},
        ],
    )
    with pytest.raises(InputError) as info:
        load_testset(p, DOCS)
    msg = str(info.value)
    assert "\n" not in msg
    assert "not found for q1" in msg
    assert "more than once for q2 (give doc or start/end)" in msg
    # q3 names its doc: only offsets (or a longer text) can tell which one
    assert "more than once in its doc for q3 (2 times in a.md) (give start/end" in msg
    assert "unknown document for q4 (zzz.md)" in msg


def test_offsets_must_match_text(tmp_path):
    p = write(
        tmp_path,
        [
            {
                "id": "q1",
                "question": "?",
                "answers": [{"doc": "a.md", "start": 0, "end": 5, "text": "Beta!"}],
            }
        ],
    )
    with pytest.raises(InputError, match="offsets do not match the text for q1"):
        load_testset(p, DOCS)


def test_malformed_line_and_duplicate_id(tmp_path):
    p = tmp_path / "q.jsonl"
    p.write_text('{"id": "q1", "question": "?", "answers": [{"text": "beta"}]}\n{oops\n')
    with pytest.raises(InputError, match=r"q\.jsonl:2: malformed JSON"):
        load_testset(p, DOCS)
    p.write_text('{"id": "q1", "question": "?", "answers": [{"text": "beta"}]}\n' * 2)
    with pytest.raises(InputError, match=r"q\.jsonl:2: duplicate question id 'q1'"):
        load_testset(p, DOCS)


@settings(max_examples=60, deadline=None)
@given(
    st.text(
        alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=5, max_size=200
    ),
    st.data(),
)
def test_save_and_reload_keeps_offsets(tmp_path_factory, text, data):
    start = data.draw(st.integers(0, len(text) - 1))
    end = data.draw(st.integers(start + 1, len(text)))
    doc = Document("d", text)
    tmp = tmp_path_factory.mktemp("ts")
    p = write(
        tmp, [{"id": "q", "question": "?", "answers": [{"doc": "d", "start": start, "end": end}]}]
    )
    ts = load_testset(p, [doc])
    save_jsonl_testset(ts, tmp / "out.jsonl")
    again = load_testset(tmp / "out.jsonl", [doc])
    assert again.questions == ts.questions
    a = again.questions[0].answers[0]
    assert text[a.start : a.end] == a.text


def test_chroma_import_resolves_all_790_spans(shared_data):
    docs = load_corpus(shared_data / "chroma" / "corpora")
    ts = load_testset(shared_data / "chroma" / "questions_df.csv", docs)
    spans = [a for q in ts.questions for a in q.answers]
    assert len(ts) == 472 and len(spans) == 790
    by_id = {d.id: d.text for d in docs}
    assert all(by_id[a.doc][a.start : a.end] == a.text for a in spans)
    assert {len(q.answers) for q in ts.questions} == {1, 2, 3, 4, 5}


def test_squad_import_skips_unanswerable(shared_data):
    path = shared_data / "squad-small" / "small.json"
    ts = load_testset(path, load_corpus(path))
    assert len(ts) + ts.skipped == 626
    assert ts.skipped == 333


def test_cluster_field_names_each_questions_group_else_its_answer_document(tmp_path):
    from ragmeter.inputs.testset import question_clusters

    rows = [
        {"id": "q1", "question": "a?", "answers": [{"doc": "a.md", "text": "forty two"}]},
        {"id": "q2", "question": "b?", "answers": [{"doc": "b.md", "text": "Another"}]},
    ]
    ts = load_testset(write(tmp_path, rows), DOCS)
    assert question_clusters(ts.questions) == (("a.md", "b.md"), "document")
    assert question_clusters(ts.questions, "none") == (None, "none")
    with pytest.raises(InputError, match=r"question 'q1' has no \"cluster\" field \(2 of 2"):
        question_clusters(ts.questions, "field")
    rows[0]["cluster"] = "topic-1"
    rows[1]["cluster"] = 7
    ts = load_testset(write(tmp_path, rows), DOCS)
    assert question_clusters(ts.questions) == (("topic-1", "7"), "field")
    assert question_clusters(ts.questions, "document") == (("a.md", "b.md"), "document")
    del rows[1]["cluster"]
    ts = load_testset(write(tmp_path, rows), DOCS)
    with pytest.raises(InputError, match=r"question 'q2' has no \"cluster\" field \(1 of 2"):
        question_clusters(ts.questions)  # some lines with one, some without: a slip


@pytest.mark.parametrize("value", ["", "  ", True, 1.5, ["a"], {"doc": "a"}])
def test_a_bad_cluster_value_is_one_line_naming_the_file_and_line(tmp_path, value):
    rows = [
        {"id": "q1", "question": "a?", "answers": [{"doc": "a.md", "text": "forty two"}]},
        {
            "id": "q2",
            "question": "b?",
            "answers": [{"doc": "b.md", "text": "Another"}],
            "cluster": value,
        },
    ]
    with pytest.raises(InputError, match=r"q\.jsonl:2") as err:
        load_testset(write(tmp_path, rows), DOCS)
    assert "cluster" in str(err.value) and "\n" not in str(err.value)


def test_questions_judged_by_qrels_have_no_document_clusters_unless_given(tmp_path):
    from ragmeter.inputs.testset import question_clusters

    rows = [
        {"id": "q1", "question": "a?", "qrels": {"a.md": 1}},
        {"id": "q2", "question": "b?", "qrels": {"b.md": 2}},
    ]
    ts = load_testset(write(tmp_path, rows), DOCS)
    assert question_clusters(ts.questions) == (None, "none")
    with pytest.raises(InputError, match="judged by qrels and names no answer document"):
        question_clusters(ts.questions, "document")
    rows[0]["cluster"], rows[1]["cluster"] = "x", "y"
    ts = load_testset(write(tmp_path, rows), DOCS)
    assert question_clusters(ts.questions) == (("x", "y"), "field")

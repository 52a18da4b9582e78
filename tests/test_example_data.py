"""Integrity checks for the shipped example data set (standard library only)."""

import json
import re

import pytest
from conftest import EXAMPLE


def _posts():
    return sorted((EXAMPLE / "posts").glob("*.md"))


def _questions():
    lines = (EXAMPLE / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _doc_text(doc):
    return (EXAMPLE / "posts" / doc).read_text(encoding="utf-8")


def _words(text):
    return re.findall(r"[a-z]+", text.lower())


def _overlap(question, passage):
    """Share of the question's content words (>= 4 letters) found in the passage."""
    qwords = {w for w in _words(question) if len(w) >= 4}
    if not qwords:
        return 0.0
    return len(qwords & set(_words(passage))) / len(qwords)


def test_enough_posts():
    posts = _posts()
    assert len(posts) >= 20
    for post in posts:
        text = post.read_text(encoding="utf-8")
        assert text.startswith("# "), post.name
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*\.md", post.name), post.name


def test_enough_questions_with_unique_ids():
    questions = _questions()
    assert len(questions) >= 80
    ids = [q["id"] for q in questions]
    assert len(ids) == len(set(ids))
    for q in questions:
        assert q["question"].strip()
        assert q["answers"], q["id"]
        assert q["source"] == "reader"


def test_spans_match_their_documents():
    for q in _questions():
        for span in q["answers"]:
            text = _doc_text(span["doc"])
            assert 0 <= span["start"] < span["end"] <= len(text), q["id"]
            assert text[span["start"] : span["end"]] == span["text"], q["id"]
            assert span["text"] == span["text"].strip(), q["id"]


def test_span_text_is_unique_in_its_document():
    for q in _questions():
        for span in q["answers"]:
            assert _doc_text(span["doc"]).count(span["text"]) == 1, q["id"]


def test_every_post_has_a_question():
    asked = {span["doc"] for q in _questions() for span in q["answers"]}
    posts = {p.name for p in _posts()}
    assert asked <= posts
    assert posts - asked == set()


def test_multi_span_questions_stay_in_one_post():
    multi = [q for q in _questions() if len(q["answers"]) > 1]
    assert multi
    for q in multi:
        assert len({span["doc"] for span in q["answers"]}) == 1, q["id"]


def test_questions_paraphrase_their_passages():
    questions = _questions()
    scores = [
        _overlap(q["question"], " ".join(span["text"] for span in q["answers"])) for q in questions
    ]
    mean = sum(scores) / len(scores)
    print(f"mean question/passage content-word overlap: {mean:.3f}")
    assert mean < 0.5


@pytest.mark.parametrize("name", ["README.md", "questions.jsonl"])
def test_package_files_present(name):
    assert (EXAMPLE / name).is_file()

"""Small corpora just work: ks above a system's item count are capped (and marked), and
strategies or systems that come out identical are named, instead of the run stopping."""

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from ragmeter.cli import app
from ragmeter.inputs.config import Config
from ragmeter.inputs.corpus import Document
from ragmeter.inputs.testset import AnswerSpan, Question, TestSet
from ragmeter.runs import warnings as checks
from ragmeter.runs.pipeline import run_search

runner = CliRunner()

# The README's sample config, verbatim but for the paths.
README_CONFIG = """
[corpus]
path = "docs"
[testset]
path = "questions.jsonl"
[search]
strategies = ["fixed", "overlap", "sentence", "recursive", "parent-400", "fixed-300"]
retrievers = ["bm25"]
ks = [1, 3, 5, 10]
[stats]
seed = 1
rounds = 1000
metric = "recall@5"
[output]
dir = "ragmeter-results"

[[strategy]]
name = "fixed-300"
kind = "fixed"
size = 300
"""

TOPICS = [
    ("cats", "Cats sleep for sixteen hours a day.", "how long do cats sleep"),
    ("dogs", "A dog's nose has three hundred million receptors.", "receptors in a dog nose"),
    ("fish", "Goldfish remember things for months.", "how long do goldfish remember"),
    ("owls", "Owls turn their heads two hundred seventy degrees.", "how far can owls turn"),
    ("bees", "Bees dance to show where flowers are.", "why do bees dance"),
    ("ants", "Ants carry fifty times their own weight.", "how much can ants carry"),
    ("bats", "Bats find insects by echolocation at night.", "how do bats find insects"),
    ("crows", "Crows recognise individual human faces.", "do crows recognise faces"),
    ("frogs", "Frogs absorb water through their skin.", "how do frogs drink"),
]


def write_case(root, n_docs):
    (root / "docs").mkdir()
    questions = []
    for name, fact, question in TOPICS[:n_docs]:
        text = f"# {name.title()}\n\nSome words about {name} and their lives. {fact} The end.\n"
        (root / "docs" / f"{name}.md").write_text(text)
        questions.append({"id": name, "question": question, "answers": [{"text": fact}]})
    (root / "questions.jsonl").write_text("".join(json.dumps(q) + "\n" for q in questions))
    (root / "ragmeter.toml").write_text(README_CONFIG)


@pytest.mark.parametrize("n_docs", [2, 9])
def test_readme_config_on_a_tiny_corpus_gives_the_full_table(tmp_path, monkeypatch, n_docs):
    write_case(tmp_path, n_docs)
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["search"])
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert f"{n_docs} questions, {n_docs} documents, 6 systems" in out
    # Every system is in the table, and the capped cells are marked with a footnote.
    for name in ("fixed", "overlap", "sentence", "recursive", "parent-400", "fixed-300"):
        assert f" {name} " in out
    assert "recall@10" in out and "*" in out
    assert f"k capped at the system's item count: {n_docs} items for fixed, overlap" in out
    # One warning line for the capped systems, on stderr.
    assert f"fixed-300 make only {n_docs} items each: k above {n_docs} is scored at" in (
        result.stderr
    )
    summary = json.loads((tmp_path / "ragmeter-results" / "summary.json").read_text())
    assert summary["k_capped"]["fixed"] == n_docs
    meta = json.loads((tmp_path / "ragmeter-results" / "meta.json").read_text())
    assert {s["name"]: s.get("k_cap") for s in meta["systems"]}["fixed"] == n_docs
    # Short documents: every strategy makes one chunk per document, and the warning says so.
    assert "make identical chunks of this corpus" in result.stderr
    assert "fixed, overlap, sentence, recursive, parent-400, fixed-300" in result.stderr


def test_capped_scores_are_the_scores_at_the_item_count():
    docs = [Document(f"d{i}", f"Topic{i} word{i} more text here.") for i in range(3)]
    qs = [
        Question(f"q{i}", f"topic{i}", (AnswerSpan(f"d{i}", 0, 6, f"Topic{i}"),)) for i in range(3)
    ]
    run = run_search(Config(strategies=("whole",), ks=(1, 2, 5), rounds=200), docs, TestSet(qs))
    (system,) = run.systems
    assert system.k_cap == 3
    # precision@5 on three items is precision at 3: one relevant of three, not of five.
    np.testing.assert_allclose(system.scores["precision@5"], 1 / 3)
    np.testing.assert_allclose(system.scores["precision@2"], 1 / 2)
    assert system.scores["words@5"].tolist() == [15.0, 15.0, 15.0]  # all three items
    assert checks.capped_ks(run) == {"whole": 3}


def test_identical_rankings_are_named_but_distinct_ones_are_not():
    docs = [Document(f"d{i}", " ".join(f"w{i}x{j}" for j in range(40))) for i in range(4)]
    qs = [Question(f"q{i}", f"w{i}x3", (AnswerSpan(f"d{i}", 0, 4, f"w{i}x0"),)) for i in range(4)]
    cfg = Config(strategies=("whole", "fixed", "recursive"), ks=(1, 2), rounds=200)
    run = run_search(cfg, docs, TestSet(qs))
    lines = checks.run_warnings(run)
    # whole, fixed (200 words) and recursive (200 words) all make one chunk per document.
    assert lines == ["strategies whole, fixed, recursive make identical chunks of this corpus"]
    cfg = Config(
        strategies=("whole", "small", "small2"),
        custom_strategies=(
            {"name": "small", "kind": "fixed", "size": 10},
            {"name": "small2", "kind": "overlap", "size": 10, "overlap": 5},
        ),
        ks=(1, 2),
        rounds=200,
    )
    run = run_search(cfg, docs, TestSet(qs))
    assert checks.run_warnings(run) == []


def test_chunking_key_tells_chunkings_apart_by_documents_offsets_and_parents():
    from ragmeter.chunking.strategies import Chunk, Chunking
    from ragmeter.runs.pipeline import chunking_key

    text = "alpha beta gamma delta"
    base = [Chunk.span("a", text, 0, 10), Chunk.span("a", text, 11, 22)]
    same = [Chunk("a", 0, 10, "alpha beta"), Chunk("a", 11, 22, "gamma delta")]
    key = chunking_key(Chunking("s", base))
    assert key == chunking_key(Chunking("s", same))  # views or held texts: the same chunks
    others = [
        [Chunk.span("a", text, 0, 10), Chunk.span("a", text, 11, 21)],  # an offset
        [Chunk.span("a", text, 0, 10), Chunk.span("b", text, 11, 22)],  # a document
        [Chunk.span("a", text, 0, 10, parent=0), Chunk.span("a", text, 11, 22, parent=0)],
        base[:1],
    ]
    assert len({key, *(chunking_key(Chunking("s", o)) for o in others)}) == 1 + len(others)
    parents = [Chunk.span("a", text, 0, 22)]
    with_parents = [Chunk.span("a", text, 0, 10, parent=0), Chunk.span("a", text, 11, 22, parent=0)]
    assert chunking_key(Chunking("s", with_parents, parents)) != chunking_key(
        Chunking("s", with_parents)
    )

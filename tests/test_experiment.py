"""The search route end to end on small corpora: ranking, grading, scores, results."""

import filecmp
import json

import numpy as np
import pytest

from ragmeter.chunking import chunk_corpus, make_strategy
from ragmeter.config import Config
from ragmeter.corpus import Document
from ragmeter.errors import InputError
from ragmeter.experiment import rank_chunking, run_search
from ragmeter.results import Results, save_results
from ragmeter.retrieval.bm25 import BM25Retriever
from ragmeter.testset import AnswerSpan, Question, TestSet


def small_case():
    docs = [
        Document("cats.md", "Cats sleep for sixteen hours a day. Cats purr when content."),
        Document("dogs.md", "Dogs bark at strangers. A dog's nose has 300 million receptors."),
        Document("fish.md", "Fish breathe through gills. Goldfish remember for months."),
    ]

    def q(qid, text, doc, passage):
        d = next(x for x in docs if x.id == doc)
        s = d.text.index(passage)
        return Question(qid, text, (AnswerSpan(doc, s, s + len(passage), passage),))

    questions = [
        q("q1", "how many hours do cats sleep", "cats.md", "Cats sleep for sixteen hours a day."),
        q(
            "q2",
            "how many smell receptors in a dog nose",
            "dogs.md",
            "A dog's nose has 300 million receptors.",
        ),
        q("q3", "how long do goldfish remember", "fish.md", "Goldfish remember for months."),
    ]
    return docs, TestSet(questions)


def test_whole_documents_rank_the_right_document_first():
    docs, ts = small_case()
    run = run_search(Config(strategies=("whole",), ks=(1, 3), rounds=200), docs, ts)
    (system,) = run.systems
    assert [row[0].doc for row in system.items] == ["cats.md", "dogs.md", "fish.md"]
    assert all(row[0].grade == 2 for row in system.items)
    assert system.scores["recall@1"].tolist() == [1.0, 1.0, 1.0]
    # Three documents, k = 3: exactly one holds the passage, so precision@3 is 1/3.
    np.testing.assert_allclose(system.scores["precision@3"], 1 / 3)
    # Words sent at k=1 are the words of the returned document.
    assert system.scores["words@1"].tolist() == [11.0, 11.0, 8.0]


def test_parent_child_returns_each_parent_once_at_its_best_rank():
    text = " ".join(f"Sentence number {i} talks about topic{i % 3}." for i in range(60))
    docs = [Document("d", text)]
    strategy = make_strategy("parent-small", kind="parent-child", parent_size=40, child_size=10)
    chunked = chunk_corpus(docs, strategy)
    retriever = BM25Retriever()
    ids, scores = rank_chunking(retriever, chunked, [Question("q", "topic1", ())], depth=5)
    assert len(ids[0]) == len(set(ids[0])) == min(5, len(chunked.parents))
    assert scores[0] == sorted(scores[0], reverse=True)
    # The first parent returned holds the best-scoring child.
    retriever.index([c.text for c in chunked.chunks])
    best_child = retriever.rank(["topic1"], 1).ids[0, 0]
    assert ids[0][0] == chunked.chunks[best_child].parent


def test_same_inputs_same_bytes(tmp_path):
    docs, ts = small_case()
    cfg = Config(strategies=("whole", "fixed", "sentence"), ks=(1, 2), rounds=500)
    for name in ("a", "b"):
        save_results(run_search(cfg, docs, ts), tmp_path / name)
    names = sorted(p.name for p in (tmp_path / "a").iterdir())
    match, mismatch, errors = filecmp.cmpfiles(tmp_path / "a", tmp_path / "b", names, shallow=False)
    assert mismatch == [] and errors == [] and sorted(match) == names


def test_results_round_trip(tmp_path):
    docs, ts = small_case()
    cfg = Config(strategies=("whole", "sentence"), ks=(1, 2), rounds=300, seed=7)
    run = run_search(cfg, docs, ts)
    save_results(run, tmp_path / "r")
    res = Results(tmp_path / "r")
    assert res.systems == ["whole", "sentence"]
    assert res.question_ids == ["q1", "q2", "q3"]
    np.testing.assert_array_equal(
        res.scores("whole", "recall@1"), run.systems[0].scores["recall@1"]
    )
    item = res.runs["whole"]["q2"][0]
    assert item.text == docs[1].text and item.grade == 2
    est = res.summary.estimate("sentence", "recall@1").to_dict()
    assert est["seed"] == 7 and est["rounds"] == 300 and est["low"] <= est["mean"] <= est["high"]
    meta = json.loads((tmp_path / "r" / "meta.json").read_text())
    assert meta["seed"] == 7 and meta["versions"]["bm25s"]


def test_k_larger_than_the_index_is_capped_at_the_item_count():
    docs, ts = small_case()
    run = run_search(Config(strategies=("whole",), ks=(1, 3, 5), rounds=200), docs, ts)
    assert run.systems[0].k_cap == 3
    for name in ("recall", "precision", "mrr", "ndcg", "coverage", "words"):
        assert run.systems[0].scores[f"{name}@5"].tolist() == (
            run.systems[0].scores[f"{name}@3"].tolist()
        )


def test_unknown_strategy_is_bad_input():
    docs, ts = small_case()
    with pytest.raises(InputError, match="unknown"):
        run_search(Config(strategies=("nope",)), docs, ts)


def test_failed_save_leaves_no_directory(tmp_path, monkeypatch):
    docs, ts = small_case()
    run = run_search(Config(strategies=("whole",), ks=(1,), rounds=200), docs, ts)
    import ragmeter.saving as results

    def boom(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(results, "_write_lines", boom)
    with pytest.raises(OSError):
        save_results(run, tmp_path / "out")
    assert list(tmp_path.iterdir()) == []


def test_rerun_keeps_answers_and_refuses_to_drop_them(tmp_path):
    docs, ts = small_case()
    cfg = Config(strategies=("whole",), ks=(1,), rounds=200)
    out = tmp_path / "r"
    save_results(run_search(cfg, docs, ts), out)
    (out / "answers").mkdir()
    (out / "answers" / "hand.jsonl").write_text('{"grade": "c"}\n')
    # Same systems and questions: the hand grades survive the rerun.
    save_results(run_search(cfg, docs, ts), out, overwrite=True)
    assert (out / "answers" / "hand.jsonl").read_text() == '{"grade": "c"}\n'
    # Other systems: refusing beats silently losing hand grades.
    other = Config(strategies=("whole", "fixed"), ks=(1,), rounds=200)
    with pytest.raises(InputError, match="holds answers from a run with other systems"):
        save_results(run_search(other, docs, ts), out, overwrite=True)
    assert (out / "answers" / "hand.jsonl").exists()

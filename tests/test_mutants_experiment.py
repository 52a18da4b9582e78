"""``ragmeter.experiment``: a search's stage timings on a fake clock, its progress steps
with chunk and span retrievers, k capped only past the item count, each chunking indexed
once, and ``rank_chunking`` over padded and parent-child rankings."""

from __future__ import annotations

import itertools
from types import SimpleNamespace

import numpy as np
import pytest

from ragmeter import experiment
from ragmeter.config import Config
from ragmeter.corpus import Document
from ragmeter.experiment import rank_chunking, run_search
from ragmeter.retrieval.base import Ranking
from ragmeter.retrieval.bm25 import BM25Retriever
from ragmeter.testset import AnswerSpan, Question, TestSet

DOCS = [
    Document("cats.md", "Cats sleep for sixteen hours a day. Cats purr when content."),
    Document("dogs.md", "Dogs bark at strangers. A dog's nose has 300 million receptors."),
    Document("fish.md", "Fish breathe through gills. Goldfish remember for months."),
]


def _testset() -> TestSet:
    def q(qid, text, doc, passage):
        d = next(x for x in DOCS if x.id == doc)
        s = d.text.index(passage)
        return Question(qid, text, (AnswerSpan(doc, s, s + len(passage), passage),))

    return TestSet(
        [
            q(
                "q1",
                "how many hours do cats sleep",
                "cats.md",
                "Cats sleep for sixteen hours a day.",
            ),
            q("q2", "dog nose receptors", "dogs.md", "A dog's nose has 300 million receptors."),
            q("q3", "how long do goldfish remember", "fish.md", "Goldfish remember for months."),
        ]
    )


def test_stage_timings_partition_the_run_on_a_fake_clock(monkeypatch):
    ticks = itertools.count()
    handed: list[float] = []

    def perf_counter() -> float:
        handed.append(float(next(ticks)))
        return handed[-1]

    monkeypatch.setattr(experiment, "time", SimpleNamespace(perf_counter=perf_counter))
    config = Config(strategies=("sentence", "whole"), ks=(1, 3), rounds=200)
    run = run_search(config, DOCS, _testset())
    assert {"load", "chunk", "index", "rank", "grade", "score"} <= set(run.timings)
    assert all(v >= 0 for v in run.timings.values()), run.timings
    # the stages add up to the time from the first reading to the last, each tick once
    # (the retrievers' own work during sentence segmentation moves from chunk to index)
    assert sum(run.timings.values()) == handed[-1] - handed[0]


def test_progress_counts_every_system_once(tmp_path):
    run_file = tmp_path / "r.trec"
    run_file.write_text("q1 Q0 cats.md 1 2.0 t\nq2 Q0 dogs.md 1 1.0 t\n")
    span = {"name": "file", "kind": "run-file", "path": str(run_file)}
    other = dict(span, name="file2")
    config = Config(
        strategies=("whole", "sentence"), retrievers=("bm25", span, other), ks=(1,), rounds=200
    )
    seen: list[tuple[str, int, int]] = []
    run = run_search(config, DOCS, _testset(), progress=lambda s, d, t: seen.append((s, d, t)))
    steps = [x for x in seen if not x[0].startswith("sentences") and "embedding" not in x[0]]
    assert [(stage, done) for stage, done, _ in steps] == [
        ("whole · chunking", 0),
        ("whole · bm25", 0),
        ("sentence · chunking", 1),
        ("sentence · bm25", 1),
        ("file", 2),
        ("file2", 3),
        ("done", 4),
    ]
    assert {total for _, _, total in steps} == {4}  # one step a system, throughout
    names = [s.name for s in run.systems]
    assert names == ["whole/bm25", "sentence/bm25", "file", "file2"]
    file_run = run.system("file")
    assert [len(row) for row in file_run.items] == [1, 1, 0]
    assert file_run.items[0][0].doc == "cats.md" and file_run.items[0][0].grade == 2
    assert file_run.scores["recall@1"].tolist() == [1.0, 1.0, 0.0]


def test_k_is_capped_only_past_the_item_count():
    run = run_search(Config(strategies=("whole",), ks=(1, 3), rounds=200), DOCS, _testset())
    assert run.systems[0].n_items == 3 and run.systems[0].k_cap is None
    run = run_search(Config(strategies=("whole",), ks=(1, 4), rounds=200), DOCS, _testset())
    assert run.systems[0].k_cap == 3


def test_each_chunking_is_indexed_once(monkeypatch):
    calls: list[int] = []
    real = BM25Retriever.index

    def index(self, texts):
        calls.append(len(texts))
        return real(self, texts)

    monkeypatch.setattr(BM25Retriever, "index", index)
    run_search(Config(strategies=("whole", "fixed"), ks=(1,), rounds=200), DOCS, _testset())
    assert calls == []  # index_chunks builds each index; ranking does not rebuild it


class _Fixed:
    """A retriever that hands back the same ranking, recording each k asked for."""

    def __init__(self, ids, scores=None):
        self.ids, self.asked = np.array(ids), []
        self.scores = np.array(scores if scores is not None else -np.arange(self.ids.shape[1]))

    def rank(self, texts, k):
        self.asked.append(k)
        ids = np.tile(self.ids[:, :k], (len(texts), 1))
        scores = np.tile(self.scores[:k].astype(float), (len(texts), 1))
        return Ranking(ids=ids, scores=scores)


def test_padding_is_dropped_from_ids_and_scores_alike():
    chunked = SimpleNamespace(chunks=[SimpleNamespace(text="a"), SimpleNamespace(text="b")])
    chunked.parents = None
    r = _Fixed([[1, -1]], [0.5, 0.0])
    q = [Question("q1", "a", ())]
    assert rank_chunking(r, chunked, q, 2, indexed=True) == ([[1]], [[0.5]])


def test_parent_child_ranks_once_when_the_first_k_holds_enough_parents():
    chunks = [SimpleNamespace(text=str(i), parent=i // 2) for i in range(40)]
    chunked = SimpleNamespace(chunks=chunks, parents=list(range(20)))
    r = _Fixed([list(range(40))])
    ids, scores = rank_chunking(r, chunked, [Question("q1", "x", ())], 3, indexed=True)
    assert ids == [[0, 1, 2]] and scores == [[0.0, -2.0, -4.0]]
    assert r.asked == [12]  # depth x 4 children were enough for 3 parents
    few = _Fixed([[0, 1] * 20])  # two parents only: k grows to every child, then stops
    ids, _ = rank_chunking(few, chunked, [Question("q1", "x", ())], 3, indexed=True)
    assert ids == [[0]] and few.asked == [12, 40]


def test_a_strategy_needing_no_syntok_starts_no_engine(monkeypatch):
    import ragmeter.engine

    made: list[str] = []
    real = ragmeter.engine.make_engine
    monkeypatch.setattr(
        ragmeter.engine, "make_engine", lambda *a, **k: made.append(a[0]) or real(*a, **k)
    )
    run_search(Config(strategies=("whole",), ks=(1,), rounds=200), DOCS, _testset())
    assert made == []
    run_search(Config(strategies=("sentence",), ks=(1,), rounds=200), DOCS, _testset())
    assert made == ["local"]


@pytest.mark.parametrize("strategy", ["whole", "sentence"])
def test_needs_sentences_only_for_syntok_sentences(strategy):
    (s,) = experiment.resolve_strategies(Config(strategies=(strategy,)))
    assert experiment._needs_sentences(s) is (strategy == "sentence")


def test_a_qrels_search_reads_its_topics_with_their_judgments(tmp_path):
    (tmp_path / "topics.tsv").write_text("t1\tcats sleep\nt2\tgoldfish memory\n")
    (tmp_path / "qrels.txt").write_text("t1 0 cats.md 1\nt2 0 fish.md 2\n")
    config = Config(
        testset=str(tmp_path / "topics.tsv"),
        qrels=str(tmp_path / "qrels.txt"),
        strategies=("whole",),
        ks=(1,),
        rounds=200,
    )
    run = run_search(config, DOCS)
    assert run.question_ids == ["t1", "t2"]
    assert [q.text for q in run.questions] == ["cats sleep", "goldfish memory"]
    assert run.systems[0].scores["recall@1"].tolist() == [1.0, 1.0]

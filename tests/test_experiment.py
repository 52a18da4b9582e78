"""The search route end to end on small corpora: ranking, grading, scores, results."""

import filecmp
import itertools
import json
from types import SimpleNamespace

import numpy as np
import pytest

from ragmeter.chunking.strategies import chunk_corpus, make_strategy
from ragmeter.errors import InputError
from ragmeter.inputs.config import Config
from ragmeter.inputs.corpus import Document
from ragmeter.inputs.testset import AnswerSpan, Question, TestSet
from ragmeter.retrieval.base import Ranking
from ragmeter.retrieval.bm25 import BM25Retriever
from ragmeter.runs import pipeline as experiment
from ragmeter.runs.pipeline import rank_chunking, run_search
from ragmeter.runs.results import Results, save_results


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
    import ragmeter.runs.saving as results

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


# ``ragmeter.runs.pipeline``: a search's stage timings on a fake clock, its progress steps with
# chunk and span retrievers, k capped only past the item count, each chunking indexed once, and
# ``rank_chunking`` over padded and parent-child rankings.

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


def test_only_a_strategy_of_syntok_sentences_starts_an_engine(monkeypatch):
    import ragmeter.engine

    made: list[str] = []
    real = ragmeter.engine.make_engine
    monkeypatch.setattr(
        ragmeter.engine, "make_engine", lambda *a, **k: made.append(a[0]) or real(*a, **k)
    )
    run_search(Config(strategies=("whole",), ks=(1,), rounds=200), DOCS, _testset())
    assert made == []
    run_search(Config(strategies=("sentence",), ks=(1,), rounds=200), DOCS, _testset())
    assert made == []  # ICU's sentences, found as the corpus is chunked
    syntok = ({"name": "sentence", "kind": "sentence", "segmenter": "syntok"},)
    config = Config(strategies=("sentence",), custom_strategies=syntok, ks=(1,), rounds=200)
    run_search(config, DOCS, _testset())
    assert made == ["local"]


@pytest.mark.parametrize(
    ("strategy", "segmenter", "needs"),
    [("whole", None, False), ("sentence", None, False), ("sentence", "icu", False),
     ("sentence", "blingfire", False), ("sentence", "syntok", True),
     ("parent-200", "syntok", True), ("parent-200", None, False)],
)  # fmt: skip
def test_needs_sentences_up_front_only_for_syntok_sentences(strategy, segmenter, needs):
    custom = ()
    if segmenter is not None:
        custom = ({**make_strategy(strategy).describe(), "segmenter": segmenter},)
    (s,) = experiment.resolve_strategies(Config(strategies=(strategy,), custom_strategies=custom))
    assert experiment._needs_sentences(s) is needs


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

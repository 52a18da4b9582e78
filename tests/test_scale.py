"""Large-corpus paths give exactly what the plain paths give.

* Fingerprints of every built-in strategy's chunks and of whole BM25 runs (items, scores as
  float hex, grades, words and every metric vector), recorded before the chunking and
  indexing were made faster, on the shipped example and on Chroma's corpora (and two
  paragraph-shuffled copies of them, large enough for the worker processes to start), with
  syntok's sentences (the default then, named now); and those of ICU's sentences (the
  default since), recorded when ICU became the default.
* Property tests against reference implementations kept here: syntok run on the whole text,
  ``bm25s.tokenize`` + ``BM25.index``, the regex word count.
"""

from __future__ import annotations

import hashlib
import random
import re
import sys

import bm25s
import numpy as np
import pytest
from conftest import EXAMPLE, SHARED_DATA
from hypothesis import given, settings
from hypothesis import strategies as st
from syntok import segmenter

from ragmeter import engine
from ragmeter.chunking import strategies as chunking
from ragmeter.chunking.strategies import Chunk, chunk_corpus, make_strategy, prepare_sentences
from ragmeter.errors import InputError
from ragmeter.inputs.config import DEFAULT_STRATEGIES, Config, load_config
from ragmeter.inputs.corpus import Document, load_corpus
from ragmeter.inputs.testset import load_testset
from ragmeter.retrieval import bm25 as bm25_mod
from ragmeter.retrieval.bm25 import BM25Retriever
from ragmeter.runs.pipeline import count_words, run_search

CHROMA = SHARED_DATA / "chroma"
needs_chroma = pytest.mark.skipif(not CHROMA.is_dir(), reason="../shared/data/chroma is absent")

# Recorded with the implementation before this file existed (chunk count, sha256 prefix);
# `whole` re-recorded when it began to keep the document's full text (trailing newline).
# fmt: off
FINGERPRINTS = {
     "chunks/chroma": {
         "fixed": [
             1151,
             "6c75917ff0ae6cb09db8330c"
         ],
         "overlap": [
             2293,
             "5b8e063765880062e2224361"
         ],
         "parent-200": [
             5958,
             "9eb12e48888abd37b0728a4d"
         ],
         "parent-400": [
             2993,
             "72b07136a6483aeec050fdd5"
         ],
         "recursive": [
             1662,
             "83f93f9fbc901df2541dfced"
         ],
         "sentence": [
             1452,
             "b108bb7d584ec31fde614a56"
         ],
         "whole": [
             5,
             "380880569d122308f25be5c5"
         ]
     },
     "chunks/chroma-x2": {
         "fixed": [
             2302,
             "f853568d6afbccb7b941f3f3"
         ],
         "overlap": [
             4586,
             "8a10efdfe7684de6e0cf2eea"
         ],
         "parent-200": [
             11967,
             "2a377361877e41dae395b6eb"
         ],
         "parent-400": [
             5977,
             "754e541f65ea77154c8d37dc"
         ],
         "recursive": [
             3319,
             "92952ae48435ad64f4b59ad4"
         ],
         "sentence": [
             2889,
             "1ceda63413966f1de0eb0ecc"
         ],
         "whole": [
             10,
             "9e15e6271ac09e344620cce9"
         ]
     },
     "chunks/example": {
         "fixed": [
             99,
             "842b8d43db458c33292ad729"
         ],
         "overlap": [
             154,
             "ec4547d672fe1a7052720a41"
         ],
         "parent-200": [
             455,
             "a09ab5beba20006ea4bef59e"
         ],
         "parent-400": [
             205,
             "a676538fecc290d49f77287e"
         ],
         "recursive": [
             106,
             "20863df9558e06f579414aa8"
         ],
         "sentence": [
             100,
             "b971f1e6a57b4500db2425fa"
         ],
         "whole": [
             25,
             "d4c603767bc2dbd881e2e377"
         ]
     },
     "run/chroma": {
         "fixed": "d3ffe9f6d386a0a33ec8d023",
         "overlap": "89c5045ce335db823a3f386b",
         "parent-200": "9ba5c12f7d8377471d92f5c7",
         "parent-400": "2d5a494d1258b551bc29904a",
         "recursive": "3afaaed1bf164c61b512f33f",
         "sentence": "ace3b3de63ac0974dbc66e99",
         "whole": "a25fbb74d16a80e4b3f1ba2f"
     },
     "run/chroma-x2": {
         "fixed": "7fb45e132b7bbb2f857d9fd9",
         "sentence": "757c9719e8f7167967c6513f"
     },
     "run/example": {
         "fixed": "5172a283a4a01617212cf9a4",
         "overlap": "cece3011ab6afcac5d0b8f1c",
         "parent-200": "8969063fddafe9e7050e39bb",
         "parent-400": "90208e961032d2edd64dc981",
         "recursive": "0e42414a54eb36ef70ed9b73",
         "sentence": "22866b307c238c5433d7747a",
         "whole": "950ebd4ab7553f1e327151eb"
     }
}
# fmt: on
# ICU's sentences (the default since syntok's): recorded when ICU became the default.
# fmt: off
ICU_FINGERPRINTS = {
     "chunks/chroma": {
          "fixed": [
               1151,
               "6c75917ff0ae6cb09db8330c"
          ],
          "overlap": [
               2293,
               "5b8e063765880062e2224361"
          ],
          "parent-200": [
               5897,
               "b3a73164be6eb9be92d2391e"
          ],
          "parent-400": [
               2972,
               "b2d69f60f519b605c97ad15b"
          ],
          "recursive": [
               1652,
               "32944da2f9c0b4f2916a69a7"
          ],
          "sentence": [
               1457,
               "8286b476062509ccca5e297a"
          ],
          "whole": [
               5,
               "380880569d122308f25be5c5"
          ]
     },
     "chunks/example": {
          "fixed": [
               99,
               "842b8d43db458c33292ad729"
          ],
          "overlap": [
               154,
               "ec4547d672fe1a7052720a41"
          ],
          "parent-200": [
               465,
               "a711866871fcecb897321794"
          ],
          "parent-400": [
               208,
               "91d1e8169e37254d78263953"
          ],
          "recursive": [
               106,
               "20863df9558e06f579414aa8"
          ],
          "sentence": [
               100,
               "359fcad48f1e204488be8be8"
          ],
          "whole": [
               25,
               "d4c603767bc2dbd881e2e377"
          ]
     },
     "run/chroma": {
          "fixed": "d3ffe9f6d386a0a33ec8d023",
          "overlap": "89c5045ce335db823a3f386b",
          "parent-200": "ed5f6c606de07f99bc43b924",
          "parent-400": "58a87657f48f6830b1ac4095",
          "recursive": "2e8b62eb4476624f45efcab8",
          "sentence": "a275cfc67f4c6b16c407a09f",
          "whole": "a25fbb74d16a80e4b3f1ba2f"
     },
     "run/example": {
          "fixed": "5172a283a4a01617212cf9a4",
          "overlap": "cece3011ab6afcac5d0b8f1c",
          "parent-200": "6f387d8918e99d0dec930008",
          "parent-400": "d46c1cb57f579b95cbdbaf16",
          "recursive": "0e42414a54eb36ef70ed9b73",
          "sentence": "c9919052e3951176ae704029",
          "whole": "950ebd4ab7553f1e327151eb"
     }
}
# fmt: on


def shuffled_copies(docs: list[Document], copies: int, seed: int = 0) -> list[Document]:
    """The documents, then ``copies - 1`` copies of each with its paragraphs shuffled."""
    out = list(docs)
    for c in range(1, copies):
        rng = random.Random(seed * 1000 + c)
        for d in docs:
            paras = re.split(r"(?:\n[ \t]*){2,}", d.text)
            rng.shuffle(paras)
            out.append(Document(f"copy{c}/{d.id}", "\n\n".join(paras)))
    return out


def builtin_strategies(segmenter: str) -> dict:
    """The built-in strategies, each that finds sentences with ``segmenter``'s."""
    return {
        name: make_strategy(name, segmenter=segmenter) if hasattr(s, "segmenter") else s
        for name, s in chunking.STRATEGIES.items()
    }


def chunk_fingerprints(docs, segmenter: str = "syntok") -> dict:
    res = {}
    for name, strategy in builtin_strategies(segmenter).items():
        ch = chunk_corpus(docs, strategy)
        h = hashlib.sha256()
        for c in ch.chunks:
            h.update(f"{c.doc_id}\t{c.start}\t{c.end}\t{c.parent}\n".encode())
        if ch.parents is not None:
            h.update(b"parents\n")
            for c in ch.parents:
                h.update(f"{c.doc_id}\t{c.start}\t{c.end}\n".encode())
        res[name] = [len(ch.chunks), h.hexdigest()[:24]]
    return res


PINNED_FAMILIES = ("recall", "precision", "mrr", "ndcg", "coverage", "words")


def run_fingerprints(docs, testset, strategies, ks=(1, 3, 5, 10), segmenter="syntok") -> dict:
    builtins = builtin_strategies(segmenter)
    custom = tuple(
        {**builtins[n].describe(), "segmenter": segmenter}
        for n in strategies
        if hasattr(builtins[n], "segmenter")
    )
    config = Config(strategies=tuple(strategies), custom_strategies=custom, ks=ks)
    run = run_search(config, docs, testset)
    res = {}
    for s in run.systems:
        h = hashlib.sha256()
        for row in s.items:
            for it in row:
                h.update(
                    f"{it.doc}\t{it.start}\t{it.end}\t{it.score.hex()}\t{it.grade}\t{it.words}\n".encode()
                )
            h.update(b"|\n")
        for m in sorted(s.scores):
            if m.split("@")[0] not in PINNED_FAMILIES:
                continue  # measures added later have no recorded fingerprint
            h.update(m.encode())
            h.update(np.ascontiguousarray(s.scores[m]).tobytes())
        res[s.name] = h.hexdigest()[:24]
    return res


@pytest.fixture(autouse=True)
def _fresh_cache():
    chunking._CACHE.clear()
    yield
    chunking._CACHE.clear()


# --------------------------------------------------------------------------- fingerprints


@pytest.mark.parametrize("segmenter", ["syntok", "icu"])
def test_example_chunks_and_runs_unchanged(segmenter):
    docs = load_corpus(EXAMPLE / "posts")
    testset = load_testset(EXAMPLE / "questions.jsonl", docs)
    recorded = FINGERPRINTS if segmenter == "syntok" else ICU_FINGERPRINTS
    assert chunk_fingerprints(docs, segmenter) == recorded["chunks/example"]
    got = run_fingerprints(docs, testset, DEFAULT_STRATEGIES, segmenter=segmenter)
    assert got == recorded["run/example"]


@needs_chroma
@pytest.mark.parametrize("segmenter", ["syntok", "icu"])
def test_chroma_chunks_and_runs_unchanged(segmenter):
    docs = load_corpus(CHROMA / "corpora")
    testset = load_testset(CHROMA / "questions_df.csv", docs)
    recorded = FINGERPRINTS if segmenter == "syntok" else ICU_FINGERPRINTS
    assert chunk_fingerprints(docs, segmenter) == recorded["chunks/chroma"]
    got = run_fingerprints(docs, testset, DEFAULT_STRATEGIES, ks=(1, 3, 5), segmenter=segmenter)
    assert got == recorded["run/chroma"]


def test_the_default_segmenter_is_icu_and_its_fingerprints_are_the_defaults():
    docs = load_corpus(EXAMPLE / "posts")
    assert chunking.DEFAULT_SEGMENTER == "icu"
    plain = {name: len(chunk_corpus(docs, name).chunks) for name in chunking.STRATEGIES}
    assert plain == {k: v[0] for k, v in ICU_FINGERPRINTS["chunks/example"].items()}
    for corpus in ("example", "chroma"):  # strategies without sentences: the same as ever
        for name in ("whole", "fixed", "overlap"):
            key = f"chunks/{corpus}"
            assert ICU_FINGERPRINTS[key][name] == FINGERPRINTS[key][name]
            assert ICU_FINGERPRINTS[f"run/{corpus}"][name] == FINGERPRINTS[f"run/{corpus}"][name]


@needs_chroma
@pytest.mark.parametrize("workers", [1, 2])
def test_chroma_copies_unchanged_with_any_number_of_workers(monkeypatch, workers):
    monkeypatch.setenv("RAGMETER_WORKERS", str(workers))
    docs = shuffled_copies(load_corpus(CHROMA / "corpora"), 2)
    assert sum(len(d.text) for d in docs) > chunking.PARALLEL_MIN_CHARS  # workers do start
    assert chunk_fingerprints(docs) == FINGERPRINTS["chunks/chroma-x2"]
    if workers == 2:
        testset = load_testset(CHROMA / "questions_df.csv", docs)
        got = run_fingerprints(docs, testset, ["fixed", "sentence"], ks=(1, 3, 5, 10))
        assert got == FINGERPRINTS["run/chroma-x2"]


# --------------------------------------------------------------------------- sentences

_PIECES = [
    " ", "\n", "\n\n", "\n \n", "\r\n\r\n", "\t", ". ", "! ", "? ", "...", "(", ")", "“", "”",
    "Mr.", "e.g.", "U.S.", "3.14", "don't", "\u200b", "\u00a0", "é", "İ", "ΣΑΣ", "日本語",
    "Hello", "world", "The", "cat", "sat", "A.", "_x_", "ab-cd", "x1", "\u2028",
]  # fmt: skip
docs_text = st.lists(st.one_of(st.sampled_from(_PIECES), st.text(max_size=5)), max_size=60).map(
    "".join
)


def reference_sentence_starts(text: str) -> list[int]:
    """Sentence starts as syntok's own ``analyze`` gives them on the whole text."""
    starts = []
    for paragraph in segmenter.analyze(text):
        for sentence in paragraph:
            toks = [t for t in sentence if t.value]
            if toks:
                starts.append(toks[0].offset)
    return starts


@settings(max_examples=120, deadline=None)
@given(docs_text)
def test_sentence_spans_match_syntok_analyze(text):
    starts = [s for s, _ in chunking.sentence_spans(text, "syntok")]
    assert starts == reference_sentence_starts(text)


@settings(max_examples=25, deadline=None)
@given(st.lists(docs_text, min_size=1, max_size=6), st.integers(1, 3))
def test_prepare_sentences_is_exact_with_shared_paragraphs_and_workers(texts, copies):
    # duplicated paragraphs (segmented once) and tiny thresholds (worker processes start)
    texts = texts + ["\n\n".join(reversed(t.split("\n\n"))) for t in texts] * copies
    expected = {}
    for t in texts:
        chunking._CACHE.clear()
        expected[t] = chunking._CACHE.sentence_breaks(t, segmenter="syntok").tolist()
    chunking._CACHE.clear()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(chunking, "PARALLEL_MIN_CHARS", 0)
        mp.setattr(chunking, "BATCH_CHARS", 20)
        prepare_sentences(texts, engine.LocalEngine(workers=2), segmenter="syntok")
    for t in texts:
        assert chunking._CACHE.has(t, "syntok")
        assert chunking._CACHE.get(t, "syntok").sentence_breaks.tolist() == expected[t]


class _RecordingEngine:
    """Runs tasks in this process and keeps them, like an engine with two workers."""

    name, workers = "recording", 2

    def __init__(self, shares_memory: bool) -> None:
        self.shares_memory = shares_memory
        self.tasks: list = []

    def map(self, fn, tasks, progress=None, meanwhile=None):
        self.tasks = list(tasks)
        if meanwhile is not None:
            meanwhile()
        return [fn(t) for t in self.tasks]


def test_prepare_sentences_sends_forked_workers_spans_not_paragraphs(monkeypatch):
    """Forked workers read the paragraphs from memory they share with the run: the tasks are
    ranges of paragraph numbers, and the run holds no string per paragraph; other engines get
    the paragraphs' texts. Both give the breaks of syntok on each whole text."""
    from ragmeter.chunking import segment as _segment

    texts = [
        "One. Two three.\r\rFour five! Six?\r",  # lone CRs: read as newlines
        "Alpha beta. Gamma.\r\n\r\nDelta epsilon. Zeta.\n\nOne. Two three.",
        "Mr. Smith went. He came back.\n\nAlpha beta. Gamma.\n\nEta theta iota.",
    ]
    expected = {}
    for t in texts:
        chunking._CACHE.clear()
        expected[t] = chunking._CACHE.sentence_breaks(t, segmenter="syntok").tolist()
    monkeypatch.setattr(chunking, "PARALLEL_MIN_CHARS", 0)
    monkeypatch.setattr(chunking, "BATCH_CHARS", 20)
    for shares in (True, False):
        chunking._CACHE.clear()
        eng = _RecordingEngine(shares)
        prepare_sentences(texts, eng, segmenter="syntok")
        assert [chunking._CACHE.get(t, "syntok").sentence_breaks.tolist() for t in texts] == [
            expected[t] for t in texts
        ]
        assert len(eng.tasks) > 1 and _segment.SHARED == {}
        if shares:  # (the run's key, first paragraph, end)
            assert all(all(isinstance(x, int) for x in task) for task in eng.tasks)
            assert len({key for key, _, _ in eng.tasks}) == 1
        else:
            assert all(isinstance(p, str) for task in eng.tasks for p in task)
        # paragraphs that occur twice are segmented once
        sent = [p for task in eng.tasks for p in task] if not shares else []
        assert shares or sent.count("One. Two three.") == 1


def test_shared_paragraphs_of_runs_at_the_same_time_stay_apart(monkeypatch):
    """Two runs segmenting at once (threads of one process) each read their own paragraphs."""
    from ragmeter.chunking import segment as _segment

    first = ["One sentence here. And a second one.\n\nA new paragraph!"]
    second = ["Quite different words. Nothing alike?\n\nNo. Not at all."]
    expected = {}
    for t in first + second:
        chunking._CACHE.clear()
        expected[t] = chunking._CACHE.sentence_breaks(t, segmenter="syntok").tolist()
    chunking._CACHE.clear()
    monkeypatch.setattr(chunking, "PARALLEL_MIN_CHARS", 0)
    monkeypatch.setattr(chunking, "BATCH_CHARS", 10)

    class Interleaved(_RecordingEngine):
        def map(self, fn, tasks, progress=None, meanwhile=None):
            other = _RecordingEngine(True)
            prepare_sentences(second, other, segmenter="syntok")  # the other run, meanwhile
            return super().map(fn, tasks, progress, meanwhile)

    prepare_sentences(first, Interleaved(True), segmenter="syntok")
    for t in first + second:
        assert chunking._CACHE.get(t, "syntok").sentence_breaks.tolist() == expected[t]
    assert _segment.SHARED == {}


def test_a_run_larger_than_the_sentence_cache_segments_each_document_once(monkeypatch):
    """The run cache is bounded for between runs; within a run nothing may be evicted, or
    the strategies would segment evicted documents again, one by one (a corpus past the
    bound took minutes instead of seconds)."""
    ex = EXAMPLE
    docs = load_corpus(ex / "posts")
    monkeypatch.setattr(chunking._CACHE, "max_chars", 5000)  # about one document
    chunking._CACHE.clear()
    from ragmeter.chunking import doc_index

    again = []
    real = doc_index.sentence_spans  # what the run cache calls for a document it lacks
    monkeypatch.setattr(doc_index, "sentence_spans", lambda t, s: again.append(t) or real(t, s))
    syntok = tuple(
        {**make_strategy(n).describe(), "segmenter": "syntok"} for n in ("sentence", "parent-200")
    )
    cfg = Config(strategies=("sentence", "parent-200"), custom_strategies=syntok, rounds=100)
    testset = load_testset(ex / "questions.jsonl", docs)
    small = run_search(cfg, docs, testset)
    assert again == []  # every strategy found every document's breaks
    assert 0 < chunking._CACHE._chars <= 5000  # and the bound holds again after the run
    monkeypatch.setattr(chunking._CACHE, "max_chars", 256_000_000)
    chunking._CACHE.clear()
    usual = run_search(cfg, docs, testset)
    for a, b in zip(small.systems, usual.systems, strict=True):
        assert a.items == b.items


def test_prepare_sentences_reports_progress_and_skips_cached_texts():
    seen = []
    texts = ["One. Two.\n\nThree.", "Four! Five?"]
    assert prepare_sentences(texts, progress=lambda d, t: seen.append((d, t))) > 0
    assert seen and seen[-1][0] == seen[-1][1]
    assert prepare_sentences(texts) == 0  # all cached: nothing segmented again


# --------------------------------------------------------------------------- BM25


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40))
def test_token_pattern_equals_bm25s_pattern(text):
    low = text.lower()
    assert bm25_mod._TOKEN.findall(low) == re.findall(r"(?u)\b\w\w+\b", low)


_WORDY = st.text(
    st.one_of(
        st.sampled_from("ab_1 .\n\u00e9\u0130\u03a3\u65e5\u200b\u00a0"),
        st.characters(codec="utf-8"),
        st.characters(min_codepoint=0x10000),  # astral: letters, digits, symbols
        st.characters(categories=["Cs"]),  # lone surrogates
    ),
    max_size=50,
)


@settings(max_examples=300, deadline=None)
@given(_WORDY)
def test_word_runs_are_the_token_pattern_matches(text):
    starts, words = bm25_mod._word_runs(text)
    found = list(bm25_mod._TOKEN.finditer(text))
    assert words == [m.group() for m in found]
    assert starts.tolist() == [m.start() for m in found]


def _bm25s_reference(texts, stopwords="en", k1=1.5, b=0.75):
    tok = bm25s.tokenize(list(texts), stopwords=stopwords, show_progress=False)
    model = bm25s.BM25(k1=k1, b=b)
    model.index(tok, show_progress=False)
    return tok, model


def _has_tokens(texts) -> bool:
    return any(bm25s.tokenize(list(texts), stopwords="en", return_ids=False, show_progress=False))


def _columns(model) -> dict[str, tuple[list[int], list[str]]]:
    """Each term's column of a bm25s index: its texts and their scores (as float hex);
    terms that no text holds (and bm25s's empty token) left out. Equal columns are equal
    scores for every question, however the vocabulary is numbered."""
    sc = model.scores
    assert sc["data"].dtype == np.float32 and sc["indices"].dtype == np.int32
    assert sc["indptr"].dtype == np.int64 and sc["indptr"][-1] == len(sc["data"])
    out = {}
    for term, i in model.vocab_dict.items():
        if term and i + 1 < len(sc["indptr"]):
            a, b = sc["indptr"][i], sc["indptr"][i + 1]
            if b > a:
                out[term] = (sc["indices"][a:b].tolist(), [float(x).hex() for x in sc["data"][a:b]])
    return out


chunk_texts = st.lists(docs_text, min_size=1, max_size=12)


@settings(max_examples=80, deadline=None)
@given(chunk_texts)
def test_scores_equal_bm25s(texts):
    if not _has_tokens(texts):  # bm25s cannot index texts without a token
        return
    _, model = _bm25s_reference(texts)
    ours = BM25Retriever()
    ours.index(texts)
    assert _columns(ours._model) == _columns(model)
    assert set(_columns(model)) == set(model.vocab_dict) - {""}


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.lists(st.integers(0, 9), max_size=12), min_size=1, max_size=8), st.integers(0, 3)
)
def test_build_scores_leaves_unused_ids_empty(texts, unused):
    """Ids that no text uses (between and after the used ones) have empty columns; the
    others' columns are those of the ids renumbered without gaps."""
    lengths = np.array([len(t) for t in texts], dtype=np.int64)
    ids = np.array([i for t in texts for i in t], dtype=np.int64)
    if not len(ids):
        return
    got = bm25_mod.build_scores(ids, lengths, 10 + unused, 1.5, 0.75)
    used, dense = np.unique(ids, return_inverse=True)
    ref = bm25_mod.build_scores(dense, lengths, len(used), 1.5, 0.75)
    df = np.diff(got["indptr"])
    assert len(df) == 10 + unused and not df[np.setdiff1d(np.arange(10 + unused), used)].any()
    assert np.array_equal(df[used], np.diff(ref["indptr"]))
    assert np.array_equal(got["data"], ref["data"]) and np.array_equal(
        got["indices"], ref["indices"]
    )


@settings(max_examples=60, deadline=None)
@given(
    chunk_texts,
    st.lists(
        st.sampled_from(["cat sat", "hello world", "the", "ΣΑΣ x1", "e.g. don't", "zzz"]),
        min_size=1,
        max_size=4,
    ),
)
def test_bm25_rankings_bit_identical_to_bm25s(texts, questions):
    if not _has_tokens(texts):
        return
    r = BM25Retriever()
    r.index(texts)
    ranking = r.rank(questions, 5)
    tok, model = _bm25s_reference(texts)
    queries = bm25s.tokenize(questions, stopwords="en", return_ids=False, show_progress=False)
    for q, row_ids, row_scores in zip(queries, ranking.ids, ranking.scores, strict=True):
        ref = model.get_scores(q) if q else np.zeros(len(texts))
        ref = np.asarray(ref, dtype=np.float64)
        for i, s in zip(row_ids, row_scores, strict=True):
            if i >= 0:
                assert s.hex() == float(ref[i]).hex()


def _fixed_chunks(docs: dict[str, str], size: int, order=None) -> list[Chunk]:
    """Strategy ``fixed`` of ``size`` words over ``docs``, in ``order`` (their ids) or theirs."""
    split = chunking.FixedStrategy(size=size).split
    return [c for d in (order or docs) for c in split(d, docs[d])]


def _chunks_of(doc_id: str, text: str, cuts: list[int]) -> list[Chunk]:
    bounds = sorted({0, len(text), *[c % (len(text) + 1) for c in cuts]})
    return [Chunk(doc_id, a, b, text[a:b]) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]


@settings(max_examples=80, deadline=None)
@given(
    st.lists(docs_text, min_size=1, max_size=4),
    st.lists(st.integers(0, 400), max_size=6),
    st.booleans(),
)
def test_index_chunks_equals_bm25s_index_of_texts(texts, cuts, whole_words):
    docs = {f"d{i}": t for i, t in enumerate(texts)}
    chunks: list[Chunk] = []
    for doc_id, text in docs.items():
        if whole_words:  # the shape built-in strategies make: whole words, any grouping
            chunks += chunking.FixedStrategy(size=1 + len(cuts)).split(doc_id, text)
        else:  # any cut at all, inside words too: the shared path must step aside
            chunks += [c for c in _chunks_of(doc_id, text, cuts) if c.text]
    if not chunks or not _has_tokens([c.text for c in chunks]):
        return
    _, model = _bm25s_reference([c.text for c in chunks])
    b = BM25Retriever()
    b.index_chunks(chunks, docs)
    assert _columns(b._model) == _columns(model)
    b.index_chunks(chunks, docs)  # the per-run token table, used a second time
    assert _columns(b._model) == _columns(model)


@settings(max_examples=60, deadline=None)
@given(st.lists(docs_text, min_size=2, max_size=4), st.integers(1, 4), st.booleans())
def test_index_chunks_in_another_document_order(texts, size, stem):
    """The token table numbers terms in the order it first met them; a later strategy whose
    chunks come in another order still gets bm25s's scores."""
    docs = {f"d{i}": t for i, t in enumerate(texts)}
    first = _fixed_chunks(docs, size)
    later = _fixed_chunks(docs, size + 1, order=reversed(docs))
    if not later or not _has_tokens([c.text for c in later]):
        return
    plain, shared = BM25Retriever(), BM25Retriever(stemmer="english" if stem else None)
    plain._stem = shared._stem
    plain.index([c.text for c in later])
    if _has_tokens([c.text for c in first]):
        shared.index_chunks(first, docs)
    shared.index_chunks(later, docs)
    assert _columns(plain._model) == _columns(shared._model)


_QUESTIONS = st.lists(
    st.sampled_from(["cat sat", "hello world", "the", "ΣΑΣ x1", "e.g. don't", "zzz", "running"]),
    min_size=1,
    max_size=4,
)


@settings(max_examples=80, deadline=None)
@given(
    st.lists(docs_text, min_size=1, max_size=4), st.integers(1, 4), _QUESTIONS, st.booleans(),
    st.data(),
)  # fmt: skip
def test_an_index_of_the_questions_terms_scores_them_as_bm25s(texts, size, questions, stem, data):
    """With the run's questions, only their terms are indexed; every other token still
    counts in its chunk's length, so each question's scores are bm25s's own, bit for bit."""
    words = sorted({w for t in texts for w in t.split()})
    if words:  # questions of the texts' own words, so that scores are not all 0
        questions = questions + data.draw(
            st.lists(st.lists(st.sampled_from(words), min_size=1, max_size=3).map(" ".join),
                     min_size=1, max_size=3)
        )  # fmt: skip
    docs = {f"d{i}": t for i, t in enumerate(texts)}
    chunks = _fixed_chunks(docs, size)
    if not chunks or not _has_tokens([c.text for c in chunks]):
        return
    plain = BM25Retriever(stemmer="english" if stem else None)
    only = BM25Retriever(stemmer="english" if stem else None)
    plain.index([c.text for c in chunks])  # bm25s's own tokens, every term indexed
    only.prepare_documents(docs, questions)
    only.index_chunks(chunks, docs, questions=questions)
    handled = all(len(t.lower()) == len(t) for t in texts)  # else bm25s indexes every term
    assert (only._only is not None) is handled
    if handled:
        assert set(only._model.vocab_dict) <= only._only | {""}
    want, got = plain.rank(questions, len(chunks)), only.rank(questions, len(chunks))
    assert np.array_equal(got.ids, want.ids)
    assert [x.hex() for x in got.scores.ravel()] == [x.hex() for x in want.scores.ravel()]


def test_an_index_of_some_questions_terms_refuses_other_questions():
    docs = {"d": "Cats sat on the mat. Dogs ran in the park."}
    chunks = _fixed_chunks(docs, 3)
    r = BM25Retriever()
    r.index_chunks(chunks, docs, questions=["where did cats sit"])
    assert r.rank(["cats sit"], 2).ids.shape == (1, 2)  # a subset of the terms: fine
    with pytest.raises(RuntimeError, match="index again"):
        r.rank(["dogs"], 2)
    r.index_chunks(chunks, docs)  # without questions: every term again
    assert r._only is None and r.rank(["dogs"], 1).ids.tolist() == [[1]]


def test_chunk_views_equal_chunks_that_hold_their_text():
    import pickle
    import tracemalloc
    from dataclasses import FrozenInstanceError

    text = "Alpha beta gamma. " * 5000
    view, held = Chunk.span("d", text, 6, 16, parent=2), Chunk("d", 6, 16, text[6:16], 2)
    assert view.text == "beta gamma" and view == held and hash(view) == hash(held)
    assert (
        repr(view)
        == repr(held)
        == ("Chunk(doc_id='d', start=6, end=16, text='beta gamma', parent=2)")
    )
    assert view.is_span_of(text) and not held.is_span_of(text)
    assert view != Chunk("d", 6, 16, "beta gamma", None) and view != Chunk(
        "e", 6, 16, "beta gamma", 2
    )
    again = pickle.loads(pickle.dumps(view))
    assert again == view and again.text == "beta gamma"
    with pytest.raises(FrozenInstanceError):
        view.start = 0  # type: ignore[misc]
    with pytest.raises(FrozenInstanceError):
        del held.text  # type: ignore[misc]
    # a strategy's chunks are views: a few hundred bytes each, not a copy of the corpus
    chunking.FixedStrategy(size=2000).split("warm", "up")
    tracemalloc.start()
    chunks = chunking.FixedStrategy(size=2000).split("d", text)
    held_bytes = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    assert "".join(c.text + " " for c in chunks) == text
    assert len(chunks) == 8 and held_bytes < len(text) / 20


def test_index_chunks_uses_shared_tokens_for_whole_word_chunks():
    text = "Alpha beta gamma. Delta the epsilon!\n\nZeta eta theta."
    docs = {"d": text}
    chunks = chunking.FixedStrategy(size=2).split("d", text)
    table = bm25_mod._TokenTable("en")
    ids, lengths = bm25_mod._chunk_ids(table, chunks, docs)
    assert [[list(table.terms)[i] for i in c.tolist()] for c in ids] == [
        ["alpha", "beta"], ["gamma", "delta"], ["epsilon"], ["zeta", "eta"], ["theta"],
    ]  # fmt: skip
    assert lengths.tolist() == [2, 2, 1, 2, 1]  # "the" is a stop word: not counted
    # of the questions' terms only: the same lengths, the other tokens not indexed
    only = bm25_mod._TokenTable("en", only={"gamma", "theta", "omega"})
    ids, lengths = bm25_mod._chunk_ids(only, chunks, docs)
    assert [[list(only.terms)[i] for i in c.tolist()] for c in ids] == [
        [], ["gamma"], [], [], ["theta"],
    ]  # fmt: skip
    assert lengths.tolist() == [2, 2, 1, 2, 1]
    assert set(only.terms) == {"gamma", "theta", "omega"} and len(only._ids) < 200
    inside = [Chunk("d", 1, 5, text[1:5])]  # cuts "Alpha" in the middle
    assert bm25_mod._chunk_ids(table, inside, docs) is None
    retitled = [Chunk("d", 0, 5, "Title: Alpha")]  # text that is not the span
    assert bm25_mod._chunk_ids(table, retitled, docs) is None
    assert bm25_mod._TokenTable("en").doc("İstanbul") is None  # lower() changes its length


def test_bm25_question_blocks_give_the_same_ranking(monkeypatch):
    texts = [f"alpha beta {w} gamma {w} {w}" for w in ("delta", "eps", "zeta", "eta", "theta")]
    questions = ["alpha delta", "zeta zeta", "gamma", "nothing here", "theta eps"]
    r = BM25Retriever()
    r.index(texts)
    whole = r.rank(questions, 3)
    monkeypatch.setattr(bm25_mod, "SCORE_BLOCK", 6)  # one question a block at 5 chunks
    one = r.rank(questions, 3)
    monkeypatch.setattr(bm25_mod, "SCORE_BLOCK", 10)  # two
    two = r.rank(questions, 3)
    for other in (one, two):
        assert np.array_equal(whole.ids, other.ids)
        assert np.array_equal(whole.scores, other.scores)


def test_release_drops_the_index():
    r = BM25Retriever()
    r.index(["a cat", "a dog"])
    r.release()
    with pytest.raises(RuntimeError):
        r.rank(["cat"], 1)


# --------------------------------------------------------------------------- words, engine


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=60))
def test_count_words_matches_regex(text):
    assert count_words(text) == len(re.findall(r"\S+", text))


def _square(x: int) -> int:
    return x * x


@pytest.mark.parametrize("workers", [1, 2])
def test_local_engine_keeps_task_order(workers):
    eng = engine.LocalEngine(workers=workers)
    seen = []
    assert eng.map(_square, range(7), progress=lambda d, t: seen.append((d, t))) == [
        x * x for x in range(7)
    ]
    assert seen[-1] == (7, 7)
    assert eng.describe() == {"kind": "local", "workers": workers}


@pytest.mark.parametrize("workers", [1, 2])
def test_engine_runs_meanwhile_once_and_keeps_order(workers):
    calls = []
    out = engine.LocalEngine(workers=workers).map(
        _square, range(5), meanwhile=lambda: calls.append("meanwhile")
    )
    assert out == [0, 1, 4, 9, 16] and calls == ["meanwhile"]


def test_prepare_sentences_runs_meanwhile_even_with_nothing_to_segment():
    calls = []
    text = "One sentence. Another one.\n\nA paragraph."
    prepare_sentences([text], engine.LocalEngine(1), meanwhile=lambda: calls.append(1))
    prepare_sentences([text], engine.LocalEngine(1), meanwhile=lambda: calls.append(2))
    assert calls == [1, 2]


def test_prepared_documents_index_as_before():
    texts = {"a": "Alpha beta gamma. Beta again!\n\nDelta", "b": "gamma delta delta"}
    chunks = [Chunk("a", 0, 17, texts["a"][0:17]), Chunk("a", 18, 37, texts["a"][18:37])]
    chunks.append(Chunk("b", 0, 17, texts["b"]))
    plain, prepared = BM25Retriever(), BM25Retriever()
    plain.index([c.text for c in chunks])
    prepared.prepare_documents(texts)
    assert prepared._table is not None and len(prepared._table._docs) == 2
    prepared.index_chunks(chunks, texts)
    for q in ["beta delta", "gamma"]:
        a, b = plain.rank([q], 3), prepared.rank([q], 3)
        assert a.ids.tolist() == b.ids.tolist() and a.scores.tolist() == b.scores.tolist()


def test_engine_settings_are_checked(monkeypatch, tmp_path):
    with pytest.raises(InputError, match="unknown engine kind"):
        engine.make_engine("spark")
    with pytest.raises(InputError, match="at least 1"):
        engine.LocalEngine(workers=0)
    monkeypatch.setenv("RAGMETER_WORKERS", "three")
    with pytest.raises(InputError, match="RAGMETER_WORKERS"):
        engine.LocalEngine()
    monkeypatch.setenv("RAGMETER_WORKERS", "3")
    assert engine.LocalEngine().workers == 3
    with pytest.raises(InputError, match=r"\[engine\] kind"):
        Config(engine="spark").validate()
    with pytest.raises(InputError, match=r"\[engine\] workers"):
        Config(engine_workers=-1).validate()
    cfg = tmp_path / "ragmeter.toml"
    cfg.write_text('[engine]\nkind = "ray"\naddress = "ray://head:10001"\nworkers = 4\n')
    loaded = load_config(cfg)
    assert (loaded.engine, loaded.engine_address, loaded.engine_workers) == (
        "ray",
        "ray://head:10001",
        4,
    )
    assert loaded.to_dict()["engine"] == {"kind": "ray", "address": "ray://head:10001"}
    assert "engine" not in Config().to_dict()  # the default leaves saved configs as they were


def test_ray_engine_without_ray_is_a_one_line_input_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    with pytest.raises(InputError, match=r"pip install 'ragmeter\[ray\]'"):
        engine.make_engine("ray")


def test_cli_engine_option_is_checked_and_local_runs(tmp_path):
    from typer.testing import CliRunner

    from ragmeter.cli import app

    runner = CliRunner()
    bad = runner.invoke(app, ["search", "--engine", "spark", "-o", str(tmp_path / "bad")])
    assert bad.exit_code == 2 and "[engine] kind" in bad.output
    assert not (tmp_path / "bad").exists()
    ok = runner.invoke(
        app,
        ["search", "--engine", "local", "--strategies", "sentence", "--rounds", "100",
         "-o", str(tmp_path / "ok")],
    )  # fmt: skip
    assert ok.exit_code == 0, ok.output
    assert (tmp_path / "ok" / "summary.json").is_file()


# --------------------------------------------------------------------------- intervals


def test_summary_unchanged_on_the_example():
    """Intervals, comparisons and sample sizes of a whole summary, recorded before the
    bootstrap draws were shared between calls (sha256 prefix of the canonical JSON).

    Under Holm, with the exact intervals that were added beside the bootstrap ones left
    out and each row's p also written as ``p_holm`` (as rows then held it), the summary
    is byte for byte the one recorded then; so is the default rule's (max-T), recorded
    later, without its exact intervals (their ends moved in the last bits when the
    bisection began to work on the doubles' bits); the summary as written now has a
    digest of its own."""

    import json

    from ragmeter.runs.results import summarize_run

    LIMITED = ", each step over the pairs that can be true together"

    def as_then(obj, exact: bool = True):
        """The summary as it was written then: rows also held the rule's p as p_holm;
        without ``exact``, the exact intervals added later are left out."""
        if isinstance(obj, dict):
            out = {k: as_then(v, exact) for k, v in obj.items() if exact or k[:5] != "exact"}
            if "p_value" in out and "wins" in out:
                out["p_holm"] = out["p"]
            if "header" in out and out.pop("constraints", False):  # named later
                out["header"] = out["header"].replace(LIMITED, "")
            return out
        return [as_then(x, exact) for x in obj] if isinstance(obj, list) else obj

    def digest(obj) -> str:
        return hashlib.sha256(json.dumps(obj, sort_keys=True).encode()).hexdigest()[:24]

    docs = load_corpus(EXAMPLE / "posts")
    testset = load_testset(EXAMPLE / "questions.jsonl", docs)
    syntok = ({"name": "sentence", "kind": "sentence", "segmenter": "syntok"},)  # as then
    cfg = Config(
        strategies=("sentence", "fixed", "whole"),
        custom_strategies=syntok,
        ks=(1, 3, 5),
        rounds=2000,
        seed=7,
    )
    run = run_search(cfg, docs, testset)

    def as_recorded(summary: dict) -> dict:
        """Without what summary.json has recorded since these digests were taken: the
        clusters and design effects, nDCG's ideal and gain, the sample sizes' exact ends,
        who won each comparison, the ranks."""
        recorded_since = ("clusters", "design", "ndcg", "ranks")
        out = {k: v for k, v in summary.items() if k not in recorded_since}
        out["comparisons"] = [
            {k: v for k, v in row.items() if k != "winner"} for row in summary["comparisons"]
        ]
        out["sample_size"] = {
            s: [{k: v for k, v in row.items() if k[:5] != "exact"} for row in rows]
            for s, rows in summary["sample_size"].items()
        }
        return out

    for _ in range(2):  # the second summary reads every draw from the cache
        summary = as_recorded(summarize_run(run).to_json())
        # everything but the exact intervals as recorded before their ends were
        # bisected to the last bit (digest 134cb56781a6a93f0f54c78b with them)
        assert digest(as_then(summary, exact=False)) == "eeb04bafb8b19465af671df8"
        assert digest(summary) == "677ab763c66c2e92a5bf39c1"
    holm = run_search(cfg.with_overrides(adjust="holm"), docs, testset)
    holm_summary = as_recorded(summarize_run(holm).to_json())
    assert digest(as_then(holm_summary, exact=False)) == "4b9f76a517607b655abe3b50"
    from ragmeter.stats import draws as stats_draws

    assert stats_draws._DRAWS._items  # the draws were kept


def test_shared_draws_equal_fresh_draws_and_stay_bounded(monkeypatch):
    from ragmeter import stats
    from ragmeter.stats import draws as stats_draws

    monkeypatch.setattr(stats_draws, "_DRAWS", stats_draws._DrawCache(max_bytes=3 * 50 * 2))
    fresh = stats.mulberry32_indices(5, 50 * 3, 0, 50).reshape(3, 50)
    first = stats.resample_indices(50, 3, seed=5)
    again = stats.resample_indices(50, 3, seed=5)
    assert np.array_equal(first, fresh) and np.array_equal(again, fresh)
    again[0, 0] += 1  # a caller's copy: the cache is not changed through it
    assert np.array_equal(stats.resample_indices(50, 3, seed=5), fresh)
    other = stats.resample_indices(50, 3, seed=6)  # evicts seed 5 (bound: one entry)
    assert np.array_equal(other, stats.mulberry32_indices(6, 150, 0, 50).reshape(3, 50))
    assert list(stats_draws._DRAWS._items) == [(6, 50, 3, 0)]
    big = stats.resample_indices(50, 4, seed=5)  # larger than the bound: never kept
    assert big.shape == (4, 50) and list(stats_draws._DRAWS._items) == [(6, 50, 3, 0)]


@pytest.mark.parametrize(
    "sizes", [[7, 14, 28, 56], [56, 7, 28], [5, 10, 20, 20], [7, 21, 14], [3, 1]]
)
@pytest.mark.parametrize("block", [100, 1 << 21])  # many blocks, one block
def test_sample_sizes_from_one_stream_equal_one_stream_per_size(monkeypatch, sizes, block):
    from ragmeter import stats
    from ragmeter.stats import draws as stats_draws
    from ragmeter.stats import size as stats_size

    monkeypatch.setattr(stats_draws, "_BLOCK", block)
    x = np.array([0.1, 1 / 3, 0.5, 0.0, 1.0, 2 / 7, 0.25])  # sums that round: sequential
    got = stats.sample_size(x, sizes=sizes, rounds=300, seed=3)
    for row, m in zip(got, sizes, strict=True):
        means = stats.resampled_means(x[:, None], m, 300, 3)[:, 0]
        low, high = stats.percentile_interval(means, stats.seq_mean(x), x, "percentile", 0.95)
        assert (row.n, row.low, row.high) == (m, low, high)
    assert stats_size._shared_stream_means(x, [7, 21, 14], 300, 3) is None  # 14 does not divide 21

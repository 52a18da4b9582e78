"""The [search] settings reach the scores: relevant_grade and ideal through run_search.

Each run's own ranked, graded items are handed to trec_eval (pytrec_eval) as a
run and qrels, and every per-question score must agree:

* ``relevant_grade`` r: recall@k, precision@k and MRR count an item when its
  grade is at least r (trec_eval's ``relevance_level``);
* nDCG uses gain ``2**grade - 1``: qrels carry that gain (0, 1, 3) and trec_eval
  adds it up linearly;
* ``ideal = "returned"``: the qrels hold only the returned items, so the ideal is
  the best order of what came back; ``ideal = "index"``: the qrels hold every
  item of the index with a grade above 0.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import require

from ragmeter.chunking.strategies import chunk_corpus
from ragmeter.inputs.config import Config
from ragmeter.inputs.corpus import Document
from ragmeter.inputs.testset import AnswerSpan, Question, TestSet
from ragmeter.runs.pipeline import resolve_strategies, run_search
from ragmeter.scoring.grading import grade

VOCAB = (
    "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november "
    "oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu"
).split()
KS = (1, 3, 5, 10)
STRATEGIES = (
    {"name": "overlap-6", "kind": "overlap", "size": 6, "overlap": 3},
    {"name": "fixed-4", "kind": "fixed", "size": 4},
)


def collection(seed: int = 12):
    """Ten documents of random words; 30 questions, each keyed to a 3-7 word passage."""
    rng = np.random.default_rng(seed)
    docs = [Document(f"d{i}", " ".join(rng.choice(VOCAB, size=60))) for i in range(10)]
    questions = []
    for q in range(30):
        doc = docs[int(rng.integers(len(docs)))]
        words = doc.text.split()
        n = int(rng.integers(3, 8))
        first = int(rng.integers(0, len(words) - n))
        start = len(" ".join(words[:first])) + (1 if first else 0)
        passage = " ".join(words[first : first + n])
        assert doc.text[start : start + len(passage)] == passage
        span = AnswerSpan(doc.id, start, start + len(passage), passage)
        text = " ".join([*words[first : first + n : 2], *rng.choice(VOCAB, size=2)])
        questions.append(Question(f"q{q:02d}", text, (span,)))
    return docs, TestSet(questions)


def config(**changes) -> Config:
    return Config(
        strategies=tuple(s["name"] for s in STRATEGIES),
        custom_strategies=STRATEGIES,
        ks=KS,
        rounds=100,
        **changes,
    )


def item_id(doc: str, start: int, end: int) -> str:
    return f"{doc}:{start}:{end}"


def trec_scores(run, system, index_items=None) -> dict[str, dict[str, float]]:
    """trec_eval's per-question measures on the system's own items."""
    pytrec_eval = require("pytrec_eval", "pip install pytrec-eval-terrier")
    cfg = run.config
    binary, gains, ranked = {}, {}, {}
    for question, items in zip(run.questions, system.items, strict=True):
        spans = [(a.doc, a.start, a.end) for a in question.answers]
        judged = {item_id(it.doc, it.start, it.end): it.grade for it in items}
        if index_items is not None:  # ideal over the index: every item with a grade
            judged = {item_id(c.doc_id, c.start, c.end): grade(c, spans) for c in index_items}
        binary[question.id] = {d: int(g >= cfg.relevant_grade) for d, g in judged.items()}
        gains[question.id] = {d: 2**g - 1 for d, g in judged.items()}
        # scores by rank: trec_eval sorts by score, so ties keep ragmeter's order
        ranked[question.id] = {
            item_id(it.doc, it.start, it.end): float(len(items) - r) for r, it in enumerate(items)
        }
    cuts = ",".join(str(k) for k in KS)
    out = pytrec_eval.RelevanceEvaluator(binary, {f"success.{cuts}", f"P.{cuts}", "recip_rank"})
    out = out.evaluate(ranked)
    ndcg = pytrec_eval.RelevanceEvaluator(gains, {f"ndcg_cut.{cuts}"}).evaluate(ranked)
    for q, values in ndcg.items():
        out.setdefault(q, {}).update(values)
    return out


def check_against_trec(run, index: bool) -> None:
    docs = run.documents
    strategies = {s.name: s for s in resolve_strategies(run.config)}
    for system in run.systems:
        items = chunk_corpus(docs, strategies[system.name]).items if index else None
        trec = trec_scores(run, system, items)
        for i, q in enumerate(run.questions):
            t = trec.get(q.id, {})
            for k in KS:
                assert system.scores[f"recall@{k}"][i] == t.get(f"success_{k}", 0.0), (q.id, k)
                assert system.scores[f"precision@{k}"][i] == pytest.approx(t.get(f"P_{k}", 0.0))
                assert system.scores[f"ndcg@{k}"][i] == pytest.approx(
                    t.get(f"ndcg_cut_{k}", 0.0), abs=1e-12
                ), (system.name, q.id, k)
            assert system.scores["mrr@10"][i] == pytest.approx(t.get("recip_rank", 0.0))


@pytest.fixture(scope="module")
def case():
    return collection()


@pytest.mark.parametrize("relevant_grade", [1, 2])
@pytest.mark.parametrize("ideal", ["returned", "index"])
def test_search_scores_agree_with_trec_eval(case, relevant_grade, ideal):
    docs, testset = case
    run = run_search(config(relevant_grade=relevant_grade, ideal=ideal), docs, testset)
    assert run.config.relevant_grade == relevant_grade and run.config.ideal == ideal
    check_against_trec(run, index=ideal == "index")


def test_the_settings_change_the_numbers(case):
    """Guard against a collection on which the settings could not matter."""
    docs, testset = case
    strict = run_search(config(), docs, testset)
    lenient = run_search(config(relevant_grade=1), docs, testset)
    index = run_search(config(ideal="index"), docs, testset)
    for s, le, ix in zip(strict.systems, lenient.systems, index.systems, strict=True):
        # partial items count under relevant_grade = 1: recall can only rise, and does
        assert np.all(le.scores["recall@1"] >= s.scores["recall@1"])
        assert le.scores["recall@1"].sum() > s.scores["recall@1"].sum(), s.name
        # the index holds graded items the ranking missed: nDCG can only fall, and does
        assert np.all(ix.scores["ndcg@5"] <= s.scores["ndcg@5"] + 1e-12)
        assert ix.scores["ndcg@5"].sum() < s.scores["ndcg@5"].sum(), s.name
        # nDCG does not depend on relevant_grade; recall does not depend on ideal
        np.testing.assert_array_equal(le.scores["ndcg@5"], s.scores["ndcg@5"])
        np.testing.assert_array_equal(ix.scores["recall@5"], s.scores["recall@5"])
    # fixed 4-word chunks cannot hold a 5-7 word passage whole
    fixed = strict.systems[1]
    assert fixed.name == "fixed-4"
    long = [len(q.answers[0].text.split()) > 4 for q in testset.questions]
    assert any(long) and not fixed.scores["recall@10"][np.array(long)].any()


def test_ideal_index_from_a_config_file(tmp_path, case):
    """`[search] ideal = "index"` and `relevant_grade = 1` read from ragmeter.toml."""
    from ragmeter.inputs.config import load_config

    docs, testset = case
    (tmp_path / "ragmeter.toml").write_text(
        '[search]\nstrategies = ["overlap-6"]\nks = [1, 3, 5, 10]\nrelevant_grade = 1\n'
        'ideal = "index"\n[stats]\nrounds = 100\n'
        '[[strategy]]\nname = "overlap-6"\nkind = "overlap"\nsize = 6\noverlap = 3\n'
    )
    cfg = load_config(tmp_path / "ragmeter.toml")
    assert (cfg.relevant_grade, cfg.ideal) == (1, "index")
    run = run_search(cfg, docs, testset)
    check_against_trec(run, index=True)

"""Scoring a corpus against document-level judgments (TREC SGML + topics + qrels,
a BEIR folder), "any of" answer keys, and nDCG's ideal choices through run_search."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest
from conftest import EXAMPLE, SHARED_DATA
from typer.testing import CliRunner

from ragmeter.cli import app
from ragmeter.errors import InputError
from ragmeter.inputs.config import Config
from ragmeter.inputs.corpus import load_corpus
from ragmeter.inputs.testset import (
    load_judged_testset,
    load_squad_testset,
    load_testset,
    read_topics,
)
from ragmeter.runs.pipeline import run_search
from ragmeter.scoring import grading

SHARED = SHARED_DATA

SGML = """<DOC>
<DOCNO> FT-1 </DOCNO>
<PROFILE>_AN-1</PROFILE>
<HEADLINE>Cats &amp; sleep</HEADLINE>
<TEXT>
Cats sleep for sixteen hours a day. <P>They nap in the sun.</P>
</TEXT>
</DOC>
<DOC>
<DOCNO>FT-2</DOCNO>
<TEXT>
Dogs bark at the mail carrier every morning.
</TEXT>
</DOC>
<DOC>
<DOCNO>FT-3</DOCNO>
<TEXT>
Cats and dogs both enjoy sleeping near a warm fire.
</TEXT>
</DOC>
<DOC>
<DOCNO>FT-4</DOCNO>
<TEXT>
Parrots repeat words they hear often.
</TEXT>
</DOC>
"""

TOPICS = """<top>
<num> Number: 401
<title> cats sleep
<desc> Description:
How long do cats sleep?
</top>
<top>
<num> Number: 402
<title> dogs bark mail
<desc> Description:
Why do dogs bark?
</top>
<top>
<num> Number: 403
<title> unjudged topic
<desc> Description:
Nobody judged this.
</top>
"""

QRELS = "401 0 FT-1 2\n401 0 FT-3 1\n401 0 FT-2 0\n402 0 FT-2 1\n402 0 FT-9 1\n"


@pytest.fixture()
def trec(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "FT911_1").write_text(SGML, encoding="latin-1")
    with gzip.open(corpus / "FT911_2.gz", "wt") as fh:
        fh.write("<DOC>\n<DOCNO>LA-1</DOCNO>\n<TEXT>Birds sing.</TEXT>\n</DOC>\n")
    (tmp_path / "topics.txt").write_text(TOPICS)
    (tmp_path / "qrels.txt").write_text(QRELS)
    return tmp_path


def test_trec_sgml_corpus_fields_and_gz(trec):
    docs = {d.id: d for d in load_corpus(trec / "corpus")}
    assert sorted(docs) == ["FT-1", "FT-2", "FT-3", "FT-4", "LA-1"]
    assert docs["FT-1"].title == "Cats & sleep"
    # headline then text, tags removed, entities decoded; PROFILE is not text
    assert docs["FT-1"].text.startswith("Cats & sleep\n\nCats sleep for sixteen hours a day.")
    assert "_AN-1" not in docs["FT-1"].text and "<P>" not in docs["FT-1"].text
    assert load_corpus(trec / "corpus" / "FT911_2.gz")[0].text == "Birds sing."


def test_sgml_without_docno_names_file_and_line(tmp_path):
    bad = tmp_path / "bad.sgml"
    bad.write_text("<DOC>\n<TEXT>x</TEXT>\n</DOC>\n")
    with pytest.raises(InputError, match=r"bad.sgml:1: a <DOC> without a <DOCNO>"):
        load_corpus(bad)


def test_topics_formats(trec, tmp_path):
    assert read_topics(trec / "topics.txt") == {
        "401": "cats sleep",
        "402": "dogs bark mail",
        "403": "unjudged topic",
    }
    assert read_topics(trec / "topics.txt", "desc")["401"] == "How long do cats sleep?"
    tsv = tmp_path / "queries.tsv"
    tsv.write_text("1\twhat is a cat\n2\tdogs\n")
    assert read_topics(tsv) == {"1": "what is a cat", "2": "dogs"}
    bad = tmp_path / "nope.txt"
    bad.write_text("just text\n")
    with pytest.raises(InputError, match=r"nope.txt:1: not a topics file"):
        read_topics(bad)


def test_judged_testset_notes(trec):
    docs = load_corpus(trec / "corpus")
    ts = load_judged_testset(trec / "topics.txt", trec / "qrels.txt", docs)
    assert [q.id for q in ts.questions] == ["401", "402"]
    assert ts.questions[0].kind == "qrels" and dict(ts.questions[0].qrels)["FT-1"] == 2
    assert any("1 topics have no judgments, left out: 403" in n for n in ts.notes)
    assert any("1 relevant documents are not in the corpus" in n for n in ts.notes)


def test_document_level_grades_and_units():
    items = [("a", 0, 10), ("a", 10, 20), ("b", 0, 5), ("c", 0, 5)]
    judged = {"a": 2, "b": 0, "c": 1, "z": 1}
    g = grading.grade_documents(items, judged)
    assert g.tolist() == [2, 2, 0, 1]  # both chunks of a carry a's grade
    # recall counts a once: units found after each rank
    assert grading.found_units(items, g.tolist(), 1, True).tolist() == [1, 1, 1, 2]
    assert grading.found_units(items, g.tolist(), 1, False).tolist() == [1, 1, 1, 1]


def test_any_of_grades_the_best_alternative():
    items = [("d", 0, 10), ("d", 40, 60)]
    alts = [("d", 45, 50), ("d", 5, 30)]
    assert grading.grade_any(items, alts).tolist() == [1, 2]
    # "all of" the same spans: no item holds both
    assert grading.grade_ranking(items, alts).tolist() == [1, 1]


def test_search_scores_trec_collection_by_document(trec):
    cfg = Config(
        corpus=str(trec / "corpus"),
        testset=str(trec / "topics.txt"),
        qrels=str(trec / "qrels.txt"),
        strategies=("whole", "fixed"),
        ks=(1, 3),
        rounds=200,
    )
    run = run_search(cfg)
    assert [q.id for q in run.questions] == ["401", "402"]
    whole = run.systems[0]
    s = whole.scores
    # 401: relevant FT-1 (2) and FT-3 (1); BM25 on "cats sleep" ranks FT-1 first
    assert whole.items[0][0].doc == "FT-1" and whole.items[0][0].grade == 2
    assert s["hit@1"][0] == 1.0 and s["recall@1"][0] == 0.5  # 1 of 2 relevant docs
    assert s["recall@3"][0] == 1.0
    # 402: relevant FT-2 and FT-9 (absent from the corpus): recall at most 1/2
    assert s["recall@3"][1] == 0.5 and s["hit@1"][1] == 1.0
    assert s["map"][1] == pytest.approx(0.5, abs=1e-12)


def test_chunks_of_one_relevant_document_count_once_for_recall(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "long.txt").write_text(" ".join(["cats sleep a lot"] * 120))
    (docs / "other.txt").write_text(" ".join(["dogs bark loudly"] * 60))
    (tmp_path / "q.jsonl").write_text(
        json.dumps({"id": "q", "question": "cats sleep", "qrels": {"long.txt": 1}}) + "\n"
    )
    cfg = Config(
        corpus=str(docs),
        testset=str(tmp_path / "q.jsonl"),
        strategies=("fixed",),
        ks=(1, 2),
        rounds=200,
    )
    s = run_search(cfg).systems[0].scores
    # the top two chunks are both from long.txt: precision counts each, recall once
    assert s["precision@2"][0] == 1.0 and s["recall@2"][0] == 1.0 and s["recall@1"][0] == 1.0


def test_search_cli_with_qrels_flag_and_beir_folder(trec, tmp_path):
    runner = CliRunner()
    out = tmp_path / "res"
    r = runner.invoke(
        app,
        [
            "search",
            "--corpus",
            str(trec / "corpus"),
            "--testset",
            str(trec / "topics.txt"),
            "--qrels",
            str(trec / "qrels.txt"),
            "--strategies",
            "whole",
            "--ks",
            "1,3",
            "--rounds",
            "200",
            "-o",
            str(out),
        ],
    )
    assert r.exit_code == 0, r.output
    assert "2 questions" in r.stdout and "403" in r.output
    # the same collection as a BEIR folder
    beir = tmp_path / "beir"
    (beir / "qrels").mkdir(parents=True)
    with (beir / "corpus.jsonl").open("w") as fh:
        for d in load_corpus(trec / "corpus"):
            fh.write(json.dumps({"_id": d.id, "title": d.title or "", "text": d.text}) + "\n")
    (beir / "queries.jsonl").write_text(
        "".join(
            json.dumps({"_id": q, "text": t}) + "\n"
            for q, t in read_topics(trec / "topics.txt").items()
        )
    )
    (beir / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n"
        + "".join(
            "\t".join(line.split()[i] for i in (0, 2, 3)) + "\n" for line in QRELS.splitlines()
        )
    )
    ts = load_testset(beir, load_corpus(beir))
    assert [q.id for q in ts.questions] == ["401", "402"]
    r2 = runner.invoke(
        app,
        [
            "search",
            "--corpus",
            str(beir),
            "--testset",
            str(beir),
            "--strategies",
            "whole",
            "--ks",
            "1,3",
            "--rounds",
            "200",
            "-o",
            str(tmp_path / "res2"),
        ],
    )
    assert r2.exit_code == 0, r2.output
    a = json.loads((out / "scores.json").read_text())["values"]["whole"]
    b = json.loads((tmp_path / "res2" / "scores.json").read_text())["values"]["whole"]
    assert a["recall@3"] == b["recall@3"] and a["map"] == b["map"]


def test_ideal_index_and_judged_through_run_search():
    base = Config(
        corpus=str(EXAMPLE / "posts"),
        testset=str(EXAMPLE / "questions.jsonl"),
        strategies=("overlap",),
        ks=(1, 5, 10),
        rounds=200,
    )
    returned = run_search(base).systems[0].scores
    index = run_search(base.with_overrides(ideal="index")).systems[0].scores
    judged = run_search(base.with_overrides(ideal="judged")).systems[0].scores
    # the same rankings: only nDCG changes; an ideal over the whole index is at
    # least as good as the returned list's, so nDCG can only drop
    np.testing.assert_array_equal(returned["recall@5"], index["recall@5"])
    assert np.all(index["ndcg@10"] <= returned["ndcg@10"] + 1e-12)
    assert index["ndcg@10"].mean() < returned["ndcg@10"].mean()
    # judged ideal for a span key: one item of grade 2
    assert np.all((judged["ndcg@1"] == 1.0) == (returned["hit@1"] == 1.0))


@pytest.mark.skipif(
    not (SHARED / "squad-small").is_dir(), reason="../shared/data/squad-small absent"
)
def test_squad_keeps_every_annotator_as_an_alternative():
    ts = load_squad_testset(SHARED / "squad-small" / "small.json")
    multi = [q for q in ts.questions if q.any_of]
    assert multi and all(q.kind == "any" and q.answers[0] == q.any_of[0] for q in multi)
    assert all(len(set(q.any_of)) == len(q.any_of) for q in multi)
    assert ts.skipped == 333 and "skipped 333 unanswerable questions" in ts.notes[0]


def test_search_in_trec_eval_compat_mode_scores_as_evaluate(trec):
    # whole documents ranked by BM25 are a document run: in compat mode the search
    # scores them as `evaluate --trec-eval-compat` scores the same run
    from ragmeter.scoring.trec import Qrels, Run, evaluate_run, read_qrels

    cfg = Config(
        corpus=str(trec / "corpus"),
        testset=str(trec / "topics.txt"),
        qrels=str(trec / "qrels.txt"),
        strategies=("whole",),
        ks=(1, 3),
        rounds=200,
        trec_eval_compat=True,
    )
    run = run_search(cfg)
    items = run.systems[0].items
    as_run = {
        q.id: {it.doc: it.score for it in row} for q, row in zip(run.questions, items, strict=True)
    }
    judged = read_qrels(trec / "qrels.txt")
    ev = evaluate_run(
        Run.from_dict(as_run),
        Qrels.from_dict(judged.to_dict()),
        ["ndcg@3", "map", "recall@3"],
        trec_eval_compat=True,
    )
    s = run.systems[0].scores
    np.testing.assert_allclose(s["ndcg@3"], ev.scores["ndcg_cut_3"], atol=1e-12)
    np.testing.assert_allclose(s["map"], ev.scores["map"], atol=1e-12)
    default = run_search(cfg.with_overrides(trec_eval_compat=False)).systems[0].scores
    assert not np.allclose(default["ndcg@3"], s["ndcg@3"])  # the gain differs (grade 2)


def _whole_documents(trec, **settings) -> Config:
    """A search of the TREC fixture by whole documents, keyed by its qrels."""
    return Config(
        corpus=str(trec / "corpus"),
        testset=str(trec / "topics.txt"),
        qrels=str(trec / "qrels.txt"),
        strategies=("whole",),
        ks=(1, 3),
        rounds=200,
        **settings,
    )


def test_a_qrels_run_records_the_level_it_scored_with(trec, tmp_path):
    # qrels count grade 1 as relevant; meta.json used to say 2, so the answer views
    # called question 402's first item (FT-2, grade 1) a miss although hit@1 was 1
    from ragmeter.answers.analysis import search_hits
    from ragmeter.runs.results import Results

    # asked for the exponential gain and the returned ideal, which compat mode overrides
    cfg = _whole_documents(trec, gain="exponential", ideal="returned", trec_eval_compat=True)
    res = Results(run_search(cfg).save(tmp_path / "res"))
    assert res.meta["relevant_grade"] == 1 and res.meta["measurement"]["relevant_grade"] == 1
    # compat mode scores with the judged ideal and linear gain: the record says so
    assert res.meta["ideal"] == "judged" and res.meta["measurement"]["gain"] == "linear"
    hits = search_hits(res, "whole", 1)
    assert [hits[q] for q in res.question_ids] == res.scores("whole", "hit@1").astype(bool).tolist()
    assert hits["402"] is True


def test_compat_mode_saves_the_settings_it_used(trec, tmp_path):
    import tomllib

    # asked for the exponential gain and the returned ideal, which compat mode overrides
    cfg = _whole_documents(trec, gain="exponential", ideal="returned", trec_eval_compat=True)
    out = run_search(cfg).save(tmp_path / "res")
    saved = tomllib.loads((out / "config.toml").read_text(encoding="utf-8"))["search"]
    assert (saved["ideal"], saved["gain"]) == ("judged", "linear")


def test_export_documents_of_a_qrels_search_keeps_its_judgments(trec, tmp_path):
    # the qrels file came out empty: the questions read back had lost their qrels
    from ragmeter.cli.export import export_trec
    from ragmeter.runs.results import Results
    from ragmeter.scoring.trec import evaluate_run, read_qrels, read_run

    cfg = _whole_documents(trec)
    res = Results(run_search(cfg).save(tmp_path / "res"))
    assert [q.qrels for q in res.questions] == [
        q.qrels for q in run_search(cfg).questions
    ]  # read back whole
    export_trec(res.path, tmp_path / "run.txt", tmp_path / "q.txt", documents=True)
    exported = read_qrels(tmp_path / "q.txt").to_dict()
    assert exported == {"401": {"FT-1": 2, "FT-3": 1}, "402": {"FT-2": 1, "FT-9": 1}}
    run = read_run(tmp_path / "run.whole.txt")  # one file per system, named after it
    ev = evaluate_run(run, read_qrels(tmp_path / "q.txt"), ["hit@1"])
    assert ev.scores["hit@1"].tolist() == res.scores("whole", "hit@1").tolist()

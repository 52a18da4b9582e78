"""``ragmeter export`` then ``ragmeter evaluate`` reproduces the search.

Every measure the export says carries over equals the search's own score, question by
question, through ``ragmeter evaluate`` (the command it prints and the Python function)
and through trec_eval (pytrec_eval); every measure it says does not carry over does
differ, for the reason it gives. Span items and ``--documents``, on the shipped example
and on a search keyed by TREC qrels.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import numpy as np
import pytest
from conftest import require, save_example
from typer.testing import CliRunner

from ragmeter.cli import app
from ragmeter.cli.export import export_files
from ragmeter.inputs.config import Config
from ragmeter.retrieval.trec import ordered_scores, read_qrels, read_run
from ragmeter.runs.evaluate import evaluate_files
from ragmeter.runs.pipeline import run_search
from ragmeter.runs.results import Results
from ragmeter.scoring.metrics import Metric

runner = CliRunner()
FAMILIES = ("recall", "hit", "precision", "mrr", "ndcg", "map", "rprec")


@pytest.fixture(scope="module")
def shipped(tmp_path_factory) -> Results:
    """The shipped example searched as ``ragmeter search`` does: seven strategies,
    relevance at grade 2, exponential gain, the returned list as nDCG's ideal."""
    return Results(save_example(tmp_path_factory.mktemp("shipped") / "res"))


@pytest.fixture(scope="module")
def lenient(tmp_path_factory) -> Results:
    """The same at grade 1 with trec_eval's linear gain: nDCG comparable with trec_eval."""
    path = tmp_path_factory.mktemp("lenient") / "res"
    return Results(save_example(path, relevant_grade=1, gain="linear"))


def measures(res: Results) -> list[str]:
    return [m for m in res.metrics if Metric.parse(m).family in FAMILIES]


def evaluated(res: Results, run: Path, qrels: Path, level: int, **flags) -> dict[str, np.ndarray]:
    """``ragmeter evaluate``'s per-question scores (the Python function), in the search's
    question order."""
    result = evaluate_files(qrels, [run], measures(res), level=level, rounds=200, **flags)
    (ev,) = result.evaluations
    assert sorted(ev.query_ids) == sorted(res.question_ids)  # every question, judged
    order = [ev.query_ids.index(q) for q in res.question_ids]
    return {m: v[order] for m, v in ev.scores.items()}


def same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=0.0, atol=1e-9))


def several_relevant(res: Results, system: str, level: int) -> int:
    """Questions where the system returned more than one item at the relevance level."""
    return sum(sum(it.grade >= level for it in items) > 1 for items in res.runs[system].values())


def test_exported_span_runs_evaluate_to_the_search_numbers(shipped, tmp_path):
    result = runner.invoke(
        app,
        ["export", str(shipped.path), "--run", str(tmp_path / "run.txt"), "--qrels",
         str(tmp_path / "qrels.txt")],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    carried_everywhere = {"hit", "precision", "mrr", "ndcg"}
    differing: list[str] = []
    for system in shipped.systems:
        run, qrels = tmp_path / f"run.{system}.txt", tmp_path / f"qrels.{system}.txt"
        got = evaluated(shipped, run, qrels, level=2)
        one_unit = several_relevant(shipped, system, 2) == 0
        for m in measures(shipped):
            family = Metric.parse(m).family
            want = shipped.scores(system, m)
            if family in carried_everywhere or one_unit:
                assert same(got[m], want), (system, m)
        if not one_unit:
            differing.append(system)
            # trec counts each relevant item; the search counts the answer once
            assert not same(got["recall@1"], shipped.scores(system, "recall@1")), system
            assert not same(got["map"], shipped.scores(system, "map")), system
        for k in shipped.meta["ks"]:  # a span key is one unit: recall@k is hit@k, map mrr
            assert same(got[f"hit@{k}"], shipped.scores(system, f"recall@{k}")), system
        assert same(got["mrr@10"], shipped.scores(system, "map")), system
    # overlapping chunks hand back the passage twice: the case the export must name
    assert differing == ["overlap"]
    out = " ".join(result.stdout.split())
    assert "hit@k, precision@k, mrr@k, ndcg@k: every system" in out
    assert "recall@1, recall@3, recall@5, map@k, map, rprec: 6 of 7 systems, not overlap" in out
    assert "in 70 rankings several items are relevant; trec counts each" in out
    assert "never coverage@k, words@k" in out


def test_the_printed_evaluate_command_reproduces_the_search(shipped, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(
        app, ["export", str(shipped.path), "--run", "run.txt", "--qrels", "qrels.txt"]
    )
    assert result.exit_code == 0, result.output
    line = next(x for x in result.stdout.splitlines() if x.startswith("ragmeter evaluate"))
    command = line.split(" gives ")[0]
    assert command == "ragmeter evaluate run.SYSTEM.txt --qrels qrels.SYSTEM.txt --level 2"
    argv = shlex.split(command.replace("SYSTEM", "sentence"))[1:]
    picked = ["hit@5", "precision@3", "mrr@10", "ndcg@10", "recall@5", "map", "rprec"]
    extra = ["--measures", ",".join(picked), "--rounds", "200", "--no-history", "-o", "ev"]
    result = runner.invoke(app, [*argv, *extra])
    assert result.exit_code == 0, result.output
    ev = Results(tmp_path / "ev")
    (name,) = ev.systems
    order = [ev.question_ids.index(q) for q in shipped.question_ids]
    for m in picked:
        assert same(ev.scores(name, m)[order], shipped.scores("sentence", m)), m


@pytest.mark.parametrize("documents", [False, True])
@pytest.mark.parametrize("search", ["shipped", "lenient"])
def test_what_the_export_says_carries_over_is_what_carries_over(
    search, documents, request, tmp_path
):
    res: Results = request.getfixturevalue(search)
    ex = export_files(res.path, tmp_path / "run.txt", tmp_path / "qrels.txt", None, documents)
    level = res.meta["measurement"]["relevant_grade"]
    assert ex.level == level and ex.gain == res.meta["measurement"]["gain"]
    both = 0
    for system in res.systems:
        qrels = tmp_path / ("qrels.txt" if documents else f"qrels.{system}.txt")
        got = evaluated(
            res, tmp_path / f"run.{system}.txt", qrels, level, gain=ex.gain, ideal=ex.ideal
        )
        for m in measures(res):
            assert same(got[m], res.scores(system, m)) == (m not in ex.differs[system]), (system, m)
        both += bool(ex.differs[system]) and len(ex.differs[system]) < len(ex.measures)
    if documents:
        # whole documents are items the run lists once each: everything carries over
        assert ex.differs["whole"] == [] and ex.ideal == "returned"
        assert all(ex.differs[s] for s in res.systems if s != "whole")
    else:
        assert all(not set(ex.differs[s]) & {m for m in ex.measures if m.startswith("hit")}
                   for s in res.systems)  # fmt: skip
        assert both  # some system carries some measures over and not others


def test_trec_eval_gives_the_search_numbers_on_what_carries_over(lenient, tmp_path):
    pytrec_eval = require("pytrec_eval", "pip install pytrec-eval-terrier")
    ex = export_files(lenient.path, tmp_path / "run.txt", tmp_path / "qrels.txt")
    ks = lenient.meta["ks"]
    names = {"recip_rank": "mrr@10", "map": "map", "Rprec": "rprec"}
    for k in ks:
        names |= {f"success_{k}": f"hit@{k}", f"P_{k}": f"precision@{k}"}
        names |= {f"recall_{k}": f"recall@{k}", f"ndcg_cut_{k}": f"ndcg@{k}"}
    checked = 0
    for system in lenient.systems:
        qrels = read_qrels(tmp_path / f"qrels.{system}.txt")
        run = {q: dict(rows) for q, rows in read_run(tmp_path / f"run.{system}.txt").items()}
        evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(names), relevance_level=1)
        measured = evaluator.evaluate(run)
        for trec, ours in names.items():
            if ours in ex.differs[system]:
                continue
            got = np.array([measured.get(q, {}).get(trec, 0.0) for q in lenient.question_ids])
            assert same(got, lenient.scores(system, ours)), (system, trec)
            checked += 1
    assert checked > 5 * len(names)


def test_a_search_keyed_by_documents_round_trips_by_documents(tmp_path):
    from test_judged_search import QRELS, SGML, TOPICS

    (tmp_path / "corpus").mkdir()
    (tmp_path / "corpus" / "ft.sgml").write_text(SGML)
    (tmp_path / "topics.txt").write_text(TOPICS)
    (tmp_path / "qrels.txt").write_text(QRELS)
    cfg = Config(
        corpus=str(tmp_path / "corpus"),
        testset=str(tmp_path / "topics.txt"),
        qrels=str(tmp_path / "qrels.txt"),
        strategies=("whole",),
        ks=(1, 3),
        rounds=200,
    )
    res = Results(run_search(cfg).save(tmp_path / "res"))
    ex = export_files(res.path, tmp_path / "r.txt", tmp_path / "j.txt", documents=True)
    assert ex.paths == [tmp_path / "r.whole.txt", tmp_path / "j.txt"]  # one qrels for all
    assert ex.differs == {"whole": []} and ex.level == 1
    got = evaluated(res, tmp_path / "r.whole.txt", tmp_path / "j.txt", 1, ideal=ex.ideal)
    assert set(got) == set(measures(res)) and "recall@3" in got
    for m, v in got.items():
        assert same(v, res.scores("whole", m)), m
    # a relevant document the corpus lacks (FT-9) still counts in recall's denominator
    assert read_qrels(tmp_path / "j.txt")["402"] == {"FT-2": 1, "FT-9": 1}


def test_one_system_is_named_like_many(shipped, tmp_path):
    ex = export_files(shipped.path, tmp_path / "docrun.txt", tmp_path / "q.txt", ["parent-400"])
    assert ex.paths == [tmp_path / "docrun.parent-400.txt", tmp_path / "q.parent-400.txt"]
    assert sorted(p.name for p in tmp_path.glob("*.txt")) == [
        "docrun.parent-400.txt",
        "q.parent-400.txt",
    ]
    assert "run.SYSTEM" not in ex.evaluate_command()
    assert ex.evaluate_command().startswith(f"ragmeter evaluate {tmp_path}/docrun.parent-400.txt")


def test_runs_carry_the_retrievers_scores(shipped, tmp_path):
    ex = export_files(shipped.path, tmp_path / "run.txt", None)
    assert ex.rank_scores == [] and sum(ex.lowered.values()) > 0  # the example has ties
    for system in shipped.systems:
        lines = [x.split() for x in (tmp_path / f"run.{system}.txt").read_text().splitlines()]
        by_q: dict[str, list[float]] = {}
        for qid, _, _item, _rank, score, _tag in lines:
            by_q.setdefault(qid, []).append(float(score))
        for qid, items in shipped.runs[system].items():
            written = np.array(by_q[qid])
            saved = np.array([it.score for it in items])
            # within one 32-bit step of the saved scores, strictly falling even as trec_eval
            # holds them (32-bit floats), so no tool reorders a tie
            assert np.all(np.diff(written.astype(np.float32)) < 0), (system, qid)
            assert np.allclose(written, saved, rtol=1e-6, atol=0), (system, qid)
            untied = np.r_[True, np.diff(saved.astype(np.float32)) < 0]
            assert (written[untied] == saved[untied]).all()


def test_scores_that_rise_along_a_ranking_are_written_as_ranks(shipped, tmp_path):
    import shutil

    copy = tmp_path / "res"
    shutil.copytree(shipped.path, copy)
    lines = (copy / "runs.jsonl").read_text().splitlines()
    row = json.loads(lines[0])
    row["items"][1]["score"] = row["items"][0]["score"] + 1.0  # a reranker's order, say
    (copy / "runs.jsonl").write_text("\n".join([json.dumps(row), *lines[1:]]) + "\n")
    ex = export_files(copy, tmp_path / "run.txt", tmp_path / "qrels.txt", [row["system"]])
    assert ex.rank_scores == [row["system"]]
    written = read_run(tmp_path / f"run.{row['system']}.txt")[row["question"]]
    assert [s for _, s in written] == [float(10 - i) for i in range(10)]
    # the order is the search's: what carried over before carries over still
    before = export_files(shipped.path, None, tmp_path / "q.txt", [row["system"]])
    assert ex.differs == before.differs and "hit@1" not in ex.differs[row["system"]]


def test_ordered_scores_lower_ties_one_float32_step():
    assert ordered_scores([3.0, 2.0, 1.0]) == ([3.0, 2.0, 1.0], 0)
    values, lowered = ordered_scores([3.0, 2.0, 2.0, 2.0, 1.0])
    assert lowered == 2 and values[:2] == [3.0, 2.0] and values[-1] == 1.0
    assert 2.0 > values[2] > values[3] > 1.999999 and np.float32(values[2]) == values[2]
    # equal only as 32-bit floats (as trec_eval holds scores): lowered too
    assert ordered_scores([1.0, 1.0 - 1e-12])[1] == 1
    assert ordered_scores([1.0, 2.0]) is None  # rising: the order is not the scores'
    assert ordered_scores([1.0, float("nan")]) is None
    assert ordered_scores([]) == ([], 0)


def test_a_question_with_nothing_returned_stays_judged_and_scores_0(shipped, tmp_path):
    import shutil

    copy = tmp_path / "res"
    shutil.copytree(shipped.path, copy)
    lines = [json.loads(x) for x in (copy / "runs.jsonl").read_text().splitlines()]
    emptied = next(r for r in lines if r["system"] == "sentence")
    emptied["items"] = []  # a retriever that found nothing for this question
    (copy / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    scores = json.loads((copy / "scores.json").read_text())
    i = scores["questions"].index(emptied["question"])
    for m in scores["metrics"]:
        scores["values"]["sentence"][m][i] = 0.0  # what the search scores an empty ranking
    (copy / "scores.json").write_text(json.dumps(scores))
    ex = export_files(copy, tmp_path / "run.txt", tmp_path / "qrels.txt", ["sentence"])
    assert ex.differs == {"sentence": []}
    judged = read_qrels(tmp_path / "qrels.sentence.txt")[emptied["question"]]
    (answer,) = Results(copy).questions[i].answers
    assert judged == {f"{answer.doc}#{answer.start}-{answer.end}": 2}  # the passage itself
    got = evaluated(
        Results(copy), tmp_path / "run.sentence.txt", tmp_path / "qrels.sentence.txt", 2
    )
    assert all(v[i] == 0.0 for v in got.values())


def test_exporting_evaluate_results_says_to_use_the_runs_it_read(shipped, tmp_path):
    from ragmeter.cli.export import round_trip_lines

    export_files(shipped.path, tmp_path / "run.txt", tmp_path / "qrels.txt", ["sentence"])
    run, qrels = tmp_path / "run.sentence.txt", tmp_path / "qrels.sentence.txt"
    evaluate_files(qrels, [run], ["hit@10", "map"], level=2, rounds=200).run.save(tmp_path / "ev")
    ex = export_files(tmp_path / "ev", tmp_path / "again.txt", tmp_path / "j.txt")
    assert ex.from_runs and ex.differs  # the evaluate results keep the top 5 documents only
    assert any("results of ragmeter evaluate" in line for line in round_trip_lines(ex))


# ------------------------------------------------------------------ one qrels for all


def _written(folder: Path) -> list[str]:
    """The files in ``folder``, without ragmeter's record of what it wrote there."""
    return sorted(p.name for p in folder.iterdir() if not p.name.startswith("."))


RANX = {"hit": "hit_rate", "precision": "precision", "mrr": "mrr", "recall": "recall", "map": "map"}


def _ir_measure(metric: str, level: int):
    """ir_measures' measure for a ragmeter measure, at the relevance level."""
    from ir_measures import AP, RR, P, R, Success

    m = Metric.parse(metric)
    measure = {"hit": Success, "precision": P, "mrr": RR, "recall": R, "map": AP}[m.family]
    measure = measure(rel=level)
    return measure @ m.k if m.k is not None else measure


def test_merged_qrels_give_ranx_and_ir_measures_the_search_numbers(shipped, tmp_path):
    ranx = require("ranx", "pip install ranx")
    ir_measures = require("ir_measures", "pip install ir-measures")
    run, merged = tmp_path / "run.txt", tmp_path / "qrels.txt"
    result = runner.invoke(
        app, ["export", str(shipped.path), "--run", str(run), "--merged-qrels", str(merged)]
    )
    assert result.exit_code == 0, result.output
    out = " ".join(result.stdout.split())
    assert "hit@k, precision@k, mrr@k: every system" in out
    assert _written(tmp_path) == sorted(
        ["qrels.txt"] + [f"run.{s}.txt" for s in shipped.systems]
    )  # one qrels, no qrels.SYSTEM.txt
    ex = export_files(shipped.path, None, None, merged_qrels=tmp_path / "again.txt")
    assert (tmp_path / "again.txt").read_bytes() == merged.read_bytes()  # same bits
    level = ex.level
    # what carries over, and two measures that do not (the pool counts every system's items)
    picked = [m for m in shipped.metrics if Metric.parse(m).family in ("hit", "precision")]
    picked += ["mrr@10", "recall@5", "map"]
    assert all(m not in ex.merged_differs[s] for s in shipped.systems for m in picked[:-2])
    assert all({"recall@5", "map"} <= set(ex.merged_differs[s]) for s in shipped.systems)

    qrels = ranx.Qrels.from_file(str(merged), kind="trec")
    runs = []
    for system in shipped.systems:
        r = ranx.Run.from_file(str(tmp_path / f"run.{system}.txt"), kind="trec")
        r.name = system
        runs.append(r)
    names = {m: f"{RANX[Metric.parse(m).family]}{m[m.find('@'):] if '@' in m else ''}-l{level}"
             for m in picked}  # fmt: skip
    ranx.compare(qrels, runs, metrics=list(names.values()))
    judged = list(ir_measures.read_trec_qrels(str(merged)))
    measures = {str(_ir_measure(m, level)): m for m in picked}
    for r in runs:
        per_query = {}
        for x in ir_measures.iter_calc(
            [_ir_measure(m, level) for m in picked],
            judged,
            list(ir_measures.read_trec_run(str(tmp_path / f"run.{r.name}.txt"))),
        ):
            per_query.setdefault(measures[str(x.measure)], {})[x.query_id] = x.value
        for m in picked:
            want = shipped.scores(r.name, m)
            from_ranx = np.array([r.scores[names[m]][q] for q in shipped.question_ids])
            from_irm = np.array([per_query[m].get(q, 0.0) for q in shipped.question_ids])
            carried = m not in ex.merged_differs[r.name]
            assert same(from_ranx, want) == carried, ("ranx", r.name, m)
            assert same(from_irm, want) == carried, ("ir_measures", r.name, m)


def test_merged_qrels_are_every_systems_judgments_at_one_grade(shipped, tmp_path):
    ex = export_files(shipped.path, None, tmp_path / "own.txt", merged_qrels=tmp_path / "all.txt")
    merged = read_qrels(tmp_path / "all.txt")
    union: dict[str, dict[str, int]] = {}
    shared = relevant_shared = 0
    for system in shipped.systems:
        for qid, judged in read_qrels(ex.qrels[system]).items():
            per = union.setdefault(qid, {})
            for item, grade in judged.items():
                if item in per:  # two systems returned this span: one grade
                    assert per[item] == grade, (qid, item)
                    shared += 1
                    relevant_shared += grade > 0
                per[item] = grade
    assert merged == union
    assert shared > 1000 and relevant_shared > 50  # the check above had much to check
    # ranx and trec_eval need every scored question judged: each is, in one file
    assert sorted(merged) == sorted(shipped.question_ids)


def _regraded(shipped: Results, to: Path) -> tuple[str, str, str, str]:
    """A copy of the results where one span two systems returned has two grades; the
    question, the item and the two systems."""
    import shutil

    shutil.copytree(shipped.path, to)
    rows = [json.loads(x) for x in (to / "runs.jsonl").read_text().splitlines()]
    first: dict[tuple, str] = {}
    for row in rows:
        for it in row["items"]:
            key = (row["question"], it["doc"], it["start"], it["end"])
            if key in first and first[key] != row["system"]:
                it["grade"] = 1 if it["grade"] == 2 else 2
                (to / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
                return (
                    row["question"],
                    f"{it['doc']}#{it['start']}-{it['end']}",
                    first[key],
                    row["system"],
                )
            first.setdefault(key, row["system"])
    raise AssertionError("no span returned by two systems")


def test_two_grades_for_one_span_are_refused_and_nothing_is_written(shipped, tmp_path):
    question, item, a, b = _regraded(shipped, tmp_path / "res")
    out = tmp_path / "out"
    out.mkdir()
    result = runner.invoke(
        app,
        ["export", str(tmp_path / "res"), "--run", str(out / "run.txt"), "--merged-qrels",
         str(out / "qrels.txt")],
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    message = " ".join(result.stderr.split())
    assert f"question {question!r}, item {item}" in message
    assert f"by {a!r}" in message and f"by {b!r}" in message and "search again" in message
    assert _written(out) == []
    # each system's own qrels are still written: the grades differ across systems only
    assert export_files(tmp_path / "res", None, out / "own.txt").differs


@pytest.mark.parametrize(
    "flags, written",
    [
        (["--merged-qrels", "all.txt"], ["all.txt"]),
        (["--merged-qrels", "all.txt", "--system", "whole,sentence"], ["all.txt"]),
        (["--merged-qrels", "all.txt", "--documents"], ["all.txt"]),
        (["--merged-qrels", "all.txt", "--qrels", "q.txt", "--system", "whole"],
         ["all.txt", "q.whole.txt"]),
    ],
)  # fmt: skip
def test_merged_qrels_alone_for_some_systems_or_documents(shipped, tmp_path, flags, written):
    result = runner.invoke(app, ["export", str(shipped.path), *[
        str(tmp_path / f) if f.endswith(".txt") else f for f in flags]])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert _written(tmp_path) == written
    merged = read_qrels(tmp_path / "all.txt")
    if "--documents" in flags:  # documents: the answer key's, the same for every system
        ex = export_files(shipped.path, None, tmp_path / "d.txt", documents=True)
        assert merged == read_qrels(ex.qrels["whole"])
    elif "whole,sentence" in flags:
        items = {f"{it.doc}#{it.start}-{it.end}" for s in ("whole", "sentence")
                 for rows in shipped.runs[s].values() for it in rows}  # fmt: skip
        assert {i for per in merged.values() for i in per} == items


def test_merged_qrels_refuse_a_second_target_or_an_input(shipped, tmp_path):
    same_file = runner.invoke(
        app,
        ["export", str(shipped.path), "--documents", "--qrels", str(tmp_path / "q.txt"),
         "--merged-qrels", str(tmp_path / "q.txt")],
    )  # fmt: skip
    assert same_file.exit_code == 2 and "would be written twice" in same_file.stderr
    key = Path(shipped.meta["testset"]["path"])  # the search's test set: an input
    before = key.read_bytes()
    onto = runner.invoke(app, ["export", str(shipped.path), "--merged-qrels", str(key)])
    assert onto.exit_code == 2 and "--merged-qrels" in onto.stderr
    assert key.read_bytes() == before
    assert _written(tmp_path) == []

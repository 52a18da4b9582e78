"""The one run type: a search in memory and a results directory read back are both a
``runs.reading.ReadableRun``; ``meta.json`` is read once, into ``runs.meta.RunMeta``, with the
defaults of older files in one place, and written byte for byte as before; and no import
loop closes, not even through imports a type checker alone follows."""

from __future__ import annotations

import json
import pickle
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import EXAMPLE

from ragmeter.comparison.summary import plan_of, summarize
from ragmeter.comparison.systems import ComparisonPlan
from ragmeter.errors import InputError
from ragmeter.files.io import dumps
from ragmeter.files.outputs import results_inputs, results_marker
from ragmeter.history.systems import match_system
from ragmeter.inputs.config import Config
from ragmeter.runs.meta import RunMeta
from ragmeter.runs.pipeline import run_search
from ragmeter.runs.reading import ReadableRun, RunReading
from ragmeter.runs.results import Results
from ragmeter.runs.saving import meta_record
from ragmeter.runs.search_run import SearchRun
from ragmeter.scoring.measurement import describe

sys.path.insert(0, str(Path(__file__).parent))
from test_structure import SRC, cycles, import_graph  # noqa: E402


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> tuple[SearchRun, Results]:
    config = Config(
        corpus=str(EXAMPLE / "posts"),
        testset=str(EXAMPLE / "questions.jsonl"),
        strategies=("sentence", "fixed"),
        rounds=200,
    ).validate()
    run = run_search(config)
    return run, Results(run.save(tmp_path_factory.mktemp("runs") / "results"))


# --- one run type -----------------------------------------------------------------------------


def test_a_search_in_memory_and_its_results_read_back_are_both_a_run(saved):
    run, res = saved
    assert isinstance(run, ReadableRun) and isinstance(res, ReadableRun)
    assert not isinstance(object(), ReadableRun)
    for kind in (SearchRun, Results):  # the reading methods live once, in RunReading
        assert issubclass(kind, RunReading)
        assert "scores" not in vars(kind) and "matrix" not in vars(kind)
    assert [str(s) for s in run.systems] == res.systems
    assert run.metrics == res.metrics and run.question_ids == res.question_ids
    for metric in ("recall@5", "P_5"):  # either vocabulary, as the run names it
        assert np.array_equal(run.matrix(metric), res.matrix(metric))
    assert np.array_equal(run.scores(run.systems[1], "mrr@10"), res.scores("fixed", "mrr@10"))
    assert run.comparison_plan == res.comparison_plan
    assert run.summary.to_json() == res.summary.to_json()
    assert run.meta == res.meta and isinstance(res.meta, RunMeta)


def test_both_run_types_refuse_an_unknown_system_or_metric_in_the_same_words(saved):
    said = []
    for r in saved:
        for system, metric in (("sentense", "recall@5"), ("fixed", "recal@5")):
            with pytest.raises(InputError) as info:
                r.scores(system, metric)
            said.append(str(info.value))
    assert said[:2] == said[2:]
    assert "unknown system 'sentense' (did you mean 'sentence'?)" in said[0]
    assert "unknown metric 'recal@5' (did you mean 'recall@5'?)" in said[1]


def test_matrix_without_systems_reads_every_system(saved):
    for r in saved:
        assert r.matrix("recall@5", []).shape == r.matrix("recall@5").shape
        assert r.matrix("recall@5").shape == (2, len(r.question_ids))


# --- meta.json, read once ---------------------------------------------------------------------

OLD_META = {  # written before the format marker and the measurement record
    "versions": {"ragmeter": "0.0.9"},
    "corpus": {"path": "/data/posts", "documents": 3},
    "testset": {"path": "/data/questions.jsonl", "questions": 2},
    "systems": [
        {"name": "sentence", "strategy": {"name": "sentence"}, "retriever": {"kind": "bm25"}},
        "not an entry",
    ],
    "relevant_grade": 1,
    "seed": 7,
    "rounds": 500,
}


def test_an_old_meta_json_reads_with_the_documented_defaults():
    meta = RunMeta.from_json(OLD_META)
    assert meta.measurement == {} and meta.ideal is None and meta.gain is None
    assert meta.ndcg == {}
    assert meta.relevant_grade == 1  # no measurement: the top-level key
    assert meta.ks == () and meta.metrics == () and meta.depth is None
    assert (meta.seed, meta.rounds) == (7, 500)
    assert [e["name"] for e in meta.systems] == ["sentence"]  # entries with a name only
    assert (meta.corpus_path, meta.testset_path) == ("/data/posts", "/data/questions.jsonl")
    empty = RunMeta.from_json({})
    assert empty.relevant_grade == 2 and empty.corpus_path is None and empty.systems == ()
    assert RunMeta.from_json(None) == {}  # not a record: an empty one
    measured = RunMeta.from_json(
        {"relevant_grade": 2, "ideal": "judged", "measurement": {"relevant_grade": 1}}
    )
    assert measured.relevant_grade == 1 and measured.ideal == "judged"  # the measurement first
    both = {"ideal": "returned", "gain": "exponential"}
    assert RunMeta.from_json({"measurement": both}).ndcg == both


def test_meta_reads_as_the_record_it_was_read_from():
    meta = RunMeta.from_json(OLD_META)
    assert meta == OLD_META and isinstance(meta, dict)
    assert meta["seed"] == 7 and meta.get("ks") is None and "measurement" not in meta
    assert json.dumps(meta, sort_keys=True) == json.dumps(OLD_META, sort_keys=True)
    assert meta.to_json() == OLD_META and type(meta.to_json()) is dict
    assert results_inputs("r", meta) == [  # a reader that asks for a dict still reads it
        ("results directory", "r"),
        ("corpus", "/data/posts"),
        ("test set", "/data/questions.jsonl"),
    ]
    for change in (
        lambda m: m.__setitem__("seed", 1),
        lambda m: m.pop("seed"),
        lambda m: m.update(seed=1),
    ):
        with pytest.raises(TypeError, match="read-only"):
            change(meta)
    assert meta["seed"] == 7
    again = pickle.loads(pickle.dumps(meta))
    assert again == meta and again.relevant_grade == 1


def test_a_system_is_matched_the_same_through_the_record_or_its_runmeta():
    other = {"systems": [{**OLD_META["systems"][0], "name": "sentence/bm25"}]}
    held = ["sentence/bm25"]
    assert match_system("sentence", OLD_META, other, held) == "sentence/bm25"
    assert match_system("sentence", RunMeta.from_json(OLD_META), other, held) == "sentence/bm25"


META_KEYS = [
    "versions",
    "corpus",
    "testset",
    "systems",
    "ks",
    "depth",
    "relevant_grade",
    "ideal",
    "measurement",
    "seed",
    "rounds",
    "metrics",
]
"""meta.json's keys beside the results marker: no key added or lost."""


def test_meta_json_holds_every_key_and_reads_back_byte_for_byte(saved):
    run, res = saved
    written = (res.path / "meta.json").read_bytes()
    record = json.loads(written)
    assert sorted(record) == sorted([*results_marker(), *META_KEYS])
    assert record["corpus"]["documents"] == len(run.documents)
    assert record["testset"]["questions"] == len(run.questions)
    assert [s["name"] for s in record["systems"]] == [s.name for s in run.systems]
    assert record["measurement"] == describe(run.config, run.documents, run.questions)
    assert dumps(meta_record(run).to_json()).encode("utf-8") == written
    assert dumps(RunMeta.from_json(json.loads(written)).to_json()).encode("utf-8") == written
    assert res.meta.relevant_grade == 2 and res.meta.ks == (1, 3, 5, 10)
    assert res.meta.ndcg == {"ideal": "returned", "gain": "exponential"} == res.summary.ndcg


# --- summarize takes a plan ---------------------------------------------------------------------

MATRICES = {
    "recall@5": np.array([[1, 0, 1, 1, 0, 1.0], [0, 0, 1, 0, 0, 1.0], [1, 1, 1, 1, 0, 1.0]]),
    "mrr@5": np.array([[1, 0, 0.5, 1, 0, 1], [0, 0, 1, 0, 0, 0.5], [1, 1, 1, 0.5, 0, 1]]),
}
SYSTEMS = ["a", "b", "c"]


def test_summarize_reads_a_plan_as_it_read_the_settings_one_by_one():
    labels = ["x", "x", "y", "y", "z", "z"]
    plan = ComparisonPlan(
        "recall@5", 3, 300, 0.9, "holm", "a", clusters=tuple(labels), cluster_mode="document"
    )
    planned = summarize(MATRICES, SYSTEMS, plan, method="percentile", k_capped={"b": 2})
    earlier = summarize(
        MATRICES,
        SYSTEMS,
        "recall@5",
        3,
        300,
        0.9,
        "percentile",
        adjust="holm",
        baseline="a",
        clusters=labels,
        cluster_mode="document",
        k_capped={"b": 2},
    )
    assert planned.to_json() == earlier.to_json()
    assert planned.clusters is not None and planned.comparison_rule.adjust == "holm"
    named = plan_of("recall@5", 3, 300, 0.9, adjust="holm", baseline="a", clusters=labels)
    assert named == ComparisonPlan(
        "recall@5", 3, 300, 0.9, "holm", "a", clusters=tuple(labels), cluster_mode="auto"
    )
    by_keyword = summarize(MATRICES, SYSTEMS, "recall@5", seed=3, rounds=300, confidence=0.9)
    keyed = summarize(MATRICES, SYSTEMS, plan_of("recall@5", 3, 300, 0.9))
    assert by_keyword.to_json() == keyed.to_json()
    with pytest.raises(TypeError, match="the plan holds"):
        summarize(MATRICES, SYSTEMS, plan, seed=4)


# --- no loop, not even a type-only one ----------------------------------------------------------


def test_a_loop_through_type_only_imports_is_found(tmp_path):
    pkg = tmp_path / "ragmeter"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(
        "from typing import TYPE_CHECKING\n"
        '_LAZY = {"Run": "ragmeter.run"}\n'
        "if TYPE_CHECKING:\n    from ragmeter.run import Run\n"
    )
    (pkg / "run.py").write_text("from ragmeter import summary\n")
    (pkg / "summary.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ragmeter.run import Run\n"
    )
    graph = import_graph(tmp_path)
    assert graph["ragmeter.summary"] == {"ragmeter.run"}
    assert cycles(graph) == [["ragmeter.run", "ragmeter.summary"]]
    assert graph["ragmeter"] == set()  # the root's names of _LAZY, shown to type checkers
    (pkg / "__init__.py").write_text(  # a type-only import that is not in _LAZY counts
        "from typing import TYPE_CHECKING\n"
        '_LAZY = {"Run": "ragmeter.run"}\n'
        "if TYPE_CHECKING:\n    from ragmeter.summary import Run\n"
    )
    assert import_graph(tmp_path)["ragmeter"] == {"ragmeter.summary"}


def test_the_runs_and_the_comparison_close_no_loop_even_for_type_checkers():
    graph = import_graph(SRC)
    assert cycles(graph) == []
    assert not any(m.startswith("ragmeter.runs") for m in graph["ragmeter.comparison.summary"])
    assert "ragmeter.runs.search_run" not in graph["ragmeter.runs.saving"]
    assert graph["ragmeter"] == {"ragmeter._compat"}

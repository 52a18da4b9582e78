"""Scoring run files in parallel gives the results of scoring them one by one, byte for byte."""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from ragmeter.cli import app
from ragmeter.engine import LocalEngine
from ragmeter.errors import InputError
from ragmeter.runs import evaluate as ev
from ragmeter.runs.evaluate import evaluate_files, scoring_engine

runner = CliRunner()
MEASURES = ["map", "ndcg@10", "precision@5", "recall@20", "mrr", "rprec"]


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> tuple[Path, list[Path]]:
    """Qrels and 6 small runs: ties, a query a run lacks, a query without judgments."""
    root = tmp_path_factory.mktemp("parallel")
    rng = np.random.default_rng(3)
    pools = {q: [f"D{j}" for j in rng.choice(500, 60, replace=False)] for q in range(30)}
    judged = [(q, d) for q, ds in pools.items() for d in ds[:10]]
    (root / "qrels.txt").write_text(
        "".join(f"{q} 0 {d} {int(rng.integers(0, 3))}\n" for q, d in judged)
    )
    runs = []
    for r in range(6):
        lines = [f"x{r} Q0 D1 1 1.0 sys{r}\n"]  # a query without judgments
        for q, ds in pools.items():
            if r == 2 and q == 5:
                continue  # a judged query this run lacks
            for i, d in enumerate(rng.permutation(ds)[:30]):
                score = round(30 - i + rng.random() * (r % 2), 2) if r != 4 else float(30 - i // 3)
                lines.append(f"{q} Q0 {d} {i + 1} {score} sys{r}\n")
        runs.append(root / f"r{r}.run")
        runs[-1].write_text("".join(lines))
    return root, runs


def _bytes(result) -> list[bytes]:
    """Everything scored, as bytes: names, ids, each measure's scores, the kept tops."""
    out = []
    for e in result.evaluations:
        out.append(pickle.dumps((e.name, e.query_ids, e.missing, e.unjudged, e.depth)))
        out.extend(e.scores[m].tobytes() for m in sorted(e.scores))
        out.extend(a.tobytes() for a in (e.top.docs, e.top.scores, e.top.grades))
    return out


@pytest.mark.parametrize("count", [3, 5])
def test_workers_score_the_runs_of_one_process_byte_for_byte(files, count):
    root, runs = files
    one = evaluate_files(root / "qrels.txt", runs[:count], MEASURES, rounds=200)
    many = evaluate_files(
        root / "qrels.txt", runs[:count], MEASURES, rounds=200, engine=LocalEngine(3)
    )
    assert _bytes(many) == _bytes(one)
    assert [s.name for s in many.run.systems] == [f"sys{r}" for r in range(count)]


class _Elsewhere:
    """An engine whose tasks reach workers pickled, sharing no memory with this process."""

    name, workers = "elsewhere", 2

    def map(self, fn, tasks, progress=None, meanwhile=None, on_result=None):
        tasks = [pickle.loads(pickle.dumps(t)) for t in tasks]
        assert all(t[2] is not None for t in tasks)  # the qrels travel with each task
        saved = dict(ev._SHARED)
        ev._SHARED.clear()
        try:
            return [fn(t) for t in tasks]
        finally:
            ev._SHARED.update(saved)


def test_workers_that_share_no_memory_get_the_qrels_with_each_task(files):
    root, runs = files
    one = evaluate_files(root / "qrels.txt", runs[:4], MEASURES, rounds=200, trec_eval_compat=True)
    away = evaluate_files(
        root / "qrels.txt",
        runs[:4],
        MEASURES,
        rounds=200,
        trec_eval_compat=True,
        engine=_Elsewhere(),
    )
    assert _bytes(away) == _bytes(one)


def _cli(root: Path, runs: list[Path], where: Path, *extra: str) -> dict[str, bytes]:
    where.mkdir()
    args = ["evaluate", "--qrels", str(root / "qrels.txt"), *map(str, runs)]
    args += ["--rounds", "200", "-o", "res", "--no-history", *extra]
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(where)  # the same results path, so the saved files can be compared whole
        r = runner.invoke(app, args)
    assert r.exit_code == 0, r.output
    files = sorted(p for p in (where / "res").rglob("*") if p.is_file())
    return {str(p.relative_to(where)): p.read_bytes() for p in files} | {"out": r.output.encode()}


def test_evaluate_with_workers_saves_and_prints_what_one_worker_does(files, tmp_path):
    root, runs = files
    one = _cli(root, runs, tmp_path / "one", "--workers", "1")
    many = _cli(root, runs, tmp_path / "many", "--workers", "4")
    assert "res/summary.json" in one
    assert many == one


def test_workers_come_from_the_option_then_the_environment_then_one(monkeypatch):
    monkeypatch.delenv("RAGMETER_WORKERS", raising=False)
    assert scoring_engine().workers == 1
    monkeypatch.setenv("RAGMETER_WORKERS", "3")
    assert scoring_engine().workers == 3
    assert scoring_engine(workers=2).workers == 2
    assert scoring_engine(workers=0).workers >= 1  # one per CPU
    with pytest.raises(InputError, match="--workers"):
        scoring_engine(workers=-1)

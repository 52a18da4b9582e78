"""Run files scored as Ray tasks give the local results byte for byte (a local Ray).

Skipped when Ray is not installed, unless RAGMETER_REQUIRE_ALL=1 (then it fails).
"""

from __future__ import annotations

from test_engine_ray import ray_engine  # noqa: F401  (a fixture: a local Ray)
from test_evaluate_parallel import MEASURES, _bytes, _cli, files  # noqa: F401  (a fixture)

from ragmeter.runs.evaluate import evaluate_files


def assert_scored_as_locally(files, engine) -> None:  # noqa: F811  (files: the fixture's value)
    """Every run file scored through ``engine`` equals the local scores byte for byte,
    with and without trec_eval's compatibility mode."""
    root, runs = files
    for compat in (False, True):
        local = evaluate_files(
            root / "qrels.txt", runs, MEASURES, rounds=200, trec_eval_compat=compat
        )
        scored = evaluate_files(
            root / "qrels.txt", runs, MEASURES, rounds=200, trec_eval_compat=compat, engine=engine
        )
        assert _bytes(scored) == _bytes(local)


def test_runs_scored_as_ray_tasks_equal_local_scores_byte_for_byte(files, ray_engine):  # noqa: F811
    assert_scored_as_locally(files, ray_engine)


def test_evaluate_on_ray_saves_and_prints_what_the_local_engine_does(
    files,  # noqa: F811
    ray_engine,  # noqa: F811
    tmp_path,
):
    root, runs = files
    local = _cli(root, runs, tmp_path / "local")
    on_ray = _cli(root, runs, tmp_path / "ray", "--engine", "ray", "--engine-address", "")
    assert on_ray == local

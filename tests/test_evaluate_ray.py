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


def test_ray_tasks_fill_the_score_cache_here_and_a_second_run_scores_none(
    files,  # noqa: F811
    ray_engine,  # noqa: F811
    tmp_path,
    monkeypatch,
):
    from ragmeter.runs import evaluate as ev
    from ragmeter.runs.score_cache import ENV, ScoreCache

    root, runs = files
    monkeypatch.setenv(ENV, str(tmp_path / "cache.sqlite3"))
    first = evaluate_files(root / "qrels.txt", runs, MEASURES, rounds=200, engine=ray_engine)
    with ScoreCache(tmp_path / "cache.sqlite3") as cache:
        assert cache.count() == len(runs)  # stored by this process as each task came back

    def never(task):
        raise AssertionError(f"{task[0]} scored again")

    monkeypatch.setattr(ev, "score_file", never)
    again = evaluate_files(root / "qrels.txt", runs, MEASURES, rounds=200, engine=ray_engine)
    assert _bytes(again) == _bytes(first)

"""The notebook API behind ``ragmeter.search`` and ``ragmeter.compare``.

Import these from :mod:`ragmeter` itself::

    import ragmeter

    run = ragmeter.search(corpus="docs", testset="questions.jsonl",
                          strategies=["sentence", "recursive"])
    run                                   # a table of intervals in a notebook
    ragmeter.compare(run, "sentence", "recursive")
    ragmeter.bootstrap(run.scores("sentence", "recall@5"))
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ragmeter.comparison.ranks import rank_run
from ragmeter.comparison.systems import compare_run
from ragmeter.comparison.tables import Comparisons
from ragmeter.errors import InputError
from ragmeter.inputs.config import Config, load_config
from ragmeter.runs.pipeline import run_search
from ragmeter.runs.results import Results
from ragmeter.runs.search_run import SearchRun

__all__ = ["compare", "search"]


def search(
    config: Config | str | Path | None = None,
    testset: str | Path | None = None,
    /,
    *,
    progress: Callable[[str, int, int], None] | None = None,
    **overrides: Any,
) -> SearchRun:
    """Score every chunking strategy x retriever on a test set, in memory.

    ``config`` is a :class:`~ragmeter.inputs.config.Config`, the path of a
    ``ragmeter.toml``, or the corpus path with ``testset`` the test set's path
    (``search("docs", "questions.jsonl")``); or give both as keywords
    (``search(corpus="docs", testset="questions.jsonl")``). Other keywords
    override :class:`~ragmeter.inputs.config.Config` fields (``strategies``,
    ``retrievers``, ``ks``, ``seed``, ``rounds``, ``metric``, ...).

    The :class:`~ragmeter.runs.pipeline.SearchRun` returned reads like a results
    directory (``scores``, ``matrix``, ``summary``) and shows itself as a table;
    save it with :func:`ragmeter.runs.results.save_results`.
    """
    if "testset" in overrides:
        if testset is not None:
            raise InputError("give the test set once, by position or as testset=")
        testset = overrides.pop("testset")
    unknown = sorted(set(overrides) - set(Config.__dataclass_fields__))
    if unknown:
        raise InputError(
            f"unknown search setting {unknown[0]!r}; use Config fields such as "
            "corpus, strategies, retrievers, ks, seed, rounds, metric"
        )
    for name in ("strategies", "retrievers", "ks", "custom_strategies"):
        value = overrides.get(name)
        if isinstance(value, list):
            overrides[name] = tuple(value)
    if isinstance(config, Config):
        cfg = config
    elif config is None:
        cfg = Config()
    elif testset is None and Path(config).suffix == ".toml":
        cfg = load_config(config)
    else:
        cfg = Config(corpus=str(config))
    if testset is not None:
        overrides["testset"] = str(testset)
    if "corpus" in overrides and overrides["corpus"] is not None:
        overrides["corpus"] = str(overrides["corpus"])
    cfg = cfg.with_overrides(**overrides)
    return run_search(cfg, progress=progress)


def _open(results: SearchRun | Results | str | Path) -> SearchRun | Results:
    if isinstance(results, SearchRun | Results):
        return results
    return Results(results)


def compare(
    results: SearchRun | Results | str | Path,
    a: str | None = None,
    b: str | None = None,
    *,
    metric: str | None = None,
    seed: int | None = None,
    rounds: int | None = None,
    adjust: str | None = None,
    baseline: str | None = None,
    pairs: list[tuple[str, str]] | str | None = None,
    family: str | None = None,
) -> Comparisons:
    """Paired comparisons of the systems of a search (in memory or a results directory).

    By default the run's own table, row for row as ``summary.json``, the terminal and
    the report show it (:func:`ragmeter.comparison.systems.compare_run`: its metric, seed,
    rounds, confidence, family and rule). With ``a`` and ``b``, that one pair (a
    family of one); ``baseline``, planned ``pairs`` or ``family`` choose another
    family (``"grid"``: retrievers within each strategy and strategies within each
    retriever, one family, the default of a strategy x retriever grid;
    ``"retrievers"``, ``"strategies"``: one of the two; ``"all"``: every pair);
    ``adjust="none"`` the seed's per-pair rule. The list returned shows itself as a
    table and converts with ``to_pandas()`` / ``to_markdown()``; each item is a
    :class:`ragmeter.comparison.verdicts.Row`, and ``rule`` names the rule; ``ranks``
    says where each system ranks (:class:`ragmeter.comparison.ranks.Ranks`: who shares
    the top, and each system's simultaneous rank range).
    """
    run = _open(results)
    plan = run.comparison_plan.choose(
        a,
        b,
        metric=metric,
        seed=seed,
        rounds=rounds,
        adjust=adjust,
        baseline=baseline,
        pairs=pairs,
        family=family,
    )
    table = compare_run(run, plan)
    ranks = rank_run(run, plan, table)
    return Comparisons(
        table.rows, plan.metric, plan.seed, plan.rounds, rule=table.rule, ranks=ranks
    )

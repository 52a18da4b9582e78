"""Shared test setup: where the shared data lives, what a missing extra means, hypothesis.

* ``shared_data`` (fixture) and :func:`shared_path` find the public test data in
  ``../shared/data`` beside the project root (the one place tests look for it).
* :func:`require` imports a test extra (``pytrec_eval``, ``llama_cpp``, ...).
* The shipped example (:data:`EXAMPLE`): :func:`search_example` runs a search on it,
  :func:`save_example` saves one, :func:`copy_results` copies a results folder; the
  session fixtures ``example_results`` and ``small_example_results`` are saved once and
  read only, their ``*_copy`` twins are a test's own copy to write into.
* Both skip with the reason on a developer's machine, but **fail** when the
  environment asks for everything: ``CI=true`` (or ``1``/``yes``) or
  ``RAGMETER_REQUIRE_ALL=1`` (``.ci/run`` sets it). In that mode every other skip
  fails too (see :func:`pytest_runtest_makereport`), so CI cannot silently skip.
* Hypothesis profiles: ``ci`` (derandomized: the same examples every run) is the
  default and always used under CI; ``HYPOTHESIS_PROFILE=dev`` runs random (and,
  where a test does not set its own count, more) examples locally.
"""

from __future__ import annotations

import importlib
import os
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

import pytest
from hypothesis import HealthCheck, settings

if TYPE_CHECKING:
    from ragmeter.runs.search_run import SearchRun

ROOT = Path(__file__).resolve().parents[1]
"""The project root (the folder holding pyproject.toml)."""

EXAMPLE = ROOT / "src" / "ragmeter" / "examples" / "blog"
"""The shipped example (25 posts, 135 questions): the one path every test reads it from."""

SHARED_DATA = ROOT.parent / "shared" / "data"
"""The shared public test data: ``../shared/data`` relative to the project root."""


def require_all() -> bool:
    """True when a missing data set or test extra must fail, not skip (CI)."""
    ci = os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")
    return ci or os.environ.get("RAGMETER_REQUIRE_ALL", "").strip() == "1"


def missing(reason: str) -> None:
    """Skip with ``reason`` here; fail with it where everything is required."""
    if require_all():
        pytest.fail(f"{reason} (required: CI or RAGMETER_REQUIRE_ALL=1 is set)", pytrace=False)
    pytest.skip(reason, allow_module_level=True)


def shared_path(*parts: str) -> Path:
    """``../shared/data/<parts>``; skips (or fails in CI) when it is absent."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        missing(f"{path} is not present (the shared test data lives in ../shared/data)")
    return path


def require(module: str, hint: str | None = None) -> ModuleType:
    """Import a test extra; skip (or fail in CI) with an install hint when it is missing."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        error = exc
    missing(f"{module} is not installed ({hint or 'pip install -e .[test]'}): {error}")
    raise AssertionError("not reached: missing() always raises")


def require_file(path: str | Path, hint: str) -> Path:
    """A file a test needs (a browser binary, a model); skip or fail like :func:`require`."""
    path = Path(path)
    if not path.exists():
        missing(f"{path} is not present ({hint})")
    return path


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The shared data folder ``../shared/data``; skips (fails in CI) when absent."""
    return shared_path()


# --------------------------------------------------------------------------- the shipped example


def search_example(questions: int | None = None, **settings) -> SearchRun:
    """A search on the shipped example with ``settings`` (``Config`` fields, ``testset``
    too; ``rounds`` is 200 unless given), over its first ``questions`` questions or all."""
    from ragmeter.inputs.config import Config
    from ragmeter.inputs.corpus import load_corpus
    from ragmeter.inputs.testset import TestSet, load_testset
    from ragmeter.runs.pipeline import run_search

    where = {"corpus": str(EXAMPLE / "posts"), "testset": str(EXAMPLE / "questions.jsonl")}
    config = Config(**(where | {"rounds": 200} | settings))
    if questions is None:
        return run_search(config)
    docs = load_corpus(config.corpus)
    first = load_testset(config.testset, docs).questions[:questions]
    return run_search(config, docs, TestSet(first))


def save_example(path: Path, questions: int | None = None, **settings) -> Path:
    """:func:`search_example` saved as a results folder at ``path`` (returned)."""
    from ragmeter.runs.results import save_results

    return save_results(search_example(questions, **settings), path)


def copy_results(src: Path, dst: Path) -> Path:
    """A copy of the results folder ``src`` at ``dst`` (returned), for a test to change."""
    return Path(shutil.copytree(src, dst))


EXAMPLE_SETTINGS = {
    "strategies": ("whole", "sentence", "recursive"),
    "retrievers": ("bm25",),
    "rounds": 200,
    "family": "all",
}
"""``example_results``: three systems, the example's close pair (``sentence`` and
``recursive``) beside ``whole``, every pair compared."""

SMALL_EXAMPLE_QUESTIONS = 8
SMALL_EXAMPLE_SETTINGS = {
    "strategies": ("sentence", "fixed-40"),
    "custom_strategies": ({"name": "fixed-40", "kind": "fixed", "size": 40},),
    "ks": (1, 5),
    "rounds": 200,
}
"""``small_example_results``: the first 8 questions, ``sentence`` and 40-word ``fixed``
chunks, k = 1 and 5: small enough to answer and grade in every test."""


def _contents(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()
    }


def _read_only(path: Path) -> Iterator[Path]:
    """Yield ``path``; afterwards fail, naming the files, if any test changed it."""
    before = _contents(path)
    yield path
    after = _contents(path)
    changed = sorted(n for n in before.keys() | after.keys() if before.get(n) != after.get(n))
    assert not changed, f"a test wrote into the shared {path} (take the *_copy fixture): {changed}"


@pytest.fixture(scope="session")
def example_results(tmp_path_factory) -> Iterator[Path]:
    """The shipped example saved once with :data:`EXAMPLE_SETTINGS`. Read only (checked at
    the end of the session): a test that writes into it takes ``example_results_copy``."""
    yield from _read_only(
        save_example(tmp_path_factory.mktemp("example") / "results", **EXAMPLE_SETTINGS)
    )


@pytest.fixture
def example_results_copy(example_results, tmp_path) -> Path:
    """This test's own copy of ``example_results`` (``tmp_path/results``)."""
    return copy_results(example_results, tmp_path / "results")


@pytest.fixture(scope="session")
def small_example_results(tmp_path_factory) -> Iterator[Path]:
    """The small example (:data:`SMALL_EXAMPLE_SETTINGS`) saved once. Read only (checked
    at the end): a test that writes into it takes ``small_example_results_copy``."""
    path = tmp_path_factory.mktemp("small-example") / "results"
    yield from _read_only(save_example(path, SMALL_EXAMPLE_QUESTIONS, **SMALL_EXAMPLE_SETTINGS))


@pytest.fixture
def small_example_results_copy(small_example_results, tmp_path) -> Path:
    """This test's own copy of ``small_example_results`` (``tmp_path/results``)."""
    return copy_results(small_example_results, tmp_path / "results")


# --------------------------------------------------------------------------- no silent skips


def _skip_reason(longrepr: object) -> str:
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2])
    return str(longrepr)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Where everything is required, a skipped test is a failed one."""
    outcome = yield
    report = outcome.get_result()
    if report.skipped and require_all() and not hasattr(report, "wasxfail"):
        report.outcome = "failed"
        report.longrepr = (
            f"skipped where every test must run (CI / RAGMETER_REQUIRE_ALL=1): "
            f"{_skip_reason(report.longrepr)}"
        )


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    """Same for a whole module skipped at import (``importorskip`` at module level)."""
    outcome = yield
    report = outcome.get_result()
    if report.skipped and require_all():
        report.outcome = "failed"
        report.longrepr = (
            f"{collector.nodeid} skipped where every test must run "
            f"(CI / RAGMETER_REQUIRE_ALL=1): {_skip_reason(report.longrepr)}"
        )


# --------------------------------------------------------------------------- hypothesis

settings.register_profile(
    "ci",
    derandomize=True,  # the same examples on every run: a red run is a real change
    deadline=None,  # shared, loaded machines: no per-example time limit
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "dev",
    max_examples=500,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("ci" if require_all() else os.environ.get("HYPOTHESIS_PROFILE", "ci"))


# --------------------------------------------------------------------------- caches

# Runs under test keep no segmentation cache in the user's home (and so segment every time,
# testing what they test); tests of the cache name a folder of their own.
os.environ.setdefault("RAGMETER_SEGMENT_CACHE", "off")
# nor a score cache: every evaluate under test scores its runs
os.environ.setdefault("RAGMETER_SCORE_CACHE", "off")

# The key that seals manifest entries lives in a state folder of the test session's own,
# never in the user's home (subprocesses of a test inherit it, so their writes are ours).
_STATE: list[str] = []
if not os.environ.get("RAGMETER_STATE_DIR"):
    import tempfile

    _STATE.append(tempfile.mkdtemp(prefix="ragmeter-test-state-"))
    os.environ["RAGMETER_STATE_DIR"] = _STATE[0]


# --------------------------------------------------------------------------- run history

_HISTORY: list[str] = []


def pytest_runtest_setup(item):
    """Each test records its runs in a run history of its own, never in ./.ragmeter."""
    import tempfile

    if not _HISTORY:
        _HISTORY.append(tempfile.mkdtemp(prefix="ragmeter-test-history-"))
    _HISTORY.append("")
    os.environ["RAGMETER_HISTORY"] = str(Path(_HISTORY[0]) / str(len(_HISTORY)))


def pytest_sessionfinish(session):
    import shutil

    for folder in [*_HISTORY[:1], *_STATE]:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def waits(monkeypatch) -> list[float]:
    """The test thread's ``time.sleep`` waits, recorded instead of slept (a local
    server's threads still sleep for real): what a client waits between tries."""
    caller = threading.current_thread()
    real_sleep = time.sleep
    seen: list[float] = []

    def sleep(seconds):
        if threading.current_thread() is caller:
            seen.append(seconds)
        else:
            real_sleep(seconds)

    monkeypatch.setattr(time, "sleep", sleep)
    return seen

"""Answer grading with a real model: gemma-3 270M, in process and behind a server.

The model is tiny and a poor reader and judge; these tests check the plumbing
that does not depend on its judgement: every grade parses (structured output),
a rerun costs no calls, and a run killed part-way resumes with each answer and
grade made exactly once. Skipped, with the reason, when llama-cpp-python, its
server extra or the model package is missing.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import save_example
from llm_fixtures import (
    gguf_model_path,
    llama_cpp_missing,
    llama_server_missing,
    start_llama_server,
)

from ragmeter.answers import (
    GRADES,
    answer_questions,
    answer_report,
    grade_answers,
    load_answer_set,
)
from ragmeter.answers.store import answers_dir
from ragmeter.llm import BackendUnavailable, OpenAIBackend, ReplyCache, make_backend

QUESTIONS = 4
K = 3  # short prompts keep the tiny model quick on two cores
READER_TOKENS = 24
JUDGE_TOKENS = 40
GGUF_OPTIONS = {"n_ctx": 2048, "n_threads": 2, "chat_format": "gemma"}
CALL_TIMEOUT_S = 600.0

needs_llama = pytest.mark.skipif(llama_cpp_missing() is not None, reason=str(llama_cpp_missing()))
needs_server = pytest.mark.skipif(
    llama_server_missing() is not None, reason=str(llama_server_missing())
)


def make_results(path: Path) -> Path:
    return save_example(
        path,
        QUESTIONS,
        strategies=("sentence-60",),
        custom_strategies=({"name": "sentence-60", "kind": "sentence", "size": 60},),
        ks=(1, 3, 5),
    )


@pytest.fixture(scope="module")
def clean_results(tmp_path_factory):
    return make_results(tmp_path_factory.mktemp("answers") / "results")


def fresh_copy(src: Path, dest: Path) -> Path:
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns("answers"))
    return dest


@pytest.fixture(scope="module")
def gguf_backend():
    if llama_cpp_missing():
        pytest.skip(llama_cpp_missing())
    backend = make_backend(f"gguf:{gguf_model_path()}", **GGUF_OPTIONS)
    yield backend
    backend.close()


@pytest.fixture(scope="module")
def answered_once(clean_results, gguf_backend, tmp_path_factory):
    """Results answered by gemma in process, once per module (never modified)."""
    path = fresh_copy(clean_results, tmp_path_factory.mktemp("answered") / "results")
    run = answer_questions(path, gguf_backend, k=K, max_tokens=READER_TOKENS)
    return path, run


@pytest.fixture
def answered(answered_once, tmp_path):
    """A private copy of the answered results (answers and reply cache included), so
    that what one test grades and caches never shows in another, in any order."""
    path, run = answered_once
    return shutil.copytree(path, tmp_path / "answered"), run


def cache_size(results: Path) -> int:
    with ReplyCache(answers_dir(results) / "cache.sqlite") as cache:
        return len(cache)


@needs_llama
def test_gguf_reader_and_judge_parse_and_rerun_costs_nothing(answered, gguf_backend):
    path, run = answered
    assert len(run.answers) == QUESTIONS
    assert run.stats.calls == QUESTIONS and run.stats.tokens_out > 0
    assert all(a.ok and a.tokens_in > 0 and a.latency_s > 0 for a in run.answers)

    graded = grade_answers(path, gguf_backend, max_tokens=JUDGE_TOKENS)
    [jr] = graded.judges
    assert jr.stats.calls == QUESTIONS
    # grammar-constrained decoding: every reply is a grade, none unscored
    assert [g.grade in GRADES for g in jr.grades] == [True] * QUESTIONS, jr.grades
    assert all(g.raw.lstrip().startswith("{") for g in jr.grades)
    assert cache_size(path) == 2 * QUESTIONS

    again = answer_questions(path, gguf_backend, k=K, max_tokens=READER_TOKENS)
    regraded = grade_answers(path, gguf_backend, max_tokens=JUDGE_TOKENS)
    assert again.stats.calls == 0 and again.stats.cache_hits == QUESTIONS
    assert regraded.judges[0].stats.calls == 0
    assert [a.answer for a in again.answers] == [a.answer for a in run.answers]
    assert cache_size(path) == 2 * QUESTIONS

    report = answer_report(path)
    [row] = report.systems
    assert row.n == QUESTIONS and row.accuracy.unscored == 0 and row.accuracy.scored == QUESTIONS


KILLED_SCRIPT = """
import sys
from ragmeter.answers import answer_questions
answer_questions(
    {results!r}, {spec!r}, k={k}, max_tokens={tokens}, options={options!r},
    progress=lambda label, done, total: print("done", done, flush=True),
)
print("finished", flush=True)
"""


@needs_llama
def test_gguf_reader_killed_mid_run_resumes_answering_each_once(
    clean_results, gguf_backend, tmp_path
):
    path = fresh_copy(clean_results, tmp_path / "results")
    script = KILLED_SCRIPT.format(
        results=str(path),
        spec=f"gguf:{gguf_model_path()}",
        k=K,
        tokens=READER_TOKENS,
        options=GGUF_OPTIONS,
    )
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        lines = [proc.stdout.readline().strip() for _ in range(2)]
        assert lines == ["done 1", "done 2"]
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        proc.stdout.close()
    saved = cache_size(path)
    assert 2 <= saved < QUESTIONS
    assert not (answers_dir(path) / "reader.jsonl").exists()
    resumed = answer_questions(path, gguf_backend, k=K, max_tokens=READER_TOKENS)
    assert resumed.stats.calls == QUESTIONS - saved
    assert resumed.stats.cache_hits == saved
    assert cache_size(path) == QUESTIONS  # each question answered exactly once
    assert len(load_answer_set(path).answers) == QUESTIONS


@needs_llama
def test_gguf_reruns_of_reader_and_judge_run_end_to_end_and_resume_with_no_new_call(
    clean_results, gguf_backend, tmp_path
):
    from ragmeter.answers.flips import flip_report, rerun_scores
    from ragmeter.answers.rerun_store import read_answer_reruns, read_grade_reruns
    from ragmeter.answers.reruns import Reruns, rerun_seed

    path = fresh_copy(clean_results, tmp_path / "results")
    reruns = Reruns(k=2, of="both", temperature=0.8)
    calls = 2 * QUESTIONS  # one system, two reruns of each question

    def stop_after_3(label, done, total):
        if done == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        answer_questions(
            path, gguf_backend, k=K, max_tokens=READER_TOKENS, reruns=reruns,
            concurrency=1, progress=stop_after_3,
        )  # fmt: skip
    saved = cache_size(path)
    assert 3 <= saved < calls
    run = answer_questions(path, gguf_backend, k=K, max_tokens=READER_TOKENS, reruns=reruns)
    assert (run.stats.calls, run.stats.cache_hits) == (calls - saved, saved)
    again = read_answer_reruns(answers_dir(path))
    assert sorted(again) == [("sentence-60", q, 1) for q in sorted({q for _, q, _ in again})]
    assert {a.seed for a in again.values()} == {rerun_seed(1, 1)} and len(again) == QUESTIONS

    graded = grade_answers(path, gguf_backend, max_tokens=JUDGE_TOKENS, reruns=reruns)
    [jr] = graded.judges
    assert jr.stats.calls == calls and len(jr.reruns) == QUESTIONS
    assert all(g.grade in GRADES for g in [*jr.grades, *jr.reruns]), jr.reruns
    assert len(read_grade_reruns(answers_dir(path))) == QUESTIONS
    assert cache_size(path) == 2 * calls  # each rerun asked exactly once, reader and judge

    resumed = answer_questions(path, gguf_backend, k=K, max_tokens=READER_TOKENS, reruns=reruns)
    regraded = grade_answers(path, gguf_backend, max_tokens=JUDGE_TOKENS, reruns=reruns)
    assert resumed.stats.calls == 0 and regraded.judges[0].stats.calls == 0
    assert cache_size(path) == 2 * calls
    scores = rerun_scores(path)
    assert scores.scores["sentence-60"].shape == (QUESTIONS, 2)
    assert not np.isnan(scores.scores["sentence-60"]).any()
    report = flip_report(path)
    assert all(q.rate in (0.0, 1.0) for q in report.questions)  # two reruns: agree or not


# --- the judge behind llama-cpp-python's OpenAI-compatible server ---------------------------


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory):
    if llama_server_missing():
        pytest.skip(llama_server_missing())
    server = start_llama_server(gguf_model_path(), tmp_path_factory.mktemp("llama-server"))
    yield server
    server.stop()


@needs_server
def test_server_judge_grades_parse_and_rerun_costs_nothing(answered, llama_server):
    path, _ = answered
    judge = OpenAIBackend("gemma3-270m", base_url=llama_server.base_url)
    served = llama_server.completions_served()
    # a generous timeout: on a loaded machine a call timed out and retried would
    # count twice (the call counts below are about the cache, not about speed)
    graded = grade_answers(
        path, [judge], max_tokens=JUDGE_TOKENS, concurrency=2, timeout_s=CALL_TIMEOUT_S
    )
    [jr] = graded.judges
    assert jr.judge == "openai:gemma3-270m" and jr.stats.calls == QUESTIONS
    assert jr.counts["unscored"] == 0 and all(g.grade in GRADES for g in jr.grades)
    assert llama_server.wait_served(served + QUESTIONS) == served + QUESTIONS
    again = grade_answers(path, [judge], max_tokens=JUDGE_TOKENS, timeout_s=CALL_TIMEOUT_S)
    assert again.judges[0].stats.calls == 0
    assert llama_server.wait_served(served + QUESTIONS) == served + QUESTIONS
    aset = load_answer_set(path)
    assert aset.judges[0] == "openai:gemma3-270m"
    assert len(aset.grades["openai:gemma3-270m"]) == QUESTIONS


@needs_server
def test_server_stopped_mid_grading_raises_and_the_rerun_resumes(answered, llama_server, tmp_path):
    path, _ = answered
    doomed = start_llama_server(gguf_model_path(), tmp_path)
    # another model name: requests of their own, not the cached ones of the test above
    label = "gemma3-270m-second"
    try:

        def kill_after_2(name, done, total):
            if done == 2:
                doomed.kill()  # a crash: the call in flight fails too

        with pytest.raises(BackendUnavailable) as info:
            grade_answers(
                path,
                [OpenAIBackend(label, base_url=doomed.base_url)],
                max_tokens=JUDGE_TOKENS,
                concurrency=1,
                retries=1,
                progress=kill_after_2,
            )
        assert doomed.base_url in str(info.value) and "rerun to resume" in str(info.value)
    finally:
        doomed.stop()
    saved = cache_size(path)
    # the cache key leaves out the URL: the judge on the other server resumes the run
    judge = OpenAIBackend(label, base_url=llama_server.base_url)
    served = llama_server.completions_served()
    resumed = grade_answers(path, [judge], max_tokens=JUDGE_TOKENS, timeout_s=CALL_TIMEOUT_S)
    [jr] = resumed.judges
    assert jr.stats.calls == 2 and jr.stats.cache_hits == QUESTIONS - 2
    assert llama_server.wait_served(served + 2) == served + 2
    assert cache_size(path) == saved + 2
    assert all(g.grade in GRADES for g in jr.grades)


@needs_server
def test_cli_reruns_through_the_server_resume_after_a_kill_and_flip_some_grades(
    clean_results, llama_server, tmp_path
):
    """`answer` and `grade` with reruns at temperature 1, from the command line, against
    the OpenAI-compatible server: killed mid-run, the command resumes asking only what is
    missing; the reruns sample (the reader's answers differ), and every question gets a
    flip rate. This judge grades the same at any temperature (gemma-3 270M puts nearly
    all its weight on one grade), so its flip rates are 0 here: a rerun does not
    invent disagreement a model does not have."""
    from ragmeter.answers.flips import flip_report

    path = fresh_copy(clean_results, tmp_path / "results")
    env = {**os.environ, "RAGMETER_OPENAI_BASE_URL": llama_server.base_url}
    model = ["openai:gemma3-270m-reruns", "--concurrency", "1", "--timeout", "600"]
    again = ["--reruns", "3", "--reruns-of", "both", "--temperature", "1.0"]
    answer = [sys.executable, "-m", "ragmeter.cli", "answer", str(path), "--reader", *model]
    answer += ["--k", str(K), "--max-tokens", str(READER_TOKENS), *again]
    calls = 3 * QUESTIONS  # one system, three reruns of each question
    served = llama_server.completions_served()
    proc = subprocess.Popen(answer, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert llama_server.wait_served(served + 2, timeout_s=CALL_TIMEOUT_S) >= served + 2
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    saved = cache_size(path)
    assert 2 <= saved < calls
    served = llama_server.completions_served()
    done = subprocess.run(answer, env=env, capture_output=True, text=True, timeout=CALL_TIMEOUT_S)
    assert done.returncode == 0, done.stderr
    assert llama_server.wait_served(served + calls - saved) == served + calls - saved
    assert cache_size(path) == calls  # each rerun of each question asked exactly once

    grade = [sys.executable, "-m", "ragmeter.cli", "grade", str(path), "--judge", *model]
    grade += ["--max-tokens", str(JUDGE_TOKENS), *again, "--no-history"]
    graded = subprocess.run(grade, env=env, capture_output=True, text=True, timeout=CALL_TIMEOUT_S)
    assert graded.returncode == 0, graded.stderr
    assert cache_size(path) == 2 * calls
    from ragmeter.answers.rerun_store import read_answer_reruns
    from ragmeter.answers.reruns import rerun_seed

    texts: dict[str, set[str]] = {}
    for (_, question, rerun), a in read_answer_reruns(answers_dir(path)).items():
        assert a.temperature == 1.0 and a.seed == rerun_seed(1, rerun)
        texts.setdefault(question, set()).add(a.answer)
    assert len(texts) == QUESTIONS and max(len(t) for t in texts.values()) == 2  # they sample
    rates = [q.rate for q in flip_report(path).questions]
    assert len(rates) == QUESTIONS and all(0 <= r <= 1 for r in rates), rates

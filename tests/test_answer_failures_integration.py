"""Answer failures on answers and grades made by a real model: gemma-3 270M, in process.

The model is tiny and a poor reader and judge, so nothing here depends on what it
says: the test checks that ``ragmeter failures`` runs on what it wrote, that every
count is the number of answers whose checks fired (the checks rerun by hand on the
saved answers give the same findings), that the judge's leniency is counted over the
answers the checks flag, and that the file and the report agree with the terminal.
Skipped, with the reason, when llama-cpp-python or the model package is missing.
"""

from __future__ import annotations

import json

import pytest
from llm_fixtures import gguf_model_path, llama_cpp_missing
from typer.testing import CliRunner

from ragmeter.answers import answer_questions, grade_answers, load_answer_set
from ragmeter.answers.analysis import search_hits
from ragmeter.answers.failure_counts import failure_report
from ragmeter.answers.failures import FAILURES, check_answer
from ragmeter.answers.store import answers_dir
from ragmeter.cli import app
from ragmeter.llm import make_backend
from ragmeter.runs.results import Results

pytestmark = pytest.mark.skipif(llama_cpp_missing() is not None, reason=str(llama_cpp_missing()))

K = 3
QUESTIONS = 2  # two answers and two grades: the tiny model is slow on a shared machine
GGUF_OPTIONS = {"n_ctx": 2048, "n_threads": 2, "chat_format": "gemma"}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    from test_answers_integration import make_results

    path = make_results(tmp_path_factory.mktemp("failures-gguf") / "results")
    backend = make_backend(f"gguf:{gguf_model_path()}", **GGUF_OPTIONS)
    try:
        answer_questions(path, backend, k=K, max_tokens=24, limit=QUESTIONS)
        grade_answers(path, backend, max_tokens=40)
    finally:
        backend.close()
    return path


def test_failures_of_real_answers_are_their_checks_counted(graded):
    result = CliRunner().invoke(app, ["failures", str(graded), "--show", "0"])
    assert result.exit_code == 0, result.output
    assert "Answer failures" in result.output
    data = json.loads((answers_dir(graded) / "failures.json").read_text())
    res = Results(graded)
    aset = load_answer_set(graded)
    [judge] = aset.judges
    assert data["judge"] == judge and data["k"] == K
    assert (data["seed"], data["rounds"]) == (res.summary.seed, res.summary.rounds)

    # every answer's findings, recomputed from the saved files
    questions = {q.id: q for q in res.questions}
    [system] = res.systems
    hits = search_hits(res, system, K)
    expected = {kind: 0 for kind in FAILURES}
    flagged = []
    for (s, q), a in aset.answers.items():
        check = check_answer(
            s,
            q,
            a.answer,
            [span.text for span in questions[q].answers],
            [item.text for item in res.runs[s][q][:K]],
            questions[q].text,
            hits[q],
            aset.grades[judge][(s, q)].grade,
        )
        for kind in check.failures:
            expected[kind] += 1
        if check.number_flag:
            flagged.append((s, q))
    [row] = data["systems"]
    assert row["n"] == len(aset.answers) == QUESTIONS
    assert {k: row["counts"][k] for k in FAILURES} == expected
    for kind in FAILURES:
        assert row["rates"][kind]["mean"] == pytest.approx(expected[kind] / row["n"])

    # the judge's passes are counted over the flagged answers it graded correct
    [lenient] = data["leniency"]
    passed = [f"{s}/{q}" for s, q in flagged if aset.grades[judge][(s, q)].grade == "correct"]
    assert lenient["flagged"] == len(flagged) and lenient["passed"] == passed

    # the report shows the same counts
    from ragmeter.report.sections import load_failures

    shown = load_failures(res)
    assert shown["systems"][0]["counts"] == failure_report(graded).systems[0].counts

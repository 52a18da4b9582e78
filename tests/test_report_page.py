"""The report page, pinned: ``write_report`` and ``render_report`` pass the target
half-width and the accuracy judge on to the page's data, refuse a non-positive target
and a page size below one, and never write into the run's corpus or over its test set;
``is_report_file`` looks for ragmeter's generator tag in the first 4096 characters only;
the page's JSON keeps non-ASCII text as it is and escapes what could end its script
block; inline scripts cannot close or confuse their ``<script>`` element."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from conftest import require

require("altair", "the HTML report needs the 'report' extra")
require("vl_convert", "the HTML report needs the 'report' extra")

from ragmeter.answers.store import (  # noqa: E402
    Answer,
    Grade,
    answer_sha,
    answers_dir,
    update_meta,
    write_answers,
    write_grades,
    write_merged,
)
from ragmeter.cli import example_dir  # noqa: E402
from ragmeter.errors import InputError  # noqa: E402
from ragmeter.inputs.config import Config  # noqa: E402
from ragmeter.report.page import (  # noqa: E402
    _safe_inline_js,
    is_report_file,
    json_for_script,
    render_report,
    write_report,
)
from ragmeter.runs.pipeline import run_search  # noqa: E402
from ragmeter.runs.results import Results, save_results  # noqa: E402

GRADES = {"test:a": ["correct", "wrong"], "test:b": ["wrong", "correct"]}


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    """A small run of the example (copied, so its corpus and test set are the test's)
    with answers graded by two judges who disagree on every answer."""
    base = tmp_path_factory.mktemp("page")
    ex = base / "example"
    shutil.copytree(example_dir(), ex)
    cfg = Config(
        corpus=str(ex / "posts"),
        testset=str(ex / "questions.jsonl"),
        strategies=("sentence",),
        rounds=200,
    ).validate()
    path = save_results(run_search(cfg), base / "results")
    res = Results(path)
    folder = answers_dir(path)
    folder.mkdir()
    answers, grades = [], []
    for j, q in enumerate(res.question_ids[:4]):
        text = f"answer {j}"
        answers.append(Answer("sentence", q, text, "test:reader", 3))
        for judge, pattern in GRADES.items():
            grades.append(Grade(judge, "sentence", q, pattern[j % 2], answer_sha=answer_sha(text)))
    write_answers(folder, answers)
    write_grades(folder, grades)
    update_meta(folder, reader="test:reader", judges=list(GRADES), k=3)
    write_merged(path)
    return path


@pytest.fixture
def results(run_dir, tmp_path) -> Path:
    dest = tmp_path / "results"
    shutil.copytree(run_dir, dest)
    return dest


def page_data(html: str) -> dict:
    m = re.search(r'<script type="application/json" id="ragmeter-data">(.*?)</script>', html, re.S)
    assert m is not None
    return json.loads(m.group(1))


def test_write_report_passes_the_target_and_the_judge_on(results):
    out = write_report(results, target_half_width=0.07, page_size=3, accuracy_judge="test:b")
    assert out == results / "report.html"
    data = page_data(out.read_text(encoding="utf-8"))
    assert data["sample_size"]["target"] == 0.07
    assert data["page_size"] == 3
    assert data["optional"]["answers"]["primary"] == "test:b"
    assert is_report_file(out) is True


def test_render_report_passes_the_target_on(results):
    data = page_data(render_report(Results(results), target_half_width=0.07, page_size=1))
    assert data["sample_size"]["target"] == 0.07 and data["page_size"] == 1
    assert data["optional"]["answers"]["primary"] == "test:a"  # the first judge by default


@pytest.mark.parametrize("target", [0, 0.0, -0.05])
def test_a_target_that_is_not_positive_is_refused(results, target):
    with pytest.raises(InputError, match="target half-width must be positive"):
        render_report(Results(results), target_half_width=target)


def test_a_page_size_below_one_is_refused(results):
    with pytest.raises(InputError, match="page size must be at least 1"):
        render_report(Results(results), page_size=0)


def test_the_report_is_never_written_into_the_corpus_or_over_the_test_set(results):
    meta = Results(results).meta
    corpus, testset = Path(meta["corpus"]["path"]), Path(meta["testset"]["path"])
    inside = corpus / "report.html"
    with pytest.raises(InputError, match="is inside the corpus"):
        write_report(results, inside)
    assert not inside.exists()
    before = testset.read_bytes()
    with pytest.raises(InputError, match="is the test set"):
        write_report(results, testset)
    assert testset.read_bytes() == before


TAG = '<meta name="generator" content="ragmeter">'


def test_the_generator_tag_counts_within_the_first_4096_characters(tmp_path):
    path = tmp_path / "page.html"
    path.write_text("x" * (4096 - len(TAG)) + TAG + "\n", encoding="utf-8")  # ends at 4096
    assert is_report_file(path) is True
    path.write_text("x" * (4097 - len(TAG)) + TAG + "\n", encoding="utf-8")  # ends at 4097
    assert is_report_file(path) is False
    path.write_text("<html>" + "\n", encoding="utf-8")
    assert is_report_file(path) is False
    assert is_report_file(tmp_path / "missing.html") is False
    assert is_report_file(tmp_path) is False  # a folder cannot be read


def test_json_for_script_keeps_text_and_escapes_what_ends_a_script():
    text = "é </script> <!-- a & b > c \u2028\u2029 🚀"
    out = json_for_script({"t": text})
    assert out == (
        '{"t":"é \\u003c/script\\u003e \\u003c!-- a \\u0026 b \\u003e c \\u2028\\u2029 🚀"}'
    )
    assert json.loads(out) == {"t": text}
    with pytest.raises(ValueError):
        json_for_script(float("nan"))


def test_an_inline_script_cannot_close_or_confuse_its_element():
    js = 'a("</script>"); b("<!--"); c("<script>")'
    assert _safe_inline_js(js) == 'a("<\\/script>"); b("\\x3C!--"); c("\\x3Cscript>")'
    assert _safe_inline_js("<\\/script \\x3C!-- \\x3Cscript") == "<\\/script \\x3C!-- \\x3Cscript"

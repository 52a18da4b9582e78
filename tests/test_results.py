"""``ragmeter.runs.results.Results``: a saved folder read back, edited on purpose: a file
missing, rankings cut short, settings that disagree with the summary, alternative answer
spans, empty items (as ``ragmeter evaluate`` saves them)."""

from __future__ import annotations

import json
import shutil

import pytest
from typer.testing import CliRunner

from ragmeter.cli import app
from ragmeter.errors import InputError
from ragmeter.runs.results import Results


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    out = tmp_path_factory.mktemp("saved") / "res"
    done = CliRunner().invoke(
        app,
        ["search", "--strategies", "fixed,sentence", "--rounds", "200", "-o", str(out)],
    )
    assert done.exit_code == 0, done.output
    return out


@pytest.fixture()
def copy(saved, tmp_path):
    return shutil.copytree(saved, tmp_path / "res")


def test_a_missing_questions_file_is_named(copy):
    (copy / "questions.jsonl").unlink()
    with pytest.raises(InputError, match=r"questions\.jsonl: missing"):
        _ = Results(copy).questions


def test_rankings_cut_short_name_the_first_missing_one(copy):
    res = Results(copy)
    systems, qids = res.systems, res.question_ids
    lines = (copy / "runs.jsonl").read_text().splitlines()
    rows = [json.loads(x) for x in lines]
    first = (systems[0], qids[1])
    second = (systems[1], qids[0])
    kept = [
        x
        for r, x in zip(rows, lines, strict=True)
        if (r["system"], r["question"]) not in {first, second}
    ]
    assert len(kept) == len(lines) - 2
    (copy / "runs.jsonl").write_text("\n".join(kept) + "\n")
    with pytest.raises(InputError) as err:
        _ = Results(copy).runs
    text = str(err.value)
    assert f"system {first[0]!r} and question {first[1]!r}" in text and "(2 missing;" in text


def test_the_summary_decides_the_comparison_settings(copy):
    config = (copy / "config.toml").read_text()
    assert 'adjust = "maxt"' in config and "seed = 1" in config and "rounds = 200" in config
    edited = (
        config.replace('adjust = "maxt"', 'adjust = "holm"')
        .replace("seed = 1\n", "seed = 7\n")
        .replace("rounds = 200", "rounds = 300")
        .replace("confidence = 0.95", "confidence = 0.9")
        .replace('metric = "recall@5"', 'metric = "mrr@10"')
    )
    (copy / "config.toml").write_text(edited)
    plan = Results(copy).comparison_plan
    assert (plan.adjust, plan.seed, plan.rounds, plan.confidence, plan.metric) == (
        "maxt",
        1,
        200,
        0.95,
        "recall@5",
    )


def test_alternative_answer_spans_are_read_field_by_field(copy):
    lines = (copy / "questions.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    span = dict(first["answers"][0])
    first["any_of"] = [span]
    lines[0] = json.dumps(first)
    (copy / "questions.jsonl").write_text("\n".join(lines) + "\n")
    q = Results(copy).questions[0]
    (alt,) = q.any_of
    assert (alt.doc, alt.start, alt.end, alt.text) == (
        span["doc"],
        span["start"],
        span["end"],
        span["text"],
    )


def test_an_empty_item_reads_back(copy):
    lines = (copy / "runs.jsonl").read_text().splitlines()
    row = json.loads(lines[0])
    item = row["items"][0]
    item["end"] = item["start"]
    lines[0] = json.dumps(row)
    (copy / "runs.jsonl").write_text("\n".join(lines) + "\n")
    got = Results(copy).runs[row["system"]][row["question"]][0]
    assert (got.start, got.end, got.text) == (item["start"], item["start"], "")

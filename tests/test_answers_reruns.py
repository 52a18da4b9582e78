"""Reruns without a model: the reader, the judge or both asked K times per question.

A scripted backend that answers by the request's seed stands in for a sampling model.
Pinned here: K = 1 writes what a run without reruns writes, byte for byte, and sends
the requests it always sent; each rerun is its own seeded, cached request, saved
beside rerun 0 with its index; a stopped run resumes with no call repeated; flip
rates and the [questions, reruns] scores; every bad setting refused before any call.
"""

from __future__ import annotations

import hashlib
import io
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console
from test_answers import (  # noqa: F401  (results: a fixture)
    Scripted,
    judge_by_question,
    question_of,
    reader,
    results,
)
from typer.testing import CliRunner

from ragmeter.answers import answer_questions, grade_answers
from ragmeter.answers.analysis import accuracy, answer_report
from ragmeter.answers.flips import flip_rate, flip_report, rerun_scores
from ragmeter.answers.prompts import judge_request, reader_request
from ragmeter.answers.rerun_store import read_answer_reruns, read_grade_reruns
from ragmeter.answers.reruns import Reruns, rerun_seed, rerun_settings
from ragmeter.answers.store import (
    GRADES,
    answers_dir,
    load_answer_set,
    read_answers,
    read_grades,
)
from ragmeter.cli.answer_views import grade_command
from ragmeter.cli.app import app
from ragmeter.errors import InputError
from ragmeter.inputs.config import Config, load_config
from ragmeter.llm import Completion, ReplyCache
from ragmeter.llm.cache import request_key
from ragmeter.report.sections import load_answers
from ragmeter.runs.results import Results
from ragmeter.stats.rerun_variance import variance_shares
from ragmeter.stats.reruns import rerun_accuracy

QUESTIONS = 8  # the small example: 8 questions, 2 systems
SYSTEMS = ("sentence", "fixed-40")


class Sampling(Scripted):
    """A scripted backend that sees the whole request, as a sampling model would."""

    def complete(self, request, timeout_s):
        with self._lock:
            self.calls += 1
        prompt = request.messages[-1].content
        text = self.respond(prompt, request)
        return Completion(text, tokens_in=len(prompt.split()), tokens_out=3)


def seeded_reader(prompt: str, request) -> str:
    """Rerun 0's answer is the scripted reader's; a rerun's names its seed and sampling."""
    if request.seed == 0:
        return reader(prompt)
    return f"{reader(prompt)} (seed {request.seed} t {request.temperature} p {request.top_p})"


def judge_grade(question: str, seed: int) -> str:
    """Correct at seed 0; at another seed a grade drawn from the question and the seed."""
    if seed == 0:
        return "correct"
    digest = hashlib.sha256(f"{question}|{seed}".encode()).digest()
    return GRADES[digest[0] % 3]


def seeded_judge(prompt: str, request) -> str:
    grade = judge_grade(question_of(prompt), request.seed)
    return json.dumps({"grade": grade, "reason": f"seed {request.seed}"})


def quiet() -> Console:
    return Console(file=io.StringIO(), width=200, force_terminal=False)


def _tree(path: Path) -> dict[str, bytes]:
    """Every file under ``answers/`` but the reply cache and the manifest, with the run's
    seconds and each call's latency blanked (all that differs between two runs of the
    same calls)."""
    out = {}
    for f in sorted(answers_dir(path).iterdir()):
        if f.name.startswith("cache.sqlite") or f.name == ".ragmeter-manifest.json":
            continue  # the manifest holds each file's size and hash: the timings again
        data = f.read_bytes()
        if f.name in ("reader.jsonl", "grades.jsonl"):  # and each call's latency
            rows = [json.loads(line) | {"latency_s": 0} for line in data.splitlines()]
            data = b"".join(json.dumps(r, sort_keys=True).encode() + b"\n" for r in rows)
        if f.name == "meta.json":
            meta = json.loads(data)
            for run in [meta.get("reader_run", {}), *meta.get("judge_runs", {}).values()]:
                run["seconds"] = 0
            data = json.dumps(meta, sort_keys=True).encode()
        out[f.name] = data
    return out


def _cache_keys(path: Path) -> set[str]:
    with ReplyCache(answers_dir(path) / "cache.sqlite") as cache:
        return set(cache.keys())


# --- K = 1 is today's run ----------------------------------------------------------------


def test_requests_without_top_p_keep_the_cache_keys_they_always_had():
    # the keys of these two requests before reruns existed: a changed key would mean
    # every cached reply of an earlier run is asked for again
    assert request_key("test", "reader", reader_request("Who?", ["a passage"], 256)) == (
        "a0f1594e3bf1787c293958189902bf00b23897e69b890b764518538262f85bf1"
    )
    assert request_key("test", "judge", judge_request("Who?", "ref", "ans", 256)) == (
        "fae2b2dab43eeda477a83951e8d1e17938d77202c4f5cb49851bc9690b9da815"
    )
    sampled = Reruns(k=2, temperature=0.8, top_p=0.9).request(
        "reader", reader_request("Who?", ["a"]), 1
    )
    assert "top_p" in sampled.key_payload() and sampled.top_p == 0.9


def test_one_rerun_writes_the_files_and_sends_the_requests_of_a_run_without_reruns(
    results,  # noqa: F811
    tmp_path,
):
    twin = shutil.copytree(results, tmp_path / "twin")
    for path, reruns in ((results, None), (twin, Reruns(k=1, of="reader", seed=7))):
        answer_questions(path, Sampling("reader", seeded_reader), reruns=reruns)
        grade_command(path, [Sampling("j", seeded_judge)], console=quiet(), reruns=reruns)
    assert _tree(twin) == _tree(results)
    assert sorted(_tree(results)) == [
        "accuracy.json", "answers.jsonl", "failures.json", "grades.jsonl", "meta.json",
        "reader.jsonl", "verdicts.json",
    ]  # fmt: skip
    assert _cache_keys(twin) == _cache_keys(results)
    assert len(_cache_keys(results)) == 2 * 2 * QUESTIONS  # one reader and one judge call each


# What the code before reruns wrote for the scripted run below: each file's SHA-256 (first
# 16 hex digits), latencies and seconds blanked as _tree blanks them.
BEFORE_RERUNS = {
    "reader.jsonl": "66bfab311b9c7662",
    "grades.jsonl": "ed06cdafab1389fa",
    "answers.jsonl": "14c10fead24be1e6",
    "meta.json": "f2b853cf27cfa53d",
}


def test_one_rerun_writes_byte_for_byte_what_the_code_before_reruns_wrote(results):  # noqa: F811
    reruns = Reruns(k=1, of="reader", seed=7)
    answer_questions(results, Scripted("reader", reader), reruns=reruns)
    judge = Scripted("j", judge_by_question({"what year": "partial"}))
    grade_command(results, [judge], console=quiet(), reruns=reruns)
    tree = _tree(results)
    got = {name: hashlib.sha256(tree[name]).hexdigest()[:16] for name in BEFORE_RERUNS}
    assert got == BEFORE_RERUNS


def test_a_run_answered_without_reruns_costs_no_call_with_one_rerun(results):  # noqa: F811
    answer_questions(results, Sampling("reader", seeded_reader))
    again = Sampling("reader", seeded_reader)
    run = answer_questions(results, again, reruns=Reruns(k=1))
    assert again.calls == 0 and run.stats.cache_hits == 2 * QUESTIONS and run.reruns == []


# --- reruns ------------------------------------------------------------------------------


def test_rerun_seeds_come_from_the_runs_seed_and_the_rerun_index():
    assert rerun_seed(1, 0) == rerun_seed(99, 0) == 0  # rerun 0: the seed of a single call
    seeds = [rerun_seed(1, r) for r in range(1, 50)]
    assert len(set(seeds)) == 49 and all(0 < s < 2**31 for s in seeds)
    assert [rerun_seed(1, r) for r in range(1, 50)] == seeds  # the same every time
    assert rerun_seed(2, 1) != rerun_seed(1, 1)
    assert Reruns(k=3, seed=5).seeds() == [0, rerun_seed(5, 1), rerun_seed(5, 2)]


def test_reader_reruns_are_saved_beside_rerun_0_with_their_index_seed_and_sampling(
    results,  # noqa: F811
):
    reruns = Reruns(k=3, of="reader", temperature=0.7, top_p=0.9, seed=1)
    run = answer_questions(results, Sampling("reader", seeded_reader), reruns=reruns)
    assert run.stats.calls == 3 * 2 * QUESTIONS and len(run.reruns) == 2 * 2 * QUESTIONS
    folder = answers_dir(results)
    zero = read_answers(folder)
    assert len(zero) == 2 * QUESTIONS
    assert all("seed" not in a.answer for a in zero.values())  # rerun 0: seed 0
    saved = read_answer_reruns(folder)
    assert sorted({r for _, _, r in saved}) == [1, 2]
    a = saved[("sentence", "q001", 2)]
    assert (a.seed, a.temperature, a.top_p) == (rerun_seed(1, 2), 0.7, 0.9)
    assert a.answer.endswith(f"(seed {rerun_seed(1, 2)} t 0.7 p 0.9)")
    rows = [json.loads(x) for x in (folder / "answers.jsonl").read_text().splitlines()]
    assert [r["answer"] for r in rows] == [zero[(r["system"], r["question"])].answer for r in rows]
    meta = json.loads((folder / "meta.json").read_text())
    assert meta["answer_reruns"] == {
        "k": 3, "of": "reader", "temperature": 0.7, "top_p": 0.9, "seed": 1,
        "seeds": [0, rerun_seed(1, 1), rerun_seed(1, 2)],
    }  # fmt: skip


def test_a_stopped_rerun_run_resumes_with_no_call_lost_or_repeated(results):  # noqa: F811
    reruns = Reruns(k=3, of="reader", temperature=0.8)
    rd = Sampling("reader", seeded_reader)

    def stop_after_20(label, done, total):
        if done == 20:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        answer_questions(results, rd, concurrency=1, progress=stop_after_20, reruns=reruns)
    assert not (answers_dir(results) / "reader_reruns.jsonl").exists()  # nothing half-written
    first = rd.calls
    assert 20 <= first < 48
    resumed = answer_questions(results, rd, concurrency=1, reruns=reruns)
    assert resumed.stats.calls == 48 - first and resumed.stats.cache_hits == first
    assert rd.calls == 48  # each question x system x rerun asked exactly once
    again = answer_questions(results, rd, reruns=reruns)
    assert again.stats.calls == 0 and len(read_answer_reruns(answers_dir(results))) == 32


def test_judge_reruns_grade_rerun_0s_answer_k_times_and_flip_rates_count_differing_pairs(
    results,  # noqa: F811
):
    answer_questions(results, Sampling("reader", seeded_reader))
    reruns = Reruns(k=3, of="judge", temperature=0.8, seed=1)
    judge = Sampling("j", seeded_judge)
    [jr] = grade_answers(results, [judge], reruns=reruns).judges
    assert judge.calls == 3 * 2 * QUESTIONS and len(jr.reruns) == 2 * 2 * QUESTIONS
    folder = answers_dir(results)
    zero = read_answers(folder)
    graded = read_grade_reruns(folder)
    g = graded[("test:j", "sentence", "q001", 2)]
    assert g.seed == rerun_seed(1, 2) and g.answer_sha == zero[("sentence", "q001")].sha
    assert all(x.grade == "correct" for x in read_grades(folder).values())  # rerun 0: seed 0

    report = flip_report(results)
    texts = {q.id: q.text for q in __import__("ragmeter").runs.results.Results(results).questions}
    for q in report.questions:
        expected = [judge_grade(texts[q.question], s) for s in reruns.seeds()]
        assert q.grades["sentence"] == expected
        assert q.rates["sentence"] == flip_rate(expected)
    scores = rerun_scores(results)
    assert scores.scores["sentence"].shape == (QUESTIONS, 3) and scores.reruns == 3
    assert scores.scores["sentence"][:, 0].tolist() == [1.0] * QUESTIONS
    first = report.questions[0]
    assert scores.scores["sentence"][0].tolist() == [
        1.0 if g == "correct" else 0.0 for g in first.grades["sentence"]
    ]
    again = Sampling("j", seeded_judge)
    assert grade_answers(results, [again], reruns=reruns).judges[0].stats.calls == 0


def test_flip_rate_is_the_share_of_pairs_graded_differently():
    assert flip_rate(["correct", "correct", "correct"]) == 0.0
    assert flip_rate(["correct", "wrong", "correct"]) == pytest.approx(2 / 3)
    assert flip_rate(["correct", "partial", "wrong"]) == 1.0
    assert flip_rate(["correct", "unscored", "wrong", None]) == 1.0  # unscored left out
    assert flip_rate(["correct", None]) is None


def test_flip_rate_is_the_stats_one_formula_on_coded_grades_with_todays_numbers():
    from collections import Counter
    from itertools import product

    from ragmeter.answers.flips import grade_scores
    from ragmeter.stats.rerun_variance import flip_rates

    def before(grades):  # flip_rate as it was written on labels, before it had one home
        seen = [g for g in grades if g is not None and g != "unscored"]
        if len(seen) < 2:
            return None
        pairs = len(seen) * (len(seen) - 1) // 2
        return (pairs - sum(c * (c - 1) // 2 for c in Counter(seen).values())) / pairs

    labels = ("correct", "partial", "wrong", "unscored", None)
    for k in (2, 3, 4):
        rows = [list(g) for g in product(labels, repeat=k)]
        assert [flip_rate(g) for g in rows] == [before(g) for g in rows]
        coded = grade_scores(rows)
        kept = [g for g, row in zip(rows, coded, strict=True) if not np.isnan(row).all()]
        rates = flip_rates(coded[~np.isnan(coded).all(axis=1)], rounds=10).rates
        assert [None if np.isnan(r) else r for r in rates] == [before(g) for g in kept]


def test_both_reruns_grade_rerun_r_of_the_reader_with_rerun_r_of_the_judge(
    results,  # noqa: F811
):
    reruns = Reruns(k=2, of="both", temperature=0.5)
    answer_questions(results, Sampling("reader", seeded_reader), limit=2, reruns=reruns)
    grade_answers(results, [Sampling("j", seeded_judge)], reruns=reruns)
    folder = answers_dir(results)
    answers = read_answer_reruns(folder)
    for (judge, s, q, r), g in read_grade_reruns(folder).items():
        assert (judge, r) == ("test:j", 1) and g.seed == rerun_seed(1, 1)
        assert g.answer_sha == answers[(s, q, r)].sha
    scores = rerun_scores(results, measure="correct_or_partial")
    assert scores.questions == ["q001", "q002"]
    assert not np.isnan(scores.scores["fixed-40"]).any()


def test_grading_reader_reruns_not_made_yet_is_refused_before_any_call(results):  # noqa: F811
    answer_questions(results, Sampling("reader", seeded_reader), limit=2)
    judge = Sampling("j", seeded_judge)
    with pytest.raises(InputError, match="no rerun 1 of sentence/q001.*--reruns 3"):
        grade_answers(results, [judge], reruns=Reruns(k=3, of="reader"))
    assert judge.calls == 0


def test_grade_takes_the_reruns_the_answers_were_made_with(results):  # noqa: F811
    made = Reruns(k=2, of="reader", temperature=0.9)
    answer_questions(results, Sampling("reader", seeded_reader), limit=2, reruns=made)
    run = grade_answers(results, [Sampling("j", seeded_judge)])
    assert run.settings == made and len(run.judges[0].reruns) == 4


def test_grade_prints_and_keeps_the_flip_rates_and_drops_them_without_reruns(
    results,  # noqa: F811
):
    answer_questions(results, Sampling("reader", seeded_reader))
    console = quiet()
    reruns = Reruns(k=3, of="judge", temperature=0.8)
    grade_command(results, [Sampling("j", seeded_judge)], console=console, reruns=reruns)
    text = " ".join(console.file.getvalue().split())
    assert "Flip rate of 3 reruns (%), judged by test:j" in text
    assert "flip most" in text and "mean flip rate" in text
    report = flip_report(results)
    folder = answers_dir(results)
    saved = json.loads((folder / "reruns.json").read_text())
    assert saved["mean_flip_rate"] == report.systems
    assert saved["most_flipped"] == [q.question for q in report.most()]
    assert len(saved["most_flipped"]) <= 5
    meta = json.loads((folder / "meta.json").read_text())
    assert meta["flip_rates"]["mean_flip_rate"] == report.systems
    assert meta["grade_reruns"]["k"] == 3

    grade_command(results, [Sampling("j", seeded_judge)], console=quiet(), reruns=Reruns())
    assert not (folder / "reruns.json").exists() and not (folder / "grade_reruns.jsonl").exists()
    meta = json.loads((folder / "meta.json").read_text())
    assert "flip_rates" not in meta and "grade_reruns" not in meta


# --- reruns in the accuracy ----------------------------------------------------------------


def test_with_reruns_the_accuracy_is_the_mean_of_question_means_resampling_whole_questions(
    results,  # noqa: F811
):
    answer_questions(results, Sampling("reader", seeded_reader))
    console = quiet()
    reruns = Reruns(k=3, of="judge", temperature=0.8)
    report = grade_command(results, [Sampling("j", seeded_judge)], console=console, reruns=reruns)
    assert report.reruns == 3
    for measure in ("correct", "correct_or_partial"):
        scores = rerun_scores(results, measure=measure)
        for row in report.systems:
            y = scores.scores[row.system]
            want = rerun_accuracy(y, report.rounds, report.seed)
            assert getattr(row.accuracy, measure) == want
            assert want.mean == pytest.approx(np.mean(np.mean(y, axis=1)))
    # rerun 0 grades every answer correct; the reruns do not, and the share says so
    assert all(r.accuracy.correct.mean < 1.0 for r in report.systems)
    assert all(r.accuracy.counts["correct"] == QUESTIONS for r in report.systems)
    text = " ".join(console.file.getvalue().split())
    assert "its interval resamples whole questions with their 3 reruns" in text
    assert answer_report(results).systems == report.systems  # the report reads the same
    page = load_answers(Results(results))
    assert page["reruns"] == 3
    assert [r["correct"]["mean"] for r in page["accuracy"]] == pytest.approx([
        r.accuracy.correct.mean for r in report.systems
    ], abs=1e-6)  # fmt: skip


def test_one_rerun_gives_the_accuracy_of_a_run_without_reruns_bit_for_bit(
    results,  # noqa: F811
):
    answer_questions(results, Sampling("reader", seeded_reader))
    judge = Scripted("j", judge_by_question({"what year": "partial", "who": "garbage"}))
    report = grade_command(results, [judge], console=quiet(), reruns=Reruns(k=1, seed=7))
    assert report.reruns == 1
    scores = rerun_scores(results)
    for row in report.systems:
        y = scores.scores[row.system]
        assert y.shape == (QUESTIONS, 1)
        assert row.accuracy.correct == rerun_accuracy(y, report.rounds, report.seed)
        aset = load_answer_set(results)
        labels = aset.labels("test:j", aset.ordered_keys([row.system])).values()
        assert row.accuracy == accuracy(labels, report.rounds, report.seed)
    assert "reruns" not in load_answers(Results(results))  # the report's data as it was


def test_grade_prints_and_keeps_the_reruns_share_of_each_accuracys_variance(
    results,  # noqa: F811
):
    answer_questions(results, Sampling("reader", seeded_reader))
    console = quiet()
    reruns = Reruns(k=3, of="judge", temperature=0.8)
    report = grade_command(results, [Sampling("j", seeded_judge)], console=console, reruns=reruns)
    text = " ".join(console.file.getvalue().split())
    assert "reruns' share of variance" in text
    saved = json.loads((answers_dir(results) / "reruns.json").read_text())
    scores = rerun_scores(results)
    for system in SYSTEMS:
        want = variance_shares(scores.scores[system], report.rounds, report.seed).rerun_share
        got = saved["variance_shares"][system]["rerun_share"]
        assert (got["mean"], got["low"], got["high"]) == (want.mean, want.low, want.high)
        assert 0.0 <= want.low <= want.mean <= want.high <= 1.0
        assert f"{want.mean * 100:.1f} [{want.low * 100:.1f}, {want.high * 100:.1f}]" in text


def test_the_variance_share_is_left_out_where_reruns_cannot_be_told_from_questions(
    results,  # noqa: F811
):
    answer_questions(results, Sampling("reader", seeded_reader))
    grade_answers(results, [Sampling("j", seeded_judge)], reruns=Reruns(k=2, of="judge"), limit=1)
    report = flip_report(results)
    assert report.shares == {"sentence": None, "fixed-40": None}  # one question each
    assert report.to_dict()["variance_shares"] == {"sentence": None, "fixed-40": None}


# --- settings and their checks -----------------------------------------------------------


def test_settings_come_from_flags_then_the_runs_config_then_what_was_recorded(
    results,  # noqa: F811
):
    recorded = Reruns(k=4, of="reader", temperature=0.3).to_meta()
    assert rerun_settings(results) == Reruns(seed=1)
    assert rerun_settings(results, recorded=recorded) == Reruns(4, "reader", 0.3, seed=1)
    (results / "config.toml").write_text(
        (results / "config.toml").read_text() + '\n[answers]\nreruns = 2\nreruns_of = "judge"\n'
    )
    assert rerun_settings(results, recorded=recorded) == Reruns(2, "judge", seed=1)
    assert rerun_settings(results, reruns=3, top_p=0.5) == Reruns(3, "judge", None, 0.5, 1)


BAD = [
    ("reruns", 0, "reruns must be a whole number from 1"),
    ("reruns", -2, "reruns must be a whole number from 1"),
    ("reruns_of", "judges", "reruns_of must be one of reader, judge, both.*did you mean 'judge'"),
    ("temperature", -0.5, "temperature must be a number, 0 .* or more"),
    ("top_p", 0, "top_p must be a number above 0 and at most 1"),
    ("top_p", 1.5, "top_p must be a number above 0 and at most 1"),
]


@pytest.mark.parametrize(("key", "value", "message"), BAD)
@pytest.mark.parametrize("command", ["answer", "grade"])
def test_a_bad_flag_is_one_line_and_exit_2_before_any_call(
    results,  # noqa: F811
    key,
    value,
    message,
    command,
):
    model = ["--reader", "ollama:reader"] if command == "answer" else ["--judge", "ollama:j"]
    flag = "--" + key.replace("_", "-")
    done = CliRunner().invoke(app, [command, str(results), *model, flag, str(value)])
    assert done.exit_code == 2, done.output
    lines = done.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error")
    import re

    assert re.search(message.replace("reruns_of", "reruns-of").replace("top_p", "top-p"), lines[0])
    assert not answers_dir(results).exists()  # no model was asked, nothing was written


@pytest.mark.parametrize(("key", "value", "message"), BAD)
def test_a_bad_config_value_is_one_line_and_exit_2_before_any_call(
    results,  # noqa: F811
    key,
    value,
    message,
    tmp_path,
):
    config = results / "config.toml"
    config.write_text(config.read_text() + f"\n[answers]\n{key} = {json.dumps(value)}\n")
    done = CliRunner().invoke(app, ["answer", str(results), "--reader", "ollama:reader"])
    assert done.exit_code == 2, done.output
    lines = done.output.strip().splitlines()
    assert len(lines) == 1 and "config.toml" in lines[0] and f"[answers] {key}" in lines[0]
    assert not answers_dir(results).exists()
    # the same value in ragmeter.toml is refused when the config is read
    toml = tmp_path / "ragmeter.toml"
    toml.write_text(
        f'[corpus]\npath = "c"\n[testset]\npath = "t"\n[answers]\n{key} = {json.dumps(value)}\n'
    )
    with pytest.raises(InputError, match=f"ragmeter.toml: .*{message}"):
        load_config(toml)


def test_the_saved_config_names_reruns_only_when_set():
    assert "answers" not in Config(corpus="c", testset="t").validate().to_dict()
    cfg = Config(corpus="c", testset="t", reruns=3, reruns_of="judge", temperature=0.8)
    assert cfg.validate().to_dict()["answers"] == {
        "reruns": 3, "reruns_of": "judge", "temperature": 0.8,
    }  # fmt: skip


def test_the_flags_reach_the_command_checked_and_completed_from_the_config(
    results,  # noqa: F811
    monkeypatch,
):
    from ragmeter.cli import answer_views

    class Asked(Exception):
        pass

    def answer_questions(*args, **kw):
        raise Asked(kw["reruns"])  # what the reader would be run with; nothing is called

    monkeypatch.setattr(answer_views, "answer_questions", answer_questions)
    config = results / "config.toml"
    config.write_text(config.read_text() + "\n[answers]\ntemperature = 0.5\n")
    argv = ["answer", str(results), "--reader", "ollama:r", "--reruns", "3", "--reruns-of"]
    done = CliRunner().invoke(app, [*argv, "reader", "--top-p", "0.9"])
    assert isinstance(done.exception, Asked)
    assert done.exception.args[0] == Reruns(k=3, of="reader", temperature=0.5, top_p=0.9, seed=1)

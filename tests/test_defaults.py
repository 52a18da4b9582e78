"""One defaults record (ragmeter.defaults): every signature, the configuration and the
command line read it, so changing a default is one line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from ragmeter.chunking import segment
from ragmeter.chunking.strategies import DEFAULT_SEGMENTER, UNNAMED_SEGMENTER, make_strategy
from ragmeter.comparison import summary
from ragmeter.comparison.summary import Summary
from ragmeter.defaults import DEFAULTS, EARLIER
from ragmeter.inputs.config import Config

SRC = Path(__file__).resolve().parents[1] / "src"

# Every module's signatures read with the record changed before anything else imports it.
_CHANGED = textwrap.dedent(
    """
    import dataclasses, importlib, inspect, json, pkgutil, sys
    import ragmeter, ragmeter.defaults as d
    d.DEFAULTS = dataclasses.replace(
        d.DEFAULTS, rounds=2_000, confidence=0.9, seed=7, half_width=0.03, difference=0.06,
        power=0.9,
    )
    CHANGED = {"rounds": 2_000, "confidence": 0.9, "seed": 7, "half_width": 0.03,
               "difference": 0.06, "power": 0.9}
    checked, wrong = 0, []
    for info in pkgutil.walk_packages(ragmeter.__path__, "ragmeter."):
        if info.name.startswith("ragmeter.examples") or info.name.endswith("__main__"):
            continue
        try:
            module = importlib.import_module(info.name)
        except ImportError:
            continue  # an optional extra
        for name, obj in vars(module).items():
            if getattr(obj, "__module__", None) != info.name or not callable(obj):
                continue
            try:
                params = inspect.signature(obj).parameters
            except (TypeError, ValueError):
                continue
            for p in params.values():
                want = CHANGED.get(p.name)
                if want is None or p.default in (inspect.Parameter.empty, None):
                    continue
                if info.name.startswith("ragmeter.cli") and p.name in ("half_width", "difference"):
                    want = round(want * 100, 9)  # a flag in points, as a person types it
                if p.name == "seed" and info.name.startswith("ragmeter.llm"):
                    continue  # a model's sampling seed (0), not a draw's
                checked += 1
                default = getattr(p.default, "default", p.default)  # typer's OptionInfo
                if default != want:
                    wrong.append(f"{info.name}.{name}({p.name}={default!r})")
    from ragmeter.inputs.config import Config
    from ragmeter.comparison.summary import DEFAULT_ROUNDS, Summary
    from ragmeter.report.common import TARGET_HALF_WIDTH
    c = Config()
    print(json.dumps({"checked": checked, "wrong": wrong, "target": TARGET_HALF_WIDTH,
                      "config": [c.rounds, c.confidence, c.seed],
                      "summary": [Summary().rounds, Summary().confidence, DEFAULT_ROUNDS]}))
    """
)


def test_changing_the_record_changes_every_signature_the_config_and_the_summary():
    out = subprocess.run(
        [sys.executable, "-c", _CHANGED],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(SRC)},
    )
    found = json.loads(out.stdout.strip().splitlines()[-1])
    assert found["wrong"] == []
    assert found["checked"] > 80  # the stats, the comparison, answers, audits, the CLI
    assert found["config"] == [2_000, 0.9, 7]
    assert found["summary"] == [2_000, 0.9, 2_000]
    assert found["target"] == 0.03  # the report's sample-size target is planning's


def test_the_record_holds_today_s_defaults():
    assert (DEFAULTS.rounds, DEFAULTS.confidence, DEFAULTS.seed) == (10_000, 0.95, 1)
    c = Config()
    assert (c.rounds, c.confidence, c.seed, c.clusters, c.family) == (
        DEFAULTS.rounds,
        DEFAULTS.confidence,
        DEFAULTS.seed,
        DEFAULTS.clusters,
        DEFAULTS.family,
    )
    assert summary.DEFAULT_ROUNDS == DEFAULTS.rounds  # still importable where it was


def test_one_default_segmenter_and_the_workers_run_syntok_as_before():
    # ICU is the default (docs/scale.md, chunking.strategies); segment.py said syntok
    assert DEFAULT_SEGMENTER == DEFAULTS.segmenter == "icu"
    assert make_strategy("sentence").segmenter == DEFAULTS.segmenter
    assert segment.PARALLEL_SEGMENTER == "syntok"  # only syntok is worth worker processes
    text = "Mr. Smith went. He came back.\n\nAlpha beta. Gamma."
    paragraphs = [p for _, p in segment.paragraphs(text)]
    by_syntok = segment.segment_batch(paragraphs, "syntok")
    assert segment.segment_sent(paragraphs) == by_syntok
    key = segment.share([text], [0] * len(paragraphs), *_starts_and_lengths(text))
    try:
        assert segment.segment_shared((key, 0, len(paragraphs))) == by_syntok
    finally:
        del segment.SHARED[key]


def _starts_and_lengths(text: str) -> tuple[list[int], list[int]]:
    pairs = segment.paragraphs(text)
    return [o for o, _ in pairs], [len(p) for _, p in pairs]


def test_older_files_read_with_what_they_were_made_with_not_today_s_defaults():
    assert UNNAMED_SEGMENTER == EARLIER.segmenter == "syntok"
    old = Summary.from_json({"metric": "recall@5"})
    assert (old.seed, old.rounds, old.confidence) == (
        EARLIER.seed,
        EARLIER.rounds,
        EARLIER.confidence,
    )


_READER_K = textwrap.dedent(
    """
    import dataclasses, inspect, json
    import ragmeter.defaults as d
    d.DEFAULTS = dataclasses.replace(d.DEFAULTS, reader_k=3)
    d.EARLIER = dataclasses.replace(d.EARLIER, reader_k=4)
    from ragmeter.answers import run, store
    from ragmeter.cli import answers, answer_views
    def default(fn):
        p = inspect.signature(fn).parameters["k"].default
        return getattr(p, "default", p)  # typer's OptionInfo
    print(json.dumps({
        "signatures": [default(run.answer_questions), default(answer_views.answer_command),
                       default(answers.answer)],
        "recorded": store.reader_k_of({"k": 2}),
        "unrecorded": [store.reader_k_of({}), store.reader_k_of({"k": None})],
    }))
    """
)


def test_the_readers_k_comes_from_the_record_and_older_answers_from_earlier():
    # answer's k was a literal 5 in the library and on the command line, and an answer
    # record without a k read as a literal 5 in three places (answers.store twice,
    # answers.cost): now DEFAULTS gives new answers theirs, EARLIER the older records'
    out = subprocess.run(
        [sys.executable, "-c", _READER_K],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(SRC)},
    )
    found = json.loads(out.stdout.strip().splitlines()[-1])
    assert found == {"signatures": [3, 3, 3], "recorded": 2, "unrecorded": [4, 4]}
    assert DEFAULTS.reader_k == EARLIER.reader_k == 5  # today's, and what older files used


_LEVELS = textwrap.dedent(
    """
    import dataclasses, inspect, json
    import ragmeter.defaults as d
    d.DEFAULTS = dataclasses.replace(d.DEFAULTS, confidence=0.9)
    from ragmeter.comparison import formatting, verdicts
    from ragmeter.stats import answer_plan, planning, ppi
    fns = [formatting.fmt_p, verdicts.compare_family, planning.family_level,
           planning.plan_questions, planning.pair_needs, planning.family_sentence,
           answer_plan.questions_to_separate, ppi.pair_tests, planning.Plan]
    print(json.dumps({f.__qualname__: inspect.signature(f).parameters["alpha"].default
                      for f in fns}))
    """
)


def test_a_level_taken_by_default_is_the_records_confidence_not_a_literal():
    # the statistics and planning took alpha = 0.05 as a literal of their own: a run at 90%
    # planned, formatted and decided its defaults at 5%
    out = subprocess.run(
        [sys.executable, "-c", _LEVELS],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(SRC)},
    )
    found = json.loads(out.stdout.strip().splitlines()[-1])
    assert len(found) == 9 and set(found.values()) == {0.1}, found

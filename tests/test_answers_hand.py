"""``ragmeter.answers.hand``: the typed keys it reads, how many answers are left, the
seeded order (flagged answers first, each part in its own order), which answers are
shown (never one the reader failed on, never one graded or skipped before), what each
shown item says, what each key saves and counts, and what ``meta.json`` records."""

from __future__ import annotations

import json

import pytest
from test_answers import results  # noqa: F401  (a fixture)

from ragmeter.answers.hand import (
    CHOICES,
    HandItem,
    HandRun,
    flagged_first_order,
    hand_grade,
    parse_key,
    sample_order,
)
from ragmeter.answers.store import (
    Answer,
    answers_dir,
    load_answer_set,
    read_hand,
    reference_text,
    write_answers,
)
from ragmeter.errors import InputError
from ragmeter.runs.results import Results

KEYS = [("sentence", "q001"), ("sentence", "q002"), ("fixed-40", "q001"), ("fixed-40", "q002")]


def _answered(results, failed=()):  # noqa: F811
    """Answers for the four keys (``failed`` ones with a reader error), in results order."""
    folder = answers_dir(results)
    folder.mkdir(exist_ok=True)
    write_answers(
        folder,
        [
            Answer(s, q, "", "test:r", 5, error="timeout")
            if (s, q) in failed
            else Answer(s, q, f"answer of {s} {q}", "test:r", 5)
            for s, q in KEYS
        ],
    )
    return folder


def _ordered(results):  # noqa: F811
    return load_answer_set(results).ordered_keys()


def _asker(*choices):
    """An ``ask`` that returns ``choices`` in turn and keeps every item it was shown."""
    seen: list[HandItem] = []

    def ask(item: HandItem) -> str:
        seen.append(item)
        return choices[len(seen) - 1]

    return ask, seen


@pytest.mark.parametrize(
    ("line", "choice"),
    [
        ("c", "correct"),
        (" Correct \n", "correct"),
        ("P", "partial"),
        ("wrong", "wrong"),
        ("s", "skip"),
        ("QUIT", "quit"),
        ("", None),
        ("x", None),
        ("cw", None),
    ],
)
def test_a_typed_line_is_read_as_one_of_the_choices_or_none(line, choice):
    assert parse_key(line) == choice
    assert choice is None or choice in CHOICES


@pytest.mark.parametrize(
    ("target", "available", "total", "remaining"),
    [(5, 3, 1, 2), (2, 9, 1, 1), (4, 9, 4, 0), (3, 9, 5, 0), (3, 2, 2, 0)],
)
def test_remaining_counts_up_to_the_smaller_of_target_and_available(
    target, available, total, remaining
):
    run = HandRun(
        seed=1, target=target, graded=0, skipped=0, total=total, stopped=False, available=available
    )
    assert run.remaining == remaining


def test_the_order_is_seeded_and_flagged_answers_come_first_each_part_in_order():
    keys = [(s, f"q{i:03d}") for s in ("a", "b") for i in range(1, 8)]
    kept = list(keys)
    order = sample_order(keys, seed=4)
    assert keys == kept  # the caller's list is left as it was
    assert sorted(order) == sorted(keys) and order != keys
    assert sample_order(keys, seed=4) == order and sample_order(keys, seed=5) != order
    flagged = {order[5], order[2], order[9]}
    assert flagged_first_order(order, flagged) == [order[2], order[5], order[9]] + [
        k for i, k in enumerate(order) if i not in (2, 5, 9)
    ]
    assert flagged_first_order(order, set()) == order


def test_no_hand_grades_asked_for_is_an_error(results):  # noqa: F811
    _answered(results)
    with pytest.raises(InputError, match="at least 1"):
        hand_grade(results, n=0, ask=lambda item: "correct")
    assert read_hand(answers_dir(results)) == []


def test_answers_the_reader_failed_on_are_never_shown(results):  # noqa: F811
    failed = {KEYS[1], KEYS[2]}
    _answered(results, failed=failed)
    ask, seen = _asker("wrong", "correct", "partial")
    run = hand_grade(results, n=5, seed=2, ask=ask, flagged_first=False)
    ok = [k for k in KEYS if k not in failed]
    assert [(i.system, i.question) for i in seen] == sample_order(ok, 2)
    assert (run.available, run.graded, run.total, run.stopped, run.remaining) == (
        2,
        2,
        2,
        False,
        0,
    )
    assert [i.target for i in seen] == [2, 2]  # at most the answers there are


def test_each_item_shows_its_answer_question_and_reference(results):  # noqa: F811
    _answered(results)
    ask, seen = _asker("skip", "partial", "quit")
    run = hand_grade(results, n=3, seed=6, ask=ask, flagged_first=False)
    order = sample_order(_ordered(results), 6)
    res = Results(results)
    texts = {q.id: q.text for q in res.questions}
    assert [(i.system, i.question) for i in seen] == order[:3]
    for item in seen:
        assert item.answer == f"answer of {item.system} {item.question}"
        assert item.question_text == texts[item.question]
        assert item.reference == reference_text(res, item.question)
    assert [(i.position, i.target) for i in seen] == [(1, 3), (1, 3), (2, 3)]
    assert (run.graded, run.skipped, run.total, run.stopped, run.seed) == (1, 1, 1, True, 6)
    assert run.target == 3 and run.remaining == 2


def test_each_key_is_saved_with_the_answer_it_graded_and_counted(results):  # noqa: F811
    folder = _answered(results)
    ask, seen = _asker("skip", "wrong", "skip", "correct")
    run = hand_grade(results, n=2, seed=3, ask=ask, flagged_first=False)
    aset = load_answer_set(results)
    order = sample_order(aset.ordered_keys(), 3)
    hand = read_hand(folder)
    assert [(h.key, h.hand, h.seed) for h in hand] == [
        (order[0], "skip", 3),
        (order[1], "wrong", 3),
        (order[2], "skip", 3),
        (order[3], "correct", 3),
    ]
    assert all(h.answer_sha == aset.answers[h.key].sha for h in hand)
    assert (run.graded, run.skipped, run.total, run.stopped, run.remaining) == (2, 2, 2, False, 0)
    assert aset.hand_seen == set(order) and set(aset.hand) == {order[1], order[3]}
    # the merged view carries the hand grades
    merged = {
        (r["system"], r["question"]): r
        for r in map(json.loads, (folder / "answers.jsonl").read_text().splitlines())
    }
    assert merged[order[1]]["hand"] == "wrong" and merged[order[3]]["hand"] == "correct"


def test_a_second_run_resumes_after_the_answers_already_seen(results):  # noqa: F811
    folder = _answered(results)
    order = sample_order(_ordered(results), 8)
    hand_grade(results, n=4, seed=8, ask=_asker("correct", "skip", "quit")[0], flagged_first=False)
    ask, seen = _asker("partial", "wrong")
    run = hand_grade(results, n=3, seed=8, ask=ask, flagged_first=False)
    assert [(i.system, i.question) for i in seen] == order[2:4]
    assert [i.position for i in seen] == [2, 3]
    assert (run.graded, run.skipped, run.total, run.stopped) == (2, 0, 3, False)
    assert [h.hand for h in read_hand(folder)] == ["correct", "skip", "partial", "wrong"]
    # enough graded already: nothing is asked, nothing is written
    run = hand_grade(results, n=3, seed=8, ask=_asker()[0], flagged_first=False)
    assert (run.graded, run.skipped, run.total, run.remaining) == (0, 0, 3, 0)


def test_meta_json_records_the_seed_n_and_the_order(results):  # noqa: F811
    folder = _answered(results)
    run = hand_grade(results, n=2, seed=5, ask=_asker("quit")[0], flagged_first=False)
    assert run.stopped and run.flagged == 0
    meta = json.loads((folder / "meta.json").read_text())
    assert meta["hand"] == {"seed": 5, "n": 2, "order": "random.Random(seed).shuffle"}
    hand_grade(results, n=2, seed=5, ask=_asker("quit")[0])
    meta = json.loads((folder / "meta.json").read_text())
    assert meta["hand"]["order"].startswith("judge-passed answers with a changed")
    assert meta["hand"]["order"].endswith("then random.Random(seed).shuffle")

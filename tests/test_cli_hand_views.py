"""``ragmeter.cli.hand_views``: the answer panel (question, answer, reference passage,
position and question id in its title), the grade prompt and a piped line printed as
typed text (no markup, no highlighting), lines echoed only when the input is not a
terminal (a stream without ``isatty`` counts as not one), and ``grade_by_hand``'s
defaults (20 answers, seed 1) and its console."""

from __future__ import annotations

import io

from rich.console import Console

from ragmeter.answers.hand import PROMPT, HandItem, HandRun
from ragmeter.cli import hand_views
from ragmeter.cli.hand_views import grade_by_hand, show_hand_item, terminal_ask

ITEM = HandItem(
    system="sentence",
    question="q-bloom",
    question_text="What is a Bloom filter?",
    answer="A set sketch",
    reference="A Bloom filter is a probabilistic set.",
    position=2,
    target=5,
)


def _plain() -> Console:
    return Console(file=io.StringIO(), width=120, record=True)


def _colour() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, width=200, force_terminal=True, color_system="truecolor"), out


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class _NoIsatty:
    """A stream with ``readline`` only."""

    def __init__(self, text: str) -> None:
        self._lines = io.StringIO(text)

    def readline(self) -> str:
        return self._lines.readline()


class _BrokenIsatty(io.StringIO):
    def isatty(self) -> bool:
        raise ValueError("I/O operation on closed file")


def test_the_panel_shows_question_answer_reference_and_its_place_in_the_title():
    console = _plain()
    show_hand_item(console, ITEM)
    text = console.export_text()
    lines = text.splitlines()
    assert "2/5  q-bloom" in lines[0]  # the panel's top border carries the title
    assert "Question: What is a Bloom filter?" in text
    assert "Answer: A set sketch" in text
    assert "A Bloom filter is a probabilistic set." in text


def test_an_empty_answer_is_shown_as_empty():
    console = _plain()
    show_hand_item(console, HandItem("s", "q", "Why?", "", "ref", 1, 1))
    assert "Answer: (empty)" in console.export_text()


def test_piped_lines_are_echoed_after_the_prompt_as_typed():
    console, out = _colour()
    ask = terminal_ask(console, io.StringIO("[b]1[/b]\nc\n"))
    assert ask(ITEM) == "correct"
    raw = out.getvalue()
    # the prompt's [c] and the typed [b] are plain text: neither markup nor highlighted
    assert PROMPT + "[b]1[/b]\n" in raw
    assert PROMPT + "c\n" in raw
    assert "'[b]1[/b]' is not a grade" in raw


def test_a_terminal_is_not_echoed():
    console = _plain()
    ask = terminal_ask(console, _Terminal("w\n"))
    assert ask(ITEM) == "wrong"
    text = console.export_text()
    assert text.rstrip().endswith(PROMPT.rstrip())  # the key typed is the terminal's echo
    assert "\nw\n" not in text


def test_a_stream_without_isatty_or_with_a_failing_one_is_echoed():
    for stream in (_NoIsatty("p\n"), _BrokenIsatty("p\n")):
        console = _plain()
        assert terminal_ask(console, stream)(ITEM) == "partial"
        assert console.export_text().rstrip().endswith(PROMPT + "p")


def test_end_of_input_quits_and_an_unknown_key_is_asked_again():
    console = _plain()
    ask = terminal_ask(console, io.StringIO("x\n"))
    assert ask(ITEM) == "quit"
    assert console.export_text().count(PROMPT) == 2


def _fake_hand_grade(calls):
    def hand_grade(results, n=20, seed=1, *, ask):
        calls.append((results, n, seed))
        choice = ask(ITEM)
        return HandRun(seed, n, int(choice != "quit"), 0, 1, choice == "quit", 9)

    return hand_grade


def test_grade_by_hand_defaults_to_20_answers_seed_1(monkeypatch):
    calls = []
    monkeypatch.setattr(hand_views, "hand_grade", lambda results, **kw: calls.append(kw))
    grade_by_hand("some/results", input=io.StringIO(""), console=_plain())
    assert calls[0]["n"] == 20 and calls[0]["seed"] == 1
    grade_by_hand("some/results", n=3, seed=8, input=io.StringIO(""), console=_plain())
    assert calls[1]["n"] == 3 and calls[1]["seed"] == 8


def test_grade_by_hand_reads_the_given_input_and_prints_on_the_given_console(monkeypatch):
    calls = []
    monkeypatch.setattr(hand_views, "hand_grade", _fake_hand_grade(calls))
    console = _plain()
    run = grade_by_hand("r", n=4, seed=2, input=io.StringIO("s\n"), console=console)
    assert run.graded == 1 and not run.stopped
    assert calls == [("r", 4, 2)]
    text = console.export_text()
    assert "What is a Bloom filter?" in text and text.rstrip().endswith(PROMPT + "s")

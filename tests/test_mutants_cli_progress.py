"""``ragmeter.cli.progress``: times as seconds then minutes, the model calls' column (cached,
new, ETA), the bars on stderr only and only on a terminal, one bar per label with its
count, the embedding bar under the steps removed when done, and the ETA from new replies."""

from __future__ import annotations

import itertools
import types

import pytest
from rich.progress import Progress

from ragmeter.cli import progress as prog


@pytest.mark.parametrize(
    "seconds, shown",
    [(0, "0s"), (59, "59s"), (59.4, "59s"), (59.6, "1:00"), (60, "1:00"), (125, "2:05")],
)
def test_times_are_seconds_then_minutes(seconds, shown):
    assert prog._format_s(seconds) == shown


def test_the_calls_column_counts_cached_and_new_and_gives_the_eta():
    with Progress() as bar:
        bare = bar.add_task("x", total=3)
        full = bar.add_task("y", total=3, cached=2, new=5, eta=65)
        column = prog._CallsColumn()
        assert column.render(bar.tasks[bare]).plain == "0 cached · 0 new"
        assert column.render(bar.tasks[full]).plain == "2 cached · 5 new · ETA 1:05"


@pytest.fixture()
def bars(monkeypatch):
    """The bars as they are on a terminal; every Progress made kept for inspection."""
    monkeypatch.setattr(prog.bars, "_force_terminal", True)
    monkeypatch.setattr(prog.bars, "is_interactive", True)
    made = []
    real = prog.new_bar

    def keep(*extra):
        made.append(real(*extra))
        return made[-1]

    monkeypatch.setattr(prog, "new_bar", keep)
    prog.set_quiet(False)
    yield made
    prog.set_quiet(False)


def test_bars_go_to_stderr_only_vanish_when_done_and_not_when_quiet(bars, capsys):
    with prog.step_bar("loading") as update:
        update("searching", 1, 2)
        bars[0].refresh()  # drawn now, not at the next tick
    out, err = capsys.readouterr()
    assert out == "" and "searching" in err
    assert err.endswith("\x1b[1A\x1b[2K")  # done: the bar's line is erased, none left behind
    prog.set_quiet(True)
    with prog.step_bar("loading") as update:
        update("searching", 1, 2)
        bars[1].refresh()
    assert capsys.readouterr() == ("", "")


def test_steps_share_one_bar_and_embedding_gets_its_own_until_done(bars):
    with prog.step_bar("loading") as update:
        (bar,) = bars
        update("chunking", 1, 4)
        assert [(t.description, t.completed, t.total) for t in bar.tasks] == [("chunking", 1, 4)]
        update("fixed · embedding", 2, 10)
        assert [(t.description, t.completed, t.total) for t in bar.tasks][1] == (
            "fixed · embedding",
            2,
            10,
        )
        update("fixed · embedding", 10, 10)
        assert [t.description for t in bar.tasks] == ["chunking"]  # done: removed
        update("static · distilling vocabulary", 3, 7)
        assert (bar.tasks[-1].completed, bar.tasks[-1].total) == (3, 7)


def _reply(cached):
    return types.SimpleNamespace(cached=cached)


def test_one_calls_bar_per_label_with_its_counts(bars, monkeypatch):
    clock = itertools.count(10.0, 2.0)  # a reply every 2 s
    monkeypatch.setattr(prog, "time", types.SimpleNamespace(monotonic=lambda: next(clock)))
    label = "a label longer than thirty characters, cut"
    with prog.calls_bar() as update:
        (bar,) = bars
        update(label, 0, 10)
        update(label, 1, 10, _reply(True))
        update(label, 2, 10, _reply(False))
        update(label, 3, 10, None)  # no reply object: a new call
        update(label, 4, 10, _reply(False))
        update("other", 1, 5, _reply(True))
        update("other", 2, 6, _reply(True))  # the total can grow: the bar follows it
        first, other = bar.tasks
        assert first.description == label[-30:]
        assert (first.completed, first.total) == (4, 10)
        assert (first.fields["cached"], first.fields["new"]) == (1, 3)
        assert first.fields["eta"] == pytest.approx(12.0)  # 2 s a new call, 6 to go
        assert (other.total, other.fields["cached"], other.fields["new"]) == (6, 2, 0)


def test_the_eta_needs_two_new_replies_and_never_goes_negative():
    counter = prog.CallCounter()
    assert counter.eta(0, 10) is None
    counter.first_new = counter.last_new = 5.0
    counter.new = 1
    assert counter.eta(1, 10) is None  # one new reply: no pace yet
    counter.new, counter.last_new = 2, 7.0  # two new replies: 2 s a call
    assert counter.eta(2, 10) == pytest.approx(16.0)
    counter.new, counter.last_new = 3, 9.0  # still 2 s a call
    assert counter.eta(3, 10) == pytest.approx(14.0)
    assert counter.eta(12, 10) == 0.0

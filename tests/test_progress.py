"""Progress for slow steps, --quiet and --verbose: the callbacks the library calls, the bars
the command line draws from them, and llama.cpp's log kept off the terminal."""

import itertools
import subprocess
import sys
import types

import pytest
from rich.progress import Progress
from typer.testing import CliRunner

from ragmeter import __version__
from ragmeter.answers.run import runner_progress
from ragmeter.cli import app
from ragmeter.cli import progress as prog
from ragmeter.cli.progress import CallCounter, calls_bar, settings
from ragmeter.inputs.config import Config
from ragmeter.inputs.corpus import Document
from ragmeter.inputs.testset import AnswerSpan, Question, TestSet
from ragmeter.retrieval import registry
from ragmeter.retrieval.base import Retriever
from ragmeter.retrieval.bm25 import BM25Retriever
from ragmeter.runs.pipeline import run_search

runner = CliRunner()


class BatchedRetriever(BM25Retriever):
    """BM25 that reports progress per batch of 2 texts, as the dense retriever does."""

    index_chunks = Retriever.index_chunks  # through ``index(texts)``, as dense retrievers do

    def __init__(self, name="batched", **kw):
        super().__init__(name=name, **kw)
        self.progress = None

    def follow_progress(self, progress, label):
        self.progress = lambda done, total: progress(label, done, total)

    def index(self, texts):
        for done in range(0, len(texts) + 1, 2):
            if self.progress is not None:
                self.progress(min(done, len(texts)), len(texts))
        super().index(texts)


def test_embedding_progress_is_reported_per_batch(monkeypatch):
    monkeypatch.setitem(registry.KINDS, "batched", BatchedRetriever)
    docs = [Document(f"d{i}", f"word{i} text here") for i in range(5)]
    qs = TestSet([Question("q", "word1", (AnswerSpan("d1", 0, 5, "word1"),))])
    calls = []
    run_search(
        Config(strategies=("whole",), retrievers=("batched",), ks=(1,), rounds=200),
        docs,
        qs,
        progress=lambda label, done, total: calls.append((label, done, total)),
    )
    batches = [c for c in calls if c[0] == "whole · embedding"]
    assert batches == [("whole · embedding", d, 5) for d in (0, 2, 4)]
    assert calls[-1] == ("done", 1, 1)


def reply(cached):
    return types.SimpleNamespace(cached=cached)


def test_call_counter_counts_cached_and_new_and_estimates_from_new_only():
    counter = CallCounter()
    for cached in (True, True, True, False, False, False):
        counter.add(reply(cached))
    assert (counter.cached, counter.new) == (3, 3)
    counter.first_new, counter.last_new = 100.0, 104.0  # 3 new replies 2 s apart
    assert counter.eta(done=6, total=16) == pytest.approx(20.0)
    assert CallCounter().eta(0, 10) is None  # nothing new yet: no estimate


def test_answers_pass_the_reply_to_a_bar_that_wants_it():
    seen = []

    def wants(label, done, total, reply=None):
        seen.append((label, done, total, reply.cached))

    wants.wants_reply = True
    forward = runner_progress(wants, "answer")
    forward(1, 2, reply(True))
    forward(2, 2, reply(False))
    assert seen == [("answer", 1, 2, True), ("answer", 2, 2, False)]
    seen.clear()
    with calls_bar() as update:  # the command line's bar takes the reply too
        runner_progress(update, "answer")(1, 1, reply(True))
    plain = runner_progress(lambda label, done, total: seen.append((label, done, total)), "a")
    plain(1, 2, reply(True))
    assert seen == [("a", 1, 2)]


def test_version():
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and result.stdout.strip() == f"ragmeter {__version__}"


def test_quiet_drops_hints_but_not_warnings(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    args = ["search", "--strategies", "whole", "--ks", "1,30", "--rounds", "200", "-o", "r"]
    loud = runner.invoke(app, args)
    assert loud.exit_code == 0, loud.output
    assert "running the shipped example" in loud.stderr
    quiet = runner.invoke(app, ["--quiet", *args, "-o", "r2"])
    assert quiet.exit_code == 0, quiet.output
    assert "running the shipped example" not in quiet.stderr
    assert "warning: whole makes only 25 items" in quiet.stderr
    settings.quiet = False


def test_errors_have_no_blank_line_before_them(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["search", "--corpus", "missing"])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: ")


def test_llama_cpp_log_is_hidden_unless_verbose():
    pytest.importorskip("llama_cpp")
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).parent))
    from llm_fixtures import gguf_model_path

    path = gguf_model_path()
    if path is None:
        pytest.skip("the test GGUF model is not installed")
    code = (
        "import sys; from ragmeter.llm import backends; "
        "backends.LLAMA_VERBOSE = sys.argv[1] == 'v'; "
        f"backends.GGUFBackend({str(path)!r}, n_ctx=256).close()"
    )
    quiet = subprocess.run([sys.executable, "-c", code, "q"], capture_output=True, text=True)
    assert quiet.returncode == 0, quiet.stderr
    assert quiet.stderr == ""
    loud = subprocess.run([sys.executable, "-c", code, "v"], capture_output=True, text=True)
    assert loud.returncode == 0 and "llama" in loud.stderr


def test_verbose_flag_reaches_the_gguf_backend_default():
    from ragmeter.llm import backends

    assert runner.invoke(app, ["--verbose", "chunk", "--list"]).exit_code == 0
    assert backends.LLAMA_VERBOSE is True
    assert runner.invoke(app, ["chunk", "--list"]).exit_code == 0
    assert backends.LLAMA_VERBOSE is False


# ``ragmeter.cli.progress``: times as seconds then minutes, the model calls' column (cached,
# new, ETA), the bars on stderr only and only on a terminal, one bar per label with its count,
# the embedding bar under the steps removed when done, and the ETA from new replies.


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

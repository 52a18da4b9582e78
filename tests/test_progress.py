"""Progress for slow steps, --quiet and --verbose: the callbacks the library calls, the bars
the command line draws from them, and llama.cpp's log kept off the terminal."""

import subprocess
import sys
import types

import pytest
from typer.testing import CliRunner

from ragmeter import __version__
from ragmeter.answers.run import _runner_progress
from ragmeter.cli import app
from ragmeter.cli.progress import CallCounter, calls_bar, settings
from ragmeter.config import Config
from ragmeter.corpus import Document
from ragmeter.experiment import run_search
from ragmeter.retrieval import registry
from ragmeter.retrieval.base import Retriever
from ragmeter.retrieval.bm25 import BM25Retriever
from ragmeter.testset import AnswerSpan, Question, TestSet

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
    forward = _runner_progress(wants, "answer")
    forward(1, 2, reply(True))
    forward(2, 2, reply(False))
    assert seen == [("answer", 1, 2, True), ("answer", 2, 2, False)]
    seen.clear()
    with calls_bar() as update:  # the command line's bar takes the reply too
        _runner_progress(update, "answer")(1, 1, reply(True))
    plain = _runner_progress(lambda label, done, total: seen.append((label, done, total)), "a")
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

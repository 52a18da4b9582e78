"""Chunkers from outside: a user's function and other frameworks' splitters, placed in the
document by exact offsets (doc.text[c.start:c.end] == c.text) or refused with one line."""

import json
import sys
import types

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from ragmeter.chunking.frameworks import locate_chunks
from ragmeter.chunking.strategies import chunk_corpus, make_strategy
from ragmeter.cli import app
from ragmeter.errors import InputError
from ragmeter.inputs.corpus import Document

TEXT = "Alpha beta. Gamma delta.\n\nAlpha beta. Epsilon zeta eta.\n"


def by_sentences(text):
    return [s.strip() + "." for s in text.replace("\n", " ").split(".") if s.strip()]


def by_offsets(text):
    return [(0, 11), (12, 24)]


@pytest.fixture
def user_module(monkeypatch):
    mod = types.ModuleType("my_chunkers")
    mod.by_sentences = by_sentences
    mod.by_offsets = by_offsets
    mod.windows = lambda text, size: [text[i : i + size] for i in range(0, len(text), size)]
    mod.rewrites = lambda text: [text.upper()]
    mod.boom = lambda text: 1 / 0
    monkeypatch.setitem(sys.modules, "my_chunkers", mod)
    return mod


def check_invariant(docs, chunked):
    texts = {d.id: d.text for d in docs}
    assert chunked.chunks, "no chunks"
    for c in chunked.chunks:
        assert texts[c.doc_id][c.start : c.end] == c.text


def test_strings_are_located_in_order_even_when_repeated(user_module):
    strategy = make_strategy("mine", kind="python", function="my_chunkers:by_sentences")
    docs = [Document("d.md", TEXT)]
    chunked = chunk_corpus(docs, strategy)
    check_invariant(docs, chunked)
    # "Alpha beta." appears twice: the second chunk of that text lands on the second copy.
    assert [(c.start, c.text) for c in chunked.chunks] == [
        (0, "Alpha beta."),
        (12, "Gamma delta."),
        (26, "Alpha beta."),
        (38, "Epsilon zeta eta."),
    ]
    assert strategy.describe() == {
        "name": "mine",
        "kind": "python",
        "function": "my_chunkers:by_sentences",
    }


def test_offsets_and_extra_parameters_are_passed(user_module):
    docs = [Document("d.md", TEXT)]
    chunked = chunk_corpus(
        docs, make_strategy("o", kind="python", function="my_chunkers:by_offsets")
    )
    assert [c.text for c in chunked.chunks] == ["Alpha beta.", "Gamma delta."]
    chunked = chunk_corpus(
        docs, make_strategy("w", kind="python", function="my_chunkers:windows", size=10)
    )
    check_invariant(docs, chunked)
    assert chunked.chunks[0].text == "Alpha beta" and chunked.chunks[1].start == 10


def test_a_function_in_a_file(tmp_path):
    path = tmp_path / "split.py"
    path.write_text(
        "def halves(text):\n    n = len(text) // 2\n    return [(0, n), (n, len(text))]\n"
    )
    docs = [Document("d.md", TEXT)]
    chunked = chunk_corpus(docs, make_strategy("f", kind="python", function=f"{path}:halves"))
    check_invariant(docs, chunked)
    assert len(chunked.chunks) == 2


@pytest.mark.parametrize(
    "params, message",
    [
        (
            {"function": "my_chunkers:rewrites"},
            "strategy 'bad', document 'd.md', chunk 1: the text",
        ),
        ({"function": "my_chunkers:boom"}, "failed on document 'd.md': ZeroDivisionError"),
        ({"function": "my_chunkers:nothing"}, "has no function 'nothing'"),
        ({"function": "no_such_module_xyz:f"}, "cannot import no_such_module_xyz"),
        ({"function": "my_chunkers"}, 'give function = "module:function"'),
    ],
)
def test_bad_chunkers_are_one_line_input_errors(user_module, params, message):
    with pytest.raises(InputError, match=message) as exc:
        chunk_corpus([Document("d.md", TEXT)], make_strategy("bad", kind="python", **params))
    assert "\n" not in str(exc.value)


@pytest.mark.parametrize("pieces", [[(5, 2)], [(0, 999)], [(0.0, 3)], [(True, 3)], [42]])
def test_bad_offsets_are_refused(pieces):
    with pytest.raises(InputError, match="strategy 'x', document 'd'"):
        locate_chunks("d", TEXT, pieces, "x")


@settings(max_examples=200, deadline=None)
@given(
    text=st.text(alphabet="ab \n", min_size=1, max_size=60),
    cuts=st.lists(st.tuples(st.integers(0, 60), st.integers(1, 15)), max_size=8),
)
def test_located_strings_keep_the_offsets_invariant(text, cuts):
    # One cut per start (two identical pieces from one start could land on either copy).
    spans = sorted({min(s, len(text)): min(s + n, len(text)) for s, n in cuts}.items())
    pieces = [text[s:e] for s, e in spans]
    chunks = locate_chunks("d", text, pieces, "x")
    kept = [p for p in pieces if p.strip()]
    assert [c.text for c in chunks] == kept
    for c in chunks:
        assert text[c.start : c.end] == c.text
    # Chunks are placed in order: each starts at or after the previous one.
    assert [c.start for c in chunks] == sorted(c.start for c in chunks)
    # ... and never after where the splitter really cut it.
    true_starts = [s for (s, e), p in zip(spans, pieces, strict=True) if p.strip()]
    assert all(c.start <= s for c, s in zip(chunks, true_starts, strict=True))


def example_docs():
    from ragmeter.cli.app import example_dir
    from ragmeter.inputs.corpus import load_corpus

    return load_corpus(example_dir() / "posts")[:5]


@pytest.mark.parametrize(
    "kind, params, module",
    [
        ("langchain", {"chunk_size": 800, "chunk_overlap": 100}, "langchain_text_splitters"),
        (
            "langchain",
            {"splitter": "MarkdownTextSplitter", "chunk_size": 800},
            "langchain_text_splitters",
        ),
        ("chonkie", {"chunk_size": 800}, "chonkie"),
        ("chonkie", {"splitter": "SentenceChunker", "chunk_size": 800}, "chonkie"),
        ("semantic-text-splitter", {"capacity": 800}, "semantic_text_splitter"),
        (
            "semantic-text-splitter",
            {"splitter": "MarkdownSplitter", "capacity": 800},
            "semantic_text_splitter",
        ),
    ],
)
def test_framework_splitters_keep_their_chunks_and_the_invariant(kind, params, module):
    pytest.importorskip(module)
    docs = example_docs()
    strategy = make_strategy("ext", kind=kind, **params)
    chunked = chunk_corpus(docs, strategy)
    check_invariant(docs, chunked)
    assert strategy.describe() == {"name": "ext", "kind": kind, **params}
    # Every chunk is at most the asked size in characters, and every word of a document is
    # in some chunk (these splitters drop only whitespace).
    size = params.get("chunk_size") or params["capacity"]
    assert max(len(c.text) for c in chunked.chunks) <= size
    for d in docs:
        covered = set()
        for c in chunked.chunks:
            if c.doc_id == d.id:
                covered.update(range(c.start, c.end))
        assert all(i in covered for i, ch in enumerate(d.text) if not ch.isspace())


def test_langchain_chunks_are_the_splitters_own():
    lc = pytest.importorskip("langchain_text_splitters")
    doc = example_docs()[0]
    splitter = lc.RecursiveCharacterTextSplitter(chunk_size=500, chunk_overlap=80)
    strategy = make_strategy("lc", kind="langchain", chunk_size=500, chunk_overlap=80)
    assert [c.text for c in strategy.split(doc.id, doc.text)] == splitter.split_text(doc.text)


def test_a_missing_framework_names_the_package(monkeypatch):
    monkeypatch.setitem(sys.modules, "chonkie", None)
    with pytest.raises(InputError, match="kind 'chonkie'.* needs chonkie: pip install chonkie"):
        make_strategy("c", kind="chonkie", chunk_size=100)


def test_unknown_splitter_and_bad_parameters_are_input_errors():
    pytest.importorskip("langchain_text_splitters")
    with pytest.raises(InputError, match="has no splitter 'Nope'.*RecursiveCharacterTextSplitter"):
        make_strategy("lc", kind="langchain", splitter="Nope")
    with pytest.raises(
        InputError, match=r"strategy 'lc': RecursiveCharacterTextSplitter\(chunk_size=10"
    ):
        make_strategy("lc", kind="langchain", chunk_size=10, chunk_overlap=50)


@pytest.fixture
def fake_llamaindex(monkeypatch):
    """A stand-in for llama-index-core (too heavy for the test extra): a text splitter with
    split_text, and a node parser that returns nodes with character offsets."""

    class SentenceSplitter:
        def __init__(self, chunk_size=1024, chunk_overlap=0):
            self.chunk_size = chunk_size

        def split_text(self, text):
            return by_sentences(text)

    class Node:
        def __init__(self, text, start, end):
            self.text, self.start_char_idx, self.end_char_idx = text, start, end

        def get_content(self):
            return self.text

    class MarkdownNodeParser:
        def get_nodes_from_documents(self, documents):
            text = documents[0].text
            cut = text.index("\n\n")
            return [Node(text[:cut], 0, cut), Node(text[cut + 2 :], cut + 2, len(text))]

    class LlamaDocument:
        def __init__(self, text):
            self.text = text

    core = types.ModuleType("llama_index.core")
    core.Document = LlamaDocument
    parser = types.ModuleType("llama_index.core.node_parser")
    parser.SentenceSplitter = SentenceSplitter
    parser.MarkdownNodeParser = MarkdownNodeParser
    root = types.ModuleType("llama_index")
    root.core = core
    core.node_parser = parser
    monkeypatch.setitem(sys.modules, "llama_index", root)
    monkeypatch.setitem(sys.modules, "llama_index.core", core)
    monkeypatch.setitem(sys.modules, "llama_index.core.node_parser", parser)


def test_llamaindex_splitters_and_node_parsers(fake_llamaindex):
    docs = [Document("d.md", TEXT)]
    chunked = chunk_corpus(docs, make_strategy("li", kind="llamaindex", chunk_size=64))
    check_invariant(docs, chunked)
    assert [c.start for c in chunked.chunks] == [0, 12, 26, 38]
    chunked = chunk_corpus(
        docs, make_strategy("md", kind="llamaindex", splitter="MarkdownNodeParser")
    )
    check_invariant(docs, chunked)
    assert [(c.start, c.end) for c in chunked.chunks] == [(0, 24), (26, len(TEXT))]


def test_a_framework_splitter_scores_beside_the_builtins_from_toml(tmp_path, monkeypatch):
    pytest.importorskip("langchain_text_splitters")
    pytest.importorskip("chonkie")
    from ragmeter.cli.app import example_dir

    ex = example_dir()
    (tmp_path / "ragmeter.toml").write_text(
        f"""
[corpus]
path = "{ex / "posts"}"
[testset]
path = "{ex / "questions.jsonl"}"
[search]
strategies = ["recursive", "lc-800", "chonkie-800"]
[stats]
rounds = 200
[[strategy]]
name = "lc-800"
kind = "langchain"
splitter = "RecursiveCharacterTextSplitter"
chunk_size = 800
chunk_overlap = 100
[[strategy]]
name = "chonkie-800"
kind = "chonkie"
chunk_size = 800
"""
    )
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["search", "-o", "out"])
    assert result.exit_code == 0, result.output
    assert "3 systems" in result.stdout and "lc-800" in result.stdout
    meta = json.loads((tmp_path / "out" / "meta.json").read_text())
    lc = next(s for s in meta["systems"] if s["name"] == "lc-800")
    assert lc["strategy"] == {
        "name": "lc-800",
        "kind": "langchain",
        "splitter": "RecursiveCharacterTextSplitter",
        "chunk_size": 800,
        "chunk_overlap": 100,
    }
    assert lc["items"] > 100


def test_objects_use_their_offsets_only_when_they_hold_their_text():
    piece = types.SimpleNamespace(text="Gamma delta.", start_index=12, end_index=24)
    wrong = types.SimpleNamespace(text="Epsilon zeta eta.", start_index=0, end_index=17)
    chunks = locate_chunks("d", TEXT, [piece, wrong], "x")
    assert [(c.start, c.text) for c in chunks] == [(12, "Gamma delta."), (38, "Epsilon zeta eta.")]


def test_a_callable_from_python_is_recorded_by_name():
    strategy = make_strategy("mine", kind="python", function=by_offsets)
    assert strategy.describe()["function"] == f"{__name__}:by_offsets"
    chunked = chunk_corpus([Document("d.md", TEXT)], strategy)
    assert [c.text for c in chunked.chunks] == ["Alpha beta.", "Gamma delta."]


def test_an_interrupt_inside_a_users_chunker_names_the_strategy_and_document(
    tmp_path, monkeypatch, capsys
):
    import ragmeter.cli as cli

    (tmp_path / "stop.py").write_text("def stop(text):\n    raise KeyboardInterrupt\n")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text(TEXT)
    (tmp_path / "ragmeter.toml").write_text(
        f'[[strategy]]\nname = "mine"\nkind = "python"\nfunction = "{tmp_path / "stop.py"}:stop"\n'
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", ["ragmeter", "chunk", "docs", "-s", "mine"])
    with pytest.raises(SystemExit) as exited:
        cli.main()
    assert exited.value.code == 130
    said = capsys.readouterr().err.strip()
    assert said.startswith("interrupted: strategy 'mine' (kind 'python') was splitting document")
    assert "a.md" in said and "\n" not in said

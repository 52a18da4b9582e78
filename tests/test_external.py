"""External retrievers: run files, Python callables, HTTP endpoints."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from ragmeter.errors import InputError, ServerUnavailable
from ragmeter.retrieval.base import Hit, SpanRetriever
from ragmeter.retrieval.external import CallableRetriever, HttpRetriever, RunFileRetriever
from ragmeter.retrieval.registry import make_retriever
from ragmeter.retrieval.remote import RemoteError

DOCS = {
    "posts/bloom.md": "Bloom filters answer membership queries with false positives.",
    "posts/raft.md": "Raft elects a leader. Followers time out and start elections.",
    "notes/wal.txt": "A write-ahead log records changes before they are applied.",
}
QUESTIONS = [("q1", "what is a bloom filter"), ("q2", "how does raft elect a leader")]


def write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


# -- run files ---------------------------------------------------------------


def test_trec_run_with_doc_and_span_ids(tmp_path):
    run = write(
        tmp_path / "mine.trec",
        "q1 Q0 posts/bloom.md:0-13 1 9.5 sys\n"
        "q1 Q0 notes/wal.txt 3 1.0 sys\n"
        "q1 Q0 posts/raft.md:6-21 2 4.0 sys\n"
        "\n"
        "q2 Q0 posts/raft.md 1 3.0 sys\n"
        "q2 Q0 posts/bloom.md 2 3.0 sys\n",
    )
    r = RunFileRetriever(path=run, docs=DOCS)
    assert isinstance(r, SpanRetriever) and r.format == "trec"
    hits = r.search(QUESTIONS, k=10)
    assert hits[0] == [
        Hit("posts/bloom.md", 0, 13, 9.5),
        Hit("posts/raft.md", 6, 21, 4.0),
        Hit("notes/wal.txt", 0, len(DOCS["notes/wal.txt"]), 1.0),
    ]
    # equal scores keep rank order
    assert [h.doc_id for h in hits[1]] == ["posts/raft.md", "posts/bloom.md"]
    assert [len(row) for row in r.search(QUESTIONS, k=1)] == [1, 1]


def test_run_file_questions_missing_from_the_file(tmp_path):
    run = write(tmp_path / "r.trec", "q1 Q0 posts/bloom.md 1 1.0 t\n")
    r = RunFileRetriever(path=run, docs=DOCS)
    hits = r.search(QUESTIONS, k=5)
    assert hits[1] == [] and r.missing == ["q2"]
    with pytest.raises(InputError, match="none of the 2 questions"):
        r.search([("x1", "a"), ("x2", "b")], k=5)


@pytest.mark.parametrize(
    ("content", "line", "message"),
    [
        ("q1 Q0 d 1 1.0 t\nq1 Q0 d2 2 1.0\n", 2, "expected 6 fields"),
        ("q1 Q0 d 1 1.0 t\nq1 Q0 e one 1.0 t\n", 2, "not an integer"),
        ("\n\nq1 Q0 d 1 high t\n", 3, "not a number"),
        ("q1 Q0 d 1 1.0 t\nq1 Q0 d 2 1.0 t\n", 2, "already listed .* on line 1"),
    ],
)
def test_bad_trec_lines(tmp_path, content, line, message):
    path = write(tmp_path / "bad.trec", content)
    with pytest.raises(InputError, match=rf"bad\.trec:{line}: .*{message}"):
        RunFileRetriever(path=path, docs=DOCS)


def test_jsonl_forms(tmp_path):
    path = write(
        tmp_path / "mine.jsonl",
        json.dumps({"qid": "q1", "ranked": ["posts/bloom.md", "posts/raft.md:0-4"]})
        + "\n"
        + json.dumps({"qid": "q2", "ranked": [["posts/bloom.md", 0.2], ["posts/raft.md", 0.9]]})
        + "\n"
        + json.dumps(
            {
                "qid": "q3",
                "ranked": [
                    {"doc": "notes/wal.txt", "start": 2, "end": 7, "score": 1.5},
                    {"id": "posts/raft.md", "score": 2.5},
                ],
            }
        )
        + "\n",
    )
    r = RunFileRetriever(path=path, docs=DOCS)
    assert r.format == "jsonl"
    hits = r.search([("q1", ""), ("q2", ""), ("q3", "")], k=5)
    # ids only: list order, scores n, n-1, ...
    assert hits[0] == [
        Hit("posts/bloom.md", 0, len(DOCS["posts/bloom.md"]), 2.0),
        Hit("posts/raft.md", 0, 4, 1.0),
    ]
    # with scores: sorted by score
    assert [h.doc_id for h in hits[1]] == ["posts/raft.md", "posts/bloom.md"]
    assert hits[2] == [
        Hit("posts/raft.md", 0, len(DOCS["posts/raft.md"]), 2.5),
        Hit("notes/wal.txt", 2, 7, 1.5),
    ]


@pytest.mark.parametrize(
    ("lines", "line", "message"),
    [
        (['{"qid": "q1", "ranked": ["a"]}', '{"qid": "q2", "ranked": ['], 2, "malformed JSON"),
        (['{"ranked": ["a"]}'], 1, 'needs "qid"'),
        (['{"qid": "q1", "ranked": [["a", 1.0], "b"]}'], 1, "every entry or for none"),
        (['{"qid": "q1", "ranked": [["a", "x"]]}'], 1, "not a finite number"),
        (['{"qid": "q1", "ranked": ["a", "a"]}'], 1, "ranked twice"),
        (['{"qid": "q1", "ranked": ["a"]}', "", '{"qid": "q1", "ranked": ["b"]}'], 3, "two lines"),
        (['{"qid": "q1", "ranked": [{"doc": "a", "start": 1}]}'], 1, "both be integers"),
    ],
)
def test_bad_jsonl_lines(tmp_path, lines, line, message):
    path = write(tmp_path / "bad.jsonl", "\n".join(lines) + "\n")
    with pytest.raises(InputError, match=rf"bad\.jsonl:{line}: .*{message}"):
        RunFileRetriever(path=path)


@pytest.mark.parametrize(
    ("name", "content", "line", "message"),
    [
        # JSONL goes through ragmeter.files.io.read_jsonl: every problem names its line
        ("b.jsonl", b'{"qid": "q1", "ranked": ["a"]}\n[1, 2]\n', 2, "expected a JSON object"),
        ("b.jsonl", b'{"qid": "q1", "ranked": [["a", NaN]]}\n', 1, "NaN is not valid JSON"),
        ("b.jsonl", b'{"qid": "q1", "ranked": ["a"]}\n{"qid": "\xff"}\n', 2, "not valid UTF-8"),
        ("b.jsonl", b'\n\n{"qid": "q1", "ranked": "a"}\n', 3, '"ranked" must be a list'),
        # TREC goes through ragmeter.scoring.trec.read_run
        ("b.trec", b"q1 Q0 posts/bloom.md 1 1.0 t\nq1 Q0 \xff 2 0.5 t\n", 2, "not valid UTF-8"),
        ("b.trec", b"\xff\xfe Q0 posts/bloom.md 1 1.0 t\n", 1, "not valid UTF-8"),
        ("b.trec", b"q1 Q0 posts/bloom.md 1 inf t\n", 1, "'inf' is not a finite number"),
        ("b.run", b"q1 Q0 posts/bloom.md 1 1.0 t\rq1 Q0 b 2\r", 2, "expected 6 fields"),
    ],
)
def test_bad_bytes_in_run_files_name_file_and_line(tmp_path, name, content, line, message):
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(InputError, match=rf"{name.replace('.', '[.]')}:{line}: .*{message}"):
        RunFileRetriever(path=path, docs=DOCS)


def test_an_empty_trec_run_file_is_an_error(tmp_path):
    path = write(tmp_path / "empty.trec", "\n")
    with pytest.raises(InputError, match=r"empty\.trec: no lines; the run file is empty"):
        RunFileRetriever(path=path, docs=DOCS)


def test_run_files_with_crlf_or_cr_line_ends_read_as_with_lf(tmp_path):
    lines = [
        "q1 Q0 posts/bloom.md 1 2.0 t",
        "q1 Q0 posts/raft.md:0-4 2 1.0 t",
        "q2 Q0 notes/wal.txt 1 3 t",
    ]
    hits = {}
    for end in ("\n", "\r\n", "\r"):
        path = tmp_path / "r.trec"
        path.write_bytes((end.join(lines) + end).encode())
        hits[end] = RunFileRetriever(path=path, docs=DOCS).search(QUESTIONS, k=5)
    assert [len(h) for h in hits["\n"]] == [2, 1]
    assert hits["\r\n"] == hits["\n"] == hits["\r"]


def test_span_and_document_checks_name_the_line(tmp_path):
    path = write(
        tmp_path / "r.trec",
        "q1 Q0 posts/bloom.md:0-5 1 2.0 t\nq1 Q0 posts/bloom.md:10-999 2 1.0 t\n",
    )
    r = RunFileRetriever(path=path, docs=DOCS)
    with pytest.raises(InputError, match=r"r\.trec:2: .*ends past the end"):
        r.search(QUESTIONS, k=5)
    path = write(tmp_path / "s.trec", "q1 Q0 posts/bloom.md 1 2.0 t\n")
    r = RunFileRetriever(path=path)  # no document texts
    with pytest.raises(InputError, match=r"s\.trec:1: .*document id.*corpus="):
        r.search(QUESTIONS, k=5)
    path = write(tmp_path / "u.trec", "q1 Q0 posts/nothere.md 1 2.0 t\n")
    with pytest.raises(InputError, match=r"u\.trec:1: document 'posts/nothere.md' is not"):
        RunFileRetriever(path=path, docs=DOCS).search(QUESTIONS, k=5)
    path = write(tmp_path / "v.trec", "q1 Q0 d:9-3 1 2.0 t\n")
    with pytest.raises(InputError, match=r"v\.trec:1: .*start < end"):
        RunFileRetriever(path=path).search(QUESTIONS, k=5)


def test_spans_without_texts_and_doc_ids_that_look_like_spans(tmp_path):
    path = write(tmp_path / "r.trec", "q1 Q0 any/doc:3-9 1 2.0 t\nq1 Q0 odd:1-2 2 1.0 t\n")
    hits = RunFileRetriever(path=path).search(QUESTIONS, k=5)
    assert hits[0] == [Hit("any/doc", 3, 9, 2.0), Hit("odd", 1, 2, 1.0)]
    docs = {"any/doc": "x" * 20, "odd:1-2": "a document whose id looks like a span"}
    hits = RunFileRetriever(path=path, docs=docs).search(QUESTIONS, k=5)
    assert hits[0][1] == Hit("odd:1-2", 0, len(docs["odd:1-2"]), 1.0)


def test_run_file_from_registry_with_corpus_folder(tmp_path):
    corpus = tmp_path / "corpus"
    (corpus / "posts").mkdir(parents=True)
    for doc_id, text in DOCS.items():
        (corpus / doc_id).parent.mkdir(parents=True, exist_ok=True)
        (corpus / doc_id).write_text(text)
    run = write(tmp_path / "r.trec", "q1 Q0 posts/bloom.md 1 1.0 t\n")
    r = make_retriever(
        {"name": "mine", "kind": "run-file", "path": str(run), "corpus": str(corpus)}
    )
    assert r.name == "mine"
    hits = r.search(QUESTIONS, k=3)
    assert hits[0] == [Hit("posts/bloom.md", 0, len(DOCS["posts/bloom.md"]), 1.0)]
    assert r.describe()["questions_missing"] == 1
    with pytest.raises(InputError, match="does not exist"):
        make_retriever({"kind": "run-file", "path": str(tmp_path / "missing.trec")})


def test_set_documents_accepts_document_objects(tmp_path):
    from ragmeter.inputs.corpus import Document

    run = write(tmp_path / "r.trec", "q1 Q0 notes/wal.txt 1 1.0 t\n")
    r = RunFileRetriever(path=run)
    r.set_documents([Document(id=k, text=v) for k, v in DOCS.items()])
    assert r.search(QUESTIONS, 1)[0][0].end == len(DOCS["notes/wal.txt"])


# -- callables ---------------------------------------------------------------


def test_callable_forms_and_k():
    calls = []

    def search(question, k):
        calls.append((question, k))
        return [
            ("posts/raft.md:0-6", 0.5),
            (("notes/wal.txt", 2, 9), 0.9),
            ("posts/bloom.md", 0.7),
            (Hit("posts/raft.md", 7, 20, 0.0), 0.1),
        ]

    r = CallableRetriever(search, docs=DOCS, name="fn")
    hits = r.search(QUESTIONS[:1], k=3)
    assert calls == [("what is a bloom filter", 3)]
    assert hits[0] == [
        Hit("notes/wal.txt", 2, 9, 0.9),
        Hit("posts/bloom.md", 0, len(DOCS["posts/bloom.md"]), 0.7),
        Hit("posts/raft.md", 0, 6, 0.5),
    ]
    one_arg = CallableRetriever(lambda q: [Hit("posts/raft.md", 0, 4, 1.0)], docs=DOCS)
    assert one_arg.search(QUESTIONS, k=2)[1] == [Hit("posts/raft.md", 0, 4, 1.0)]


@pytest.mark.parametrize(
    ("result", "message"),
    [
        ("posts/raft.md", "expected a list"),
        ([("posts/raft.md",)], "not an \\(item, score\\) pair"),
        ([("posts/raft.md", "high")], "not a finite number"),
        ([("posts/gone.md", 1.0)], "is not in the corpus"),
        ([(42, 1.0)], "cannot read result"),
    ],
)
def test_callable_bad_results_name_the_question(result, message):
    r = CallableRetriever(lambda q: result, docs=DOCS, name="fn")
    with pytest.raises(InputError, match=rf"retriever 'fn', question 'q1'.*{message}"):
        r.search(QUESTIONS, k=5)


def test_callable_from_registry_by_reference(tmp_path, monkeypatch):
    (tmp_path / "mysearch.py").write_text(
        "def search(question):\n    return [('posts/bloom.md:0-6', 1.0)]\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    r = make_retriever({"name": "py", "kind": "callable", "function": "mysearch:search"})
    assert r.search(QUESTIONS[:1], 5) == [[Hit("posts/bloom.md", 0, 6, 1.0)]]
    with pytest.raises(InputError, match="has no"):
        make_retriever({"kind": "callable", "function": "mysearch:nothing"})


# -- HTTP --------------------------------------------------------------------


class Stub:
    """A JSON server on 127.0.0.1: answers come from ``replies`` in order
    (status, body); the last reply repeats. Requests are recorded."""

    def __init__(self, replies):
        self.replies = list(replies)
        self.requests = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                length = int(self.headers.get("content-length", 0))
                stub.requests.append((self.path, json.loads(self.rfile.read(length))))
                status, body = stub.replies[min(len(stub.requests), len(stub.replies)) - 1]
                data = json.dumps(body).encode() if not isinstance(body, bytes) else body
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/search"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


def test_http_contract_and_ordering():
    body = {
        "results": [
            {"doc": "posts/bloom.md", "start": 0, "end": 13, "score": 0.4, "text": "Bloom filters"},
            {"doc": "posts/raft.md", "score": 0.8},
            {"doc": "notes/wal.txt", "start": 2, "end": 7, "score": 0.6},
        ]
    }
    with Stub([(200, body)]) as stub:
        r = HttpRetriever(url=stub.url, docs=DOCS, retries=0)
        hits = r.search(QUESTIONS, k=2)
    assert stub.requests[0] == ("/search", {"qid": "q1", "question": QUESTIONS[0][1], "k": 2})
    assert len(stub.requests) == 2
    assert hits[0] == [
        Hit("posts/raft.md", 0, len(DOCS["posts/raft.md"]), 0.8),
        Hit("notes/wal.txt", 2, 7, 0.6),
    ]


def test_http_retries_a_server_error_then_succeeds():
    ok = {"results": [{"doc": "posts/bloom.md", "start": 0, "end": 5, "score": 1.0}]}
    with Stub([(500, {"error": "busy"}), (503, {}), (200, ok)]) as stub:
        r = make_retriever({"kind": "http", "url": stub.url, "retries": 3, "backoff": 0.01})
        hits = r.search(QUESTIONS[:1], k=5)
    assert len(stub.requests) == 3
    assert hits == [[Hit("posts/bloom.md", 0, 5, 1.0)]]


def test_http_errors_are_one_line_and_name_the_url():
    with Stub([(500, {"error": "down"})]) as stub:
        r = HttpRetriever(url=stub.url, retries=2, backoff=0.01)
        with pytest.raises(RemoteError, match=rf"{stub.url} failed after 3 attempts: HTTP 500"):
            r.search(QUESTIONS[:1], k=5)
        assert len(stub.requests) == 3
    with Stub([(404, {"error": "no such route"})]) as stub:
        r = HttpRetriever(url=stub.url, retries=3, backoff=0.01)
        with pytest.raises(RemoteError, match="refused the request .*HTTP 404") as info:
            r.search(QUESTIONS[:1], k=5)
        assert len(stub.requests) == 1 and "\n" not in str(info.value)
    with Stub([(200, {"hits": []})]) as stub:
        with pytest.raises(RemoteError, match='no "results" list'):
            HttpRetriever(url=stub.url, retries=0).search(QUESTIONS[:1], k=5)
    with Stub([(200, {"results": [{"doc": "posts/bloom.md", "start": 3}]})]) as stub:
        with pytest.raises(RemoteError, match="only one of start and end"):
            HttpRetriever(url=stub.url, retries=0).search(QUESTIONS[:1], k=5)
    with Stub([(200, {"results": [{"doc": "posts/gone.md", "start": 0, "end": 3}]})]) as stub:
        with pytest.raises(RemoteError, match="not in the corpus"):
            HttpRetriever(url=stub.url, retries=0, docs=DOCS).search(QUESTIONS[:1], k=5)


def test_http_unreachable_server():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/search"
    r = HttpRetriever(url=url, retries=1, backoff=0.01, timeout=2)
    with pytest.raises(
        RemoteError,
        match=rf"retriever at {url} failed after 2 attempts: "
        "cannot connect",
    ) as info:
        r.search(QUESTIONS[:1], k=5)
    assert "\n" not in str(info.value)


def test_http_bad_settings():
    with pytest.raises(InputError, match="url="):
        make_retriever({"kind": "http"})
    with pytest.raises(InputError, match="http://"):
        make_retriever({"kind": "http", "url": "127.0.0.1:9/search"})


# ``ragmeter.retrieval.external``: the HTTP retriever's settings reach the requests.  The
# retriever waits its own ``backoff`` between tries (not the HTTP layer's default) and gives up
# on a silent server after its default 30 seconds.


@pytest.mark.parametrize("backoff", [0.01, 2.0])
def test_the_retriever_waits_its_own_backoff_between_tries(backoff, waits):
    ok = {"results": [{"doc": "a.md", "start": 0, "end": 4, "score": 1.0}]}
    with Stub([(503, {"error": "busy"}), (502, {}), (200, ok)]) as server:
        r = HttpRetriever(url=server.url, retries=2, backoff=backoff)
        assert r.search([("q1", "what?")], k=3) == [[Hit("a.md", 0, 4, 1.0)]]
        r.close()
    assert len(server.requests) == 3
    assert waits == [backoff, backoff * 2]


def test_a_silent_server_is_given_thirty_seconds_by_default(monkeypatch):
    r = HttpRetriever(url="http://127.0.0.1:9/search", retries=0)  # never contacted

    def silent(url, **kwargs):
        raise httpx.ReadTimeout("no answer", request=httpx.Request("POST", url))

    monkeypatch.setattr(r._client, "post", silent)
    with pytest.raises(ServerUnavailable, match=r"timed out after 30\.0s") as info:
        r.search([("q1", "what?")], k=3)
    assert info.value.cause == "timeout"
    r.close()


def test_a_key_in_an_http_retrievers_url_or_headers_is_written_nowhere(tmp_path, monkeypatch):
    # regression: ?api_key=KEY, user:KEY@ and a header named X-Auth reached config.toml,
    # meta.json, report.html and the run history as written
    from typer.testing import CliRunner

    from ragmeter.cli import app

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("Snow is cleared from sidewalks by the city.")
    (tmp_path / "q.jsonl").write_text(
        '{"id": "q1", "question": "who clears snow?", '
        '"answers": [{"doc": "a.md", "text": "city"}]}\n'
    )
    body = {"results": [{"doc": "a.md", "score": 1.0}]}
    history = tmp_path / "history"
    monkeypatch.setenv("RAGMETER_HISTORY", str(history))
    with Stub([(200, body)]) as stub:
        url = stub.url.replace("http://", "http://user:SECRETONE@") + "?api_key=SECRETTWO"
        (tmp_path / "ragmeter.toml").write_text(
            f'[corpus]\npath = "{tmp_path / "docs"}"\n[testset]\npath = "{tmp_path / "q.jsonl"}"\n'
            '[search]\nstrategies = ["whole"]\nretrievers = []\n'
            f'[[retriever]]\nname = "api"\nkind = "http"\nurl = "{url}"\nretries = 0\n'
            '[retriever.headers]\nX-Auth = "SECRETTHREE"\n'
        )
        out = tmp_path / "res"
        result = CliRunner().invoke(
            app, ["search", str(tmp_path / "ragmeter.toml"), "--out", str(out), "--rounds", "200"]
        )
    assert result.exit_code == 0, result.output
    assert stub.requests  # the key-bearing URL was used to search
    written = [p for p in [*out.rglob("*"), *history.rglob("*")] if p.is_file()]
    assert any(p.name == "config.toml" for p in written) and any(
        p.suffix == ".sqlite" for p in written
    )
    for path in written:
        data = path.read_bytes()
        for secret in (b"SECRETONE", b"SECRETTWO", b"SECRETTHREE"):
            assert secret not in data, (path.name, secret)
    assert "api_key=***" in (out / "config.toml").read_text()
    from ragmeter.history.store import HistoryStore

    store = HistoryStore(history, create=False)
    try:
        (run,) = store.runs()
        recorded = b"".join(store.files(run.id).values())  # the files, decompressed
    finally:
        store.close()
    assert b"api_key=***" in recorded
    for secret in (b"SECRETONE", b"SECRETTWO", b"SECRETTHREE"):
        assert secret not in recorded

"""Fuzzing every reader of user files: malformed input is one line of InputError, never more.

Each loader gets 200 generated cases (derandomized, so the suite is the same on
every run): a loader either reads the file or raises :class:`InputError` with a
one-line message naming the file; nothing else escapes, and nothing is written.
Commands get malformed flag values through typer's runner: exit code 2, one
``error:`` line, no traceback, no output folder.
"""

import csv
import io
import json
import shutil
import tempfile
from pathlib import Path

import pytest
import tomli_w
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from ragmeter.answers.store import load_answer_set
from ragmeter.cli import app
from ragmeter.errors import InputError
from ragmeter.inputs.config import Config, load_config
from ragmeter.inputs.corpus import Document, load_corpus
from ragmeter.inputs.testset import AnswerSpan, Question, TestSet, load_testset
from ragmeter.runs.pipeline import run_search
from ragmeter.runs.results import Results, save_results

FUZZ = settings(
    max_examples=200,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
runner = CliRunner()

DOCS = [
    Document("cats.md", "Cats sleep for sixteen hours a day. Cats purr when content."),
    Document("dogs.md", "Dogs bark at strangers. A dog's nose has 300 million receptors."),
]

# --- generators -----------------------------------------------------------------------------

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
    | st.sampled_from(["ten", "", " ", "cats.md", "0", "5", "Cats sleep"])
)
json_values = st.recursive(
    scalars,
    lambda kids: (
        st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=6), kids, max_size=3)
    ),
    max_leaves=6,
)
offsets = st.one_of(
    st.sampled_from(["ten", "3", "", 4.7, 0.0, True, False, -1, 10**20, None, [1], {"a": 1}]),
    st.integers(min_value=-5, max_value=200),
    st.floats(allow_nan=False, allow_infinity=False),
)
ids = st.one_of(
    st.text(max_size=6), st.integers(), st.floats(allow_nan=False), st.booleans(), st.none()
)


def maybe(strategy):
    """A field that is sometimes present with a good-looking value, sometimes anything."""
    return st.one_of(strategy, json_values)


@st.composite
def mutated(draw, base, replacements):
    """A copy of the well-formed ``base`` with one to three fields replaced or removed.

    ``replacements`` maps a dotted path (``answers.0.start``) to a strategy of values;
    a value of ``DROP`` removes the field. Most of each case stays valid, so the
    loader gets past the easy checks to the one that is broken.
    """
    doc = json.loads(json.dumps(base))
    paths = draw(st.lists(st.sampled_from(sorted(replacements)), min_size=1, max_size=3))
    for path in paths:
        *parents, last = path.split(".")
        node = doc
        for part in parents:
            node = _step(node, part)
        value = draw(replacements[path])
        if isinstance(node, dict):
            if value is DROP:
                node.pop(last, None)
            else:
                node[last] = value
        elif isinstance(node, list) and last.isdigit() and int(last) < len(node):
            if value is DROP:
                del node[int(last)]
            else:
                node[int(last)] = value
    return doc


def _step(node, part):
    if isinstance(node, dict):
        return node.get(part)
    if isinstance(node, list) and part.isdigit() and int(part) < len(node):
        return node[int(part)]
    return None


DROP = object()
drop = st.just(DROP)
good_question = {
    "id": "q1",
    "question": "how long do cats sleep",
    "answers": [{"doc": "cats.md", "start": 0, "end": 34, "text": DOCS[0].text[:34]}],
}
mutated_questions = mutated(
    good_question,
    {
        "id": ids | drop,
        "question": json_values | drop | st.sampled_from(["", "  ", "\u202e"]),
        "answers": json_values | drop | st.just([]),
        "answers.0": json_values | drop,
        "answers.0.doc": json_values | drop | st.sampled_from(["dogs.md", "nope.md"]),
        "answers.0.start": offsets | drop,
        "answers.0.end": offsets | drop,
        "answers.0.text": json_values | drop | st.sampled_from(["Cats", "Cats sleep", ""]),
    },
)
# mostly one broken field of a good line, sometimes any JSON at all
question_rows = st.one_of(mutated_questions, mutated_questions, mutated_questions, json_values)
# JSON text with the special tokens Python's writer would emit, and lines cut short
nasty_tokens = st.sampled_from(["NaN", "Infinity", "-Infinity", "1e999", "{", "[", '"', "\ufeff"])


@st.composite
def jsonl_files(draw, rows):
    lines = []
    for _ in range(draw(st.integers(min_value=0, max_value=4))):
        kind = draw(st.integers(min_value=0, max_value=9))
        if kind <= 5:
            lines.append(json.dumps(draw(rows)))
        elif kind == 6:
            lines.append(json.dumps(draw(json_values)))
        elif kind == 7:
            text = json.dumps(draw(rows))
            lines.append(text[: draw(st.integers(min_value=0, max_value=len(text)))])
        elif kind == 8:
            text = json.dumps(draw(rows))
            lines.append(text.replace("0", draw(nasty_tokens), 1))
        else:
            lines.append(draw(st.text(max_size=20)))
    data = "\n".join(lines).encode("utf-8", "surrogatepass")
    if draw(st.booleans()):
        data += draw(st.binary(max_size=6))
    return data


_made: list[Path] = []


def workdir() -> Path:
    path = Path(tempfile.mkdtemp(prefix="ragmeter-fuzz-"))
    _made.append(path)
    return path


@pytest.fixture(scope="module", autouse=True)
def _remove_workdirs():
    """Every case's folder goes, also those of a case that failed."""
    yield
    for path in _made:
        shutil.rmtree(path, ignore_errors=True)


def listing(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))


def only_input_errors(path: Path, call):
    """Run ``call``; it may succeed or raise a one-line InputError naming ``path``."""
    root = path.parent
    before = listing(root)
    try:
        call()
    except InputError as exc:
        message = str(exc)
        assert message.strip() and "\n" not in message, message
        assert path.name in message or str(path) in message, message
    finally:
        assert listing(root) == before  # a loader writes nothing
        shutil.rmtree(root, ignore_errors=True)


# --- loaders --------------------------------------------------------------------------------


@FUZZ
@given(data=jsonl_files(question_rows))
def test_fuzz_jsonl_testset(data):
    path = workdir() / "q.jsonl"
    path.write_bytes(data)
    only_input_errors(path, lambda: load_testset(path, DOCS))


chroma_refs = st.one_of(
    json_values,
    mutated(
        [{"content": DOCS[0].text[:10], "start_index": 0, "end_index": 10}],
        {
            "0": json_values,
            "0.content": json_values | drop,
            "0.start_index": offsets | drop,
            "0.end_index": offsets | drop,
        },
    ),
)


@FUZZ
@given(
    header=st.sampled_from(
        [["question", "references", "corpus_id"], ["question", "references"], ["q", "r", "c"]]
    ),
    rows=st.lists(
        st.tuples(
            st.text(max_size=10),
            st.one_of(
                chroma_refs.map(json.dumps), st.text(max_size=10), json_values.map(json.dumps)
            ),
            st.sampled_from(["cats", "dogs", "x", ""]),
            st.booleans(),
        ),
        max_size=4,
    ),
)
def test_fuzz_chroma_csv(header, rows):
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(header)
    for question, refs, corpus_id, short in rows:
        writer.writerow([question, refs] if short else [question, refs, corpus_id])
    path = workdir() / "questions_df.csv"
    path.write_text(buf.getvalue(), encoding="utf-8")
    only_input_errors(path, lambda: load_testset(path, DOCS))


good_squad = {
    "data": [
        {
            "title": "t",
            "paragraphs": [
                {
                    "context": "Cats sleep all day.",
                    "qas": [
                        {
                            "id": "s1",
                            "question": "what do cats do",
                            "answers": [{"text": "sleep", "answer_start": 5}],
                        }
                    ],
                }
            ],
        }
    ]
}
squad_files = st.one_of(
    json_values,
    mutated(
        good_squad,
        {
            "data": json_values | drop,
            "data.0": json_values,
            "data.0.title": json_values | drop,
            "data.0.paragraphs": json_values | drop,
            "data.0.paragraphs.0.context": json_values | drop,
            "data.0.paragraphs.0.qas": json_values | drop,
            "data.0.paragraphs.0.qas.0.id": ids | drop,
            "data.0.paragraphs.0.qas.0.question": json_values | drop,
            "data.0.paragraphs.0.qas.0.is_impossible": json_values | drop,
            "data.0.paragraphs.0.qas.0.answers": json_values | drop,
            "data.0.paragraphs.0.qas.0.answers.0.text": json_values | drop,
            "data.0.paragraphs.0.qas.0.answers.0.answer_start": offsets | drop,
        },
    ),
)


@FUZZ
@given(doc=squad_files, cut=st.booleans())
def test_fuzz_squad_testset_and_corpus(doc, cut):
    text = json.dumps(doc)
    if cut:
        text = text[: len(text) // 2]
    path = workdir() / "squad.json"
    path.write_text(text, encoding="utf-8")
    only_input_errors(path, lambda: load_testset(path, DOCS))
    path = workdir() / "squad.json"
    path.write_text(text, encoding="utf-8")
    only_input_errors(path, lambda: load_corpus(path))


corpus_rows = st.one_of(
    json_values,
    mutated(
        {"id": "d1", "text": "Cats sleep.", "title": "Cats"},
        {"id": ids | drop, "_id": ids, "text": json_values | drop, "title": json_values | drop},
    ),
)


@FUZZ
@given(data=jsonl_files(corpus_rows))
def test_fuzz_jsonl_corpus(data):
    path = workdir() / "corpus.jsonl"
    path.write_bytes(data)
    only_input_errors(path, lambda: load_corpus(path))


@FUZZ
@given(
    files=st.lists(
        st.tuples(st.sampled_from(["a.md", "b.txt", "c.md"]), st.binary(max_size=20)), max_size=3
    )
)
def test_fuzz_folder_corpus(files):
    root = workdir() / "docs"
    root.mkdir()
    for name, data in files:
        (root / name).write_bytes(data)
    before = listing(root.parent)
    try:
        load_corpus(root)
    except InputError as exc:
        assert "\n" not in str(exc) and "docs" in str(exc), str(exc)
    assert listing(root.parent) == before
    shutil.rmtree(root.parent, ignore_errors=True)


# --- configs --------------------------------------------------------------------------------

known = {
    "corpus": ["path", "format"],
    "testset": ["path", "format"],
    "search": ["strategies", "retrievers", "ks", "depth", "relevant_grade", "ideal"],
    "stats": ["seed", "rounds", "confidence", "method", "metric"],
    "output": ["dir"],
    "serach": ["ks"],
    "stat": ["seed"],
}
toml_scalars = (
    st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=8)
    | st.sampled_from(["sentence", "bm25", "recall@5", "5", "x"])
)
toml_values = toml_scalars | st.lists(toml_scalars, max_size=3)


@st.composite
def configs(draw):
    doc = {}
    for section in draw(st.lists(st.sampled_from(sorted(known)), max_size=3, unique=True)):
        keys = known[section] + ["bogus", "kz"]
        doc[section] = {
            key: draw(toml_values)
            for key in draw(st.lists(st.sampled_from(keys), max_size=3, unique=True))
        }
    if draw(st.booleans()):
        entry = draw(st.sampled_from(["strategy", "retriever"]))
        doc[entry] = draw(
            st.one_of(
                st.lists(
                    st.dictionaries(st.sampled_from(["name", "kind", "size"]), toml_scalars),
                    max_size=2,
                ),
                st.dictionaries(st.sampled_from(["name", "kind"]), toml_scalars),
                toml_scalars,
            )
        )
    text = tomli_w.dumps(doc)
    mode = draw(st.integers(min_value=0, max_value=5))
    if mode == 0:
        return text.encode() + b"\n# \xff\xfe"
    if mode == 1:
        return text[: draw(st.integers(min_value=0, max_value=len(text)))].encode()
    if mode == 2:
        return draw(st.binary(max_size=30))
    return text.encode()


@FUZZ
@given(data=configs())
def test_fuzz_config(data):
    path = workdir() / "ragmeter.toml"
    path.write_bytes(data)
    only_input_errors(path, lambda: load_config(path))


# --- results read back ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    questions = [
        Question("q1", "cats sleep", (AnswerSpan("cats.md", 0, 10, DOCS[0].text[:10]),)),
        Question("q2", "dogs bark", (AnswerSpan("dogs.md", 0, 9, "Dogs bark"),)),
    ]
    cfg = Config(strategies=("whole", "sentence"), ks=(1,), rounds=200)
    out = tmp_path_factory.mktemp("saved") / "r"
    return save_results(run_search(cfg, DOCS, TestSet(questions)), out)


RESULT_FILES = (
    "meta.json",
    "scores.json",
    "summary.json",
    "questions.jsonl",
    "documents.jsonl",
    "runs.jsonl",
)


@FUZZ
@given(
    name=st.sampled_from(RESULT_FILES),
    how=st.integers(min_value=0, max_value=3),
    value=json_values,
    cut=st.floats(min_value=0, max_value=1),
)
def test_fuzz_results_files(saved, name, how, value, cut):
    root = workdir()
    copy = root / "r"
    shutil.copytree(saved, copy)
    path = copy / name
    original = path.read_text(encoding="utf-8")
    if how == 0:
        path.write_text(original[: int(len(original) * cut)], encoding="utf-8")
    elif how == 1:
        path.write_text(json.dumps(value) + "\n", encoding="utf-8")
    elif how == 2 and name.endswith(".jsonl"):
        lines = original.splitlines()
        lines[int(cut * (len(lines) - 1))] = json.dumps(value)
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    elif how == 2:
        data = json.loads(original)
        if isinstance(data, dict) and data:
            key = sorted(data)[int(cut * (len(data) - 1))]
            data[key] = value
        path.write_text(json.dumps(data), encoding="utf-8")
    else:
        path.unlink()

    def read_all():
        res = Results(copy)
        res.questions, res.documents, res.runs  # noqa: B018 - reading is the test
        res.matrix(res.metrics[0])

    before = listing(root)
    try:
        read_all()
    except InputError as exc:
        message = str(exc)
        assert "\n" not in message and str(copy) in message, message
    result = runner.invoke(app, ["compare", str(copy), "--rounds", "100"])
    assert result.exit_code in (0, 2), result.output
    assert "Traceback" not in result.output
    if result.exit_code == 2:
        assert [x for x in result.stderr.splitlines() if x.strip()][0].startswith("error: ")
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert listing(root) == before
    shutil.rmtree(root, ignore_errors=True)


answer_rows = st.one_of(
    json_values,
    mutated(
        {
            "system": "whole",
            "question": "q1",
            "answer": "Cats sleep",
            "reader": "test:m",
            "k": 1,
            "judge": "test:j",
            "grade": "correct",
            "hand": "correct",
            "answer_sha": "abc",
            "latency_s": 0.5,
        },
        {
            "system": json_values | drop | st.just("other"),
            "question": json_values | drop | st.just("q9"),
            "answer": json_values | drop,
            "k": json_values | drop,
            "grade": json_values | drop | st.sampled_from(["meh", "unscored"]),
            "hand": json_values | drop | st.just("x"),
            "latency_s": json_values | drop,
            "judge": json_values | drop,
        },
    ),
)


@FUZZ
@given(
    name=st.sampled_from(["reader.jsonl", "grades.jsonl", "hand.jsonl", "meta.json"]),
    data=jsonl_files(answer_rows),
)
def test_fuzz_answer_files(saved, name, data):
    root = workdir()
    copy = root / "r"
    shutil.copytree(saved, copy)
    (copy / "answers").mkdir()
    (copy / "answers" / name).write_bytes(data)
    before = listing(root)
    try:
        load_answer_set(copy)
    except InputError as exc:
        assert "\n" not in str(exc) and str(copy) in str(exc), str(exc)
    assert listing(root) == before
    shutil.rmtree(root, ignore_errors=True)


good_ranked = {
    "qid": "q1",
    "ranked": [{"doc": "cats.md", "start": 0, "end": 10, "score": 2.0}, ["dogs.md", 1.0]],
}
ranked_rows = st.one_of(
    mutated(
        good_ranked,
        {
            "qid": ids | drop,
            "ranked": json_values | drop | st.just([]),
            "ranked.0": json_values | drop | st.sampled_from(["cats.md", "cats.md:0-4", "x:9-2"]),
            "ranked.0.doc": json_values | drop | st.sampled_from(["nope.md", "dogs.md"]),
            "ranked.0.start": offsets | drop,
            "ranked.0.end": offsets | drop,
            "ranked.0.score": offsets | drop,
            "ranked.1": json_values | drop,
            "ranked.1.1": offsets,
        },
    ),
    json_values,
)
trec_tokens = st.one_of(
    st.sampled_from(
        ["q1", "q2", "Q0", "0", "cats.md", "dogs.md:0-9", "nope.md", "1", "2", "-3", "2.5"]
        + ["nan", "inf", "1e999", "-0", "x", "t", "\ufeffq1", "\u00a0"]
    ),
    st.text(max_size=4),
)


@st.composite
def trec_files(draw, fields: int):
    """Lines of mostly ``fields`` whitespace-separated tokens, any line ends, stray bytes."""
    lines = []
    for _ in range(draw(st.integers(min_value=0, max_value=5))):
        n = draw(st.sampled_from([fields, fields, fields, fields - 1, fields + 1, 0]))
        sep = draw(st.sampled_from([" ", "\t", "  "]))
        lines.append(sep.join(draw(st.lists(trec_tokens, min_size=n, max_size=n))))
    end = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    data = end.join(lines).encode("utf-8", "surrogatepass")
    if draw(st.booleans()):
        data += draw(st.binary(max_size=6))
    return data


@FUZZ
@given(data=jsonl_files(ranked_rows))
def test_fuzz_jsonl_run_file(data):
    from ragmeter.retrieval.external import RunFileRetriever

    path = workdir() / "mine.jsonl"
    path.write_bytes(data)
    only_input_errors(path, lambda: RunFileRetriever(path=path, docs=DOCS).search(QS, k=5))


@FUZZ
@given(data=trec_files(6))
def test_fuzz_trec_run_file(data):
    from ragmeter.retrieval.external import RunFileRetriever

    path = workdir() / "mine.trec"
    path.write_bytes(data)
    only_input_errors(path, lambda: RunFileRetriever(path=path, docs=DOCS).search(QS, k=5))


@FUZZ
@given(data=trec_files(4))
def test_fuzz_trec_qrels_file(data):
    from ragmeter.retrieval.trec import read_qrels

    path = workdir() / "judged.qrels"
    path.write_bytes(data)
    only_input_errors(path, lambda: read_qrels(path))


QS = [("q1", "how long do cats sleep"), ("q2", "do dogs bark")]


# --- command-line values --------------------------------------------------------------------

flag_text = st.one_of(
    st.text(
        alphabet=st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00"), max_size=8
    ),
    st.integers(min_value=-(2**70), max_value=2**70).map(str),
    st.sampled_from(["a,b", ",", "1,,3", "0", "-1", "1e3", "nan", "inf", "4294967296", "[/x]"]),
)


@FUZZ
@given(
    flag=st.sampled_from(["--ks", "--seed", "--rounds", "--method", "--metric", "--strategies"]),
    value=flag_text,
)
def test_fuzz_search_flags(flag, value):
    root = workdir()
    out = root / "out"
    # the corpus does not exist: a value that passes its check stops there, before any search
    args = ["search", "--corpus", str(root / "missing"), "--testset", str(root / "q.jsonl")]
    result = runner.invoke(app, [*args, flag, value, "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    errors = [x for x in result.stderr.splitlines() if x.strip()]
    assert len(errors) == 1, result.stderr
    assert not out.exists()
    shutil.rmtree(root, ignore_errors=True)


@FUZZ
@given(
    flag=st.sampled_from(["--concurrency", "--max-tokens", "--timeout", "--k", "--limit"]),
    value=flag_text,
)
def test_fuzz_answer_flags(saved, flag, value):
    root = workdir()
    copy = root / "r"
    shutil.copytree(saved, copy)
    result = runner.invoke(app, ["answer", str(copy), "--reader", "nope:model", flag, value])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert not (copy / "answers").exists()
    shutil.rmtree(root, ignore_errors=True)


# --- known bad inputs: one line naming the file or key, exit 2, nothing written --------------


def one_line(result, *needles):
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    lines = [x for x in result.stderr.splitlines() if x.strip()]
    assert len(lines) == 1, result.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def small_project(root: Path) -> Path:
    docs = root / "docs"
    docs.mkdir()
    for d in DOCS:
        (docs / d.id).write_text(d.text)
    rows = [
        {"id": "q1", "question": "how long do cats sleep", "answers": [{"text": "Cats sleep"}]},
        {"id": "q2", "question": "do dogs bark", "answers": [{"text": "Dogs bark"}]},
    ]
    (root / "q.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root


@pytest.mark.parametrize(
    ("grade", "needle"),
    [
        ("null", "None, not a whole number"),
        ("NaN", "nan, not a whole number"),
        ("Infinity", "inf, not a whole number"),
        ("[1]", "[1], not a whole number"),
        ('"2"', "'2', not a whole number"),
        ("99999999999999999999", "out of range"),
    ],
)
def test_qrels_json_grades_are_whole_numbers_in_range(tmp_path, grade, needle):
    (tmp_path / "qrels.json").write_text('{"1": {"d1": ' + grade + "}}")
    (tmp_path / "a.run").write_text("1 Q0 d1 1 3 a\n")
    out = tmp_path / "out"
    args = ["evaluate", str(tmp_path / "a.run"), "--qrels", str(tmp_path / "qrels.json")]
    one_line(runner.invoke(app, [*args, "--out", str(out)]), "qrels.json", "1/d1", needle)
    assert not out.exists()


def test_trec_qrels_grade_past_the_range_never_wraps(tmp_path):
    from ragmeter.scoring.trec import read_qrels

    (tmp_path / "q.txt").write_text("1 0 d1 99999999999999999999\n")
    with pytest.raises(InputError, match=r"q.txt:1: grade .* out of range"):
        read_qrels(tmp_path / "q.txt")


def test_empty_qrels_names_the_file(tmp_path):
    (tmp_path / "qrels.json").write_text("{}")
    (tmp_path / "a.run").write_text("1 Q0 d1 1 3 a\n")
    args = ["evaluate", str(tmp_path / "a.run"), "--qrels", str(tmp_path / "qrels.json")]
    one_line(runner.invoke(app, [*args, "--out", str(tmp_path / "o")]), "qrels.json", "no judg")


def test_a_gz_cut_short_names_the_file(tmp_path):
    import gzip

    data = gzip.compress(b"1 0 d1 1\n" * 50)
    (tmp_path / "q.txt.gz").write_bytes(data[: len(data) // 2])
    (tmp_path / "a.run").write_text("1 Q0 d1 1 3 a\n")
    args = ["evaluate", str(tmp_path / "a.run"), "--qrels", str(tmp_path / "q.txt.gz")]
    one_line(runner.invoke(app, [*args, "--out", str(tmp_path / "o")]), "q.txt.gz", "cut short")
    rows = json.dumps({"id": "q1", "question": "cats?", "answers": [{"doc": "cats.md"}]})
    data = gzip.compress((rows + "\n").encode() * 40)
    (tmp_path / "t.json.gz").write_bytes(data[: len(data) // 2])
    from ragmeter.inputs.testset import _gz_text

    with pytest.raises(InputError, match="t.json.gz: cannot read .* cut short"):
        _gz_text(tmp_path / "t.json.gz")


CONFIG_CASES = {
    "depth": ("[search]\ndepth = -1\n", "depth must be at least 1, got -1"),
    "rounds": ("[stats]\nrounds = 1000000000000\n", "rounds must be at least 100 and at most"),
    "k1": (
        '[search]\nretrievers = ["b"]\n[[retriever]]\nname = "b"\nkind = "bm25"\nk1 = "high"\n',
        "'b': k1 = 'high' must be a number",
    ),
    "same name": (
        '[search]\nstrategies = ["s"]\n[[strategy]]\nname = "s"\nkind = "whole"\n'
        '[[strategy]]\nname = "s"\nkind = "sentence"\n',
        "[[strategy]] number 2 has the name 's' of number 1",
    ),
}


@pytest.mark.parametrize("case", sorted(CONFIG_CASES))
def test_bad_config_values_are_one_line_naming_the_key(tmp_path, case):
    root = small_project(tmp_path)
    body, needle = CONFIG_CASES[case]
    toml = '[corpus]\npath = "docs"\n[testset]\npath = "q.jsonl"\n' + body
    (root / "ragmeter.toml").write_text(toml)
    out = root / "out"
    result = runner.invoke(app, ["search", str(root / "ragmeter.toml"), "--out", str(out)])
    one_line(result, "ragmeter.toml", needle)
    assert not out.exists()


def test_rounds_and_seed_flags_are_checked_everywhere(tmp_path):
    root = small_project(tmp_path)
    args = ["search", "--corpus", str(root / "docs"), "--testset", str(root / "q.jsonl")]
    out = root / "out"
    one_line(runner.invoke(app, [*args, "--rounds", str(10**12), "--out", str(out)]), "rounds")
    assert runner.invoke(app, [*args, "--rounds", "200", "--out", str(out)]).exit_code == 0
    check = ["check", str(out), str(out), "--system", "whole"]
    one_line(runner.invoke(app, [*check, "--seed", "-1"]), "--seed", "got -1")
    one_line(runner.invoke(app, [*check, "--rounds", str(10**12)]), "--rounds")


def test_metric_names_are_case_insensitive_on_the_command_line(tmp_path):
    root = small_project(tmp_path)
    args = ["search", "--corpus", str(root / "docs"), "--testset", str(root / "q.jsonl")]
    out = root / "out"
    result = runner.invoke(
        app, [*args, "--ks", "1,2", "--metric", "RECALL@2", "--rounds", "200", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert Results(out).summary.metric == "recall@2"


def test_metric_names_are_case_insensitive_in_the_config(tmp_path):
    root = small_project(tmp_path)
    toml = '[corpus]\npath = "docs"\n[testset]\npath = "q.jsonl"\n[search]\nks = [1, 2]\n'
    (root / "ragmeter.toml").write_text(toml + '[stats]\nmetric = "RECALL@2"\nrounds = 200\n')
    out = root / "out"
    result = runner.invoke(app, ["search", str(root / "ragmeter.toml"), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert Results(out).summary.metric == "recall@2"


def python_chunker_project(root: Path, body: str) -> Path:
    small_project(root)
    proj = root / "proj"
    proj.mkdir()
    (proj / "mine.py").write_text(body)
    (proj / "ragmeter.toml").write_text(
        '[corpus]\npath = "../docs"\n[testset]\npath = "../q.jsonl"\n'
        '[search]\nstrategies = ["mine"]\n'
        '[[strategy]]\nname = "mine"\nkind = "python"\nfunction = "mine.py:chunk"\n'
    )
    return proj / "ragmeter.toml"


def test_a_python_chunker_file_is_found_beside_its_config(tmp_path, monkeypatch):
    config = python_chunker_project(tmp_path, "def chunk(text):\n    return [text]\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    result = runner.invoke(app, ["search", str(config), "--rounds", "200", "--out", "r"])
    assert result.exit_code == 0, result.output
    assert Results(elsewhere / "r").systems


def test_a_chunker_that_calls_sys_exit_is_an_error_not_a_silent_success(tmp_path):
    body = "import sys\n\ndef chunk(text):\n    sys.exit(0)\n"
    config = python_chunker_project(tmp_path, body)
    out = tmp_path / "r"
    result = runner.invoke(app, ["search", str(config), "--rounds", "200", "--out", str(out)])
    one_line(result, "mine.py:4", "sys.exit(0)")
    assert not out.exists()


@pytest.mark.parametrize(
    ("address", "needle"),
    [("127.0.0.1:9", "cannot reach a Ray cluster"), ("not an address", "is not host:port")],
)
def test_a_bad_ray_address_is_one_line_at_once(tmp_path, address, needle):
    pytest.importorskip("ray")
    root = small_project(tmp_path)
    toml = '[corpus]\npath = "docs"\n[testset]\npath = "q.jsonl"\n'
    toml += f'[engine]\nkind = "ray"\naddress = "{address}"\n'
    (root / "ragmeter.toml").write_text(toml)
    out = root / "out"
    result = runner.invoke(app, ["search", str(root / "ragmeter.toml"), "--out", str(out)])
    one_line(result, address, needle)
    assert not out.exists()

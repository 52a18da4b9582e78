"""Bad input at every boundary: one line naming the file and line (or question id), exit 2."""

import json
import re
import shutil

import pytest
from typer.testing import CliRunner

from ragmeter.cli import app
from ragmeter.errors import InputError
from ragmeter.files.io import read_jsonl
from ragmeter.inputs.config import Config, load_config
from ragmeter.inputs.corpus import Document, load_corpus
from ragmeter.inputs.testset import load_testset
from ragmeter.runs.pipeline import run_search
from ragmeter.runs.results import Results, save_results

runner = CliRunner()

DOC = Document("cats.md", "Cats sleep for sixteen hours a day. Cats purr when content.")


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def line(**fields):
    return json.dumps(fields) + "\n"


# --- test sets ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("start", "end", "message"),
    [
        ("ten", 20, r"q\.jsonl:1: question q1: answers\[0\]\.start must be a whole number"),
        (0.0, 20, "start must be a whole number, got 0.0"),
        (4.7, 20.2, "start must be a whole number, got 4.7"),
        (False, True, "start must be a whole number, got False"),
        (-1, 5, "start must not be negative"),
    ],
)
def test_offsets_must_be_whole_numbers(tmp_path, start, end, message):
    p = write(
        tmp_path / "q.jsonl",
        line(id="q1", question="x?", answers=[{"doc": "cats.md", "start": start, "end": end}]),
    )
    with pytest.raises(InputError, match=message):
        load_testset(p, [DOC])


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_offsets_are_not_json(tmp_path, constant):
    p = write(
        tmp_path / "q.jsonl",
        '{"id": "q1", "question": "x", "answers": [{"doc": "cats.md", "start": '
        + constant
        + ', "end": 3}]}\n',
    )
    with pytest.raises(InputError, match=rf"q\.jsonl:1: malformed JSON \({constant} is not valid"):
        load_testset(p, [DOC])


@pytest.mark.parametrize(
    ("row", "message"),
    [
        (
            {"id": "q1", "question": "  ", "answers": [{"text": "Cats"}]},
            "question must not be empty",
        ),
        ({"question": "x", "answers": [{"text": "Cats"}]}, r"q\.jsonl:1: id is missing"),
        ({"id": 1.5, "question": "x", "answers": [{"text": "Cats"}]}, "string or a whole number"),
        ({"id": "q1", "question": "x", "answers": []}, "answers must not be empty"),
        ({"id": "q1", "question": "x", "answers": "Cats"}, "answers must be a list"),
        ({"id": "q1", "question": "x", "answers": [3]}, r"answers\[0\] must be an object"),
    ],
)
def test_question_lines_are_checked(tmp_path, row, message):
    p = write(tmp_path / "q.jsonl", line(**row))
    with pytest.raises(InputError, match=message):
        load_testset(p, [DOC])


def test_chroma_reference_without_start_index(tmp_path):
    refs = json.dumps([{"content": "Cats sleep", "end_index": 10}])
    p = write(
        tmp_path / "questions_df.csv",
        'question,references,corpus_id\n"How long?","' + refs.replace('"', '""') + '",cats\n',
    )
    with pytest.raises(
        InputError,
        match=r"questions_df\.csv:2: question cats-001: references\[0\]: start_index is missing",
    ):
        load_testset(p, [Document("cats.md", DOC.text)])


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([{"title": "t"}], "the value must be an object, got"),
        ({"data": "text"}, "data must be a list"),
        (
            {
                "data": [
                    {
                        "title": "t",
                        "paragraphs": [
                            {
                                "context": "abc",
                                "qas": [
                                    {
                                        "question": "q?",
                                        "answers": [{"text": "a", "answer_start": 0}],
                                    }
                                ],
                            }
                        ],
                    }
                ]
            },
            r"qas\[0\]\.id is missing",
        ),
        (
            {
                "data": [
                    {
                        "title": "t",
                        "paragraphs": [
                            {
                                "context": "abc",
                                "qas": [
                                    {
                                        "id": "x9",
                                        "question": "q?",
                                        "answers": [{"text": "a", "answer_start": "0"}],
                                    }
                                ],
                            }
                        ],
                    }
                ]
            },
            r"question x9: .*answer_start must be a whole number",
        ),
    ],
)
def test_squad_shapes(tmp_path, data, message):
    p = write(tmp_path / "squad.json", json.dumps(data))
    with pytest.raises(InputError, match=message):
        load_testset(p, [])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"data": "nope"}', r"s\.json: data must be a list"),
        ('[{"title": "t"}]', r"s\.json: the value must be an object"),
        ('{"data": [{"paragraphs": [{"text": "x"}]}]}', r"paragraphs\[0\]\.context is missing"),
    ],
)
def test_squad_corpus_shapes(tmp_path, text, message):
    p = write(tmp_path / "s.json", text)
    with pytest.raises(InputError, match=message):
        load_corpus(p)


# --- config ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ("[serach]\nks = [1]\n", r"unknown section \[serach\] \(did you mean 'search'\?\)"),
        ("[stat]\nseed = 2\n", r"unknown section \[stat\] \(did you mean 'stats'\?\)"),
        ("[search]\nkz = [1]\n", r"unknown key \[search\] kz \(did you mean 'ks'\?\)"),
        ('[search]\nks = "5"\n', r"\[search\] ks must be a list of whole numbers, got '5'"),
        ('[search]\ndepth = "x"\n', r"\[search\] depth must be a whole number, got 'x'"),
        ("[search]\ndepth = 2.5\n", r"\[search\] depth must be a whole number, got 2.5"),
        ('[search]\nstrategies = "sentence"\n', r"\[search\] strategies must be a list of strings"),
        ("[search]\nks = [1, true]\n", r"\[search\] ks must be a list of whole numbers"),
        ("[stats]\nseed = 1099511627776\n", "seed must be a whole number from 0 to 4294967295"),
        ("[stats]\nseed = -1\n", "seed must be a whole number from 0"),
        ("[stats]\nconfidence = nan\n", "confidence must be between"),
        ("search = 3\n", r"search must be a \[search\] table"),
        ("[strategy]\nname = 'x'\n", r"write \[\[strategy\]\]"),
        ("[[strategy]]\nkind = 'fixed'\n", r"\[\[strategy\]\] number 1 needs a name"),
    ],
)
def test_config_errors(tmp_path, toml, message):
    p = write(tmp_path / "ragmeter.toml", toml)
    with pytest.raises(InputError, match=message) as info:
        load_config(p)
    assert str(info.value).startswith(str(p))
    assert "\n" not in str(info.value)


def test_config_that_is_not_utf8_or_a_folder(tmp_path):
    p = write(tmp_path / "ragmeter.toml", b"[search]\n# caf\xe9\n")
    with pytest.raises(InputError, match=r"ragmeter\.toml:2: not valid UTF-8"):
        load_config(p)
    with pytest.raises(InputError, match="is a folder"):
        load_config(tmp_path)


def test_config_built_in_python_is_type_checked():
    with pytest.raises(InputError, match="ks must be a list of whole numbers"):
        Config(ks=("5",)).validate()
    with pytest.raises(InputError, match="seed must be a whole number from 0 to 4294967295"):
        Config(seed=2**40).validate()


# --- results read back ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    root = tmp_path_factory.mktemp("saved")
    docs = [DOC, Document("dogs.md", "Dogs bark at strangers. Dogs dig.")]
    from ragmeter.inputs.testset import AnswerSpan, Question, TestSet

    qs = [
        Question("q1", "cats sleep", (AnswerSpan("cats.md", 0, 10, DOC.text[:10]),)),
        Question("q2", "dogs bark", (AnswerSpan("dogs.md", 0, 9, "Dogs bark"),)),
    ]
    cfg = Config(strategies=("whole",), ks=(1,), rounds=200)
    return save_results(run_search(cfg, docs, TestSet(qs)), root / "r")


def damaged(saved, tmp_path, name, text):
    copy = tmp_path / "r"
    shutil.copytree(saved, copy)
    write(copy / name, text)
    return copy


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("scores.json", "[1, 2]", r"scores\.json: expected a JSON object, got list"),
        ("scores.json", '{"systems": ["whole"]}', r"scores\.json: questions is missing"),
        ("meta.json", "[]", r"meta\.json: expected a JSON object"),
        ("summary.json", "{", r"summary\.json:1: malformed JSON"),
    ],
)
def test_damaged_results_files(saved, tmp_path, name, text, message):
    copy = damaged(saved, tmp_path, name, text)
    with pytest.raises(InputError, match=message):
        Results(copy)
    result = runner.invoke(app, ["compare", str(copy)])
    assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1


def test_truncated_runs_file(saved, tmp_path):
    text = (saved / "runs.jsonl").read_text()
    copy = damaged(saved, tmp_path, "runs.jsonl", text[: len(text) // 2 + 5])
    with pytest.raises(InputError, match=r"runs\.jsonl:\d+: (malformed JSON|.*missing)"):
        _ = Results(copy).runs
    result = runner.invoke(app, ["report", str(copy), "--out", str(tmp_path / "x.html")])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and not (tmp_path / "x.html").exists()


def test_read_jsonl_names_path_and_line(tmp_path):
    p = write(tmp_path / "a.jsonl", '{"a": 1}\n\n[1]\n')
    with pytest.raises(InputError, match=r"a\.jsonl:3: expected a JSON object"):
        list(read_jsonl(p))
    p = write(tmp_path / "b.jsonl", '{"a": 1}\n{"b": ')
    assert list(read_jsonl(p, torn_tail_ok=True)) == [(1, {"a": 1})]
    with pytest.raises(InputError, match=r"b\.jsonl:2: malformed JSON"):
        list(read_jsonl(p))


def test_read_jsonl_reads_a_line_at_a_time(tmp_path):
    p = tmp_path / "c.jsonl"
    p.write_bytes(b'{"a": 1}\r\n{"b": "\xff"}\n{"c": ')
    lines = read_jsonl(p, torn_tail_ok=True)
    assert next(lines) == (1, {"a": 1})  # before the bad byte further on is read
    with pytest.raises(InputError, match=r"c\.jsonl:2: not valid UTF-8 \(byte 17\)"):
        next(lines)
    q = tmp_path / "d.jsonl"
    q.write_bytes(b'{"a": 1}\n{"b": \n{"c": 3}\n')  # a torn line that is not the last
    with pytest.raises(InputError, match=r"d\.jsonl:2: malformed JSON"):
        list(read_jsonl(q, torn_tail_ok=True))


def test_read_jsonl_holds_one_line_not_the_file(tmp_path):
    import tracemalloc

    p = tmp_path / "big.jsonl"
    line = json.dumps({"system": "s", "question": "q", "items": list(range(60))}) + "\n"
    p.write_text(line * 40_000)  # about 9 MB
    tracemalloc.start()
    try:
        count = sum(1 for _ in read_jsonl(p))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert count == 40_000
    assert peak < 1_000_000  # the whole file would be 9 MB, its lines as much again


# --- command-line values --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["search", "--ks", "a,b"], "--ks 'a,b': 'a' is not a whole number"),
        (["search", "--ks", ","], "--ks ',': give comma-separated whole numbers"),
        (["search", "--seed", str(2**40)], "seed must be a whole number from 0 to 4294967295"),
        (["search", "--seed", "-1"], "seed must be a whole number"),
        (["search", "--rounds", "5"], "rounds must be at least 100"),
    ],
)
def test_bad_cli_values(tmp_path, args, message):
    result = runner.invoke(app, [*args, "--out", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    lines = [x for x in result.stderr.splitlines() if x.startswith("error:")]
    assert len(lines) == 1 and message in lines[0], result.stderr
    assert "Traceback" not in result.output
    assert not (tmp_path / "out").exists()


def test_compare_seed_out_of_range(saved):
    result = runner.invoke(app, ["compare", str(saved), "--seed", str(2**40)])
    assert result.exit_code == 2 and "--seed must be a whole number" in result.stderr


def test_error_line_is_one_line_without_markup(tmp_path):
    p = write(tmp_path / "ragmeter.toml", "[search]\nstrategies = ['[/oops]']\n")
    result = runner.invoke(app, ["search", str(p), "--corpus", str(tmp_path)])
    assert result.exit_code == 2
    assert re.fullmatch(r"error: .+", result.stderr.strip())


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["n_ctx=abc"], "option n_ctx='abc' has the wrong type"),
        (["n_ctx=0"], "option n_ctx must be at least 1"),
        (["chat_format=3"], "option chat_format=3 has the wrong type"),
        (["n_ctx"], "write KEY=VALUE"),
    ],
)
def test_bad_backend_options(saved, tmp_path, options, message):
    copy = tmp_path / "r"
    shutil.copytree(saved, copy)
    args = ["answer", str(copy), "--reader", "gguf:/no/such/model.gguf"]
    for option in options:
        args += ["--option", option]
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], result.stderr
    assert not (copy / "answers").exists()


def test_audit_seed_out_of_range(tmp_path):
    result = runner.invoke(
        app,
        [
            "questions",
            "audit",
            str(tmp_path / "q.jsonl"),
            "--corpus",
            str(tmp_path),
            "--seed",
            str(2**40),
        ],
    )
    assert result.exit_code == 2 and "--seed must be a whole number" in result.stderr

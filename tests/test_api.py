"""The top-level notebook API: cheap to import, and a search in memory reads,
compares and shows itself exactly as the results directory it saves."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import EXAMPLE

import ragmeter
from ragmeter import api, stats
from ragmeter.comparison import verdicts
from ragmeter.comparison.summary import Summary
from ragmeter.comparison.tables import ShowsItself, format_estimate
from ragmeter.errors import InputError, MissingExtra
from ragmeter.inputs.config import Config
from ragmeter.runs.evaluate import evaluate_files
from ragmeter.runs.results import save_results

HEAVY = ("rich", "torch", "altair", "pandas", "sentence_transformers", "llama_cpp", "typer")


def run_python(code: str) -> str:
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=900, check=True
    )
    return out.stdout.strip()


def test_import_is_cheap_and_the_api_pulls_in_nothing_heavy():
    loaded = run_python("import ragmeter, sys; print(sorted(sys.modules))")
    for name in ("numpy", "httpx", *HEAVY):
        assert f"'{name}'" not in loaded, name
    code = (
        "import ragmeter, sys\n"
        "for name in ragmeter.__all__: getattr(ragmeter, name)\n"
        f"print([m for m in {HEAVY!r} if m in sys.modules])"
    )
    assert run_python(code) == "[]"


def test_the_public_names():
    assert ragmeter.bootstrap is stats.bootstrap
    from ragmeter.inputs.config import Config
    from ragmeter.inputs.corpus import load_corpus
    from ragmeter.inputs.testset import load_testset
    from ragmeter.runs.pipeline import SearchRun
    from ragmeter.runs.results import Results

    assert (ragmeter.Config, ragmeter.Results, ragmeter.SearchRun) == (Config, Results, SearchRun)
    assert (ragmeter.load_corpus, ragmeter.load_testset) == (load_corpus, load_testset)
    assert set(ragmeter.__all__) <= set(dir(ragmeter))
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        ragmeter.nothing  # noqa: B018


@pytest.fixture(scope="module")
def notebook(tmp_path_factory):
    """A search in memory on the shipped example, and the directory it saves."""
    run = ragmeter.search(
        EXAMPLE / "posts",
        EXAMPLE / "questions.jsonl",
        strategies=["sentence", "fixed", "parent-400"],
        rounds=500,
    )
    saved = ragmeter.Results(save_results(run, tmp_path_factory.mktemp("nb") / "results"))
    return run, saved


def test_a_search_in_memory_reads_like_its_results_directory(notebook):
    run, saved = notebook
    assert [str(s) for s in run.systems] == saved.systems == ["sentence", "fixed", "parent-400"]
    assert run.metrics == saved.metrics and run.question_ids == saved.question_ids
    for system in run.systems:  # a SystemRun or its name, as a Results takes a name
        for metric in ("recall@5", "ndcg@10", "words@5"):
            np.testing.assert_array_equal(
                run.scores(system, metric), saved.scores(str(system), metric)
            )
            np.testing.assert_array_equal(
                run.scores(str(system), metric), saved.scores(system, metric)
            )
    np.testing.assert_array_equal(
        run.matrix("mrr@5", ["fixed", "sentence"]), saved.matrix("mrr@5", ["fixed", "sentence"])
    )
    # the summary is computed once, and is what summary.json holds
    assert run.summary is run.summary
    assert json.loads(json.dumps(run.summary.to_json())) == saved.summary.to_json()
    assert run.summary == saved.summary  # typed, and equal when read back
    with pytest.raises(InputError, match="unknown system 'nope'"):
        run.scores("nope", "recall@5")
    with pytest.raises(InputError, match="unknown metric"):
        run.scores("fixed", "recall@7")


def test_both_show_the_same_table(notebook):
    run, saved = notebook
    assert run.to_markdown() == saved.to_markdown()
    assert run._repr_html_() == saved._repr_html_()
    est = saved.summary.estimate("sentence", "recall@5")
    assert format_estimate(est, "recall@5") in run.to_markdown()
    assert "seed 1, 500 rounds" in run.to_markdown()
    frame = run.to_pandas()
    row = frame[(frame.system == "sentence") & (frame.metric == "recall@5")].iloc[0]
    assert (row["mean"], row["low"], row["high"]) == (est.mean, est.low, est.high)
    assert (row["seed"], row["rounds"]) == (1, 500)
    assert len(frame) == len(run.systems) * len(run.metrics)
    long = saved.to_pandas(per_question=True)
    assert len(long) == len(run.systems) * len(run.metrics) * len(run.question_ids)
    mine = long[(long.system == "fixed") & (long.metric == "recall@5")]["score"].to_numpy()
    np.testing.assert_array_equal(mine, run.scores("fixed", "recall@5"))


def test_compare_in_memory_and_on_disk_agree_with_stats(notebook):
    run, saved = notebook
    every = ragmeter.compare(run)
    assert every == ragmeter.compare(saved) == ragmeter.compare(saved.path)
    # the same rule, family and numbers as the saved summary the CLI and report show
    assert list(every) == saved.summary.comparisons
    assert every.rule == saved.summary.comparison_rule
    assert every.rule.header in every.to_markdown()
    [pair] = ragmeter.compare(run, "fixed", "parent-400", metric="ndcg@5", seed=3, rounds=200)
    matrix = np.vstack([run.scores("fixed", "ndcg@5"), run.scores("parent-400", "ndcg@5")])
    table = verdicts.compare_family(matrix, ["fixed", "parent-400"], rounds=200, seed=3)
    assert pair == table.rows[0] and table.rule.pairs == 1
    # adjust="none" is the seed's per-pair percentile rule, bit for bit
    [seed_rule] = ragmeter.compare(
        run, "fixed", "parent-400", metric="ndcg@5", seed=3, rounds=200, adjust="none"
    )
    expected = stats.paired(
        run.scores("fixed", "ndcg@5"),
        run.scores("parent-400", "ndcg@5"),
        200,
        3,
        ("fixed", "parent-400"),
    )
    assert (seed_rule.difference.low, seed_rule.difference.high) == (
        expected.difference.low,
        expected.difference.high,
    )
    table = every.to_markdown()
    assert table.startswith("| A ") and "| p (max-T) |" in table.splitlines()[0]
    assert "Paired comparisons on recall@5. Rule: Westfall-Young step-down max-T over 3" in table
    assert table.endswith("seed 1, 500 rounds")
    assert all(c.verdict in table for c in every)
    assert every.to_pandas()["verdict"].tolist() == [c.verdict for c in every]
    with pytest.raises(InputError, match="(?i)both a and b"):
        ragmeter.compare(run, "fixed")


def test_search_takes_a_config_a_toml_or_paths(tmp_path):
    toml = tmp_path / "ragmeter.toml"
    toml.write_text(
        f'[corpus]\npath = "{EXAMPLE / "posts"}"\n'
        f'[testset]\npath = "{EXAMPLE / "questions.jsonl"}"\n'
        '[search]\nstrategies = ["whole"]\nks = [1, 3]\n[stats]\nrounds = 200\n',
        encoding="utf-8",
    )
    from_toml = ragmeter.search(toml)
    from_config = ragmeter.search(
        ragmeter.Config(corpus=str(EXAMPLE / "posts")),
        testset=EXAMPLE / "questions.jsonl",
        strategies=["whole"],
        ks=[1, 3],
        rounds=200,
    )
    from_keywords = ragmeter.search(
        corpus=EXAMPLE / "posts",
        testset=EXAMPLE / "questions.jsonl",
        strategies=("whole",),
        ks=(1, 3),
        rounds=200,
    )
    for run in (from_config, from_keywords):
        assert run.summary == from_toml.summary
    with pytest.raises(InputError, match="unknown search setting 'strategy'"):
        ragmeter.search(corpus="x", strategy="whole")


def test_to_pandas_without_pandas_says_what_to_install(notebook, monkeypatch):
    run, _ = notebook
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(MissingExtra, match="pip install pandas"):
        run.to_pandas()
    with pytest.raises(MissingExtra, match="pip install pandas"):
        ragmeter.compare(run, "sentence", "fixed").to_pandas()


def test_tables_escape_names():
    class Tiny(ShowsItself):
        systems = ["<b>x|y</b>"]
        metrics = ["recall@1"]
        question_ids = ["q1"]
        summary = Summary.from_json(
            {
                "metric": "recall@1",
                "seed": 1,
                "rounds": 100,
                "estimates": {
                    "<b>x|y</b>": {
                        "recall@1": {
                            "mean": 0.5,
                            "low": 0.25,
                            "high": 0.75,
                            "n": 4,
                            "rounds": 100,
                            "seed": 1,
                            "method": "percentile",
                            "rng": "mulberry32",
                        }
                    }
                },
            }
        )

    html = Tiny()._repr_html_()
    assert "<b>x" not in html and "&lt;b&gt;x|y&lt;/b&gt;" in html
    assert "50.0 [25.0, 75.0]" in html
    assert "x\\|y" in Tiny().to_markdown()  # a pipe does not break the Markdown row


def test_the_readme_python_example_runs(tmp_path, monkeypatch):
    readme = (Path(__file__).parents[1] / "README.md").read_text(encoding="utf-8")
    block = readme.split("## From Python", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    assert "import ragmeter\n" in block
    code = block.replace('"docs"', repr(str(EXAMPLE / "posts"))).replace(
        '"questions.jsonl"', repr(str(EXAMPLE / "questions.jsonl"))
    )
    monkeypatch.chdir(tmp_path)
    printed: list[str] = []
    exec(compile(code, "README.md", "exec"), {"print": lambda *a: printed.extend(map(str, a))})
    # the numbers the README shows are the numbers it prints
    for shown in printed:
        assert repr(shown) in block
    assert (tmp_path / "ragmeter-results" / "summary.json").is_file()


def test_a_run_in_memory_reprs_in_one_line_without_summarising():
    import ragmeter

    run = ragmeter.search(
        corpus=EXAMPLE / "posts",
        testset=EXAMPLE / "questions.jsonl",
        strategies=["fixed", "sentence"],
        rounds=200,
    )
    text = repr(run)
    assert text == "<SearchRun: 2 systems x 135 questions, compared on recall@5>"
    assert "summary" not in run.__dict__  # a repr draws no bootstrap


# ``ragmeter.api``: how ``search`` reads its arguments into a Config (the search itself replaced
# by a recorder), and ``compare`` passing every setting through.


@pytest.fixture()
def seen(monkeypatch):
    calls: list = []

    def run_search(cfg, progress=None):
        calls.append((cfg, progress))
        return "the run"

    monkeypatch.setattr(api, "run_search", run_search)
    return calls


def test_search_reads_its_arguments_into_a_config(seen, tmp_path):
    def hook(stage, done, total):
        return None

    out = api.search(corpus=Path("docs"), testset="q.jsonl", strategies=["a", "b"], progress=hook)
    assert out == "the run"
    cfg, progress = seen[-1]
    assert (cfg.corpus, cfg.testset, cfg.strategies, progress) == (
        "docs",
        "q.jsonl",
        ("a", "b"),
        hook,
    )
    api.search("docs", "q.jsonl", ks=[1, 3])
    cfg, _ = seen[-1]
    assert (cfg.corpus, cfg.testset, cfg.ks) == ("docs", "q.jsonl", (1, 3))
    api.search(Config(corpus="c", rounds=500), seed=9)
    cfg, _ = seen[-1]
    assert (cfg.corpus, cfg.rounds, cfg.seed) == ("c", 500, 9)
    api.search()
    assert seen[-1][0].corpus == Config().corpus
    toml = tmp_path / "ragmeter.toml"
    toml.write_text('[corpus]\npath = "from-toml"\n')
    api.search(toml)
    assert seen[-1][0].corpus == str(tmp_path / "from-toml")  # relative to the file
    api.search(toml, "q.jsonl")  # with a test set, the first argument is the corpus
    assert seen[-1][0].corpus == str(toml)


def test_search_refuses_a_test_set_twice_and_unknown_settings(seen):
    with pytest.raises(InputError, match="give the test set once"):
        api.search("docs", "q.jsonl", testset="other.jsonl")
    with pytest.raises(InputError, match="unknown search setting 'nope'"):
        api.search("docs", "q.jsonl", nope=1)
    assert seen == []


def test_compare_passes_every_setting(tmp_path):
    (tmp_path / "qrels.txt").write_text("".join(f"q{i} 0 d{i} 1\n" for i in range(30)))
    for name, hits in (("a", range(0, 30)), ("b", range(0, 30, 2)), ("c", range(0, 30, 3))):
        (tmp_path / f"{name}.run").write_text("".join(f"q{i} Q0 d{i} 1 1.0 {name}\n" for i in hits))
    runs = [tmp_path / f"{n}.run" for n in "abc"]
    run = evaluate_files(tmp_path / "qrels.txt", runs, ["recall@1", "mrr@1"], rounds=200).run
    c = api.compare(run, metric="mrr@1", seed=5, rounds=300, baseline="c")
    assert (c.metric, c.seed, c.rounds) == ("mrr@1", 5, 300)
    assert c.rule is not None and len(c) == 2 and all("c" in (r.a, r.b) for r in c)
    assert api._open(run) is run
    saved = run.save(tmp_path / "out")
    assert api._open(str(saved)).systems == ["a", "b", "c"]
    one = api.compare(run, "a", "b")
    assert [(r.a, r.b) for r in one] == [("a", "b")]
    planned = api.compare(run, pairs=[("c", "b")])
    assert [(r.a, r.b) for r in planned] == [("c", "b")]
    assert api.compare(run, adjust="none").rule.adjust != api.compare(run).rule.adjust

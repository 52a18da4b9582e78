"""``ragmeter.api``: how ``search`` reads its arguments into a Config (the search itself
replaced by a recorder), and ``compare`` passing every setting through."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragmeter import api
from ragmeter.config import Config
from ragmeter.errors import InputError
from ragmeter.evaluate import evaluate_files


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

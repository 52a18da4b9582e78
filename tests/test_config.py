"""ragmeter.toml: paths, named strategies and retrievers, and an external run file end to end."""

import pytest

from ragmeter.errors import InputError
from ragmeter.inputs.config import (
    MAX_ROUNDS,
    Config,
    _describe,
    check_rounds,
    check_seed,
    load_config,
)
from ragmeter.runs.pipeline import run_search


def write_case(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "cats.md").write_text("Cats sleep for sixteen hours a day.", encoding="utf-8")
    (docs / "dogs.md").write_text("Dogs have 300 million smell receptors.", encoding="utf-8")
    (tmp_path / "q.jsonl").write_text(
        '{"id": "q1", "question": "how long do cats sleep", '
        '"answers": [{"doc": "cats.md", "text": "sixteen hours"}]}\n'
        '{"id": "q2", "question": "how good is a dog nose", '
        '"answers": [{"doc": "dogs.md", "text": "300 million"}]}\n',
        encoding="utf-8",
    )
    # The user's own system ranked whole documents; q2 got it wrong.
    (tmp_path / "mine.trec").write_text(
        "q1 Q0 cats.md 1 9.0 mine\nq1 Q0 dogs.md 2 1.0 mine\n"
        "q2 Q0 cats.md 1 5.0 mine\nq2 Q0 dogs.md 2 4.0 mine\n",
        encoding="utf-8",
    )


def test_relative_paths_and_external_run_file(tmp_path, monkeypatch):
    write_case(tmp_path)
    (tmp_path / "ragmeter.toml").write_text(
        '[corpus]\npath = "docs"\n[testset]\npath = "q.jsonl"\n'
        '[search]\nstrategies = ["whole"]\nretrievers = ["bm25", "mine"]\nks = [1, 2]\n'
        "[stats]\nrounds = 200\n"
        '[[retriever]]\nname = "mine"\nkind = "run-file"\npath = "mine.trec"\n',
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path.parent)  # paths must not depend on the working directory
    cfg = load_config(tmp_path / "ragmeter.toml")
    assert cfg.corpus == str((tmp_path / "docs").resolve())
    mine = next(r for r in cfg.retrievers if isinstance(r, dict))
    assert mine["path"] == str((tmp_path / "mine.trec").resolve())
    run = run_search(cfg)
    by_name = {s.name: s for s in run.systems}
    assert set(by_name) == {"whole/bm25", "mine"}
    assert by_name["mine"].scores["recall@1"].tolist() == [1.0, 0.0]
    assert by_name["mine"].scores["mrr@2"].tolist() == [1.0, 0.5]
    # Whole-document items span the whole text of the document.
    item = by_name["mine"].items[1][1]
    assert (item.doc, item.start, item.end) == ("dogs.md", 0, 38)


def test_hybrid_parts_may_name_other_retrievers(tmp_path):
    write_case(tmp_path)
    (tmp_path / "ragmeter.toml").write_text(
        '[search]\nretrievers = ["hybrid"]\n'
        '[[retriever]]\nname = "mine"\nkind = "run-file"\npath = "mine.trec"\n'
        '[[retriever]]\nname = "hybrid"\nkind = "hybrid"\nof = ["bm25", "mine"]\nk = 60\n',
        encoding="utf-8",
    )
    cfg = load_config(tmp_path / "ragmeter.toml")
    hybrid = next(r for r in cfg.retrievers if isinstance(r, dict) and r["name"] == "hybrid")
    assert hybrid["of"][0] == "bm25"
    assert hybrid["of"][1]["kind"] == "run-file"
    assert hybrid["of"][1]["path"] == str((tmp_path / "mine.trec").resolve())


@pytest.mark.parametrize(
    "body, message",
    [
        ("[search]\nks = [0]\n", "ks must be positive"),
        ('[stats]\nmetric = "ndcg@7"\n', "needs k=7"),
        ('[stats]\nmethod = "normal"\n', "method must be"),
        ("[search\n", "invalid TOML"),
        ('[[retriever]]\nkind = "bm25"\n', "needs a name"),
        ('[stats]\nclusters = "docs"\n', "clusters must be one of auto, none, document, field"),
        ("[stats]\nclusters = 1\n", "clusters"),
    ],
)
def test_bad_config_is_one_clear_error(tmp_path, body, message):
    (tmp_path / "ragmeter.toml").write_text(body, encoding="utf-8")
    with pytest.raises(InputError, match=message):
        load_config(tmp_path / "ragmeter.toml")


def test_a_config_built_in_python_takes_lists_where_tuples_are_held():
    from ragmeter.errors import InputError
    from ragmeter.inputs.config import Config

    cfg = Config(strategies=["fixed", "sentence"], ks=[1, 5]).validate()
    assert cfg.strategies == ("fixed", "sentence") and cfg.ks == (1, 5)
    with pytest.raises(InputError, match=r"must be a list of strings, got \[.fixed., 3\]"):
        Config(strategies=["fixed", 3]).validate()


@pytest.mark.parametrize("mode", ["auto", "none", "document", "field"])
def test_every_clusters_setting_is_read_from_the_stats_table(tmp_path, mode):
    (tmp_path / "ragmeter.toml").write_text(f'[stats]\nclusters = "{mode}"\n', "utf-8")
    cfg = load_config(tmp_path / "ragmeter.toml")
    assert cfg.clusters == mode and cfg.to_dict()["stats"]["clusters"] == mode


# ``ragmeter.inputs.config``: every bound at its edge (confidence, rounds, seed, workers), the
# numbers a retriever entry must hold, and the type named in an error.


def test_confidence_lies_strictly_between_one_half_and_one():
    assert Config(confidence=0.99).validate().confidence == 0.99
    for bad in (0.5, 1.0, 1.5):
        with pytest.raises(InputError, match="confidence must be between 0.5 and 1"):
            Config(confidence=bad).validate()


def test_a_confidence_whose_level_rounds_to_zero_is_refused_as_the_confidence():
    # regression: 0.9999999999999999 passed this check, then the run failed on "alpha 0.0"
    with pytest.raises(InputError, match=r"^confidence 0\.9999999999999999 is too close to 1"):
        Config(confidence=0.9999999999999999).validate()
    assert Config(confidence=0.999999999).validate().confidence == 0.999999999


def test_rounds_and_seed_at_their_edges():
    assert MAX_ROUNDS == 10_000_000
    assert check_rounds(100) == 100 and check_rounds(MAX_ROUNDS) == MAX_ROUNDS
    for bad in (99, MAX_ROUNDS + 1, True, 1000.0):
        with pytest.raises(InputError, match="rounds must be at least 100"):
            check_rounds(bad)
    assert check_seed(0) == 0 and check_seed(2**32 - 1) == 2**32 - 1
    for bad in (-1, 2**32, False):
        with pytest.raises(InputError, match="seed must be a whole number"):
            check_seed(bad)


def test_engine_workers_are_a_whole_number_from_zero():
    assert Config(engine_workers=0).validate().engine_workers == 0
    assert Config(engine_workers=3).validate().engine_workers == 3
    for bad in (True, 2.5):
        with pytest.raises(InputError, match="workers must be a whole number"):
            Config(engine_workers=bad).validate()
    with pytest.raises(InputError, match=r"workers must be 0 \(auto\) or more"):
        Config(engine_workers=-1).validate()


def test_trec_eval_compat_scores_with_linear_gain():
    cfg = Config(trec_eval_compat=True).validate()
    assert cfg is not None and cfg.trec_eval_compat is True and cfg.gain == "linear"


@pytest.mark.parametrize(("key", "example"), [("k1", "1.5"), ("b", "0.75"), ("alpha", "0.5")])
def test_retriever_numbers_must_be_numbers(tmp_path, key, example):
    path = tmp_path / "ragmeter.toml"
    path.write_text(f'[[retriever]]\nname = "mine"\nkind = "bm25"\n{key} = "big"\n')
    with pytest.raises(InputError, match=rf"{key} = 'big' must be a number, e\.g\. {key} = "):
        load_config(path)
    with pytest.raises(InputError) as err:
        load_config(path)
    assert str(err.value).endswith(f"e.g. {key} = {example}")


def test_a_union_type_is_named_as_its_alternatives():
    assert _describe(int | str) == "a whole number or a string"
    assert _describe(tuple[int, ...]) == "a list of whole numbers"

"""``ragmeter.config``: every bound at its edge (confidence, rounds, seed, workers), the
numbers a retriever entry must hold, and the type named in an error."""

from __future__ import annotations

import pytest

from ragmeter.config import MAX_ROUNDS, Config, _describe, check_rounds, check_seed, load_config
from ragmeter.errors import InputError


def test_confidence_lies_strictly_between_one_half_and_one():
    assert Config(confidence=0.99).validate().confidence == 0.99
    for bad in (0.5, 1.0, 1.5):
        with pytest.raises(InputError, match="confidence must be between 0.5 and 1"):
            Config(confidence=bad).validate()


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

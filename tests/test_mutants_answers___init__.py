"""``ragmeter.answers``: the package's names are imported on first use; an unknown name
is an ``AttributeError`` as for any module, and ``dir()`` lists every public name."""

from __future__ import annotations

import pytest

import ragmeter.answers as answers


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        answers.nope  # noqa: B018
    assert not hasattr(answers, "answer_questionz")
    assert getattr(answers, "missing", "default") == "default"


def test_dir_lists_every_public_name():
    names = dir(answers)
    assert set(answers.__all__) <= set(names) and names == sorted(names)
    for name in answers.__all__:
        assert getattr(answers, name) is not None
    from ragmeter.answers.hand import hand_grade
    from ragmeter.answers.store import AnswerSet

    assert answers.hand_grade is hand_grade and answers.AnswerSet is AnswerSet

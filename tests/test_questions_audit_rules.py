"""``ragmeter.questions.audit_rules``: the plural folding of short ``-ies`` words, a
referring ``it`` that a later ``to`` does not make a placeholder, and a near-duplicate
pair exactly at the threshold."""

from __future__ import annotations

from ragmeter.inputs.testset import AnswerSpan, Question
from ragmeter.questions.audit_rules import context_reasons, copy_ratio, fold, near_duplicates


def test_four_letter_ies_words_lose_only_their_s():
    # "ties" is "tie" + s, not "ty" + ies: the question's "ties" is the passage's "tie"
    for plural, single in (("ties", "tie"), ("lies", "lie"), ("dies", "die")):
        assert fold(plural) == fold(single) == single, plural
    assert fold("flies") == "fly" and fold("queries") == "query"  # five letters and up: -y
    assert copy_ratio("How are ties broken?", "A tie is broken by the older id.") == 1.0


def test_a_referring_it_is_flagged_even_when_to_follows():
    # "does it fail to": not a placeholder subject (that needs "is it ..." or
    # "it takes/costs ..."), so the question leans on what "it" was
    assert context_reasons("Why does it fail to converge?") == [
        "'it' before anything it could refer to"
    ]
    assert context_reasons("Is it possible to merge two filters?") == []
    assert context_reasons("How long does it take to rebuild an index?") == []


def _q(qid: str, text: str) -> Question:
    return Question(qid, text, (AnswerSpan("d.md", 0, 1, "x"),))


FRUIT = (
    "apple banana cherry grape lemon mango melon olive peach pear plum quince walnut almond "
    "carrot celery garlic ginger onion pepper potato radish spinach tomato turnip"
).split()


def test_a_pair_exactly_at_the_threshold_is_a_near_duplicate():
    # 14 of 25 words shared, one set inside the other: Jaccard 14/25 = 0.56, "at least"
    # 0.56 (0.56 * 25 is 14.000000000000002 in floating point: the size test must not
    # rule the pair out)
    short, long = _q("a", " ".join(FRUIT[:14])), _q("b", " ".join(FRUIT))
    assert near_duplicates([short, long], 0.56) == {"b": ("a", 0.56)}
    assert near_duplicates([short, long], 0.57) == {}
    # the default 0.8: 4 of 5 words
    first, again = _q("a", " ".join(FRUIT[:4])), _q("b", " ".join(FRUIT[:5]))
    assert near_duplicates([first, again]) == {"b": ("a", 0.8)}


def test_a_run_together_word_is_not_a_pointer_to_the_text_around_it():
    # the rule needs "the" and "following" as two words: a typo gluing them is no
    # reference to a passage (and no other rule flags this question)
    assert context_reasons("What does thefollowing mean in a shell script?") == []
    assert context_reasons("What does the following mean in a shell script?") == [
        "points above or below: 'the following'"
    ]

"""What a run measured (ragmeter.scoring.measurement): the settings, the fingerprints, and
which differences make two runs incomparable."""

from __future__ import annotations

from types import SimpleNamespace as S

from ragmeter.scoring import measurement as m


class Q:
    def __init__(self, **d):
        self.d = d
        self.qrels = d.get("qrels")

    def to_dict(self):
        return self.d


def _config(**over):
    base = dict(trec_eval_compat=False, relevant_grade=2, ideal="index", gain="exp", depth=50)
    return S(**(base | {"ks": [1, 5]} | over))


def test_fingerprints_are_stable_so_saved_runs_stay_comparable():
    # a change to the digest makes every saved run incomparable with new ones
    docs = [S(id="b", text="two"), S(id="a", text="one \udc80")]
    assert m.corpus_fingerprint(docs) == "d6310598454cd8b346ad145825049f85"
    assert m.testset_fingerprint([Q(id="q1", text="é?")]) == "b5b0f798ee7a0e510958d4ea457a89fe"


def test_fingerprints_see_ids_texts_order_and_boundaries():
    fp = m.corpus_fingerprint
    one = [S(id="a", text="xy"), S(id="b", text="z")]
    assert fp(one) == fp(list(reversed(one)))  # id order, not file order
    assert fp(one) != fp([S(id="a", text="x"), S(id="b", text="yz")])  # boundaries count
    assert fp(one) != fp([S(id="a", text="xy"), S(id="c", text="z")])
    assert fp(one) != fp([S(id="a", text="xy"), S(id="b", text="Z")])
    ts = m.testset_fingerprint
    assert ts([Q(id="1", text="a")]) != ts([Q(id="1", text="b")])
    assert ts([Q(id="1", text="a")]) == ts([Q(text="a", id="1")])  # key order is no change
    assert ts([Q(id="1", text="a", spans=[1])]) != ts([Q(id="1", text="a", spans=[2])])


def test_effective_settings_under_qrels_and_trec_eval_mode():
    spans = [Q(id="1")]
    qrels = [Q(id="1"), Q(id="2", qrels={"d": 1})]
    assert m.relevance_level(spans, 2) == 2
    assert m.relevance_level(qrels, 2) == 1
    plain = m.effective_settings(_config(), spans)
    assert plain == {
        "relevant_grade": 2,
        "ideal": "index",
        "gain": "exp",
        "depth": 50,
        "ks": [1, 5],
        "trec_eval_compat": False,
    }
    compat = m.effective_settings(_config(trec_eval_compat=True), qrels)
    assert (compat["ideal"], compat["gain"], compat["relevant_grade"]) == ("judged", "linear", 1)
    assert compat["trec_eval_compat"] is True
    d = m.describe(_config(), [S(id="a", text="x")], spans)
    assert d["corpus"] == m.corpus_fingerprint([S(id="a", text="x")])
    assert d["testset"] == m.testset_fingerprint(spans)
    assert d["relevant_grade"] == 2


def test_differences_name_what_changed_and_only_that():
    a = {"corpus": "c1", "testset": "t1", "relevant_grade": 2, "depth": 50, "gain": "exp"}
    assert m.differences(a, dict(a), "recall@5") == []
    b = a | {"corpus": "c2", "gain": "linear"}
    assert m.differences(a, b, "recall@5") == [
        "the corpus (document ids or texts)",
        "the gain: 'exp' vs 'linear'",
    ]
    # the depth matters only to a measure over the whole list
    deeper = a | {"depth": 100}
    assert m.differences(a, deeper, "recall@5") == []
    assert m.differences(a, deeper, "map") == ["the ranking depth: 50 vs 100"]
    # a key only one record has (an older run) is not compared
    older = {k: v for k, v in a.items() if k != "gain"}
    assert m.differences(a, older, "map") == []
    assert m.differences(older, a, "map") == []
    assert m.differences(a, a | {"testset": "t2"}) == ["the test set (questions or answer keys)"]


def test_relevance_level_read_back_from_the_measurement_then_the_top_level_then_2():
    from ragmeter.scoring.measurement import relevance_level_of

    both = {"relevant_grade": 2, "measurement": {"relevant_grade": 1}}
    assert relevance_level_of(both) == 1  # the effective level: a qrels key's 1
    assert relevance_level_of({"relevant_grade": 1}) == 1  # an older run: no measurement
    assert relevance_level_of({"measurement": None, "relevant_grade": 3}) == 3
    assert relevance_level_of({}) == 2  # the whole passage

"""The question audit: hand-written cases for every rule, the copy ratio by hand,
the model checks through a scripted backend, the files, and the shipped example."""

from __future__ import annotations

import csv
import json

import pytest
from conftest import EXAMPLE
from rich.console import Console

from ragmeter.cli.question_views import audit_table, compare_table
from ragmeter.errors import InputError
from ragmeter.inputs.corpus import Document, load_corpus
from ragmeter.inputs.testset import AnswerSpan, Question, TestSet, load_testset
from ragmeter.llm import Completion
from ragmeter.questions import audit_files, audit_questions, summarize_audit, write_audit
from ragmeter.questions.audit import (
    content_words,
    context_reasons,
    copy_ratio,
    fold,
    near_duplicates,
    restatement,
    swapped_words,
    tokens,
)

ASTAR = (
    "A* search expands nodes in order of f(n) = g(n) + h(n). An admissible heuristic never "
    "overestimates the true cost to reach the goal, so it is a lower bound on that cost. With "
    "an admissible heuristic, A* is guaranteed to find an optimal path."
)
CACHE = (
    "In the trace, 61% of objects were requested exactly once. A cache cannot help with those "
    "one-hit wonders, so the rest of the traffic decides the hit rate."
)
DIJKSTRA = (
    "Dijkstra's algorithm with a binary heap runs in O((V + E) log V) time. With a Fibonacci "
    "heap the bound improves to O(E + V log V)."
)
DOCS = [Document("astar.md", ASTAR), Document("cache.md", CACHE), Document("paths.md", DIJKSTRA)]


def q(qid: str, text: str, doc: str) -> Question:
    body = next(d.text for d in DOCS if d.id == doc)
    return Question(qid, text, (AnswerSpan(doc, 0, len(body), body),))


def flags_of(question: Question, *others: Question) -> dict[str, list[str]]:
    [*_, result] = audit_questions([*others, question], DOCS)
    out: dict[str, list[str]] = {}
    for f in result.flags:
        out.setdefault(f.kind, []).append(f.reason)
    return out


# --------------------------------------------------------------------------- words


def test_tokens_and_plural_folding():
    assert tokens("Bloom's false-positive rate: 0.8%!") == [
        "bloom",
        "s",
        "false",
        "positive",
        "rate",
        "0",
        "8",
    ]
    pairs = [
        ("filters", "filter"),
        ("caches", "cache"),
        ("hashes", "hash"),
        ("keys", "key"),
        ("boxes", "box"),
        ("queries", "query"),
        ("addresses", "address"),
        ("trees", "tree"),
    ]
    for plural, single in pairs:
        assert fold(plural) == fold(single), (plural, single)
    assert fold("analysis") == "analysis" and fold("status") == "status"
    assert fold("h1") == "h1" and fold("uses") == "use"


def test_content_words_drop_stop_words_and_single_letters():
    # what/is/the/of/this are stop words; "a" and "s" are single letters; "7" is kept;
    # "probes" -> "probe" -> "prob" (plural, then final -e)
    assert content_words("What is the cost of this A* search's 7 probes?") == [
        "cost",
        "search",
        "7",
        "prob",
    ]


def test_copy_ratio_by_hand():
    # question content words: {share, object, request(ed), exactly, trace} = 5 (folded:
    # "objects" -> "object"; "requested" is not folded); in CACHE: object, requested,
    # exactly, trace -> 4 of 5 = 0.8
    assert copy_ratio(
        "What share of objects were requested exactly once in the trace?", CACHE
    ) == pytest.approx(4 / 5)
    # {fast, shortest, path, method, priority, queue, ordinary, two, child, heap} = 10;
    # only "heap" is in DIJKSTRA -> 1/10
    assert copy_ratio(
        "How fast is the shortest-path method when its priority queue is an ordinary "
        "two-child heap?",
        DIJKSTRA,
    ) == pytest.approx(1 / 10)
    # repeats count once: {heap, heaps -> heap, fibonacci} = {heap, fibonacci}: 2 of 2
    assert copy_ratio("Heap or heaps: which Fibonacci one?", DIJKSTRA) == 1.0
    # {bound, true, cost} all in ASTAR; "is", "the", "a" are stop words -> 3/3
    assert copy_ratio("Is the heuristic a bound on the true cost?", ASTAR) == 1.0
    assert copy_ratio("What is it?", ASTAR) is None  # no content words at all


# --------------------------------------------------------------------------- rules


def test_yes_no_restatement_of_a_passage_sentence_is_flagged():
    question = q(
        "q1",
        "Does an admissible heuristic never overestimate the true cost to reach the goal?",
        "astar.md",
    )
    share, sentence = restatement(question.text, ASTAR)
    # {admissible, heuristic, never, overestimat(e), true, cost, reach, goal}: all 8 are in
    # the second sentence
    assert share == 1.0 and sentence.startswith("An admissible heuristic never")
    found = flags_of(question)
    assert "yes-no-restatement" in found and "copies" in found


def test_yes_no_question_that_does_not_restate_is_not_flagged():
    question = q(
        "q2",
        "Can a heuristic that sometimes guesses too high still guarantee the shortest route?",
        "astar.md",
    )
    share, _ = restatement(question.text, ASTAR)
    assert share < 0.7  # only "heuristic" of its 8 content words is in one sentence
    assert flags_of(question) == {}


def test_restatement_needs_an_auxiliary_opening_and_three_content_words():
    assert restatement("What admissible heuristic never overestimates the cost?", ASTAR) is None
    assert restatement("Is it admissible?", ASTAR) is None  # one content word


def test_context_dependent_question_from_the_seed():
    question = q("q3", "What is the time complexity of this algorithm?", "paths.md")
    found = flags_of(question)
    assert found.get("context-dependent") == [
        "'this algorithm' names nothing earlier in the question"
    ]


@pytest.mark.parametrize(
    "text",
    [
        "What does it store per item?",
        "According to the passage, who described the structure first?",
        "What did the author measure?",
        "Which heuristic is mentioned?",
        "What is shown in the table?",
        "Why is this important?",
        "How do these results compare with the baseline?",
        "What is its false-positive rate?",
        "As described above, what happens when the filter fills up?",
        "What is the value of the diagonal step in the code below?",
        "What is the converse of the statement",
        "Given a weighted graph, what is the running time of this algorithm?",
    ],
)
def test_context_rules_catch(text):
    assert context_reasons(text), text


@pytest.mark.parametrize(
    "text",
    [
        # reader-style questions that carry their own context
        "How fast is the shortest-path method when its priority queue is an ordinary "
        "two-child heap?",
        "Why is it dangerous to delete a key you are not sure was ever added?",
        "What does it cost in bytes to show a chunk belongs to a hash tree?",
        "How long did it take to invent the shortest-path method?",
        "How does Emacs store the text of a buffer being edited?",
        "If a Bloom filter gets full, what does this filter do?",
        "How does a cuckoo filter delete items, and why is this useful?",
        "What does a node do to its clock when a message arrives?",
    ],
)
def test_context_rules_pass(text):
    assert context_reasons(text) == [], text


def test_swapped_words_from_the_seed():
    # the seed's two misstatements: upper for lower, more than once for exactly once
    assert swapped_words("Is an admissible heuristic an upper bound on the true cost?", ASTAR) == [
        ("upper", "lower")
    ]
    assert swapped_words("What share of objects were requested more than once?", CACHE) == [
        ("more than once", "exactly once")
    ]
    assert swapped_words("Is an admissible heuristic a lower bound on the true cost?", ASTAR) == []
    question = q("q4", "Is an admissible heuristic an upper bound on the true cost?", "astar.md")
    assert "swapped-word" in flags_of(question)


def test_near_duplicate_pair_and_a_distinct_neighbour():
    first = q("q5", "What share of objects were requested exactly once in the trace?", "cache.md")
    again = q("q6", "In the trace, what share of objects were requested exactly once?", "cache.md")
    other = q("q7", "What share of objects were requested more than once?", "cache.md")
    dupes = near_duplicates([first, again, other])
    # q6 has the same content words as q5 (Jaccard 1); q7 shares 3 of 5 (0.6 < 0.8)
    assert dupes == {"q6": ("q5", 1.0)}
    results = audit_questions([first, again, other], DOCS)
    assert [f.labels for f in results][1] == ["copies", "near-duplicate of q5"]
    assert not any(f.kind == "near-duplicate" for f in results[2].flags)


def test_reader_style_paraphrase_is_clean():
    question = q(
        "q8",
        "Which data-structure trick makes a shortest-path search cheaper on sparse graphs?",
        "paths.md",
    )
    assert flags_of(question) == {}


# --------------------------------------------------------------------------- model checks


class ScriptedBackend:
    """A chat backend that answers from a function of the prompt and counts calls."""

    kind = "scripted"
    model = "m"
    base_url = None
    max_concurrency = 1

    def __init__(self, answer):
        self.answer = answer
        self.prompts: list[str] = []

    def complete(self, request, timeout_s):
        prompt = request.messages[-1].content
        self.prompts.append(prompt)
        return Completion(self.answer(prompt))

    def close(self):
        pass


def test_model_checks_flag_misstated_context_and_keep_unscored_raw_text(tmp_path):
    questions = [
        q("a", "Is an admissible heuristic an upper bound on the true cost?", "astar.md"),
        q(
            "b",
            "How does a cleverer priority queue speed up the classic shortest-path method?",
            "paths.md",
        ),
        q("c", "What share of one-hit objects does the cache see?", "cache.md"),
    ]

    def answer(prompt: str) -> str:
        if "upper bound" in prompt:
            return (
                '{"verdict": "contradicts"}'
                if "<<<passage " in prompt
                else '{"understandable": "yes"}'
            )
        if "one-hit" in prompt:
            return "I am not sure." if "<<<passage " in prompt else '{"understandable": "no"}'
        return '{"verdict": "answers"}' if "<<<passage " in prompt else '{"understandable": "yes"}'

    backend = ScriptedBackend(answer)
    results = audit_questions(questions, DOCS, llm=backend, cache_path=tmp_path / "c.sqlite")
    by_id = {r.id: r for r in results}
    assert "misstated" in by_id["a"].kinds and by_id["a"].checks["misstated"] == "contradicts"
    assert by_id["b"].kinds == set() and by_id["b"].checks == {
        "misstated": "answers",
        "context": "yes",
    }
    unscored = [f for f in by_id["c"].flags if f.kind == "unscored"]
    assert len(unscored) == 1 and "I am not sure." in unscored[0].reason
    assert any(f.kind == "context-dependent" and f.source == "llm" for f in by_id["c"].flags)
    assert len(backend.prompts) == 6
    # a second audit is answered from the cache
    again = ScriptedBackend(answer)
    audit_questions(questions, DOCS, llm=again, cache_path=tmp_path / "c.sqlite")
    assert again.prompts == []  # even the unreadable reply is the model's, so it is cached
    summary = summarize_audit(results)
    assert summary.counts["unscored"] == 1 and summary.flagged == 2


# --------------------------------------------------------------------------- output


def test_files_hold_each_question_next_to_its_passage(tmp_path):
    questions = [
        q("q1", "What is the time complexity of this algorithm?", "paths.md"),
        q("q2", "Which data structure speeds up the classic shortest-path method?", "paths.md"),
    ]
    results = audit_questions(questions, DOCS)
    summary = summarize_audit(results, rounds=1000)
    paths = write_audit(results, summary, tmp_path, "audit")
    assert [p.name for p in paths] == ["audit.jsonl", "audit.csv", "audit-summary.json"]
    rows = [json.loads(line) for line in paths[0].read_text().splitlines()]
    # {time, complexity, algorithm}: time and algorithm are in the passage, 2/3 >= 0.6
    assert rows[0]["flags"] == ["copies", "context-dependent"]
    assert rows[0]["passage"] == DIJKSTRA and rows[0]["copy_ratio"] == pytest.approx(2 / 3, 1e-3)
    assert rows[0]["reasons"][1]["reason"].startswith("'this algorithm'")
    assert rows[1]["flags"] == []
    with paths[1].open(newline="") as fh:
        table = list(csv.DictReader(fh))
    assert table[0]["question"] == questions[0].text and table[0]["passage"] == DIJKSTRA
    assert "context-dependent: 'this algorithm'" in table[0]["reasons"]
    saved = json.loads(paths[2].read_text())
    assert saved["counts"]["context-dependent"] == 1 and saved["copy_ratio"]["rounds"] == 1000
    left = [p for p in tmp_path.iterdir() if p.name.startswith(".ragmeter-tmp-")]
    assert not left  # no temp files left (the manifest records what ragmeter wrote)
    console = Console(width=160, record=True)
    console.print(audit_table(results, summary))
    text = console.export_text()
    assert "1 of 2 questions flagged" in text and "this algorithm" in text


# --------------------------------------------------------------------------- the example


def _example_audit(name: str):
    docs = load_corpus(EXAMPLE / "posts")
    testset = load_testset(EXAMPLE / name, docs)
    results = audit_questions(testset, docs)
    return testset, results, summarize_audit(results, rounds=2000)


def test_reader_questions_copy_less_than_the_generated_ones():
    reader_set, reader, reader_summary = _example_audit("questions.jsonl")
    generated_set, generated, generated_summary = _example_audit("generated.jsonl")
    r, g = reader_summary.copy_ratio, generated_summary.copy_ratio
    print(f"\ncopy ratio: reader {r.format()} (n={r.n}), generated {g.format()} (n={g.n})")
    assert len(reader_set) == 135 and len(generated_set) >= 40
    assert r.mean < g.mean
    assert all(q.meta.get("source") == "generated" for q in generated_set.questions)
    # each generated question keeps its passage's answer span
    spans = {q.id: q.answers for q in reader_set.questions}
    assert all(q.answers == spans[q.meta["passage_of"]] for q in generated_set.questions)
    # the reader set is nearly clean; the generated one is not
    assert reader_summary.flagged <= 5 < generated_summary.flagged


def test_audit_files_writes_next_to_the_test_set(tmp_path):
    src = (EXAMPLE / "questions.jsonl").read_text(encoding="utf-8").splitlines()[:20]
    (tmp_path / "q.jsonl").write_text("\n".join(src) + "\n", encoding="utf-8")
    done = audit_files(tmp_path / "q.jsonl", EXAMPLE / "posts", rounds=500)
    flagged, summary, paths = done  # also a tuple
    assert done.flagged is flagged and done.summary is summary and done.paths is paths
    assert len(flagged) == 20 and summary.n == 20
    assert [p.name for p in paths] == ["audit.jsonl", "audit.csv", "audit-summary.json"]
    assert all(p.parent == tmp_path and p.is_file() for p in paths)


def test_empty_test_set_is_fine():
    assert audit_questions(TestSet([]), DOCS) == []


# --------------------------------------------------------------------------- comparison


def test_compare_pairs_by_passage_and_drops_flagged():
    from ragmeter.inputs.config import Config
    from ragmeter.questions import compare_testsets
    from ragmeter.questions.compare import pair_by_answer

    docs = load_corpus(EXAMPLE / "posts")
    reader = load_testset(EXAMPLE / "questions.jsonl", docs)
    # a "generated" set for 30 passages, in reverse order: the passage itself as the
    # question for the first 20 (search finds those), and a vague question for the rest
    chosen = reader.questions[:30][::-1]
    generated = TestSet(
        [
            Question(
                f"{q.id}-gen",
                q.answers[0].text if k >= 10 else "What is the main idea here?",
                q.answers,
                {"source": "generated"},
            )
            for k, q in enumerate(chosen)
        ]
    )
    assert len(pair_by_answer(reader.questions, generated.questions)) == 30
    cfg = Config(strategies=("recursive", "sentence"), ks=(1, 5), rounds=1000)
    vague = [q.id for q in generated.questions[:10]]
    result = compare_testsets(cfg, reader, generated, docs, drop=vague)
    assert (result.pairs, result.unpaired_a, result.unpaired_b) == (30, 105, 0)
    assert [s.system for s in result.systems] == ["recursive", "sentence"]
    for s in result.systems:
        assert s.a.n == s.b.n == 30 and s.b_clean.n == 20
        # A - B is the mean of the paired differences
        assert s.diff.difference.mean == pytest.approx(s.a.mean - s.b.mean)
        assert s.b_clean.mean >= s.b.mean  # the dropped vague questions scored 0
    console = Console(width=200, record=True)
    console.print(compare_table(result))
    assert "10 flagged generated questions dropped" in console.export_text()
    same = compare_testsets(cfg, reader, reader, docs)
    assert all(s.diff.difference.mean == 0 and s.b_clean is None for s in same.systems)


# --------------------------------------------------------------------------- how strong


def test_the_copied_span_is_the_longest_run_of_words_the_passage_holds_in_order():
    from ragmeter.questions.audit import copied_span

    # "of objects were requested exactly once" is in CACHE word for word (shown as the
    # question writes it); "share" and "trace" are copied too, but not next to it
    assert (
        copied_span("What share of Objects were requested exactly once in the trace?", CACHE)
        == "of Objects were requested exactly once"
    )
    # words compare folded (plural "heaps" matches "heap")
    assert copied_span("Why do Fibonacci heaps help?", DIJKSTRA) == "Fibonacci heaps"
    # "the goal" (a content word) beats "cost" alone; "is a" (stop words only) never counts
    assert copied_span("Is a cost of the goal known?", ASTAR) == "the goal"
    assert copied_span("What is it?", ASTAR) == ""  # no content word copied


WEAK = "What share of objects were requested exactly once?"  # 3 of 4 content words: 75%
STRONG = "Which objects were requested exactly once in the trace?"  # 4 of 4: 100%


def test_each_flag_says_how_strong_it_is_and_what_raised_it(tmp_path):
    from ragmeter.questions.audit import read_audit

    context = q("q3", "What is the time complexity of this algorithm?", "paths.md")
    questions = [q("q1", WEAK, "cache.md"), q("q2", STRONG, "cache.md"), context]
    rows = {r.id: r for r in audit_questions(questions, DOCS)}
    [copy] = rows["q1"].flags  # {share, object, requested, exactly}: 75%, below 80%
    assert (copy.value, copy.threshold, copy.strength) == (0.75, 0.6, "weak")
    assert copy.how_strong == "weak, 75% >= 60%"
    assert copy.phrase == "of objects were requested exactly once"
    assert rows["q1"].weak
    [copy] = rows["q2"].flags  # at least halfway from 60% to 100%: strong
    assert copy.strength == "strong" and copy.how_strong == "strong, 100% >= 60%"
    assert not rows["q2"].weak
    by_kind = {f.kind: f for f in rows["q3"].flags}
    rule = by_kind["context-dependent"]
    assert rule.phrase == "this algorithm" and rule.strength is None
    assert rule.how_strong == "wording rule"
    assert by_kind["copies"].strength == "weak"  # {time, complexity, algorithm}: 2 of 3
    assert not rows["q3"].weak  # a wording rule's flag is not a weak one
    summary = summarize_audit(list(rows.values()), rounds=200)
    assert summary.weak == 1 and summary.to_dict()["flagged_weakly_only"] == 1
    # the files keep the measure, its threshold, the strength and the phrase; read back
    paths = write_audit(list(rows.values()), summary, tmp_path, "audit")
    saved = json.loads(paths[0].read_text().splitlines()[0])["reasons"][0]
    assert saved == {
        "kind": "copies",
        "label": "copies",
        "reason": "75% of its content words are in the passage (threshold 60%)",
        "source": "rule",
        "value": 0.75,
        "threshold": 0.6,
        "strength": "weak",
        "phrase": "of objects were requested exactly once",
    }
    back = {r.id: r for r in read_audit(paths[0])}
    assert back["q1"].flags == rows["q1"].flags and back["q1"].weak


def test_the_audit_headline_counts_the_questions_flagged_only_weakly():
    from ragmeter.cli.question_views import audit_headline

    questions = [
        q("q1", WEAK, "cache.md"),
        q("q2", "How many objects were requested exactly once per hour?", "cache.md"),  # 60%
        q("q3", STRONG, "cache.md"),
        q("q4", "How is a Fibonacci heap unlike a pairing heap?", "paths.md"),  # 50%: clean
    ]
    rows = audit_questions(questions, DOCS)
    summary = summarize_audit(rows, rounds=200)
    assert audit_headline(summary, rows) == (
        "3 of 4 questions flagged; 2 of them only weakly "
        "(copies 60%-75%, flagged from 60%, strong from 80%)"
    )
    console = Console(width=400, record=True)  # wide: no cell wraps
    console.print(audit_table(rows, summary))
    text = console.export_text()
    assert audit_headline(summary, rows) in " ".join(text.split())
    # each flag with how strong it is and the phrase that raised it (the copied span)
    assert "copies (weak, 75% >= 60%): 'of objects were requested exactly once'" in text
    assert "copies (strong, 100% >= 60%): 'objects were requested exactly once'" in text
    assert audit_headline(summarize_audit(rows[2:], rounds=200), rows[2:]) == (
        "1 of 2 questions flagged"  # no weak flag: no second clause
    )


def test_audit_files_are_checked_again_just_before_writing(tmp_path):
    # regression: the three files were written without a check at write time, so a file
    # of the user's made while the model ran (audit.csv here) was overwritten
    from ragmeter.errors import InputError

    passage = "A bloom filter sets bits with several hash functions and never forgets a key."
    span = (AnswerSpan("bloom.md", 0, len(passage), passage),)
    flagged = audit_questions([Question("q1", "Which filter sets bits?", span)])
    summary = summarize_audit(flagged, rounds=200)
    write_audit(flagged, summary, tmp_path)  # its own: written again freely
    write_audit(flagged, summary, tmp_path)
    before = (tmp_path / "audit.jsonl").read_bytes()
    (tmp_path / "audit.csv").write_text("my spreadsheet\n")
    with pytest.raises(InputError, match="audit.csv"):
        write_audit(flagged, summary, tmp_path)
    assert (tmp_path / "audit.csv").read_text() == "my spreadsheet\n"
    assert (tmp_path / "audit.jsonl").read_bytes() == before  # none of the three written


# ``ragmeter.questions.audit``: the restatement threshold at its edge, the summary's defaults
# (10,000 rounds, the three thresholds), and ``audit_files`` passing every setting through
# (thresholds up to 1, the duplicate threshold, the progress callback).

PASSAGE = (
    "A bloom filter sets bits with several hash functions and never forgets a key. "
    "It answers membership queries quickly."
)
DOC = Document("bloom.md", PASSAGE)


def _question(qid: str, text: str) -> Question:
    return Question(qid, text, (AnswerSpan(DOC.id, 0, len(PASSAGE), PASSAGE),))


def test_a_restatement_exactly_at_the_threshold_is_flagged():
    # {bloom, filter, set, bit, hash, function, key, tree, root, branch}: 7 of the 10 are
    # in the first sentence, 0.7, the default threshold ("at least")
    text = "Does a bloom filter set bits with hash functions for every key, tree, root and branch?"
    [at] = audit_questions([_question("q", text)], [DOC])
    assert "yes-no-restatement" in at.kinds
    [above] = audit_questions([_question("q", text)], [DOC], restate_threshold=0.71)
    assert "yes-no-restatement" not in above.kinds


def test_the_summary_defaults_to_10000_rounds_and_the_default_thresholds():
    flagged = audit_questions([_question("q", "Does a bloom filter forget keys?")], [DOC])
    saved = summarize_audit(flagged).to_dict()
    assert saved["copy_ratio"]["rounds"] == 10_000
    assert saved["thresholds"] == {"copy": 0.6, "restate": 0.7, "duplicate": 0.8}
    given = {"copy": 0.5, "restate": 0.9, "duplicate": 0.95}
    assert summarize_audit(flagged, rounds=200, thresholds=given).thresholds == given


def _files(tmp_path, *texts: str):
    corpus = tmp_path / "posts"
    corpus.mkdir()
    (corpus / "bloom.md").write_text(PASSAGE, encoding="utf-8")
    span = {"doc": "bloom.md", "start": 0, "end": len(PASSAGE), "text": PASSAGE}
    testset = tmp_path / "q.jsonl"
    testset.write_text(
        "".join(
            json.dumps({"id": f"q{i}", "question": t, "answers": [span]}) + "\n"
            for i, t in enumerate(texts, 1)
        ),
        encoding="utf-8",
    )
    return testset, corpus


def test_audit_files_takes_thresholds_up_to_one_and_passes_them_on(tmp_path):
    # {bloom, filter, forget, key} and {bloom, filter, forget, key, quickly}: Jaccard 0.8
    testset, corpus = _files(
        tmp_path, "Does a bloom filter forget keys?", "Does a bloom filter forget keys quickly?"
    )
    done = audit_files(testset, corpus, rounds=200)
    assert done.flagged[1].labels[-1] == "near-duplicate of q1"
    done = audit_files(
        testset,
        corpus,
        rounds=200,
        copy_threshold=1.0,
        restate_threshold=1.0,
        duplicate_threshold=0.81,
    )
    assert all("near-duplicate" not in f.kinds for f in done.flagged)
    assert done.summary.thresholds == {"copy": 1.0, "restate": 1.0, "duplicate": 0.81}
    saved = json.loads((tmp_path / "audit-summary.json").read_text())
    assert saved["thresholds"]["duplicate"] == 0.81
    for bad in (0, 1.01):
        with pytest.raises(InputError, match=r"the copy threshold must be in \(0, 1\]"):
            audit_files(testset, corpus, copy_threshold=bad)


class _Backend:
    kind = "scripted"
    model = "m"
    base_url = None
    max_concurrency = 1

    def complete(self, request, timeout_s):
        prompt = request.messages[-1].content
        answer = (
            '{"verdict": "answers"}' if "<<<passage " in prompt else '{"understandable": "yes"}'
        )
        return Completion(answer)

    def close(self):
        pass


def test_audit_files_reports_the_model_calls_to_the_progress_callback(tmp_path):
    testset, corpus = _files(tmp_path, "Does a bloom filter forget keys?")
    seen: list[tuple[int, int]] = []
    done = audit_files(
        testset,
        corpus,
        llm=_Backend(),
        rounds=200,
        progress=lambda done, total, reply: seen.append((done, total)),
    )
    assert done.flagged[0].checks == {"misstated": "answers", "context": "yes"}
    assert seen[-1] == (2, 2)  # one question, two checks

"""The HTML report, read as text: offline, escaped, complete (no browser needed)."""

from __future__ import annotations

import json
import math
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from conftest import require

require("altair", "the HTML report needs the 'report' extra")
require("vl_convert", "the HTML report needs the 'report' extra")

from ragmeter.errors import InputError  # noqa: E402
from ragmeter.inputs.config import Config  # noqa: E402
from ragmeter.report.html import json_for_script, report_data, write_report  # noqa: E402
from ragmeter.runs.pipeline import run_search  # noqa: E402
from ragmeter.runs.results import Results, save_results  # noqa: E402
from ragmeter.stats.exact import questions_for_exact_half_width  # noqa: E402

HOSTILE_SCRIPT = "<script>window.__pwned=1</script>"
HOSTILE_IMG = '"><img src=x onerror="window.__pwned=2">'
HOSTILE_ANSWER = '<img src=y onerror="window.__pwned=3"> the answer is <b>42</b>'

EVIL_DOC = (
    "Bloom filters answer set membership with a small bit array. "
    "They never miss an item that was added, but they can report false positives. "
    f"The sanitiser test stores the string {HOSTILE_SCRIPT} inside a paragraph. "
    "Each inserted key sets k bits chosen by k independent hash functions. "
    f"An attribute breaker looks like this {HOSTILE_IMG} and must stay plain text. "
    "Deleting from a plain Bloom filter is not possible without counting bits. "
    "Counting filters replace each bit with a small counter so deletes work. "
)
EMOJI_DOC = (
    "Rocket 🚀 launches need careful fuel budgets and 🚀 staging decisions. "
    "A star 🌟 catalogue lists the brightest objects visible from the northern sky. "
    "The emoji marker 🧪 precedes the measured boiling point of water at sea level. "
    "Water boils at one hundred degrees Celsius under standard atmospheric pressure. "
    "Cold water is denser than warm water until it nears four degrees Celsius. "
    "Ice floats because its crystal lattice is less dense than the liquid around it. "
)
PLAIN_DOC = (
    "A skip list keeps several linked lists stacked on top of each other. "
    "Each level skips over more nodes than the level below it. "
    "Searching starts at the top level and drops down when the next key is too large. "
    "Insertion flips a coin to decide how many levels a new node joins. "
    "The expected search cost grows with the logarithm of the number of keys. "
    "Skip lists are simpler to make concurrent than balanced binary trees. "
)

QUESTIONS = [
    (
        "q-script",
        f"Which string does the sanitiser test store? {HOSTILE_SCRIPT}",
        f"The sanitiser test stores the string {HOSTILE_SCRIPT} inside a paragraph.",
        "evil.md",
    ),
    (
        "q-img",
        "What does an attribute breaker look like?",
        f"An attribute breaker looks like this {HOSTILE_IMG} and must stay plain text.",
        "evil.md",
    ),
    (
        "q-emoji",
        "At what temperature does water boil at sea level?",
        "Water boils at one hundred degrees Celsius under standard atmospheric pressure.",
        "emoji.md",
    ),
    (
        "q-ice",
        "Why does ice float on water?",
        "Ice floats because its crystal lattice is less dense than the liquid around it.",
        "emoji.md",
    ),
    (
        "q-delete",
        "Can you delete from a Bloom filter?",
        "Deleting from a plain Bloom filter is not possible without counting bits.",
        "evil.md",
    ),
    (
        "q-skip",
        "How does insertion into a skip list pick the levels of a node?",
        "Insertion flips a coin to decide how many levels a new node joins.",
        "plain.md",
    ),
    (
        "q-cost",
        "How does the search cost of a skip list grow?",
        "The expected search cost grows with the logarithm of the number of keys.",
        "plain.md",
    ),
    (
        "q-concurrent",
        "Why choose skip lists over balanced trees for concurrency?",
        "Skip lists are simpler to make concurrent than balanced binary trees.",
        "plain.md",
    ),
]


FILLER_WORDS = (
    "river",
    "lantern",
    "copper",
    "meadow",
    "harbor",
    "violet",
    "granite",
    "orchard",
    "falcon",
    "pepper",
    "canyon",
    "marble",
    "thistle",
    "glacier",
    "saffron",
    "timber",
    "beacon",
    "willow",
)


def filler(seed: int, sentences: int) -> str:
    """Deterministic sentences that share no words with the questions."""
    out = []
    for i in range(sentences):
        w = [FILLER_WORDS[(seed * 7 + i * j + j) % len(FILLER_WORDS)] for j in range(1, 9)]
        out.append(
            f"The {w[0]} {w[1]} rested near the {w[2]} {w[3]} while {w[4]} "
            f"{w[5]} drifted past {w[6]} {w[7]}."
        )
    return " ".join(out)


def build_hostile_results(root: Path, rounds: int = 300) -> Path:
    """A tiny results directory whose corpus and questions carry markup and emoji."""
    corpus = root / "corpus"
    corpus.mkdir(parents=True)
    docs = {"evil.md": EVIL_DOC, "emoji.md": EMOJI_DOC, "plain.md": PLAIN_DOC}
    for n, (name, body) in enumerate(docs.items()):
        text = f"{filler(n, 18)}\n\n{body}\n\n{filler(n + 10, 18)}\n"
        (corpus / name).write_text(text, encoding="utf-8")
    for n in range(3):
        (corpus / f"filler-{n}.md").write_text(filler(n + 20, 30) + "\n", encoding="utf-8")
    testset = root / "questions.jsonl"
    with testset.open("w", encoding="utf-8") as fh:
        for qid, text, answer, doc in QUESTIONS:
            fh.write(
                json.dumps({"id": qid, "question": text, "answers": [{"doc": doc, "text": answer}]})
                + "\n"
            )
    cfg = Config(
        corpus=str(corpus),
        testset=str(testset),
        strategies=("whole", "fixed", "sentence"),
        ks=(1, 3, 5),
        depth=5,
        rounds=rounds,
        output=str(root / "results"),
    )
    run = run_search(cfg)
    return save_results(run, root / "results")


def embedded_data(html: str) -> dict:
    m = re.search(r'<script type="application/json" id="ragmeter-data">(.*?)</script>', html, re.S)
    assert m, "no embedded JSON block"
    return json.loads(m.group(1))


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> tuple[Path, str]:
    results = build_hostile_results(tmp_path_factory.mktemp("hostile"))
    out = write_report(results)
    return results, out.read_text(encoding="utf-8")


def test_default_path_and_atomic_write(hostile):
    results, html = hostile
    assert (results / "report.html").is_file()
    assert html.startswith("<!DOCTYPE html>")
    assert html.rstrip().endswith("</html>")
    # No temporary file is left beside the report.
    assert [p.name for p in results.iterdir() if p.name.startswith(".report.html")] == []


def test_custom_out_path(hostile, tmp_path):
    results, _ = hostile
    out = write_report(results, tmp_path / "sub" / "r.html")
    assert out == tmp_path / "sub" / "r.html" and out.stat().st_size > 100_000
    with pytest.raises(InputError):
        write_report(results, tmp_path)  # a directory is not a file name


class _Tags(HTMLParser):
    """Start tags as the browser's parser sees them (script bodies are not markup)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def parsed_tags(html: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = _Tags()
    parser.feed(html)
    parser.close()
    return parser.tags


def test_nothing_loads_from_the_network(hostile):
    _, html = hostile
    tags = parsed_tags(html)
    assert [t for t, _ in tags if t == "script"], "expected the inline script tags"
    for tag, attrs in tags:
        assert tag not in ("link", "img", "iframe", "object", "embed"), tag
        assert "src" not in attrs, (tag, attrs)
        href = attrs.get("href")
        assert href is None or href.startswith("#"), (tag, attrs)
    csp = next(
        a["content"]
        for t, a in tags
        if t == "meta" and a.get("http-equiv") == "Content-Security-Policy"
    )
    assert "default-src 'none'" in csp
    assert "'unsafe-inline'" not in csp.split("script-src")[1].split(";")[0]


def test_exactly_the_three_page_scripts(hostile):
    _, html = hostile
    scripts = [a for t, a in parsed_tags(html) if t == "script"]
    assert scripts == [{"type": "application/json", "id": "ragmeter-data"}, {}, {}]
    assert len(re.findall(r"</script", html, re.I)) == 3


def test_hostile_text_never_appears_as_markup(hostile):
    _, html = hostile
    for needle in (HOSTILE_SCRIPT, HOSTILE_IMG, "<img src=x", 'onerror="window', "<b>42</b>"):
        assert needle not in html
    assert "window.__pwned" in html  # present, but only inside escaped JSON strings
    for m in re.finditer(r"window\.__pwned", html):
        before = html[: m.start()]
        assert before.rfind('id="ragmeter-data">') > before.rfind("</script>")


def test_embedded_json_holds_every_system_and_question(hostile):
    results, html = hostile
    data = embedded_data(html)
    res = Results(results)
    assert [s["name"] for s in data["systems"]] == res.systems
    assert [q["id"] for q in data["questions"]] == res.question_ids
    assert set(data["estimates"]) == set(res.systems)
    for s in res.systems:
        assert set(data["estimates"][s]) == set(res.metrics)
    for q in data["questions"]:
        assert len(q["items"]) == len(res.systems)
        assert all(len(row) <= 5 for row in q["items"])
    texts = {d["id"]: " ".join(t for _, t in d["parts"]) for d in data["docs"]}
    assert HOSTILE_SCRIPT in texts["evil.md"] and HOSTILE_IMG in texts["evil.md"]
    by_id = {q["id"]: q for q in data["questions"]}
    assert HOSTILE_SCRIPT in by_id["q-script"]["text"]
    # the sample-size chart draws only systems with spread (none claims ± 0)
    spread = any(r["rows"] for r in data["sample_size"]["systems"])
    charts = {"chart-forest", "chart-words", "chart-compare"}
    charts |= {"chart-size"} if spread else set()
    assert set(data["charts"]) == charts
    for spec in data["charts"].values():
        assert spec["$schema"].startswith("https://vega.github.io/schema/vega-lite/")
    pairs = len(res.systems) * (len(res.systems) - 1) // 2
    assert len(data["comparisons"]) == pairs


def test_sections_exist(hostile):
    _, html = hostile
    for sid in (
        "summary",
        "routes",
        "measures",
        "comparisons",
        "sample-size",
        "questions",
        "summary-table",
        "hit-table",
        "measures-table",
        "compare-table",
        "size-table",
        "route-diagram",
        "chart-forest",
        "chart-words",
        "chart-compare",
        "chart-size",
        "q-search",
        "q-list",
    ):
        assert f'id="{sid}"' in html, sid
    # Optional sections are in the page but stay hidden without their files.
    assert '<section id="answers" hidden>' in html
    assert embedded_data(html)["optional"] == {}


def test_item_offsets_are_utf16_for_javascript(hostile):
    results, html = hostile
    data = embedded_data(html)
    docs = data["docs"]
    emoji = next(i for i, d in enumerate(docs) if d["id"] == "emoji.md")
    full = Results(results).documents["emoji.md"]
    text16 = full.encode("utf-16-le")
    q = next(q for q in data["questions"] if q["id"] == "q-emoji")
    doc, start, end, passage = q["answers"][0]
    assert doc == emoji
    # What JavaScript's String.slice returns for these offsets is the passage.
    assert text16[2 * start : 2 * end].decode("utf-16-le") == passage
    # Each embedded part sits at its UTF-16 offset of the document ...
    for at, part in docs[emoji]["parts"]:
        assert text16[2 * at : 2 * at + len(part.encode("utf-16-le"))].decode("utf-16-le") == part
    seen = 0
    for row in q["items"]:
        for d, s, e, *_ in row:
            if d == emoji:
                # ... and one part covers every shown item (what the page's spanText slices)
                piece = text16[2 * s : 2 * e].decode("utf-16-le")
                covering = [
                    p
                    for at, p in docs[emoji]["parts"]
                    if at <= s and e <= at + len(p.encode("utf-16-le")) // 2
                ]
                assert piece.strip() and len(covering) == 1
                p16 = covering[0].encode("utf-16-le")
                at = next(a for a, p in docs[emoji]["parts"] if p == covering[0])
                assert p16[2 * (s - at) : 2 * (e - at)].decode("utf-16-le") == piece
                seen += 1
    assert seen


@pytest.fixture(scope="module")
def fixed_only(tmp_path_factory) -> tuple[Path, str]:
    """The shipped example, 200-word chunks, plus a long document no question matches."""
    from ragmeter.cli.app import example_dir

    ex = example_dir()
    root = tmp_path_factory.mktemp("fixed")
    shutil.copytree(ex / "posts", root / "posts")
    (root / "posts" / "zz-filler.md").write_text(filler(3, 2000) + "\n", encoding="utf-8")
    cfg = Config(
        corpus=str(root / "posts"),
        testset=str(ex / "questions.jsonl"),
        strategies=("fixed", "sentence"),
        rounds=100,
    )
    results = save_results(run_search(cfg), root / "results")
    return results, write_report(results).read_text(encoding="utf-8")


@pytest.mark.parametrize("which", ["hostile", "fixed_only"])
def test_documents_are_embedded_only_where_the_page_shows_them(which, request):
    """The page carries the shown items' text, not the corpus: per document, its parts add
    up to exactly the union of the shown items' spans (overlaps merged, nothing else)."""
    results, html = request.getfixturevalue(which)
    data = embedded_data(html)
    if which == "fixed_only":  # the long document is never shown, so never embedded
        corpus = json.loads((results / "meta.json").read_text(encoding="utf-8"))["corpus"]
        embedded = sum(len(p) for d in data["docs"] for _, p in d["parts"])
        assert corpus["documents"] == 26 and 0 < embedded < corpus["characters"] / 2
        assert "zz-filler.md" not in html
    covered: dict[int, set[int]] = {}
    for q in data["questions"]:
        for row in q["items"]:
            for d, s, e, *_ in row:
                covered.setdefault(d, set()).update(range(s, e))
    assert sorted(covered) == list(range(len(data["docs"])))  # no document that is not shown
    for d, doc in enumerate(data["docs"]):
        starts = [at for at, _ in doc["parts"]]
        assert starts == sorted(starts)
        units = set()
        for at, part in doc["parts"]:
            units.update(range(at, at + len(part.encode("utf-16-le")) // 2))
        assert units == covered[d], doc["id"]
        total = sum(len(p.encode("utf-16-le")) // 2 for _, p in doc["parts"])
        assert total == len(units), doc["id"]  # parts never overlap


def test_json_for_script_escapes_and_round_trips():
    value = {"a": "</script><!-- & \u2028 \u2029 >", "b": [1, 2.5, None]}
    text = json_for_script(value)
    for ch in ("<", ">", "&", "\u2028", "\u2029"):
        assert ch not in text
    assert json.loads(text) == value


def test_headline_and_sample_size_follow_the_scores(hostile):
    results, _ = hostile
    res = Results(results)
    data = report_data(res, target_half_width=0.1)
    metric = data["metric"]
    means = {s: res.scores(s, metric).mean() for s in res.systems}
    assert means[data["headline"]["best"]] == max(means.values())
    for row in data["sample_size"]["systems"]:
        scores = res.scores(row["system"], metric)
        sd = float(np.std(scores, ddof=1))
        expected = max(1, math.ceil(round((1.959963984540054 * sd / 0.1) ** 2, 9)))
        binary = bool(np.all((scores == 0) | (scores == 1)))
        if sd == 0:  # 0/1 and no spread: as plan, where the exact interval narrows to ± 10
            expected = questions_for_exact_half_width(int(scores.sum()), scores.size, 0.1)
            expected = expected if binary else None
        assert row["needed"] == expected
        assert [r["n"] for r in row["rows"]] == (
            [r.n for r in res.summary.sample_size[row["system"]]] if sd > 0 or binary else []
        )  # a system with no spread shows no resampled ± (it would read ± 0), 0/1: exact
    ties = {tuple(t) for t in data["headline"]["ties"]}
    for c in data["comparisons"]:
        crosses = c["difference"]["low"] <= 0 <= c["difference"]["high"]
        assert ((c["a"], c["b"]) in ties) == crosses


def test_same_results_same_bytes(hostile, tmp_path):
    results, html = hostile
    again = write_report(results, tmp_path / "again.html").read_text(encoding="utf-8")
    assert again == html


def test_optional_sections_render_when_present(hostile, tmp_path):
    src, _ = hostile
    results = tmp_path / "results"
    shutil.copytree(src, results)
    res = Results(results)
    (results / "answers").mkdir()
    (results / "answers" / "meta.json").write_text(
        json.dumps({"reader": "reader-model", "judges": ["judge-a", "judge-b"], "k": 5})
    )
    grades = ["correct", "partial", "wrong", "correct"]
    with (results / "answers" / "answers.jsonl").open("w", encoding="utf-8") as fh:
        for i, s in enumerate(res.systems):
            for j, q in enumerate(res.question_ids):
                a = grades[(i + j) % 4]
                b = "correct" if a != "wrong" else "wrong"
                row = {
                    "system": s,
                    "question": q,
                    "answer": HOSTILE_ANSWER,
                    "grades": {"judge-a": a, "judge-b": b},
                }
                if j < 4:
                    row["hand"] = "correct" if a == "correct" else "wrong"
                fh.write(json.dumps(row) + "\n")
    (results / "audit").mkdir()
    with (results / "audit" / "flags.jsonl").open("w", encoding="utf-8") as fh:
        fh.write(
            json.dumps({"question": "q-img", "flags": ["misstated"], "note": HOSTILE_IMG}) + "\n"
        )
        fh.write(json.dumps({"question": "q-skip", "flags": []}) + "\n")
    html = write_report(results).read_text(encoding="utf-8")
    assert HOSTILE_ANSWER not in html and "<b>42</b>" not in html
    data = embedded_data(html)
    answers = data["optional"]["answers"]
    assert answers["judges"] == ["judge-a", "judge-b"] and answers["primary"] == "judge-a"
    n = len(res.question_ids)
    for row, cross in zip(answers["accuracy"], answers["cross"], strict=True):
        assert row["n"] == n
        assert sum(row["counts"].values()) == n
        total = sum(sum(t.values()) for t in cross["table"].values())
        assert total == n
        found = sum(cross["table"]["found"].values())
        assert found == int(res.scores(row["system"], answers["hit_metric"]).sum())
    (ag,) = answers["agreement"]
    assert ag["a"] == "judge-a" and ag["b"] == "judge-b" and ag["n"] == n * len(res.systems)
    assert ag["more_correct"] < 0  # judge-b passes partial answers, so it marks more correct
    assert {h["a"] for h in answers["hand"]} == {"judge-a", "judge-b"}
    lenient_b = next(h for h in answers["hand"] if h["a"] == "judge-b")["lenient"]
    assert lenient_b > 0
    audit = data["optional"]["audit"]
    assert audit["flagged"] == 1 and audit["audited"] == 2 and audit["counts"] == {"misstated": 1}
    by_id = {q["id"]: q for q in data["questions"]}
    assert by_id["q-img"]["audit"]["note"] == HOSTILE_IMG
    assert by_id["q-script"]["model_answers"][0]["answer"] == HOSTILE_ANSWER
    lanes = {lane["key"]: lane for lane in data["route"]["lanes"]}
    assert all(step["ran"] for step in lanes["answer"]["steps"]) and "audit" in lanes


def test_bad_optional_file_names_the_line(hostile, tmp_path):
    src, _ = hostile
    results = tmp_path / "results"
    shutil.copytree(src, results)
    (results / "audit").mkdir()
    (results / "audit" / "flags.jsonl").write_text('{"question": "nope", "flags": ["x"]}\n')
    with pytest.raises(InputError, match=r"flags\.jsonl:1"):
        write_report(results)


def test_not_a_results_directory(tmp_path):
    with pytest.raises(InputError, match="not a ragmeter results directory"):
        write_report(tmp_path)

"""docs/architecture.md stays true: every module is in its table, every named home exists."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
PACKAGE = ROOT / "src" / "ragmeter"


def _table_names() -> set[str]:
    section = DOC.split("## Modules", 1)[1].split("\n## ", 1)[0]
    return {m.group(1) for m in re.finditer(r"^\| `([^`]+)` \|", section, re.M)}


def test_every_module_has_a_row_and_every_row_a_module():
    names = _table_names()
    covered_by_folder = {n.rstrip("/") for n in names if n.endswith("/")}
    missing = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        folder = rel.split("/")[0] if "/" in rel else None
        if rel in names or folder in covered_by_folder or rel.endswith("__main__.py"):
            continue
        if rel.endswith("/__init__.py"):
            continue  # a package is described by its modules' rows
        missing.append(rel)
    assert missing == []
    stale = [n for n in names if not (PACKAGE / n).exists()]
    assert stale == []


def test_every_home_named_for_a_rule_exists():
    section = DOC.split("## One home for each rule", 1)[1].split("\n## ", 1)[0]
    homes = re.findall(r"`([a-z_.]+)\.([A-Za-z_]+)`", section)
    assert len(homes) >= 10
    for module, name in homes:
        assert hasattr(importlib.import_module(f"ragmeter.{module}"), name), (module, name)


def test_the_layers_named_here_are_the_structure_test_s():
    import sys

    sys.path.insert(0, str(ROOT / "tests"))
    from test_structure import LAYERS

    section = DOC.split("## Modules", 1)[1].split("\n## ", 1)[0]
    shown = re.findall(r"^\| \*\*([a-z]+)\*\* \|", section, re.M)
    assert shown == [name for name, _ in LAYERS]


# --- a rule's second home is a finding ----------------------------------------------------------

# (what a copy looks like, where the one home is, where it may stand): a literal level
# fallback that ignores the run's confidence; the level computed from the confidence by hand;
# a file written with pathlib outside the rooms that own the output rule, unless the line says
# it writes into a folder ragmeter made (an atomic_directory's temporary, a new history); a
# second sort of a run's lines.
COPIES = (
    (r"\belse 0\.05\b|\bor 0\.05\b", "comparison.verdicts.rule_alpha", ()),
    (
        r"round\(1(\.0)? - [\w.]*confidence",
        "stats.alpha_of",
        ("stats/validate",),
    ),
    (
        r"\.write_(text|bytes)\((?!.*# (a folder ragmeter made|ragmeter's own temporary folder))",
        "files.io / files.outputs",
        ("files/",),
    ),
    # a run's lines sorted by score (and rank, file order or document id) anywhere but the
    # one home of a run's order
    (
        r"key=lambda \w+: \(-\w+\.score\b|lexsort\(\(.*\b\w*(doc|item)\w*\b.*(score|skey)",
        "scoring.trec.run_order",
        ("scoring/trec.py",),
    ),
    # an interval printed by hand, ``[{low:.1f}, {high:.1f}]`` or ``[{fmt_end(...)}, ...]``
    (
        r"\[\{[^\]]*(:\+?\.[\d{]|fmt_end\()[^\]]*\}, \{",
        "stats.format_interval / comparison.formatting.format_difference",
        ("stats/bootstrap.py", "comparison/formatting.py"),
    ),
    # a level written into a header or footnote: the intervals' own level names it
    (
        r"\[95% (CI|interval)\]|95% percentile bootstrap",
        "comparison.formatting.level_label",
        ("comparison/formatting.py",),
    ),
    # a verdict reached beside the one comparison: stats' paired tests called directly, with
    # no family and no rule (stats.paired and compare_all stay for notebooks)
    (
        r"\b(stats\.)?(paired|compare_all|compare_pairs)\(",
        "comparison.systems.compare_systems",
        ("stats/", "comparison/verdicts.py"),
    ),
    # the cutoffs a default view shows rank-aware measures at, chosen again by hand
    (
        r"\b10 if 10 in \w+\b|\b5 if 5 in \w+ else max\(",
        "scoring.names.shown_cutoffs",
        ("scoring/names.py",),
    ),
    # who won read back from a verdict's words, or a verdict worded again: the row carries
    # its winner, and the words are made from it in one place
    (
        r"[\"'}] better[\"']|[\"']better[\"'] (not )?in\b"
        r"|verdict\w*\)?\.(startswith|endswith|split|rsplit|partition|rpartition|removesuffix"
        r"|removeprefix|find|index)\(",
        "comparison.verdicts.Row (winner) / stats.paired.verdict_text",
        ("stats/paired.py",),
    ),
    # a default written again as a literal: rounds or confidence in a signature, a field, a
    # constant or a fallback (``x: int = 10_000``, ``.get("confidence", 0.95)``, ``else
    # 0.95``); a seed, a cluster mode or a segmenter in a signature
    (
        r"(:\s*[\w.| ]+|\])\s*=\s*(10_?000|0\.95)\b(?![\d_.])"
        r"|(\.get\([^)]*,|\belse|\bor)\s*(10_?000|0\.95)\b(?![\d_.])"
        r"|\b(10_?000|0\.95) if\b|^[A-Z_]+ = (10_?000|0\.95)\b(?![\d_.])"
        r"|\bseed: [\w.| ]+ = 1\b|\bseed\W*\]\s*=\s*1\b|[\"']seed[\"'], 1\)"
        r"|\b(segmenter|segmenter_name|cluster_mode|clusters): str = [\"']",
        "defaults.DEFAULTS / defaults.EARLIER",
        ("defaults.py",),
    ),
    # a metric's name read again (split on its ``@``) or a family's rule written again (a
    # list of the share families, a share's x100 chosen by hand), in Python or the report's
    # script: the family table and the metric read from a name are the one home
    (
        r"\.(r?split|r?partition)\(\s*[\"']@[\"']|[\"']@[\"'] (not )?in \w"
        r"|\bin (SHARE|COST)_FAMILIES\b|\b100(\.0)? if \w*(is_share\(|share\b)"
        r"|[\"'](recall|hit|precision|coverage)[\"'],\s*[\"'](recall|hit|precision|coverage)[\"']",
        "scoring.names.FAMILIES / metric_of / metric_scale / difference_scale",
        ("scoring/names.py",),
    ),
)


def copies_of_rules(package: Path = PACKAGE) -> list[str]:
    """Lines that re-implement a rule outside its home (:data:`COPIES`)."""
    found = []
    for path in sorted([*package.rglob("*.py"), *package.rglob("*.js")]):
        rel = path.relative_to(package).as_posix()
        for pattern, home, allowed in COPIES:
            if any(rel.startswith(a) for a in allowed):
                continue
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if re.search(pattern, line) and not line.lstrip().startswith(("#", "//")):
                    found.append(f"{rel}:{number}: belongs to {home}")
    return found


def test_no_rule_is_written_again_outside_its_home(tmp_path):
    assert copies_of_rules() == []
    (tmp_path / "view.py").write_text(
        "alpha = rule.alpha if rule is not None else 0.05\n"
        "level = round(1.0 - plan.confidence, 12)\n"
        "Path('x').write_text('y')  # a second writer\n"
    )
    assert [f.split(": ")[0] for f in copies_of_rules(tmp_path)] == [
        "view.py:1",
        "view.py:2",
        "view.py:3",
    ]


def test_a_metric_name_read_again_or_a_share_rule_written_again_is_a_copy(tmp_path):
    # the copies this rule's home replaced, in the views and the report's script
    (tmp_path / "view.py").write_text(
        'k = self.summary.metric.partition("@")[2]\n'
        'cap = int(metric.split("@")[1])\n'
        'if key == "depth" and "@" in metric:\n'
        "scale = 100 if is_share(metric) else 1\n"
        "if family(metric) in COST_FAMILIES:\n"
        'SHARE_FAMILIES = ("recall", "hit", "precision", "coverage")\n'
        "k = cutoff(metric)  # the one reading\n"
        'email = "a@b"\n'
    )
    (tmp_path / "report.js").write_text(
        'const family = (m) => m.split("@")[0];\n'
        'const isShare = (m) => ["recall", "hit", "precision", "coverage"].indexOf(m) >= 0;\n'
        "const family = (m) => info(m).family || m;\n"
    )
    found = copies_of_rules(tmp_path)
    assert [x.split(": ")[0] for x in found] == [
        "report.js:1",
        "report.js:2",
        *(f"view.py:{n}" for n in range(1, 7)),
    ]
    assert all("scoring.names.FAMILIES" in x for x in found)


def test_a_second_sort_of_run_lines_is_a_copy(tmp_path):
    (tmp_path / "reader.py").write_text(
        "rows = sorted(rows, key=lambda r: (-r.score, r.rank, r.line))\n"
        "order = np.lexsort((doc_words, ~skey, q))\n"
        "order = np.lexsort((cand, -scores[q, cand]))  # a retriever's top k\n"
    )
    found = copies_of_rules(tmp_path)
    assert [f.split(": ")[0] for f in found] == ["reader.py:1", "reader.py:2"]
    assert all(f.endswith("scoring.trec.run_order") for f in found)


def test_an_interval_printed_by_hand_is_a_copy(tmp_path):
    (tmp_path / "view.py").write_text(
        'text = f"{d.mean * 100:+.1f} [{d.low * 100:+.1f}, {d.high * 100:+.1f}]"\n'
        'text = f"[{fmt_end(d.low)}, {fmt_end(d.high)}]"\n'
        'text = f"{r.mean:.1%} [{r.low:.1%}, {r.high:.1%}]"\n'
        'text = f"[{i}] {t}, {u}"  # a numbered passage\n'
    )
    found = copies_of_rules(tmp_path)
    assert [x.split(": ")[0] for x in found] == ["view.py:1", "view.py:2", "view.py:3"]


def test_a_verdict_reached_beside_the_one_comparison_is_a_copy(tmp_path):
    (tmp_path / "compare.py").write_text(
        "diff = stats.paired(a, b, rounds=rounds, seed=seed)\n"
        "rows = compare_all(matrix, names)\n"
        "table = compare_systems({metric: matrix}, names, plan)\n"
    )
    found = copies_of_rules(tmp_path)
    assert [x.split(": ")[0] for x in found] == ["compare.py:1", "compare.py:2"]
    assert all(x.endswith("comparison.systems.compare_systems") for x in found)


def test_a_level_written_into_a_header_is_a_copy(tmp_path):
    (tmp_path / "view.py").write_text(
        'header = f"{metric} [95% CI]"\n'
        'note = "[dim]95% percentile bootstrap intervals"\n'
        'header = f"{metric} [{level_label(estimates)} CI]"\n'
    )
    found = copies_of_rules(tmp_path)
    assert [f.split(": ")[0] for f in found] == ["view.py:1", "view.py:2"]
    assert all(f.endswith("comparison.formatting.level_label") for f in found)


def test_the_default_views_cutoffs_chosen_again_are_a_copy(tmp_path):
    (tmp_path / "view.py").write_text(
        "top = 10 if 10 in ks else ks[-1]\n"
        "mid = 5 if 5 in ks else max([k for k in ks if k < 5] or [ks[0]])\n"
        "top, mid = shown_cutoffs(metrics)\n"
    )
    found = copies_of_rules(tmp_path)
    assert [f.split(": ")[0] for f in found] == ["view.py:1", "view.py:2"]
    assert all(f.endswith("scoring.names.shown_cutoffs") for f in found)


def test_a_verdict_read_back_from_its_words_or_worded_again_is_a_copy(tmp_path):
    # the copies the views held before a row carried its winner (history/trend.py,
    # cli/search_views.py, comparison/families.py, report/data.py, comparison/verdicts.py)
    (tmp_path / "view.py").write_text(
        'if self.row.verdict.startswith(f"#{self.later} better"):\n'
        'style = "green" if "better" in c.verdict else "yellow"\n'
        'if not str(row.verdict).endswith(" better"):\n'
        'winner = verdict[: -len(" better")]\n'
        'verdict = f"{names[i] if mean > 0 else names[j]} better"\n'
        '"verdict": c.verdict,\n'
        "if row.winner is None:\n"
        'style = {"better": "green", "worse": "red"}.get(change.direction, "")\n'
    )
    found = copies_of_rules(tmp_path)
    assert [f.split(": ")[0] for f in found] == [f"view.py:{n}" for n in range(1, 6)]
    assert all(f.endswith("stats.paired.verdict_text") for f in found)


def test_a_default_written_again_as_a_literal_is_a_copy(tmp_path):
    # the copies the library held before one record kept the defaults (stats/bootstrap.py,
    # comparison/summary.py, inputs/config.py, cli/evaluate.py, chunking/segment.py, ...)
    (tmp_path / "view.py").write_text(
        "    rounds: int = 10_000,\n"
        "    confidence: float = 0.95,\n"
        "DEFAULT_ROUNDS = 10_000\n"
        '                confidence=float(data.get("confidence", 0.95)),\n'
        "    level = rows[0].confidence if rows else 0.95\n"
        "            levels.add(round(float(0.95 if level is None else level), 12))\n"
        '    rounds: Annotated[int, typer.Option(help="Bootstrap rounds")] = 10_000,\n'
        "    seed: Seed = 1,\n"
        '                seed=meta.get("seed", 1),\n'
        'def segment_batch(batch: Iterable[str], segmenter_name: str = "syntok"):\n'
        '    clusters: str = "auto"  # questions sharing a document\n'
        "    rounds: int = DEFAULTS.rounds,\n"
        "MAX_ROUNDS = 10_000_000\n"
        "    seed: int | None = 0  # a model's sampling seed, not a draw's\n"
        '            f"{what} must be between {lowest:g} and 1, got {confidence}; e.g. 0.95"\n'
    )
    found = copies_of_rules(tmp_path)
    assert [f.split(": ")[0] for f in found] == [f"view.py:{n}" for n in range(1, 12)]
    assert all(f.endswith("defaults.DEFAULTS / defaults.EARLIER") for f in found)

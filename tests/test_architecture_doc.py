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
    # an answer set read again where one already read could be handed on
    (
        r"isinstance\(\w+, AnswerSet\) else",
        "answers.store.as_answer_set / answers.store.graded_answers",
        ("answers/store.py",),
    ),
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
    # a half-width printed by hand at the row's digits (a narrow one then prints as 0):
    # in Python ``f"{r.half_width * scale:.{d}f}"``, in the page's script
    # ``fmtDiff(m, row.half_width)``
    (
        r"(?<![A-Za-z])half_width\b[^}\n]*\*[^}\n]*:\.|(diffNum|fmtDiff|toFixed)\([^)\n]*half_width",
        "comparison.formatting.format_half_width",
        ("comparison/formatting.py",),
    ),
    # a cache's place worked out again: the named-file suffixes or the "off" words (the
    # history's own folder rule, .sqlite or .db only, is another rule)
    (
        r'suffix in \([^)]*"\.sqlite3"|\("off", "0", "false", "no", "none"\)',
        "files.sqlite.cache_file / files.sqlite.names_file",
        ("files/sqlite.py",),
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
        r"\b10 if 10 in \w+\b|\b5 if 5 in \w+ else\b",
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
    # who won decided again from the sign of a row's difference (and so the direction of
    # the measure taken for granted): the row carries its winner, the direction is the
    # measure's
    (
        r"\bif\s+\w+\.difference\.mean\s*[<>]=?\s*0\s+else\b",
        "comparison.verdicts.Row (winner) / comparison.ranks.ahead_pairs",
        ("stats/paired.py",),
    ),
    # a default written again as a literal: rounds or confidence in a signature, a field, a
    # constant or a fallback (``x: int = 10_000``, ``.get("confidence", 0.95)``, ``else
    # 0.95``, the report's script's ``|| 0.95``); a seed, a cluster mode or a segmenter in a
    # signature; the reader's k as a literal fallback or constant; a level printed with a
    # fallback of its own where the data it reads always holds the run's; planning's target
    # half-width, difference or power in a signature
    (
        r"(:\s*[\w.| ]+|\])\s*=\s*(10_?000|0\.95)\b(?![\d_.])"
        r"|(\.get\([^)]*,|\belse|\bor|\|\|)\s*(10_?000|0\.95)\b(?![\d_.])"
        r"|\.get\(\s*[\"']k[\"']\s*\)\s*or\s*\d+\b|^DEFAULT_K = \d+\b"
        r"|\.get\(\s*[\"']confidence[\"'],[^)]*\)\s*\*\s*100\b"
        r"|\b(half_width|difference|power)\s*:\s*float\s*=\s*\d|^TARGET_HALF_WIDTH = \d"
        r"|\b(10_?000|0\.95) if\b|^[A-Z_]+ = (10_?000|0\.95)\b(?![\d_.])"
        r"|\bseed: [\w.| ]+ = 1\b|\bseed\W*\]\s*=\s*1\b|[\"']seed[\"'], 1\)"
        r"|\b(segmenter|segmenter_name|cluster_mode|clusters): str = [\"']"
        r"|\balpha: float = 0\.0\d*\b|\bpower 0\.\d",
        "defaults.DEFAULTS / defaults.EARLIER",
        ("defaults.py",),
    ),
    # the digest a record keeps of a run's scores.json, hashed again beside the store
    (
        r"\bblake2b\([\w\[\]\"'.]+, digest_size=16\)\.hexdigest\(",
        "history.store.scores_digest_of",
        ("history/store.py",),
    ),
    # the family names listed again, or what a family compares worded again
    (
        r"[\"']all[\"'],\s*[\"']grid[\"']|[\"']grid[\"'],\s*[\"']retrievers[\"']"
        r"|[\"'](retrievers within each strateg|strategies within each retriev)",
        "inputs.family_names.FAMILY_LABELS",
        ("inputs/family_names.py",),
    ),
    # a run or its folder told apart by hand where a function takes either
    (
        r"\bisinstance\(\w+, Results\) else (Results|Path)\(",
        "runs.results.as_results / runs.results.results_path",
        ("runs/results.py",),
    ),
    # a recorded baseline found and written back beside its one home (as the CLI once did)
    (
        r"\b(resolve_ref|materialise)\(",
        "history.baseline.recorded_baseline",
        ("history/baseline.py",),
    ),
    # points typed by a person converted to a fraction and back, an old fraction told
    # apart from points again, or a margin, half-width or difference turned between points
    # and a fraction by hand (the library holds fractions; the command line converts once)
    (
        r"\bpoints\([^)]*\)\s*\*\s*100|^\s*if 0 < (value|margin|half_width|difference) < 1:"
        r"|\b(margin|half_width|difference)\w*\s*/\s*100(\.0)?\b|\bmargin\w*\s*\*\s*100(\.0)?\b",
        "cli.app.points",
        ("cli/app.py",),
    ),
    # the nearest name suggested again
    (r"\bget_close_matches\(", "errors.did_you_mean", ("errors.py",)),
    # a CSV written by another writer than the one that neutralises formulas
    (r"\bcsv\.(writer|DictWriter)\(", "files.safe_text.csv_text", ("files/safe_text.py",)),
    # a name escaped for Markdown by hand
    (r"[\"']&lt;[\"']", "files.safe_text.markdown_text", ("files/safe_text.py",)),
    # a manifest entry sealed or checked beside the manifest
    (
        r"\bhmac\.",
        "files.manifest.is_recorded / files.manifest.manifest_key",
        ("files/manifest.py",),
    ),
    # a saved run's relevance level read from meta.json by hand
    (
        r"\.get\(\s*[\"']relevant_grade[\"'],",
        "scoring.measurement.relevance_level_of",
        ("scoring/measurement.py",),
    ),
    # a confidence level checked by hand
    (
        r"\b0(\.0)? < \w*confidence\w* < 1|confidence\w* must be between",
        "stats.validate.check_confidence",
        ("stats/validate.py",),
    ),
    # whether questions cluster decided again (the auto threshold or its pre-test)
    (
        r"\bAUTO_CLUSTERS\b|\bclusters_matter\(",
        "stats.clusters.decide_clusters",
        ("stats/clusters.py",),
    ),
    # the choice between the exact interval and the bootstrap's made again
    (
        r"\bmin\(\w+, \w+ - \w+\) >= FEW|>= SMALL\b",
        "stats.exact.exact_for",
        ("stats/exact.py",),
    ),
    # an interval end set by the decision found again
    (
        r"\b_AT_ZERO\b|\babs\(\w+\) < 1e-300",
        "comparison.formatting.decided_end",
        ("comparison/formatting.py",),
    ),
    # control characters matched by hand instead of through printable
    (
        r"\\x00-\\x(08|1f)|\\x7f-\\x9f|\bunicodedata\.category\(",
        "files.safe_text.printable",
        ("files/safe_text.py",),
    ),
    # a flip rate computed again
    (
        r"\(\w*pairs - \w*agree\w*\) /",
        "stats.rerun_variance.question_flip_rates",
        ("stats/rerun_variance.py",),
    ),
    # a question matched by nothing decided again (its best item's score)
    (
        r"\bmax\(\(\w+\.score for \w+ in \w+\), default=",
        "comparison.summary.unmatched_questions",
        ("comparison/summary.py",),
    ),
    # a metric's name read again (split on its ``@``) or a family's rule written again (a
    # list of the share families, a share's x100 chosen by hand, any module-level tuple or
    # set of family names), in Python or the report's script: the family table and the
    # metric read from a name are the one home
    (
        r"\.(r?split|r?partition)\(\s*[\"']@[\"']|[\"']@[\"'] (not )?in \w"
        r"|\bin (SHARE|COST)_FAMILIES\b|\b100(\.0)? if \w*(is_share\(|share\b)"
        r"|[\"'](recall|hit|precision|coverage)[\"'],\s*[\"'](recall|hit|precision|coverage)[\"']"
        # a snapshot of the table kept as a view's constant (family names in a tuple or a
        # set): a row added to the table would not reach it
        r"|^[A-Z_]+\s*(:[^=]+)?=\s*(frozenset\(|set\(|tuple\()?[(\[{]\s*"
        r"[\"'](recall|hit|precision|mrr|ndcg|map|rprec|coverage|words)[\"'],",
        "scoring.names.FAMILIES / metric_of / metric_scale / difference_scale",
        ("scoring/names.py",),
    ),
    # a difference or half-width scaled to points by hand where its scale comes with the
    # metric: a share asked again in the report's script, or its x100 written there or in
    # the report's charts (the page reads metric_info's difference scale, digits and unit),
    # or a difference printed in points whatever the metric (as the gate once printed MRR)
    (
        r"\bisShare\(|\*\s*100\)\.toFixed\(|\b(half_width|target)\W*\*\s*100\b"
        r"|\b(format_difference|difference_interval)\([^)]*\bPOINTS\b|\* POINTS:\.1f\b",
        "scoring.names.difference_scale / metric_info (difference_scale, difference_unit)",
        ("scoring/names.py",),
    ),
    # what a family's adjustment guarantees worded again, or Benjamini-Hochberg's step-up
    # written again beside the one decision
    (
        r"false 'better' among the 'better'|\bmultipletests\("
        r"|\(\s*\w+\s*\+\s*1\s*\)\s*\*\s*\w*alpha\w*\s*/\s*\w+\b",
        "stats.adjust.decide / stats.adjust.guarantee",
        ("stats/adjust.py", "stats/paired.py"),
    ),
    # the names --pairs may use made again: the grid's averaged rows added by hand
    (
        r"\+=\s*(list\()?(dict\.fromkeys\()?[^#]*\bmain_effect_names\(",
        "comparison.effects.pair_names",
        ("comparison/effects.py",),
    ),
    # a table decided beside its one decision: the step-down decision, the inverted
    # intervals or the differing questions a tie needs, called from a view, or a tie worded
    # again (the paired tests themselves live in stats/)
    (
        r"\bdecide\(\s*\w*flips\b|\b(tango_ends|flip_ends|min_differing)\("
        r"|too few differing questions",
        "comparison.verdicts.compare_family",
        ("stats/", "comparison/verdicts.py"),
    ),
    # what a run measured fingerprinted again, or two measurements compared by hand
    (
        r"\b(corpus|testset)_fingerprint\(|\.measurement\s*[!=]=\s*\w+\.measurement\b"
        r"|\[[\"']measurement[\"']\]\s*[!=]=|[\"']corpus[\"'],\s*[\"']testset[\"']\)",
        "scoring.measurement.describe / scoring.measurement.differences",
        ("scoring/measurement.py",),
    ),
    # a file of the user's told apart from ragmeter's by hand (an empty one counts as
    # free), or an empty folder found again, beside the output rule (whether ragmeter wrote
    # a file is the manifest's is_recorded, and anyone may ask it)
    (
        r"\bis_empty_file\(|\bnot any\(\w+\.iterdir\(\)\)"
        r"|is not a [\w{}]+ written by ragmeter",
        "files.outputs.check_output_file / files.outputs.check_results_target",
        ("files/",),
    ),
    # a results directory locked by hand (an flock, or a lock file made exclusively); the
    # manifest's own flock guards the manifest, not the directory
    (
        r"\bfcntl\.(flock|lockf)\(|\bLOCK_EX\b|\bos\.open\([^,]*lock[^,]*,[^)]*\bO_EXCL\b",
        "files.outputs.results_lock",
        ("files/outputs.py", "files/manifest.py"),
    ),
    # ranks found beside their one home: the rank ranges read from a table, or every pair
    # compared again under max-T for them
    (
        r"\branks_of\(|\bin FAMILYWISE\b|adjust in \([\"']maxt[\"'], [\"']holm[\"']\)"
        r"|adjust=[\"']maxt[\"'][^)]*family=[\"']all[\"']",
        "comparison.ranks.resolve_ranks",
        ("comparison/ranks.py",),
    ),
    # a cost told apart from a score by its name (words sent) instead of by its family's row
    (
        r"[!=]==?\s*[\"']words[\"']|\.startswith\(\s*[\"']words|[\"']words[\"'] (not )?in \w"
        r"|\.indexOf\([\"']words",
        "scoring.names.lower_is_better",
        ("scoring/names.py",),
    ),
    # the rounds a sign-flip test needs to resolve a level, worked out again
    (
        r"/ \([\w.]*rounds \+ 1\) *[<>]=? *[\w.]*level|[\w.]*level \* \([\w.]*rounds \+ 1\)"
        r"|1(\.0)? / [\w.]*level\b",
        "stats.paired_tests.rounds_for_level",
        ("stats/paired_tests.py",),
    ),
    # an answer measure's passing grades listed again beside its row
    (
        r"[\"']correct[\"']\s*,\s*[\"']partial[\"']\s*\)",
        "scoring.names.passing_grades",
        ("scoring/names.py",),
    ),
    # a system's rankings graded and scored beside the one scorer (found units, the span
    # index of the ideal ranking)
    (
        r"\bfound_units\(|\bSpanIndex\(",
        "runs.scoring.score_system",
        ("runs/scoring.py", "scoring/"),
    ),
    # a run's (systems x questions) matrix stacked by hand from its scores
    (
        r"\b(np\.)?(vstack|stack|array)\(\s*\[\s*\w+\.scores\(",
        "runs.reading.ReadableRun / runs.reading.RunReading",
        ("runs/reading.py",),
    ),
    # a run's meta.json read by its raw keys where the typed field (with the defaults of
    # older files) holds it (the relevance level given a default is relevance_level_of's)
    (
        r"\b\w*meta\.get\(\s*([\"'](ks|depth|ideal|gain|measurement|metrics)[\"']"
        r"|[\"']relevant_grade[\"']\s*\))",
        "runs.meta.RunMeta",
        ("runs/meta.py", "scoring/measurement.py"),
    ),
    # how many questions would settle a pair worked out beside the planner
    (
        r"\bquestions_to_separate\(\s*\w+\[\w+\],|\bdocuments_to_separate\(",
        "stats.planning.plan_questions / stats.planning.pair_needs",
        ("stats/planning.py", "stats/clusters.py"),
    ),
    # a measure found in a run's names by parsing and comparing them again
    (
        r"\bMetric\.parse\([^()]*\)\s*==|==\s*Metric\.parse\(",
        "scoring.names.find_metric",
        ("scoring/names.py",),
    ),
    # a grid family's pairs grouped again by a cell's strategy or retriever, or "auto"
    # resolved again (the main effects, which average rows by cell, are no copy)
    (
        r"\.setdefault\(\w*cells\[\w+\]\[|[\"']grid[\"'] if grid_cells\(",
        "comparison.systems.family_of / comparison.families.grid_pairs",
        ("comparison/families.py", "comparison/systems.py"),
    ),
    # one system's identity across runs made again from its strategy and retriever
    (
        r"\bjson\.dumps\(\[?[^)]*strategy[^)]*retriever"
        r"|(\.get\(|\[)[\"']strategy[\"'](\)|\])\s*==.{0,60}(\.get\(|\[)[\"']retriever[\"']",
        "history.systems.system_identity / history.systems.match_system",
        ("history/systems.py",),
    ),
    # a run's planning inputs read from its summary again (the rule's pairs, else every
    # pair; its adjustment, else Holm; max-T's first level)
    (
        r"\.pairs if \w+ is not None else|\.adjust if \w+ is not None else|\bfirst_level\(",
        "stats.planning.planning_inputs",
        ("stats/planning.py",),
    ),
    # a summary.json read by hand: its drawn settings given an older file's defaults again
    (
        r"\.get\(\s*[\"']method[\"'],\s*[\"']percentile[\"']"
        r"|json\.loads?\(.*summary\.json.*\)\[[\"']",
        "comparison.summary.Summary (from_json)",
        ("comparison/summary.py",),
    ),
    # a secret hidden by hand: the mark written again, or secret names listed again
    (
        r"[\"']\*{3}[\"']|\bis_secret_name\("
        r"|(api_?key|secret|password|token)\|(api_?key|secret|password|token)"
        r"|[\"'](api_key|secret|password|token)[\"'],\s*[\"'](api_key|secret|password|token)[\"']",
        "files.safe_text.redact",
        ("files/safe_text.py",),
    ),
    # JSON text searched for a lone surrogate's escape by hand (a regex of ``\\uD800``, the
    # code points compared, the refusal worded again); a segmenter's own character class of
    # surrogates (ICU's input) is no check of JSON
    (
        r"\\\\u\[?[dD]|\b0x[dD][89a-fA-F]00\b|lone surrogate escape",
        "files.io.refuse_lone_surrogates",
        ("files/io.py",),
    ),
    # an answer plan's half-width or questions worked out again from its noise
    (
        r"sqrt\(\(?\w*between\w* \+ \w*within\w* / \w+\)? / \w+"
        r"|\bsqrt\(\w+\.variance\(\w+, \w+\)\)|\*\* ?2 \* \w+\.variance\(",
        "stats.answer_plan.predicted_half_width / questions_for_half_width",
        ("stats/answer_plan.py",),
    ),
    # a prompt's tokens counted or estimated beside the one counter
    (
        r"\bCHARS_PER_TOKEN\b|\blen\(\w*(text|prompt|content|message)\w*\) ?//? ?4(\.0)?\b"
        r"|\.tokenize\(\w*\.?\w*\.encode\("
        r"|vocab_only=True|\btiktoken\.",
        "llm.tokens.token_counter",
        ("llm/tokens.py",),
    ),
    # prices read or priced per million tokens beside [prices]
    (
        r"[\"'](reader|judge)_(prompt|completion)[\"']"
        r"|tokens\w*\)? ?/ ?(1e6|1_000_000)\b|per million tokens, got",
        "inputs.prices.check_prices",
        ("inputs/prices.py",),
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


def test_a_cache_place_worked_out_again_is_a_copy(tmp_path):
    (tmp_path / "cache.py").write_text(
        '_OFF = ("off", "0", "false", "no", "none")\n'
        'if p.suffix in (".sqlite3", ".sqlite", ".db"):\n'
        'path = p if p.suffix in (".db", ".sqlite3") else p / DB_NAME\n'
        'return cache_file(ENV, "scores", DB_NAME)\n'
    )
    found = [x for x in copies_of_rules(tmp_path) if "files.sqlite.cache_file" in x]
    assert sorted(x.split(": ")[0] for x in found) == ["cache.py:1", "cache.py:2", "cache.py:3"]


def test_a_half_width_printed_by_hand_is_a_copy(tmp_path):
    (tmp_path / "view.py").write_text(
        'cell = f"{shown_half_width(r) * scale:.{d}f}"\n'
        'cell = f"{row.half_width * 100:.1f}"\n'
        "cell = format_half_width(shown_half_width(r), metric)\n"
        'target = f"± {found.half_width * scale:g}"  # a target the user typed\n'
    )
    (tmp_path / "page.js").write_text(
        '" carries ± " + fmtDiff(m, first.half_width) + " on "\n'
        '{ text: by[n] === undefined ? "" : by[n], cls: "num" }\n'
    )
    found = copies_of_rules(tmp_path)
    homes = "comparison.formatting.format_half_width"
    assert sorted(x.split(": ")[0] for x in found if homes in x) == [
        "page.js:1", "view.py:1", "view.py:2"
    ]  # fmt: skip


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
        "main_k = _k(metric) or (5 if 5 in ks else ks[-1])  # the report's own, once\n"
        "top, mid = shown_cutoffs(metrics)\n"
    )
    found = copies_of_rules(tmp_path)
    assert [f.split(": ")[0] for f in found] == ["view.py:1", "view.py:2", "view.py:3"]
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


def test_a_winner_decided_from_a_differences_sign_is_a_copy(tmp_path):
    # the copy cli/failure_views.py held: "fails less" from the sign, the direction assumed
    found = _found(
        tmp_path,
        [
            'verdict = f"{row.b if row.difference.mean > 0 else row.a} fails less"',
            "ahead = ahead_pairs([row], lower_better=lower_is_better(ANY))",
            "best = r.a if r.difference.mean >= 0 else r.b",
            "low, high = (low + MARK, high) if d.mean > 0 else (low, high + MARK)",
        ],
    )
    assert [f.split(": ")[0] for f in found] == ["view.py:1", "view.py:3"]
    assert all(f.endswith("comparison.ranks.ahead_pairs") for f in found)


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
    # the copies answers/, report/ and the report's script held before the reader's k and
    # the report's level came from the record (the lines after each are no copy)
    (tmp_path / "more.py").write_text(
        '    k = check_k(k if k is not None else int(meta.get("k") or 5), depth=depth)\n'
        '                k=meta.get("k", 1),  # the reruns, K\n'
        "DEFAULT_K = 5\n"
        "return f\"{(data.get('stats') or {}).get('confidence', EARLIER.confidence) * 100:g}%\"\n"
        "title=f\"{h['metric']} [{h.get('confidence', EARLIER.confidence) * 100:g}% CI]\",\n"
        "    k = check_k(k if k is not None else aset.k, depth=depth)\n"
        "DEFAULT_K = DEFAULTS.reader_k\n"
        '    return int(meta.get("k") or EARLIER.reader_k)\n'
        "    return f\"{data['stats']['confidence'] * 100:g}%\"\n"
        "    scores: ArrayLike, half_width: float = 0.04, confidence: float = 0.9\n"
        "    difference: float = 0.05,\n"
        "    noise: NoiseModel, k: int, difference: float, alpha: float, power: float = 0.8\n"
        "TARGET_HALF_WIDTH = 0.04\n"
        "    half_width: float = DEFAULTS.half_width,\n"
        "    half_width: float | None = None,\n"
        "    alpha: float = 0.05,\n"
        '+ (f"; separate: a {difference}-point paired difference, power 0.8" if plan.pairs\n'
        "    alpha: float = 0.5,  # the fused scores' weight, no level\n"
        '+ (f"; separate: a {difference}-point paired difference, power {DEFAULTS.power:g}"\n'
    )
    (tmp_path / "report.js").write_text(
        '  const level = (c) => Math.round((c || 0.95) * 1000) / 10 + "%";\n'
        '      item("intervals", Math.round((st.confidence || 0.95) * 100) +\n'
        '  const level = (c) => Math.round(c * 1000) / 10 + "%";\n'
        '  const n = DATA.rounds || "?";\n'
    )
    found = copies_of_rules(tmp_path)
    where = sorted((f.split(":")[0], int(f.split(":")[1])) for f in found)
    assert [f"{name}:{n}" for name, n in where] == [
        *(f"more.py:{n}" for n in (1, 3, 4, 5, 10, 11, 12, 13, 16, 17)),
        "report.js:1",
        "report.js:2",
        *(f"view.py:{n}" for n in range(1, 12)),
    ]
    assert all(f.endswith("defaults.DEFAULTS / defaults.EARLIER") for f in found)


def test_an_answer_set_read_again_beside_its_conversion_is_a_copy(tmp_path):
    (tmp_path / "view.py").write_text(
        "aset = results if isinstance(results, AnswerSet) else load_answers(results)\n"
        "aset = as_answer_set(results)\n"
    )
    assert copies_of_rules(tmp_path) == [
        "view.py:1: belongs to answers.store.as_answer_set / answers.store.graded_answers"
    ]


def test_the_scores_digest_hashed_again_is_a_copy(tmp_path):
    # the copies history/store.py and history/baseline.py held before one function kept it
    (tmp_path / "record.py").write_text(
        'digest = blake2b(files["scores.json"], digest_size=16).hexdigest()\n'
        "    return blake2b(data, digest_size=16).hexdigest()\n"
        '    key = hashlib.blake2b(p.encode("utf-8"), digest_size=16)\n'
        "    h = hashlib.blake2b(digest_size=16)\n"
        'digest = scores_digest_of(files["scores.json"])\n'
    )
    found = copies_of_rules(tmp_path)
    assert [f.split(": ")[0] for f in found] == ["record.py:1", "record.py:2"]
    assert all(f.endswith("history.store.scores_digest_of") for f in found)


def test_the_family_names_listed_again_are_a_copy(tmp_path):
    # the copies inputs/config.py, comparison/families.py and cli/search_views.py held
    (tmp_path / "families.py").write_text(
        'FAMILY_CHOICES = ("auto", "all", "grid", "retrievers", "strategies")\n'
        "GRID_LABELS = {\n"
        '    "grid": "retrievers within each strategy and strategies within each retriever",\n'
        '    "retrievers": "retrievers within each strategy",\n'
        '    "strategies": "strategies within each retriever",\n'
        "}\n"
        '            f"retrievers within each strategy and strategies within each retriever "\n'
        '        if family != "grid" and family != ("retrievers", "strategies")[axis]:\n'
        "GRID_LABELS = {f: FAMILY_LABELS[f] for f in GRID_FAMILIES}\n"
    )
    found = copies_of_rules(tmp_path)
    assert [f.split(": ")[0] for f in found] == [f"families.py:{n}" for n in (1, 3, 4, 5, 7)]
    assert all(f.endswith("inputs.family_names.FAMILY_LABELS") for f in found)


def test_a_run_or_its_folder_told_apart_by_hand_is_a_copy(tmp_path):
    # the copies answers/, history/gate.py and questions/flagged.py held before one helper
    (tmp_path / "reader.py").write_text(
        "    res = results if isinstance(results, Results) else Results(results)\n"
        "    base = results.path if isinstance(results, Results) else Path(results)\n"
        "    cand = candidate if isinstance(candidate, Results) else Results(candidate)\n"
        "    res = as_results(results)\n"
        "    if isinstance(results, SearchRun | Results):\n"
    )
    found = copies_of_rules(tmp_path)
    assert [f.split(": ")[0] for f in found] == ["reader.py:1", "reader.py:2", "reader.py:3"]
    assert all(f.endswith("runs.results.results_path") for f in found)


def test_a_recorded_baseline_found_outside_its_home_is_a_copy(tmp_path):
    # the copy cli/history.py held before the baseline moved into history/
    (tmp_path / "history.py").write_text(
        "        run = resolve_ref(\n"
        '        path = materialise(store, run.id, Path(folder.name) / f"run-{run.id}")\n'
        "        found = recorded_baseline(store, ref, candidate, folder.name, system=system)\n"
    )
    found = copies_of_rules(tmp_path)
    assert [f.split(": ")[0] for f in found] == ["history.py:1", "history.py:2"]
    assert all(f.endswith("history.baseline.recorded_baseline") for f in found)


def test_points_converted_to_a_fraction_and_back_are_a_copy(tmp_path):
    # the copy cli/check.py held before the command line converted once at its edge
    (tmp_path / "check.py").write_text(
        '    margin_points = points(margin, "--margin") * 100.0  # read as plan reads\n'
        "    if 0 < margin < 1:\n"
        '    margin = points(margin, "--margin")\n'
        "    level = 1.0 - alpha if 0 < alpha < 1 else 0.5\n"
    )
    found = copies_of_rules(tmp_path)
    assert [f.split(": ")[0] for f in found] == ["check.py:1", "check.py:2"]
    assert all(f.endswith("cli.app.points") for f in found)


def test_a_copy_of_each_remaining_rule_is_found(tmp_path):
    # one copy of each rule as a view would write it again beside its home; the line
    # after each calls the home and is no copy
    copies = [
        ("close = difflib.get_close_matches(name, names, n=1)", "errors.did_you_mean"),
        ("writer = csv.writer(out)", "files.safe_text.csv_text"),
        ('name = name.replace("<", "&lt;")', "files.safe_text.markdown_text"),
        ("seal = hmac.new(key, name.encode(), hashlib.sha256).hexdigest()", "manifest_key"),
        ('level = int(meta.get("relevant_grade", 2))', "relevance_level_of"),
        ("if not 0 < confidence < 1:", "stats.validate.check_confidence"),
        ("used = groups >= AUTO_CLUSTERS or clusters_matter(x, codes)", "decide_clusters"),
        ("if n >= SMALL and min(hits, n - hits) >= FEW:", "stats.exact.exact_for"),
        ("starred = mean > 0 and abs(low) < 1e-300", "comparison.formatting.decided_end"),
    ]
    homes = [
        "suggestion = did_you_mean(name, names)",
        "text = csv_text(columns, rows)",
        "name = markdown_text(name)",
        "ours = is_recorded(path)",
        "level = relevance_level_of(meta)",
        "check_confidence(confidence)",
        "used, reason = decide_clusters(x, labels, mode)",
        "exact = exact_for(hits, n, low, high)",
        "starred = decided_end(row)",
    ]
    (tmp_path / "view.py").write_text(
        "".join(f"{copy}\n{home}\n" for (copy, _), home in zip(copies, homes, strict=True))
    )
    found = copies_of_rules(tmp_path)
    assert [f.split(": ")[0] for f in found] == [f"view.py:{2 * i + 1}" for i in range(9)]
    for line, (_, home) in zip(found, copies, strict=True):
        assert line.endswith(home) or home in line.split("belongs to ")[1], line


def test_a_copy_of_printing_flip_rates_or_unmatched_questions_is_found(tmp_path):
    (tmp_path / "view.py").write_text(
        'CONTROL = re.compile(r"[\\x00-\\x1f\\x7f]")\n'
        "text = printable(name)\n"
        "rate = (pairs - agreeing) / pairs\n"
        "rate = question_flip_rates(coded)\n"
        'best = [max((it.score for it in row), default=float("-inf")) for row in rows]\n'
        "missed = unmatched_questions(run.systems, run.questions)\n"
    )
    found = copies_of_rules(tmp_path)
    assert [f.split(": ")[0] for f in found] == ["view.py:1", "view.py:3", "view.py:5"]
    assert [f.rsplit(" ", 1)[1] for f in found] == [
        "files.safe_text.printable",
        "stats.rerun_variance.question_flip_rates",
        "comparison.summary.unmatched_questions",
    ]


def test_a_margin_turned_between_points_and_a_fraction_by_hand_is_a_copy(tmp_path):
    # the copies history/gate.py held while the gate took points: the margin divided into
    # a fraction at the decision and multiplied back for a message
    (tmp_path / "gate.py").write_text(
        "    passed = identical or bool(diff.low > -margin / 100.0)\n"
        "    shown = margin_fraction * 100.0\n"
        "    passed = identical or bool(diff.low > -margin)\n"
        "    return round(self.margin * POINTS, 9) + 0.0\n"
    )
    found = copies_of_rules(tmp_path)
    assert [f.split(": ")[0] for f in found] == ["gate.py:1", "gate.py:2"]
    assert all(f.endswith("cli.app.points") for f in found)


def test_a_difference_scaled_to_points_by_hand_in_the_report_is_a_copy(tmp_path):
    # the copies the report's script and charts held before metric_info carried each
    # metric's difference scale, digits and unit; the lines after them read those
    (tmp_path / "report.js").write_text(
        '      return isShare(m) ? (d * 100).toFixed(1) + " points" : d.toFixed(3);\n'
        "    const target = ss.target * 100;\n"
        '        " carries ± " + (first.half_width * 100).toFixed(1) + " points on " +\n'
        '      text: by[n] === undefined ? "" : (by[n] * 100).toFixed(1), cls: "num" }\n'
        "    comparisonTable(tab, t.rows, t.rule, t.difference_unit, false);\n"
        "    const target = diffScaled(m, ss.target) + unit;\n"
        '      text: by[n] === undefined ? "" : diffNum(m, by[n]), cls: "num" }\n'
    )
    (tmp_path / "charts.py").write_text(
        '    target = ss["target"] * 100\n'
        '                    "hw": row["half_width"] * 100,\n'
        '    target = ss["target"] * difference_scale(ss["metric"])[0]\n'
    )
    # the gate's copies: every metric's difference, loss and margin printed in points
    (tmp_path / "gate.py").write_text(
        '            f"{format_difference(d, POINTS)} points "\n'
        '    else [f"| {d.confidence * 100:g}% interval | {difference_interval(d, POINTS)} |"]\n'
        '        f"; observed loss {-d.mean * POINTS:.1f} points: {passes} (a margin is set "\n'
        '            f"{format_difference(d, *difference_scale(self.metric))}{self._unit()} "\n'
        "        return round(self.margin * POINTS, 9) + 0.0  # what --margin took\n"
    )
    found = copies_of_rules(tmp_path)
    assert [f.split(": ")[0] for f in found] == [
        "charts.py:1",
        "charts.py:2",
        "gate.py:1",
        "gate.py:2",
        "gate.py:3",
        *(f"report.js:{n}" for n in range(1, 5)),
    ]
    assert all(f.endswith("metric_info (difference_scale, difference_unit)") for f in found)


def test_a_guarantee_worded_again_or_pair_names_made_again_are_copies(tmp_path):
    # the copies the command line's --adjust help and grade's own check of --pairs held
    found = _found(
        tmp_path,
        [
            "    \"controls the share of false 'better' among the 'better' verdicts, not the \"",
            "    reject = p_sorted <= (ranks + 1) * alpha / m",
            "    known += list(dict.fromkeys(n for p in main_effect_names(names) for n in p))",
            '    f"{FDR_GUARANTEE}; none: the seed\'s per-pair rule"',
            "    known = pair_names(systems, pairs)",
            "    return len(planned) + len(main_effect_names([str(s) for s in systems]))",
        ],
    )
    assert [f.split(": ")[0] for f in _by_line(found)] == ["view.py:1", "view.py:2", "view.py:3"]
    assert [f.rsplit(" to ", 1)[1] for f in _by_line(found)] == [
        "stats.adjust.decide / stats.adjust.guarantee",
        "stats.adjust.decide / stats.adjust.guarantee",
        "comparison.effects.pair_names",
    ]


def test_an_answer_measures_passing_grades_listed_again_are_a_copy(tmp_path):
    # the two dicts answers/corrected.py and answers/flips.py held before the row did
    found = _found(
        tmp_path,
        [
            'PASSING = {"correct": ("correct",), "correct or partial": ("correct", "partial")}',
            '    "correct_or_partial": ("correct", "partial"),',
            "PASSING = {m: passing_grades(m) for m in answer_measures()}",
            '    "correct_or_unscored": ("correct", UNSCORED),',
        ],
    )
    assert [f.split(": ")[0] for f in _by_line(found)] == ["view.py:1", "view.py:2"]
    assert all(f.endswith("scoring.names.passing_grades") for f in found)


def test_the_rounds_a_level_needs_worked_out_again_are_a_copy(tmp_path):
    found = _found(
        tmp_path,
        [
            "if 1 / (rule.rounds + 1) >= r.level:",  # the check the note makes, by hand
            "need = math.floor(1.0 / level) + 1",
            "hits = math.ceil(row.level * (rounds + 1)) - 1",
            "need = rounds_for_level(rule.alpha / (rule.pairs + 1))",
        ],
    )
    assert [f.split(": ")[0] for f in _by_line(found)] == ["view.py:1", "view.py:2", "view.py:3"]
    assert all(f.endswith("stats.paired_tests.rounds_for_level") for f in found)


def test_every_rule_in_the_table_has_a_copy_pattern():
    # a rule with no pattern could be written again unseen: each row of the one-home
    # table names a home that some pattern of COPIES reports
    section = DOC.split("## One home for each rule", 1)[1].split("\n## ", 1)[0]
    reported = " ".join(home for _, home, _ in COPIES)
    rows = [line for line in section.splitlines() if line.startswith("| ") and "`" in line]
    assert len(rows) >= 40
    unwatched = []
    for row in rows:
        homes = re.findall(r"`[a-z_.]+\.([A-Za-z_]+)`", row.rsplit(" | ", 1)[1])
        if not any(re.search(rf"\b{name}\b", reported) for name in homes):
            unwatched.append(homes)
    assert unwatched == []


def _found(tmp_path: Path, lines: list[str], name: str = "view.py") -> list[str]:
    (tmp_path / name).write_text("".join(f"{line}\n" for line in lines))
    return copies_of_rules(tmp_path)


def _by_line(found: list[str]) -> list[str]:
    """Findings in line order (copies_of_rules lists them pattern by pattern)."""
    return sorted(found, key=lambda f: int(f.split(":")[1]))


def test_a_table_decided_ranked_or_planned_beside_its_home_is_a_copy(tmp_path):
    # each rule's copy as a view would write it again, then the call of its home (and,
    # where one stands in the tree, a line that looks alike and is no copy)
    copies = [
        (
            "p_raw, p_adj, reject, levels = decide(flips, binary, counts, pairs, alpha, rule)",
            "comparison.verdicts.compare_family",
        ),
        ("needed = min_differing(float(levels[c]))", "comparison.verdicts.compare_family"),
        ('tie = f"tie: too few differing questions ({differ} of {n})"', "compare_family"),
        (
            'own = table.rule.family == "all pairs" and table.rule.adjust in ("maxt", "holm")',
            "comparison.ranks.resolve_ranks",
        ),
        (
            'every = compare_systems(mats, names, replace(plan, adjust="maxt", family="all"))',
            "comparison.ranks.resolve_ranks",
        ),
        (
            "need = questions_to_separate(scores[a], scores[b], difference, 1.0 - alpha)",
            "stats.planning.pair_needs",
        ),
        ("docs = documents_to_separate(diff, codes, difference, level)", "pair_needs"),
        (
            "pairs = rule.pairs if rule is not None else m * (m - 1) // 2",
            "stats.planning.planning_inputs",
        ),
        ('adjust = rule.adjust if rule is not None else "holm"', "planning_inputs"),
        ("first = first_level(rule, summary.comparisons)", "stats.planning.planning_inputs"),
        ("groups.setdefault(cells[n][axis], []).append(i)", "comparison.families.grid_pairs"),
        ('kind = "grid" if grid_cells(systems) is not None else "all"', "family_of"),
    ]
    others = [
        "table = compare_family(m, names, adjust=adjust, alpha=alpha, rounds=rounds)",
        "verdict = gate.decide(baseline, candidate)",
        "verdict = stats.verdict_text(winner, tie)",
        "ranks = resolve_ranks(matrices, systems, plan, table)",
        "ranks = resolve_ranks(matrices, systems, plan, table)",
        "needs = pair_needs(scores, names, difference, family, alpha)",
        "need = questions_to_separate(pair_noise, reruns, difference, level, power)",
        "inputs = planning_inputs(results)",
        "inputs = planning_inputs(results)",
        "inputs = planning_inputs(results)",
        "members = [i for i, n in enumerate(names) if cells[n][axis] == level]",
        "kind = family_of(plan, systems)",
    ]
    lines = [x for (copy, _), other in zip(copies, others, strict=True) for x in (copy, other)]
    found = _by_line(_found(tmp_path, lines))
    assert [f.split(": ")[0] for f in found] == [f"view.py:{2 * i + 1}" for i in range(12)]
    for line, (_, home) in zip(found, copies, strict=True):
        assert home in line.split("belongs to ")[1], line


def test_a_run_read_scored_or_measured_beside_its_home_is_a_copy(tmp_path):
    copies = [
        ("m = np.vstack([results.scores(s, metric) for s in systems])", "runs.reading"),
        ("m = np.array([run.scores(name, metric) for name in names])", "runs.reading"),
        ('depth = res.meta.get("depth")', "runs.meta.RunMeta"),
        ('ks = [int(k) for k in meta.get("ks", [])]', "runs.meta.RunMeta"),
        ('ideal = run.meta.get("ideal") or "returned"', "runs.meta.RunMeta"),
        ('"relevant_grade": meta.get("relevant_grade"),', "runs.meta.RunMeta"),
        ('method = str(data.get("method", "percentile"))', "comparison.summary.Summary"),
        (
            'means = json.loads((folder / "summary.json").read_text())["estimates"]',
            "comparison.summary.Summary",
        ),
        (
            "f = found_units([(it.doc, it.start, it.end) for it in row], grades, 2, by_doc)",
            "runs.scoring.score_system",
        ),
        ("index = SpanIndex([(c.doc_id, c.start, c.end) for c in chunks])", "score_system"),
        (
            "name = next(n for n in run.metrics if Metric.parse(n) == Metric.parse(text))",
            "scoring.names.find_metric",
        ),
        ('"corpus": corpus_fingerprint(documents),', "scoring.measurement.describe"),
        ("if a.measurement != b.measurement:", "scoring.measurement.differences"),
        ('same = run["measurement"] == other["measurement"]', "measurement.differences"),
        ('for key in ("relevant_grade", "ideal", "depth", "corpus", "testset"):', "differences"),
        (
            'best = min(means) if metric.startswith("words") else max(means)',
            "scoring.names.lower_is_better",
        ),
        ('if m.family == "words":', "scoring.names.lower_is_better"),
        ('key = json.dumps([entry["strategy"], entry["retriever"]], sort_keys=True)', "identity"),
        (
            'same = a.get("strategy") == b.get("strategy") and a.get("retriever") == b.get('
            '"retriever")',
            "history.systems.match_system",
        ),
        ('WHOLE_LIST = ("map", "rprec")', "scoring.names.FAMILIES"),
        ('NOT_IN_TREC = ("coverage", "words")', "scoring.names.FAMILIES"),
    ]
    others = [
        "m = results.matrix(metric, systems)",
        "m = run.matrix(metric, names)",
        "depth = res.meta.depth",
        "ks = list(meta.ks)",
        'ideal = run.meta.ideal or "returned"',
        '"relevant_grade": meta.relevant_grade,',
        "summary = Summary.from_json(data, where)",
        "saved = SavedSummary.from_json(store.file_json(r.id, name), where)",
        "vectors = score_system(items, questions, config, index_items)",
        "vectors = score_system(items, questions, config, index_items)",
        "family = [x for x in every if Metric.parse(x).family == metric.family]",
        "record = describe(config, documents, questions)",
        "reasons = measurement.differences(a.measurement, b.measurement, metric)",
        "reasons = measurement.differences(a.measurement, b.measurement, metric)",
        "reasons = measurement.differences(a.measurement, b.measurement, metric)",
        "best = min(means) if lower_is_better(metric) else max(means)",
        "if lower_is_better(m):",
        "key = system_identity(entry)",
        "label = f\"{s['strategy']['name']} x {s['retriever']['name']}\"",
        "WHOLE_LIST = tuple(f.name for f in FAMILIES if f.cutoff != 'always')",
        "NOT_IN_TREC = not_in_trec()",
    ]
    lines = [x for (copy, _), other in zip(copies, others, strict=True) for x in (copy, other)]
    found = _by_line(_found(tmp_path, lines))
    assert [f.split(": ")[0] for f in found] == [f"view.py:{2 * i + 1}" for i in range(21)]
    for line, (_, home) in zip(found, copies, strict=True):
        assert home in line.split("belongs to ")[1], line


def test_a_cost_told_apart_by_its_name_in_the_reports_script_is_a_copy(tmp_path):
    found = _found(
        tmp_path,
        [
            'const lower = m.indexOf("words") === 0;',
            "const lower = info(m).cost;",
            'if (fam === "words") continue;',
        ],
        "report.js",
    )
    assert [f.split(": ")[0] for f in found] == ["report.js:1", "report.js:3"]
    assert all(f.endswith("scoring.names.lower_is_better") for f in found)


def test_a_file_written_locked_redacted_or_read_beside_its_home_is_a_copy(tmp_path):
    copies = [
        (
            "if path.exists() and not is_empty_file(path) and not is_recorded(path, names):",
            "files.outputs.check_output_file",
        ),
        ("if folder.is_dir() and not any(folder.iterdir()):", "check_results_target"),
        (
            'raise InputError(f"{path}: exists and is not a file written by ragmeter")',
            "files.outputs.check_output_file",
        ),
        ("fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)", "files.outputs.results_lock"),
        (
            'fd = os.open(folder / ".lock", os.O_CREAT | os.O_EXCL | os.O_WRONLY)',
            "files.outputs.results_lock",
        ),
        (
            'safe = {k: "***" if is_secret_name(k) else v for k, v in config.items()}',
            "files.safe_text.redact",
        ),
        ('SECRET = re.compile(r"(api_?key|token|secret|password)", re.I)', "redact"),
        ('HIDDEN = ("api_key", "token", "password")', "files.safe_text.redact"),
        (
            'LONE = re.compile(r"\\\\u[dD][89abAB][0-9a-fA-F]{2}")',
            "files.io.refuse_lone_surrogates",
        ),
        ("if any(0xD800 <= ord(c) <= 0xDFFF for c in text):", "refuse_lone_surrogates"),
    ]
    others = [
        'check_output_file(path, "CSV table", inputs, "--out")',
        "check_results_target(folder, inputs, overwrite=True)",
        "history = folder.exists() and any(folder.iterdir())",
        'with results_lock(results, "ragmeter grade"):',
        "fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)",
        "text = toml_text(redact(config))",
        "text = redact_text(line)",
        'SECRET_NAMES = ("api_key",)',
        'ICU_SAFE = re.compile("[\\ud800-\\udfff]")  # a segmenter\'s input, not JSON',
        "refuse_lone_surrogates(obj, line, path, number)",
    ]
    lines = [x for (copy, _), other in zip(copies, others, strict=True) for x in (copy, other)]
    found = _by_line(_found(tmp_path, lines))
    assert [f.split(": ")[0] for f in found] == [f"view.py:{2 * i + 1}" for i in range(10)]
    for line, (_, home) in zip(found, copies, strict=True):
        assert home in line.split("belongs to ")[1], line


def test_an_answer_plan_token_count_or_price_worked_out_again_is_a_copy(tmp_path):
    copies = [
        ("half = z * math.sqrt((between + within / k) / n)", "predicted_half_width"),
        ("n = math.ceil(z**2 * noise.variance(1, k) / h**2)", "questions_for_half_width"),
        ("half = z * math.sqrt(noise.variance(n, k))", "predicted_half_width"),
        ("tokens = math.ceil(len(prompt) / 4) + 8", "llm.tokens.token_counter"),
        ('tokens = len(llama.tokenize(prompt.encode("utf-8")))', "llm.tokens.token_counter"),
        ("enc = tiktoken.encoding_for_model(model)", "llm.tokens.token_counter"),
        (
            'cost = (p["reader_prompt"] * tokens_in + p["reader_completion"] * tokens_out) / 1e6',
            "inputs.prices.check_prices",
        ),
        ("usd = price * (prompt_tokens + completion_tokens) / 1_000_000", "check_prices"),
    ]
    others = [
        "hw = predicted_half_width(noise, n, k, confidence)",
        "need = questions_for_half_width(noise, reruns, half_width, confidence)",
        "need = hand_grades_for_half_width(noise.variance(1, 1), rectifier, n, target, conf)",
        "counter = token_counter(spec, options)",
        "tokens = bm25s.tokenize(texts, stopwords=None)",
        "quarter = len(items) // 4",
        'prices = check_prices(raw["prices"], f"{path}: [prices]")',
        'usd = prices.cost("reader", prompt_tokens, completion_tokens)',
    ]
    lines = [x for (copy, _), other in zip(copies, others, strict=True) for x in (copy, other)]
    found = _by_line(_found(tmp_path, lines))
    assert [f.split(": ")[0] for f in found] == [f"view.py:{2 * i + 1}" for i in range(8)]
    for line, (_, home) in zip(found, copies, strict=True):
        assert home in line.split("belongs to ")[1], line

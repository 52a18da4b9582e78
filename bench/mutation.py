"""Mutation testing of the library modules: do the tests notice small, plausible bugs?

For each module below, every *mutant* changes one thing in its source:

* a comparison flipped: ``<`` <-> ``<=``, ``>`` <-> ``>=``, ``==`` <-> ``!=``,
  ``is`` <-> ``is not``, ``in`` <-> ``not in``;
* arithmetic swapped: ``+`` <-> ``-``, ``*`` <-> ``/``, ``//`` -> ``/`` (also in ``+=``...);
* a whole-number constant moved by one (``n + 1``, ``n - 1``); ``True`` <-> ``False``;
* ``and`` <-> ``or``; a ``not`` or a unary minus dropped;
* in a regular expression, a repeated class made optional: ``\\s+`` -> ``\\s*``;
* a ``return <value>`` replaced by ``return None``;
* a float constant changed (0 -> 1, else doubled: ``0.05`` -> ``0.1``);
* a branch removed (an ``if`` body, or its ``else``), a comprehension filter dropped;
* a call's first two arguments swapped, a pass-through keyword (``alpha=alpha``) dropped.

Nothing inside a ``raise`` (error messages), an f-string, a docstring, a type
annotation, a decorator or an ``assert`` is mutated, nor a line ending in ``# pragma: no mutate``.

Every module of src/ragmeter is a target but those in ``EXCLUDED`` (re-exports only).
Its test files are ``TARGETS[module]`` where listed, else found by ``tests_for``: the
module's own behaviour file (``tests/test_<package>_<module>.py``) and every test file
naming the module or one of its public names. The unmutated baseline run, in a forked child of this
process (which has the heavy libraries already imported), records with
``sys.settrace`` which tests run each line of the module; each mutant then runs, with
``pytest -x -q -p no:randomly -m "not slow"``, only the tests that ran its statement
(every test for a line run at import time or by no test in this process), the mutated
module served by an import hook (nothing is written to ``src/``), in a scratch working
directory (a mutant writing to a relative path leaves nothing in the project). A mutant is *killed*
when a test fails, a *timeout* when its tests run past ``max(3 x expected, expected +
20 s)`` (expected: their baseline time; counted as detected), and *survived*
otherwise. Mutants argued equivalent in docs/testing.md (``EQUIVALENT`` below) are
left out of the score. The baseline's trace is kept (``$RAGMETER_MUTATION_TRACES``, a
folder under the system's temporary one by default; ``off`` keeps none) under a digest
of the library, conftest.py and the test files, so a ``--rerun`` after new tests in the
module's own behaviour test file traces only that file again.

Run (from the project root, with the test extra installed)::

    python bench/mutation.py                              # everything (long: hours)
    python bench/mutation.py --quick --module gate        # a seeded sample of 25 of one module
    python bench/mutation.py --module stats_size --limit 40   # a seeded sample of 40
    python bench/mutation.py --jobs 2 --seed 3 --json mutation.json
    python bench/mutation.py --list --module testset      # list the mutants, run nothing
    python bench/mutation.py --modules                    # every module and its test files
    python bench/mutation.py --rerun mutation.json        # only the earlier survivors
    python bench/mutation.py --merge first.json rerun.json   # the table of both
    python bench/mutation.py --quick --module cli/check --tests tests/test_check.py

It prints killed / survived / timeout per module, the score
``(killed + timeout) / (mutants - equivalent)`` and every survivor as
``file:line: mutation | source line``.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import random
import re
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"

# module (relative to src/ragmeter) -> the test files that cover it
TARGETS: dict[str, list[str]] = {
    "scoring/metrics.py": [
        "tests/test_metrics.py",
        "tests/test_metrics_inputs.py",
        "tests/test_search_wiring.py",
    ],
    "scoring/grading.py": [
        "tests/test_grading.py",
        "tests/test_grading_edges.py",
    ],
    "stats/draws.py": [
        "tests/test_stats.py",
        "tests/test_numeric_edges.py",
        "tests/test_stats_contract.py",
    ],
    "stats/bootstrap.py": [
        "tests/test_stats.py",
        "tests/test_stats_contract.py",
        "tests/test_stats_resample.py",  # the exact sums, every path against the reference
        "tests/test_stats_exact.py",
        "tests/test_format_estimate.py",  # how an interval prints (spread_digits)
    ],
    "stats/paired.py": [
        "tests/test_stats.py",
        "tests/test_numeric_edges.py",
        "tests/test_stats_contract.py",
    ],
    "stats/size.py": [
        "tests/test_stats.py",
        "tests/test_numeric_edges.py",
        "tests/test_stats_contract.py",
    ],
    "stats/agreement.py": [
        "tests/test_stats.py",
        "tests/test_stats_contract.py",
    ],
    "stats/validate.py": [
        "tests/test_stats.py",
        "tests/test_numeric_edges.py",
        "tests/test_stats_contract.py",
    ],
    "chunking/strategies.py": [
        "tests/test_chunking.py",
        "tests/test_numeric_edges.py",
        "tests/test_line_endings.py",
        "tests/test_chunking_edges.py",
    ],
    "inputs/testset.py": [
        "tests/test_testset.py",
        "tests/test_span_location.py",
        "tests/test_testset_formats.py",
    ],
    "retrieval/base.py": ["tests/test_top_k.py", "tests/test_hybrid.py"],
    "comparison/verdicts.py": [
        "tests/test_comparison.py",
        "tests/test_verdicts.py",
        "tests/test_verdicts_maxt.py",
        "tests/test_verdicts_property.py",
    ],
    "stats/paired_tests.py": [
        "tests/test_paired_tests.py",
        "tests/test_numeric_edges.py",
        "tests/test_stats_exact.py",
        "tests/test_comparison.py",
        "tests/test_verdicts.py",
        "tests/test_verdicts_maxt.py",
        "tests/test_stats.py",
    ],
    "stats/exact.py": [
        "tests/test_stats_exact.py",
        "tests/test_planning_family.py",
    ],
    "stats/maxt.py": [
        "tests/test_paired_tests.py",
        "tests/test_verdicts_maxt.py",
        "tests/test_verdicts.py",
    ],
    "comparison/systems.py": [
        "tests/test_comparison.py",
        "tests/test_summary.py",
        "tests/test_one_comparison.py",
        "tests/test_verdicts.py",
    ],
    "comparison/formatting.py": [
        "tests/test_format_estimate.py",
        "tests/test_unresolved_intervals.py",
        "tests/test_verdicts_property.py",
        "tests/test_stats_exact.py",
        "tests/test_verdicts_maxt.py",
        "tests/test_one_comparison.py",
    ],
    "scoring/measurement.py": [
        "tests/test_measurement.py",
        "tests/test_search_wiring.py",
    ],
    "history/gate.py": [
        "tests/test_check_margins.py",
        "tests/test_check_support.py",
        "tests/test_check_comparable.py",
        "tests/test_check.py",
    ],
    "stats/planning.py": [
        "tests/test_planning.py",
        "tests/test_planning_family.py",
    ],
    "runs/scoring.py": [
        "tests/test_scoring.py",
        "tests/test_search_wiring.py",
    ],
    "scoring/trec.py": [
        "tests/test_qrels.py",
        "tests/test_numeric_edges.py",
        "tests/test_qrels_ties.py",
        "tests/test_trec.py",
        "tests/test_run_order.py",
    ],
    "scoring/trec_bytes.py": ["tests/test_qrels.py"],
    "scoring/trec_read.py": [
        "tests/test_qrels.py",
        "tests/test_qrels_ties.py",
        "tests/test_trec.py",
    ],
    "files/outputs.py": [
        "tests/test_outputs_recovery.py",
        "tests/test_outputs.py",
        "tests/test_outputs_busy.py",
    ],
    "files/manifest.py": [
        "tests/test_manifest.py",
        "tests/test_outputs_recovery.py",
        "tests/test_outputs.py",
        "tests/test_outputs_busy.py",
    ],
    "files/safe_text.py": ["tests/test_safe_text.py", "tests/test_escaping.py"],
    "llm/parse.py": [
        "tests/test_llm_parse.py",
        "tests/test_judge_injection.py",
    ],
    "llm/fence.py": ["tests/test_prompt_fencing.py"],
    "chunking/frameworks.py": ["tests/test_chunkers_locate.py", "tests/test_chunkers.py"],
    "comparison/summary.py": ["tests/test_summary.py"],
    "answers/analysis.py": [
        "tests/test_answers.py",
        "tests/test_numeric_edges.py",
        "tests/test_answers_ppi.py",
        "tests/test_answers_one_view.py",
    ],
    "answers/judges.py": ["tests/test_answers.py"],
    "answers/failures.py": [
        "tests/test_answers.py",
        "tests/test_numeric_edges.py",
        "tests/test_answer_failures.py",
    ],
    "answers/numbers.py": [
        "tests/test_answers.py",
        "tests/test_numeric_edges.py",
        "tests/test_answer_failures.py",
    ],
    # picked by hand among the files tests_for() finds, to keep the baseline short
    "__init__.py": ["tests/test_package.py", "tests/test_api.py"],
    "runs/pipeline.py": [
        "tests/test_experiment.py",
        "tests/test_search_wiring.py",
        "tests/test_small_corpora.py",
        "tests/test_api.py",
    ],
    "runs/evaluate.py": [
        "tests/test_evaluate.py",
        "tests/test_evaluate_cli.py",
        "tests/test_trec.py",
        "tests/test_cli_options.py",
        "tests/test_evaluate_parallel.py",
        "tests/test_score_cache.py",
    ],
    "runs/score_cache.py": ["tests/test_score_cache.py"],
    "runs/results.py": [
        "tests/test_results.py",
        "tests/test_api.py",
        "tests/test_one_comparison.py",
        "tests/test_experiment.py",
        "tests/test_summary.py",
        "tests/test_store.py",
    ],
    "runs/saving.py": [
        "tests/test_saving.py",
        "tests/test_experiment.py",
        "tests/test_store.py",
        "tests/test_api.py",
        "tests/test_escaping.py",
    ],
    "history/store.py": [
        "tests/test_history_store.py",
        "tests/test_history.py",
        "tests/test_history_commands.py",
        "tests/test_history_report.py",
    ],
    "history/baseline.py": [
        "tests/test_history_baseline.py",
        "tests/test_history_store.py",
        "tests/test_history.py",
        "tests/test_history_commands.py",
    ],
    "history/trend.py": [
        "tests/test_history_trend.py",
        "tests/test_history.py",
        "tests/test_history_report.py",
    ],
    "cli/output.py": [
        "tests/test_cli_output.py",
        "tests/test_cli.py",
        "tests/test_terminal_fit.py",
        "tests/test_evaluate_cli.py",
    ],
    "cli/layout.py": ["tests/test_cli_layout.py", "tests/test_terminal_fit.py"],
    "api.py": ["tests/test_api.py", "tests/test_one_comparison.py"],
    "inputs/corpus.py": [
        "tests/test_corpus.py",
        "tests/test_line_endings.py",
        "tests/test_validation.py",
    ],
    "inputs/config.py": [
        "tests/test_config.py",
        "tests/test_validation.py",
        "tests/test_cli_options.py",
    ],
    "files/io.py": [
        "tests/test_io.py",
        "tests/test_validation.py",
        "tests/test_external.py",
        "tests/test_outputs.py",
    ],
}

# Command-line modules whose found tests (every test importing the app: 32 to 67 files,
# the model-backed and browser tests among them) made one baseline take over half an
# hour: their own behaviour test files and the test files that call them directly.
# Fewer files can only miss a kill, so their scores are lower bounds.
_CLI_TESTS = [
    "tests/test_cli.py",
    "tests/test_cli_newcomer.py",
    "tests/test_terminal_fit.py",
    "tests/test_validation.py",
]
_CLI_TARGETS = {
    "cli/search.py": [
        "tests/test_cli_search.py",
        *_CLI_TESTS,
        "tests/test_small_corpora.py",
        "tests/test_escaping.py",
        "tests/test_evaluate_cli.py",
        "tests/test_one_comparison.py",
        "tests/test_verdicts.py",
        "tests/test_outputs.py",
    ],
    "cli/search_views.py": [
        "tests/test_cli_search_views.py",
        *_CLI_TESTS,
        "tests/test_cli_output.py",
        "tests/test_format_estimate.py",
        "tests/test_summary.py",
        "tests/test_escaping.py",
        "tests/test_verdicts.py",
        "tests/test_small_corpora.py",
        "tests/test_one_comparison.py",
    ],
    "cli/plan_views.py": [
        "tests/test_cli_plan_views.py",
        *_CLI_TESTS,
        "tests/test_escaping.py",
        "tests/test_evaluate_cli.py",
    ],
    "cli/progress.py": [
        "tests/test_progress.py",
        "tests/test_cli.py",
        "tests/test_cli_newcomer.py",
    ],
    "cli/questions.py": [
        "tests/test_cli_questions.py",
        "tests/test_cli_options.py",
        "tests/test_questions_audit.py",
        "tests/test_audit_not_run.py",
        "tests/test_cli.py",
    ],
    "cli/question_views.py": [
        "tests/test_cli_question_views.py",
        "tests/test_questions_audit.py",
        "tests/test_audit_not_run.py",
        "tests/test_cli_options.py",
        "tests/test_escaping.py",
    ],
}
TARGETS.update(_CLI_TARGETS)

# picked by hand among the files tests_for() finds (docs/testing.md says why each was left
# out): test files that only pass through a module, start a real model, a browser or a
# Ray cluster, or run its writers in subprocesses (which never see the mutant) cost
# baseline time and kill nothing
_NARROWED_TARGETS = {
    "llm/client.py": [
        "tests/test_llm_client.py",
        "tests/test_llm_parse.py",
        "tests/test_llm_cache.py",
        "tests/test_llm_integration.py",
    ],
    "llm/settings.py": [
        "tests/test_llm_settings.py",
        "tests/test_questions_generate.py",
    ],
    "llm/cache.py": [
        "tests/test_llm_cache.py",
        "tests/test_store.py",
        "tests/test_llm_integration.py",
    ],
    "llm/llama_env.py": ["tests/test_llm_llama_env.py"],
    "llm/runner.py": [
        "tests/test_llm_runner.py",
        "tests/test_llm_integration.py",
        "tests/test_llm_settings.py",
    ],
    "llm/backends.py": [
        "tests/test_llm_backends.py",
        "tests/test_llm_integration.py",
        "tests/test_llm_settings.py",
    ],
    "answers/store.py": [
        "tests/test_answers_store.py",
        "tests/test_answers.py",
        "tests/test_answers_one_view.py",
        "tests/test_answer_failures.py",
        "tests/test_answers_run.py",
        "tests/test_numeric_edges.py",
        "tests/test_judge_injection.py",
    ],
    "answers/run.py": [
        "tests/test_answers_run.py",
        "tests/test_answers.py",
        "tests/test_answer_failures.py",
        "tests/test_answers_store.py",
        "tests/test_judge_injection.py",
        "tests/test_store.py",
        "tests/test_llm_settings.py",
    ],
    "answers/__init__.py": ["tests/test_answers.py"],
    "cli/__init__.py": ["tests/test_cli.py"],
    "cli/check.py": [
        "tests/test_cli_check.py",
        "tests/test_check_comparable.py",
        "tests/test_history.py",
        "tests/test_outputs.py",
    ],
    "cli/evaluate.py": [
        "tests/test_evaluate_cli_settings.py",
        "tests/test_evaluate_cli.py",
        "tests/test_history_commands.py",
        "tests/test_terminal_fit.py",
        "tests/test_cli_options.py",
    ],
    "cli/history.py": [
        "tests/test_history_commands.py",
        "tests/test_history.py",
        "tests/test_history_store.py",
    ],
    "cli/app.py": [
        "tests/test_cli_app.py",
        "tests/test_cli.py",
        "tests/test_cli_newcomer.py",
        "tests/test_cli_options.py",
        "tests/test_validation.py",
        "tests/test_terminal_fit.py",
    ],
    "files/schemas.py": [
        "tests/test_schemas.py",
        "tests/test_testset.py",
        "tests/test_testset_formats.py",
        "tests/test_qrels.py",
        "tests/test_corpus.py",
        "tests/test_answers.py",
    ],
    "report/page.py": [
        "tests/test_report_page.py",
        "tests/test_report_html.py",
        "tests/test_report_headline.py",
        "tests/test_escaping.py",
        "tests/test_report_modules.py",
    ],
    "chunking/segment_rounds.py": [
        "tests/test_segment_rounds.py",
        "tests/test_chunking.py",
        "tests/test_segment_cache.py",
        "tests/test_segmenters.py",
        "tests/test_chunking_edges.py",
    ],
    "http.py": [
        "tests/test_http.py",
        "tests/test_remote_embed.py",
        "tests/test_fuzz_inputs.py",
    ],
    "retrieval/remote.py": [
        "tests/test_remote_embed.py",
        "tests/test_http.py",
        "tests/test_external.py",
    ],
    "retrieval/external.py": [
        "tests/test_external.py",
        "tests/test_fuzz_inputs.py",
        "tests/test_retrieval_registry.py",
    ],
    "retrieval/static.py": [
        "tests/test_static_options.py",
        "tests/test_static_encoder.py",
        "tests/test_retrieval_registry.py",
    ],
    "cli/hand_views.py": [
        "tests/test_cli_hand_views.py",
        "tests/test_answers.py",
        "tests/test_answer_failures.py",
    ],
    "cli/failure_views.py": [
        "tests/test_cli_failure_views.py",
        "tests/test_answer_failures.py",
        "tests/test_answers_one_view.py",
    ],
    "cli/answer_views.py": [
        "tests/test_cli_answer_views.py",
        "tests/test_answers.py",
        "tests/test_answer_failures.py",
        "tests/test_answers_one_view.py",
        "tests/test_answers_ppi.py",
    ],
    "cli/answers.py": [
        "tests/test_cli_answers.py",
        "tests/test_answers.py",
        "tests/test_answer_failures.py",
        "tests/test_answers_one_view.py",
        "tests/test_cli_options.py",
    ],
    "engine.py": [
        "tests/test_engine.py",
        "tests/test_scale.py",
        "tests/test_llm_settings.py",
        "tests/test_experiment.py",
        "tests/test_segment_rounds.py",
        "tests/test_segment_cache.py",
    ],
}
TARGETS.update(_NARROWED_TARGETS)

# never a mutant's test: they check the source tree or run fresh interpreters, which do
# not see the mutated module
_NOT_TARGETS = {"tests/test_structure.py", "tests/test_architecture_doc.py", "tests/test_docs.py"}

# Library modules with no behaviour of their own to mutate (docs/testing.md):
# module -> why it is left out. Every other module of src/ragmeter is a target.
EXCLUDED: dict[str, str] = {
    "__main__.py": "`python -m ragmeter`: calls cli.main(), nothing else",
    "cli/__main__.py": "`python -m ragmeter.cli`: calls cli.main(), nothing else",
    "llm/__init__.py": "re-exports only",
    "questions/__init__.py": "re-exports only",
    "report/__init__.py": "a docstring only",
    "report/html.py": "re-exports only",
    "retrieval/__init__.py": "re-exports only",
}


def library_modules() -> list[str]:
    """Every module of src/ragmeter but EXCLUDED: the TARGETS first, then the others."""
    found = sorted(
        p.relative_to(SRC / "ragmeter").as_posix() for p in (SRC / "ragmeter").rglob("*.py")
    )
    rest = [m for m in found if m not in TARGETS and m not in EXCLUDED]
    return [m for m in TARGETS if (SRC / "ragmeter" / m).is_file()] + rest


def _mutants_file(module: str) -> str:
    """A module's own behaviour tests: tests/test_<package>_<module>.py, else
    tests/test_<module>.py (the first that exists; the first name when neither does)."""
    parts = module.removesuffix(".py").removesuffix("/__init__").split("/")
    names = [f"tests/test_{'_'.join(parts)}.py", f"tests/test_{parts[-1]}.py"]
    return next((n for n in names if (ROOT / n).is_file()), names[0])


def tests_for(module: str, _seen: bool = False) -> list[str]:
    """The test files a module's mutants run (then narrowed to the tests that run the
    mutated line, see ``run_module``): TARGETS where listed; else the module's own
    ``tests/test_mutants_*.py`` and every test file that names the module (its dotted
    name, or ``from ragmeter.<package> import <module>``) or one of its public
    top-level names; for a command-line module, every test that imports the app."""
    if module in TARGETS:
        return list(dict.fromkeys(TARGETS[module]))  # a file listed twice runs once
    dotted = _module_name(module)
    package, _, stem = dotted.rpartition(".")
    tree = ast.parse((SRC / "ragmeter" / module).read_text(encoding="utf-8"))
    names = {
        n.name
        for n in tree.body
        if isinstance(n, ast.FunctionDef | ast.ClassDef | ast.AsyncFunctionDef)
        and not n.name.startswith("_")
    }
    patterns = [
        re.escape(dotted) + r"\b",
        rf"from {re.escape(package)} import[^\n]*\b{stem}\b",
        *(rf"\b{re.escape(n)}\b" for n in sorted(names) if len(n) >= 6),
    ]
    if module.startswith("cli/"):
        patterns.append(r"from ragmeter\.cli(\.app)? import[^\n]*\bapp\b")
    found = re.compile("|".join(patterns))
    own = _mutants_file(module)
    out = [own] if (ROOT / own).is_file() else []
    for path in sorted((ROOT / "tests").glob("test_*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel not in _NOT_TARGETS | {own} and found.search(path.read_text(encoding="utf-8")):
            out.append(rel)
    if out in ([], [own]) and not _seen:  # no test names it: those of the modules importing it
        for other in library_modules():
            text = (SRC / "ragmeter" / other).read_text(encoding="utf-8")
            if other != module and re.search(
                rf"from {re.escape(package)} import[^\n]*\b{stem}\b|{re.escape(dotted)}\b",
                text,
            ):
                out += [t for t in tests_for(other, _seen=True) if t not in out]
    return out


# --quick: a seeded sample of this many mutants per module
QUICK = 25

_COUNTS = "counts = np.zeros(depth + 1, dtype=np.int64)  # counts[j]: answer chars in the top j"
_COVERAGE = "return float(coverage_curve(items, spans, [max(len(items), 1)])[0])"
_SUB = "sub = 2048 if k <= 8 else 1024  # rounds per pass: running sums stay in cache"
_PARTITION = "part = np.argpartition(-scores, kk - 1, axis=1)[:, :kk]"
_ONE_UNIT = "return np.array([2], dtype=np.int64)  # one unit: an item holding the whole passage"
_JUDGED = "return np.array(sorted((g for _, g in q.qrels if g > 0), reverse=True), dtype=np.int64)"
_WIDTH = "width = max(doc_all.dtype.itemsize, qrels.doc.dtype.itemsize)"
_CLIP = "return _mcnemar_table(differ)[np.clip(wins, 0, differ)]"
_STEP_P = "step_p = np.minimum(1.0, (hits + 1) / (rounds + 1))"
_TINY = "levels = np.maximum(levels, np.finfo(float).tiny)  # a level is a positive number"
_MCNEMAR_RAW = "p_raw = np.array([mcnemar_exact(w, lo) for w, _, lo in counts])"
_MCNEMAR_TABLE = "return np.array([mcnemar_exact(k, differ - k) for k in range(differ + 1)])"
_BLOCKS = (
    'pattern = re.compile(r"(?m)^<<<(\\S+) " + tag + r"\\n(.*?)\\n>>>\\1 " + tag + r"$", re.DOTALL)'
)
_CODE = "code = np.array([pos[u] * k + pos[v] for u, v in zip(la, lb, strict=True)], dtype=np.intp)"
_DIFFS = "d = (np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64))[:, None] + 0.0"
_FIELDS = "fields.append((j, ints, max(1, (terms * int(ints.max())).bit_length()), low, s))"
_B0 = "b0, b1 = first // m, min(rounds, (first + rows * top) // m)"
_AFTER = (
    '_AFTER = "|".join(sorted((re.escape(u) for u in {*_SCALES, *_UNITS}), key=len, reverse=True))'
)
_GUESS = "h = max(0, math.ceil(level * (rounds + 1)) - 1)"
_FOUND = "for j, (it, g) in enumerate(zip(items, grades, strict=True)):"
_TOTALS = "total = np.asarray(n_relevant, dtype=np.float64).reshape(-1)"
_AT = "return cum[:, min(k, cum.shape[1]) - 1]"
_PER_SYSTEM = "for system, est in zip(systems, by_metric[name], strict=True):"
_KTH = "kth = np.take_along_axis(scores, part, axis=1).min(axis=1, keepdims=True)"

# Mutants argued equivalent (no input can tell them from the original) in
# docs/testing.md: (module, stripped source line, column in it, mutation[, occurrence]).
EQUIVALENT: set[tuple] = {
    # runs/score_cache.py: a lookup by primary key and a COUNT(*) give one row of one
    # column, so [0] and [-1] read the same cell; the busy timeout only bounds a wait
    ("runs/score_cache.py", "found = unpack(rows[0][0]) if rows else None", 23, "0 -> -1"),
    ("runs/score_cache.py", "found = unpack(rows[0][0]) if rows else None", 20, "0 -> -1"),
    (
        "runs/score_cache.py",
        'return self._store.query("SELECT COUNT(*) FROM run_scores")[0][0]',
        63,
        "0 -> -1",
    ),
    (
        "runs/score_cache.py",
        'return self._store.query("SELECT COUNT(*) FROM run_scores")[0][0]',
        60,
        "0 -> -1",
    ),
    (
        "runs/score_cache.py",
        'self.path, _SCHEMA, timeout_s=60.0, what="score cache"',
        30,
        "60.0 -> 120.0",
    ),
    # comparison/formatting.py decided_end / shown_difference: an end set by the decision
    # is 0 or the smallest double (never exactly 1e-300), on the side of a nonzero mean
    (
        "comparison/formatting.py",
        "return bool((mean > 0 and abs(low) < _AT_ZERO) or (mean < 0 and abs(high) < _AT_ZERO))",
        26,
        "`<` -> `<=`",
    ),
    (
        "comparison/formatting.py",
        "return bool((mean > 0 and abs(low) < _AT_ZERO) or (mean < 0 and abs(high) < _AT_ZERO))",
        58,
        "0 -> -1",
    ),
    (
        "comparison/formatting.py",
        "low, high = (low + DECIDED_MARK, high) if d.mean > 0 else (low, high + DECIDED_MARK)",
        42,
        "`>` -> `>=`",
    ),
    # retrieval/base.py top_k: the partition only picks the candidates for an exact
    # lexsort; each of these gives a superset of the true candidates or the same set
    ("retrieval/base.py", _PARTITION, 23, "drop unary `-`"),
    ("retrieval/base.py", _PARTITION, 37, "1 -> 0"),
    ("retrieval/base.py", _PARTITION, 37, "1 -> 2"),
    ("retrieval/base.py", _KTH, 68, "True -> False"),
    ("retrieval/base.py", "if kk < k:", 3, "`<` -> `<=`"),  # padding by 0 columns
    # inputs/testset.py
    ("inputs/answer_keys.py", "__test__ = False  # not a pytest class", 11, "False -> True"),
    (
        "inputs/testset.py",
        "return []",
        0,
        "return None",
    ),  # unreachable: blank keys are rejected first
    ("inputs/testset.py", "doc, m = found[0]", 15, "0 -> -1"),  # found has exactly one element here
    # scoring/grading.py
    (
        "scoring/grading.py",
        _COUNTS,
        26,
        "1 -> 2",
    ),  # one more slot, never read: counts[min(k, depth)]
    ("scoring/grading.py", "if hi > lo:", 3, "`>` -> `>=`"),  # hi == lo marks an empty slice: no-op
    ("scoring/grading.py", _COVERAGE, 64, "0 -> -1"),  # a one-element array: [0] is [-1]
    ("scoring/grading.py", _COVERAGE, 59, "1 -> 2"),  # k = 2 > len(items) reads the same last count
    # touching intervals left unmerged hold the same characters
    ("scoring/grading.py", "if out and start <= out[-1][1]:", 11, "`<=` -> `<`"),
    (
        "scoring/grading.py",
        "arr = np.array(r, dtype=np.int64).reshape(-1, 3)",
        43,
        "1 -> 2",
    ),  # -2: numpy
    # infers the dimension for any negative size
    # end + start >= end - start: a wider search window, then the exact overlap test
    ("scoring/grading.py", "longest = int((arr[:, 1] - arr[:, 0]).max())", 15, "`-` -> `+`"),
    # scoring/metrics.py: numpy infers the size of reshape(-2) as of reshape(-1)
    ("scoring/metrics.py", "v = np.asarray(vec).reshape(-1)", 29, "1 -> 2"),
    ("scoring/metrics.py", _TOTALS, 58, "1 -> 2"),
    # min() of two ints in either order
    ("scoring/metrics.py", _AT, 14, "arguments swapped: (cum.shape[1], k, ...)"),
    # chunking/strategies.py: cum[0] is never read (every word ends after offset 0)
    ("chunking/doc_index.py", "cum = np.concatenate(([0], np.cumsum(term)))", 23, "0 -> 1"),
    ("chunking/doc_index.py", "cum = np.concatenate(([0], np.cumsum(term)))", 23, "0 -> -1"),
    # the index cache only saves work: what it holds never changes a chunk
    ("chunking/doc_index.py", "self._chars = 0", 14, "0 -> -1"),
    # bounds[:-1] and bounds[1:] always have the same length
    (
        "chunking/strategies.py",
        "for a, b in zip(bounds[:-1], bounds[1:], strict=True):",
        48,
        "True -> False",
    ),
    # a piece of exactly size words split further is merged back whole
    ("chunking/strategies.py", "if hi - lo <= size:", 3, "`<=` -> `<`"),
    # one word has no sentence break whether segmented or not
    ("chunking/doc_index.py", "if self.n < 2:", 12, "2 -> 1"),
    # a sentinel: every test of it is `>= 0`
    ("chunking/strategies.py", "cur_lo = -1", 10, "1 -> 2"),
    # the last of six `if cur_lo >= 0:`: a run pending from word 0 at the end would
    # hold every word, and then the piece fitted whole and returned early
    ("chunking/strategies.py", "if cur_lo >= 0:", 3, "`>=` -> `>`", 5),
    ("chunking/doc_index.py", "cum = np.concatenate(([0], np.cumsum(term)))", 23, "0 -> 1"),
    # stats/draws.py, stats/bootstrap.py: block and chunk sizes, packing widths and rounds
    # per pass only cut the work into pieces; the draws and sums are the same (bit for bit)
    ("stats/draws.py", "_BLOCK = 1 << 18", 9, "1 -> 2"),
    ("stats/draws.py", "_BLOCK = 1 << 18", 14, "18 -> 17"),
    ("stats/draws.py", "_CHUNK = 1 << 15", 14, "15 -> 14"),
    ("stats/bootstrap.py", "if sum(g[2] for g in group) + f[2] > 64:", 37, "64 -> 63"),
    ("stats/bootstrap.py", _SUB, 6, "2048 -> 2049"),
    ("stats/bootstrap.py", _SUB, 19, "8 -> 9"),
    ("stats/bootstrap.py", _SUB, 14, "`<=` -> `<`"),
    ("stats/bootstrap.py", "if rows < 256:", 10, "256 -> 257"),  # two exact summation paths
    ("stats/bootstrap.py", "if rows < 256:", 10, "256 -> 255"),
    ("stats/bootstrap.py", "if rows < 256:", 0, "`if` branch removed"),
    (  # min() of two ints in either order
        "stats/bootstrap.py",
        "return min(max(math.floor(rounds * q), 0), rounds - 1)",
        7,
        "arguments swapped: (rounds - 1, max(math.floor(rounds * q), 0), ...)",
    ),
    # no scale (None) sends a column to the sequential path: the same sums, slower
    (
        "stats/bootstrap.py",
        "return s if terms * top * 2.0**s < 2.0**53 else None",
        0,
        "return None",
    ),
    # a wider field in the packed words, the same sums
    ("stats/bootstrap.py", _FIELDS, 28, "1 -> 2"),
    ("stats/bootstrap.py", "for f, shift in zip(group, shifts, strict=True):", 42, "True -> False"),
    # the scale search only picks the fast exact path over the sequential one
    ("stats/bootstrap.py", "for s in range(41):", 15, "41 -> 42"),
    # history/gate.py: the check's family is one pair
    ("history/gate.py", "row = table.rows[0]", 17, "0 -> -1"),
    # comparison/verdicts.py: the level is checked only to lie in (0, 1); 0.5 does too
    (
        "comparison/verdicts.py",
        'stats.check_common(rounds, seed, "percentile", 1.0 - alpha if 0 < alpha < 1 else 0.5)',
        62,
        "0 -> 1",
    ),
    # comparison/summary.py: every metric's estimates hold one row per system
    ("comparison/summary.py", _PER_SYSTEM, 56, "True -> False"),
    # comparison/systems.py: verdicts.compare_family refuses one system with the same message
    ("comparison/systems.py", "if len(systems) < 2:", 0, "`if` branch removed"),
    ("comparison/systems.py", "if len(systems) < 2:", 18, "2 -> 1"),
    # chunking/frameworks.py: text.find(piece, prev + 1) is never 0 once prev >= 0
    ("chunking/frameworks.py", "if at < 0 and prev >= 0:", 3, "`<` -> `<=`"),
    # chunking/frameworks.py: the fallback for old semantic-text-splitter versions (byte offsets);
    # the pinned version gives character offsets, so it never runs
    ("chunking/frameworks.py", "return obj.chunks(text)", 0, "return None"),
    # runs/scoring.py: np.zeros is float64 and np.array of ints int64 by default; the grades
    # matrix is read through metrics' whole-number check, and every ideal vector is
    # sorted best first by metrics._ideal_matrix; nonzero grades are > 0, so the
    # default of the running best (0 or -1) and the order of max's arguments never matter
    (
        "runs/scoring.py",
        "return np.zeros(len(ks), dtype=np.float64)",
        7,
        "keyword `dtype=` dropped",
    ),
    ("runs/scoring.py", _ONE_UNIT, 7, "keyword `dtype=` dropped"),
    (
        "runs/scoring.py",
        "grades = np.zeros((n, depth), dtype=np.int64)",
        9,
        "keyword `dtype=` dropped",
    ),
    ("runs/scoring.py", _JUDGED, 65, "True -> False"),
    (
        "runs/scoring.py",
        "best[p] = max(best.get(p, 0), x)",
        10,
        "arguments swapped: (x, best.get(p, 0), ...)",
    ),
    ("runs/scoring.py", "best[p] = max(best.get(p, 0), x)", 26, "0 -> -1"),
    # files/outputs.py: the lock's hold count is only tested for presence; the outer exit
    # deletes it whatever it holds
    ("files/outputs.py", "_held[key] = 1", 13, "1 -> 2"),
    # files/manifest.py: the manifest is read to its end whatever the read size
    ("files/manifest.py", "while chunk := os.read(fd, 1 << 16):", 32, "16 -> 15"),
    ("files/manifest.py", "while chunk := os.read(fd, 1 << 16):", 32, "16 -> 17"),
    # scoring/trec.py: max() of two ints in either order
    (
        "scoring/trec.py",
        _WIDTH,
        8,
        "arguments swapped: (qrels.doc.dtype.itemsize, doc_all.dtype.itemsize, ...)",
    ),
    # max() of two ints again: the blocks of queries evaluated
    (
        "scoring/trec.py",
        "for lo in range(0, max(nq, 1), block):",
        19,
        "arguments swapped: (1, nq, ...)",
    ),
    # an empty slot (j < 0) reads keys[0] or keys[-1], and ~empty masks either out
    (
        "scoring/trec.py",
        "match = ~empty & (keys[np.maximum(j, 0)] == probe[active])",
        37,
        "0 -> -1",
    ),
    # comparison/formatting.py: 17 significant digits give a double back exactly, so the loop
    # has stopped before the cap
    (
        "comparison/formatting.py",
        "while (float(text) < alpha) != (p < alpha) and d < 17:",
        51,
        "17 -> 18",
    ),
    # stats/paired_tests.py: at n = 0 the loop's test (2 >= level) always holds: it starts at 1
    ("stats/paired_tests.py", "n = 1", 4, "1 -> 0"),
    # stats/maxt.py: with h = 0 nothing is rejected, the procedure stops at step 0 and
    # only crit[0] = alpha / k is read (k + 0 == k - 0); flipped wins are in 0..differ,
    # so the clip's lower end never binds; np.minimum is symmetric
    (
        "stats/maxt.py",
        "crit = alpha / (k - np.arange(k))  # Bonferroni's levels, when h = 0",
        16,
        "`-` -> `+`",
    ),
    ("stats/maxt.py", _CLIP, 44, "0 -> -1"),
    ("stats/maxt.py", _STEP_P, 9, "arguments swapped: ((hits + 1) / (rounds + 1), 1.0, ...)"),
    # stats/maxt.py: np.maximum is symmetric
    ("stats/maxt.py", _TINY, 9, "arguments swapped: (np.finfo(float).tiny, levels, ...)"),
    # stats/maxt.py: McNemar's two-sided exact p is symmetric in wins and losses
    ("stats/maxt.py", _MCNEMAR_RAW, 18, "arguments swapped: (lo, w, ...)"),
    ("stats/maxt.py", _MCNEMAR_TABLE, 17, "arguments swapped: (differ - k, k, ...)"),
    # scoring/trec_bytes.py: concatenating one array is that array; the clip's lower end
    # matters only for an empty buffer, which takes the zeros branch; numpy infers the
    # size of reshape(-2) as of reshape(-1)
    ("scoring/trec_bytes.py", "if len(parts) > 1:", 16, "1 -> 0"),
    # the one-byte gap shortcut and the counted path give the same newlines for any gap
    ("scoring/trec_bytes.py", "gap_len = starts - gap_start", 10, "`-` -> `+`"),
    ("scoring/trec_bytes.py", "last = max(buf.size - 1, 0)", 25, "0 -> -1"),
    ("scoring/trec_bytes.py", 'return mat.view(f"S{width}").reshape(-1)', 38, "1 -> 2"),
    # llm/fence.py: block names are the prompt's constants (QUESTION, PASSAGE...), never
    # empty, and data cannot hold a line starting with <<< (as_data escapes it)
    ("llm/fence.py", _BLOCKS, 21, "r'\\S+' -> r'\\S*'"),
    # llm/parse.py: two candidates or more returned earlier, so there is exactly one here
    ("llm/parse.py", "obj, source = candidates[0] if candidates else normal[-1]", 25, "0 -> -1"),
    # stats/paired_tests.py: the interval of one pair: lo and hi hold one element each
    ("stats/paired_tests.py", "return p, float(lo[0]), float(hi[0])", 33, "0 -> -1"),
    ("stats/paired_tests.py", "return p, float(lo[0]), float(hi[0])", 19, "0 -> -1"),
    # stats/exact.py: one more ratio appends log C(n, n + 1) = -inf, never read (k < n)
    ("stats/exact.py", "i = np.arange(1, n + 1, dtype=np.float64)", 21, "1 -> 2"),
    # llm/fence.py: the first block's name is never empty either
    (
        "llm/fence.py",
        '_TAG = re.compile(r"<<<\\S+ (data-[0-9a-f]+)$", re.MULTILINE)',
        18,
        "r'\\S+' -> r'\\S*'",
    ),
    # scoring/trec.py: an empty index array selects nothing whatever its dtype
    (
        "scoring/trec.py",
        "return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=bool)",
        36,
        "keyword `dtype=` dropped",
    ),
    # answers/numbers.py: a citation starts with "[", so a number inside never starts there
    ("answers/numbers.py", 'if any(s <= m.start("num") < e for s, e in cited):', 7, "`<=` -> `<`"),
    # stats/paired.py, stats/agreement.py: counts and codes are whole numbers either way
    (
        "stats/paired.py",
        "hits = np.zeros(diffs.shape[1], dtype=np.int64)",
        7,
        "keyword `dtype=` dropped",
    ),
    ("stats/agreement.py", _CODE, 7, "keyword `dtype=` dropped"),
    # stats/draws.py: the draw cache only keeps or drops blocks, never changes one
    (
        "stats/draws.py",
        "while sum(a.nbytes for a in self._items.values()) > self.max_bytes:",
        6,
        "`>` -> `>=`",
    ),
    # stats/paired_tests.py: dropping one operand's float64 leaves the other: numpy promotes
    ("stats/paired_tests.py", _DIFFS, 5, "keyword `dtype=` dropped"),
    ("stats/paired_tests.py", _DIFFS, 39, "keyword `dtype=` dropped"),
    # stats/size.py: min() of two ints in either order
    ("stats/size.py", _B0, 21, "arguments swapped: ((first + rows * top) // m, rounds, ...)"),
    # answers/numbers.py: sorted in reverse without key=len still puts every unit before
    # its prefixes ("minutes" > "minute" > "min" > "m")
    ("answers/numbers.py", _AFTER, 18, "keyword `key=` dropped"),
    # stats/agreement.py: the outer np.where discards the quotient where den == 0
    ("stats/agreement.py", "safe = np.where(den == 0, 1.0, den)", 23, "0 -> 1"),
    # stats/paired_tests.py: _hits_needed's first guess only saves steps; the two loops after
    # it reach the fewest h from a guess of 0 or one too many
    ("stats/paired_tests.py", _GUESS, 21, "`*` -> `/`"),
    ("stats/paired_tests.py", _GUESS, 39, "1 -> 0"),
    (
        "stats/paired_tests.py",
        "while (h + 1) / (rounds + 1) < level:",
        7,
        "`+` -> `-`",
    ),  # overshoot
    # scoring/grading.py: items and grades always have the same length; max() of two ints
    ("scoring/grading.py", _FOUND, 54, "True -> False"),
    (
        "scoring/grading.py",
        "out[-1][1] = max(out[-1][1], end)",
        13,
        "arguments swapped: (end, out[-1][1], ...)",
    ),
    # chunking/strategies.py: a piece between two breaks of one level has none of that level inside,
    # and the level loop moves down by itself
    (
        "chunking/strategies.py",
        "out.extend(_recursive_spans(idx, a, b, size, level + 1))",
        53,
        "1 -> 0",
    ),
    # chunking/strategies.py: the batch size only groups paragraphs into worker tasks
    ("chunking/strategies.py", "BATCH_CHARS = 200_000", 14, "200000 -> 200001"),
    ("chunking/strategies.py", "BATCH_CHARS = 200_000", 14, "200000 -> 199999"),
    # scoring/metrics.py: np.zeros is float64 by default
    ("scoring/metrics.py", "return np.zeros(n, dtype=np.float64)", 7, "keyword `dtype=` dropped"),
    # a SQuAD question has exactly one answer span
    (
        "inputs/testset.py",
        "unknown = [q.id for q in questions if q.answers[0].doc not in known]",
        48,
        "0 -> -1",
    ),
    # runs/evaluate.py: every evaluation's query ids are its qrels' (the same for every run);
    # the drill-down asks evaluate_run for the top TOP documents, so `top` and its
    # documents are always there
    ("runs/evaluate.py", "qids = evaluations[0].query_ids", 19, "0 -> -1"),
    (
        "runs/evaluate.py",
        "self._top = top if top is not None and top.docs is not None else None",
        19,
        "`and` -> `or`",
    ),
    # stats/draws.py: below 2**21 questions the integer path and the reference's double
    # product give the same index (t * n < 2**53 is exact), so moving the cutover down
    # (2**20, or 0: the double product always) or to n == 2**21 changes only the speed
    ("stats/draws.py", "if n < (1 << 21):", 3, "`<` -> `<=`"),
    ("stats/draws.py", "if n < (1 << 21):", 8, "1 -> 0"),
    ("stats/draws.py", "if n < (1 << 21):", 13, "21 -> 20"),
    # stats/size.py: max() of two ints in either order
    (
        "stats/size.py",
        "return max(1, math.ceil(round(x, 9)))",
        7,
        "arguments swapped: (math.ceil(round(x, 9)), 1, ...)",
    ),
    # retrieval/bm25.py: questions are scored in blocks only to bound the score matrix;
    # each question's row is the same in any block (at least one question a block)
    ("retrieval/bm25.py", "QUESTION_BLOCK = 64", 17, "64 -> 65"),
    ("retrieval/bm25.py", "QUESTION_BLOCK = 64", 17, "64 -> 63"),
    ("retrieval/bm25.py", "SCORE_BLOCK = 1 << 16", 14, "1 -> 2"),
    ("retrieval/bm25.py", "SCORE_BLOCK = 1 << 16", 14, "1 -> 0"),
    ("retrieval/bm25.py", "SCORE_BLOCK = 1 << 16", 19, "16 -> 15"),
    ("retrieval/bm25.py", "SCORE_BLOCK = 1 << 16", 19, "16 -> 17"),
    # runs/pipeline.py: min() of two ints; a Ranking's ids and scores have one shape; the
    # chunking key marks "no parent" with any negative number (parents count from 0),
    # and keys are only compared within one run
    (
        "runs/pipeline.py",
        "want = min(depth, n_parents)",
        7,
        "arguments swapped: (n_parents, depth, ...)",
    ),
    (
        "runs/pipeline.py",
        "[float(s) for s, i in zip(srow, irow, strict=True) if i >= 0]",
        45,
        "True -> False",
    ),
    (
        "runs/pipeline.py",
        "x for c in chunks for x in (c.start, c.end, -1 if c.parent is None else c.parent)",
        45,
        "1 -> 2",
    ),
    # history/store.py: an INSERT's lastrowid is never None or 0 (ids count from 1)
    ("history/store.py", "run_id = int(cur.lastrowid or 0)", 30, "0 -> -1"),
    ("history/store.py", "run_id = int(cur.lastrowid or 0)", 30, "0 -> 1"),
    # cli/layout.py: natural_width is only compared with a terminal's width; measuring on
    # a console 100,000 or 100,001 characters wide changes no such comparison
    ("cli/layout.py", "wide = Console(width=100_000, file=io.StringIO())", 21, "100000 -> 100001"),
    ("cli/layout.py", "wide = Console(width=100_000, file=io.StringIO())", 21, "100000 -> 99999"),
    # inputs/config.py: validate() checks every field's type first (_check_field_types, strict:
    # engine_workers an int and not a bool), so the second type test never decides
    (
        "inputs/config.py",
        "if isinstance(self.engine_workers, bool) or not isinstance(self.engine_workers, int):",
        3,
        "`or` -> `and`",
    ),
    # retrieval/hybrid.py: np.full with the int -1 is int64 without dtype=; a side's
    # valid ids and their normalised scores are one mask of one row: the same length
    (
        "retrieval/hybrid.py",
        "ids = np.full((n_q, k), -1, dtype=np.int64)",
        6,
        "keyword `dtype=` dropped",
    ),
    (
        "retrieval/hybrid.py",
        "for item, v in zip(ids[ok].tolist(), norm.tolist(), strict=True):",
        59,
        "True -> False",
    ),
    # files/sqlite.py: PRAGMA journal_mode answers one row of one column; the pause between two
    # tries of a locked open only spaces them
    (
        "files/sqlite.py",
        'lambda: self.conn.execute("PRAGMA journal_mode = WAL").fetchone()[0], timeout_s',
        66,
        "0 -> -1",
    ),
    ("files/sqlite.py", "time.sleep(0.05)", 11, "0.05 -> 0.1"),
    # runs/search_run.py: every system of a run is scored on the same metrics, in the same order
    (
        "runs/search_run.py",
        "return list(self.systems[0].scores) if self.systems else []",
        25,
        "0 -> -1",
    ),
    # chunking/segment.py: argued in docs/testing.md
    ("chunking/segment.py", "if not paragraph or paragraph.isspace():", 0, "`if` branch removed"),
    (
        "chunking/segment.py",
        "cap = 2 * n + 16  # as blingfire's wrapper sizes its buffers",
        6,
        "2 -> 3",
    ),
    ("chunking/segment.py", "if got <= 0 or got > cap:", 10, "0 -> -1"),
    (
        "chunking/segment.py",
        "return _trimmed(paragraph, zip(starts.tolist(), ends.tolist(), strict=True))",
        70,
        "True -> False",
    ),
    # chunking/segment_cache.py: argued in docs/testing.md
    (
        "chunking/segment_cache.py",
        'return self._store.query("SELECT COUNT(*) FROM sentence_starts")[0][0]',
        65,
        "0 -> -1",
    ),
    ("chunking/segment_cache.py", "_RUNS[0] += 1", 6, "0 -> -1"),
    # answers/failure_counts.py: argued in docs/testing.md
    (
        "answers/failure_counts.py",
        'arr = np.array([labels[k] == "correct" for k in scored], dtype=np.float64)',
        6,
        "keyword `dtype=` dropped",
    ),
    (
        "answers/failure_counts.py",
        "SystemFailures(system, len(mine), counts, dict(zip(kinds, estimates, strict=True)))",
        76,
        "True -> False",
    ),
    # answers/hand.py: argued in docs/testing.md
    (
        "answers/hand.py",
        "return max(0, min(self.target, self.available) - self.total)",
        7,
        "arguments swapped: (min(self.target, self.available) - self.total, 0, ...)",
    ),
    # cli/evaluate.py: argued in docs/testing.md
    (
        "cli/evaluate.py",
        "bar.update(task, description=label, completed=done, total=total)",
        0,
        "keyword `total=` dropped",
    ),
    # cli/history.py: argued in docs/testing.md
    ("cli/history.py", "if not r.commit:", 0, "`if` branch removed"),
    ("cli/history.py", "with HistoryStore(folder, create=False) as store:", 33, "False -> True"),
    # cli/progress.py: argued in docs/testing.md
    (
        "cli/progress.py",
        'sub["task"] = progress.add_task(label, total=total)',
        14,
        "keyword `total=` dropped",
    ),
    (
        "cli/progress.py",
        "tasks[label] = progress.add_task(label[-30:], total=total)",
        15,
        "keyword `total=` dropped",
    ),
    ("cli/progress.py", "if settings.quiet or not bars.is_terminal:", 0, "`if` branch removed"),
    # cli/search_views.py: argued in docs/testing.md
    (
        "cli/search_views.py",
        "level = rows[0].confidence if rows else DEFAULTS.confidence",
        13,
        "0 -> -1",
    ),
    # chunking/doc_index.py: argued in docs/testing.md
    ("chunking/doc_index.py", "if n < 2 or len(first) == 0:", 7, "2 -> 1"),
    ("chunking/doc_index.py", "if self.n < 2:", 12, "2 -> 3"),
    # llm/cache.py: argued in docs/testing.md
    ("llm/cache.py", "if row is None:", 0, "`if` branch removed"),
    (
        "llm/cache.py",
        "value = canonical_json(_with(reply, cached=False).to_dict())",
        43,
        "False -> True",
    ),
    (
        "llm/cache.py",
        'return [r[0] for r in self._conn.execute("SELECT key FROM replies ORDER BY created")]',
        10,
        "0 -> -1",
    ),
    # questions/audit_model.py: argued in docs/testing.md
    (
        "questions/audit_model.py",
        "if reply.error is not None or reply.parsed is None:",
        3,
        "`or` -> `and`",
    ),
    # questions/audit_rules.py: argued in docs/testing.md
    (
        "questions/audit_rules.py",
        'return any(w in ("to", "that") for w in words[i + 1 : i + 6])',
        50,
        "1 -> 0",
    ),
    (
        "questions/audit_rules.py",
        "if min(len(a), len(s)) / max(len(a), len(s)) < threshold:",
        0,
        "`if` branch removed",
    ),
    # questions/compare.py: argued in docs/testing.md
    (
        "questions/compare.py",
        "sub_b = TestSet([testset_b.questions[j] for j in ib], source=testset_b.source)",
        8,
        "keyword `source=` dropped",
    ),
    # report/chartlayout.py: argued in docs/testing.md
    ("report/chartlayout.py", "return False", 0, "return None"),
    ("report/chartlayout.py", "for side in (1, -1):", 13, "1 -> 2"),
    # report/charts.py: argued in docs/testing.md
    ("report/charts.py", 'x=alt.X("x:Q", scale=xscale),', 2, "keyword `scale=` dropped"),
    (
        "report/charts.py",
        "height = 300 if len(systems) <= 12 else 300 + 13 * (len(systems) - 12)",
        32,
        "12 -> 11",
    ),
    # report/data.py: argued in docs/testing.md
    (
        "report/data.py",
        'if (v > 0) != (row["difference"][end] > 0) or (v < 0) != (row["difference"][end] < 0):',
        47,
        "`<` -> `<=`",
    ),
    ("report/data.py", 'below_best.add(c["b"] if c["a"] == best else c["a"])', 25, "`==` -> `!=`"),
    # report/sections.py: argued in docs/testing.md
    (
        "report/sections.py",
        "for i in range(max(0, start), min(len(text), end)):",
        15,
        "arguments swapped: (start, 0, ...)",
    ),
    (
        "report/sections.py",
        "for i in range(max(0, start), min(len(text), end)):",
        30,
        "arguments swapped: (end, len(text), ...)",
    ),
    # retrieval/embedcache.py: argued in docs/testing.md
    ("retrieval/embedcache.py", ").fetchone()[0]", 13, "0 -> -1"),
    ("retrieval/embedcache.py", "for k, t in zip(keys, texts, strict=True):", 36, "True -> False"),
    (
        "retrieval/embedcache.py",
        "vecs = np.asarray(vecs, dtype=np.float32)",
        7,
        "keyword `dtype=` dropped",
    ),
    (
        "retrieval/embedcache.py",
        "for k, v in zip(batch_keys, vecs, strict=True):",
        41,
        "True -> False",
    ),
    # retrieval/dense.py: argued in docs/testing.md
    ("retrieval/dense.py", "convert_to_numpy=True,", 17, "True -> False"),
    (
        "retrieval/dense.py",
        "index.add(np.ascontiguousarray(self._doc_vecs, dtype=np.float32))",
        10,
        "keyword `dtype=` dropped",
    ),
    # report/history.py, chunking/types.py, report/page.py, retrieval/remote.py: argued in
    # docs/testing.md
    (
        "report/history.py",
        "same = [r for r in held if not measurement.differences(r.measurement, this, metric)]",
        31,
        "arguments swapped: (this, r.measurement, ...)",
    ),
    (
        "chunking/types.py",
        "for name, value in zip(self.__slots__, values, strict=True):",
        54,
        "True -> False",
    ),
    (
        "report/page.py",
        "hits = [(rest.find(k), k) for k in parts if rest.find(k) >= 0]",
        60,
        "0 -> 1",
    ),
    ("retrieval/remote.py", "batch_size: int = 64,", 18, "64 -> 65", 0),
    ("retrieval/remote.py", "backoff: float = 0.5,", 17, "0.5 -> 1.0", 0),
    # cli/hand_views.py, engine.py: argued in docs/testing.md
    ("cli/hand_views.py", "return False", 0, "return None"),
    (
        "engine.py",
        'self.workers = max(1, int(ray.cluster_resources().get("CPU", 1)))',
        15,
        "arguments swapped: (int(ray.cluster_resources().get('CPU', 1)), 1, ...)",
    ),
    (
        "engine.py",
        "n_actors = max(1, min(len(tasks), most, self.gpus or self.workers))",
        11,
        "arguments swapped: (min(len(tasks), most, self.gpus or self.workers), 1, ...)",
    ),
}

PYTEST_ARGS = ["-x", "-q", "-p", "no:randomly", "-p", "no:cacheprovider", "-m", "not slow"]

# --------------------------------------------------------------------------- mutants

_CMP_SWAP = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
}
_BIN_SWAP = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.Div,
    ast.Div: ast.Mult,
    ast.FloorDiv: ast.Div,
}
_SYMBOL = {
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.Is: "is",
    ast.IsNot: "is not",
    ast.In: "in",
    ast.NotIn: "not in",
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.FloorDiv: "//",
    ast.And: "and",
    ast.Or: "or",
}


# a regular-expression class repeated one or more times: `\s+` -> `\s*`
_REGEX_PLUS = re.compile(r"\\[sSwWdD]\+")


@dataclass(frozen=True)
class Mutant:
    module: str  # relative to src/ragmeter, e.g. "retrieval/base.py"
    node: int  # index of the node in ast.walk order
    kind: str  # what to do to it (see _apply)
    arg: int  # which operator / which alternative
    line: int
    col: int  # column of the mutated node in its line
    description: str
    source_line: str
    nth: int = 0  # how many identical (line text, column, mutation) come before it

    @property
    def where(self) -> str:
        return f"src/ragmeter/{self.module}:{self.line}:{self.col}"

    @property
    def key(self) -> tuple[str, str, int, str]:
        return (self.module, self.source_line, self.col, self.description)

    @property
    def equivalent(self) -> bool:
        """Listed in EQUIVALENT: by line text, column and mutation (any occurrence),
        or with the occurrence number where one line's text repeats in the module."""
        return self.key in EQUIVALENT or (*self.key, self.nth) in EQUIVALENT


def _float_mutant(v: float) -> float:
    """A float constant changed: 0 -> 1, anything else doubled (0.05 -> 0.1, 0.5 -> 1.0)."""
    return 1.0 if v == 0 else v * 2


def _is_main_guard(node: ast.If) -> bool:
    """`if __name__ == "__main__":` and `if TYPE_CHECKING:` hold no behaviour to test."""
    return ast.unparse(node.test) in ("__name__ == '__main__'", "TYPE_CHECKING")


def _excluded_nodes(tree: ast.AST) -> set[int]:
    """ids of nodes never mutated: raise/assert bodies, f-strings, annotations, docstrings."""
    out: set[int] = set()

    def mark(node: ast.AST | None) -> None:
        if node is not None:
            out.update(id(n) for n in ast.walk(node))

    for node in ast.walk(tree):
        if isinstance(node, ast.Raise | ast.Assert | ast.JoinedStr):
            mark(node)
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            mark(node)  # a docstring
        elif isinstance(node, ast.AnnAssign):
            mark(node.annotation)
        elif isinstance(node, ast.arg):
            mark(node.annotation)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            if not isinstance(node, ast.ClassDef):
                mark(node.returns)
            for decorator in node.decorator_list:  # @dataclass(frozen=True, slots=True)...
                mark(decorator)
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            mark(node)
    return out


_SOURCES: dict[str, str] = {}


def _source(module: str) -> str:
    """The module's text as first read by this run: the mutants, their line map and the
    baseline all stay on that text while the file changes on disk."""
    if module not in _SOURCES:
        _SOURCES[module] = (SRC / "ragmeter" / module).read_text(encoding="utf-8")
    return _SOURCES[module]


def enumerate_mutants(module: str) -> list[Mutant]:
    source = _source(module)
    lines = source.splitlines()
    tree = ast.parse(source)
    skip = _excluded_nodes(tree)
    out: list[Mutant] = []

    for index, node in enumerate(ast.walk(tree)):
        if id(node) in skip or not hasattr(node, "lineno"):
            continue
        line = node.lineno
        text = lines[line - 1].strip()
        if text.endswith("# pragma: no mutate"):
            continue

        def add(kind: str, arg: int, description: str) -> None:
            col = node.col_offset - (len(lines[line - 1]) - len(lines[line - 1].lstrip()))  # noqa: B023
            out.append(Mutant(module, index, kind, arg, line, col, description, text))  # noqa: B023

        if isinstance(node, ast.Compare):
            for j, op in enumerate(node.ops):
                new = _CMP_SWAP.get(type(op))
                if new is not None:
                    add("cmp", j, f"`{_SYMBOL[type(op)]}` -> `{_SYMBOL[new]}`")
        elif isinstance(node, ast.BinOp | ast.AugAssign):
            new = _BIN_SWAP.get(type(node.op))
            if new is not None:
                add("bin", 0, f"`{_SYMBOL[type(node.op)]}` -> `{_SYMBOL[new]}`")
        elif isinstance(node, ast.BoolOp):
            other = ast.Or if isinstance(node.op, ast.And) else ast.And
            add("bool", 0, f"`{_SYMBOL[type(node.op)]}` -> `{_SYMBOL[other]}`")
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not | ast.USub):
            add("unary", 0, "drop `not`" if isinstance(node.op, ast.Not) else "drop unary `-`")
        elif isinstance(node, ast.Constant):
            v = node.value
            if isinstance(v, str) and _REGEX_PLUS.search(v):
                m = _REGEX_PLUS.search(v)
                add("regex", 0, f"r'{m.group(0)}' -> r'{m.group(0)[:-1]}*'")
            if isinstance(v, bool):
                add("const", 0, f"{v} -> {not v}")
            elif isinstance(v, int):
                add("const", 1, f"{v} -> {v + 1}")
                add("const", -1, f"{v} -> {v - 1}")
        elif isinstance(node, ast.Return) and node.value is not None:
            if not (isinstance(node.value, ast.Constant) and node.value.value is None):
                add("return", 0, "return None")
        if isinstance(node, ast.Constant) and type(node.value) is float:
            v = node.value
            add("float", 0, f"{v!r} -> {_float_mutant(v)!r}")
        elif isinstance(node, ast.If) and not _is_main_guard(node):
            add("branch", 0, "`if` branch removed")
            if node.orelse:
                add("branch", 1, "`else` branch removed")
        elif isinstance(node, ast.comprehension):
            for j in range(len(node.ifs)):
                add("filter", j, "comprehension filter dropped")
        elif isinstance(node, ast.Call):
            positional = [a for a in node.args if not isinstance(a, ast.Starred)]
            if len(positional) == len(node.args) >= 2:
                a, b = (ast.unparse(x) for x in node.args[:2])
                if a != b:
                    add("swap", 0, f"arguments swapped: ({b}, {a}, ...)")
            for j, kw in enumerate(node.keywords):
                # a value passed through (`alpha=alpha`, `level=plan.level`): dropping it
                # falls back to the default, the bug of a setting that never arrives
                if kw.arg is not None and isinstance(kw.value, ast.Name | ast.Attribute):
                    add("keyword", j, f"keyword `{kw.arg}=` dropped")
    seen: dict[tuple, int] = {}
    numbered = []
    for m in sorted(out, key=lambda m: (m.line, m.col, m.node, m.arg)):
        nth = seen.get(m.key, 0)
        seen[m.key] = nth + 1
        numbered.append(replace(m, nth=nth))
    numbered.sort(key=lambda m: (m.node, m.arg))  # back to ast.walk order
    return numbered


def _apply(tree: ast.AST, mutant: Mutant) -> None:
    nodes = list(ast.walk(tree))
    node = nodes[mutant.node]
    if mutant.kind == "cmp":
        node.ops[mutant.arg] = _CMP_SWAP[type(node.ops[mutant.arg])]()
    elif mutant.kind == "bin":
        node.op = _BIN_SWAP[type(node.op)]()
    elif mutant.kind == "bool":
        node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
    elif mutant.kind == "const":
        node.value = (not node.value) if isinstance(node.value, bool) else node.value + mutant.arg
    elif mutant.kind == "regex":
        node.value = _REGEX_PLUS.sub(lambda m: m.group(0)[:-1] + "*", node.value, count=1)
    elif mutant.kind == "return":
        node.value = ast.Constant(None)
    elif mutant.kind == "float":
        node.value = _float_mutant(node.value)
    elif mutant.kind == "branch":
        if mutant.arg == 0:
            node.body = [ast.Pass()]
        else:
            node.orelse = []
    elif mutant.kind == "filter":
        del node.ifs[mutant.arg]
    elif mutant.kind == "swap":
        node.args[0], node.args[1] = node.args[1], node.args[0]
    elif mutant.kind == "keyword":
        del node.keywords[mutant.arg]
    elif mutant.kind == "unary":
        # replace the UnaryOp by its operand in its parent
        for parent in nodes:
            for field, value in ast.iter_fields(parent):
                if value is node:
                    setattr(parent, field, node.operand)
                    return
                if isinstance(value, list):
                    for i, item in enumerate(value):
                        if item is node:
                            value[i] = node.operand
                            return
        raise RuntimeError(f"no parent for {mutant}")
    else:
        raise ValueError(mutant.kind)


def mutated_tree(mutant: Mutant | None, module: str) -> ast.Module:
    """The module's syntax tree with the mutant applied, at the file's own line numbers
    (tracebacks and the line map of the baseline run read the real file)."""
    source = _source(module)
    tree = ast.parse(source)
    if mutant is not None:
        _apply(tree, mutant)
    return ast.fix_missing_locations(tree)


def mutated_source(mutant: Mutant | None, module: str) -> str:
    return ast.unparse(mutated_tree(mutant, module))


# --------------------------------------------------------------------------- running


class _MutantLoader(importlib.machinery.SourceFileLoader):
    def __init__(self, fullname: str, path: str, code: ast.Module) -> None:
        super().__init__(fullname, path)
        self._code = code

    def get_code(self, fullname):  # never a cached .pyc: always the mutated tree
        return compile(self._code, self.path, "exec", dont_inherit=True)


class _MutantFinder(importlib.abc.MetaPathFinder):
    def __init__(self, fullname: str, path: Path, code: ast.Module) -> None:
        self.fullname, self.path, self.code = fullname, str(path), code

    def find_spec(self, name, path=None, target=None):
        if name != self.fullname:
            return None
        loader = _MutantLoader(name, self.path, self.code)
        return importlib.util.spec_from_file_location(name, self.path, loader=loader)


def _module_name(module: str) -> str:
    name = "ragmeter." + module.removesuffix(".py").replace("/", ".")
    return name.removesuffix(".__init__")


def _plugins():
    """The two pytest plugins of a child: the baseline's line recorder, a mutant's test
    selection (built here: pytest is imported in the parent only by ``_preload``)."""
    import inspect
    import threading

    import pytest

    class LineRecorder:
        """Which tests run each line of one file (``sys.settrace``, this file only).

        A line run while no test is running (collection, imports) or in a module or
        class body (import time, whichever test imported it) is *anytime*: a mutant
        there runs every test. Tests reach a line in this process or its threads;
        one reached only in a subprocess or worker process is not seen (its mutants,
        as those of a line no test runs, run every test).
        """

        def __init__(self, path: str) -> None:
            self.path = path
            self.test: str | None = None
            self.lines: dict[int, set[str]] = {}
            self.anytime: set[int] = set()
            self.seconds: dict[str, float] = {}
            self.started = time.monotonic()
            self.collected = 0.0

        def _local(self, frame, event, arg):
            if event == "line":
                if self.test is None or not frame.f_code.co_flags & inspect.CO_NEWLOCALS:
                    self.anytime.add(frame.f_lineno)
                else:
                    self.lines.setdefault(frame.f_lineno, set()).add(self.test)
            return self._local

        def _global(self, frame, event, arg):
            if frame.f_code.co_filename == self.path:
                return self._local(frame, event, arg)
            return None

        def start(self) -> None:
            sys.settrace(self._global)
            threading.settrace(self._global)

        def stop(self) -> None:
            sys.settrace(None)
            threading.settrace(None)

        def pytest_collection_finish(self, session) -> None:
            self.collected = time.monotonic() - self.started

        @pytest.hookimpl(hookwrapper=True)
        def pytest_runtest_protocol(self, item, nextitem):
            self.test, started = item.nodeid, time.monotonic()
            yield
            self.seconds[item.nodeid] = time.monotonic() - started
            self.test = None

        def result(self) -> dict:
            return {
                "lines": {str(k): sorted(v) for k, v in self.lines.items()},
                "anytime": sorted(self.anytime),
                "seconds": self.seconds,
                "collect": self.collected,
            }

    class Select:
        """Run only the given tests (node ids), in collection order."""

        def __init__(self, wanted: list[str]) -> None:
            self.wanted = set(wanted)

        @pytest.hookimpl(trylast=True)
        def pytest_collection_modifyitems(self, config, items) -> None:
            drop = [i for i in items if i.nodeid not in self.wanted]
            if drop:
                config.hook.pytest_deselected(items=drop)
                items[:] = [i for i in items if i.nodeid in self.wanted]

    return LineRecorder, Select


def _outside_modules() -> list[str]:
    """Modules imported so far that are neither ragmeter nor the project's tests."""
    out = []
    for name, mod in list(sys.modules.items()):
        if name == "ragmeter" or name.startswith("ragmeter.") or mod is None:
            continue
        where = getattr(mod, "__file__", None) or ""
        if where.startswith(str(ROOT / "src")) or where.startswith(str(ROOT / "tests")):
            continue
        if where.startswith(str(ROOT)) and ".venv" not in where:
            continue
        out.append(name)
    return out


# never imported before a fork: they start threads (or are slow and used by few tests)
_NO_PRELOAD = ("torch", "ray", "transformers", "sentence_transformers", "llama_cpp", "selenium")


def _child(
    module: str,
    code: ast.Module,
    tests: list[str],
    log: Path,
    dump: Path | None = None,
    select: list[str] | None = None,
) -> None:
    """In the forked child: serve the mutated module, run the tests, exit with their status.

    With ``dump`` (the baseline run), also write the third-party modules the tests
    imported, so the parent can import them once before forking the mutants, and
    which tests ran each line of the module (``<dump>.lines.json``). With ``select``,
    run only those tests of ``tests`` (node ids).
    """
    import pytest

    scratch = None
    try:
        fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        # a scratch working directory: a mutant that writes to a relative path (say,
        # arguments swapped into a file name) leaves nothing in the project
        scratch = tempfile.mkdtemp(prefix="ragmeter-mutant-cwd-")
        os.chdir(scratch)
        sys.dont_write_bytecode = True
        sys.path.insert(0, str(SRC))
        path = SRC / "ragmeter" / module
        sys.meta_path.insert(0, _MutantFinder(_module_name(module), path, code))
        os.environ["HYPOTHESIS_PROFILE"] = "ci"
        recorder_type, select_type = _plugins()
        plugins: list = []
        recorder = None
        if dump is not None:
            recorder = recorder_type(str(path))
            plugins.append(recorder)
        if select is not None:
            plugins.append(select_type(select))
        if recorder is not None:
            recorder.start()
        try:
            rc = pytest.main(
                [
                    *(str(ROOT / t) for t in tests),
                    *PYTEST_ARGS,
                    f"--rootdir={ROOT}",
                    f"--config-file={ROOT / 'pyproject.toml'}",
                ],
                plugins=plugins,
            )
        finally:
            if recorder is not None:
                recorder.stop()
        if dump is not None:
            dump.write_text("\n".join(_outside_modules()))
            Path(f"{dump}.lines.json").write_text(json.dumps(recorder.result()))
        if select is not None and rc == 5:  # every selected test gone: nothing ran
            rc = 0  # never happens with ids from the baseline; counted undetected
    except BaseException:  # noqa: BLE001
        rc = 99
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    os._exit(int(rc))


def _preload() -> None:
    """Import the heavy libraries once, in the parent, so each child starts fast.

    ragmeter itself must not be imported here: each child imports it afresh.
    """
    for name in (
        "numpy",
        "pytest",
        "hypothesis",
        "hypothesis.strategies",
        "syntok.segmenter",
        "bm25s",
        "scipy.stats",
        "pytrec_eval",
        "ir_measures",
        "ranx",
        "rich.console",
        "httpx",
    ):
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    # pytest plugins installed in the environment (some take seconds to import)
    from importlib.metadata import entry_points

    for entry in entry_points(group="pytest11"):
        try:
            entry.load()
        except Exception:  # noqa: BLE001 - a broken plugin fails in the child, visibly
            pass
    assert not any(m == "ragmeter" or m.startswith("ragmeter.") for m in sys.modules)


@dataclass
class Outcome:
    mutant: Mutant
    status: str  # killed, survived, timeout, equivalent
    seconds: float


def _start(
    module: str,
    code: ast.Module,
    tests: list[str],
    log: Path,
    dump: Path | None = None,
    select: list[str] | None = None,
) -> int:
    pid = os.fork()
    if pid == 0:
        _child(module, code, tests, log, dump, select)
    return pid


def _preload_from(dump: Path) -> None:
    """Import in the parent what the baseline's tests imported (not ragmeter itself)."""
    if not dump.is_file():
        return
    for name in dump.read_text().split():
        if name in sys.modules or name.split(".")[0] in _NO_PRELOAD:
            continue
        if name.startswith("_pytest") or name.startswith("hypothesis"):
            continue
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - the child imports it itself, visibly
            pass
    stray = [m for m in sys.modules if m == "ragmeter" or m.startswith("ragmeter.")]
    for name in stray:  # a third-party module that imported ragmeter: never keep it
        del sys.modules[name]


def _wait_all(running: dict, block: bool) -> list[tuple[object, int | None, float]]:
    """Reap finished children (and kill any past its time limit)."""
    done = []
    while True:
        for pid, (job, started, limit) in list(running.items()):
            got, status = os.waitpid(pid, os.WNOHANG)
            elapsed = time.monotonic() - started
            if got:
                del running[pid]
                done.append((job, os.waitstatus_to_exitcode(status), elapsed))
            elif elapsed > limit:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                del running[pid]
                done.append((job, None, elapsed))
        if done or not block or not running:
            return done
        time.sleep(0.05)


def _statement_lines(module: str) -> dict[int, range]:
    """For each node (by ``ast.walk`` index, as in ``enumerate_mutants``), the lines of
    its innermost statement; of a compound statement (``if``, ``for``, ``def``...),
    only its header: a test that runs any of those lines runs the mutated node."""
    tree = ast.parse(_source(module))
    nodes = list(ast.walk(tree))
    parent: dict[int, ast.AST] = {}
    for node in nodes:
        for child in ast.iter_child_nodes(node):
            parent[id(child)] = node
    out: dict[int, range] = {}
    for index, node in enumerate(nodes):
        stmt = node
        while not isinstance(stmt, ast.stmt) and id(stmt) in parent:
            stmt = parent[id(stmt)]
        if not isinstance(stmt, ast.stmt):
            continue
        body = getattr(stmt, "body", None)
        if isinstance(body, list) and body:
            first = min(getattr(stmt, "decorator_list", []) + [stmt], key=lambda n: n.lineno)
            out[index] = range(first.lineno, max(body[0].lineno, stmt.lineno + 1))
        else:
            out[index] = range(stmt.lineno, (stmt.end_lineno or stmt.lineno) + 1)
    return out


# Baseline traces kept between runs (a --rerun after new tests traces only the module's
# own behaviour test file again); "off" traces everything every time.
TRACES = os.environ.get("RAGMETER_MUTATION_TRACES") or str(
    Path(tempfile.gettempdir()) / "ragmeter-mutation-traces"
)


def _trace_file(module: str, tests: list[str]) -> Path | None:
    """Where the baseline trace of ``module`` over ``tests`` (its own mutants file left
    out) is kept: named by a digest of the library's sources, conftest.py and those
    test files, so any change to them traces again."""
    if TRACES == "off":
        return None
    own = _mutants_file(module)
    digest = hashlib.sha256(module.encode())
    files = sorted((SRC / "ragmeter").rglob("*.py")) + [ROOT / "tests" / "conftest.py"]
    files += [ROOT / t for t in sorted(tests) if t != own]
    for path in files:
        if path.is_file():
            digest.update(path.relative_to(ROOT).as_posix().encode() + b"\0")
            digest.update(path.read_bytes() + b"\0")
    return Path(TRACES) / f"{module.replace('/', '_')}.{digest.hexdigest()[:24]}.json"


def _kept_trace(module: str, tests: list[str]) -> dict | None:
    path = _trace_file(module, tests)
    if path is None or not path.is_file():
        return None
    print(f"{module}: baseline trace reused from {path}", flush=True)
    return json.loads(path.read_text())


def _keep_trace(module: str, tests: list[str], trace: dict, baseline: float) -> None:
    """Keep the trace less the module's own mutants file (rewritten between runs)."""
    path = _trace_file(module, tests)
    if path is None:
        return
    prefix = _mutants_file(module) + "::"
    kept = {
        "lines": {
            n: [t for t in ts if not t.startswith(prefix)] for n, ts in trace["lines"].items()
        },
        "anytime": trace["anytime"],
        "seconds": {t: v for t, v in trace["seconds"].items() if not t.startswith(prefix)},
        "collect": trace["collect"],
        "baseline": baseline,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(kept))
    os.replace(tmp, path)


def _join_traces(kept: dict, own: dict | None) -> dict:
    """A kept trace with a fresh one of the module's own mutants file."""
    if own is None:
        return kept
    lines = {n: list(ts) for n, ts in kept["lines"].items()}
    for n, ts in own["lines"].items():
        lines[n] = sorted({*lines.get(n, ()), *ts})
    return {
        "lines": lines,
        "anytime": sorted({*kept["anytime"], *own["anytime"]}),
        "seconds": {**kept["seconds"], **own["seconds"]},
        "collect": max(kept["collect"], own["collect"]),
    }


def _selection(mutant: Mutant, lines: range, trace: dict) -> list[str] | None:
    """The baseline's tests that ran the mutated statement, or None (run them all): a
    line of import time, or one no test ran (in this process)."""
    anytime = set(trace["anytime"])
    if any(n in anytime for n in lines):
        return None
    found = sorted({t for n in lines for t in trace["lines"].get(str(n), ())})
    return found or None


def run_module(
    module: str, mutants: list[Mutant], jobs: int, workdir: Path, verbose: bool
) -> list[Outcome]:
    tests = [t for t in tests_for(module) if (ROOT / t).is_file()]
    if not tests:
        print(f"{module}: SKIPPED, no test file found for it", flush=True)
        return []
    # Baseline: the unmutated module must pass; it records which tests run each line
    # (a mutant runs only those) and how long each takes (its time limit).
    stem = module.replace("/", "_")
    base_log = workdir / f"{stem}.baseline.log"
    started = time.monotonic()
    dump = workdir / f"{stem}.imported.txt"
    own = _mutants_file(module)
    kept = _kept_trace(module, tests)
    traced = [t for t in tests if t == own] if kept else tests
    status = 0
    if traced:
        pid = _start(module, mutated_tree(None, module), traced, base_log, dump)
        _, status = os.waitpid(pid, 0)
    baseline = time.monotonic() - started
    _preload_from(dump)
    if os.waitstatus_to_exitcode(status) != 0:
        print(f"{module}: SKIPPED, its tests fail without any mutation:", flush=True)
        print(base_log.read_text(errors="replace")[-2000:], flush=True)
        return []
    trace = json.loads(Path(f"{dump}.lines.json").read_text()) if traced else None
    if kept:
        trace, baseline = _join_traces(kept, trace), kept["baseline"] + baseline
    else:
        _keep_trace(module, tests, trace, baseline)
    where = _statement_lines(module)
    ran = len(trace["seconds"])
    print(
        f"{module}: {len(mutants)} mutants, tests {' '.join(tests)} "
        f"({ran} tests, baseline {baseline:.1f} s traced)",
        flush=True,
    )
    outcomes: list[Outcome] = []
    queue = list(mutants)
    running: dict[int, tuple[Mutant, float, float]] = {}
    picked: dict[Mutant, str] = {}  # how many tests each mutant runs
    while queue or running:
        while queue and len(running) < jobs:
            m = queue.pop(0)
            if m.equivalent:
                outcomes.append(Outcome(m, "equivalent", 0.0))
                continue
            select = _selection(m, where.get(m.node, range(m.line, m.line + 1)), trace)
            expected = baseline
            if select is not None:
                expected = trace["collect"] + sum(trace["seconds"][t] for t in select)
            log = workdir / f"{stem}.{m.node}.{m.kind}.{m.arg}.log"
            pid = _start(module, mutated_tree(m, module), tests, log, select=select)
            running[pid] = (m, time.monotonic(), max(3 * expected, expected + 20))
            picked[m] = "all" if select is None else str(len(select))
        for m, rc, elapsed in _wait_all(running, block=True):
            status = "timeout" if rc is None else ("survived" if rc == 0 else "killed")
            if rc not in (None, 0, 1):
                status = "killed"  # an import error or a crash is a detected mutant too
            outcomes.append(Outcome(m, status, elapsed))
            if verbose or status == "survived":
                print(
                    f"  {status:8} {m.where}: {m.description} | {m.source_line}"
                    f" ({picked[m]} tests)",
                    flush=True,
                )
    outcomes.sort(key=lambda o: (o.mutant.line, o.mutant.node, o.mutant.arg))
    return outcomes


def summarize(outcomes: list[Outcome]) -> dict:
    count = {s: 0 for s in ("killed", "timeout", "survived", "equivalent")}
    for o in outcomes:
        count[o.status] += 1
    scored = count["killed"] + count["timeout"] + count["survived"]
    count["mutants"] = len(outcomes)
    count["score"] = (count["killed"] + count["timeout"]) / scored if scored else 1.0
    return count


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--module", action="append", help="only these modules (e.g. stats, retrieval/base)"
    )
    parser.add_argument("--limit", type=int, help="a random sample of N mutants per module")
    parser.add_argument(
        "--quick", action="store_true", help=f"a seeded sample of {QUICK} mutants per module"
    )
    parser.add_argument("--seed", type=int, default=1, help="seed of the sample (default 1)")
    parser.add_argument("--jobs", type=int, default=1, help="mutants run at once (default 1)")
    parser.add_argument("--json", type=Path, help="write every outcome to this JSON file")
    parser.add_argument(
        "--rerun",
        type=Path,
        help="only the mutants that survived in this earlier --json file (after adding tests)",
    )
    parser.add_argument(
        "--merge",
        type=Path,
        nargs="+",
        help="print the table of earlier --json files, later files overriding earlier "
        "outcomes of the same mutant (a first run, then --rerun of its survivors)",
    )
    parser.add_argument("--list", action="store_true", help="list the mutants; run nothing")
    parser.add_argument(
        "--modules", action="store_true", help="list the modules and their test files"
    )
    parser.add_argument(
        "--tests",
        nargs="+",
        help="these test files for the chosen modules, in place of TARGETS or the found ones "
        "(to try a narrower set before adding it to TARGETS)",
    )
    parser.add_argument("--verbose", action="store_true", help="print every outcome")
    parser.add_argument(
        "--logs", type=Path, help="keep each run's pytest output in this folder (default: none)"
    )
    args = parser.parse_args(argv)
    if args.quick and args.limit is None:
        args.limit = QUICK

    if args.merge:
        merged: dict[tuple, Outcome] = {}
        current: dict[str, set[tuple]] = {}
        gone = 0
        for path in args.merge:  # later files override: a rerun after new tests
            for o in json.loads(path.read_text())["outcomes"]:
                m = Mutant(**{k: o[k] for k in Mutant.__dataclass_fields__})
                if m.module not in current:
                    current[m.module] = {_identity(x) for x in enumerate_mutants(m.module)}
                if _identity(m) not in current[m.module]:
                    gone += 1  # its line changed since (a fix): no longer a mutant
                    continue
                status = "equivalent" if m.equivalent else o["status"]
                merged[_identity(m)] = Outcome(m, status, o["seconds"])
        results: dict[str, list[Outcome]] = {}
        for o in sorted(merged.values(), key=lambda o: (o.mutant.module, o.mutant.line)):
            results.setdefault(o.mutant.module, []).append(o)
        _report(results, f"{len(args.merge)} files merged")
        if gone:
            print(f"\n{gone} outcome(s) left out: their source line has changed since")
        return 0

    modules = library_modules()
    if args.module:
        wanted = {m.removesuffix(".py") for m in args.module}
        modules = [m for m in modules if m.removesuffix(".py") in wanted]
        if not modules:
            parser.error("--module: choose from those `--modules` lists")
    if args.tests:
        missing = [t for t in args.tests if not (ROOT / t).is_file()]
        if missing:
            parser.error(f"--tests: no such file {missing[0]}")
        TARGETS.update({m: list(args.tests) for m in modules})
    if args.modules:
        for module in modules:
            tests = [t for t in tests_for(module) if (ROOT / t).is_file()]
            how = "TARGETS" if module in TARGETS else "found"
            print(f"{module} ({how}, {len(tests)} files): {' '.join(tests)}")
        for module, why in EXCLUDED.items():
            print(f"{module}: left out, {why}")
        return 0

    survivors = None
    if args.rerun is not None:
        earlier = json.loads(args.rerun.read_text())["outcomes"]
        survivors = {
            (o["module"], o["source_line"], o["col"], o["description"], o["nth"])
            for o in earlier
            if o["status"] == "survived"
        }
        modules = [m for m in modules if any(k[0] == m for k in survivors)]
    plan: dict[str, list[Mutant]] = {}
    for module in modules:
        mutants = enumerate_mutants(module)
        if survivors is not None:
            mutants = [m for m in mutants if _identity(m) in survivors]
        if args.limit is not None and args.limit < len(mutants):
            mutants = random.Random(f"{args.seed}:{module}").sample(mutants, args.limit)
            mutants.sort(key=lambda m: (m.line, m.node, m.arg))
        plan[module] = mutants
    if args.list:
        for mutants in plan.values():
            for m in mutants:
                print(f"{m.where}: {m.description} | {m.source_line}")
        print(sum(len(v) for v in plan.values()), "mutants")
        return 0

    _preload()
    results: dict[str, list[Outcome]] = {}
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="ragmeter-mutation-") as tmp:
        logs = (args.logs or Path(tmp)).resolve()  # the children run in scratch folders
        logs.mkdir(parents=True, exist_ok=True)
        for module, mutants in plan.items():
            results[module] = run_module(module, mutants, args.jobs, logs, args.verbose)

    sample = f"a sample of {args.limit} per module, seed {args.seed}" if args.limit else ""
    everything = _report(results, sample)
    print(f"\n{time.monotonic() - started:.0f} s, {args.jobs} job(s)")
    if args.json:
        payload = {
            "limit": args.limit,
            "seed": args.seed,
            "summary": {m: summarize(o) for m, o in results.items()}
            | {"all": summarize(everything)},
            "outcomes": [
                asdict(o.mutant) | {"status": o.status, "seconds": round(o.seconds, 2)}
                for o in everything
            ],
        }
        args.json.write_text(json.dumps(payload, indent=1, sort_keys=True) + "\n")
    return 0


def _identity(m: Mutant) -> tuple:
    """A mutant by its text (stable while other lines of the module change)."""
    return (*m.key, m.nth)


def _report(results: dict[str, list[Outcome]], note: str) -> list[Outcome]:
    """Print the per-module table and the survivors; return every outcome."""
    print()
    print(
        f"Mutation score{f' ({note})' if note else ''}: (killed + timeout) / (mutants - equivalent)"
    )
    print(
        f"{'module':22} {'mutants':>8} {'killed':>7} {'timeout':>8} {'survived':>9} "
        f"{'equiv':>6} {'killed %':>9}"
    )
    everything: list[Outcome] = []
    for module, outcomes in results.items():
        c = summarize(outcomes)
        everything += outcomes
        print(
            f"{module:22} {c['mutants']:8d} {c['killed']:7d} {c['timeout']:8d} "
            f"{c['survived']:9d} {c['equivalent']:6d} {c['score']:9.1%}"
        )
    total = summarize(everything)
    print(
        f"{'all':22} {total['mutants']:8d} {total['killed']:7d} {total['timeout']:8d} "
        f"{total['survived']:9d} {total['equivalent']:6d} {total['score']:9.1%}"
    )
    survivors = [o for o in everything if o.status == "survived"]
    if survivors:
        print("\nSurvivors:")
        for o in survivors:
            print(f"  {o.mutant.where}: {o.mutant.description} | {o.mutant.source_line}")
    return everything


if __name__ == "__main__":
    raise SystemExit(main())

"""Score two test sets over the same passages and compare them question by question.

Typically reader-written questions (A) against model-written ones (B) made from
the same answer passages. Questions are paired by their answer key: the set of
``(doc, start, end)`` spans. Per system (strategy x retriever) the comparison
gives each set's score, the difference A - B on the paired per-question scores,
and B's score with its flagged questions removed.

The differences are one family, A - B for every system, decided under the run's rule
(its level, ``adjust`` and clusters) by :func:`ragmeter.comparison.systems.compare_systems`,
the comparison every view uses; the questions compared without B's flagged ones are a
second family under the same rule.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from ragmeter import stats
from ragmeter.comparison.systems import ComparisonPlan, compare_systems
from ragmeter.comparison.verdicts import Rule, Verdicts
from ragmeter.errors import InputError
from ragmeter.inputs.config import Config, load_config
from ragmeter.inputs.corpus import Document, load_corpus
from ragmeter.inputs.testset import Question, TestSet, load_testset
from ragmeter.questions.audit import audit_questions, read_audit
from ragmeter.scoring.metrics import find_metric

__all__ = [
    "UNFIT_FLAGS",
    "unfit_ids",
    "SetComparison",
    "SystemComparison",
    "compare_files",
    "compare_testsets",
    "pair_by_answer",
]

# Flags that make a question unfit to test anything; "copies" is a property of the
# wording (it inflates a score) and "unscored" is a failed check, so neither drops it.
UNFIT_FLAGS = frozenset(
    {"yes-no-restatement", "context-dependent", "swapped-word", "misstated", "near-duplicate"}
)


def _key(q: Question) -> tuple[tuple[str, int, int], ...]:
    return tuple(sorted((a.doc, a.start, a.end) for a in q.answers))


def pair_by_answer(a: Sequence[Question], b: Sequence[Question]) -> list[tuple[int, int]]:
    """``(index in a, index in b)`` for questions with the same answer key.

    When a key occurs more than once in a set, its first question is used.
    """
    first_a: dict[tuple, int] = {}
    for i, q in enumerate(a):
        first_a.setdefault(_key(q), i)
    pairs, used = [], set()
    for j, q in enumerate(b):
        k = _key(q)
        if k in first_a and k not in used:
            used.add(k)
            pairs.append((first_a[k], j))
    return pairs


@dataclass(frozen=True)
class SystemComparison:
    """One system: A's and B's score on the paired questions, their difference, B cleaned.

    ``diff`` is A - B, a row of the comparison table (:class:`ragmeter.comparison.verdicts.Row`:
    its difference, verdict and p under the run's rule). ``b_clean`` is B's score on its
    paired questions without the dropped ones, ``clean_diff`` A - B on the pairs that
    remain; both ``None`` when nothing was dropped or nothing remains.
    """

    system: str
    a: Any
    b: Any
    diff: Any
    b_clean: Any = None
    clean_diff: Any = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "system": self.system,
            "a": self.a.to_dict(),
            "b": self.b.to_dict(),
            "diff": self.diff.to_dict(),
            "b_clean": self.b_clean.to_dict() if self.b_clean is not None else None,
            "clean_diff": self.clean_diff.to_dict() if self.clean_diff is not None else None,
        }


@dataclass(frozen=True)
class SetComparison:
    """Every system's comparison, and how the questions paired up; ``rule`` is the rule
    the differences were decided under (:class:`ragmeter.comparison.verdicts.Rule`)."""

    metric: str
    names: tuple[str, str]
    systems: list[SystemComparison]
    pairs: int
    unpaired_a: int
    unpaired_b: int
    dropped: list[str]
    seed: int
    rounds: int
    rule: Rule | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "names": list(self.names),
            "pairs": self.pairs,
            "unpaired": {self.names[0]: self.unpaired_a, self.names[1]: self.unpaired_b},
            "dropped": list(self.dropped),
            "seed": self.seed,
            "rounds": self.rounds,
            "rule": self.rule.to_dict() if self.rule is not None else None,
            "systems": [s.to_dict() for s in self.systems],
        }


def compare_testsets(
    config: Config,
    testset_a: TestSet,
    testset_b: TestSet,
    documents: Sequence[Document] | None = None,
    *,
    metric: str | None = None,
    drop: Collection[str] = (),
    names: tuple[str, str] = ("reader", "generated"),
) -> SetComparison:
    """Run the configured search on both sets and compare the paired per-question scores.

    ``drop`` holds ids of B's questions to leave out of the cleaned score (e.g.
    the flagged ones, see :func:`unfit_ids`). ``metric`` defaults to the
    config's; seed and rounds come from the config.
    """
    from ragmeter.runs.pipeline import run_search

    config = config.validate()
    metric = metric or config.metric
    if documents is None:
        documents = load_corpus(config.corpus, config.corpus_format)
    pairs = pair_by_answer(testset_a.questions, testset_b.questions)
    if not pairs:
        raise InputError(
            "the two test sets share no answer passage; pair questions by identical "
            "answer spans (doc, start, end)"
        )
    ia = [i for i, _ in pairs]
    ib = [j for _, j in pairs]
    sub_a = TestSet([testset_a.questions[i] for i in ia], source=testset_a.source)
    sub_b = TestSet([testset_b.questions[j] for j in ib], source=testset_b.source)
    run_a = run_search(config, documents, sub_a)
    run_b = run_search(config, documents, sub_b)
    metric = find_metric(metric, run_a.metric_names)  # P_5 or precision@5, as the run names it
    drop = set(drop)
    keep = np.array([q.id not in drop for q in sub_b.questions], dtype=bool)
    dropped = [q.id for q in sub_b.questions if q.id in drop]
    seed, rounds, conf = config.seed, config.rounds, config.confidence
    systems = [sa.name for sa in run_a.systems]
    a = np.stack([np.asarray(s.scores[metric], dtype=float) for s in run_a.systems])
    b = np.stack([np.asarray(s.scores[metric], dtype=float) for s in run_b.systems])
    plan = replace(run_a.comparison_plan, metric=metric)  # the paired questions' clusters
    table = _differences(a, b, systems, names, plan)
    clean = None
    if dropped and keep.any():
        clean = _differences(a[:, keep], b[:, keep], systems, names, plan, keep)
    out = []
    for i, system in enumerate(systems):
        out.append(
            SystemComparison(
                system,
                stats.bootstrap(a[i], rounds=rounds, seed=seed, confidence=conf),
                stats.bootstrap(b[i], rounds=rounds, seed=seed, confidence=conf),
                table.rows[i],
                None
                if clean is None
                else stats.bootstrap(b[i, keep], rounds=rounds, seed=seed, confidence=conf),
                None if clean is None else clean.rows[i],
            )
        )
    return SetComparison(
        metric,
        names,
        out,
        len(pairs),
        len(testset_a) - len(pairs),
        len(testset_b) - len(pairs),
        dropped,
        seed,
        rounds,
        table.rule,
    )


def _differences(
    a: np.ndarray,
    b: np.ndarray,
    systems: Sequence[str],
    names: tuple[str, str],
    plan: ComparisonPlan,
    keep: np.ndarray | None = None,
) -> Verdicts:
    """A - B for every system (rows of ``a`` and ``b``), one family under ``plan``'s rule;
    the rows in ``systems`` order, each pair named ``"reader (bm25)"`` and
    ``"generated (bm25)"`` (``"generated, unflagged (bm25)"`` with ``keep``)."""
    b_name = names[1] if keep is None else f"{names[1]}, unflagged"
    rows = [n for s in systems for n in (f"{names[0]} ({s})", f"{b_name} ({s})")]
    matrix = np.stack([x for pair in zip(a, b, strict=True) for x in pair])
    clusters = plan.clusters
    if clusters is not None and keep is not None:
        clusters = tuple(c for c, k in zip(clusters, keep, strict=True) if k)
    plan = replace(plan, clusters=clusters).choose(
        pairs=list(zip(rows[::2], rows[1::2], strict=True))
    )
    # the two sets are never folded as "identical" systems, however alike they score
    return compare_systems({plan.metric: matrix}, rows, plan, fold_identical=False)


def unfit_ids(flagged: Sequence[Any], kinds: Collection[str] = UNFIT_FLAGS) -> list[str]:
    """Ids of audited questions (:class:`~.audit.Flagged`) with a flag in ``kinds``."""
    return [f.id for f in flagged if f.kinds & set(kinds)]


def compare_files(
    testset_a: str | Path,
    testset_b: str | Path,
    corpus_path: str | Path | None = None,
    config_path: str | Path | None = None,
    audit_path: str | Path | None = None,
    *,
    metric: str | None = None,
    strategies: Sequence[str] | None = None,
    retrievers: Sequence[str] | None = None,
    seed: int | None = None,
    rounds: int | None = None,
) -> SetComparison:
    """Load two test sets and compare them over the same passages.

    The body of ``ragmeter questions compare A B`` (which prints
    :func:`ragmeter.cli.question_views.compare_table`).

    Flagged questions of B come from ``audit_path`` (an audit JSONL written by
    :func:`~ragmeter.questions.audit.write_audit`); without it the rule-based audit
    runs on B. Questions with a flag in :data:`UNFIT_FLAGS` are dropped from the
    cleaned score.
    """

    cfg = load_config(config_path) if config_path is not None else Config()
    cfg = cfg.with_overrides(
        corpus=str(corpus_path) if corpus_path is not None else None,
        strategies=tuple(strategies) if strategies else None,
        retrievers=tuple(retrievers) if retrievers else None,
        metric=metric,
        seed=seed,
        rounds=rounds,
    )
    if not cfg.corpus:
        raise InputError("no corpus given; pass the corpus path or a config naming it")
    documents = load_corpus(cfg.corpus, cfg.corpus_format)
    a = load_testset(testset_a, documents)
    b = load_testset(testset_b, documents)
    if audit_path is not None:
        drop = unfit_ids(read_audit(audit_path))
    else:
        drop = unfit_ids(audit_questions(b, documents))
    return compare_testsets(cfg, a, b, documents, drop=drop)

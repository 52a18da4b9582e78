"""Score two test sets over the same passages and compare them question by question.

Typically reader-written questions (A) against model-written ones (B) made from
the same answer passages. Questions are paired by their answer key: the set of
``(doc, start, end)`` spans. Per system (strategy x retriever) the comparison
gives each set's score, the paired interval of the difference A - B
(:func:`ragmeter.stats.paired` on the paired per-question scores), and B's score
with its flagged questions removed.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ragmeter import stats
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

    ``diff`` is A - B (a :class:`ragmeter.stats.Comparison`). ``b_clean`` is B's score
    on its paired questions without the dropped ones, ``clean_diff`` A - B on the
    pairs that remain; both ``None`` when nothing was dropped or nothing remains.
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
    """Every system's comparison, and how the questions paired up."""

    metric: str
    names: tuple[str, str]
    systems: list[SystemComparison]
    pairs: int
    unpaired_a: int
    unpaired_b: int
    dropped: list[str]
    seed: int
    rounds: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "names": list(self.names),
            "pairs": self.pairs,
            "unpaired": {self.names[0]: self.unpaired_a, self.names[1]: self.unpaired_b},
            "dropped": list(self.dropped),
            "seed": self.seed,
            "rounds": self.rounds,
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
    out = []
    for sa, sb in zip(run_a.systems, run_b.systems, strict=True):
        a = np.asarray(sa.scores[metric], dtype=float)
        b = np.asarray(sb.scores[metric], dtype=float)
        diff = stats.paired(a, b, rounds=rounds, seed=seed, names=names, confidence=conf)
        b_clean = clean_diff = None
        if dropped and keep.any():
            b_clean = stats.bootstrap(b[keep], rounds=rounds, seed=seed, confidence=conf)
            clean_diff = stats.paired(
                a[keep],
                b[keep],
                rounds=rounds,
                seed=seed,
                names=(names[0], f"{names[1]} (unflagged)"),
                confidence=conf,
            )
        out.append(
            SystemComparison(
                sa.name,
                stats.bootstrap(a, rounds=rounds, seed=seed, confidence=conf),
                stats.bootstrap(b, rounds=rounds, seed=seed, confidence=conf),
                diff,
                b_clean,
                clean_diff,
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
    )


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

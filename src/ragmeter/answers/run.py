"""Run the reader over a results directory, then the judges over its answers.

Every model call goes through :class:`ragmeter.llm.Runner` and the reply cache
(``<results>/answers/cache.sqlite`` unless told otherwise), so a rerun costs
no calls and a run stopped at any point resumes with nothing lost or repeated.
The answers and grades files are written once a run (or a judge) finishes; a
stopped run leaves its replies in the cache and the files as they were.
"""

from __future__ import annotations

import contextlib
import shutil
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragmeter.answers.prompts import GRADES, judge_request, reader_request
from ragmeter.answers.rerun_store import (
    AnswerRerun,
    GradeRerun,
    answer_reruns,
    reruns_to_grade,
    save_answer_reruns,
    save_grade_reruns,
)
from ragmeter.answers.reruns import Reruns, rerun_seed, rerun_settings
from ragmeter.answers.store import (
    UNSCORED,
    Answer,
    Grade,
    Key,
    answers_dir,
    load_answer_set,
    read_answers,
    read_grades,
    read_meta,
    reference_text,
    update_meta,
    write_answers,
    write_grades,
    write_merged,
)
from ragmeter.defaults import DEFAULTS
from ragmeter.errors import InputError
from ragmeter.files.outputs import results_lock
from ragmeter.inputs.config import answers_judge
from ragmeter.llm import (
    Backend,
    CallSettings,
    ChatReply,
    ReplyCache,
    RunStats,
    call_settings,
    model_label,
    open_backend,
    parse_options,
)
from ragmeter.runs.results import Results, as_results
from ragmeter.scoring.metrics import check_k

__all__ = [
    "GradeRun",
    "JudgeRun",
    "ReaderRun",
    "answer_questions",
    "backend_label",
    "declined",
    "grade_answers",
    "grade_from_reply",
    "judge_settings",
    "parse_options",
    "question_map",
    "reference_text",
    "runner_progress",
    "shared_cache",
    "top_passages",
]

Progress = Callable[[str, int, int], None]
"""``progress(label, done, total)``, called in the calling thread after each reply."""

DEFAULT_K = DEFAULTS.reader_k  # the top k passages a reader answers from
DEFAULT_TIMEOUT_S = 120.0
DEFAULT_MAX_TOKENS = 256


backend_label = model_label  # the name this module has always used


def _settings(model: str | Backend | CallSettings, call: dict[str, Any]) -> CallSettings:
    settings = call_settings(model, **call)
    if settings.max_tokens is None:
        settings = settings.replace(max_tokens=DEFAULT_MAX_TOKENS)
    return settings


def _with_cache(settings: CallSettings, results: Results) -> CallSettings:
    if settings.cache is not None:
        return settings
    return settings.replace(cache=answers_dir(results) / "cache.sqlite")


def _systems(results: Results, systems: str | Sequence[str] | None) -> list[str]:
    if systems is None:
        return results.systems
    names = [s.strip() for s in systems.split(",")] if isinstance(systems, str) else list(systems)
    names = [s for s in names if s]
    unknown = [s for s in names if s not in results.systems]
    if unknown:
        raise InputError(
            f"unknown system {unknown[0]!r} in {results.path}; choose from "
            f"{', '.join(results.systems)}"
        )
    return names or results.systems


def _questions(results: Results, limit: int | None) -> list[str]:
    qids = results.question_ids
    if limit is None:
        return qids
    if limit < 1:
        raise InputError("--limit must be at least 1")
    return qids[:limit]


def top_passages(results: Results, system: str, question: str, k: int) -> list[str]:
    """The text of the top ``k`` items, best first: what the reader is given."""
    return [item.text for item in results.runs[system][question][:k]]


def question_map(results: Results) -> dict[str, Any]:
    """The results' questions by id."""
    return {q.id: q for q in results.questions}


def _stats_dict(stats: RunStats, seconds: float) -> dict[str, Any]:
    return {
        "calls": stats.calls,
        "cache_hits": stats.cache_hits,
        "answered": stats.answered,
        "errors": stats.errors,
        "retries": stats.retries,
        "tokens_in": stats.tokens_in,
        "tokens_out": stats.tokens_out,
        "seconds": round(seconds, 3),
    }


def runner_progress(
    progress: Progress | None, label: str
) -> Callable[[int, int, ChatReply], None] | None:
    """The runner's per-reply callback that reports ``label``'s progress to ``progress``."""
    if progress is None:
        return None
    if getattr(progress, "wants_reply", False):  # e.g. a bar that counts cached replies
        return lambda done, total, reply: progress(label, done, total, reply)  # type: ignore[call-arg]
    return lambda done, total, reply: progress(label, done, total)


@contextlib.contextmanager
def _no_empty_folder(folder: Path) -> Iterator[None]:
    """On failure, remove ``folder`` if this run made it and nothing was saved in it."""
    existed = folder.exists()
    try:
        yield
    except BaseException:
        if not existed and folder.is_dir() and not _has_replies(folder):
            shutil.rmtree(folder, ignore_errors=True)
        raise


def _has_replies(folder: Path) -> bool:
    """Whether the folder holds anything worth keeping (a file other than an empty cache)."""
    for entry in folder.iterdir():
        if entry.name.startswith("cache.sqlite"):
            if entry.name == "cache.sqlite":
                try:
                    with ReplyCache(entry) as cache:
                        if len(cache):
                            return True
                except Exception:  # noqa: BLE001 - unreadable: keep it, let a person decide
                    return True
            continue
        return True
    return False


# --- the reader ---------------------------------------------------------------------------


def declined(answer: str) -> bool:
    """Whether the answer is the reader's "not in the context" (and nothing more)."""
    words = "".join(c if c.isalnum() else " " for c in answer.lower()).split()
    return words[:4] == ["not", "in", "the", "context"] and len(words) <= 8


@dataclass(frozen=True)
class ReaderRun:
    """What :func:`answer_questions` did. ``answers`` are this run's, in results order;
    ``stats.calls`` counts calls sent (0 on a fully cached rerun)."""

    reader: str
    k: int
    answers: list[Answer]
    stats: RunStats
    seconds: float
    folder: Path
    replaced: int = 0
    reruns: list[AnswerRerun] = field(default_factory=list)
    settings: Reruns = field(default_factory=Reruns)

    @property
    def errors(self) -> int:
        return sum(1 for a in self.answers if not a.ok)

    @property
    def rerun_errors(self) -> int:
        """Reruns 1..K-1 without an answer."""
        return sum(1 for a in self.reruns if not a.ok)

    @property
    def declined(self) -> int:
        """Answers that said the passages do not hold the answer."""
        return sum(1 for a in self.answers if declined(a.answer))


def answer_questions(
    results: Results | str | Path,
    reader: str | Backend | CallSettings,
    *,
    k: int = DEFAULT_K,
    systems: str | Sequence[str] | None = None,
    limit: int | None = None,
    progress: Progress | None = None,
    reruns: Reruns | None = None,
    **call: Any,
) -> ReaderRun:
    """Answer every question of every system from its top ``k`` items.

    ``reader`` is a model spec (``ollama:llama3.2``, ``openai:NAME``,
    ``gguf:PATH``), a backend, or :class:`ragmeter.llm.CallSettings`; ``call``
    sets or overrides its fields (``options``, ``cache``, ``concurrency``,
    ``timeout_s``, ``max_tokens`` (default 256), ``retries``). The reply cache
    defaults to ``answers/cache.sqlite``. ``systems`` and ``limit`` (the first
    N questions) narrow the run. ``reruns`` (default: ``[answers]`` of the run's
    ``config.toml``, else none) asks the reader K times per question when it is rerun
    (:mod:`ragmeter.answers.reruns`); reruns 1..K-1 go to ``answers/reader_reruns.jsonl``.
    Answers are saved to ``answers/reader.jsonl``, merged with earlier answers
    of the same reader and k (answers of another reader or k are replaced), and
    ``answers/answers.jsonl`` is rewritten. Raises
    :class:`ragmeter.errors.ServerUnavailable` when the server goes away; the
    replies had by then are in the cache, so a rerun resumes.
    """
    res = as_results(results)
    k = check_k(k, depth=res.meta.depth, what="--k")
    reruns = reruns if reruns is not None else rerun_settings(res)
    settings = _with_cache(_settings(reader, call), res)
    max_tokens = settings.tokens(DEFAULT_MAX_TOKENS)
    label = settings.label
    wanted = _systems(res, systems)
    qids = _questions(res, limit)
    questions = question_map(res)
    keys: list[Key] = [(s, q) for s in wanted for q in qids]
    base = [
        reader_request(questions[q].text, top_passages(res, s, q, k), max_tokens) for s, q in keys
    ]
    count = reruns.count("reader")
    requests = [reruns.request("reader", req, r) for r in range(count) for req in base]
    folder = answers_dir(res)
    started = time.perf_counter()
    with _no_empty_folder(folder), open_backend(settings) as calls:
        runner = calls.runner(runner_progress(progress, "answer"))
        replies = runner.run(requests)
    seconds = time.perf_counter() - started
    made = [_answer(key, reply, label, k) for key, reply in zip(keys * count, replies, strict=True)]
    new, again = made[: len(keys)], answer_reruns(made[len(keys) :], len(keys), reruns)
    replaced = _save_answers(res, label, k, new, max_tokens, _stats_dict(runner.stats, seconds))
    save_answer_reruns(res, (label, k), again, reruns)
    return ReaderRun(label, k, new, runner.stats, seconds, folder, replaced, again, reruns)


def _answer(key: Key, r: ChatReply, label: str, k: int) -> Answer:
    """The reader's answer to ``key`` from its reply ``r``."""
    return Answer(
        system=key[0],
        question=key[1],
        answer=(r.text or "").strip() if r.ok else "",
        reader=label,
        k=k,
        error=r.error,
        tokens_in=r.tokens_in,
        tokens_out=r.tokens_out,
        latency_s=r.latency_s,
        cached=r.cached,
    )


def _save_answers(
    res: Results, label: str, k: int, new: list[Answer], max_tokens: int, run_stats: dict
) -> int:
    """Merge ``new`` (reader ``label`` at ``k``) into the saved answers and rewrite them, with
    the reader in ``meta.json``; returns how many answers of another reader or k were replaced."""
    folder = answers_dir(res)
    with results_lock(res.path):  # read, merge and rewrite as one step: no answer is lost
        old = read_answers(folder)
        kept = {key: a for key, a in old.items() if a.reader == label and a.k == k}
        replaced = len(old) - len(kept)
        kept.update({a.key: a for a in new})
        order = {s: i for i, s in enumerate(res.systems)}
        qorder = {q: i for i, q in enumerate(res.question_ids)}
        write_answers(
            folder,
            sorted(
                kept.values(), key=lambda a: (order.get(a.system, 0), qorder.get(a.question, 0))
            ),
        )
        meta = read_meta(folder)
        update_meta(
            folder,
            reader=label,
            k=k,
            judges=meta.get("judges") or [],
            reader_max_tokens=max_tokens,
            reader_run=run_stats,
        )
        write_merged(res)
    return replaced


# --- the judges ---------------------------------------------------------------------------


@dataclass(frozen=True)
class JudgeRun:
    """One judge's part of a :class:`GradeRun`."""

    judge: str
    grades: list[Grade]
    stats: RunStats
    seconds: float
    reruns: list[GradeRerun] = field(default_factory=list)

    @property
    def counts(self) -> dict[str, int]:
        out = dict.fromkeys((*GRADES, UNSCORED), 0)
        for g in self.grades:
            out[g.grade] += 1
        return out

    @property
    def unscored(self) -> list[Grade]:
        return [g for g in self.grades if g.grade == UNSCORED]


@dataclass(frozen=True)
class GradeRun:
    """What :func:`grade_answers` did, one :class:`JudgeRun` per judge in order."""

    judges: list[JudgeRun] = field(default_factory=list)
    folder: Path | None = None
    settings: Reruns = field(default_factory=Reruns)


def grade_from_reply(judge: str, answer: Answer, reply: ChatReply) -> Grade:
    """``judge``'s grade of ``answer`` read from its reply (unscored when unreadable)."""
    parsed = reply.parsed if reply.ok else None
    grade = parsed.get("grade") if isinstance(parsed, dict) else None
    cost = (reply.tokens_in, reply.tokens_out, reply.latency_s, reply.cached)
    if grade not in GRADES:
        error = reply.error or f"unparseable: grade {grade!r}"
        return Grade(
            judge, answer.system, answer.question, UNSCORED, "", reply.text, error, answer.sha,
            *cost,
        )  # fmt: skip
    reason = " ".join(str(parsed.get("reason") or "").split())
    return Grade(
        judge, answer.system, answer.question, grade, reason, reply.text, None, answer.sha, *cost
    )


def _check_accuracy_judge(res: Results, labels: list[str], accuracy_judge: str | None) -> None:
    """The judge that will give accuracy (``accuracy_judge``, else ``[answers] judge`` in
    the run's config.toml) must grade now or have graded before: checked before any call."""
    config = res.path / "config.toml"
    name = accuracy_judge or answers_judge(config)
    if not name:
        return
    earlier = [j for j in read_meta(answers_dir(res)).get("judges") or [] if j not in labels]
    if name in labels or name in earlier:
        return
    known = f"this run grades with {', '.join(labels)}" + (
        f"; earlier runs graded with {', '.join(earlier)}" if earlier else ""
    )
    if accuracy_judge:
        raise InputError(
            f"--accuracy-judge {name!r} is not a judge here: {known}; name one of those"
        )
    raise InputError(
        f"{config}: [answers] judge {name!r} is not a judge here: {known}; grade with it "
        "too (--judge), or choose one of those with --accuracy-judge"
    )


def grade_answers(
    results: Results | str | Path,
    judges: str | Backend | CallSettings | Sequence[str | Backend | CallSettings],
    *,
    accuracy_judge: str | None = None,
    systems: str | Sequence[str] | None = None,
    limit: int | None = None,
    progress: Progress | None = None,
    reruns: Reruns | None = None,
    **call: Any,
) -> GradeRun:
    """Have each judge grade every saved answer against its answer key.

    Each judge is a model spec, a backend or :class:`ragmeter.llm.CallSettings`;
    ``call`` sets or overrides the fields of each (as for :func:`answer_questions`).
    The judge sees the question, the answer and the reference passage, and
    replies ``{"grade": "correct"|"partial"|"wrong", "reason": "..."}`` as
    structured output. A reply that cannot be read is saved as ``unscored``
    with its raw text and error; so is an answer the reader never produced.
    Each judge's grades are saved (``answers/grades.jsonl``) as soon as that
    judge finishes. ``meta.json`` lists this run's judges first, in the order
    given (once each has finished), then judges graded earlier: the first is
    the one accuracy uses, unless ``accuracy_judge`` names another: one of these
    judges or one graded before (checked before any model call, as is ``[answers]
    judge`` of the run's ``config.toml`` when no ``accuracy_judge`` is given),
    recorded as ``accuracy_judge`` in ``meta.json`` once every judge has finished.

    ``reruns`` (default: ``[answers]`` of the run's ``config.toml``, else what the
    answer step recorded, else none) grades K reruns per answer: the reader's reruns
    (``reruns_of`` reader or both; each graded once unless the judge is rerun too,
    rerun r by rerun r) or the judge's own (judge: rerun 0's answer K times). Reruns
    1..K-1 go to ``answers/grade_reruns.jsonl``; a reader rerun not made yet is an
    error before any call.
    """
    res = as_results(results)
    settings = judge_settings(res, judges, call)
    labels = [s.label for s in settings]
    folder = answers_dir(res)
    _check_accuracy_judge(res, labels, accuracy_judge)
    if reruns is None:
        reruns = rerun_settings(res, recorded=read_meta(folder).get("answer_reruns"))
    todo = _answers_to_grade(res, systems, limit)
    later = reruns_to_grade(res, todo, reruns)
    questions = question_map(res)
    refs = {q: reference_text(res, q) for q in {a.question for a in todo}}
    prompts = [
        (r, questions[a.question].text, refs[a.question], a)
        for r, batch in enumerate([todo, *later])
        for a in batch
        if a.ok
    ]
    done: list[str] = []  # this run's judges that finished, in the order given
    out = GradeRun(folder=folder, settings=reruns)
    with contextlib.ExitStack() as stack:
        opened: dict[Any, ReplyCache] = {}  # one connection per cache file for all judges
        for judge, label in zip(settings, labels, strict=True):
            judge = shared_cache(judge, opened, stack)
            run = _run_judge(judge, label, prompts, [todo, *later], reruns, progress)
            done.append(label)
            tokens = judge.tokens(DEFAULT_MAX_TOKENS)
            _save_grades(res, run.grades, done, _stats_dict(run.stats, run.seconds), tokens)
            save_grade_reruns(res, label, run.reruns, reruns)
            out.judges.append(run)
    if accuracy_judge is not None:
        update_meta(folder, accuracy_judge=accuracy_judge)
    update_meta(folder, grade_reruns=reruns.to_meta() if reruns.active else None)
    return out


def _run_judge(
    judge: CallSettings,
    label: str,
    prompts: list[tuple[int, str, str, Answer]],
    batches: list[list[Answer]],
    reruns: Reruns,
    progress: Progress | None,
) -> JudgeRun:
    """Send one judge every prompt (rerun, question, reference, answer) in one run; its
    grades of ``batches`` (rerun 0's answers, then each later rerun's)."""
    max_tokens = judge.tokens(DEFAULT_MAX_TOKENS)
    requests = [
        reruns.request("judge", judge_request(q, ref, a.answer, max_tokens), r)
        for r, q, ref, a in prompts
    ]
    started = time.perf_counter()
    with open_backend(judge) as calls:
        runner = calls.runner(runner_progress(progress, label))
        replies = runner.run(requests) if requests else []
    seconds = time.perf_counter() - started
    by_rerun: list[tuple[list[Answer], list[ChatReply]]] = [([], []) for _ in batches]
    for (r, _, _, a), reply in zip(prompts, replies, strict=True):
        by_rerun[r][0].append(a)
        by_rerun[r][1].append(reply)
    grades = _grades(label, batches[0], *by_rerun[0])
    again = [
        GradeRerun(
            **{f: getattr(g, f) for f in Grade.__dataclass_fields__},
            rerun=r,
            seed=rerun_seed(reruns.seed, r) if reruns.reruns("judge") else 0,
        )
        for r in range(1, len(batches))
        for g in _grades(label, batches[r], *by_rerun[r])
    ]
    return JudgeRun(label, grades, runner.stats, seconds, again)


def judge_settings(
    res: Results,
    judges: str | Backend | CallSettings | Sequence[str | Backend | CallSettings],
    call: dict[str, Any],
) -> list[CallSettings]:
    """Each judge's settings (``call`` applied, the run's reply cache by default); at least
    one judge, none given twice."""
    judge_list = (
        [judges]
        if isinstance(judges, str | bytes) or not isinstance(judges, Sequence)
        else list(judges)
    )
    if not judge_list:
        raise InputError("give at least one judge, e.g. --judge ollama:gpt-oss:20b")
    settings = [_with_cache(_settings(j, call), res) for j in judge_list]
    labels = [s.label for s in settings]
    if len(set(labels)) != len(labels):
        raise InputError(f"a judge is given twice: {labels}")
    return settings


def _answers_to_grade(
    res: Results, systems: str | Sequence[str] | None, limit: int | None
) -> list[Answer]:
    """The saved answers of ``systems`` to the first ``limit`` questions, in the answer
    set's order; none saved, or none of these, is an error."""
    folder = answers_dir(res)
    if not read_answers(folder):
        raise InputError(
            f"{folder / 'reader.jsonl'}: no answers yet; run `ragmeter answer {res.path} "
            "--reader SPEC` first"
        )
    aset = load_answer_set(res)  # checks the answers belong to these results
    wanted = _systems(res, systems)
    qids = set(_questions(res, limit))
    todo = [aset.answers[key] for key in aset.ordered_keys(wanted) if key[1] in qids]
    if not todo:
        raise InputError("no saved answers match these systems and questions")
    return todo


def shared_cache(
    judge: CallSettings, opened: dict[Any, ReplyCache], stack: contextlib.ExitStack
) -> CallSettings:
    """``judge`` with its reply cache file opened once for all judges that share it."""
    cache = judge.cache
    if isinstance(cache, ReplyCache):
        return judge
    key = str(Path(cache))  # type: ignore[arg-type]
    if key not in opened:
        opened[key] = stack.enter_context(ReplyCache(key))
    return judge.replace(cache=opened[key])


def _grades(
    label: str, todo: list[Answer], asked: list[Answer], replies: list[ChatReply]
) -> list[Grade]:
    """One grade per answer of ``todo``: read from the judge's reply to it, or ``unscored``
    for an answer the reader never produced (it was not asked)."""
    by_key = {a.key: grade_from_reply(label, a, r) for a, r in zip(asked, replies, strict=True)}
    return [
        by_key.get(a.key)
        or Grade(label, a.system, a.question, UNSCORED, "", "", f"no answer: {a.error}", a.sha)
        for a in todo
    ]


def _save_grades(
    res: Results, grades: list[Grade], done: list[str], run_stats: dict, max_tokens: int
) -> None:
    """Merge one judge's grades (the last of ``done``) with what other runs saved meanwhile,
    and list this run's finished judges first in ``meta.json``."""
    folder = answers_dir(res)
    label = done[-1]
    with results_lock(res.path):
        saved = read_grades(folder)
        saved.update({(g.judge, g.system, g.question): g for g in grades})
        write_grades(folder, saved.values())
        runs = dict(read_meta(folder).get("judge_runs") or {})
        runs[label] = run_stats
        earlier = [j for j in read_meta(folder).get("judges") or [] if j not in done]
        update_meta(folder, judges=done + earlier, judge_runs=runs, judge_max_tokens=max_tokens)
        write_merged(res)

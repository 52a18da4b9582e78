"""Run the reader over a results directory, then the judges over its answers.

Every model call goes through :class:`ragmeter.llm.Runner` and the reply cache
(``<results>/answers/cache.sqlite`` unless told otherwise), so a rerun costs
no calls and a run stopped at any point resumes with nothing lost or repeated.
The answers and grades files are written once a run (or a judge) finishes; a
stopped run leaves its replies in the cache and the files as they were.
"""

from __future__ import annotations

import contextlib
import math
import shutil
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragmeter.answers.prompts import GRADES, judge_request, reader_request
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
    update_meta,
    write_answers,
    write_grades,
    write_merged,
)
from ragmeter.errors import InputError
from ragmeter.llm import (
    Backend,
    ChatReply,
    ReplyCache,
    Runner,
    RunStats,
    make_backend,
    parse_options,
)
from ragmeter.outputs import results_lock
from ragmeter.results import Results

__all__ = [
    "GradeRun",
    "JudgeRun",
    "ReaderRun",
    "answer_questions",
    "backend_label",
    "declined",
    "grade_answers",
    "parse_options",
    "reference_text",
    "top_passages",
]

Progress = Callable[[str, int, int], None]
"""``progress(label, done, total)``, called in the calling thread after each reply."""

DEFAULT_K = 5
DEFAULT_TIMEOUT_S = 120.0


def backend_label(model: str | Backend) -> str:
    """The name answers and grades are saved under: the spec, or ``kind:model``.

    A ``gguf:PATH`` spec is named by the file alone (``gguf:model.gguf``), as the
    reply cache does: the same file in another folder is the same model.
    """
    if isinstance(model, str):
        kind, sep, rest = model.strip().partition(":")
        if sep and kind.strip().lower() == "gguf" and rest.strip():
            return f"gguf:{Path(rest.strip()).name}"
        return model.strip()
    return f"{model.kind}:{model.model}"


@contextlib.contextmanager
def _backend(model: str | Backend, options: dict[str, Any]) -> Iterator[Backend]:
    if not isinstance(model, str):
        yield model  # the caller's backend: the caller closes it
        return
    backend = make_backend(model, **options)
    try:
        yield backend
    finally:
        backend.close()


@contextlib.contextmanager
def _cache(results: Results, cache: ReplyCache | str | Path | None) -> Iterator[ReplyCache]:
    if isinstance(cache, ReplyCache):
        yield cache
        return
    path = Path(cache) if cache is not None else answers_dir(results) / "cache.sqlite"
    with ReplyCache(path) as opened:
        yield opened


def _results(results: Results | str | Path) -> Results:
    return results if isinstance(results, Results) else Results(results)


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


def reference_text(results: Results, question: str) -> str:
    """The answer key: the text of the question's answer span(s), one per line."""
    q = _question_map(results)[question]
    return "\n".join(span.text for span in q.answers)


def _question_map(results: Results) -> dict[str, Any]:
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


def _runner_progress(
    progress: Progress | None, label: str
) -> Callable[[int, int, ChatReply], None] | None:
    if progress is None:
        return None
    if getattr(progress, "wants_reply", False):  # e.g. a bar that counts cached replies
        return lambda done, total, reply: progress(label, done, total, reply)  # type: ignore[call-arg]
    return lambda done, total, reply: progress(label, done, total)


def check_call_settings(*, concurrency: int, max_tokens: int, timeout_s: float) -> None:
    """One-line errors for model-call settings that cannot work."""
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise InputError(f"--concurrency must be a whole number of at least 1, got {concurrency}")
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        raise InputError(f"--max-tokens must be a whole number of at least 1, got {max_tokens}")
    if not (isinstance(timeout_s, int | float) and math.isfinite(timeout_s) and timeout_s > 0):
        raise InputError(f"--timeout must be a positive number of seconds, got {timeout_s}")


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

    @property
    def errors(self) -> int:
        return sum(1 for a in self.answers if not a.ok)

    @property
    def declined(self) -> int:
        """Answers that said the passages do not hold the answer."""
        return sum(1 for a in self.answers if declined(a.answer))


def answer_questions(
    results: Results | str | Path,
    reader: str | Backend,
    *,
    k: int = DEFAULT_K,
    systems: str | Sequence[str] | None = None,
    limit: int | None = None,
    concurrency: int = 4,
    cache: ReplyCache | str | Path | None = None,
    max_tokens: int = 256,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    retries: int = 3,
    options: Sequence[str] | dict[str, Any] | None = None,
    progress: Progress | None = None,
) -> ReaderRun:
    """Answer every question of every system from its top ``k`` items.

    ``reader`` is a model spec (``ollama:llama3.2``, ``openai:NAME``,
    ``gguf:PATH``; ``options`` go to :func:`ragmeter.llm.make_backend`) or a
    backend. ``systems`` and ``limit`` (the first N questions) narrow the run.
    Answers are saved to ``answers/reader.jsonl``, merged with earlier answers
    of the same reader and k (answers of another reader or k are replaced), and
    ``answers/answers.jsonl`` is rewritten. Raises
    :class:`ragmeter.llm.BackendUnavailable` when the server goes away; the
    replies had by then are in the cache, so a rerun resumes.
    """
    res = _results(results)
    if k < 1:
        raise InputError("--k must be at least 1")
    depth = res.meta.get("depth")
    if isinstance(depth, int) and not isinstance(depth, bool) and k > depth:
        raise InputError(
            f"--k {k}: {res.path} was ranked to depth {depth}, so the reader can get at most "
            f"{depth} items; give --k {depth} or less, or search again with a larger depth"
        )
    check_call_settings(concurrency=concurrency, max_tokens=max_tokens, timeout_s=timeout_s)
    label = backend_label(reader)
    wanted = _systems(res, systems)
    qids = _questions(res, limit)
    questions = _question_map(res)
    keys: list[Key] = [(s, q) for s in wanted for q in qids]
    requests = [
        reader_request(questions[q].text, top_passages(res, s, q, k), max_tokens) for s, q in keys
    ]
    folder = answers_dir(res)
    started = time.perf_counter()
    with _no_empty_folder(folder), _backend(reader, parse_options(options)) as backend:
        with _cache(res, cache) as store:
            runner = Runner(
                backend,
                store,
                concurrency=concurrency,
                timeout_s=timeout_s,
                retries=retries,
                progress=_runner_progress(progress, "answer"),
            )
            replies = runner.run(requests)
    seconds = time.perf_counter() - started
    new = [
        Answer(
            system=s,
            question=q,
            answer=(r.text or "").strip() if r.ok else "",
            reader=label,
            k=k,
            error=r.error,
            tokens_in=r.tokens_in,
            tokens_out=r.tokens_out,
            latency_s=r.latency_s,
            cached=r.cached,
        )
        for (s, q), r in zip(keys, replies, strict=True)
    ]
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
            reader_run=_stats_dict(runner.stats, seconds),
        )
        write_merged(res)
    return ReaderRun(label, k, new, runner.stats, seconds, folder, replaced)


# --- the judges ---------------------------------------------------------------------------


@dataclass(frozen=True)
class JudgeRun:
    """One judge's part of a :class:`GradeRun`."""

    judge: str
    grades: list[Grade]
    stats: RunStats
    seconds: float

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


def _grade_from_reply(judge: str, answer: Answer, reply: ChatReply) -> Grade:
    parsed = reply.parsed if reply.ok else None
    grade = parsed.get("grade") if isinstance(parsed, dict) else None
    if grade not in GRADES:
        error = reply.error or f"unparseable: grade {grade!r}"
        return Grade(
            judge,
            answer.system,
            answer.question,
            UNSCORED,
            "",
            reply.text,
            error,
            answer.sha,
            reply.tokens_in,
            reply.tokens_out,
            reply.latency_s,
            reply.cached,
        )
    reason = " ".join(str(parsed.get("reason") or "").split())
    return Grade(
        judge,
        answer.system,
        answer.question,
        grade,
        reason,
        reply.text,
        None,
        answer.sha,
        reply.tokens_in,
        reply.tokens_out,
        reply.latency_s,
        reply.cached,
    )


def grade_answers(
    results: Results | str | Path,
    judges: str | Backend | Sequence[str | Backend],
    *,
    systems: str | Sequence[str] | None = None,
    limit: int | None = None,
    concurrency: int = 4,
    cache: ReplyCache | str | Path | None = None,
    max_tokens: int = 256,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    retries: int = 3,
    options: Sequence[str] | dict[str, Any] | None = None,
    progress: Progress | None = None,
) -> GradeRun:
    """Have each judge grade every saved answer against its answer key.

    The judge sees the question, the answer and the reference passage, and
    replies ``{"grade": "correct"|"partial"|"wrong", "reason": "..."}`` as
    structured output. A reply that cannot be read is saved as ``unscored``
    with its raw text and error; so is an answer the reader never produced.
    Each judge's grades are saved (``answers/grades.jsonl``) as soon as that
    judge finishes. ``meta.json`` lists this run's judges first, in the order
    given (once each has finished), then judges graded earlier: the first is
    the one accuracy uses.
    """
    res = _results(results)
    check_call_settings(concurrency=concurrency, max_tokens=max_tokens, timeout_s=timeout_s)
    judge_list = (
        [judges]
        if isinstance(judges, str | bytes) or not isinstance(judges, Sequence)
        else list(judges)
    )
    if not judge_list:
        raise InputError("give at least one judge, e.g. --judge ollama:gpt-oss:20b")
    labels = [backend_label(j) for j in judge_list]
    if len(set(labels)) != len(labels):
        raise InputError(f"a judge is given twice: {labels}")
    folder = answers_dir(res)
    answers = read_answers(folder)
    if not answers:
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
    questions = _question_map(res)
    refs = {q: reference_text(res, q) for q in {a.question for a in todo}}
    ask = [a for a in todo if a.ok]
    requests = [
        judge_request(questions[a.question].text, refs[a.question], a.answer, max_tokens)
        for a in ask
    ]
    done: list[str] = []  # this run's judges that finished, in the order given
    out = GradeRun(folder=folder)
    opts = parse_options(options)
    with _cache(res, cache) as store:
        for judge, label in zip(judge_list, labels, strict=True):
            started = time.perf_counter()
            with _backend(judge, opts) as backend:
                runner = Runner(
                    backend,
                    store,
                    concurrency=concurrency,
                    timeout_s=timeout_s,
                    retries=retries,
                    progress=_runner_progress(progress, label),
                )
                replies = runner.run(requests) if requests else []
            seconds = time.perf_counter() - started
            by_key = {
                a.key: _grade_from_reply(label, a, r) for a, r in zip(ask, replies, strict=True)
            }
            grades = [
                by_key.get(a.key)
                or Grade(
                    label, a.system, a.question, UNSCORED, "", "", f"no answer: {a.error}", a.sha
                )
                for a in todo
            ]
            with results_lock(res.path):  # merge with what other runs saved meanwhile
                saved = read_grades(folder)
                saved.update({(g.judge, g.system, g.question): g for g in grades})
                write_grades(folder, saved.values())
                runs = dict(read_meta(folder).get("judge_runs") or {})
                runs[label] = _stats_dict(runner.stats, seconds)
                done.append(label)
                earlier = [j for j in read_meta(folder).get("judges") or [] if j not in done]
                update_meta(
                    folder, judges=done + earlier, judge_runs=runs, judge_max_tokens=max_tokens
                )
                write_merged(res)
            out.judges.append(JudgeRun(label, grades, runner.stats, seconds))
    return out

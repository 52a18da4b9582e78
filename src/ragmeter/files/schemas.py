"""Typed schemas of every file ragmeter reads, one place per file kind.

Each model is strict: a number given as text (``"ten"``), a float or boolean
where a whole number belongs (``10.5``, ``NaN``, ``Infinity``, ``true``), a
missing field or an empty question are errors, never truncated or coerced.
:func:`validate` turns the first problem into an :class:`InputError` that names
the file, the line (or question id) and the field, and says what to do.
Unknown extra fields are kept (a test-set line may carry its own metadata).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ragmeter.errors import InputError

__all__ = [
    "ChromaReference",
    "CorpusLine",
    "QuestionLine",
    "ResultsDocument",
    "ResultsMeta",
    "ResultsQuestion",
    "RunLine",
    "ScoresFile",
    "SquadCorpus",
    "SquadTestSet",
    "describe_error",
    "validate",
    "whole_grade",
]

M = TypeVar("M", bound=BaseModel)

Id = str | int
"""An id may be written as a string or a whole number (it is kept as text)."""


class _Model(BaseModel):
    model_config = ConfigDict(strict=True, extra="allow", frozen=True)


class _Closed(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)


MAX_GRADE = 2**31 - 1


def whole_grade(value: Any, where: str) -> int:
    """A relevance grade as an ``int``, or an :class:`InputError` naming ``where``.

    A whole number within +-2**31 (``1``, ``2.0``); ``null``, ``NaN``,
    ``Infinity``, text, booleans, lists and numbers past the range are errors,
    never wrapped or truncated.
    """
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    if ok and isinstance(value, float):
        ok = value == value and abs(value) != float("inf") and value.is_integer()
    if not ok:
        raise InputError(
            f"{where} is {value!r}, not a whole number; write a grade such as 0, 1 or 2"
        )
    if abs(int(value)) > MAX_GRADE:
        raise InputError(f"{where} is {value!r}, out of range; grades are small whole numbers")
    return int(value)


def _non_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty")
    return value


# --- test sets ------------------------------------------------------------------------------


class SpanLine(_Model):
    """An answer span of a JSONL test set: offsets, text, or both."""

    doc: Id | None = None
    start: Annotated[int, Field(ge=0)] | None = None
    end: Annotated[int, Field(ge=0)] | None = None
    text: str | None = None


class QuestionLine(_Model):
    """One line of ragmeter's JSONL test set."""

    id: Id
    question: str
    answers: Annotated[list[SpanLine], Field(min_length=1)]
    cluster: Id | None = None  # the group it was written from (default: its document)

    _blank = field_validator("question")(_non_blank)


class ChromaReference(_Closed):
    """One entry of the ``references`` JSON in Chroma's ``questions_df.csv``."""

    content: str
    start_index: Annotated[int, Field(ge=0)]
    end_index: Annotated[int, Field(ge=0)]


class SquadAnswer(_Closed):
    text: str
    answer_start: Annotated[int, Field(ge=0)]


class SquadQA(_Closed):
    id: Id
    question: str
    answers: list[SquadAnswer] = []
    is_impossible: bool = False

    _blank = field_validator("question")(_non_blank)


class SquadParagraph(_Closed):
    context: str
    qas: list[SquadQA] = []


class SquadArticle(_Closed):
    title: str = ""
    paragraphs: list[SquadParagraph] = []


class SquadTestSet(_Closed):
    """A SQuAD JSON file read as a test set."""

    data: list[SquadArticle]


# --- corpora --------------------------------------------------------------------------------


class CorpusLine(_Model):
    """A JSONL corpus line; BEIR's ``corpus.jsonl`` names the id ``_id``."""

    id: Id | None = None
    beir_id: Id | None = Field(default=None, alias="_id")
    text: str
    title: str | None = None


class SquadCorpusParagraph(_Closed):
    context: str


class SquadCorpusArticle(_Closed):
    title: str = ""
    paragraphs: list[SquadCorpusParagraph] = []


class SquadCorpus(_Closed):
    """A SQuAD JSON file read as a corpus (the paragraphs' contexts)."""

    data: list[SquadCorpusArticle]


# --- results files read back ----------------------------------------------------------------


class ScoresFile(_Closed):
    systems: list[str]
    questions: list[str]
    metrics: list[str]
    values: dict[str, dict[str, list[float]]]
    clusters: list[str] | None = None  # each question's cluster (absent before clusters)
    cluster_source: str | None = None


class ResultsMeta(_Model):
    """``meta.json``: only what is read back is checked."""

    depth: Annotated[int, Field(ge=1)] | None = None
    seed: Annotated[int, Field(ge=0, le=2**32 - 1)] | None = None
    rounds: Annotated[int, Field(ge=1)] | None = None
    ks: list[int] | None = None


class ResultsSummary(_Model):
    metric: str | None = None
    seed: Annotated[int, Field(ge=0, le=2**32 - 1)] | None = None
    rounds: Annotated[int, Field(ge=1)] | None = None


class ResultsSpan(_Closed):
    doc: str
    start: Annotated[int, Field(ge=0)]
    end: Annotated[int, Field(ge=0)]
    text: str


class ResultsQuestion(_Model):
    id: str
    question: str
    answers: list[ResultsSpan]
    any_of: list[ResultsSpan] = []
    qrels: dict[str, int] = {}


class ResultsDocument(_Model):
    id: str
    text: str


class RunItem(_Closed):
    doc: str
    start: Annotated[int, Field(ge=0)]
    end: Annotated[int, Field(ge=0)]
    score: float
    grade: int
    words: int


class RunLine(_Closed):
    system: str
    question: str
    items: list[RunItem]


# --- errors ---------------------------------------------------------------------------------

_PHRASES = {
    "int_type": "must be a whole number",
    "int_parsing": "must be a whole number",
    "float_type": "must be a number",
    "string_type": "must be a string",
    "bool_type": "must be true or false",
    "list_type": "must be a list",
    "dict_type": "must be an object",
    "model_type": "must be an object",
    "model_attributes_type": "must be an object",
    "missing": "is missing",
    "too_short": "must not be empty",
    "greater_than_equal": "must not be negative",
    "less_than_equal": "is too large",
}


def _loc(loc: Sequence[str | int]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part in ("int", "str", "function-after[_non_blank(), str]"):
            continue  # union branches and validators name no field
        else:
            out += ("." if out else "") + str(part)
    return out or "the value"


def describe_error(exc: ValidationError) -> str:
    """The first problem of ``exc`` in words.

    E.g. ``answers[0].start must be a whole number, got 'ten'``.
    """
    errors = exc.errors(include_url=False)
    # a union reports one error per branch: keep the first, and the field it names
    first = errors[0]
    where = _loc(first["loc"])
    if first["loc"] and first["loc"][-1] in ("str", "int"):  # the Id union: both failed
        phrase = "must be a string or a whole number"
    elif first["type"] == "value_error":
        phrase = str(first.get("ctx", {}).get("error", first["msg"]))
    else:
        phrase = _PHRASES.get(first["type"], first["msg"].lower())
    if first["type"] == "missing":
        return f"{where} {phrase}"
    value = first.get("input")
    shown = repr(value)
    if len(shown) > 60:
        shown = shown[:57] + "..."
    return f"{where} {phrase}, got {shown}"


def validate(model: type[M], data: Any, where: str, hint: str = "fix it") -> M:
    """``model`` validated from ``data``, or an :class:`InputError`: ``where: problem; hint``."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise InputError(f"{where}: {describe_error(exc)}; {hint}") from None


# --------------------------------------------------------------------------- enum spellings

_EDGES = re.compile(r"^[\W_]+|[\W_]+$")


def _fold(text: str) -> str:
    """Case, and spaces and punctuation at either end, set aside."""
    return _EDGES.sub("", text).casefold()


def normalize(value: Any, schema: dict[str, Any]) -> Any:
    """``value`` with enum strings mapped to the schema's spelling.

    ``" Correct "``, ``"CORRECT."`` and ``"**correct**"`` become ``"correct"`` when
    the enum holds ``"correct"`` and no other member matches once case, spaces and
    punctuation around the word are set aside (``"not correct"`` and ``"incorrect"``
    stay as they are). Nothing else changes.
    """
    enum = schema.get("enum")
    if isinstance(value, str) and enum and value not in enum:
        folded = _fold(value)
        hits = [e for e in enum if isinstance(e, str) and _fold(e) == folded]
        if len(hits) == 1:
            return hits[0]
        return value
    if isinstance(value, dict) and isinstance(schema.get("properties"), dict):
        props = schema["properties"]
        return {
            k: normalize(v, props[k]) if isinstance(props.get(k), dict) else v
            for k, v in value.items()
        }
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [normalize(v, schema["items"]) for v in value]
    return value

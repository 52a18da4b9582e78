"""Read a JSON object out of a model's reply and check it against a schema.

Models without constrained decoding wrap JSON in code fences or prose, use
Python literals or single quotes, leave trailing commas, or stop mid-object
when they run out of tokens. :func:`extract_objects` repairs all of these;
:func:`parse_reply` takes the one object that fits the schema (two, or one the
prompt's data holds, make the reply ambiguous);
:func:`validate` checks the small JSON-Schema subset ragmeter uses (``type``,
``properties``, ``required``, ``enum``, ``const``, ``items``,
``additionalProperties: false``; other keywords are ignored).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from typing import Any

from ragmeter.files.schemas import normalize

MAX_SCAN_CHARS = 100_000
_LITERALS = {
    "true": "true",
    "True": "true",
    "false": "false",
    "False": "false",
    "null": "null",
    "None": "null",
    "none": "null",
}
_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "b": "\b", "f": "\f", "/": "/", "\\": "\\"}
_CLOSERS = {"{": "}", "[": "]"}


def parse_reply(
    text: str, schema: dict[str, Any] | None, quoted: Sequence[str] = ()
) -> tuple[dict | None, str | None]:
    """The reply read as the one JSON object it gives for ``schema``.

    Returns ``(obj, None)`` on success. A *candidate* is an object that holds
    one of the schema's required keys (a ``{"grade": ...}``, valid or not).
    Exactly one candidate may be in the reply (``<think>`` blocks aside), and
    it must fit the schema: a reply with two (a verdict and a quoted grade, in
    either order, or a malformed verdict beside a quote) is ``(None,
    "ambiguous: ...")``, and so is one whose candidate also appears in
    ``quoted`` (the untrusted texts of the prompt, such as the answer being
    graded). No fitting candidate is ``(None, "unparseable: ...")``. Enum
    strings that differ only in case or surrounding spaces are mapped to the
    schema's spelling. Without a schema the last object is taken.
    """
    text = _THINK.sub(" ", text[:MAX_SCAN_CHARS])
    found = list(_objects(text))
    if not found:
        snippet = " ".join(text.split())[:80]
        return None, f"unparseable: no JSON object in reply {snippet!r}"
    if schema is None:
        return found[-1][0], None
    required = list(schema.get("required") or [])
    normal = [(normalize(obj, schema), source) for obj, source in found]
    if required:
        candidates = [(o, src) for o, src in normal if any(k in o for k in required)]
    else:
        candidates = [(o, src) for o, src in normal if not validate(o, schema)]
    if len(candidates) > 1:
        return None, (
            f"ambiguous: the reply holds {len(candidates)} objects with the keys of a reply "
            f"(a verdict and a quoted one?); none is taken"
        )
    obj, source = candidates[0] if candidates else normal[-1]
    errors = validate(obj, schema)
    if errors:
        which = "the reply" if len(found) == 1 else "the object of the reply"
        return None, f"unparseable: {which} does not match the schema: " + "; ".join(errors)[:300]
    if quoted and _is_quoted(obj, source, quoted, schema):
        return None, (
            "ambiguous: the reply's object is also in the data the prompt quoted "
            "(the answer?); it is not taken as the reply's own"
        )
    return obj, None


_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)


def _is_quoted(obj: dict, source: str, quoted: Sequence[str], schema: dict[str, Any]) -> bool:
    """Whether ``obj`` (read from ``source``) appears in one of the ``quoted`` texts."""
    flat = " ".join(source.split())
    for text in quoted:
        if flat and flat in " ".join(text.split()):
            return True
        if "{" in text and any(normalize(o, schema) == obj for o, _ in _objects(text)):
            return True
    return False


def extract_objects(text: str) -> Iterator[dict[str, Any]]:
    """Every JSON object found in ``text``, in order, repairing where needed."""
    for obj, _ in _objects(text):
        yield obj


def _objects(text: str) -> Iterator[tuple[dict[str, Any], str]]:
    """Every JSON object in ``text`` with the source text it was read from."""
    text = text[:MAX_SCAN_CHARS]
    stripped = text.strip()
    try:
        value = json.loads(stripped)
    except ValueError:
        pass
    else:
        if isinstance(value, dict):
            yield value, stripped
            return
    i = text.find("{")
    while i != -1:
        repaired, end = repair(text, i)
        try:
            value = json.loads(repaired)
        except ValueError:
            value = None
        if isinstance(value, dict):
            yield value, text[i:end]
            i = text.find("{", end)
        else:
            i = text.find("{", i + 1)


def repair(text: str, start: int = 0) -> tuple[str, int]:
    """Rewrite the object or array opening at ``text[start]`` as strict JSON.

    Returns the JSON text and the index just past the source span. Handles
    single-quoted strings, unescaped inner quotes, Python ``True``/``False``/
    ``None``, bare keys and words, trailing commas, and a reply cut off before
    its end (the open string and brackets are closed, a dangling key dropped).
    The result may still be invalid; the caller checks with ``json.loads``.
    """
    r = _Repair(text)
    i, n = start, len(text)
    while i < n:
        c = text[i]
        if c in "{[":
            i = r.open(c, i)
        elif c in "}]":
            if not r.stack:
                break
            i = r.close(i)
            if not r.stack:
                return "".join(r.out), i
        elif c in ",:":
            i = r.punct(c, i)
        elif c in "\"'":
            i, closed = r.string(i)
            if not closed:
                break
        elif c.isspace() or not (c.isalnum() or c in "-+._"):
            # whitespace, or a stray character (comment marker, ellipsis...): kept as it is,
            # json.loads decides
            r.out.append(c)
            i += 1
        else:
            i = r.word(i)
    return r.finish(), i


class _Repair:
    """The strict JSON written so far by :func:`repair`, and the brackets still open."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.out: list[str] = []
        self.stack: list[str] = []
        # per open bracket: for objects, what comes next ("key", "colon", "value", "done"),
        # and where the current key began in `out`
        self.state: list[str] = []
        self.key_start: list[int] = []

    def in_object(self) -> bool:
        return bool(self.stack) and self.stack[-1] == "{"

    def saw_value(self) -> None:
        if self.in_object():
            if self.state[-1] == "key":
                self.state[-1], self.key_start[-1] = "colon", len(self.out)
            elif self.state[-1] == "value":
                self.state[-1] = "done"

    def open(self, c: str, i: int) -> int:
        self.saw_value()
        self.stack.append(c)
        self.state.append("key" if c == "{" else "")
        self.key_start.append(len(self.out))
        self.out.append(c)
        return i + 1

    def close(self, i: int) -> int:
        _drop_trailing_comma(self.out)
        self.out.append(_CLOSERS[self.stack.pop()])
        self.state.pop()
        self.key_start.pop()
        return i + 1

    def punct(self, c: str, i: int) -> int:
        """``,`` (a trailing one before it dropped) or ``:``."""
        if c == ",":
            _drop_trailing_comma(self.out)
        self.out.append(c)
        if self.in_object():
            self.state[-1] = "key" if c == "," else "value"
        return i + 1

    def string(self, i: int) -> tuple[int, bool]:
        value, i, closed = _read_string(self.text, i)
        self.saw_value()
        self.out.append(json.dumps(value, ensure_ascii=False))
        return i, closed

    def word(self, i: int) -> int:
        """A bare key, literal, number or unquoted value starting at ``text[i]``."""
        text, n = self.text, len(self.text)
        j = i
        while j < n and (text[j].isalnum() or text[j] in "-+._"):
            j += 1
        word = text[i:j]
        is_key = self.in_object() and self.state[-1] == "key"
        self.saw_value()
        if is_key:
            self.out.append(json.dumps(word))
        elif word in _LITERALS:
            self.out.append(_LITERALS[word])
        elif _is_number(word):
            self.out.append(word.lstrip("+"))
        else:
            # an unquoted value runs to the next delimiter: `reason: bare words}`
            while j < n and text[j] not in ",}]\n":
                j += 1
            self.out.append(json.dumps(text[i:j].rstrip()))
        return j

    def finish(self) -> str:
        """The source ended (or a string never closed) with brackets still open: a dangling
        key is dropped and the brackets closed."""
        out, stack = self.out, self.stack
        if self.in_object() and self.state[-1] in ("colon", "value"):
            del out[self.key_start[-1] :]
        _drop_trailing_comma(out)
        while stack:
            out.append(_CLOSERS[stack.pop()])
        return "".join(out)


def _drop_trailing_comma(out: list[str]) -> None:
    while out and out[-1].isspace():
        out.pop()
    while out and out[-1] == ",":
        out.pop()
        while out and out[-1].isspace():
            out.pop()


def _read_string(text: str, i: int) -> tuple[str, int, bool]:
    """Read a quoted string at ``text[i]``; returns value, next index, closed.

    A quote closes the string only when what follows it could follow a JSON
    string (``, : } ]``, the end, or whitespace then one of those), so stray
    inner quotes and apostrophes stay part of the text.
    """
    quote = text[i]
    chars: list[str] = []
    j, n = i + 1, len(text)
    while j < n:
        c = text[j]
        if c == "\\" and j + 1 < n:
            nxt = text[j + 1]
            if nxt == "u" and j + 6 <= n:
                try:
                    chars.append(chr(int(text[j + 2 : j + 6], 16)))
                    j += 6
                    continue
                except ValueError:
                    pass
            chars.append(_ESCAPES.get(nxt, nxt))
            j += 2
            continue
        if c == quote and _closes(text, j + 1):
            return "".join(chars), j + 1, True
        chars.append(c)
        j += 1
    return "".join(chars), n, False


def _closes(text: str, k: int) -> bool:
    n = len(text)
    while k < n and text[k] in " \t\r\n":
        k += 1
    return k >= n or text[k] in ",:}]"


def _is_number(word: str) -> bool:
    try:
        float(word)
    except ValueError:
        return False
    return word.lower() not in {"nan", "inf", "-inf", "+inf", "infinity", "-infinity"}


# --- schema subset --------------------------------------------------------------


def validate(value: Any, schema: dict[str, Any], path: str = "$") -> list[str]:
    """Problems with ``value`` under ``schema`` (empty list: it validates)."""
    errors: list[str] = []
    if "const" in schema and value != schema["const"]:
        errors.append(f"{path}: expected {schema['const']!r}, got {value!r}")
    if "enum" in schema and not any(_same(value, e) for e in schema["enum"]):
        errors.append(f"{path}: {value!r} is not one of {list(schema['enum'])!r}")
    expected = schema.get("type")
    if expected is not None:
        types = [expected] if isinstance(expected, str) else list(expected)
        if not any(_is_type(value, t) for t in types):
            errors.append(f"{path}: expected {'/'.join(types)}, got {_type_name(value)}")
            return errors
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        for key in schema.get("required") or []:
            if key not in value:
                errors.append(f"{path}: missing required key {key!r}")
        for key, sub in props.items():
            if key in value and isinstance(sub, dict):
                errors.extend(validate(value[key], sub, f"{path}.{key}"))
        if schema.get("additionalProperties") is False:
            extra = sorted(set(value) - set(props))
            if extra:
                errors.append(f"{path}: unexpected keys {extra!r}")
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for k, item in enumerate(value):
            errors.extend(validate(item, schema["items"], f"{path}[{k}]"))
    return errors


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b or (_is_num(a) and _is_num(b) and a == b)


def _is_num(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _is_type(value: Any, name: str) -> bool:
    if name == "object":
        return isinstance(value, dict)
    if name == "array":
        return isinstance(value, list)
    if name == "string":
        return isinstance(value, str)
    if name == "boolean":
        return isinstance(value, bool)
    if name == "null":
        return value is None
    if name == "number":
        return _is_num(value)
    if name == "integer":
        return _is_num(value) and float(value).is_integer()
    return True  # unknown type names are not checked


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__

"""Fence untrusted text (passages, questions, answers) inside a prompt.

Each piece of data sits between a line ``<<<NAME TAG`` and a line
``>>>NAME TAG``. The tag is derived from the data itself (a SHA-256 prefix over
every fenced text), so the prompt, and with it the reply-cache key, stays the
same from run to run, while a text cannot contain the line that closes its own
block: it would have to know the hash of itself. That alone is not enough (a
text can be searched for whose hash it holds, and the tag is short), so the
data is also made unable to hold a fence line whatever the tag
(:func:`as_data`): every line of it that starts with ``<<<`` or ``>>>`` gets a
backslash in front, and the tag is removed until none is left. The prompt
tells the model that fenced text is data, never instructions, so an answer
that writes its own "Reference passage:" or "Grades:" section stays inside the
answer's block.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

__all__ = ["as_data", "blocks", "fence", "fence_tag", "fenced"]

TAG_CHARS = 12


def fence_tag(texts: Iterable[str]) -> str:
    """A tag for the blocks of one prompt: ``"data-"`` and 12 hex digits of SHA-256."""
    digest = hashlib.sha256()
    for text in texts:
        digest.update(text.encode("utf-8", "surrogatepass"))
        digest.update(b"\x00")
    return "data-" + digest.hexdigest()[:TAG_CHARS]


# any line break a tokenizer or a model may read as one, then blanks, then a fence mark
_FENCE_LINE = re.compile(r"(^|[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029])([ \t]*)(?=<<<|>>>)")


def as_data(text: str, tag: str) -> str:
    """``text`` made safe to put inside a block: no line of it can open or close one.

    The tag is removed until none remains (removing one occurrence can join
    two halves into another), and every line starting (after blanks) with
    ``<<<`` or ``>>>`` gets a ``\\`` in front. Text without either is unchanged.
    """
    while tag and tag in text:
        text = text.replace(tag, "")
    return _FENCE_LINE.sub(lambda m: m.group(1) + m.group(2) + "\\", text)


def fence(name: str, text: str, tag: str) -> str:
    """``text`` between ``<<<name tag`` and ``>>>name tag`` lines, made safe by :func:`as_data`."""
    return f"<<<{name} {tag}\n{as_data(text, tag)}\n>>>{name} {tag}"


def blocks(prompt: str) -> list[str]:
    """The text of every fenced block of ``prompt``, in order (the data it quotes)."""
    match = _TAG.search(prompt)
    if match is None:
        return []
    tag = re.escape(match.group(1))
    pattern = re.compile(r"(?m)^<<<(\S+) " + tag + r"\n(.*?)\n>>>\1 " + tag + r"$", re.DOTALL)
    return [m.group(2) for m in pattern.finditer(prompt)]


def fenced(prompt: str, name: str) -> str:
    """The text of block ``name`` in ``prompt``; ``""`` if it has none.

    For tests and tools that read prompts back. The tag is the one of the
    prompt's first block, and data never holds it, so data cannot fake a block.
    """
    match = _TAG.search(prompt)
    if match is None:
        return ""
    tag = match.group(1)
    head = f"<<<{name} {tag}\n"
    start = prompt.find(head)
    if start == -1:
        return ""
    end = prompt.find(f"\n>>>{name} {tag}", start + len(head))
    return prompt[start + len(head) : end] if end != -1 else ""


_TAG = re.compile(r"<<<\S+ (data-[0-9a-f]+)$", re.MULTILINE)

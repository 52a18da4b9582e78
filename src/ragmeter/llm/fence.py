"""Fence untrusted text (passages, questions, answers) inside a prompt.

Each piece of data sits between a line ``<<<NAME TAG`` and a line
``>>>NAME TAG``. The tag is derived from the data itself (a SHA-256 prefix over
every fenced text), so the prompt, and with it the reply-cache key, stays the
same from run to run, while a text cannot contain the line that closes its own
block: it would have to know the hash of itself. Any occurrence of the tag in
the data is removed all the same. The prompt tells the model that fenced text
is data, never instructions, so an answer that writes its own "Reference
passage:" or "Grades:" section stays inside the answer's block.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

__all__ = ["fence", "fence_tag", "fenced"]

TAG_CHARS = 12


def fence_tag(texts: Iterable[str]) -> str:
    """A tag for the blocks of one prompt: ``"data-"`` and 12 hex digits of SHA-256."""
    digest = hashlib.sha256()
    for text in texts:
        digest.update(text.encode("utf-8", "surrogatepass"))
        digest.update(b"\x00")
    return "data-" + digest.hexdigest()[:TAG_CHARS]


def fence(name: str, text: str, tag: str) -> str:
    """``text`` between ``<<<name tag`` and ``>>>name tag`` lines, the tag removed from it."""
    body = text.replace(tag, "")
    return f"<<<{name} {tag}\n{body}\n>>>{name} {tag}"


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


_TAG = re.compile(r"<<<\S+ (data-[0-9a-f]{" + str(TAG_CHARS) + "})")
